"""What running each ``scrapy-simhash`` command in a forked child costs (``cli/guard.py``).

Times ``info`` on a small index, the command in a forked child (``in_child(main)``, as
``scrapy-simhash`` runs it) beside the same command run in place (``main``, no fork), both
started the same way, each in a fresh process with its output sent to /dev/null, the two
interleaved run by run; prints the medians and their ratio:

    .venv/bin/python bench/guard_bench.py          # about 40 s
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scrapy_simhash.index import SimhashIndex

IN_PLACE = "import sys; from scrapy_simhash.cli import main; sys.exit(main(sys.argv[1:]))"
GUARDED = (
    "import sys; from scrapy_simhash.cli import main; from scrapy_simhash.cli.guard import"
    " in_child; sys.exit(in_child(lambda: main(sys.argv[1:]), 'scrapy-simhash'))"
)


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=41)
    ap.add_argument("--size", type=int, default=10_000, help="entries in the index")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "index")
        with SimhashIndex(path) as index:
            index.insert_many(
                (i * 0x9E3779B97F4A7C15 % (1 << 64), f"u{i}", {}) for i in range(args.size)
            )
        guarded = [sys.executable, "-c", GUARDED, "info", path]
        in_place = [sys.executable, "-c", IN_PLACE, "info", path]
        times: dict[str, list[float]] = {"guarded": [], "in place": []}
        _time(guarded)  # warm the file cache
        for _ in range(args.runs):
            times["guarded"].append(_time(guarded))
            times["in place"].append(_time(in_place))
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"info on an index of {args.size} entries, {args.runs} runs each, interleaved")
    for name, value in medians.items():
        print(f"  {name:9} median {value * 1000:7.1f} ms")
    print(f"  guarded / in place: {medians['guarded'] / medians['in place']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
