"""Query latency of one checkout, for side-by-side comparisons of two commits.

200,000 random fingerprints are bulk-loaded into a new index in the 4 x 16 layout (expected
size 10^6) and in the layout of 10 tables and 4 recent ones (expected size 10^7); 5,000
queries (half stored fingerprints with one bit flipped, half random) are warmed up once, then
timed one by one in 7 passes. Printed per layout: the lowest and the median of the passes'
p50s (us). Run it from two checkouts in turn, under the benchmark lock, each with its own
virtualenv, and repeat (the machine is shared: compare runs made side by side):

    flock -x /tmp/simhash-cpu.lock .venv/bin/python bench/query_bench.py LABEL
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

from scrapy_simhash import SimhashIndex


def main() -> int:
    label = sys.argv[1] if len(sys.argv) > 1 else "this checkout"
    results = []
    for name, expected in (("4x16", 10**6), ("10+4", 10**7)):
        rng = np.random.default_rng(7)
        stored = rng.integers(0, 2**64, size=200_000, dtype=np.uint64)
        work = tempfile.mkdtemp(prefix="simhash-query-")
        path = f"{work}/ix"
        items = [(fp, f"https://example.com/page/{i}", {}) for i, fp in enumerate(stored.tolist())]
        with SimhashIndex(path, expected_size=expected, sync=False) as index:
            index.insert_many(items)
        queries = []
        for i in range(5000):
            if i % 2:
                fingerprint = int(stored[rng.integers(0, stored.size)])
            else:
                fingerprint = int(rng.integers(0, 2**64, dtype=np.uint64))
            queries.append(fingerprint ^ (1 << (i % 64)))
        with SimhashIndex(path, expected_size=expected, sync=False) as index:
            index.query_many(queries)
            p50s = []
            for _ in range(7):
                latencies = []
                for query in queries:
                    start = time.perf_counter_ns()
                    index.query(query)
                    latencies.append((time.perf_counter_ns() - start) / 1000)
                p50s.append(statistics.median(latencies))
        shutil.rmtree(work, ignore_errors=True)
        results.append(f"{name}: p50 lowest {min(p50s):.1f} median {statistics.median(p50s):.1f}")
    print(label, " | ".join(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
