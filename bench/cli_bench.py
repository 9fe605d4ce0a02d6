"""End-to-end timings of the ``scrapy-simhash`` command on a big index.

Builds an index of N random fingerprints (10^6 by default) in which ``--planted`` of them get
one to three near duplicates (1..k bits flipped), bulk-loaded with ``insert_many``, then
times each command as a user runs it, in a fresh process with its output sent to /dev/null,
and checks that ``clusters`` found every planted group:

    .venv/bin/python bench/cli_bench.py --size 1e6
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scrapy_simhash.index import SimhashIndex

K = 3
COMMANDS = [
    ["info"],
    ["clusters", "--jsonl"],
    ["dump", "--jsonl"],
    ["verify"],
    ["lookup", "0123456789abcdef"],
]


def build(path: str, size: int, planted: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    fps = rng.integers(0, 2**64, size=size, dtype=np.uint64)
    copies = rng.integers(1, 4, size=planted)  # near duplicates per planted group
    originals = rng.choice(size - int(copies.sum()), size=planted, replace=False)
    at = size - int(copies.sum())
    for original, count in zip(originals.tolist(), copies.tolist(), strict=True):
        for _ in range(count):
            bits = rng.choice(64, size=int(rng.integers(1, K + 1)), replace=False)
            mask = int(sum(1 << int(b) for b in bits))
            fps[at] = np.uint64(int(fps[original]) ^ mask)
            at += 1
    now = time.time()
    items = (
        (fp, f"https://example.com/page/{i}", {"seen": now - i})
        for i, fp in enumerate(fps.tolist())
    )
    with SimhashIndex(path, max_distance=K, expected_size=size) as index:
        index.insert_many(items)


def timed(argv: list[str], capture: bool = False) -> tuple[float, bytes]:
    """Seconds to run ``argv`` (output to /dev/null unless captured) and its output."""
    started = time.perf_counter()
    stdout = subprocess.PIPE if capture else subprocess.DEVNULL
    done = subprocess.run(argv, stdout=stdout, check=True)
    return time.perf_counter() - started, done.stdout or b""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, default=1e6, help="fingerprints (default 1e6)")
    parser.add_argument("--planted", type=int, default=10_000, help="near-duplicate groups")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--dir", help="where to build the index (default: a temp dir)")
    opts = parser.parse_args()
    size = int(opts.size)
    tool = shutil.which("scrapy-simhash", path=os.path.dirname(sys.executable))
    base = [tool] if tool else [sys.executable, "-m", "scrapy_simhash"]
    root = tempfile.mkdtemp(dir=opts.dir, prefix="cli-bench-")
    try:
        path = os.path.join(root, "index")
        started = time.perf_counter()
        build(path, size, opts.planted, opts.seed)
        print(f"# {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs")
        print(
            f"built {size:,} fingerprints ({opts.planted:,} planted groups) "
            f"in {time.perf_counter() - started:.1f} s"
        )
        print(f"{'command':<53} {'seconds':>8}")
        for command in COMMANDS:
            argv = [*base, command[0], path, *command[1:]]
            seconds, _ = timed(argv)
            print(
                f"scrapy-simhash {' '.join([*command[:1], 'INDEX', *command[1:]]):<38} "
                f"{seconds:>8.2f}"
            )
        _, out = timed([*base, "clusters", path, "--jsonl"], capture=True)
        groups = [json.loads(line) for line in out.splitlines()]
        print(
            f"clusters found: {len(groups):,} (planted {opts.planted:,}), "
            f"entries in them: {sum(g['size'] for g in groups):,}"
        )
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
