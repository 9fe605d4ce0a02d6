"""Seeded fuzzing of a damaged index: what ``scrapy-simhash verify`` and a read make of it.

One index is built (bulk-loaded entries with JSON records, single inserts into its recent
tables, and near duplicates recorded as drops); then, for each of ``--copies`` copies, 16
random bytes are written over one random page of its data file (never the two meta pages),
and the copy is checked as a user would:

* ``scrapy-simhash verify COPY``: exit status 0 (ok), 1 (damage found) or a signal;
* where verify says ok, ``scrapy-simhash dump --json COPY`` and ``clusters --json COPY`` (the
  drop records) are compared with the original's: a read that fails, or returns other data,
  is damage that verify missed.

    python bench/fault_fuzz.py                  # 500 copies, seed 1
    python bench/fault_fuzz.py --copies 50 --seed 7

Printed: how many copies verify called ok / damaged / died by a signal, and of the "ok"
ones how many reads failed or differed (with examples).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scrapy_simhash import SimhashIndex

PAGE = 4096


def _cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    command = [sys.executable, "-m", "scrapy_simhash", *args]
    return subprocess.run(command, capture_output=True, timeout=300)


def build(path: Path, entries: int, seed: int) -> None:
    rng = random.Random(seed)
    stories = [rng.getrandbits(64) for _ in range(entries)]
    with SimhashIndex(path, expected_size=10**7, drop_records=entries) as index:
        index.insert_many(
            (fp, f"https://example.com/story/{i}", {"run": "a" * 32, "n": i})
            for i, fp in enumerate(stories)
        )
        for i in range(entries // 20):
            index.insert(rng.getrandbits(64), f"https://example.com/late/{i}", run="b" * 32)
        for i in range(entries // 20):  # copies one or two bits away: recorded as drops
            near = stories[i] ^ (1 << rng.randrange(64)) ^ (1 << rng.randrange(64))
            copy = f"https://copies.example/{i}"
            assert index.check_and_insert(near, copy, run="c" * 32, title=f"Copy {i}")


def _reads(path: Path) -> list[subprocess.CompletedProcess[bytes]]:
    return [_cli("dump", "--json", str(path)), _cli("clusters", "--json", str(path))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=500)
    parser.add_argument("--entries", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="simhash-fuzz-"))
    try:
        original = work / "original"
        build(original, args.entries, args.seed)
        reference = _reads(original)
        assert all(r.returncode == 0 for r in reference), [r.stderr for r in reference]
        raw = (original / "data.mdb").read_bytes()
        pages = len(raw) // PAGE
        rng = random.Random(args.seed)
        verdicts: Counter[str] = Counter()
        missed: list[str] = []
        started = time.perf_counter()
        for copy in range(args.copies):
            damaged = bytearray(raw)
            page = rng.randrange(2, pages)
            at = page * PAGE + rng.randrange(0, PAGE - 16)
            damaged[at : at + 16] = rng.randbytes(16)
            target = work / "copy"
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            (target / "data.mdb").write_bytes(damaged)
            verify = _cli("verify", str(target))
            if verify.returncode < 0:
                verdicts["verify died by a signal"] += 1
                continue
            if verify.returncode != 0:
                verdicts["verify: damaged"] += 1
                continue
            verdicts["verify: ok"] += 1
            reads = _reads(target)
            failed = [r for r in reads if r.returncode != 0]
            if failed:
                verdicts["ok, then a read failed"] += 1
                why = failed[0].stderr.decode().strip()[:120]
                missed.append(f"copy {copy} (page {page}): {why}")
            elif [r.stdout for r in reads] != [r.stdout for r in reference]:
                verdicts["ok, then other data"] += 1
                missed.append(f"copy {copy} (page {page}): other data")
            else:
                verdicts["ok, reads identical"] += 1
        elapsed = time.perf_counter() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    drops = args.entries // 20
    print(
        f"{args.copies} damaged copies of an index of {args.entries:,} entries and {drops:,}"
        f" drop records ({pages} pages)"
    )
    print(f"seed {args.seed}, 16 random bytes over one page each, {elapsed:.0f} s")
    for verdict in (
        "verify died by a signal",
        "verify: damaged",
        "verify: ok",
        "ok, reads identical",
        "ok, then a read failed",
        "ok, then other data",
    ):
        print(f"  {verdict:<26} {verdicts[verdict]:>5}")
    for line in missed[:10]:
        print(f"    {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
