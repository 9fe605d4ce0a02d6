"""Memory and time of ``verify``'s check of the sentence postings, at doubling sizes.

Builds indexes of N random signed pages (8 sentences each), then checks their postings as
``verify`` does (packed, sorted in place: :class:`~scrapy_simhash.index.sentences.Postings`)
and as it did before (two sets of ``(key, id)`` tuples), printing the Python heap's peak
(tracemalloc) and the seconds of each, and their ratio:

    .venv/bin/python bench/verify_bench.py --sizes 25000 50000 100000
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.sentences import decode_signature, sentence_key
from scrapy_simhash.text.signature import PageSignature


def build(path: Path, size: int) -> SimhashIndex:
    rng = random.Random(size)
    items = (
        (
            PageSignature(rng.getrandbits(64), tuple(rng.getrandbits(64) for _ in range(8)), 300),
            f"https://s{i % 50}.example/{i}",
            {},
        )
        for i in range(size)
    )
    index = SimhashIndex(path, expected_size=size)
    index.insert_many(items)
    return index


def packed(index: SimhashIndex) -> list[str]:
    with index._read() as txn:
        return index._docs.sentences.problems(txn, index._docs.docs)


def as_sets(index: SimhashIndex) -> list[Any]:
    """The check as it was: every posting a tuple of bytes in a set."""
    sentences = index._docs.sentences
    with index._read() as txn:
        wanted: set[tuple[bytes, bytes]] = set()
        for docid, data in txn.scan(sentences.sigs):
            docid = bytes(docid)
            signature = decode_signature(data, docid)
            assert txn.get(docid, db=index._docs.docs) is not None
            wanted.update((sentence_key(s), docid) for s in signature.sentences)
        held = {(bytes(k), bytes(v)) for k, v in txn.scan(sentences.sents)}
        return [*sorted(held - wanted)[:20], *sorted(wanted - held)[:20]]


def measure(check: Callable[[SimhashIndex], list[Any]], index: SimhashIndex) -> tuple[float, int]:
    tracemalloc.start()
    started = time.perf_counter()
    problems = check(index)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert problems == [], problems
    return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[25_000, 50_000, 100_000])
    opts = parser.parse_args()
    print(
        f"{'pages':>8} {'sets MB':>8} {'packed MB':>10} {'ratio':>6} {'sets s':>7} {'packed s':>9}"
    )
    with tempfile.TemporaryDirectory() as root:
        for size in opts.sizes:
            with build(Path(root) / str(size), size) as index:
                old_s, old_peak = measure(as_sets, index)
                new_s, new_peak = measure(packed, index)
            print(
                f"{size:>8} {old_peak / 2**20:>8.1f} {new_peak / 2**20:>10.1f} "
                f"{old_peak / new_peak:>6.1f} {old_s:>7.2f} {new_s:>9.2f}"
            )


if __name__ == "__main__":
    main()
