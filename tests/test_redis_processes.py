"""Processes racing on one Redis index, on one server and on the 3-master cluster: near
duplicates checked at once admit exactly one per group, in every group."""

from __future__ import annotations

import multiprocessing
import random
import uuid

import pytest

from scrapy_simhash.index.redis_index import RedisIndex

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


def _racer(url: str, key: str, worker: int, seed: int, start, results) -> None:
    """Check this racer's member of every group, in the same order as the others (racers 2
    and 3 pipelined, 20 pages a call); member ``worker`` is 1 bit from the base, so within 2
    bits of every other member."""
    with RedisIndex(url, key) as ix:
        items = [
            (base ^ (1 << (worker * 7)), f"w{worker}-g{g}", {"worker": worker})
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


def _race(url: str, seed: int) -> None:
    key = f"race:{uuid.uuid4().hex}"
    RedisIndex(url, key).close()
    start = ctx.Barrier(RACERS)
    results = ctx.Array("b", RACERS * GROUPS)
    _run(
        [
            ctx.Process(target=_racer, args=(url, key, w, seed, start, results))
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


@pytest.mark.parametrize("seed", range(2))
def test_racers_on_one_server_admit_exactly_one_per_group(redis_server, seed):
    _race(redis_server.url, seed)


@pytest.mark.parametrize("seed", range(2))
def test_racers_on_the_cluster_admit_exactly_one_per_group(redis_cluster, seed):
    _race(redis_cluster.url, seed)
