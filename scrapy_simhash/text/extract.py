"""Main-text extraction: HTML (str or bytes) to the article text, by trafilatura.

Never raises on bad input: binary bodies, undecodable bytes, malformed or empty HTML all
give ``None``, so a crawl never stops on a page.
"""

from __future__ import annotations

import codecs
import html as html_lib
import logging
import re
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from .charset import detect

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

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE
)
_OPENING = re.compile(r"<(title|h1)\b", re.IGNORECASE)
_CLOSING = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in ("title", "h1")}
_TAG = re.compile(r"<[^>]*>")
_NON_WORD = re.compile(r"[\W_]+")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Control bytes that never occur in text (tab, newline, carriage return, form feed and
# escape are allowed); a body with many of them is binary whatever its Content-Type says.
_BINARY_BYTES = bytes(set(range(32)) - {9, 10, 12, 13, 27})


#: Python's text codecs that no page is written in: domain names, escapes, and UTF-7, which
#: browsers refuse (a page labelled so is read as if it had no label).
_NOT_PAGE_ENCODINGS = frozenset(
    {"idna", "punycode", "unicode-escape", "raw-unicode-escape", "undefined", "utf-7"}
)


#: Labels of the Encoding Standard that Python's codecs do not know.
_WEB_LABELS = {"windows-31j": "cp932", "x-sjis": "cp932", "x-euc-jp": "euc_jp", "x-gbk": "gbk"}
#: Codecs whose labels browsers read in a superset (the Encoding Standard): GB2312 and GBK
#: as GB18030; Latin-1 as windows-1252, whose C1 bytes are curly quotes, dashes and the
#: euro sign; Latin-5 as windows-1254; Thai as windows-874; Shift_JIS as Windows' (circled
#: digits, NEC and IBM kanji). An ASCII label stays ASCII: a body it does not read is read
#: as if it had no label (a UTF-8 page so labelled is common).
_AS_BROWSERS_READ = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "latin-1": "cp1252",
    "iso8859-1": "cp1252",
    "iso8859-9": "cp1254",
    "tis-620": "cp874",
    "iso8859-11": "cp874",
    "shift_jis": "cp932",
}


def _lookup(name: str | bytes | None) -> str | None:
    """The Python codec of an encoding label, or None for a label that names none, or a
    codec that does not decode bytes to text (``base64``, ``hex``, ``zlib``, ``rot13``) or that
    no page is written in (:data:`_NOT_PAGE_ENCODINGS`)."""
    if not name:
        return None
    if isinstance(name, bytes):
        name = name.decode("ascii", "ignore")
    label = name.strip().lower()
    try:
        codec = codecs.lookup(_WEB_LABELS.get(label, label))
    except (LookupError, ValueError):  # unknown, or a label with a NUL in it
        return None
    if not getattr(codec, "_is_text_encoding", True) or codec.name in _NOT_PAGE_ENCODINGS:
        return None
    return _AS_BROWSERS_READ.get(codec.name, codec.name)


def _strict(data: bytes, name: str) -> str | None:
    """``data`` decoded by the codec ``name``, or None where it holds bytes that codec cannot
    read. An incomplete character at the very end (a body cut at a size limit) is left out."""
    try:
        return codecs.getincrementaldecoder(name)("strict").decode(data, final=False)
    except (UnicodeError, LookupError):
        return None


#: The share of a declared encoding's characters that may be unreadable bytes for the page to
#: be read in it all the same (a stray byte or two in a long page), rather than detected.
STRAY_BYTES = 0.001


def looks_binary(data: bytes, sample: int = 4096) -> bool:
    """True when the first bytes of ``data`` hold control bytes that text never has."""
    head = data[:sample]
    if not head:
        return False
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    bad = len(head) - len(head.translate(None, _BINARY_BYTES))
    return bad > max(1, len(head) // 100)


def _wide(encoding: str | None) -> str | None:
    """The codec of an encoding label naming UTF-16 or UTF-32 (a byte order named, or
    little-endian), or None for any other label."""
    name = _lookup(encoding)
    if name is None or not name.startswith(("utf-16", "utf-32")):
        return None
    return {"utf-16": "utf-16-le", "utf-32": "utf-32-le"}.get(name, name)


_CONTROL_CHARS = dict.fromkeys(_BINARY_BYTES)  # (str.translate: deleted)


def _binary_text(head: str) -> bool:
    """Whether the start of a decoded page is a binary body's: it holds a NUL, and more of the
    control characters that text never has than :func:`looks_binary` lets a text hold (a
    stray NUL of a broken template is read past, as lxml does)."""
    if "\x00" not in head:
        return False
    return len(head) - len(head.translate(_CONTROL_CHARS)) > max(1, len(head) // 100)


def decode_html(data: bytes, encoding: str | None = None) -> str | None:
    """Decode an HTML body: byte-order mark, then the given (HTTP) encoding, then the page's
    declared ``<meta charset>``, then UTF-8; else the declared encoding that reads all but a
    few stray bytes (replaced); else the encoding the page's language suggests, windows-1252
    or a detector's choice (:func:`.charset.detect`). ``None`` for a binary body (a body in UTF-16
    or UTF-32 without a byte-order mark is one, unless the given encoding names it).

    As browsers do, a ``<meta charset>`` naming UTF-16 or UTF-32 is read as UTF-8 (a page
    whose bytes spell its ``<meta>`` in ASCII is in neither)."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return data[len(bom) :].decode(name, "replace")
    if looks_binary(data):
        # UTF-16 or UTF-32 without a byte-order mark, as the HTTP header says: its ASCII
        # characters are NUL bytes and others (the label alone is read little-endian, as
        # browsers do); any other body that looks binary is one
        wide = _wide(encoding)
        return _strict(data, wide) if wide else None
    meta = _META_CHARSET.search(data[:4096])
    declared = _lookup(meta.group(1)) if meta else None
    if declared and declared.startswith(("utf-16", "utf-32")):
        declared = "utf-8"
    names = [n for n in dict.fromkeys((_lookup(encoding), declared)) if n]
    for name in [*names, "utf-8"]:
        text = _strict(data, name)
        if text is not None:
            return text
    for name in names:
        if name == "ascii":  # a label that no non-ASCII byte can be stray from
            continue
        text = data.decode(name, "replace")
        if text.count("\ufffd") <= STRAY_BYTES * len(text):
            return text
    name = _lookup(detect(data))
    return data.decode(name or "utf-8", "replace")


def _elements(html: str, end: int) -> Iterator[tuple[str, str]]:
    """Each ``<title>`` and ``<h1>`` element of ``html[:end]`` in document order, as (tag name,
    inner HTML), found by a cheap scan, not a parse: an opening tag, its ``>``, the first
    closing tag of its name after it; the scan goes on after that closing tag.

    Linear in ``end``: once no closing tag of a name follows an opening one, none follows a
    later one either, and that name is looked for no more (a regular expression that looked
    for the closing tag from every opening one took minutes on a page of many unclosed
    ``<h1>``)."""
    open_names = {"title", "h1"}
    at = 0
    while open_names:
        opening = _OPENING.search(html, at, end)
        if opening is None:
            return
        name = opening.group(1).lower()
        if name not in open_names:
            at = opening.end()
            continue
        inner = html.find(">", opening.end(), end)
        if inner < 0:
            return  # no tag ends after this one
        closing = _CLOSING[name].search(html, inner + 1, end)
        if closing is None:
            open_names.discard(name)
            at = opening.end()
            continue
        yield name, html[inner + 1 : closing.start()]
        at = closing.end()


def _without_tags(inner: str) -> str:
    """``inner`` (a title's or heading's HTML) with each tag made a space: ``_TAG.sub(" ",
    inner)``, its search stopped at the last ``>``. No tag ends after it, and each ``<`` there
    read all the rest before it failed (a ``<title>`` of 64 KB of ``<`` took 2.7 s, an
    ``<h1>`` of 400 KB minutes)."""
    end = inner.rfind(">") + 1
    return _TAG.sub(" ", inner[:end]) + inner[end:]


def _headings(html: str) -> list[str]:
    """The page's <title> and first <h1>, normalized (found by a cheap scan, not a parse)."""
    found: dict[str, str] = {}
    for tag, inner in _elements(html, 400_000):
        if tag not in found:
            heading = html_lib.unescape(_without_tags(inner))
            found[tag] = _NON_WORD.sub(" ", heading).casefold().strip()
            if len(found) == 2:
                break
    return [h for h in found.values() if h]


def _drop_title_line(text: str, html: str) -> str:
    """Drop a first line that only repeats the page's title or <h1>.

    trafilatura keeps the headline in the body on some layouts and not on others; without
    this, one article in two layouts would differ by its headline.
    """
    first, _, rest = text.partition("\n")
    line = _NON_WORD.sub(" ", first).casefold().strip()
    if not line or not rest.strip():
        return text
    for heading in _headings(html):
        if line == heading or (len(line) >= 0.5 * len(heading) and line in heading):
            return rest.lstrip("\n")
    return text


#: Longest title kept (characters), and how far into a page its ``<title>`` is looked for.
TITLE_LENGTH = 200
_TITLE_SPAN = 65536
_TITLE_END = re.compile(rb"</title\s*>", re.IGNORECASE)
#: The byte-order marks of encodings whose ASCII characters are not ASCII bytes.
_WIDE_BOMS = tuple(bom for bom, name in _BOMS if name.startswith(("utf-16", "utf-32")))
_SPACE = re.compile(r"\s+")
#: Control characters (escape sequences among them), never part of a title.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a byte of another encoding, decoded with
    ``surrogateescape``: an item's HTML) replaced by U+FFFD, as a stray byte of a page's
    bytes is: neither lxml nor UTF-8 (an index's records) can hold one."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)


def page_title(html: str | bytes, encoding: str | None = None) -> str | None:
    """The text of a page's ``<title>`` (whitespace collapsed, lone surrogates replaced, at
    most :data:`TITLE_LENGTH` characters), found by a cheap scan of its start; None if it
    has none."""
    if isinstance(html, bytes | bytearray | memoryview):
        head = bytes(html[:_TITLE_SPAN])
        if head.startswith(_WIDE_BOMS):
            end = len(head)  # its tags are not ASCII bytes: decoded whole, then read
        else:
            found = _TITLE_END.search(head)
            if found is not None:
                end = found.end()
            elif _wide(encoding) and looks_binary(head):
                end = len(head)  # UTF-16 or UTF-32 as the HTTP header says, without a mark
            else:
                return None
        decoded = decode_html(head[:end], encoding)
        if decoded is None:
            return None
        html = decoded
    for tag, inner in _elements(html, _TITLE_SPAN):
        if tag == "title":
            title = html_lib.unescape(_without_tags(inner))
            title = _SPACE.sub(" ", _CONTROLS.sub("", without_surrogates(title))).strip()
            return title[:TITLE_LENGTH] or None
    return None


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
    skips trafilatura's fallback extractors (faster, slightly lower recall). A first line
    that only repeats the page's title is left out, since layouts differ in whether the
    headline is in the body.
    """
    try:
        if isinstance(html, bytes | bytearray | memoryview):
            data = bytes(html)
            if len(data) > max_bytes:
                data = data[:max_bytes]
            text_html = decode_html(data, encoding)
            if text_html is None:
                return None
        elif isinstance(html, str):
            # lxml stops reading at a lone surrogate, and would lose all after it
            text_html = without_surrogates(html[:max_bytes])
        else:
            raise TypeError(f"extract_text() takes str or bytes, not {type(html).__name__}")
        # (isspace, not strip: no copy of a page of hundreds of KB)
        if not text_html or text_html.isspace() or _binary_text(text_html[:4096]):
            return None
        import trafilatura

        _demote_library_logs()
        _extracting.depth = getattr(_extracting, "depth", 0) + 1
        try:
            text = trafilatura.extract(text_html, url=url, fast=fast, **TRAFILATURA_OPTIONS)
        finally:
            _extracting.depth -= 1
    except TypeError:
        raise
    except Exception:  # trafilatura and lxml raise many kinds on broken input
        logger.debug("Extraction failed for %s", url or "<page>", exc_info=True)
        return None
    if not text or not text.strip():
        return None
    return _drop_title_line(text, text_html)
