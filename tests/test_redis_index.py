"""The Redis index on a real redis-server: keys, meta, records, removal, scripts reloaded,
eviction refused, copies to and from LMDB."""

from __future__ import annotations

import random
import re
import threading
import uuid

import numpy as np
import pytest

from scrapy_simhash import Fingerprinter, page_signature
from scrapy_simhash.index import IndexMismatchError, SimhashIndex
from scrapy_simhash.index.layout import build_layout
from scrapy_simhash.index.records import DamagedIndexError, doc_id
from scrapy_simhash.index.redis_bulk import table_buckets
from scrapy_simhash.index.redis_calls import BATCH
from scrapy_simhash.index.redis_client import redact
from scrapy_simhash.index.redis_index import RedisIndex
from scrapy_simhash.index.redis_meta import choose_field_bits
from scrapy_simhash.text.signature import PageSignature

from ._redis_server import SlotMove


def test_all_keys_under_one_hash_tag_and_few_of_them(redis_server, key):
    with RedisIndex(redis_server.url, key, expected_size=10**7, drop_records=10) as ix:
        ix.insert_many((i * 0x9E3779B97F4A7C15 % 2**64, f"k{i}", {}) for i in range(5000))
        assert len(ix) == 5000
        with redis_server.client() as client:
            names = sorted(k.decode() for k in client.scan_iter(match=f"{{{key}}}*"))
        tables = [f"{{{key}}}:t{i:02d}" for i in range(10)]
        assert names == sorted([f"{{{key}}}:{n}" for n in ("meta", "docs", "fps")] + tables)
        assert ix.check_and_insert(0x9E3779B97F4A7C15 ^ 1, "copy").key == "k1"
        with redis_server.client() as client:
            names = sorted(k.decode() for k in client.scan_iter(match=f"{{{key}}}*"))
        drops = [f"{{{key}}}:{n}" for n in ("drops", "dseq", "dkept")]
        assert names == sorted([f"{{{key}}}:{n}" for n in ("meta", "docs", "fps")] + tables + drops)


def test_meta_holds_the_parameters(redis_server, key):
    RedisIndex(redis_server.url, key).close()
    with redis_server.client() as client:
        meta = {k.decode(): v.decode() for k, v in client.hgetall(f"{{{key}}}:meta").items()}
    assert set(meta) == {
        "format_version",
        "fingerprint_version",
        "numbers",
        "max_distance",
        "layout",
        "field_bits",
        "created",
        "fingerprints",
    }
    assert (meta["max_distance"], meta["numbers"]) == ("3", "1")
    assert meta["format_version"] == "4"  # 4: repeated sentences (a change of layout bumps it)


def _open_when_all_are_ready(
    url: str, name: str, start: threading.Barrier, opened: list[object]
) -> None:
    start.wait()
    try:
        with RedisIndex(url, name) as ix:
            opened.append(ix._token)
    except Exception as exc:
        opened.append(exc)


def test_processes_creating_one_index_at_once_all_open_it(redis_server, key):
    """Of clients creating the same index at the same moment, one writes its meta and the
    others open that index: none reads a meta half written (crawls on several machines
    start together)."""
    for round_ in range(30):
        start = threading.Barrier(3)
        opened: list[object] = []
        args = (redis_server.url, f"{key}-{round_}", start, opened)
        threads = [threading.Thread(target=_open_when_all_are_ready, args=args) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(set(opened)) == 1 and isinstance(opened[0], str), opened


def test_other_parameters_are_refused(redis_server, key):
    RedisIndex(redis_server.url, key, max_distance=3).close()
    with pytest.raises(IndexMismatchError, match="max_distance=3, not 4"):
        RedisIndex(redis_server.url, key, max_distance=4)
    with pytest.raises(IndexMismatchError, match="layout"):
        RedisIndex(redis_server.url, key, layout=build_layout(3, 5))
    with redis_server.client() as client:
        client.hset(f"{{{key}}}:meta", "format_version", "99")
    with pytest.raises(IndexMismatchError, match="format_version=99"):
        RedisIndex(redis_server.url, key)
    with RedisIndex(redis_server.url, key, max_distance=4, reset=True) as ix:
        assert ix.max_distance == 4


def test_an_index_whose_meta_was_lost_is_refused_not_created_anew(redis_server, key):
    """The meta key deleted (a ``DEL``, an eviction) and the other keys left: an open used to
    write a new meta over them, with the parameters asked for (k=4 here, and another layout),
    and read the old tables as the new layout's; a page 2 bits from a stored one was then
    stored as new. Now every open refuses it, naming the lost key and how to empty it, and
    writes nothing; a reset empties it."""
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix:
        ix.insert_many((i * 0x9E3779B97F4A7C15 % 2**64, f"k{i}", {}) for i in range(50))
    with redis_server.client() as client:
        client.delete(f"{tag}:meta")
        before = sorted(client.keys(f"{tag}*"))
        lost = rf"has lost its meta key {re.escape(tag)}:meta .*SIMHASH_RESET naming '{key}'"
        for options in [{}, {"max_distance": 4, "expected_size": 10**8}, {"readonly": True}]:
            with pytest.raises(DamagedIndexError, match=lost):
                RedisIndex(redis_server.url, key, **options)
        assert sorted(client.keys(f"{tag}*")) == before  # nothing written
    with RedisIndex(redis_server.url, key, max_distance=4, reset=True) as ix:
        assert len(ix) == 0 and ix.max_distance == 4
        ix.insert(7, "a")
    with RedisIndex(redis_server.url, key) as ix:
        assert list(ix) == ["a"] and ix.verify() == []


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("created", None, r"bad meta \('created'\)"),
        ("max_distance", b"\xff\xfe", r"bad meta \(not UTF-8\)"),
        ("numbers", b"x", r"bad meta \(numbers='x'\)"),
    ],
)
def test_a_meta_missing_a_field_or_not_text_is_bad_meta(redis_server, key, field, value, said):
    """A meta without its token, or with a value that is not UTF-8: refused as bad meta (an
    IndexMismatchError, which the crawl and the command line say in one line), not a
    KeyError or a UnicodeDecodeError."""
    RedisIndex(redis_server.url, key).close()
    with redis_server.client() as client:
        if value is None:
            client.hdel(f"{{{key}}}:meta", field)
        else:
            client.hset(f"{{{key}}}:meta", field, value)
    with pytest.raises(IndexMismatchError, match=said):
        RedisIndex(redis_server.url, key)


@pytest.mark.parametrize("change", ["cut", "grown"])
def test_a_table_bucket_not_whole_values_is_damage_and_nothing_is_written(
    redis_server, key, change
):
    """A bucket of a table cut short or grown by a byte (no checksum guards a bucket): every
    call that reads it reports damage (DamagedIndexError, which a crawl counts as a page
    unchecked), not a Lua error on the missing bytes (a ResponseError, which a crawl took for
    the server failing and stopped on, after its retries); an insert is refused before it
    writes anything."""
    tag = f"{{{key}}}"
    stored = 0x0123456789ABCDEF
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert_many([(stored, "a", {}), (stored ^ 0xFF00, "b", {})])
        [(field, bucket)] = client.hgetall(f"{tag}:t00").items()
        client.hset(f"{tag}:t00", field, bucket[:-1] if change == "cut" else bucket + b"\0")
        keys = sorted(client.keys(f"{tag}*"))
        contents = {name: client.hgetall(name) for name in keys}
        near = stored ^ 0b11
        calls = [
            lambda: ix.probe(near),
            lambda: ix.query(near),
            lambda: ix.decide(near),
            lambda: ix.check_and_insert(near, "c"),
            lambda: ix.check_and_insert_many([(near, "d", {})]),
            lambda: ix.insert(near, "e"),
        ]
        for call in calls:
            with pytest.raises(DamagedIndexError, match="a bucket of table 0 holds"):
                call()
        assert {name: client.hgetall(name) for name in keys} == contents
        size = len(bucket) - 1 if change == "cut" else len(bucket) + 1
        assert f"table 0 bucket {field.hex()} has {size} bytes" in ix.verify()


def test_a_count_in_meta_that_is_not_a_number_is_damage_before_any_write(redis_server, key):
    """The meta's count of fingerprints changed to text: a check used to store the page,
    then fail on the count (Redis undoes nothing of a failed script), so a crawl retrying
    it was told it failed while its page was in. Now it is refused before anything is
    written."""
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key, drop_records=10) as ix, redis_server.client() as c:
        ix.insert(1, "a")
        for field in ("fingerprints", "drops_seq"):
            c.hset(f"{tag}:meta", field, "abc")
            keys = sorted(c.keys(f"{tag}*"))
            contents = {name: c.hgetall(name) for name in keys if name != f"{tag}:meta".encode()}
            for call in [
                lambda: ix.check_and_insert(1 << 40, "b"),  # stored
                lambda: ix.check_and_insert(3, "c"),  # dropped, with a record
                lambda: ix.insert(1 << 41, "d"),
            ]:
                with pytest.raises(DamagedIndexError, match="a count that is not a number"):
                    call()
            assert sorted(c.keys(f"{tag}*")) == keys
            assert {name: c.hgetall(name) for name in keys if name in contents} == contents
            c.hset(f"{tag}:meta", field, "1")


def test_a_layout_of_more_tables_than_an_index_holds_is_refused_before_any_key(redis_server, key):
    """84 tables (k=3, 9 blocks): refused at once, naming the limit, before any key is
    written (the index used to write its meta, then refuse it as bad meta, and leave it on
    the server)."""
    with pytest.raises(ValueError, match="an index holds at most 64 tables"):
        RedisIndex(redis_server.url, key, layout=build_layout(3, 9))
    with redis_server.client() as client:
        assert client.keys(f"{{{key}}}*") == []
    with RedisIndex(redis_server.url, key, layout=build_layout(3, 8)) as ix:  # 56 tables
        ix.insert(7, "a")
    with RedisIndex(redis_server.url, key) as ix:
        assert ix.layout.tables == 56 and "a" in ix


def test_an_index_reset_by_another_process_is_not_written_to(redis_server, key):
    with RedisIndex(redis_server.url, key) as ix:
        ix.insert(1, "a")
        RedisIndex(redis_server.url, key, reset=True).close()
        lost = r"reset, replaced or lost \(a server restarted without persistence\)"
        with pytest.raises(IndexMismatchError, match=lost):
            ix.check_and_insert(2, "b")


def test_a_check_made_during_a_reset_never_reaches_the_new_index(redis_server, key):
    """A crawl resetting the index while another crawl checks pages on it: the reset deletes
    the index's keys in one command, so a check the server runs between the reset's commands
    meets the old index whole or finds it gone (refused). It used to delete the data, then
    the meta: a check run between the two passed the old index's token, wrote its page into
    the emptied keys, and that page was in the new index, whose meta counted no fingerprint
    (``verify`` failed)."""
    with RedisIndex(redis_server.url, key) as crawl:
        crawl.insert(1, "a")
        checked = []

        def unlink_then_check(*names):
            done = unlink(*names)
            try:
                checked.append(crawl.check_and_insert(0xAAAA_5555_0000_0000, "b"))
            except IndexMismatchError:
                checked.append("refused")
            return done

        resetting = redis_server.client()
        unlink = resetting.unlink
        resetting.unlink = unlink_then_check
        with RedisIndex(redis_server.url, key, reset=True, client=resetting) as fresh:
            assert checked[-1] == "refused"
            assert len(fresh) == 0 and "b" not in fresh
            assert fresh.verify() == []


def test_missing_index_without_create(redis_server, key):
    with pytest.raises(ValueError, match="no index"):
        RedisIndex(redis_server.url, key, create=False)
    with pytest.raises(ValueError, match="braces"):
        RedisIndex(redis_server.url, "a{b}")


def test_records_replace_and_remove(redis_server, key):
    with RedisIndex(redis_server.url, key) as ix:
        assert ix.check_and_insert(0xFF, "a", url="a") is None
        first = ix.get("a")
        assert first.record["url"] == "a"
        # the same key within k: no match with itself, replaced, first seen kept
        assert ix.check_and_insert(0xFE, "a", url="a2") is None
        again = ix.get("a")
        assert again.fingerprint == 0xFE and again.record == {
            "url": "a2",
            "seen": first.record["seen"],
        }
        # another key sharing the fingerprint is a match at distance 0
        match = ix.check_and_insert(0xFE, "b")
        assert (match.key, match.distance) == ("a", 0)
        ix.insert(0xFE, "b")
        assert sorted(m.key for m in ix.query(0xFE)) == ["a", "b"]
        assert ix.remove("a") and not ix.remove("a")
        assert [m.key for m in ix.query(0xFE)] == ["b"]
        assert ix.remove("b")
        assert ix.query(0xFE) == [] and len(ix) == 0
        assert ix.stats()["fingerprints"] == 0
        assert ix.verify() == []


def test_verify_names_damaged_documents_links_tables_and_counts(redis_server, key):
    """``verify`` on Redis checks what it checks on LMDB: each document under its own id and
    linked to its fingerprint, each link to a stored document, each table holding exactly
    the linked fingerprints in well-formed, sorted buckets, and the count in ``meta``."""
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert_many([(1 << 60, "a", {}), (2 << 60, "b", {}), (3 << 60, "c", {})])
        assert ix.verify() == []
        client.hset(f"{tag}:docs", doc_id("elsewhere"), client.hget(f"{tag}:docs", doc_id("a")))
        client.hdel(f"{tag}:fps", (2 << 60).to_bytes(8, "big"))
        client.hset(f"{tag}:fps", (9 << 60).to_bytes(8, "big"), doc_id("gone"))
        client.hset(f"{tag}:meta", "fingerprints", "7")
        field, bucket = next(iter(client.hgetall(f"{tag}:t00").items()))
        client.hset(f"{tag}:t00", field, bucket + b"\x00")
        field, bucket = next(iter(client.hgetall(f"{tag}:t01").items()))
        client.hset(f"{tag}:t01", field, b"\xff" * len(bucket) + bucket)
        problems = ix.verify()
    assert "document 'a' is stored under another id" in problems
    assert "document 'b' is not linked to its fingerprint" in problems
    assert f"fingerprint {9 << 60:016x} links a missing document" in problems
    assert "meta counts 7 fingerprints, 3 are linked" in problems
    assert any(p.startswith("table 0 bucket ") and p.endswith(" bytes") for p in problems)
    assert any(p.startswith("table 1 bucket ") and p.endswith(" is out of order") for p in problems)
    # the same count, not the same fingerprints: b is in the tables, 9 << 60 only linked
    assert "table 2 holds 3 fingerprints, not the 3 linked" in problems


def test_verify_names_a_count_that_is_no_number(redis_server, key):
    """A count of fingerprints written no number (or bytes no text) is a problem ``verify``
    names on Redis, as on LMDB (it raised ValueError or UnicodeDecodeError)."""
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert_many([(1 << 60, "a", {}), (2 << 60, "b", {})])
        for value in (b"lots", b"\xff\xfe"):
            client.hset(f"{{{key}}}:meta", "fingerprints", value)
            assert ix.verify() == [f"meta's count of fingerprints is {value!r}, not a number"]
            with pytest.raises(DamagedIndexError, match="count of fingerprints is"):
                ix.stats()


def test_verify_names_a_link_that_lists_a_document_twice(redis_server, key):
    """A fingerprint's link listing one document twice (which LMDB's links cannot hold):
    ``query`` gave the document twice and ``pairs`` a pair of it with itself, and ``verify``
    found nothing."""
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert_many([(1 << 60, "a", {}), (1 << 60, "b", {})])
        client.hset(f"{tag}:fps", (1 << 60).to_bytes(8, "big"), doc_id("a") * 2 + doc_id("b"))
        assert [m.key for m in ix.query(1 << 60)] == ["a", "a", "b"]  # what verify must find
        assert ix.verify() == [f"fingerprint {1 << 60:016x} links a document twice"]


def test_verify_lists_damaged_document_records(redis_server, key):
    """A document record that fails its checksum, and one cut short: ``verify`` names them
    among its problems, as on LMDB, instead of raising DamagedIndexError at the first (read
    again through its fingerprint's link)."""
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert_many([(1 << 60, "a", {"t": "x"}), (2 << 60, "b", {}), (3 << 60, "c", {})])
        data = client.hget(f"{tag}:docs", doc_id("a"))
        client.hset(f"{tag}:docs", doc_id("a"), data[:-1] + bytes([data[-1] ^ 1]))
        client.hset(f"{tag}:docs", doc_id("b"), b"\x00" * 10)
        problems = ix.verify()
    assert sorted(problems) == [
        f"document {doc_id('a').hex()}: index damaged: a document record fails its checksum",
        f"document {doc_id('b').hex()}: index damaged: a document record fails its checksum",
    ]


@pytest.mark.parametrize("cut", [0, 5, 19, 23, 30])
def test_a_document_record_cut_short_is_damage_to_every_decision(redis_server, key, cut):
    """A stored record cut to fewer bytes than its header, key and checksum take: the
    script reports damage (DamagedIndexError), by the Hamming rule and by the sentence rule,
    one by one and in a batch, not a Lua error on the missing bytes (a ResponseError); and the
    page stored again or removed is damage too, as on LMDB (whose writes decode the old
    record first)."""
    tag = f"{{{key}}}"
    url = "https://x.example/a"  # 19 bytes: a whole record is 20 + 19 + 4 bytes or more
    sentences = (1, 2, 3)
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert(PageSignature(1 << 60, sentences, 100), url, t="title")
        data = client.hget(f"{tag}:docs", doc_id(url))
        client.hset(f"{tag}:docs", doc_id(url), data[:cut])
        near = PageSignature((1 << 60) | 1, sentences, 100)  # by the Hamming rule
        far = PageSignature(12345, sentences, 100)  # by the sentence rule
        calls = [
            lambda: ix.decide(near),
            lambda: ix.decide(far),
            lambda: ix.check_and_insert(near, "https://x.example/b"),
            lambda: ix.check_and_insert(far, "https://x.example/c"),
            lambda: ix.check_and_insert_many([(near, "https://x.example/d", {})]),
        ]
        # its own page stored again or removed: its header is read first
        calls += [
            lambda: ix.insert(7, url),
            lambda: ix.check_and_insert(7, url),
            lambda: ix.check_and_insert_many([(7, url, {})]),
            lambda: ix.remove(url),
        ]
        for call in calls:
            with pytest.raises(DamagedIndexError, match="index damaged: "):
                call()
        assert len(ix) == 1  # nothing was stored


def test_pairs_pass_over_a_link_whose_document_is_missing(redis_server, key):
    """A fingerprint whose one linked document is gone (damage ``verify`` names): ``pairs``
    and ``clusters`` give the pairs of the documents that are there, as on LMDB."""
    tag = f"{{{key}}}"
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.insert_many([(1, "a", {}), (3, "b", {}), (3, "c", {}), (7, "d", {})])
        client.hdel(f"{tag}:docs", doc_id("b"), doc_id("d"))  # 7 links only "d"
        assert sorted(ix.pairs()) == [("a", "c", 1)]
        assert ix.clusters() == [["a", "c"]]


def test_check_and_insert_keeps_crowded_buckets_in_order(redis_server, key):
    """Check-and-inserts into the same buckets, in a random order and in batches: the script
    puts each new value where its probe found it goes; the buckets stay sorted and every
    fingerprint is found again (a value put out of order would hide others from the probe's
    bisection)."""
    rng = random.Random(5)
    # one 20-bit prefix, the other 44 bits random: crowded buckets of table 0, and pairs
    # more than k apart, so that every one is admitted
    shared = rng.getrandbits(20) << 44
    fps = list({shared | rng.getrandbits(44) for _ in range(400)})
    rng.shuffle(fps)
    with RedisIndex(redis_server.url, key, 3, 10**6) as ix:
        for start in range(0, 300, 70):
            batch = fps[start : start + 70]
            assert ix.check_and_insert_many([(fp, f"k{fp}", {}) for fp in batch]) == [None] * len(
                batch
            )
        for fp in fps[300:]:
            assert ix.check_and_insert(fp, f"k{fp}") is None
        assert ix.verify() == []
        for fp in fps[::7]:
            assert [(m.key, m.distance) for m in ix.query(fp)] == [(f"k{fp}", 0)]
        # a copy of each is found, at its distance
        for fp in fps[::11]:
            assert ix.check_and_insert(fp ^ 0b101, f"copy{fp}").key == f"k{fp}"


def _decided(match) -> tuple | None:
    return None if match is None else (match.key, match.rule, match.distance)


def _decisions(index, items: list) -> list:
    return [_decided(m) for m in index.check_and_insert_many(items)]


def _stored(index) -> list:
    return sorted((m.key, m.fingerprint, m.record.get("i")) for m in index.items())


def test_a_key_given_twice_in_a_batch_is_decided_in_its_place(redis_server, key, tmp_path):
    """check_and_insert_many with a key given again: its second item is decided after the
    first was stored and before the items after it, as one by one on LMDB. (Sent in one
    pipeline, it carried a header read before the first was stored: refused, and decided
    only after every other item, so that "b" was admitted and "a" dropped against it.)"""
    items = [(0, "a", {}), (2**64 - 1, "a", {}), (2**64 - 1, "b", {})]
    with (
        RedisIndex(redis_server.url, key) as redis,
        SimhashIndex(tmp_path / "ix") as lmdb,
    ):
        assert _decisions(lmdb, items) == [None, None, ("a", "hamming", 0)]
        assert _decisions(redis, items) == [None, None, ("a", "hamming", 0)]
        assert _stored(redis) == _stored(lmdb) == [("a", 2**64 - 1, None)]


def test_batches_with_keys_given_again_decide_as_one_by_one_on_lmdb(redis_server, key, tmp_path):
    """Batches over several scripts of BATCH items whose keys come again (within a script
    and across scripts), pages near duplicates of one another, bare or signed, drop records
    on: the answers, the documents and the drop records are the LMDB index's."""
    rng = random.Random(17)
    bases = [rng.getrandbits(64) for _ in range(3)]
    article = [rng.getrandbits(64) for _ in range(12)]

    def page(i: int) -> int | PageSignature:
        fingerprint = rng.choice(bases)
        for bit in rng.sample(range(64), rng.choice([0, 1, 2, 3, 5, 9])):
            fingerprint ^= 1 << bit
        if i % 3 == 0:
            return fingerprint  # a bare fingerprint
        return PageSignature(fingerprint, tuple(rng.sample(article, 6)), rng.choice([90, 200]))

    count = 2 * BATCH + 40
    keys = [f"https://r.example/{rng.randrange(40)}" for _ in range(count)]
    items = [(page(i), k, {"i": i}) for i, k in enumerate(keys)]
    assert len(set(keys)) <= 40  # each key comes about 4 times
    with (
        RedisIndex(redis_server.url, key, drop_records=1000) as redis,
        SimhashIndex(tmp_path / "ix", drop_records=1000) as lmdb,
    ):
        found = 0
        for start in (0, 2 * BATCH):  # a batch of two scripts, then one of a script
            batch = items[start : start + 2 * BATCH]
            expected = [_decided(lmdb.check_and_insert(p, k, **r)) for p, k, r in batch]
            assert _decisions(redis, batch) == expected
            found += sum(m is not None for m in expected)
        assert found > 20  # near duplicates were found
        assert _stored(redis) == _stored(lmdb)
        assert sorted((d.key, d.kept, d.rule, d.record["i"]) for d in redis.drops()) == sorted(
            (d.key, d.kept, d.rule, d.record["i"]) for d in lmdb.drops()
        )
        assert redis.verify() == [] and lmdb.verify() == []


@pytest.mark.parametrize("storage", ["lmdb", "redis"])
def test_a_signature_that_cannot_be_stored_fails_the_batch_before_any_write(
    redis_server, key, tmp_path, storage
):
    """check_and_insert_many with a key given twice (two runs of scripts on Redis) and a
    page signature that cannot be packed (300 sentences, a hash past 64 bits): nothing is
    written, as on LMDB (Redis stored the first run's page before the second's failed)."""
    if storage == "lmdb":
        index = SimhashIndex(tmp_path / "ix")
    else:
        index = RedisIndex(redis_server.url, key)
    far = 0xAAAA_5555_0000_1234
    with index:
        for bad in (PageSignature(far, tuple(range(300))), PageSignature(far, (2**64,))):
            page = PageSignature(1 << 50, (1, 2))
            with pytest.raises(ValueError, match="a page signature that cannot be stored"):
                index.check_and_insert_many([(page, "a", {}), (page, "a", {}), (bad, "b", {})])
            assert len(index) == 0


def test_scripts_are_loaded_again_after_a_flush(redis_server, key):
    with RedisIndex(redis_server.url, key) as ix:
        ix.insert(1, "a")
        with redis_server.client() as client:
            client.script_flush()
        assert ix.check_and_insert(3, "b").key == "a"
        client = redis_server.client()
        client.script_flush()
        client.close()
        far = 0xAAAA_5555_0000_0000
        assert ix.check_and_insert_many([(far, "c", {}), (far + 1, "d", {})])[1].key == "c"


def test_an_evicting_server_is_refused(redis_server, key):
    with RedisIndex(redis_server.url, key) as ix, redis_server.client() as client:
        ix.check_eviction()
        client.config_set("maxmemory-policy", "allkeys-lru")
        try:
            with pytest.raises(ValueError, match="maxmemory-policy allkeys-lru"):
                ix.check_eviction()
        finally:
            client.config_set("maxmemory-policy", "noeviction")


def test_passwords_are_never_shown():
    assert redact("redis://user:s3cret@host:6380/2") == "redis://user:***@host:6380/2"
    assert redact("rediss://:s3cret@host/0") == "rediss://:***@host/0"
    assert redact("unix:///tmp/r.sock?db=1") == "unix:///tmp/r.sock?db=1"


def test_field_bits_stay_within_the_prefixes():
    for k in range(5):
        layout = build_layout(k, k + 1)
        for size in (1, 10**6, 10**9):
            assert 0 <= choose_field_bits(layout, size) <= min(24, *layout.prefix_bits)


def test_copies_to_lmdb_and_back(redis_server, key, tmp_path):
    with RedisIndex(redis_server.url, key) as ix:
        ix.insert_many((i << 20, f"k{i}", {"n": i}) for i in range(300))
        assert ix.compact(str(tmp_path / "copy")) == 300
        with SimhashIndex(tmp_path / "copy") as copy:
            assert len(copy) == 300 and copy.verify() == []
            assert copy.get("k7").record == ix.get("k7").record
            with RedisIndex(redis_server.url, key + ":back") as back:
                try:
                    assert back.load(copy) == 300
                    assert back.get("k7").record == ix.get("k7").record
                    assert back.verify() == []
                finally:
                    back.drop()


def test_an_index_of_other_numbers_is_not_loaded(redis_server, key, tmp_path):
    """Signatures made without number features (SIMHASH_NUMBERS = False) are not loaded into
    an index that reads them (nor the other way): its rule would decide them with sentences
    and sketches of the other setting. Nothing is written."""
    text = " ".join(f"The ferry timetable lists crossing {w} for the harbour" for w in "abcdef")
    for numbers in (False, True):
        path = tmp_path / f"numbers-{numbers}"
        fingerprinter = Fingerprinter(numbers=numbers)
        with SimhashIndex(path, numbers=numbers) as source:
            source.insert(page_signature(text, fingerprinter), "page")
            with RedisIndex(redis_server.url, f"{key}:{numbers}", numbers=not numbers) as dest:
                try:
                    with pytest.raises(IndexMismatchError, match=f"numbers={numbers}, not"):
                        dest.load(source)
                    assert len(dest) == 0 and dest.drop_count() == 0
                finally:
                    dest.drop()
            with RedisIndex(redis_server.url, f"{key}:{numbers}:same", numbers=numbers) as dest:
                try:
                    assert dest.load(source) == 1
                finally:
                    dest.drop()


def test_on_the_cluster(redis_cluster):
    key = f"t:{uuid.uuid4().hex}"
    with RedisIndex(redis_cluster.url, key) as ix:
        try:
            assert ix.cluster
            items = _bulk_items(9)[:300]  # a bulk load, signatures included
            items[5] = (5 << 30, "k5", {})
            ix.insert_many(items)
            assert ix.check_and_insert((5 << 30) ^ 1, "near").key == "k5"
            assert ix.verify() == []
            assert len(ix) == 300  # "near" was dropped
            assert list(ix.client.scan_iter(match=f"{{{key}}}:load:*")) == []
            assert ix.stats()["maxmemory_policy"] == "noeviction"
            assert ix.memory()["tables_memory"] > 0
        finally:
            ix.drop()


def _move_slot(cluster, key: str) -> None:
    """Reshard: the slot of index ``key`` moved to another master of ``cluster``."""
    SlotMove(cluster, key).begin().finish()


def test_pipelines_follow_the_index_to_another_master(redis_cluster):
    """The cluster resharded while the index is open: its slot on another master. The
    pipelined calls (``query_many``, ``check_and_insert_many``) find it there, as the single
    ones do (``query_many`` failed with MovedError at every call: its pipeline went to the
    node the client knew, which never learned of the move)."""
    key = f"t:{uuid.uuid4().hex}"
    far = 0xAAAA_5555_0000_0000
    with RedisIndex(redis_cluster.url, key) as ix:
        try:
            ix.insert_many([(1 << 40, "a", {}), (far, "b", {})])
            _move_slot(redis_cluster, key)
            found = ix.query_many([(1 << 40) ^ 1, far ^ 3])
            assert [[(m.key, m.distance) for m in ms] for ms in found] == [[("a", 1)], [("b", 2)]]
            _move_slot(redis_cluster, key)
            matches = ix.check_and_insert_many([(far ^ 1, "c", {}), (12345, "d", {})])
            assert [m and m.key for m in matches] == ["b", None]
            _move_slot(redis_cluster, key)
            assert [m.key for m in ix.query_many([12345, 12344])[1]] == ["d"]
            assert sorted(ix.keys()) == ["a", "b", "d"] and ix.verify() == []
        finally:
            ix.drop()


def _bulk_items(seed: int) -> list:
    """Items for a load: signatures and bare fingerprints, documents sharing a fingerprint,
    pages sharing sentences, and repeated keys (the last wins: another fingerprint, the same
    one, or a bare fingerprint after a signature). Each record gives its first-seen time, so
    that two loads write the same records."""
    rng = random.Random(seed)
    shared = [rng.getrandbits(64) for _ in range(20)]
    items = []
    for i in range(3000):
        fingerprint = rng.choice(shared) if i % 50 == 0 else rng.getrandbits(64)
        record = {"seen": 1_700_000_000.0 + i, "n": i}
        if i % 3:
            sentences = tuple(rng.choice(shared) if rng.random() < 0.2 else rng.getrandbits(64)
                              for _ in range(rng.randrange(0, 9)))  # fmt: skip
            item = PageSignature(fingerprint, sentences, 100 + i, rng.getrandbits(64), i % 7)
        else:
            item = fingerprint
        items.append((item, f"https://site{i % 40}.example/{i}", record))
    for i in range(0, 3000, 97):  # repeated keys, after all the others
        _, key, record = items[i]
        again = items[i][0] if i % 2 else rng.getrandbits(64)
        items.append((again, key, {**record, "again": True}))
    return items


def _contents(client, ix: RedisIndex) -> dict:
    """Every hash of the index; the ids listed under a fingerprint or a sentence as sets."""
    out = {}
    for name in ("docs", "sigs", "fps", "sents", *(f"t{i:02d}" for i in range(ix.layout.tables))):
        data = {bytes(f): bytes(v) for f, v in client.hgetall(f"{{{ix.key}}}:{name}").items()}
        if name in ("fps", "sents"):
            data = {f: sorted(v[i : i + 16] for i in range(0, len(v), 16)) for f, v in data.items()}
        out[name] = data
    meta = {bytes(f): bytes(v) for f, v in client.hgetall(f"{{{ix.key}}}:meta").items()}
    del meta[b"created"]
    out["meta"] = meta
    return out


def test_a_load_into_an_empty_index_writes_what_scripted_inserts_write(redis_server, key, caplog):
    """The bulk load (built on the client, installed by one script) against the same items
    inserted by the scripts, one by one: the same records, signatures, buckets and count of
    fingerprints, the same ids under each fingerprint and sentence; and the same answers."""
    items = _bulk_items(5)
    with RedisIndex(redis_server.url, key, expected_size=2000) as bulk:
        with caplog.at_level("DEBUG", "scrapy_simhash.index.redis_bulk"):
            assert bulk.insert_many(items) == len(items)
        assert "bulk-loaded 3000 documents" in caplog.text  # the repeated keys once
        with RedisIndex(redis_server.url, key + ":one", expected_size=2000) as one:
            try:
                for item in items:
                    one.insert(*item[:2], **item[2])
                with redis_server.client() as client:
                    loaded, inserted = _contents(client, bulk), _contents(client, one)
                    staged = list(client.scan_iter(match=f"{{{key}}}:load:*"))
                assert loaded["meta"][b"fingerprints"] == inserted["meta"][b"fingerprints"]
                for name in inserted:
                    assert loaded[name] == inserted[name], name
                assert len(loaded["sents"]) > 100 and len(loaded["t00"]) > 100
                assert staged == []
                assert bulk.verify() == []
                rng = random.Random(6)
                for fingerprint, _, _ in rng.sample(items, 200):
                    fp = fingerprint if isinstance(fingerprint, int) else fingerprint.fingerprint
                    query = fp ^ (1 << rng.randrange(64))
                    assert bulk.query(query) == one.query(query)
            finally:
                one.drop()


def test_a_load_into_an_index_a_crawl_wrote_to_meanwhile_inserts_by_scripts(
    redis_server, key, monkeypatch, caplog
):
    """Another client stores a page between the load's look at the index and its install:
    the staging keys are deleted, and the items are inserted by scripts, beside that page."""
    items = [(i << 24, f"k{i}", {}) for i in range(500)]
    install = RedisIndex._install

    def crawl_first(self, keys, args):
        with RedisIndex(redis_server.url, key) as crawl:
            assert crawl.check_and_insert(0xABCDEF, "crawled") is None
        return install(self, keys, args)

    monkeypatch.setattr(RedisIndex, "_install", crawl_first)
    with caplog.at_level("INFO"), RedisIndex(redis_server.url, key) as ix:
        assert ix.insert_many(items) == 500
        assert len(ix) == 501 and ix.get("crawled") is not None
        assert ix.get("k7").fingerprint == 7 << 24
        assert ix.verify() == []
        with redis_server.client() as client:
            assert list(client.scan_iter(match=f"{{{key}}}:load:*")) == []
    assert "another client stored documents during the bulk load" in caplog.text


def test_a_load_with_a_bad_item_writes_nothing(redis_server, key):
    items = [(i << 24, f"k{i}", {}) for i in range(500)]
    items.append((1, "bad", {"x": object()}))
    with RedisIndex(redis_server.url, key) as ix:
        with pytest.raises(TypeError):
            ix.insert_many(items)
        assert len(ix) == 0
        with redis_server.client() as client:
            assert sorted(client.scan_iter(match=f"{{{key}}}*")) == [f"{{{key}}}:meta".encode()]


def test_a_load_whose_staging_key_was_evicted_installs_nothing(redis_server, key, monkeypatch):
    """A server whose ``volatile-*`` policy evicts keys with a time to live may evict a bulk
    load's staging keys (they expire, in case the load dies): the install then refuses, and
    nothing is loaded."""
    import redis

    install = RedisIndex._install

    def evict_one(self, keys, args):
        with redis_server.client() as client:
            client.delete(next(k for k in keys if ":load:" in k and k.endswith(":t01")))
        return install(self, keys, args)

    monkeypatch.setattr(RedisIndex, "_install", evict_one)
    with RedisIndex(redis_server.url, key) as ix:
        with pytest.raises(redis.ResponseError, match="lost a staging key"):
            ix.insert_many([(i << 24, f"k{i}", {}) for i in range(500)])
        assert len(ix) == 0
        with redis_server.client() as client:
            assert sorted(client.scan_iter(match=f"{{{key}}}*")) == [f"{{{key}}}:meta".encode()]


@pytest.mark.parametrize("field_bits", [0, 1, 8, 13, 16, 17, 24])
def test_bulk_buckets_are_the_scripts_fields_and_values(field_bits):
    """The buckets a bulk load writes hold each permuted fingerprint under the field and
    with the value the script's arguments give it (``RedisIndex._item``: the top bits in
    whole bytes, the rest in ``8 - bits // 8`` bytes), in ascending order."""
    rng = random.Random(field_bits)
    permuted = sorted({rng.getrandbits(64) for _ in range(2000)} | {0, 2**64 - 1})
    width = 8 - field_bits // 8
    shift = 64 - field_bits
    expected: dict[bytes, bytes] = {}
    for value in permuted:
        field = (value >> shift).to_bytes((field_bits + 7) // 8, "big")
        low = value & ((1 << shift) - 1)
        expected[field] = expected.get(field, b"") + low.to_bytes(width, "big")
    array = np.array(permuted, dtype=np.uint64)
    assert dict(table_buckets(array, field_bits, width)) == expected
