"""The two-rule decision on the Redis index: for random page signatures, the script decides
exactly as the LMDB index does (the reference), on one server and on the 3-master cluster;
signatures and postings follow inserts, replacements and removals, and copies carry them."""

from __future__ import annotations

import random
import tempfile
import uuid
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_simhash.index import IndexMismatchError, SimhashIndex
from scrapy_simhash.index.documents import Match
from scrapy_simhash.index.records import DamagedIndexError, doc_id, sealed
from scrapy_simhash.index.redis_calls import BATCH, RULE_FIELDS, SCRIPT
from scrapy_simhash.index.redis_index import RedisIndex
from scrapy_simhash.text.rule import _INSIDE_RUNS, DEFAULT_RULE, Rule
from scrapy_simhash.text.sentences import SENTENCES
from scrapy_simhash.text.signature import PageSignature

_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _flip(rng: random.Random, value: int, bits: int) -> int:
    for bit in rng.sample(range(64), bits):
        value ^= 1 << bit
    return value


class _Pages:
    """Random pages: fingerprints near a few bases (0 to 8 bits off) or anywhere, sentences
    from a few articles' sets (0 to 8 of them), a few boilerplate sentences that many pages
    hold (the guard), words, numbers and shingles near or far."""

    def __init__(self, seed: int) -> None:
        self.rng = rng = random.Random(seed)
        self.bases = [rng.getrandbits(64) for _ in range(3)]
        self.articles = [[rng.getrandbits(64) for _ in range(10)] for _ in range(4)]
        self.boilerplate = [rng.getrandbits(64) for _ in range(3)]
        self.numbers = [rng.getrandbits(64) for _ in range(2)]
        self.shingles = [rng.getrandbits(64) for _ in range(2)]

    def signature(self) -> PageSignature:
        rng = self.rng
        if rng.random() < 0.8:
            fingerprint = _flip(rng, rng.choice(self.bases), rng.choice([0, 1, 2, 3, 3, 4, 6, 8]))
        else:
            fingerprint = rng.getrandbits(64)
        article = rng.choice(self.articles)
        sentences = rng.sample(article, rng.randint(0, SENTENCES))
        sentences += rng.sample(self.boilerplate, rng.randint(0, 2))
        while len(sentences) < SENTENCES and rng.random() < 0.4:
            sentences.append(rng.getrandbits(64))  # a sentence of its own
        rng.shuffle(sentences)
        sentences = sentences[:SENTENCES]
        # 80 / 100: numbers_length; 5 numbers in 1,000 words: numbers_density's bound
        words = rng.choice([0, 40, 80, 90, 100, 110, 200, 400, 1000, 2000])
        numbers = _flip(rng, rng.choice(self.numbers), rng.choice([0, 5, 15, 21, 30]))
        # 11 or 12 bits from one base: up to 22 or 24 apart (shingles_distance: 22); 9 and 5
        # bits: up to 18 and 17 apart (veto_runs: 18); 5 bits: 10 apart (runs_near: 10)
        shingles = _flip(rng, rng.choice(self.shingles), rng.choice([0, 5, 9, 11, 11, 12]))
        if rng.random() < 0.1:
            shingles = 0  # a signature without the sketch: never vetoed by it
        return PageSignature(
            fingerprint, tuple(sentences), words, numbers, rng.choice([0, 2, 3, 5, 10]), shingles
        )


def _decided(match: Match | None) -> tuple[str, str, int] | None:
    return None if match is None else (match.key, match.rule, match.distance)


def _same_decisions(url: str, seed: int, steps: int = 60) -> None:
    pages = _Pages(seed)
    rng = pages.rng
    key = f"rule:{uuid.uuid4().hex}"
    with (
        tempfile.TemporaryDirectory() as directory,
        SimhashIndex(directory) as lmdb,
        RedisIndex(url, key) as redis,
    ):
        try:
            keys: list[str] = []
            step = 0
            while step < steps:
                roll = rng.random()
                if keys and roll < 0.15:
                    page_key = rng.choice(keys)  # the same URL again
                else:
                    # keys compared byte by byte (UTF-8), as Python compares str
                    path = rng.choice(["", "é", "z", "日本", "Z"])
                    page_key = f"https://site{rng.randint(0, 3)}.example/{path}{step}"
                    keys.append(page_key)
                page: int | PageSignature = pages.signature()
                if rng.random() < 0.1:
                    page = page.fingerprint  # a bare fingerprint
                if roll > 0.95:
                    assert redis.remove(page_key) == lmdb.remove(page_key)
                elif roll > 0.85:
                    redis.insert(page, page_key, n=step)
                    lmdb.insert(page, page_key, n=step)
                elif roll > 0.75:  # a pipelined run of checks, decided one after the other
                    run = [
                        (pages.signature(), f"https://run.example/{step}-{i}", {}) for i in range(5)
                    ]
                    expected = [_decided(lmdb.check_and_insert(p, k, **r)) for p, k, r in run]
                    assert [_decided(m) for m in redis.check_and_insert_many(run)] == expected
                    keys += [k for _, k, _ in run]
                else:
                    other = rng.choice([None, page_key, *keys[-3:]])
                    assert _decided(redis.decide(page, other)) == _decided(lmdb.decide(page, other))
                    expected = _decided(lmdb.check_and_insert(page, page_key, n=step))
                    assert _decided(redis.check_and_insert(page, page_key, n=step)) == expected, (
                        step
                    )
                step += 1
            assert len(redis) == len(lmdb)
            for page_key in keys:
                assert redis.signature(page_key) == lmdb.signature(page_key)
                got, want = redis.get(page_key), lmdb.get(page_key)
                assert (got is None) == (want is None)
                if got is not None:
                    assert got.fingerprint == want.fingerprint
                    assert got.record.get("n") == want.record.get("n")
            assert redis.stats()["repeated_sentences"] == lmdb.stats()["repeated_sentences"]
            assert redis.verify() == []
            assert lmdb.verify() == []
        finally:
            redis.drop()


@_SETTINGS
@given(seed=st.integers(0, 2**32 - 1))
def test_the_script_decides_as_the_lmdb_index(redis_server, seed):
    _same_decisions(redis_server.url, seed)


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_the_script_decides_as_the_lmdb_index_on_the_cluster(redis_cluster, seed):
    _same_decisions(redis_cluster.url, seed)


def test_the_rule_parameters_come_from_python():
    assert set(RULE_FIELDS) == set(DEFAULT_RULE.__dataclass_fields__)


def test_the_scripts_bits_for_a_text_inside_another_are_pythons():
    """The contained clause's bits apart for a text inside another (32 x (1 - the shorter's
    share of the words), ``rule._INSIDE_RUNS``) are a literal in the script, not a
    parameter: the two must say the same."""
    clause = "runs_apart > {} * (1 - shorter) + R.contained_runs"
    assert clause.format(_INSIDE_RUNS) in SCRIPT
    assert SCRIPT.count("(1 - shorter)") == 1


def test_batches_of_items_decide_as_one_by_one_on_lmdb(redis_server, key, tmp_path):
    """check_and_insert_many over several scripts of BATCH items (keys repeated within a
    batch, near duplicates of one another, drop records on), then query_many: the answers,
    the records and the drops are the LMDB index's, item by item."""
    pages = _Pages(11)
    rng = pages.rng
    keys = [f"https://b.example/{i % 40}" for i in range(2 * BATCH + 40)]
    rng.shuffle(keys)
    items = [(pages.signature(), k, {"i": i}) for i, k in enumerate(keys)]
    with (
        RedisIndex(redis_server.url, key, drop_records=1000) as redis,
        SimhashIndex(tmp_path / "ix", drop_records=1000) as lmdb,
    ):
        expected = [_decided(lmdb.check_and_insert(p, k, **r)) for p, k, r in items]
        assert [_decided(m) for m in redis.check_and_insert_many(items)] == expected
        assert sum(m is not None for m in expected) > 20  # the batches hold duplicates
        queries = [p.fingerprint for p, _, _ in items[: BATCH + 10]] + [1, 2**63]

        def found(answers):  # the times seen are each index's clock
            return [[(m.fingerprint, m.key, m.distance, m.record["i"]) for m in a] for a in answers]

        assert found(redis.query_many(queries)) == found(lmdb.query_many(queries))
        assert found([redis.query(queries[0])]) == found([lmdb.query(queries[0])])
        assert sorted((d.key, d.kept, d.rule) for d in redis.drops()) == sorted(
            (d.key, d.kept, d.rule) for d in lmdb.drops()
        )
        assert redis.verify() == []


def _page(fingerprint: int, sentences: tuple[int, ...], words: int = 500) -> PageSignature:
    return PageSignature(fingerprint, sentences, words)


def test_signatures_and_postings_follow_the_documents(redis_server, key):
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        a = _page(0, (1, 2, 3, 4))
        ix.insert(a, "a")
        ix.insert(_page(1 << 40, (3, 4, 5)), "b")
        assert ix.signature("a") == a and ix.signatures(["b", "c"])[1] is None
        assert client.hlen(f"{tag}:sigs") == 2
        assert client.hget(f"{tag}:sents", (3).to_bytes(8, "big")) == b"".join(
            doc_id(k) for k in ("a", "b")
        )
        # the same bytes as an LMDB index's sigs values
        assert client.hget(f"{tag}:sigs", doc_id("a")) == sealed(a.pack(), doc_id("a"))
        ix.insert(_page(0, (1, 9)), "a")  # replaced: its old sentences are unlisted
        assert client.hget(f"{tag}:sents", (2).to_bytes(8, "big")) is None
        assert client.hget(f"{tag}:sents", (3).to_bytes(8, "big")) == doc_id("b")
        ix.insert(7, "a")  # a bare fingerprint: no signature any more
        assert ix.signature("a") is None
        assert client.hget(f"{tag}:sents", (1).to_bytes(8, "big")) is None
        assert ix.remove("b")
        assert client.exists(f"{tag}:sigs", f"{tag}:sents") == 0
        assert ix.verify() == []


def test_the_frequency_guard_on_redis(redis_server, key):
    """As tests/test_signature.py's guard example on LMDB."""
    shared = (1, 2, 3)
    far = [0, (1 << 64) - 1, 0x5555_5555_5555_5555, 0xAAAA_AAAA_0000_0000, 0x0F0F_0F0F_0F0F_0F0F]
    page = _page(far[4], (*shared, 999))
    with RedisIndex(redis_server.url, key) as ix:
        for i in range(DEFAULT_RULE.guard):
            own = tuple(100 * (i + 1) + j for j in range(5))
            ix.insert(_page(far[i], shared + own), f"p{i}")
            assert (ix.decide(page) is not None) == (i + 1 < DEFAULT_RULE.guard)
        assert ix.decide(page) is None
        ix.remove("p1")  # held by two pages again
        match = ix.decide(page)
        assert (match.key, match.rule) == ("p0", "sentences")
        assert ix.decide(page, "p0").key == "p2"  # another key than the page's own
        assert ix.check_and_insert(page, "page").key == "p0" and "page" not in ix
    with RedisIndex(redis_server.url, key, readonly=True) as ix:
        assert ix.decide(page).key == "p0"


def _apart(fingerprint: int, shingles: int, sentences: tuple[int, ...], words: int):
    return PageSignature(fingerprint, sentences, words, shingles=shingles)


def _both_decide(url, key, tmp_path, stored, guarded, pages, expected) -> None:
    """A Redis index and an LMDB index holding ``stored``, and as many other pages holding
    the sentence ``guarded`` as the guard allows, decide each of ``pages`` as ``expected``
    (a rule's name against ``stored``, or None)."""
    held = [_apart(i << 40, i << 20, (guarded, 200 + i), 500) for i in range(DEFAULT_RULE.guard)]
    tmp_path.mkdir(exist_ok=True)
    with RedisIndex(url, key) as redis, SimhashIndex(tmp_path / "ix") as lmdb:
        for ix in (redis, lmdb):
            ix.insert(stored, "stored")
            for i, page in enumerate(held):
                ix.insert(page, f"held{i}")
        for name, page in pages.items():
            got = [redis.decide(page), lmdb.decide(page)]
            rules = [None if m is None else (m.key, m.rule) for m in got]
            want = None if expected[name] is None else ("stored", expected[name])
            assert rules == [want, want], name


def test_pages_far_apart_share_every_sentence_or_are_two_on_redis(redis_server, key, tmp_path):
    """``Rule.apart_distance``: pages whose fingerprints and shingles sketches are both about
    as far apart as unrelated texts, of like length, are one only when every long sentence of
    the page with fewer is shared, whether the guard lets a sentence count or not; the script
    decides as the LMDB index."""
    fp = 0x0123_4567_89AB_CDEF
    sk = 0x0F1E_2D3C_4B5A_6978
    far_fp, far_sk = fp ^ ((1 << 30) - 1), sk ^ ((1 << 24) - 1)  # 30 and 24 bits apart
    sentences = tuple(range(1, 9))
    stored = _apart(fp, sk, sentences, 500)
    every = _apart(far_fp, far_sk, sentences, 480)  # all 8 shared
    listing = _apart(far_fp, far_sk, (*sentences[:6], 91, 92), 480)  # 6 of 8 shared
    unequal = _apart(far_fp, far_sk, (*sentences[:6], 91, 92), 350)  # 0.7 of the words
    expected = {"every": "sentences", "listing": None, "unequal": "sentences"}
    pages = {"every": every, "listing": listing, "unequal": unequal}
    # one of the shared sentences held by as many other pages as the guard allows
    _both_decide(redis_server.url, key, tmp_path, stored, sentences[0], pages, expected)
    assert DEFAULT_RULE.decide(listing, stored, 3, counted=6) is None
    assert DEFAULT_RULE.decide(every, stored, 3, counted=7) == "sentences"


def test_a_contained_pages_runs_are_read_on_redis(redis_server, key, tmp_path):
    """``Rule.contained_runs``: a page of 375 words sharing all but one of its long sentences
    with a page of 1,000 is inside it while their shingles sketches are at most 6 bits further
    apart than containment makes them (32 x 0.625 = 20 bits); the script decides as the LMDB
    index, at the bound too."""
    fp = 0x0123_4567_89AB_CDEF
    sk = 0x0F1E_2D3C_4B5A_6978
    stored = _apart(fp, sk, tuple(range(1, 9)), 1000)
    far_fp = fp ^ ((1 << 30) - 1)
    pages = {
        f"{n} bits": _apart(far_fp, sk ^ ((1 << n) - 1), (*range(1, 8), 99), 375)
        for n in (20, 26, 27)
    }
    expected = {"20 bits": "sentences", "26 bits": "sentences", "27 bits": None}
    # the guarded sentence is one the pages do not hold: all 7 shared sentences count
    _both_decide(redis_server.url, key, tmp_path, stored, 8, pages, expected)


def test_far_runs_take_a_text_inside_a_longer_one_alone_on_redis(redis_server, key, tmp_path):
    """``Rule.block_far_runs``: pages whose runs of words are about as far apart as unrelated
    texts, sharing fewer than ``block_shared`` long sentences and not all of the page with
    fewer (whether the guard lets each count or not), are one only when the shorter reads as
    contained in the longer (the shared sentences head its list, not the longer's); the
    script decides as the LMDB index, with the guard's count."""
    fp, sk = 0x0123_4567_89AB_CDEF, 0x0F1E_2D3C_4B5A_6978
    near_fp, far_sk = fp ^ 0b1111, sk ^ ((1 << 24) - 1)  # 4 and 24 bits apart
    stored = _apart(fp, sk, tuple(range(1, 9)), 500)
    pages = {
        "inside": _apart(near_fp, far_sk, (91, 92, 1, 93, 2, 3, 94, 4), 700),
        "box": _apart(near_fp, far_sk, (1, 2, 3, 4, 91, 92, 93, 94), 700),
        "one length": _apart(near_fp, far_sk, (91, 92, 1, 93, 2, 3, 94, 4), 500),
        "near runs": _apart(near_fp, sk ^ 0xFFFF, (1, 2, 3, 4, 91, 92, 93, 94), 700),
        "at the bound": _apart(near_fp, sk ^ ((1 << 20) - 1), (1, 2, 3, 4, 91, 92, 93, 94), 700),
        "a bit inside": _apart(near_fp, sk ^ ((1 << 19) - 1), (1, 2, 3, 4, 91, 92, 93, 94), 700),
        # every sentence of the page with fewer shared, one of them past the guard
        "every one": _apart(near_fp, far_sk, (1, 2, 3, 5), 500),
    }
    expected = {
        "inside": "sentences",
        "box": None,
        "one length": None,
        "near runs": "sentences",
        "at the bound": None,
        "a bit inside": "sentences",
        "every one": "sentences",
    }
    _both_decide(redis_server.url, key, tmp_path, stored, 5, pages, expected)
    for name, page in pages.items():
        assert DEFAULT_RULE.decide(page, stored, 3) == expected[name], name
    assert DEFAULT_RULE.decide(pages["every one"], stored, 3, counted=3) == "sentences"
    # of one length, the page whose list begins with its own text stored: no page is inside
    # the other whichever way round
    own_first = _apart(fp, sk, (91, 92, 1, 93, 2, 3, 94, 4), 500)
    shared_first = {"shared first": _apart(near_fp, far_sk, tuple(range(1, 9)), 500)}
    want = {"shared first": None}
    _both_decide(
        redis_server.url, f"{key}-tie", tmp_path / "tie", own_first, 99, shared_first, want
    )


def test_a_long_texts_few_numbers_veto_nothing_on_redis(redis_server, key, tmp_path):
    """``Rule.numbers_density``: the numbers veto speaks only for pages holding one content
    number in 200 words or more, on the script as in Python."""
    fp = 0xF0F0_F0F0_F0F0_F0F0  # far from the guard's pages (_both_decide)
    stored = PageSignature(fp, tuple(range(1, 9)), 1000, 0x00FF_0000_0000_00FF, 5, 0)
    far = 0xFF00_0000_0000_FF00  # numbers none of which the other page holds
    pages = {
        "sparse": PageSignature(fp ^ 1, stored.sentences, 1000, far, 4, 0),  # 4 in 1,000
        "at the bound": PageSignature(fp ^ 1, stored.sentences, 1000, far, 5, 0),  # vetoed
        "a word fewer": PageSignature(fp ^ 1, stored.sentences, 999, far, 5, 0),  # vetoed
    }
    expected = {"sparse": "hamming", "at the bound": None, "a word fewer": None}
    _both_decide(redis_server.url, key, tmp_path, stored, 99, pages, expected)
    sparse = replace(stored, words=1001)  # the stored page's 5 numbers in 1,001 words
    assert DEFAULT_RULE.decide(pages["a word fewer"], sparse, 3) == "hamming"
    dense = {"dense": PageSignature(fp ^ 1, stored.sentences, 1001, far, 9, 0)}
    want = {"dense": "hamming"}
    _both_decide(redis_server.url, f"{key}-sparse", tmp_path / "sparse", sparse, 99, dense, want)
    assert replace(DEFAULT_RULE, numbers_density=0).decide(pages["sparse"], stored, 3) is None


def test_each_page_must_hold_numbers_the_other_lacks_on_redis(redis_server, key, tmp_path):
    """``Rule.numbers_own`` and ``numbers_own_both``: the numbers veto speaks when each page
    holds a number that the other lacks (a bit of its numbers' set the other's does not
    set), and both three or more, counted over both 32-bit halves of the set on the script
    as in Python; a page that only gained numbers, or holds one of its own on each side, is
    not refused by them."""
    fp = 0xF0F0_F0F0_F0F0_F0F0  # far from the guard's pages (_both_decide)
    numbers = 0x0000_0FFF_0000_0FFF  # 24 numbers, 12 in each half
    stored = PageSignature(fp, tuple(range(1, 9)), 1000, numbers, 24, 0)
    lo, hi = 1, 1 << 32  # a number in the low half, one in the high half

    def page(bits: int) -> PageSignature:
        return PageSignature(fp ^ 1, stored.sentences, 1000, bits, 24, 0)

    pages = {
        "gained": page(numbers | 0xF000_0000),  # four more, none lost
        "lost": page(numbers & ~0b111),  # three fewer, none gained
        "one each": page((numbers & ~lo) | 1 << 20),
        "two each": page((numbers & ~(lo | lo << 1)) | 0b11 << 20),
        "two each, across the halves": page((numbers & ~(lo | hi)) | 1 << 20 | 1 << 52),
        "two and one": page((numbers & ~(lo | hi)) | 1 << 20),
        "one and two": page((numbers & ~lo) | 1 << 20 | 1 << 52),
        "two gained, none lost": page(numbers | 1 << 20 | 1 << 52),
    }
    expected = {
        "gained": "hamming",
        "lost": "hamming",
        "one each": "hamming",
        "two each": None,
        "two each, across the halves": None,
        "two and one": None,
        "one and two": None,
        "two gained, none lost": "hamming",
    }
    _both_decide(redis_server.url, key, tmp_path, stored, 99, pages, expected)
    assert [DEFAULT_RULE.numbers_differ(p, stored) for p in pages.values()] == [
        expected[name] is None for name in pages
    ]
    # ``Rule.numbers_dense``: in pages of fewer numbers than one in 50 words (24 in 4,000: an
    # article with its figures), a few of their own are not enough; most of them must be
    # (``Rule.numbers_share``: half of each page's bits)
    sparse = replace(stored, words=4000)

    def article(bits: int) -> PageSignature:
        return PageSignature(fp ^ 1, stored.sentences, 4000, bits, 24, 0)

    articles = {
        "two each": article((numbers & ~(lo | lo << 1)) | 0b11 << 20),
        # 12 of its 24 bits its own, 12 of the stored page's lost
        "half each": article((numbers & ~_bits_of(0x3F)) | _bits_of(0x3F000)),
        # 8 of 24
        "a third each": article((numbers & ~_bits_of(0xF)) | _bits_of(0xF000)),
    }
    want = {"two each": "hamming", "half each": None, "a third each": "hamming"}
    _both_decide(redis_server.url, f"{key}-a", tmp_path / "a", sparse, 99, articles, want)
    assert [DEFAULT_RULE.numbers_differ(p, sparse) for p in articles.values()] == [
        want[name] is None for name in articles
    ]
    # ``Rule.numbers_held``: pages of more than 32 numbers (40, in 1,000 words: dense) set
    # most of their 64 bits, and two of one's own may be chance; half of them must be
    many = replace(stored, number_count=40)
    tables = {
        "two each": replace(articles["two each"], words=1000, number_count=40),
        "half each": replace(articles["half each"], words=1000, number_count=40),
    }
    want = {"two each": "hamming", "half each": None}
    _both_decide(redis_server.url, f"{key}-m", tmp_path / "m", many, 99, tables, want)
    assert DEFAULT_RULE.numbers_held == 32
    assert Rule(numbers_held=40).numbers_differ(tables["two each"], many)


def _bits_of(mask: int) -> int:
    """``mask`` (bits of the low half) in both 32-bit halves."""
    return mask | mask << 32


def test_copies_carry_the_signatures(redis_server, key, tmp_path):
    """And the guard's counts of a site's pages dropped through each sentence."""
    pages = _Pages(5)
    items = [(pages.signature(), f"k{i}", {"n": i}) for i in range(300)]
    items += [(i << 20, f"bare{i}", {}) for i in range(20)]
    with RedisIndex(redis_server.url, key) as ix:
        ix.insert_many(items)
        for signature, url in _boilerplate_pages(["shop.example"] * 3):
            ix.check_and_insert(signature, url)
        items.append(
            (ix.signature("https://shop.example/item/0"), "https://shop.example/item/0", {})
        )
        learned = sorted(ix.repeats())  # the 4 policy sentences, each with pages 1 and 2
        assert len(learned) == 8 and len({sentence for sentence, _ in learned}) == 4
        assert ix.compact(str(tmp_path / "copy")) == len(items)
        with SimhashIndex(tmp_path / "copy") as copy:
            assert copy.verify() == []
            assert copy.repeats() == learned
            for signature, k, _ in items:
                expected = signature if isinstance(signature, PageSignature) else None
                assert copy.signature(k) == expected == ix.signature(k)
            with RedisIndex(redis_server.url, key + ":back") as back:
                try:
                    assert back.load(copy) == len(items)
                    assert back.verify() == []
                    assert sorted(back.repeats()) == learned
                    assert back.signatures([k for _, k, _ in items]) == ix.signatures(
                        [k for _, k, _ in items]
                    )
                finally:
                    back.drop()


def test_verify_finds_damaged_signatures_and_postings(redis_server, key):
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert(_page(0, (1, 2, 3)), "a")
        ix.insert(_page(1 << 40, (3, 4)), "b")
        assert ix.verify() == []
        client.hset(f"{tag}:sents", (9).to_bytes(8, "big"), doc_id("a"))
        client.hdel(f"{tag}:sents", (4).to_bytes(8, "big"))
        data = client.hget(f"{tag}:sigs", doc_id("b"))
        client.hset(f"{tag}:sigs", doc_id("b"), bytes([data[0] ^ 1]) + data[1:])
        client.hset(f"{tag}:reps", bytes(16), b"not 16 bytes")
        problems = ix.verify()
        assert any("repeated sentence 000" in p for p in problems)
        assert any("whose signature lacks it" in p for p in problems)
        assert any("page signature fails its checksum" in p for p in problems)
        with pytest.raises(DamagedIndexError):
            ix.signature("b")
        # the script checks a stored signature's CRC before deciding by it: no wrong answer
        with pytest.raises(DamagedIndexError, match="a page signature fails its checksum"):
            ix.decide(_page(1 << 40, (3, 4, 5)))
        with pytest.raises(DamagedIndexError, match="a page signature fails its checksum"):
            ix.check_and_insert(_page(1 << 40, (3, 4, 5)), "c")
        assert "c" not in ix
        client.hset(f"{tag}:sigs", doc_id("b"), b"short")
        with pytest.raises(DamagedIndexError, match="SIMHASHDAMAGED"):
            ix.decide(_page(1 << 40, (3, 4, 5)))


def test_a_redis_index_keeps_whether_numbers_are_features(redis_server, key):
    with RedisIndex(redis_server.url, key, numbers=False) as index:
        assert index.numbers is False
        assert index.stats()["numbers"] is False
    with pytest.raises(IndexMismatchError, match="numbers=False, not True"):
        RedisIndex(redis_server.url, key, numbers=True)
    with RedisIndex(redis_server.url, key) as index:  # None: as stored
        assert index.numbers is False
        index.drop()


def _boilerplate_pages(sites: list[str]) -> list[tuple[PageSignature, str]]:
    """One page on each of ``sites`` (in order): fingerprints far apart, each with 4 long
    sentences of its own and the same 4 long sentences of boilerplate (a returns policy)."""
    rng = random.Random("boilerplate")
    policy = tuple(rng.getrandbits(64) for _ in range(4))
    pages = []
    for i, site in enumerate(sites):
        own = tuple(rng.getrandbits(64) for _ in range(4))
        signature = PageSignature(rng.getrandbits(64), own + policy, 300, 0, 0)
        pages.append((signature, f"https://{site}/item/{i}"))
    return pages


@pytest.mark.parametrize("storage", ["lmdb", "redis"])
def test_a_sites_boilerplate_stops_counting_after_two_of_its_pages(
    redis_server, key, tmp_path, storage
):
    """Pages of one site sharing half their long sentences (boilerplate) and nothing else:
    the sentence rule drops the second and third, then the pages of that site dropped
    through those sentences make them fail the guard, and every later page is kept. The
    same article on six other sites (one copy each) is dropped every time."""
    if storage == "lmdb":
        index = SimhashIndex(tmp_path / "ix")
    else:
        index = RedisIndex(redis_server.url, key)
    with index:
        shop = _boilerplate_pages(["shop.example"] * 10)
        decided = [index.check_and_insert(sig, url) for sig, url in shop[:3]]
        assert [m is not None and m.rule for m in decided] == [False, "sentences", "sentences"]
        assert {m.key for m in decided if m} == {shop[0][1]}
        # checked again (the next crawl), they are dropped again: a page's own drop does not
        # count against it, and it is counted once
        for signature, url in shop[1:3]:
            again = index.check_and_insert(signature, url)
            assert (again.key, again.rule) == (shop[0][1], "sentences")
        assert len(list(index.repeats())) == 4 * 2
        assert all(index.check_and_insert(sig, url) is None for sig, url in shop[3:])
        # 4 policy sentences, each with the 2 pages of shop.example dropped through it
        assert index.stats()["repeated_sentences"] == 4
        # a read-only decision for one more page of the site counts them too
        assert index.decide(shop[1][0], "https://shop.example/item/new") is None
        # a page elsewhere still shares the policy with the 3 stored pages: the guard's own
        assert index.decide(shop[1][0], "https://other.example/x") is None

        # an article syndicated to six sites: the stored original and one copy on each site
        rng = random.Random(11)
        article = tuple(rng.getrandbits(64) for _ in range(8))
        index.check_and_insert(PageSignature(rng.getrandbits(64), article, 500, 0, 0), "urn:a")
        for i in range(6):
            copy = PageSignature(rng.getrandbits(64), (*article[:5], i, i + 10, i + 20), 480, 0, 0)
            for _ in range(3):  # and in the next crawls
                match = index.check_and_insert(copy, f"https://news{i}.example/story")
                assert (match.key, match.rule) == ("urn:a", "sentences")
        assert index.stats()["repeated_sentences"] == 4 + 6 * 5
        assert index.verify() == []
        if storage == "redis":
            index.drop()
