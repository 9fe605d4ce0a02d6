"""Blog listing pages that show whole posts: how often a post's own page is dropped.

A blog's home page, its label and archive pages often show several posts in full (Blogger's
default; many WordPress themes). A crawl fetches the home page first: the middleware stores
it, then meets each post's own page, whose text the listing holds whole. That post page is a
shorter page contained in a longer one, which the signature rule takes for a near duplicate
when the post is most of the listing or holds most of its long sentences (the rule that
catches an article whose other layout adds lists and replies around it). The spider then
never parses the post.

Each trial builds a blog of ``n`` posts from the corpus's reference texts (one group at a
time: English and other languages, Chinese), as HTML pages in one template: the listing
page with the ``n`` posts, each under its headline, and each post's own page (its headline,
its post, a sidebar). Every page goes through the crawl's path (``extract_text``,
``page_signature``, ``SimhashIndex.check_and_insert`` with the page's URL as its key, a new
LMDB index a trial), the listing first, then the posts. Printed: the share of post pages
dropped, by the rule that dropped them, for each ``n``. A listing requested with
``meta={"dont_simhash": True}`` is neither checked nor stored, and drops none of them.

    .venv/bin/python bench/listing_pages.py                 # about 4 minutes
    .venv/bin/python bench/listing_pages.py --trials 10     # a quick look
"""

from __future__ import annotations

import argparse
import html
import random
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import reference_texts, require_corpus  # noqa: E402

from scrapy_simhash import extract_text, page_signature  # noqa: E402
from scrapy_simhash.index import SimhashIndex  # noqa: E402

SIDEBAR = (
    '<aside class="sidebar"><h2>About this blog</h2><p>Notes from a small town.</p>'
    '<h2>Labels</h2><ul><li><a href="/search/label/town">town</a></li>'
    '<li><a href="/search/label/travel">travel</a></li></ul>'
    '<h2>Archive</h2><ul><li><a href="/2026/11/">November</a></li>'
    '<li><a href="/2026/10/">October</a></li></ul></aside>'
)


def _headline(text: str, zh: bool) -> str:
    first = text.strip().split("\n")[0]
    return first[:24] if zh else " ".join(first.split()[:9])


def _post(text: str, zh: bool, url: str) -> str:
    paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())
    return (
        f'<div class="post"><h3 class="post-title"><a href="{url}">'
        f"{html.escape(_headline(text, zh))}</a></h3>"
        f'<div class="post-body">{paragraphs}</div>'
        f'<div class="post-footer">Posted by Ann at 09:12 <a href="{url}#comments">'
        "0 comments</a></div></div>"
    )


def _page(title: str, body: str, lang: str) -> bytes:
    return (
        f'<!DOCTYPE html><html lang="{lang}"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title></head><body>"
        '<header><h1><a href="/">Small town notes</a></h1><nav><a href="/">Home</a> '
        '<a href="/about">About</a></nav></header>'
        f'<main class="blog-posts">{body}</main>{SIDEBAR}'
        "<footer>Powered by a blog host. Theme by its author.</footer></body></html>"
    ).encode()


def trial(posts: list[str], zh: bool, host: str) -> Counter[str]:
    """The rules that dropped post pages of one blog (``"kept"`` for those kept)."""
    lang = "zh" if zh else "en"
    urls = [f"https://{host}/2026/11/post-{i}.html" for i in range(len(posts))]
    listing = "".join(_post(text, zh, url) for text, url in zip(posts, urls, strict=True))
    pages = [(f"https://{host}/", _page("Small town notes", listing, lang))]
    pages += [
        (url, _page(_headline(text, zh), _post(text, zh, url), lang))
        for text, url in zip(posts, urls, strict=True)
    ]
    out: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp, SimhashIndex(Path(tmp) / "index") as index:
        for n, (url, body) in enumerate(pages):
            text = extract_text(body, url)
            signature = page_signature(text) if text else None
            if signature is None:
                if n:
                    out["no signature"] += 1
                continue
            match = index.check_and_insert(signature, url)
            if n:
                out["kept" if match is None else f"dropped by {match.rule}"] += 1
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=40, help="blogs a group and listing size")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sizes", default="2,3,5,10", help="posts on the listing page")
    args = ap.parse_args(argv)
    require_corpus()
    rng = random.Random(args.seed)
    groups = reference_texts(min_words=150, min_chars=400)
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"{args.trials} blogs a group and size; posts from {len(groups['en+'])} English and")
    print(f"other reference texts and {len(groups['zh'])} Chinese ones (seed {args.seed})\n")
    print("| group | posts on the listing | post pages | dropped | by hamming | by sentences |")
    print("|---|---|---|---|---|---|")
    for group, pool in groups.items():
        for size in sizes:
            total: Counter[str] = Counter()
            for t in range(args.trials):
                posts = rng.sample(pool, size)
                total += trial(posts, group == "zh", f"blog{t}.example")
            pages = sum(total.values())
            dropped = total["dropped by hamming"] + total["dropped by sentences"]
            print(
                f"| {group} | {size} | {pages} | {dropped / pages:.1%} | "
                f"{total['dropped by hamming']} | {total['dropped by sentences']} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
