"""An HTML body's bytes to text, as a browser reads them.

The byte-order mark, then the HTTP header's encoding, the page's ``<meta charset>`` and
UTF-8, each if it reads the bytes; then a declared encoding that reads all but a few stray
bytes; else the encoding found by :mod:`.charset`. Encoding labels are read as the Encoding
Standard reads them (``latin-1`` as windows-1252, ``gb2312`` as GB18030). A binary body is
told apart, not decoded.
"""

from __future__ import annotations

import codecs
import re

from .charset import detect

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
#: The byte-order marks of encodings whose ASCII characters are not ASCII bytes.
WIDE_BOMS = tuple(bom for bom, name in _BOMS if name.startswith(("utf-16", "utf-32")))
_META_CHARSET = re.compile(
    rb"""<meta[^>]+?charset\s*=\s*["']?\s*([a-zA-Z0-9_.:-]+)""", re.IGNORECASE
)
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


def codec_of(name: str | bytes | None) -> str | None:
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


def wide_codec(encoding: str | None) -> str | None:
    """The codec of an encoding label naming UTF-16 or UTF-32 (a byte order named, or
    little-endian), or None for any other label."""
    name = codec_of(encoding)
    if name is None or not name.startswith(("utf-16", "utf-32")):
        return None
    return {"utf-16": "utf-16-le", "utf-32": "utf-32-le"}.get(name, name)


_CONTROL_CHARS = dict.fromkeys(_BINARY_BYTES)  # (str.translate: deleted)


def binary_text(head: str) -> bool:
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
        wide = wide_codec(encoding)
        return _strict(data, wide) if wide else None
    meta = _META_CHARSET.search(data[:4096])
    declared = codec_of(meta.group(1)) if meta else None
    if declared and declared.startswith(("utf-16", "utf-32")):
        declared = "utf-8"
    names = [n for n in dict.fromkeys((codec_of(encoding), declared)) if n]
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
    name = codec_of(detect(data))
    return data.decode(name or "utf-8", "replace")


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (a byte of another encoding, decoded with
    ``surrogateescape``: an item's HTML) replaced by U+FFFD, as a stray byte of a page's
    bytes is: neither lxml nor UTF-8 (an index's records) can hold one."""
    if text.isascii() or not _SURROGATE.search(text):
        return text
    return _SURROGATE.sub("\ufffd", text)
