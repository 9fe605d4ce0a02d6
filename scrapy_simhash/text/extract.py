"""Main-text extraction: HTML (str or bytes) to the article text, by trafilatura.

Never raises on bad input: binary bodies, undecodable bytes, malformed or empty HTML all
give ``None``, so a crawl never stops on a page.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from lxml.html import HtmlElement

from .decode import binary_text, decode_html, without_surrogates
from .headings import drop_title_line
from .hidden import drop_hidden
from .layout_tables import unwrap_layout_tables
from .listing import count_posts

logger = logging.getLogger(__name__)

#: The options of every ``trafilatura.extract`` call besides ``url`` and ``fast``. The
#: benches that compare the plugin with trafilatura alone call it with these too.
TRAFILATURA_OPTIONS: Mapping[str, Any] = MappingProxyType(
    {
        "deduplicate": False,
        "include_comments": False,
        "include_tables": True,
        "favor_recall": True,
        "with_metadata": False,
        "output_format": "txt",
    }
)

#: Pages larger than this are cut before extraction (the article is near the top of a page;
#: trafilatura's time grows with the tree and a 20 MB page would stall a crawl).
DEFAULT_MAX_BYTES = 4 * 1024 * 1024

#: The libraries trafilatura calls, whose loggers :func:`_demote_library_logs` filters.
_LIBRARIES = ("trafilatura", "htmldate", "courlan", "justext")
_extracting = threading.local()  # depth: extract_text calls under way in this thread
_demoted: set[str] = set()  # the loggers filtered
_loggers_seen = [0]  # how many loggers there were at the last look


class _Demote(logging.Filter):
    """Records that trafilatura and its libraries log while :func:`extract_text` runs go out at
    DEBUG: their ERROR and WARNING lines ("empty HTML tree", "discarding data") say that a
    page has no article, which the crawl counts (``simhash/skipped/no_text``); in a crawl's
    log they read as failures. Their records outside extract_text are left alone."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(_extracting, "depth", 0) and record.levelno > logging.DEBUG:
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return True


_DEMOTE = _Demote()


def _demote_library_logs() -> None:
    """Filter every logger of :data:`_LIBRARIES` (a filter acts on its own logger's records,
    not its children's: each module's logger gets it)."""
    loggers = logging.root.manager.loggerDict
    if len(loggers) == _loggers_seen[0]:
        return  # no logger made since the last look (every page but the first few)
    _loggers_seen[0] = len(loggers)
    for name, item in list(loggers.items()):
        if (
            name not in _demoted
            and isinstance(item, logging.Logger)
            and name.split(".")[0] in _LIBRARIES
        ):
            item.addFilter(_DEMOTE)
            _demoted.add(name)


class PageText(NamedTuple):
    """What :func:`extract_page` found in a page: its main text (``None``: none) and, when
    asked for, how many posts it shows whole (a listing, :mod:`.listing`: 2 or more, and then
    no text, since the text would be one of the posts)."""

    text: str | None
    posts: int = 0

    @property
    def is_listing(self) -> bool:
        return self.posts > 0


_NONE = PageText(None)


def prepared_tree(text_html: str) -> HtmlElement | None:
    """The tree that extraction reads of a page's decoded HTML (``None``: none): parsed as
    trafilatura parses it, what the markup hides left out (:mod:`.hidden`), layout tables
    read as the blocks they frame (:mod:`.layout_tables`)."""
    import trafilatura

    tree = trafilatura.load_html(text_html)
    if tree is not None:
        drop_hidden(tree)
        unwrap_layout_tables(tree)
    return tree


def extract_text(
    html: str | bytes,
    url: str | None = None,
    *,
    encoding: str | None = None,
    fast: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> str | None:
    """Return the main text of a page, or ``None`` when it has none or is not HTML.

    The result depends on the page alone: trafilatura's cross-document deduplication is off,
    so the same page gives the same text whatever was extracted before. Comments are left
    out (a page whose comments changed is still the same page). trafilatura runs in its
    recall-favouring mode (``favor_recall``): an article in an unfamiliar layout keeps its
    paragraphs rather than being cut to the part the layout's own heuristics trust, and
    extraction is faster (fewer fallback comparisons); see ``docs/quality-history.md``. ``fast``
    skips trafilatura's fallback extractors (faster, slightly lower recall). What the page's
    markup hides from a reader is removed from the tree first (:mod:`.hidden`): the fallback
    extractors would otherwise read a closed cookie banner as the article of a page whose
    own article is short. Tables that lay the page out, rather than hold data, are read as
    the blocks they frame (:mod:`.layout_tables`): trafilatura would run each cell's
    paragraphs into one line. A first line that only repeats the page's title is left out,
    since layouts differ in whether the headline is in the body.
    """
    return extract_page(html, url, encoding=encoding, fast=fast, max_bytes=max_bytes).text


def extract_page(
    html: str | bytes,
    url: str | None = None,
    *,
    encoding: str | None = None,
    fast: bool = False,
    max_bytes: int = DEFAULT_MAX_BYTES,
    listings: bool = False,
) -> PageText:
    """:func:`extract_text`'s text of a page; with ``listings``, a page that shows several
    posts whole (a blog's home, label and archive pages, :mod:`.listing`) is told as such,
    with its number of posts and no text, and is not extracted (a crawl skips it)."""
    try:
        if isinstance(html, bytes | bytearray | memoryview):
            data = bytes(html)
            if len(data) > max_bytes:
                data = data[:max_bytes]
            text_html = decode_html(data, encoding)
            if text_html is None:
                return _NONE
        elif isinstance(html, str):
            # lxml stops reading at a lone surrogate, and would lose all after it
            text_html = without_surrogates(html[:max_bytes])
        else:
            raise TypeError(f"a page's HTML must be str or bytes, not {type(html).__name__}")
        # (isspace, not strip: no copy of a page of hundreds of KB)
        if not text_html or text_html.isspace() or binary_text(text_html[:4096]):
            return _NONE
        import trafilatura

        _demote_library_logs()
        _extracting.depth = getattr(_extracting, "depth", 0) + 1
        try:
            tree = prepared_tree(text_html)
            if tree is None:
                return _NONE
            if listings and (posts := count_posts(tree)):
                return PageText(None, posts)
            text = trafilatura.extract(tree, url=url, fast=fast, **TRAFILATURA_OPTIONS)
        finally:
            _extracting.depth -= 1
    except TypeError:
        raise
    except Exception:  # trafilatura and lxml raise many kinds on broken input
        logger.debug("Extraction failed for %s", url or "<page>", exc_info=True)
        return _NONE
    if not text or not text.strip():
        return _NONE
    return PageText(drop_title_line(text, text_html))
