"""Processes racing on one Redis index, on one server and on the 3-master cluster: near
duplicates checked at once admit exactly one per group, in every group, by their fingerprints
or by their page signatures (half the groups then found by the sentence rule alone)."""

from __future__ import annotations

import multiprocessing
import random
import uuid

import pytest

from scrapy_simhash.index.redis_index import RedisIndex
from scrapy_simhash.text.signature import PageSignature

from .test_index_processes import _run

ctx = multiprocessing.get_context("fork")
GROUPS = 300
RACERS = 4


def _groups(seed: int) -> list[int]:
    """Group bases more than 2k bits apart from one another."""
    rng = random.Random(seed)
    bases: list[int] = []
    while len(bases) < GROUPS:
        fp = rng.getrandbits(64)
        if all((fp ^ b).bit_count() > 8 for b in bases):
            bases.append(fp)
    return bases


def _member(base: int, g: int, worker: int, signatures: bool) -> int | PageSignature:
    """Member ``worker`` of group ``g``: 1 bit from the base, so within 2 bits of every other
    member. As a page signature, it holds 6 of the group's 8 sentences (any two members share
    4), and in the odd groups its fingerprint is 2 bits from the base instead, 4 from the
    other members' (only the sentence rule finds them; still 5 or more bits from another
    group's members)."""
    if not signatures:
        return base ^ (1 << (worker * 7))
    fingerprint = base ^ ((0b11 << (worker * 16)) if g % 2 else (1 << (worker * 7)))
    rng = random.Random(base)
    sentences = [rng.getrandbits(64) for _ in range(8)]
    del sentences[2 * worker : 2 * worker + 2]
    return PageSignature(fingerprint, tuple(sentences), 500)


def _racer(url: str, key: str, worker: int, seed: int, signatures: bool, start, results) -> None:
    """Check this racer's member of every group, in the same order as the others (racers 2
    and 3 pipelined, 20 pages a call)."""
    with RedisIndex(url, key) as ix:
        items = [
            (_member(base, g, worker, signatures), f"w{worker}-g{g}", {"worker": worker})
            for g, base in enumerate(_groups(seed))
        ]
        start.wait()
        if worker < 2:
            decided = [ix.check_and_insert(fp, key, **record) for fp, key, record in items]
        else:
            decided = []
            for i in range(0, len(items), 20):
                decided += ix.check_and_insert_many(items[i : i + 20])
        for g, match in enumerate(decided):
            results[worker * GROUPS + g] = match is None
            if match is not None:  # a match of its own group, by the rule its pages give
                assert match.key.endswith(f"-g{g}")
                assert match.rule == ("sentences" if signatures and g % 2 else "hamming")


def _race(url: str, seed: int, signatures: bool = False) -> None:
    key = f"race:{uuid.uuid4().hex}"
    RedisIndex(url, key).close()
    start = ctx.Barrier(RACERS)
    results = ctx.Array("b", RACERS * GROUPS)
    _run(
        [
            ctx.Process(target=_racer, args=(url, key, w, seed, signatures, start, results))
            for w in range(RACERS)
        ]
    )
    admitted = [sum(results[w * GROUPS + g] for w in range(RACERS)) for g in range(GROUPS)]
    assert admitted == [1] * GROUPS
    with RedisIndex(url, key) as ix:
        try:
            assert len(ix) == GROUPS
            assert ix.verify() == []
            assert list(ix.pairs()) == []  # no near-duplicate pair kept
        finally:
            ix.drop()


@pytest.mark.parametrize("signatures", [False, True], ids=["fingerprints", "signatures"])
@pytest.mark.parametrize("seed", range(2))
def test_racers_on_one_server_admit_exactly_one_per_group(redis_server, seed, signatures):
    _race(redis_server.url, seed, signatures)


@pytest.mark.parametrize("signatures", [False, True], ids=["fingerprints", "signatures"])
@pytest.mark.parametrize("seed", range(2))
def test_racers_on_the_cluster_admit_exactly_one_per_group(redis_cluster, seed, signatures):
    _race(redis_cluster.url, seed, signatures)
