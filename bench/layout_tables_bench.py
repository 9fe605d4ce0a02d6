"""What finding a page's layout tables (and its hidden elements) costs, beside extraction.

On the corpus's real pages (``../shared/corpus``, or ``$SIMHASH_CORPUS``; that part is skipped
where it is absent), each pass times, in CPU time a page, the walk of each parsed tree for
its tables alone, ``layout_tables`` (the walk and the test of each table's cells),
``hidden_elements`` (the other search of the tree before extraction) and the whole
``extract_text`` of the page (which runs both); printed are the medians over passes and
the share of extraction. Then two hostile pages, at sizes doubling: tables nested in one
another's cells (lxml's parser stops nesting at 255 levels) and thousands of layout tables
side by side, each timed for ``layout_tables`` and for ``extract_text`` (about 2 from one
size to the next is linear).

    .venv/bin/python bench/layout_tables_bench.py               # 3 passes, a third of the pages
    .venv/bin/python bench/layout_tables_bench.py --passes 5 --every 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import trafilatura
from _corpus import CORPUS, corpus_available, load_pages

from scrapy_simhash import extract_text
from scrapy_simhash.text.hidden import hidden_elements
from scrapy_simhash.text.layout_tables import layout_tables


def cpu_ms(run: Callable[[], object], count: int) -> float:
    """CPU milliseconds of ``run()`` per item, ``count`` items."""
    start = time.process_time()
    run()
    return 1000 * (time.process_time() - start) / count


def on_the_corpus(passes: int, every: int) -> None:
    pages = load_pages()[::every]
    trees = [
        tree for tree in (trafilatura.load_html(page.html) for page in pages) if tree is not None
    ]
    measured: dict[str, list[float]] = {
        "tables walked": [],
        "layout_tables": [],
        "hidden_elements": [],
        "extract": [],
    }
    for _ in range(passes):
        walk = cpu_ms(lambda: [list(tree.iter("table")) for tree in trees], len(trees))
        find = cpu_ms(lambda: [layout_tables(tree) for tree in trees], len(trees))
        hidden = cpu_ms(lambda: [hidden_elements(tree) for tree in trees], len(trees))
        whole = cpu_ms(
            lambda: [extract_text(p.raw, p.url or None, encoding=p.encoding) for p in pages],
            len(pages),
        )
        for name, value in zip(measured, (walk, find, hidden, whole), strict=True):
            measured[name].append(value)
    extraction = statistics.median(measured["extract"])
    print(f"{len(pages)} pages, {passes} passes, CPU ms a page (median):")
    for name, values in measured.items():
        median = statistics.median(values)
        print(f"  {name:15} {median:7.3f}  ({100 * median / extraction:.1f}% of extraction)")


def hostile(start: int, steps: int) -> None:
    prose = "<p>" + "word " * 60 + "</p>"
    print("hostile pages: layout_tables / extract_text, CPU s")
    for step in range(steps):
        n = start * 2**step
        shapes = {
            "nested": "<table><tr><td>" * n + prose + "</td></tr></table>" * n,
            "side by side": f"<table><tr><td>{prose}</td></tr></table>" * n,
        }
        for shape, body in shapes.items():
            html = f"<html><body>{body}</body></html>"
            tree = trafilatura.load_html(html)
            find = cpu_ms(lambda tree=tree: layout_tables(tree), 1) / 1000
            whole = cpu_ms(lambda html=html: extract_text(html.encode()), 1) / 1000
            print(f"  {shape:12} {n:6} tables, {len(html):9,} bytes: {find:.4f} / {whole:.3f}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--every", type=int, default=3, help="every n-th page of the corpus")
    parser.add_argument("--start", type=int, default=500, help="hostile pages' first size")
    parser.add_argument("--steps", type=int, default=4)
    args = parser.parse_args(argv)
    if corpus_available():
        on_the_corpus(args.passes, args.every)
    else:
        print(f"corpus not found at {CORPUS}: the real pages' row skipped (set SIMHASH_CORPUS)")
    hostile(args.start, args.steps)


if __name__ == "__main__":
    main()
