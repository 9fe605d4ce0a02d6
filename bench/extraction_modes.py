"""trafilatura with and without ``favor_recall`` on the corpus's real pages, side by side.

The plugin extracts with ``favor_recall=True`` (since 2026-11-26). For each page of
``../shared/corpus`` (skipped cleanly where it is absent) this times, in CPU time, the same
``trafilatura.extract`` call (the plugin's other options) with and without it, back to back,
the order alternating from page to page and pass to pass, and reports per group the
median over passes of the time summed over the pages, and their ratio. It also tells how
many pages extract to another text, and of those, how many are no longer near duplicates
of their former text by the index's rule at k=3 (what an index built before the change
would miss of a copy of such a page).

    .venv/bin/python bench/extraction_modes.py              # 3 passes
    .venv/bin/python bench/extraction_modes.py --passes 5
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import load_pages, require_corpus

from scrapy_simhash import Fingerprinter
from scrapy_simhash.text.decode import decode_html
from scrapy_simhash.text.extract import TRAFILATURA_OPTIONS
from scrapy_simhash.text.headings import drop_title_line
from scrapy_simhash.text.rule import DEFAULT_RULE
from scrapy_simhash.text.signature import page_signature


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    if args.passes < 1:
        parser.error("--passes must be at least 1")
    require_corpus()
    import trafilatura

    pages = [(p, decode_html(p.raw, p.encoding)) for p in load_pages()]
    groups = sorted({p.group for p, _ in pages})
    seconds = {(g, recall): [] for g in groups for recall in (False, True)}
    texts: dict[tuple[int, bool], str | None] = {}  # each page's text in each mode
    options = {recall: {**TRAFILATURA_OPTIONS, "favor_recall": recall} for recall in (False, True)}
    for n in range(args.passes):
        spent = {key: 0.0 for key in seconds}
        for i, (page, html) in enumerate(pages):
            order = (False, True) if (i + n) % 2 == 0 else (True, False)
            for recall in order:
                start = time.process_time()
                text = trafilatura.extract(html, url=page.url, **options[recall])
                spent[page.group, recall] += time.process_time() - start
                texts[i, recall] = text
        for key, value in spent.items():
            seconds[key].append(value)

    fingerprinter = Fingerprinter(min_words=20)
    changed = {g: [0, 0, 0] for g in groups}  # same text, another but near, another and not
    for i, (page, html) in enumerate(pages):
        extracted = (texts[i, False], texts[i, True])
        before, after = (drop_title_line(t, html) if t else None for t in extracted)
        if before == after:
            changed[page.group][0] += 1
            continue
        signatures = [page_signature(t, fingerprinter) if t else None for t in (before, after)]
        near = None not in signatures and DEFAULT_RULE.decide(signatures[1], signatures[0], 3)
        changed[page.group][1 if near else 2] += 1

    print(f"# trafilatura {trafilatura.__version__}, {len(pages)} pages, {args.passes} passes")
    print()
    print("| group | pages | default, s | favor_recall, s | ratio | same text | "
          "another text, still a near duplicate | another text, not |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for g in groups:
        default = statistics.median(seconds[g, False])
        recall = statistics.median(seconds[g, True])
        count = sum(changed[g])
        same, near, far = changed[g]
        print(f"| {g} | {count} | {default:.2f} | {recall:.2f} | {recall / default:.2f}x | "
              f"{same} | {near} | {far} |")  # fmt: skip


if __name__ == "__main__":
    main()
