"""The CPU work on one page, with nothing of Scrapy in it: extract the main text, sign it.

It runs in the crawl process (``SIMHASH_WORKERS = 0``) or in a worker process
(:mod:`scrapy_simhash.crawl.worker`). A result is a page signature (its fingerprint and
longest sentences) or the reason the page was skipped (``str``), small and picklable.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..text.extract import extract_page
from ..text.fingerprint import Fingerprinter
from ..text.signature import PageSignature, page_signature

#: A page signature, or the name of the reason the page was skipped (a ``simhash/skipped/``
#: key).
Result = PageSignature | str


@dataclass(frozen=True)
class PageOptions:
    """What the work on a page depends on (from the ``SIMHASH_*`` settings)."""

    min_words: int = 20
    fast: bool = False
    numbers: bool = True
    skip_listings: bool = True


class PageWork:
    """Extraction and fingerprinting with fixed options; one per process."""

    def __init__(self, options: PageOptions) -> None:
        self.options = options
        self.fingerprinter = Fingerprinter(min_words=options.min_words, numbers=options.numbers)

    def html(self, html: str | bytes, url: str | None, encoding: str | None = None) -> Result:
        """Signature of the main text of a page, or why there is none (bodies too large are
        turned away before, by the caller): ``"listing"`` for a page that shows several posts
        whole, when listings are skipped."""
        page = extract_page(
            html,
            url,
            encoding=encoding,
            fast=self.options.fast,
            listings=self.options.skip_listings,
        )
        if page.is_listing:
            return "listing"
        if page.text is None:
            return "no_text"
        return self.text(page.text)

    def text(self, text: str) -> Result:
        """Signature of an already extracted text, or ``"too_short"``."""
        signature = page_signature(text, self.fingerprinter)
        return "too_short" if signature is None else signature

    def warm_up(self) -> None:
        """Load what the first page would otherwise wait for: trafilatura's models and the
        Chinese dictionary."""
        paragraph = " ".join(["The extractor and the dictionary are loaded once."] * 5)
        self.html(f"<html><body><article><p>{paragraph}</p></article></body></html>", None)
        self.text("加载中文词典" * 40)


def describe(kind: str, args: tuple[object, ...]) -> str:
    """The page a job is about, for log lines: its URL, else what kind of job it is."""
    if kind == "html" and len(args) > 1 and args[1]:
        return str(args[1])
    return f"an item's {kind}"
