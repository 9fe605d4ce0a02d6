"""How long ``scrapy-simhash report`` takes, how much memory, and how large its page is, on a
large index: N entries (random fingerprints, bulk-loaded) and D drop records (D/5 kept pages
with five copies each, 1-3 bits away, on 50 sites).

    nice .venv/bin/python bench/report_bench.py                 # 10^6 entries, 10^5 drops
    .venv/bin/python bench/report_bench.py --entries 100000 --drops 10000

Prints the time to build the index (not the subject), then the report's time (gathering,
rendering), the peak memory of this process and the page's size.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

from scrapy_simhash.cli.report import gather, render
from scrapy_simhash.index import SimhashIndex


def build(path: Path, entries: int, drops: int, seed: int) -> None:
    rng = random.Random(seed)
    fingerprints = [rng.getrandbits(64) for _ in range(entries)]
    items = (
        (fp, f"https://site{i % 50}.example/story/{i}", {"title": f"Story {i}", "seen": 1e9 + i})
        for i, fp in enumerate(fingerprints)
    )
    with SimhashIndex(path, expected_size=entries, drop_records=drops, sync=False) as index:
        index.insert_many(items)
        with index.batch(commit_every=10_000):
            for n in range(drops):
                kept = n // 5
                fp = fingerprints[kept]
                for bit in rng.sample(range(64), 1 + n % 3):
                    fp ^= 1 << bit
                index.record_drop(
                    fp,
                    f"https://copies{n % 50}.example/{n}",
                    f"https://site{kept % 50}.example/story/{kept}",
                    1 + n % 3,
                    title=f"Copy {n}",
                )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--drops", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "index"
        started = time.perf_counter()
        build(path, args.entries, args.drops, args.seed)
        print(
            f"index: {args.entries:,} entries, {args.drops:,} drop records, built in "
            f"{time.perf_counter() - started:.1f} s"
        )
        with SimhashIndex(path, readonly=True) as index:
            started = time.perf_counter()
            report = gather(index, index.max_distance, str(path))
            gathered = time.perf_counter() - started
            page = render(report)
            rendered = time.perf_counter() - started - gathered
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"report: gathered in {gathered:.1f} s, rendered in {rendered:.2f} s; "
            f"peak RSS {peak:.0f} MiB; page {len(page.encode()) / 2**20:.1f} MiB; "
            f"{len(report.groups)} groups shown; left out: {'; '.join(report.left_out)}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
