"""trafilatura's own extractor against the fallback that replaced it, on the corpus's pages.

Without ``fast``, trafilatura compares its own extraction of a short text (2,500 characters
or less, in its recall mode) with readability's and justext's, and takes theirs when it is
longer. A short article in a layout that has a longer block of text (a list of sources, a
province menu) then gives that block: two product pages of the layout differing in their
prices extract to the same text. Taking trafilatura's own text instead, when the text
trafilatura chose holds under half of it, would tell them apart; this measures what that
would do to real pages. For each page of ``../shared/corpus`` (or ``$SIMHASH_CORPUS``;
skipped cleanly where it is absent), with the plugin's options and its hidden elements
left out: the text the plugin extracts, and trafilatura's own (``fast=True``); the CPU time
of extracting both where the own text is short, against the plugin's call alone (the
median of ``--passes``); and, for each page where the rule would take the own text, the
token F1 of either text against the page's reference text.

    .venv/bin/python bench/fallback_choice.py
    SIMHASH_CORPUS=DIR .venv/bin/python bench/fallback_choice.py --passes 1
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _corpus import load_pages, require_corpus, token_f1
from _variants import tokens

from scrapy_simhash.text.decode import decode_html
from scrapy_simhash.text.extract import TRAFILATURA_OPTIONS
from scrapy_simhash.text.headings import drop_title_line
from scrapy_simhash.text.hidden import drop_hidden

#: trafilatura's recall mode keeps its own text of more characters than this unchecked.
SHORT = 2500
#: The own text is taken when under this share of its 5-character runs is in the other.
INSIDE = 0.5
#: ... and it has at least this many tokens.
MIN_TOKENS = 20


def runs(text: str) -> set[str]:
    flat = " ".join(text.split())
    return {flat[i : i + 5] for i in range(max(0, len(flat) - 4))}


def share_inside(part: str, whole: str) -> float:
    mine = runs(part)
    return len(mine & runs(whole)) / len(mine) if mine else 1.0


def extract(trafilatura, html: str, url: str | None, fast: bool) -> tuple[str | None, float]:
    tree = trafilatura.load_html(html)
    drop_hidden(tree)
    start = time.process_time()
    text = trafilatura.extract(tree, url=url, fast=fast, **TRAFILATURA_OPTIONS)
    spent = time.process_time() - start
    return (drop_title_line(text, html) if text else None), spent


def passes(value: str) -> int:
    count = int(value)
    if count < 1:
        raise argparse.ArgumentTypeError("at least 1")
    return count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--passes", type=passes, default=3, help="timed passes (default 3)")
    args = parser.parse_args(argv)
    require_corpus()
    import trafilatura

    pages = [(p, decode_html(p.raw, p.encoding)) for p in load_pages()]
    plugin_s, both_s = [], []
    texts: dict[int, tuple[str | None, str | None]] = {}
    for n in range(args.passes):
        plugin_total = both_total = 0.0
        for i, (page, html) in enumerate(pages):
            url = page.url or None
            order = (False, True) if (i + n) % 2 == 0 else (True, False)
            got = {fast: extract(trafilatura, html, url, fast) for fast in order}
            (text, spent), (own, own_spent) = got[False], got[True]
            plugin_total += spent
            # the own text first; the plugin's call too only where it is short
            both_total += own_spent + (spent if len(own or "") <= SHORT else 0.0)
            texts[i] = (text, own)
        plugin_s.append(plugin_total)
        both_s.append(both_total)

    taken = []
    for i, (page, _) in enumerate(pages):
        text, own = texts[i]
        if not own or len(own) > SHORT or own == text or len(tokens(own)) < MIN_TOKENS:
            continue
        if share_inside(own, text or "") < INSIDE:
            reference = tokens(page.gt)
            taken.append(
                (
                    page.rid,
                    token_f1(tokens(text or ""), reference),
                    token_f1(tokens(own), reference),
                )
            )

    plugin, both = statistics.median(plugin_s), statistics.median(both_s)
    print(f"# trafilatura {trafilatura.__version__}, {len(pages)} pages, {args.passes} passes")
    print()
    print(f"extraction CPU: the plugin's call {plugin:.2f} s, own text first and the plugin's "
          f"call where it is short {both:.2f} s ({both / plugin:.2f}x)")  # fmt: skip
    better = sum(own > chosen + 0.02 for _, chosen, own in taken)
    worse = sum(own < chosen - 0.02 for _, chosen, own in taken)
    print(f"own text taken on {len(taken)} pages: closer to the reference on {better}, "
          f"further on {worse}")  # fmt: skip
    print()
    print("| page | F1, text extracted | F1, own text |")
    print("|---|---:|---:|")
    for rid, chosen, own in taken:
        print(f"| {rid} | {chosen:.2f} | {own:.2f} |")


if __name__ == "__main__":
    main()
