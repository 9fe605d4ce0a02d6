"""Blog listing pages that show whole posts: how often a post's own page is dropped.

A blog's home page, its label and archive pages often show several posts in full (Blogger's
default; many WordPress themes). trafilatura returns one of the posts (the first, in these
layouts) as such a page's main text, so the listing reads as a copy of that post: crawled
first, it makes the post's own page a near duplicate, which the spider then never parses.
A listing is let through unchecked and unstored (``SIMHASH_SKIP_LISTINGS``, the default):
``extract_page(..., listings=True)`` finds it, as the crawl's ``PageWork`` does.

Each trial builds a blog of ``n`` posts from the corpus's reference texts (one group at a
time: English and other languages, Chinese), as HTML pages in one template (a Blogger-like
one, with each post's title and body in a ``div.post``, and a WordPress-like one, each post
an ``<article>`` with an ``h2.entry-title`` and a ``div.entry-content``): the listing page
with the ``n`` posts, each under its linked headline, and each post's own page (its
headline, its post, a sidebar). Every page goes through the crawl's path (``extract_page``,
``page_signature``, ``SimhashIndex.check_and_insert`` with the page's URL as its key, a new
LMDB index a trial), the listing first, then the posts; once with listings skipped and
once without. Printed: how many listings were skipped, and the share of post pages dropped
(by the rule that dropped them) with listings skipped and without, for each ``n``.

Then the real pages of the corpus (``SIMHASH_CORPUS`` for another one): those found to be
listings, and what finding them costs beside the extraction, each page's tree prepared as
``extract_page`` prepares it (medians of ``--passes`` passes over the corpus, in one run).

    .venv/bin/python bench/listing_pages.py                 # about 3 minutes
    .venv/bin/python bench/listing_pages.py --trials 10     # a quick look
    .venv/bin/python bench/listing_pages.py --trials 0      # the real pages alone
"""

from __future__ import annotations

import argparse
import html
import itertools
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from _corpus import load_pages, reference_texts, require_corpus  # noqa: E402

from scrapy_simhash import extract_page, page_signature  # noqa: E402
from scrapy_simhash.index import SimhashIndex  # noqa: E402
from scrapy_simhash.text.decode import decode_html  # noqa: E402
from scrapy_simhash.text.extract import prepared_tree  # noqa: E402
from scrapy_simhash.text.listing import count_posts  # noqa: E402

LAYOUTS = ("blogger", "wordpress")

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


def _post(text: str, zh: bool, url: str, layout: str) -> str:
    paragraphs = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n") if p.strip())
    title = html.escape(_headline(text, zh))
    if layout == "wordpress":
        return (
            '<article class="post type-post status-publish"><header class="entry-header">'
            f'<h2 class="entry-title"><a href="{url}">{title}</a></h2>'
            '<div class="entry-meta">November 2, 2026 by Ann</div></header>'
            f'<div class="entry-content">{paragraphs}</div>'
            f'<footer class="entry-footer"><a href="{url}#respond">Leave a comment</a>'
            "</footer></article>"
        )
    return (
        f'<div class="post"><h3 class="post-title"><a href="{url}">{title}</a></h3>'
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


def trial(posts: list[str], zh: bool, host: str, layout: str, skip_listings: bool) -> Counter[str]:
    """The rules that dropped post pages of one blog (``"kept"`` for those kept), and
    ``"listing skipped"`` when the listing was let through unchecked."""
    lang = "zh" if zh else "en"
    urls = [f"https://{host}/2026/11/post-{i}.html" for i in range(len(posts))]
    listing = "".join(_post(text, zh, url, layout) for text, url in zip(posts, urls, strict=True))
    pages = [(f"https://{host}/", _page("Small town notes", listing, lang))]
    pages += [
        (url, _page(_headline(text, zh), _post(text, zh, url, layout), lang))
        for text, url in zip(posts, urls, strict=True)
    ]
    out: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as tmp, SimhashIndex(Path(tmp) / "index") as index:
        for n, (url, body) in enumerate(pages):
            page = extract_page(body, url, listings=skip_listings)
            if page.is_listing:
                out["listing skipped" if n == 0 else "post skipped as a listing"] += 1
                continue
            signature = page_signature(page.text) if page.text else None
            if signature is None:
                if n:
                    out["no signature"] += 1
                continue
            match = index.check_and_insert(signature, url)
            if n:
                out["kept" if match is None else f"dropped by {match.rule}"] += 1
    return out


def real_pages(passes: int) -> None:
    """The corpus's pages found to be listings, and the time finding them takes beside the
    extraction's (each page's tree prepared as ``extract_page`` prepares it)."""
    pages = load_pages()
    trees = []
    for page in pages:
        text_html = decode_html(page.raw, page.encoding)
        trees.append(prepared_tree(text_html) if text_html else None)
    found = [(p, count_posts(t)) for p, t in zip(pages, trees, strict=True) if t is not None]
    listings = [(p, n) for p, n in found if n]
    print(f"\n{len(pages)} real pages: {len(listings)} found to be listings")
    for page, posts in listings:
        print(f"  {page.rid} ({page.lang}, {posts} posts): {page.url}")
    finding, extracting = [], []
    for _ in range(passes):
        started = time.process_time()
        for tree in trees:
            if tree is not None:
                count_posts(tree)
        finding.append(time.process_time() - started)
        started = time.process_time()
        for page in pages:
            extract_page(page.raw, page.url or None, encoding=page.encoding)
        extracting.append(time.process_time() - started)
    find, extract = statistics.median(finding), statistics.median(extracting)
    print(
        f"finding listings {1000 * find / len(pages):.2f} ms a page, extraction "
        f"{1000 * extract / len(pages):.1f} ms a page ({find / extract:.1%}; CPU time, "
        f"medians of {passes} passes)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=40, help="blogs a group and listing size")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--sizes", default="2,3,5,10", help="posts on the listing page")
    ap.add_argument("--passes", type=int, default=3, help="timed passes over the real pages")
    args = ap.parse_args(argv)
    require_corpus()
    rng = random.Random(args.seed)
    groups = reference_texts(min_words=150, min_chars=400)
    sizes = [int(s) for s in args.sizes.split(",")]
    if args.trials:
        print(f"{args.trials} blogs a group and size; posts from {len(groups['en+'])} English and")
        print(f"other reference texts and {len(groups['zh'])} Chinese ones (seed {args.seed})\n")
        print("| layout | group | posts on the listing | post pages | listings skipped | dropped | "
              "by hamming | by sentences | dropped, listings not skipped |")  # fmt: skip
        print("|---|---|---|---|---|---|---|---|---|")
        for layout, (group, pool), size in itertools.product(LAYOUTS, groups.items(), sizes):
            total: Counter[str] = Counter()
            unskipped: Counter[str] = Counter()
            for t in range(args.trials):
                posts = rng.sample(pool, size)
                zh, host = group == "zh", f"blog{t}.example"
                total += trial(posts, zh, host, layout, skip_listings=True)
                unskipped += trial(posts, zh, host, layout, skip_listings=False)
            pages = size * args.trials
            dropped = total["dropped by hamming"] + total["dropped by sentences"]
            before = unskipped["dropped by hamming"] + unskipped["dropped by sentences"]
            print(
                f"| {layout} | {group} | {size} | {pages} | "
                f"{total['listing skipped']} of {args.trials} | "
                f"{dropped / pages:.1%} | {total['dropped by hamming']} | "
                f"{total['dropped by sentences']} | {before / pages:.1%} |"
            )
    real_pages(args.passes)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
