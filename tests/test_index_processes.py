"""Several processes on one index: a writer killed mid-batch, concurrent writers, racing
check_and_insert, and an index used across fork."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

import scrapy_simhash.index.tables as index_module
from scrapy_simhash.index import SimhashIndex

ctx = multiprocessing.get_context("fork")


@pytest.fixture(params=["4 tables", "10 tables and 4 recent ones"])
def new_index(request, tmp_path, monkeypatch) -> str:
    """The path of a new index: of 4 tables, or of 10 with recent tables merged into them
    every 100 new fingerprints (the forked processes inherit the limit)."""
    path = str(tmp_path / "ix")
    if request.param.startswith("10"):
        monkeypatch.setattr(index_module, "_RECENT_MIN", 100)
        SimhashIndex(path, expected_size=10**7).close()
    else:
        SimhashIndex(path).close()
    return path


def _batched_writer(path: str, progress) -> None:
    with SimhashIndex(path) as ix:
        for batch in range(10_000):
            ix.insert_many(
                ((batch << 32) | i, f"b{batch}-{i}", {"batch": batch}) for i in range(50)
            )
            progress.value = batch + 1


def test_killed_writer_loses_only_uncommitted_work(new_index):
    path = new_index
    progress = ctx.Value("i", 0)
    proc = ctx.Process(target=_batched_writer, args=(path, progress))
    proc.start()
    deadline = time.monotonic() + 30
    while progress.value < 20 and time.monotonic() < deadline:
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    committed = progress.value
    assert committed >= 20
    with SimhashIndex(path) as ix:
        assert ix.verify() == []
        count = len(ix)
        assert count % 50 == 0  # no partial batch
        batches = count // 50
        assert committed <= batches <= committed + 1
        for batch in range(batches):
            assert f"b{batch}-0" in ix and f"b{batch}-49" in ix
        ix.insert(1, "after-crash")
        assert ix.verify() == []


def _inserter(path: str, worker: int, count: int) -> None:
    with SimhashIndex(path) as ix:
        for i in range(count):
            ix.insert((worker << 60) | (i << 20) | i, f"w{worker}-{i}")


def _racer(path: str, worker: int, start, results) -> None:
    with SimhashIndex(path) as ix:
        start.wait()
        base = 0xDEAD_BEEF_0BAD_F00D
        fp = base ^ (1 << worker)  # within 2 bits of every other racer
        results[worker] = ix.check_and_insert(fp, f"racer{worker}") is None


def _run(procs) -> None:
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0


def test_four_writers_lose_nothing(new_index):
    path = new_index
    _run([ctx.Process(target=_inserter, args=(path, w, 150)) for w in range(4)])
    with SimhashIndex(path) as ix:
        assert len(ix) == 600
        assert ix.verify() == []
        for w in range(4):
            assert [m.key for m in ix.query((w << 60) | (7 << 20) | 7, 0)] == [f"w{w}-7"]


@pytest.mark.parametrize("round_", range(3))
def test_racing_near_duplicates_admit_exactly_one(tmp_path, round_):
    path = str(tmp_path / "ix")
    SimhashIndex(path).close()
    start = ctx.Event()
    results = ctx.Array("b", 4)
    procs = [ctx.Process(target=_racer, args=(path, w, start, results)) for w in range(4)]
    for p in procs:
        p.start()
    start.set()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert sum(results[:]) == 1
    with SimhashIndex(path) as ix:
        assert len(ix) == 1


def _child_uses_inherited(ix: SimhashIndex, out) -> None:
    ix.insert(77, "from-child")
    out.value = len(ix)
    ix.close()


def test_index_object_survives_fork(tmp_path):
    with SimhashIndex(tmp_path / "ix") as ix:
        ix.insert(1, "parent")
        out = ctx.Value("i", 0)
        proc = ctx.Process(target=_child_uses_inherited, args=(ix, out))
        proc.start()
        proc.join(30)
        assert proc.exitcode == 0
        assert out.value == 2
        assert sorted(ix.keys()) == ["from-child", "parent"]
        assert ix.verify() == []


def _stepped_inserter(path: str, count: int, wrote, read) -> None:
    """Insert ``count`` entries, one commit each, and after each wait until the reader read."""
    with SimhashIndex(path) as ix:
        for i in range(count):
            ix.insert((1 << 60) | (i << 20) | i, f"w1-{i}")
            wrote.release()
            assert read.acquire(timeout=60)


def test_readonly_reader_while_another_process_writes(tmp_path):
    """A reader opened before the writer sees each of its commits, in order, as soon as it
    is made: the two processes take turns, so the reader samples every count from 1 to 100."""
    path = str(tmp_path / "ix")
    SimhashIndex(path).close()
    wrote, read = ctx.Semaphore(0), ctx.Semaphore(0)
    proc = ctx.Process(target=_stepped_inserter, args=(path, 100, wrote, read))
    seen = []
    with SimhashIndex(path, readonly=True) as reader:
        seen.append(len(reader))
        proc.start()
        for _ in range(100):
            assert wrote.acquire(timeout=60)
            seen.append(len(reader))
            read.release()
        proc.join(60)
        assert proc.exitcode == 0
    assert seen == list(range(101))
