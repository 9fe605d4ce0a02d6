"""Hard-wrapped text joined back into its paragraphs.

Text written for e-mail, forums and ``<pre>`` blocks is often wrapped at a fixed width (60 to
100 columns, a CJK character taking two): every line of a paragraph but its last ends where
the width ran out, in the middle of a sentence. Extraction keeps those line breaks on one page
and turns them into spaces on another (the same article in another site's layout, a copy
whose editor reflowed it). Read line by line, two such copies would differ in their sentences
(split at line breaks), and in the short last lines of their paragraphs, which chrome
stripping (:mod:`.chrome`) takes for menu entries. So a text whose lines mostly fill one width
is read with each full line joined to the next, as a browser would show it.

A text is hard-wrapped when, for the width ``w`` in :data:`WIDTHS` that makes the most lines
full (their width within :data:`RAGGED` columns under ``w``), at least :data:`MIN_FULL` lines
are full, they are at least :data:`FULL_SHARE` of the lines that are not blank (a text of one
line a paragraph has lines of every width, most of them longer; a layout's list of headlines
with their sources alternates wide and short lines), and at most :data:`ENDED_SHARE` of them
end a sentence (a list of questions can be as wide, but each line ends its own). A full line
is then joined to the next, unless it is chrome by itself (a menu line, a list item) or the
next is blank, a list item or table row, or indented otherwise than most lines that follow a
full line (a new paragraph's first line, with a first-line indent; a heading in an indented
body). Widths are measured without the indentation: HTML whose source is wrapped and
indented keeps both in some extractions, a paragraph's continued lines indented deeper than
its first.

On the quality bench (``docs/quality.md``) 54 of its 6,946 texts are hard-wrapped: Chinese
essays kept as plain text on an old site, an RFC, English posts whose source lines (and
their indentation) extraction kept; a list of headlines as wide as wrapped lines is the case
this reading can mistake.

A paragraph whose HTML source is wrapped at no one width comes back the same way when
trafilatura falls back to another extractor: each source line a line, the continued ones
indented as the source indents them (``<p>Law enforcement sources tell TMZ ... the dress
was taken out of Lupita's`` / ``        room at The London West Hollywood.``), while its own
extraction, and so the same article in another layout, gives the paragraph as one line. Read
as they come, the continued lines are short (chrome, to :mod:`.chrome`) and cut the
paragraph's sentences. So :func:`join_continued` (version 14) joins a line that begins with
white space (two spaces or tabs or more: not a Chinese paragraph's ideographic indent) to
the line before it, when that one is not blank and does not end a sentence or open a
colon's list, and neither is a list item or table row.
"""

from __future__ import annotations

import re
from collections import Counter

from .chrome import is_chrome

#: The widths, in columns, at which text is hard-wrapped.
WIDTHS = range(60, 101)
#: A full line is at most this many columns narrower than the width (a word that did not
#: fit went to the next line; a CJK line can end a character early).
RAGGED = 12
#: The fewest full lines that make a text hard-wrapped...
MIN_FULL = 8
#: ... and their least share of the lines that are not blank...
FULL_SHARE = 0.5
#: ... and the largest share of them that end with a sentence's end.
ENDED_SHARE = 0.5

# Characters that take two columns: East Asian wide and full-width forms, and the
# punctuation that CJK encodings print two columns wide.
_WIDE = re.compile(
    "[\u1100-\u115f\u2014\u2018\u2019\u201c\u201d\u2026\u2e80-\u303e\u3041-\u33ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f"
    "\uff00-\uff60\uffe0-\uffe6\U00020000-\U0003fffd]+"
)
_ENDS = ".!?。！？；;…"  # what ends a sentence...
_CLOSING = "\"'”’」』）)"  # ... and the closing quotes and brackets after it
_ENDED = re.compile(f"[{_ENDS}][{_CLOSING}]*$")
# The starts of list items and table rows.
_ITEM = ("- ", "* ", "• ", "· ", "|")
# A line continued from the one before: two spaces or tabs or more, then its text.
_CONTINUED = re.compile(r"[ \t]{2,}\S")
# A line that ends a sentence, or opens what follows with a colon (a quotation, a list).
_CLOSED = re.compile(f"[{_ENDS}:：][{_CLOSING}]*$")
# A line may be full only if it has this many characters or more (a full line of CJK
# characters at the narrowest width).
_SHORTEST_FULL = (WIDTHS[0] - RAGGED) // 2
# ... and at most this many (the widest width, and indentation or trailing white space).
_LONGEST_FULL = WIDTHS[-1] + 60


def columns(line: str) -> int:
    """The columns a line takes in a fixed-width font (a wide character takes two)."""
    if line.isascii():  # no wide character
        return len(line)
    # counted by runs, as chrome.line_size counts CJK characters
    return len(line) + sum(map(len, _WIDE.findall(line)))


def wrap_width(widths: list[int]) -> int | None:
    """The width at which lines of these widths (a blank line's is 0) were hard-wrapped, or
    None if they were not, by their widths alone."""
    counts = Counter(widths)
    best, best_full = None, 0
    for width in WIDTHS:
        full = sum(counts[w] for w in range(width - RAGGED, width + 1))
        if full > best_full:
            best, best_full = width, full
    lines = len(widths) - counts[0]
    if best_full < MIN_FULL or best_full < FULL_SHARE * lines:
        return None
    return best


def unwrap(text: str) -> str:
    """``text`` with the line breaks of its hard-wrapped paragraphs made spaces (``text``
    itself when it is not hard-wrapped)."""
    lines = text.split("\n")
    # the lines that may be full (their width alone is exact, below), against the lines that
    # are not blank: most texts are told apart here, at the cost of a len() a line
    may_be_full = sum(1 for line in lines if _SHORTEST_FULL <= len(line) <= _LONGEST_FULL)
    if may_be_full < MIN_FULL or may_be_full < FULL_SHARE * sum(
        1 for line in lines if line and not line.isspace()
    ):
        return text
    stripped = [line.rstrip() for line in lines]
    # a line's width is its text's: the indentation of HTML source lines is not part of it
    texts = [line.lstrip() for line in stripped]
    widths = [columns(t) if len(t) <= WIDTHS[-1] else WIDTHS[-1] + 1 for t in texts]
    width = wrap_width(widths)
    if width is None:
        return text
    full = [width - RAGGED <= w <= width for w in widths]
    ended = sum(1 for t, f in zip(texts, full, strict=True) if f and _ENDED.search(t))
    if ended > ENDED_SHARE * sum(full):
        return text
    indents = [len(s) - len(t) for s, t in zip(stripped, texts, strict=True)]
    # what follows a full line is mostly the rest of its paragraph: the indentation of most
    # such lines is a paragraph's body, and a line indented otherwise begins one (a first-line
    # indent; a first line after its <p> in indented HTML source; a heading)
    body = Counter(indents[i + 1] for i in range(len(texts) - 1) if full[i] and texts[i + 1])
    indent = body.most_common(1)[0][0] if body else 0
    # each line made is a list of its pieces, joined once at the end (a paragraph of
    # thousands of full lines costs no more than its length)
    out: list[list[str]] = []
    joined = False
    for i, line in enumerate(stripped):
        if joined:
            out[-1].append(texts[i])
        else:
            out.append([line])
        following = texts[i + 1] if i + 1 < len(texts) else ""
        joined = (
            full[i]
            and following != ""
            and indents[i + 1] == indent
            and not following.startswith(_ITEM)
            and not is_chrome(line)
        )
    return "\n".join(map(" ".join, out))


def join_continued(text: str) -> str:
    """``text`` with each line that continues the one before it joined to it by a space
    (``text`` itself when none does). A line continues the one before it when it is
    indented by two spaces or tabs or more, the line before is not blank and does not end a
    sentence or with a colon, and neither line is a list item or a table row."""
    if "\n " not in text and "\n\t" not in text:
        return text  # no line begins with white space: most texts
    out: list[str] = []
    # the line being made: its first line, and the lines joined to it (each piece is read
    # once: a block of thousands of continued lines costs no more than its length)
    pieces: list[str] = []
    first_listed = False  # whether the first line of the line being made is a list item
    joined = False
    for line in text.split("\n"):
        if pieces and _CONTINUED.match(line):
            before = pieces[-1].rstrip()  # where the line being made ends
            start = line.lstrip()
            if before and not _CLOSED.search(before) and not first_listed and not _listed(start):
                pieces[-1] = before
                pieces.append(start)
                joined = True
                continue
        if pieces:
            out.append(" ".join(pieces))
        pieces = [line]
        first_listed = _listed(line.strip())
    if not joined:
        return text
    out.append(" ".join(pieces))
    return "\n".join(out)


def _listed(line: str) -> bool:
    """Whether a stripped line is a list item or table row, or a list item's bare mark."""
    return line == "-" or line.startswith(_ITEM)
