"""The lines of an extracted text that are the article's prose, without the site's chrome.

trafilatura returns a page's main text, but a syndicated article in another site's layout
comes back with some of that site's text around it: a section menu ("全国版 | 安徽省 | 北京市"),
a byline and photo-credit block, a newsletter line, lists of other headlines. Those lines sit
at the start of the text, where the position decay weighs most, and move a copy's fingerprint
past k. Articles are written in sentences and chrome is not, so the lines chrome forms are
left out before the words are read (``docs/quality-history.md``, "Surviving template chrome"):

* lines under :data:`MIN_LINE` words (a CJK character counts a half: two make about a word):
  menu entries, bylines, captions, headlines of other articles, buttons;
* menu lines: two or more separators (``|``, ``>``, ``/``, ``·``, ``»``, single angle quotes,
  bullets) between items of at most four words;
* list items (``- ``) and table rows (``| ``) under twice :data:`MIN_LINE` words whose cells
  are all short: link lists, other headlines, layout tables;
* a list of other articles under its heading ("Related articles", "Most read", "相关推荐",
  "您可能感兴趣的文章", :data:`RELATED_HEADINGS`): the heading and the list items and table
  rows that follow it, however long (a teaser is a headline and its first sentences). A site
  sets such a list beside each of its articles and trafilatura often returns it with the
  article, so one article in two layouts came back with two lists of other headlines and
  their summaries (version 8). A heading is a short line alone ("Read more: <headline>" is
  a link, not a heading), and only what is set as a list under it goes with it. An item
  whose mark stands alone on its line has its text on the next, indented as the page's
  source indents it (version 12); a line that is not indented is read again;
* other headlines with their dates (version 12): a list item that is a headline followed by
  its date stamp ("2019-09-09 18:38", and at most a short section name after it), and a
  line that :data:`STAMPED_RUN` date stamps or more break into pieces of headline length (a
  layout's "latest articles" run into one line: "<headline>2019-09-06<headline>2019-03-27
  ..."). A list that puts the stamp first (a live blog's entries) is not one. Such lines
  are chrome whatever numbers they hold (version 13: :attr:`Verdict.HEADLINES`).

Numbers count no words: a related headline with its date and time is still short. (Judging
each cell of a table row as a line of its own was measured too: it lost Chinese layout moves.)

A text with fewer than :data:`MIN_KEPT` words of prose is kept whole (a short page, a page of
lists or tables): fingerprinting a few surviving lines would match unrelated pages. But a text
with no line of its own, every line a row of a layout table (its cells all short) or a menu
line, gives nothing (:func:`_layout_only`): it is what trafilatura returns of a page whose
own text it missed (a product that a script renders, a short product page in a layout where
every extraction mode returns the site's menus): the site's menus and footer, the same on
every page of the site, which would make all of them one page. A caller may keep chrome
lines that a predicate accepts (the fingerprint keeps lines holding a price
or a spec when numbers are features), except other headlines with their dates, whatever
numbers those hold (version 13: "华为发布麒麟990 5G2019-09-06..." is no spec), and the lists
under a related heading. With such a predicate (numbers are features), the rows of a spec
table are kept too, however short (version 16, :func:`spec_rows`): four rows or more of a
name and a number that is no date, time or counter ("| Weight | 161 |", "| 重量 | 186 |").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import IntEnum

from .numbers import blank_dates
from .segment import CJK_CHARS

#: A line of fewer words than this is chrome.
MIN_LINE = 8
#: Below this many words of prose, the whole text is kept.
MIN_KEPT = 40
#: Words per item, at most, in a line of menu items.
MENU_ITEM = 4

# (X+ written XX*: the same matches, and a search skips to where the class matches; ``re``
# does that for a pattern that opens with a class, not with a repeat of one)
_CJK_RUN = re.compile(f"[{CJK_CHARS}][{CJK_CHARS}]*")
_WORD = re.compile(rf"[^\W_{CJK_CHARS}][^\W_{CJK_CHARS}]*")
_SEPARATOR = re.compile(r"\s[|>/·»›•]\s|[|｜>›»·•]")
# Each of these is a separator wherever it is.
_SEPARATOR_CHARS = "|｜>›»·•"
#: A longer line is first measured on its first so many characters.
PREFIX = 64
# How a list item and a table row start (extraction's marks).
_LISTED = ("- ", "|")

#: The headings of a layout's lists of other articles, case-folded. A heading may go on with
#: a few words ("More from Reuters", "Más leídas de Política"), or, in Chinese or Japanese,
#: a few characters ("您可能感兴趣的文章").
RELATED_HEADINGS: tuple[str, ...] = (
    # English
    "related", "read more", "read next", "read also", "also read", "more stories",
    "more news", "more from", "more in", "more on", "recommended", "we recommend",
    "you may also like", "you might also like", "you may like", "you might like",
    "you may be interested", "most popular", "most read", "most viewed", "most shared",
    "popular", "trending", "top stories", "latest", "editor's picks", "editors' picks",
    "editors picks", "further reading", "featured", "don't miss",
    # German, French, Spanish, Portuguese, Italian, Dutch, Polish, Russian, Turkish
    "empfehlungen", "mehr zum thema", "mehr aus", "mehr von", "meistgelesen",
    "das könnte sie auch interessieren", "das könnte dich auch interessieren",
    "weitere artikel", "lesen sie auch", "auch interessant", "ähnliche artikel",
    "verwandte artikel", "à lire aussi", "a lire aussi", "lire aussi", "les plus lus",
    "sur le même sujet", "articles similaires", "articles liés", "vous aimerez aussi",
    "à voir aussi", "dans la même rubrique", "las más leídas", "lo más leído", "más leídas",
    "más leído", "lo más visto", "te puede interesar", "también te puede interesar",
    "noticias relacionadas", "artículos relacionados", "relacionado", "relacionados",
    "te recomendamos", "lee también", "más noticias", "leia também", "leia mais",
    "mais lidas", "mais lidos", "veja também", "notícias relacionadas", "artigos relacionados",
    "você pode gostar", "leggi anche", "più letti", "articoli correlati",
    "potrebbe interessarti", "ti potrebbe interessare", "notizie correlate", "lees ook",
    "meest gelezen", "gerelateerde artikelen", "czytaj także", "czytaj też", "zobacz także",
    "zobacz też", "najczęściej czytane", "polecamy", "powiązane artykuły", "читайте также",
    "смотрите также", "популярное", "самое популярное", "похожие статьи", "похожие новости",
    "другие новости", "по теме", "рекомендуем", "ilgili haberler", "benzer haberler",
    "çok okunanlar", "bunlar da ilginizi çekebilir",
    # Chinese, Japanese, Korean
    "相关推荐", "相关阅读", "相关文章", "相关新闻", "相关链接", "相关报道", "相关内容",
    "相关专题", "相關新聞", "相關文章", "相關閱讀", "推荐阅读", "推荐新闻", "推荐文章",
    "推薦閱讀", "延伸阅读", "延伸閱讀", "扩展阅读", "猜你喜欢", "猜你喜歡", "您可能感兴趣",
    "你可能感兴趣", "可能感兴趣", "你可能會喜歡", "热门文章", "热门推荐", "热门新闻",
    "热门阅读", "热门排行", "熱門文章", "熱門新聞", "热点新闻", "热点推荐", "热文推荐",
    "点击排行", "跟贴排行", "阅读排行", "排行榜", "最新文章", "精彩推荐", "为您推荐",
    "为你推荐", "更多精彩", "小编推荐", "今日推荐", "往期回顾", "往期推荐", "大家都在看",
    "関連記事", "関連ニュース", "おすすめ記事", "人気記事", "人気ランキング",
    "アクセスランキング", "注目記事", "あわせて読みたい", "관련기사", "관련 기사",
    "많이 본 뉴스", "인기 기사", "추천 기사",
)  # fmt: skip
#: A heading is at most this many characters.
HEADING_CHARS = 40
_WORD_HEADINGS = "|".join(re.escape(h) for h in RELATED_HEADINGS if not _CJK_RUN.search(h))
_CJK_HEADINGS = "|".join(re.escape(h) for h in RELATED_HEADINGS if _CJK_RUN.search(h))
_RELATED_HEADING = re.compile(rf"(?:{_WORD_HEADINGS})(?:\s.*)?|(?:{_CJK_HEADINGS}).*", re.DOTALL)
# What may surround a heading: white space, list marks, brackets, arrows, a closing colon.
_HEADING_TRIM = " \t\u3000-–—#*>»›|[]【】()（）:：.…"
_HEADING_FIRST = frozenset(h[0] for h in RELATED_HEADINGS)
_TEASER_LINK = re.compile(r"[:：]\s*\S")
# A date stamp that a list of other articles sets beside each headline: 2019-09-09 or
# 2019/09/09 (a time after it or not), or a month and a day with a time: 09-09 18:38. A
# date followed by a full stop ends a sentence ("Retrieved 2016-05-01.") and is none. (The
# pattern opens with a digit, and looks behind it only then: a search skips to the digits,
# three times as fast over the long lines of prose as a pattern opening with the look.)
_STAMP = re.compile(
    r"\d(?<![\d/-]\d)(?:\d{3}([-/])\d{1,2}\1\d{1,2}(?:\s*\d{1,2}:\d{2}(?::\d{2})?)?"
    r"|\d?-\d{1,2}\s+\d{1,2}:\d{2})(?![\d/.-])"
)
#: A line broken by this many date stamps or more into pieces of fewer than twice
#: :data:`MIN_LINE` words is a run of other headlines.
STAMPED_RUN = 3
#: A listed headline before its date stamp has fewer words than this.
HEADLINE = 3 * MIN_LINE


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


def _filled_cells(s: str) -> list[str]:
    """The cells of a table row (a line split at ``|``) that hold something."""
    return [cell for cell in s.split("|") if cell.strip()]


def _separators(s: str) -> int:
    """How many separators a line holds (the matches of ``_SEPARATOR``)."""
    if "/" in s:  # a slash is one only between white space
        return len(_SEPARATOR.findall(s))
    return sum(map(s.count, _SEPARATOR_CHARS))


def _is_menu(s: str, size: int) -> bool:
    """Whether a stripped line of ``size`` words is a menu line: two separators or more
    between items of at most :data:`MENU_ITEM` words."""
    separators = _separators(s)
    return separators >= 2 and size / (separators + 1) <= MENU_ITEM


class Verdict(IntEnum):
    """What a line is. Only :attr:`PROSE` is false."""

    PROSE = 0
    #: Chrome that a caller's predicate may keep (a short spec line with its price).
    CHROME = 1
    #: Other headlines with their dates: chrome whatever numbers they hold ("麒麟990 5G
    #: 2019-09-06"), never kept by a caller's predicate (version 13).
    HEADLINES = 2


def _judged(line: str) -> tuple[Verdict, int]:
    """What a line is, and its size in words."""
    return _judged_stripped(line.strip())


def _judged_stripped(s: str) -> tuple[Verdict, int]:
    """:func:`_judged` of a line stripped of its white space."""
    if not s:
        return Verdict.CHROME, 0
    size = line_size(s)
    if size < MIN_LINE:
        return Verdict.CHROME, size
    if _is_menu(s, size):
        return Verdict.CHROME, size
    if _is_stamped_run(s, size) or (s.startswith("- ") and _is_dated_headline(s)):
        return Verdict.HEADLINES, size
    if s.startswith(_LISTED) and size < 2 * MIN_LINE:
        cells = _filled_cells(s)
        listed = s.startswith("- ") or all(line_size(c) < MIN_LINE for c in cells)
        return Verdict.CHROME if listed else Verdict.PROSE, size
    return Verdict.PROSE, size


def _stamps(s: str) -> int:
    """How many date stamps a line holds (0 when it has too few hyphens and slashes to
    hold :data:`STAMPED_RUN`: most lines are told so without the pattern)."""
    if s.count("-") + s.count("/") < STAMPED_RUN:
        return 0
    return len(_STAMP.findall(s))


def _is_stamped_run(s: str, size: int) -> bool:
    """Whether a line is other headlines run together, each with its date stamp."""
    stamps = _stamps(s)
    return stamps >= STAMPED_RUN and size / (stamps + 1) < 2 * MIN_LINE


def _is_dated_headline(s: str) -> bool:
    """Whether a list item (``- ``) is a headline and its date stamp: a few words and
    fewer than :data:`HEADLINE` before its last stamp, fewer than :data:`MIN_LINE` after."""
    stamps = list(_STAMP.finditer(s))
    if not stamps:
        return False
    last = stamps[-1]
    return 2 <= line_size(s[2 : last.start()]) < HEADLINE and line_size(s[last.end() :]) < MIN_LINE


def is_chrome(line: str) -> bool:
    """Whether a line is one that site chrome forms rather than an article's prose."""
    return bool(_judged(line)[0])


def is_related_heading(line: str) -> bool:
    """Whether a line is the heading of a list of other articles (:data:`RELATED_HEADINGS`):
    short, alone, and no link after a colon."""
    s = line.strip()
    if not s or len(s) > HEADING_CHARS:
        return False
    heading = s.strip(_HEADING_TRIM).casefold()
    if not heading or heading[0] not in _HEADING_FIRST or _TEASER_LINK.search(s):
        return False  # (most short lines before a list are menu items: told by their start)
    return line_size(heading) < MIN_LINE and _RELATED_HEADING.fullmatch(heading) is not None


def _in_list(s: str) -> bool:
    """Whether a stripped line goes on a list under a heading: a list item, a table row, or
    nothing (an empty line, a bare list mark)."""
    return not s or s == "-" or s.startswith(_LISTED)


def _prose_at_least(s: str) -> int | None:
    """The words of a long line (stripped of its white space), at least, when its first
    :data:`PREFIX` characters show it to be prose; else None (the line is judged in full).

    A line has at least the words of its start (a word there is a word of the line or the
    start of one, a CJK character there is one of the line). So a line that is no list item
    or table row and holds fewer than :data:`STAMPED_RUN` date stamps, whose start holds
    :data:`MIN_LINE` words and more than :data:`MENU_ITEM` for each item between the line's
    separators, is prose as judged in full. Most of an article's lines are read so, in
    about a third of the time."""
    if len(s) <= PREFIX or s.startswith(_LISTED) or _stamps(s) >= STAMPED_RUN:
        return None
    least = line_size(s[:PREFIX])
    if least < MIN_LINE:
        return None
    separators = _separators(s)
    if separators >= 2 and least <= MENU_ITEM * (separators + 1):
        return None
    return least


#: A data table is a run of at least this many table rows...
DATA_ROWS = 6
#: ... each with at least this many cells that hold something.
DATA_CELLS = 3


def data_table_words(text: str) -> int:
    """The words (as :func:`line_size` counts them) of the data tables of ``text``: runs of at
    least :data:`DATA_ROWS` table rows of at least :data:`DATA_CELLS` filled cells each (a
    league table, a schedule, a discography; not a layout's menu row or a list of headlines
    with their dates). Rows of short cells are chrome to :func:`strip_chrome`, whatever
    table they are in (but those of a spec table with number features, :func:`spec_rows`);
    the page signature counts these words in its length (version 15)."""
    if "|" not in text:  # no table rows (most texts: one search)
        return 0
    words = 0
    run: list[int] = []  # the sizes of the rows of the current run
    for line in [*text.split("\n"), ""]:
        s = line.strip()
        if s.startswith("|") and len(_filled_cells(s)) >= DATA_CELLS:
            run.append(line_size(s))
            continue
        if len(run) >= DATA_ROWS:
            words += sum(run)
        run = []
    return words


#: A spec table is a run of at least this many rows of a name and its number...
SPEC_ROWS = 4
# ... each of two filled cells: a name (a word in it, no digit first) and a number first
# (and a table's rule line between its rows, "|---|---|", breaks no run).
_RULE_ROW = re.compile(r"\|[\s|:-]*")
_LETTER = re.compile(r"[^\W\d_]")
_DIGIT = re.compile(r"\d")


def _is_spec_row(s: str) -> bool:
    """Whether a stripped line is a table row of a name and its value, the value a number
    that is no date, time, year or counter ("| Weight | 161 g |", "| 重量 | 180 |"; not a
    headline and its date, "| Council approves budget | 2019-09-01 |")."""
    if not s.startswith("|"):
        return False
    pieces = s.split("|")
    filled = [i for i, piece in enumerate(pieces) if piece.strip()]
    if len(filled) != 2:
        return False
    name, value = pieces[filled[0]].strip(), pieces[filled[1]].strip()
    if not value[:1].isdecimal() or name[:1].isdecimal() or _LETTER.search(name) is None:
        return False
    # the row read as the numbers' rules read it: its name may make the value a counter
    # (blanking turns digits into spaces and leaves every "|": the same cells)
    blanked = blank_dates(s.casefold()).split("|")
    return _DIGIT.search(blanked[filled[1]]) is not None


def spec_rows(lines: list[str]) -> set[int]:
    """The indexes of the lines that are rows of a spec table: runs of at least
    :data:`SPEC_ROWS` rows each of a name and a number (a product's specifications, a
    fact box). Their numbers are the page's content, however short the rows (version 16):
    two products of one description differ in them."""
    found: set[int] = set()
    run: list[int] = []
    for i, line in enumerate([*lines, ""]):
        s = line.strip()
        if s.startswith("|") and _is_spec_row(s):
            run.append(i)
            continue
        if run and s.startswith("|") and _RULE_ROW.fullmatch(s):
            continue
        if len(run) >= SPEC_ROWS:
            found.update(run)
        run = []
    return found


def strip_chrome(text: str, keep: Callable[[str], bool] | None = None) -> str:
    """The prose lines of ``text`` in order, with the chrome lines ``keep`` accepts and,
    when there is a ``keep``, the rows of a spec table (:func:`spec_rows`); never other
    headlines with their dates (:attr:`Verdict.HEADLINES`). Or the whole text when
    they hold fewer than :data:`MIN_KEPT` words, but nothing when none is kept and every
    line is a layout table's row or a menu line (:func:`_layout_only`). A list of other
    articles under its heading is left out whole."""
    lines: list[str] = []
    kept = 0  # the words of the lines kept; of a long line, at least those of its start
    related = False  # in a list of other articles, under its heading
    marked = False  # after such a list's bare item mark: an indented line is the item's text
    heading = ""  # the last short chrome line, while no other line has come since
    split = text.split("\n")
    # with numbers kept, the rows of a spec table are too (none without a table row)
    specs = spec_rows(split) if keep is not None and "|" in text else ()
    for i, line in enumerate(split):
        s = line.strip()  # once a line, for both readings
        if related or (heading and s and _in_list(s) and is_related_heading(heading)):
            # (a heading is looked up only where a list follows it)
            if _in_list(s) or (marked and line[:1].isspace()):
                related = True
                marked = s == "-" or (marked and not s)
                continue
            related = marked = False
        if s:
            heading = ""
        least = _prose_at_least(s)
        if least is not None:
            lines.append(line)
            kept += least
            continue
        verdict, size = _judged_stripped(s)
        if not verdict or (
            verdict is Verdict.CHROME and keep is not None and s and (i in specs or keep(line))
        ):
            lines.append(line)
            kept += size
        elif s and size < MIN_LINE:
            heading = s
    if kept < MIN_KEPT:  # the long lines' words counted in full
        kept = sum(_judged(line)[1] for line in lines)
    if kept >= MIN_KEPT:
        return "\n".join(lines)
    if not lines and _layout_only(split):  # (a line kept always holds something)
        return ""  # nothing of the page's own: no text to fingerprint
    return text


def _layout_only(lines: list[str]) -> bool:
    """Whether every line that holds something is a row of a layout table (its cells all
    short) or a menu line: what trafilatura returns of a page whose own text it missed, the
    site's menus and footer laid out in tables, the same on every page of the site. Short
    lines of their own (a poem, a list of points) are not."""
    for line in lines:
        s = line.strip()
        if not s:
            continue
        verdict, size = _judged_stripped(s)
        if verdict is not Verdict.CHROME:
            return False
        # (a table row the verdict calls chrome is a row of short cells)
        if not (s.startswith("|") or _is_menu(s, size)):
            return False
    return True
