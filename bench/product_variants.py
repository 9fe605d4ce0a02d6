"""A product's other configurations in real layouts: are they told apart from it?

A product page (``_variants.numbers_page``: a description, ten specs and a price, about 20
numbers) is put in the article body of every page of the corpus (``../shared/corpus``, or
``$SIMHASH_CORPUS``) as the quality bench puts one there (``bench/quality.py``, the
``numbers`` kind), and beside it the same page with one, two or three of its numbers
changed: its price; its price and screen size; its price, screen size and weight (the
shop's other configurations of one product). Every page goes through the crawl's path
(``extract_text``, ``page_signature``) and each pair is decided as an index holding the
first page decides the second (``PageSignature.is_near_duplicate``, k = 3). The quality
bench's ``numbers`` kind draws every number anew; a shop's configurations share most of
theirs, which is what this measures.

Printed: per group and number of numbers changed, the share of pairs taken for one page by
the default rule, and by the rule without its numbers veto (``numbers_min`` out of reach):
what the veto contributes. Pairs whose product text is not in the extraction (the layout's
chrome read instead, ``bench/short_pages.py``) are counted apart: no rule can tell those.

    .venv/bin/python bench/product_variants.py           # about 2 minutes
    .venv/bin/python bench/product_variants.py --rule '{"numbers_own": 2}'
"""

from __future__ import annotations

import argparse
import dataclasses
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
from short_pages import found, page_words  # noqa: E402

from scrapy_simhash import FINGERPRINT_VERSION, extract_text, page_signature  # noqa: E402

#: The specs changed, in order: the first one, two or three of them.
CHANGED = {
    "en+": (r"\$(\d+)\.(\d\d)", r"(\d+)\.(\d) inches", r"(\d+) g\b"),
    "zh": (r"¥(\d+)", r"(\d+)\.(\d)英寸", r"(\d+)克"),
}


def changed(html: str, group: str, count: int, rng: random.Random) -> str:
    """``html`` with its first ``count`` specs of :data:`CHANGED` given other values (every
    place a value appears: the intro repeats some of the table's)."""
    for pattern in CHANGED[group][:count]:
        match = re.search(pattern, html)
        assert match is not None, pattern
        old = match.group(0)
        whole = int(match.group(1))
        new = old.replace(
            match.group(1), str(whole + rng.randint(1 + whole // 10, 1 + whole // 3)), 1
        )
        html = html.replace(old, new)
    return html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=11, help="draws the numbers")
    parser.add_argument(
        "--rule", default="{}", help="Rule fields as JSON, replacing the default rule's"
    )
    args = parser.parse_args()
    require_corpus()
    from quality import Builder, parse_rule

    rule = parse_rule(args.rule)
    no_veto = dataclasses.replace(rule, numbers_min=10**9)  # the rule without its numbers veto

    pages = load_pages()
    builder = Builder(pages, args.seed, False)
    builder.locate_all()
    counts: Counter[tuple[str, int, str]] = Counter()
    for i, page in enumerate(pages):
        if page.rid not in builder.where:
            continue
        rng = random.Random(args.seed * 100_003 + i)
        names = (rng.randrange(6), rng.randrange(6), rng.randrange(6))
        title, html = V.numbers_page("product", page.group, names, random.Random(rng.random()))
        words = page_words(html, page.group)
        body, url = builder.moved_page(f"product-{i}", page.rid, (title, html))
        text = extract_text(body, url=url)
        first = page_signature(text) if text else None
        if first is None:  # no pair of this layout has two signatures
            for count in (1, 2, 3):
                counts[(page.group, count, "no signature")] += 1
            continue
        first_found = found(text, words, page.group)
        for count in (1, 2, 3):
            other_html = changed(html, page.group, count, rng)
            body, url = builder.moved_page(f"product-{i}-{count}", page.rid, (title, other_html))
            other_text = extract_text(body, url=url)
            other = page_signature(other_text) if other_text else None
            key = (page.group, count)
            if other is None:
                counts[(*key, "no signature")] += 1
                continue
            if not (first_found and found(other_text, words, page.group)):
                counts[(*key, "not extracted")] += 1
                continue
            counts[(*key, "pairs")] += 1
            counts[(*key, "one page")] += rule.decide(other, first, 3) is not None
            counts[(*key, "one page without the veto")] += (
                no_veto.decide(other, first, 3) is not None
            )
    print(
        f"# product configurations, seed {args.seed}, fingerprint version "
        f"{FINGERPRINT_VERSION}, rule {args.rule}"
    )
    print()
    print(
        "| group | numbers changed | pairs | one page | one page without the numbers veto "
        "| product not extracted |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for group in ("en+", "zh"):
        for count in (1, 2, 3):
            n = counts[(group, count, "pairs")]
            if not n:
                continue
            one = counts[(group, count, "one page")] / n
            bare = counts[(group, count, "one page without the veto")] / n
            lost = counts[(group, count, "not extracted")] + counts[(group, count, "no signature")]
            print(f"| {group} | {count} | {n} | {one:.1%} | {bare:.1%} | {lost} |")


if __name__ == "__main__":
    main()
