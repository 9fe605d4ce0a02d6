"""The two-rule decision on the Redis index: for random page signatures, the script decides
exactly as the LMDB index does (the reference), on one server and on the 3-master cluster;
signatures and postings follow inserts, replacements and removals, and copies carry them."""

from __future__ import annotations

import random
import tempfile
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.documents import Match
from scrapy_simhash.index.redis_index import RULE_FIELDS, RedisIndex
from scrapy_simhash.text.signature import DEFAULT_RULE, SENTENCES, PageSignature

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
    hold (the guard), words and numbers near or far."""

    def __init__(self, seed: int) -> None:
        self.rng = rng = random.Random(seed)
        self.bases = [rng.getrandbits(64) for _ in range(3)]
        self.articles = [[rng.getrandbits(64) for _ in range(10)] for _ in range(4)]
        self.boilerplate = [rng.getrandbits(64) for _ in range(3)]
        self.numbers = [rng.getrandbits(64) for _ in range(2)]

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
        words = rng.choice([0, 40, 90, 100, 110, 200, 400])
        numbers = _flip(rng, rng.choice(self.numbers), rng.choice([0, 5, 15, 21, 30]))
        return PageSignature(
            fingerprint, tuple(sentences), words, numbers, rng.choice([0, 2, 3, 5, 10])
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
                    page_key = f"https://site{rng.randint(0, 3)}.example/{step}"
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
