"""Benchmark of the LMDB permuted-table index beside numpy brute force and ``simhash``.

For each size N: N random 64-bit fingerprints are bulk-loaded into a fresh index; queries are
half stored fingerprints with 0..k+1 bits flipped (planted neighbours) and half random. Printed
side by side, in one run:

* warm query p50 / p99 of our index (the medians over three timed passes), of numpy brute
  force (XOR + popcount over all N), and of the ``simhash`` package's in-memory
  ``SimhashIndex`` (at --simhash-size, 10^6 by default);
* inserts per second: bulk (``insert_many`` into an empty index, at least --bulk-repeat
  times and 10 s in all, each into a new index: the median and the range) and one by one
  with batched commits (``batch(commit_every=...)``, for each size given) into the full
  index, once every page of it was read (as a long-running writer has; a fresh process on a
  machine that paged out the cold parts of the file reads them from disk at first), and
  after --settle inserts when given; with recent tables (10^7), each timed run is a whole
  cycle of them, from full to full again, so it pays for one merge into the main tables;
  with the KiB handed to write calls per insert, and what this disk takes to fdatasync
  scattered pages;
* warm queries again with the recent tables full, when the index has them;
* bytes on disk per fingerprint, and per fingerprint per table;
* batch mode: all near-duplicate pairs among the stored fingerprints (``pairs()``).

The answers of the queries timed by brute force too (--brute-queries) are checked against it.

    .venv/bin/python bench/index_bench.py --sizes 1e6,1e7
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import lmdb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scrapy_simhash.index import SimhashIndex

K = 3


#: Timed passes over the queries.
QUERY_PASSES = 3
#: Least time spent on bulk loads per size (more loads at small N).
BULK_SECONDS = 10.0


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values), q))


def make_queries(stored: np.ndarray, count: int, rng: np.random.Generator) -> list[int]:
    """Half near stored fingerprints (0..K+1 bits flipped), half random."""
    queries = []
    for i in range(count):
        if i % 2:
            queries.append(int(rng.integers(0, 2**64, dtype=np.uint64)))
            continue
        fp = int(stored[rng.integers(0, stored.size)])
        for bit in rng.choice(64, size=i // 2 % (K + 2), replace=False):
            fp ^= 1 << int(bit)
        queries.append(fp)
    return queries


def brute(stored: np.ndarray, query: int) -> np.ndarray:
    return np.flatnonzero(np.bitwise_count(stored ^ np.uint64(query)) <= K)


def timed(fn, *args) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - start, out


def bench_size(n: int, args: argparse.Namespace, rng: np.random.Generator) -> dict[str, object]:
    row: dict[str, object] = {"N": n}
    stored = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    # Planted neighbours among the stored fingerprints: 1% are copies of others, 1..K bits off.
    planted = n // 100
    src = rng.integers(0, n, size=planted)
    dst = rng.integers(0, n, size=planted)
    flips = np.zeros(planted, dtype=np.uint64)
    for _ in range(K):
        flips |= np.uint64(1) << rng.integers(0, 64, size=planted).astype(np.uint64)
    stored[dst] = stored[src] ^ flips
    path = Path(args.data_dir) / f"index-{n}"
    items = [(fp, f"https://example.com/page/{i}", {}) for i, fp in enumerate(stored.tolist())]
    # Each bulk load into a new index (a file of its own, as the first load has), the last one
    # kept for the rest; at least --bulk-repeat loads and BULK_SECONDS of them (a load at 10^6
    # takes about 1.5 s, well within this machine's swings); the median and range reported.
    rates: list[float] = []
    spent = 0.0
    while len(rates) < args.bulk_repeat or spent < BULK_SECONDS:
        shutil.rmtree(path, ignore_errors=True)
        with SimhashIndex(path, max_distance=K, expected_size=n) as ix:
            seconds, _ = timed(ix.insert_many, items)
        rates.append(n / seconds)
        spent += seconds
        print(f"  N={n:.0e}: bulk load {seconds:.1f} s", flush=True)
    del items
    row["bulk_per_s"] = statistics.median(rates)
    row["bulk_range"] = f"{min(rates) / 1000:,.0f}k-{max(rates) / 1000:,.0f}k"
    row["bulk_loads"] = len(rates)

    with SimhashIndex(path, max_distance=K, expected_size=n) as ix:
        row["layout"] = ix.layout.name
        row["tables"] = ix.layout.tables

        queries = make_queries(stored, args.queries, rng)
        row.update(time_queries(ix, queries))
        row["candidates_per_probe"] = ix.stats()["candidates_per_probe"]

        # Brute force over all N, and a check of every answer.
        bf = []
        for q in queries[: args.brute_queries]:
            start = time.perf_counter_ns()
            hits = brute(stored, q)
            bf.append((time.perf_counter_ns() - start) / 1000)
            ours = sorted(m.fingerprint for m in ix.query(q))
            assert ours == sorted(set(stored[hits].tolist())), f"wrong answer for {q:#x}"
        row["brute_p50_us"] = percentile(bf, 50)
        row["brute_p99_us"] = percentile(bf, 99)

        # A long-running writer has touched the index's pages; a fresh process has not, and
        # on a machine that pages out cold file pages the first touches read from disk.
        seconds, _ = timed(warm_up, ix)
        row["warm_up_s"] = seconds
        print(f"  N={n:.0e}: read every page in {seconds:.1f} s", flush=True)
        if args.settle:
            # Right after a bulk load the document and link pages are full (the first insert
            # into each splits it) and LMDB's free list is empty (commits grow the file): a
            # state an index at 10^7 leaves within 100,000-200,000 single inserts.
            row["settle_per_s"] = single_inserts(ix, 10_000, args.settle, rng, "settle")[0]
            print(f"  N={n:.0e}: {args.settle:,} settling inserts", flush=True)
        # With recent tables, each timed run is one whole cycle of them: from full (a merge
        # into the main tables about to begin) to full again, the inserts then paying for
        # one merge as in a long run (a little more: the next merge's first step is in it).
        added: list[int] = []
        cycle = ix.stats()["recent_limit"]
        for commit_every in args.commit_every:
            count = args.inserts or (fill_recent(ix, rng, added) if cycle else 50_000)
            rate, fps, merges, kib = single_inserts(ix, commit_every, count, rng)
            row[f"insert_per_s_{commit_every}"] = rate
            row[f"insert_kib_{commit_every}"] = kib
            row[f"inserts_{commit_every}"] = f"{count:,}" + (f" ({merges} merged)" if cycle else "")
            added += fps
            print(f"  N={n:.0e}: {count:,} single inserts, commits of {commit_every}", flush=True)
        if cycle:  # queries again, with the recent tables full (what a query probes most)
            fill_recent(ix, rng, added)
            row["recent_held"] = ix.stats()["recent_fingerprints"]
            now = np.concatenate([stored, np.array(added, dtype=np.uint64)])
            full = time_queries(ix, make_queries(now, args.queries, rng), now, args)
            row.update({f"{key}_recent": value for key, value in full.items()})
            print(f"  N={n:.0e}: queries, recent tables holding {row['recent_held']:,}")
        if args.no_sync:  # the same without waiting for the disk at each commit
            ix.close()
            ix = SimhashIndex(path, sync=False)
            for commit_every in args.commit_every:
                count = args.inserts or (fill_recent(ix, rng, added) if cycle else 50_000)
                rate, _, _, _ = single_inserts(ix, commit_every, count, rng, "nosync")
                row[f"insert_per_s_{commit_every}_nosync"] = rate
                print(f"  N={n:.0e}: single inserts, commits of {commit_every}, sync=False")

        stats = ix.stats()
        row["bytes_per_fp"] = stats["bytes_on_disk"] / stats["entries"]
        row["bytes_per_fp_table"] = row["bytes_per_fp"] / ix.layout.tables
        row["table_bytes_per_fp_table"] = (
            _table_bytes(ix) / stats["fingerprints"] / (ix.layout.tables)
        )

        if n <= args.pairs_max:
            seconds, pairs = timed(lambda: list(ix.pairs()))
            row["pairs_s"] = seconds
            row["pairs"] = len(pairs)
        ix.close()
    if not args.keep:
        shutil.rmtree(path, ignore_errors=True)
    if n == args.simhash_size:
        row.update(bench_simhash(stored, queries, args))
    return row


def time_queries(
    ix: SimhashIndex,
    queries: list[int],
    stored: np.ndarray | None = None,
    args: argparse.Namespace | None = None,
) -> dict[str, object]:
    """Warm query latencies: QUERY_PASSES timed passes over ``queries`` after two untimed
    ones, the medians of their p50s and p99s (this machine has slow spells lasting seconds)
    and the p99s' range; with ``stored``, --brute-queries answers checked by brute force."""
    ix.query_many(queries)  # warm the page cache
    ix.query_many(queries)
    p50s, p99s = [], []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_majflt
    for _ in range(QUERY_PASSES):
        lat = []
        for q in queries:
            start = time.perf_counter_ns()
            ix.query(q)
            lat.append((time.perf_counter_ns() - start) / 1000)
        p50s.append(percentile(lat, 50))
        p99s.append(percentile(lat, 99))
    if stored is not None and args is not None:
        for q in queries[: args.brute_queries]:
            ours = sorted(m.fingerprint for m in ix.query(q))
            assert ours == sorted(set(stored[brute(stored, q)].tolist())), f"wrong for {q:#x}"
    return {
        "query_majflt": resource.getrusage(resource.RUSAGE_SELF).ru_majflt - faults,
        "query_p50_us": statistics.median(p50s),
        "query_p99_us": statistics.median(p99s),
        "query_p99_range": f"{min(p99s):,.0f}-{max(p99s):,.0f}",
    }


def fill_recent(ix: SimhashIndex, rng: np.random.Generator, added: list[int]) -> int:
    """Untimed: finish a merge in progress (a step per insert), then fill the recent tables
    to one short of a merge; their limit (a cycle of them, in inserts)."""
    while ix.stats()["merging"]:
        added.append(int(rng.integers(0, 2**64, dtype=np.uint64)))
        ix.insert(added[-1], f"https://example.com/finish/{len(added)}")
    stats = ix.stats()
    size = max(0, stats["recent_limit"] - stats["recent_fingerprints"] - 1)
    more = rng.integers(0, 2**64, size=size, dtype=np.uint64)
    ix.insert_many(
        (int(fp), f"https://example.com/fill/{len(added)}/{i}", {})
        for i, fp in enumerate(more.tolist())
    )
    added += more.tolist()
    return ix.stats()["recent_limit"]


class _Merges(logging.Handler):
    """Counts the index's log lines of finished merges of its recent tables."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += "merged %d recent" in str(record.msg)


def single_inserts(
    ix: SimhashIndex,
    commit_every: int,
    count: int,
    rng: np.random.Generator,
    tag: str = "",
) -> tuple[float, list[int], int, float]:
    """Inserts per second of ``count`` new fingerprints, one by one in a batch; the
    fingerprints, how many merges of the recent tables finished meanwhile, and the KiB
    written per insert."""
    extra = rng.integers(0, 2**64, size=count, dtype=np.uint64).tolist()
    merges = _Merges()
    logger = logging.getLogger("scrapy_simhash.index")
    logger.addHandler(merges)
    logger.setLevel(logging.INFO)
    try:
        written = bytes_written()
        start = time.perf_counter()
        with ix.batch(commit_every=commit_every):
            for i, fp in enumerate(extra):
                ix.insert(fp, f"https://example.com/new/{tag}{commit_every}/{i}")
        rate = count / (time.perf_counter() - start)
        written = bytes_written() - written
    finally:
        logger.removeHandler(merges)
    return rate, extra, merges.count, written / count / 1024


def bytes_written() -> float:
    """Bytes this process has handed to write calls so far (Linux; NaN elsewhere)."""
    try:
        with open("/proc/self/io") as f:
            return float(next(line for line in f if line.startswith("wchar:")).split()[1])
    except (OSError, StopIteration):
        return float("nan")


def disk_baseline(directory: str) -> str:
    """What a commit costs this disk: fdatasync of 4 KiB pages scattered over a 256 MiB file
    (as an LMDB commit writes them), per page, and of the same bytes in one run."""
    path = os.path.join(directory, "disk-baseline")
    pages = 1 << 16
    rng = np.random.default_rng(0)
    page = rng.integers(0, 256, size=4096, dtype=np.uint8).tobytes()
    block = page * 2000
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        for i in range(pages):  # the file written once, so no write below allocates
            os.pwrite(fd, page, i * 4096)
        os.fsync(fd)
        scattered, run = [], []
        for _ in range(3):
            picked = np.sort(rng.choice(pages, size=2000, replace=False)).tolist()
            start = time.perf_counter()
            for i in picked:
                os.pwrite(fd, page, i * 4096)
            os.fdatasync(fd)
            scattered.append((time.perf_counter() - start) / len(picked) * 1e6)
            first = int(rng.integers(0, pages - 2000))
            start = time.perf_counter()
            os.pwrite(fd, block, first * 4096)
            os.fdatasync(fd)
            run.append((time.perf_counter() - start) / 2000 * 1e6)
    finally:
        os.close(fd)
        os.unlink(path)
    return (
        f"disk: 2000 scattered 4 KiB pages written and fdatasync'ed at"
        f" {statistics.median(scattered):.1f} us a page, the same bytes in one run at"
        f" {statistics.median(run):.2f} us a page (medians of 3)"
    )


def table_dbs(ix: SimhashIndex) -> list:
    """The LMDB databases of the index's main and recent tables."""
    return [*ix._levels.main.spaces, *(ix._levels.recent.spaces if ix._levels.recent else ())]


def warm_up(ix: SimhashIndex) -> None:
    """Read every entry of every database of the index once, through its memory map."""
    with ix._tx.storage.env.begin(buffers=True) as txn:
        for db in [ix._docs.docs, ix._docs.links, *table_dbs(ix)]:
            for _ in txn.cursor(db).iternext(keys=True, values=True):
                pass


def _table_bytes(ix: SimhashIndex) -> int:
    """Pages of the table databases (their own pages; DUPSORT sub-pages live inside)."""
    total = 0
    with ix._tx.storage.env.begin() as txn:
        psize = ix._tx.storage.env.stat()["psize"]
        for db in table_dbs(ix):
            st = txn.stat(db)
            total += (st["branch_pages"] + st["leaf_pages"] + st["overflow_pages"]) * psize
    return total


def bench_simhash(stored: np.ndarray, queries: list[int], args: argparse.Namespace) -> dict:
    """The ``simhash`` package's in-memory SimhashIndex over the same fingerprints."""
    import logging

    from simhash import Simhash
    from simhash import SimhashIndex as PeerIndex

    logging.getLogger("simhash").setLevel(logging.WARNING)
    objs = [(str(i), Simhash(int(fp))) for i, fp in enumerate(stored.tolist())]
    start = time.perf_counter()
    peer = PeerIndex(objs, k=K)
    build = time.perf_counter() - start
    print(f"  simhash.SimhashIndex build {build:.1f} s", flush=True)
    sims = [Simhash(q) for q in queries]
    for s in sims[:100]:
        peer.get_near_dups(s)
    lat = []
    for s in sims:
        start = time.perf_counter_ns()
        peer.get_near_dups(s)
        lat.append((time.perf_counter_ns() - start) / 1000)
    return {
        "peer_build_per_s": stored.size / build,
        "peer_p50_us": percentile(lat, 50),
        "peer_p99_us": percentile(lat, 99),
    }


def fmt(value: object, digits: int = 0) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def report(rows: list[dict], args: argparse.Namespace) -> None:
    lines = [
        ("N", "N", 0),
        ("layout", "layout", 0),
        ("query p50 (us), ours on disk", "query_p50_us", 1),
        ("query p99 (us), ours on disk", "query_p99_us", 1),
        ("  ... lowest-highest p99 of the passes", "query_p99_range", 0),
        ("candidates scanned per query", "candidates_per_probe", 1),
        ("recent tables: fingerprints held for the queries below", "recent_held", 0),
        ("query p50 (us), ours, recent tables that full", "query_p50_us_recent", 1),
        ("query p99 (us), ours, recent tables that full", "query_p99_us_recent", 1),
        ("  ... lowest-highest p99 of the passes", "query_p99_range_recent", 0),
        ("major page faults in the timed queries", "query_majflt", 0),
        ("query p50 (us), numpy brute force", "brute_p50_us", 0),
        ("query p99 (us), numpy brute force", "brute_p99_us", 0),
        ("speed-up over brute force (p50)", "speedup", 0),
        ("query p50 (us), simhash.SimhashIndex in memory", "peer_p50_us", 1),
        ("query p99 (us), simhash.SimhashIndex in memory", "peer_p99_us", 1),
        ("build/s, simhash.SimhashIndex", "peer_build_per_s", 0),
        ("bulk insert_many /s (empty index), median", "bulk_per_s", 0),
        ("  ... lowest-highest of the bulk loads", "bulk_range", 0),
        ("warm-up before single inserts: read every page (s)", "warm_up_s", 1),
        *(
            (f"settling: {args.settle:,} single inserts first (/s)", "settle_per_s", 0)
            for _ in range(1 if args.settle else 0)
        ),
        *(
            (f"single inserts /s (commit every {c})", f"insert_per_s_{c}", 0)
            for c in args.commit_every
        ),
        *(
            row
            for c in args.commit_every
            for row in (
                (f"  ... inserts timed (merges), commit every {c}", f"inserts_{c}", 0),
                (f"  ... KiB written per insert, commit every {c}", f"insert_kib_{c}", 1),
            )
        ),
        *(
            (f"single inserts /s (commit every {c}, sync=False)", f"insert_per_s_{c}_nosync", 0)
            for c in (args.commit_every if args.no_sync else ())
        ),
        ("bytes on disk per fingerprint (all dbs)", "bytes_per_fp", 1),
        ("  ... per fingerprint per table", "bytes_per_fp_table", 1),
        ("table pages per fingerprint per table", "table_bytes_per_fp_table", 1),
        ("batch mode: all pairs (s)", "pairs_s", 2),
        ("batch mode: pairs found", "pairs", 0),
    ]
    for row in rows:
        row["speedup"] = row["brute_p50_us"] / row["query_p50_us"]
    width = max(len(label) for label, _, _ in lines)
    print()
    print(f"| {'measure'.ljust(width)} | " + " | ".join(f"{'':>12}" for _ in rows) + " |")
    print(f"|{'-' * (width + 2)}|" + "|".join("-" * 14 for _ in rows) + "|")
    for label, key, digits in lines:
        cells = " | ".join(f"{fmt(r.get(key), digits):>12}" for r in rows)
        print(f"| {label.ljust(width)} | {cells} |")
    loads = ", ".join(str(r["bulk_loads"]) for r in rows)
    print()
    print(
        f"{platform.python_implementation()} {platform.python_version()}, lmdb "
        f"{lmdb.__version__}, numpy {np.__version__}, {os.cpu_count()} cores, k={K}, "
        f"{args.queries} queries ({args.brute_queries} for brute force), "
        f"bulk loads per size: {loads}"
    )


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if "--storage" in argv and argv[argv.index("--storage") + 1 :][:1] == ["redis"]:
        import redis_bench  # the index on a Redis server, beside LMDB and datasketch

        at = argv.index("--storage")
        redis_bench.main(argv[:at] + argv[at + 2 :])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--storage", choices=["lmdb", "redis"], default="lmdb", help="redis: bench/redis_bench.py"
    )
    parser.add_argument("--sizes", default="1e6,1e7", help="comma-separated N (e.g. 1e6,1e7)")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--brute-queries", type=int, default=100)
    parser.add_argument(
        "--inserts",
        type=int,
        default=0,
        help="single inserts timed per commit size (default 50,000, or with recent tables"
        " enough for a whole merge of them)",
    )
    parser.add_argument(
        "--settle",
        type=int,
        default=0,
        help="single inserts (commits of 10000) made before the timed ones: the state of an"
        " index that has taken inserts since its bulk load",
    )
    parser.add_argument(
        "--bulk-repeat",
        type=int,
        default=3,
        help=f"least bulk loads timed per size, each into a new index (and {BULK_SECONDS:.0f} s"
        " of them at least)",
    )
    parser.add_argument(
        "--commit-every",
        default="1000",
        help="comma-separated batch(commit_every=...) sizes, each timed on --inserts new inserts",
    )
    parser.add_argument(
        "--simhash-size",
        type=float,
        default=1e6,
        help="N at which simhash.SimhashIndex runs (0: never)",
    )
    parser.add_argument(
        "--pairs-max",
        type=float,
        default=1e6,
        help="largest N for the batch-mode pairs measurement",
    )
    parser.add_argument(
        "--no-sync",
        action="store_true",
        help="also time the single inserts with SimhashIndex(sync=False)",
    )
    parser.add_argument("--data-dir", default=None, help="where indexes are built")
    parser.add_argument("--keep", action="store_true", help="keep the built indexes")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    sizes = [int(float(s)) for s in args.sizes.split(",")]
    args.simhash_size = int(args.simhash_size)
    args.commit_every = [int(c) for c in args.commit_every.split(",")]
    args.pairs_max = int(args.pairs_max)
    own_dir = args.data_dir is None
    if own_dir:
        base = Path(__file__).resolve().parent / ".data"
        base.mkdir(exist_ok=True)
        args.data_dir = tempfile.mkdtemp(dir=base)
    rng = np.random.default_rng(args.seed)
    rows = []
    try:
        disk = disk_baseline(args.data_dir)
        for n in sizes:
            rows.append(bench_size(n, args, rng))
    finally:
        if own_dir and not args.keep:
            shutil.rmtree(args.data_dir, ignore_errors=True)
    report(rows, args)
    print(disk)
    print(f"run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")


if __name__ == "__main__":
    main()
