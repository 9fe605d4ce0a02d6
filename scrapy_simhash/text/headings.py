"""A page's ``<title>`` and first ``<h1>``, found by a cheap scan of its HTML, not a parse:
the title a drop's log line names, and the headline that some layouts repeat as the first
line of the extracted text.
"""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator

from .decode import WIDE_BOMS, decode_html, looks_binary, wide_codec, without_surrogates

_OPENING = re.compile(r"<(title|h1)\b", re.IGNORECASE)
_CLOSING = {name: re.compile(rf"</{name}\s*>", re.IGNORECASE) for name in ("title", "h1")}
_TAG = re.compile(r"<[^>]*>")
_NON_WORD = re.compile(r"[\W_]+")


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


def headings(html: str) -> list[str]:
    """The page's <title> and first <h1>, normalized (found by a cheap scan, not a parse)."""
    found: dict[str, str] = {}
    for tag, inner in _elements(html, 400_000):
        if tag not in found:
            heading = html_lib.unescape(_without_tags(inner))
            found[tag] = _NON_WORD.sub(" ", heading).casefold().strip()
            if len(found) == 2:
                break
    return [h for h in found.values() if h]


def drop_title_line(text: str, html: str) -> str:
    """Drop a first line that only repeats the page's title or <h1>.

    trafilatura keeps the headline in the body on some layouts and not on others; without
    this, one article in two layouts would differ by its headline.
    """
    first, _, rest = text.partition("\n")
    line = _NON_WORD.sub(" ", first).casefold().strip()
    if not line or not rest.strip():
        return text
    for heading in headings(html):
        if line == heading or (len(line) >= 0.5 * len(heading) and line in heading):
            return rest.lstrip("\n")
    return text


#: Longest title kept (characters), and how far into a page its ``<title>`` is looked for.
TITLE_LENGTH = 200
_TITLE_SPAN = 65536
_TITLE_END = re.compile(rb"</title\s*>", re.IGNORECASE)
_SPACE = re.compile(r"\s+")
#: Control characters (escape sequences among them), never part of a title.
_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]")


def page_title(html: str | bytes, encoding: str | None = None) -> str | None:
    """The text of a page's ``<title>`` (whitespace collapsed, lone surrogates replaced, at
    most :data:`TITLE_LENGTH` characters), found by a cheap scan of its start; None if it
    has none."""
    if isinstance(html, bytes | bytearray | memoryview):
        head = bytes(html[:_TITLE_SPAN])
        if head.startswith(WIDE_BOMS):
            end = len(head)  # its tags are not ASCII bytes: decoded whole, then read
        else:
            found = _TITLE_END.search(head)
            if found is not None:
                end = found.end()
            elif wide_codec(encoding) and looks_binary(head):
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
