"""Short pages in real layouts: is what the page says in its extracted text?

A product page or a match report (``_variants.numbers_page``: ten specs and a price, or a
score and its statistics, 100-200 words) is put in the article body of every page of the
corpus (``../shared/corpus``, or ``$SIMHASH_CORPUS``) as the quality bench puts one there
(``bench/quality.py``, the ``numbers`` kind), and the page goes through the crawl's
extraction (``extract_text``). Such a page is found when its text holds at least 80% of the
short page's words; one not found is fingerprinted from the layout's menus and footers, so
that every short page of that layout looks alike. Beside it, trafilatura alone on the same
HTML with the same options (no hidden elements left out, no layout tables read as blocks).
Printed: per group, the share found by each, and the layouts where the two differ.

    .venv/bin/python bench/short_pages.py           # about 2 minutes
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import _variants as V  # noqa: E402
from _corpus import load_pages, require_corpus  # noqa: E402

from scrapy_simhash import extract_text  # noqa: E402
from scrapy_simhash.text.extract import TRAFILATURA_OPTIONS  # noqa: E402

#: The share of the short page's words that its extracted text must hold.
FOUND = 0.8


def page_words(html: str, group: str) -> list[str]:
    """The words of a short page's HTML (its tags left out), as :func:`found` looks for them."""
    return [w for w in V.split_words(re.sub("<[^>]+>", " ", html), group) if V.is_word(w)]


def found(text: str | None, words: list[str], group: str) -> bool:
    have = set(V.split_words(text or "", group))
    return sum(w in have for w in words) >= FOUND * len(words)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=11, help="draws the numbers")
    args = parser.parse_args()
    require_corpus()
    import trafilatura
    from quality import Builder

    pages = load_pages()
    builder = Builder(pages, args.seed, False)
    builder.locate_all()
    counts: Counter[tuple[str, str, bool]] = Counter()
    differ = []
    for i, page in enumerate(pages):
        if page.rid not in builder.where:
            continue
        for kind in ("product", "match"):
            content = V.numbers_page(kind, page.group, (1, 2, 3), random.Random(args.seed + i))
            words = page_words(content[1], page.group)
            body, url = builder.moved_page(f"{kind}-{i}", page.rid, content)
            ours = found(extract_text(body, url=url), words, page.group)
            alone = found(
                trafilatura.extract(body.decode(), url=url, **TRAFILATURA_OPTIONS),
                words,
                page.group,
            )
            counts[(page.group, "extract_text", ours)] += 1
            counts[(page.group, "trafilatura alone", alone)] += 1
            if ours != alone:
                differ.append((page.rid, kind, ours))
    print("| group | pages | found by extract_text | found by trafilatura alone |")
    print("|---|---|---|---|")
    for group in ("en+", "zh"):
        n = counts[(group, "extract_text", True)] + counts[(group, "extract_text", False)]
        if not n:
            continue
        ours = counts[(group, "extract_text", True)] / n
        alone = counts[(group, "trafilatura alone", True)] / n
        print(f"| {group} | {n} | {ours:.1%} | {alone:.1%} |")
    for rid, kind, ours in differ:
        print(f"  {rid} {kind}: {'only extract_text' if ours else 'only trafilatura alone'}")


if __name__ == "__main__":
    main()
