"""What the guard's count of a site's dropped pages gives and costs (index format 6).

Two crawls decided page by page through the real path (``extract_text``, ``page_signature``,
``SimhashIndex.check_and_insert`` with the page's URL as its key), each twice in one run:
with the count of a site's pages dropped through a sentence (as shipped), and without it (the
guard counting stored pages only, as format 5 did: the site of every key taken as unknown).

* **A shop's boilerplate.** A shop of ``--products`` product pages, each with a description
  of its own (``--own`` sentences drawn from a fixed vocabulary) and the same ``--policy``
  long sentences of returns policy, on one host. Every product is a different page: every
  one should be kept.
* **The crawl bench's site** (``_crawl_site.build_site``: about 2,000 pages made from the
  corpus, with copies by tracking parameters, decorations, 1% edits and moves into another
  layout, all on one host), in its shuffled crawl order: what the count costs where one site
  serves several near-duplicate versions of an article. Needs ``../shared/corpus``.

    .venv/bin/python bench/site_guard.py                  # about 3 minutes
    .venv/bin/python bench/site_guard.py --no-site        # the shop alone, seconds
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from scrapy_simhash import Fingerprinter, extract_text, page_signature  # noqa: E402
from scrapy_simhash.index import SimhashIndex  # noqa: E402
from scrapy_simhash.text.signature import PageSignature  # noqa: E402

_WORDS = (
    "oak walnut copper linen wool brass enamel ceramic glazed woven stitched polished sturdy "
    "light narrow deep round square tall small warm quiet bright pale green amber kitchen "
    "garden hallway cabin balcony workshop shelf window winter summer morning evening travel "
    "picnic reading cooking storing pouring carrying resting heating maker family village "
    "valley river coast forest hills orchard meadow harbour basket handle lid spout strap "
    "buckle hinge drawer cushion frame lantern wick glass candle kettle teapot blanket"
)
_VOCABULARY = _WORDS.split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_VOCABULARY) for _ in range(words)).capitalize() + "."


def shop_pages(products: int, own: int, policy: int, seed: int = 1) -> list[tuple[str, bytes]]:
    """``(url, html)`` of the shop's product pages."""
    rng = random.Random(seed)
    terms = [_sentence(rng, rng.randint(30, 42)) for _ in range(policy)]
    pages = []
    for i in range(products):
        description = " ".join(_sentence(rng, rng.randint(10, 18)) for _ in range(own))
        html = (
            f"<html><head><title>Product {i}</title></head><body>"
            "<nav><a href='/'>Shop</a> | <a href='/new'>New</a></nav>"
            f"<article><h1>Product {i}</h1><p>{description}</p><h2>Delivery and returns</h2>"
            + "".join(f"<p>{t}</p>" for t in terms)
            + "</article><footer>Example shop</footer></body></html>"
        )
        pages.append((f"https://shop.example/p/{i}", html.encode()))
    return pages


@contextmanager
def without_site_counts() -> Iterable[None]:
    """The index as format 5 decided: no key has a site, so no drop is counted."""
    with mock.patch("scrapy_simhash.index.index.site_of", lambda key: b""):
        yield


def decide(pages: list[tuple[str, str, PageSignature | None]]) -> tuple[Counter[str], int]:
    """Pages kept by kind, in order, in a fresh index; and the sentences counted."""
    kept: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as folder, SimhashIndex(folder) as index:
        for url, kind, signature in pages:
            if signature is not None and index.check_and_insert(signature, url) is None:
                kept[kind] += 1
        return kept, index.stats()["repeated_sentences"]


def both(pages: list[tuple[str, str, PageSignature | None]]) -> dict[str, tuple[Counter, int]]:
    out = {"with the count": decide(pages)}
    with without_site_counts():
        out["without (format 5)"] = decide(pages)
    return out


def signed(url: str, html: bytes, fingerprinter: Fingerprinter, encoding: str | None = None):
    text = extract_text(html, url, encoding=encoding)
    return page_signature(text, fingerprinter) if text else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--products", type=int, default=20)
    parser.add_argument("--own", type=int, default=8, help="sentences of a description")
    parser.add_argument("--no-site", action="store_true", help="leave the crawl site out")
    args = parser.parse_args()
    fingerprinter = Fingerprinter()

    print(f"# A shop's boilerplate: {args.products} products, {args.own} sentences of their own")
    print("\n| policy sentences | kept, with the count | kept, without (format 5) |")
    print("|---:|---:|---:|")
    for policy in (2, 3, 4, 5, 6, 8):
        pages = [
            (url, "product", signed(url, html, fingerprinter))
            for url, html in shop_pages(args.products, args.own, policy)
        ]
        result = both(pages)
        cells = [f"{sum(kept.values())} of {args.products}" for kept, _ in result.values()]
        print(f"| {policy} | {cells[0]} | {cells[1]} |")

    if args.no_site:
        return
    from _corpus import corpus_available, load_pages
    from _crawl_site import build_site

    if not corpus_available():
        print("\ncorpus not found: the crawl site is left out (set SIMHASH_CORPUS)")
        return
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        site = build_site(load_pages(), 2000, out)
        routes = json.loads((out / "routes.json").read_text())
        pages = []
        for path, kind in site:
            name, content_type = routes[path.split("?")[0]]
            charset = content_type.partition("charset=")[2] or None
            url = "http://127.0.0.1" + path
            pages.append(
                (url, kind, signed(url, (out / name).read_bytes(), fingerprinter, charset))
            )
    print(f"\n# The crawl bench's site: {len(pages)} pages on one host, in its crawl order")
    print("\n| | kept | of which, by kind | sentences counted |")
    print("|---|---:|---|---:|")
    for name, (kept, counted) in both(pages).items():
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(kept.items()))
        print(f"| {name} | {sum(kept.values())} | {kinds} | {counted} |")


if __name__ == "__main__":
    main()
