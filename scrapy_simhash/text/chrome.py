"""The lines of an extracted text that are the article's prose, without the site's chrome.

trafilatura returns a page's main text, but a syndicated article in another site's layout
comes back with some of that site's text around it: a section menu ("全国版 | 安徽省 | 北京市"),
a byline and photo-credit block, a newsletter line, lists of other headlines. Those lines sit
at the start of the text, where the position decay weighs most, and move a copy's fingerprint
past k. Articles are written in sentences and chrome is not, so the lines chrome forms are
left out before the words are read (``docs/quality.md``, "Surviving template chrome"):

* lines under :data:`MIN_LINE` words (a CJK character counts a half: two make about a word):
  menu entries, bylines, captions, headlines of other articles, buttons;
* menu lines: two or more separators (``|``, ``>``, ``/``, ``·``, ``»``, single angle quotes,
  bullets) between items of at most four words;
* list items (``- ``) and table rows (``| ``) under twice :data:`MIN_LINE` words whose cells
  are all short: link lists, other headlines, layout tables.

Numbers count no words: a related headline with its date and time is still short. (Judging
each cell of a table row as a line of its own was measured too: it lost Chinese layout moves.)

A text with fewer than :data:`MIN_KEPT` words of prose is kept whole (a short page, a page of
lists or tables): fingerprinting a few surviving lines would match unrelated pages. A caller
may keep lines that a predicate accepts (the fingerprint keeps lines holding a price or a
spec when numbers are features).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .segment import CJK_CHARS

#: A line of fewer words than this is chrome.
MIN_LINE = 8
#: Below this many words of prose, the whole text is kept.
MIN_KEPT = 40
#: Words per item, at most, in a line of menu items.
MENU_ITEM = 4

_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_WORD = re.compile(rf"[^\W_{CJK_CHARS}]+")
_SEPARATOR = re.compile(r"\s[|>/·»›•]\s|[|｜>›»·•]")
# Each of these is a separator wherever it is.
_SEPARATOR_CHARS = "|｜>›»·•"
#: A longer line is first measured on its first so many characters.
PREFIX = 64


def line_size(line: str) -> int:
    """A line's length in words: words with a letter count one, CJK characters a half
    each, numbers nothing."""
    words = _WORD.findall(line)
    # numbers (dates, times, counters) do not make a line long
    size = len(words) - sum(map(str.isdecimal, words))
    if line.isascii():  # no CJK character to count
        return size
    # counted by runs: one string a run rather than one a character
    return size + sum(map(len, _CJK_RUN.findall(line))) // 2


def _separators(s: str) -> int:
    """How many separators a line holds (the matches of ``_SEPARATOR``)."""
    if "/" in s:  # a slash is one only between white space
        return len(_SEPARATOR.findall(s))
    return sum(map(s.count, _SEPARATOR_CHARS))


def _judged(line: str) -> tuple[bool, int]:
    """Whether a line is chrome, and its size in words."""
    return _judged_stripped(line.strip())


def _judged_stripped(s: str) -> tuple[bool, int]:
    """:func:`_judged` of a line stripped of its white space."""
    if not s:
        return True, 0
    size = line_size(s)
    if size < MIN_LINE:
        return True, size
    separators = _separators(s)
    if separators >= 2 and size / (separators + 1) <= MENU_ITEM:
        return True, size
    if s.startswith(("|", "- ")) and size < 2 * MIN_LINE:
        cells = [c for c in s.split("|") if c.strip()]
        return s.startswith("- ") or all(line_size(c) < MIN_LINE for c in cells), size
    return False, size


def is_chrome(line: str) -> bool:
    """Whether a line is one that site chrome forms rather than an article's prose."""
    return _judged(line)[0]


def _prose_at_least(s: str) -> int | None:
    """The words of a long line (stripped of its white space), at least, when its first
    :data:`PREFIX` characters show it to be prose; else None (the line is judged in full).

    A line has at least the words of its start (a word there is a word of the line or the
    start of one, a CJK character there is one of the line). So a line that is no list item
    or table row, whose start holds :data:`MIN_LINE` words and more than :data:`MENU_ITEM`
    for each item between the line's separators, is prose as judged in full. Most of an
    article's lines are read so, in about a third of the time."""
    if len(s) <= PREFIX or s.startswith(("|", "- ")):
        return None
    least = line_size(s[:PREFIX])
    if least < MIN_LINE:
        return None
    separators = _separators(s)
    if separators >= 2 and least <= MENU_ITEM * (separators + 1):
        return None
    return least


def strip_chrome(text: str, keep: Callable[[str], bool] | None = None) -> str:
    """The prose lines of ``text`` in order, with the lines ``keep`` accepts, or the whole
    text when they hold fewer than :data:`MIN_KEPT` words."""
    lines: list[str] = []
    kept = 0  # the words of the lines kept; of a long line, at least those of its start
    for line in text.split("\n"):
        s = line.strip()  # once a line, for both readings
        least = _prose_at_least(s)
        if least is not None:
            lines.append(line)
            kept += least
            continue
        chrome, size = _judged_stripped(s)
        if not chrome or (keep is not None and s and keep(line)):
            lines.append(line)
            kept += size
    if kept < MIN_KEPT:  # the long lines' words counted in full
        kept = sum(_judged(line)[1] for line in lines)
    return "\n".join(lines) if kept >= MIN_KEPT else text
