"""Which numbers of a text are features: the ones that tell two pages apart, not the ones that
change between copies of one page.

Two product pages that differ only in their price and specs, or two match reports that differ
only in their score, are different pages; version 2 left every number out and merged them. But
the numbers of a page also include its dates, times and counters (views, comments, "3 hours
ago", page counts), which differ between two copies of one article crawled on other days or in
other layouts, and the numbers of the site's footer, which differ between two layouts of one
article: telephone numbers (version 5; since version 11 also any number after a word that
names one, "Tel.:", "Fon", "电话", however it is written), postal codes after their label
("邮编") and the registration numbers Chinese sites show (京ICP备..., 公网安备..., a licence
number; version 11). So a number counts, unless it sits in one of those: :func:`blank_dates`
removes the digits of dates, times, durations, counters, telephone, postal and registration
numbers from a normalized (NFKC, case-folded) text before its words are read, and what digits
remain are features.

:func:`has_quantity` tells whether a line carries a measured number (a price, a size, a
percentage, a score): the chrome filter keeps such short lines and table rows, where product
specs live, when numbers are features.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Month names and their usual abbreviations, in the languages of the pages we see most
# (English, German, French, Spanish, Portuguese, Italian, Dutch, Polish and Russian genitives).
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|"
    "januar|jänner|februar|märz|mai|juni|juli|oktober|dezember|"
    "janvier|février|fevrier|mars|avril|juin|juillet|août|aout|septembre|octobre|novembre|"
    "décembre|decembre|"
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|"
    "diciembre|"
    "janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|"
    "gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre|"
    "januari|februari|maart|augustus|"
    "stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|września|października|"
    "listopada|grudnia|"
    "января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря"
)
# Units of time: a number before one is a time, a duration or an age ("3 hours ago",
# "5 min read", "vor 2 Stunden"), which changes from one copy or crawl of a page to the next.
_TIME_UNITS = (
    "seconds?|secs?|minutes?|mins?|hours?|hrs?|h|days?|weeks?|wks?|months?|years?|yrs?|"
    "sekunden|minuten|stunden?|tagen?|wochen?|monaten?|jahren?|"
    "secondes?|heures?|jours?|semaines?|mois|ans|"
    "segundos?|minutos?|horas?|días?|dias?|semanas?|meses|años?|anos?|"
    "secondi|minuti|ore|giorni|settimane|mesi|anni|"
    "минут[ауы]?|час(?:а|ов)?|дн(?:я|ей)|недел[ьи]|месяц(?:а|ев)?|лет|год(?:а)?"
)
# Counters a page shows beside its text, by the word that names them.
_COUNTERS = (
    "comments?|views?|likes?|shares?|replies|reply|reads?|retweets?|reposts?|reactions?|"
    "votes?|upvotes?|followers?|subscribers?|claps?|responses?|bookmarks?|favou?rites?|"
    "downloads?|plays?|listens?|reviews?|ratings?|"
    "kommentare?|aufrufe|commentaires?|vues|comentarios?|comentários?|commenti|visualizações"
)
_CJK_COUNTERS = (
    "阅读|閱讀|评论|評論|点赞|點贊|赞|讚|浏览|瀏覽|参与|參與|转发|轉發|收藏|分享|关注|關注|"
    "粉丝|粉絲|播放|回复|回覆|跟贴|跟帖|围观|圍觀|点击|點擊|热度|人气|人氣|조회수?|댓글"
)
# Words that name a picture or a page in a counter ("page 2 of 5", "photo 3/10").
_PAGE_WORDS = "page|pg|photo|image|picture|pic|slide|seite|página|pagina"
# Words that name a telephone or fax number on a contact line ("Tel.: 030 1234 5678").
_PHONE_WORDS = "tel|phone|fax|fon|mobil|telefon|telefax|telefone|telefono|teléfono|téléphone|tél"
# ... and in Chinese (手机, a mobile phone, is also what a product page sells: left out).
_CJK_PHONE_WORDS = "电话|電話|传真|傳真|热线|熱線"
# The labels of a Chinese site's registration numbers (what follows "ICP", a public security
# filing, a licence) and of a postal code.
_AFTER_ICP = "备備证證"
_SECURITY_WORDS = "公网安备|公網安備"
_LICENCE_WORDS = "许可证|許可證"
_POSTAL_WORDS = "邮编|郵編|邮政编码|郵政編碼"
_NUM = r"\d+(?:[.,]\d+)*"
_ORD = r"(?:st|nd|rd|th|er|e|º|ª|\.)?"


def _initials(*alternations: str) -> str:
    """The first characters of the words of ``|``-separated alternations, sorted."""
    return "".join(sorted({word[0] for a in alternations for word in a.split("|")}))


# Where one of the patterns below can begin: at a digit, a bracket, a plus, 第 or 共, the first
# character of a CJK counter, or a word boundary before the first letter of a month, counter
# or page word whose letters are followed by a digit, with nothing but punctuation and white
# space between (each pattern that begins with such a word has at most a full stop, a colon
# or a bracket and white space between the word and its number). A lookahead for these
# before the alternation skips every other position at the cost of one test, where the
# alternation would try each of its patterns there: the same matches, found about twice as
# fast (and a word followed by no number costs a scan of its letters, not the alternation).
_STARTS_AT = r"\d(\[+"  # characters a match can begin with (a character class's body)
# ... and, in a text with CJK letters, these
_CJK_LABELS = _initials(
    _CJK_COUNTERS, _CJK_PHONE_WORDS, _SECURITY_WORDS, _LICENCE_WORDS, _POSTAL_WORDS
)
_STARTS_CJK = f"第共{_AFTER_ICP}{_CJK_LABELS}"
_STARTS_WORD = rf"\b[{_initials(_MONTHS, _COUNTERS, _PAGE_WORDS, _PHONE_WORDS)}][^\W\d_]*\W*\d"
# Dates, times, durations, counters, telephone, postal and registration numbers, one
# alternation, each pattern with the script its every match holds a letter of: "latin" (a
# Latin or Cyrillic letter: a month, a unit, a counter word, am/pm, a telephone word), "cjk"
# (a CJK ideograph or a Hangul syllable), or None (digits and punctuation alone).
_DATE_PATTERNS: tuple[tuple[str, str | None], ...] = (
    # 2024-11-19, 2024/11/19, 2024.11.19 (and a time after a T)
    (r"(?<![\d.,])\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:t\d{1,2}:\d{2}(?::\d{2})?)?(?!\d)", None),
    # 19.11.2024, 11/19/24, 19-11-2024
    (r"(?<![\d.,])\d{1,2}[-/.]\d{1,2}[-/.](?:\d{4}|\d{2})(?!\d)", None),
    # November 19, Nov. 19th; 19 November, 19. November, 19 de noviembre, 19 ноября
    (rf"\b(?:{_MONTHS})\.?\s*\d{{1,2}}{_ORD}(?!\d)", "latin"),
    (rf"(?<![\d.,])\d{{1,2}}{_ORD}\s*(?:of\s+|de\s+)?(?:{_MONTHS})\b", "latin"),
    # times: 10:45, 10:45:12, 10.45am, 3 p.m., 14h30; a time's fraction of a second with it
    # (a race's 1:46,47 or 10:58.94; version 17)
    (r"(?<![\d:.,])\d{1,2}:\d{2}(?::\d{2})?(?:[.,]\d{1,3})?(?![\d:])", None),
    (r"(?<![\d.,])\d{1,2}(?:[.:]\d{2})?\s*[ap]\.?m\b\.?", "latin"),
    (r"(?<![\d.,])\d{1,2}h\d{2}(?!\d)", "latin"),
    # durations and relative times: 3 hours ago, 5 min read, vor 2 Stunden
    (rf"(?<![\d.,]){_NUM}\s*(?:{_TIME_UNITS})\b", "latin"),
    # counters: 12 comments, 1.2k views, comments (12), views: 1,234
    (rf"(?<![\d.,]){_NUM}\s*[km]?\s*(?:{_COUNTERS})\b", "latin"),
    # (and a table's cells: | views | 1234 |; version 16)
    (rf"\b(?:{_COUNTERS})\s*[:(|]?\s*{_NUM}\s*[km]?\b", "latin"),
    # page and picture counters: page 2 of 5, photo 3/10, (1/5)
    (rf"\b(?:{_PAGE_WORDS})\.?\s*{_NUM}(?:\s*(?:of|/|von|de|di)\s*{_NUM})?", "latin"),
    (rf"[(\[]\s*{_NUM}\s*/\s*{_NUM}\s*[)\]]", None),
    # CJK dates and times: 2024年11月19日, 11月19号, 下午3点20分, 10時30分, 3小时前
    (r"\d{1,2}\s*月\s*\d{1,2}\s*[日号號]", "cjk"),
    (r"\d+\s*[年月日년월일]", "cjk"),
    (r"\d{1,2}\s*[点點時时시]\s*(?:\d{1,2}\s*[分분])?(?:\s*\d{1,2}\s*[秒초])?", "cjk"),
    (r"\d+\s*(?:秒|分钟|分鐘|小时|小時|个小时|個小時|天|周|週|个月|個月|초|분|시간)", "cjk"),
    # CJK counters: 阅读 1234, 评论(12), 1.2万阅读, 36人参与, 12条评论; page counts
    (rf"(?:{_CJK_COUNTERS})(?:量|数|數|次数|次數)?\s*[:：(（|]?\s*{_NUM}\s*[万萬千wk]?", "cjk"),
    (rf"{_NUM}\s*[万萬千wk]?\s*[人次条條个個]?\s*(?:{_CJK_COUNTERS})", "cjk"),
    (rf"[第共]\s*{_NUM}\s*[页頁张張幅条條]", "cjk"),
    (rf"{_NUM}\s*/\s*{_NUM}\s*[页頁]", "cjk"),
    # a list's short dates beside its headlines: (04-19), [11-05] (a score of two
    # two-digit numbers in brackets that could be a month and a day reads as one too)
    (r"[(\[]\s*(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\s*[)\]]", None),
    # telephone numbers, of a page's contact lines rather than its content:
    # 010-56807194, (555) 123-4567, 555-123-4567, +86 10 5680 7194
    (r"(?<![\d.,-])0\d{2,3}-\d{7,8}(?![\d-])", None),
    (r"\(\d{3}\)\s*\d{3}-\d{4}(?![\d-])", None),
    (r"(?<![\d.,-])\d{3}-\d{3}-\d{4}(?![\d-])", None),
    (r"\+\d{1,3}[\s-]\d{1,4}(?:[\s-]\d{2,4}){2,4}(?![\d-])", None),
    # numbers after the word that names them a telephone or fax number, however written:
    # tel.: 030 1234 5678, phone 555.123.4567, 电话：010--61234567 010--61234568
    (rf"\b(?:{_PHONE_WORDS})\b\.?\s*:?\s*\+?\(?\d[\d\s()./-]{{5,}}\d", "latin"),
    (rf"(?:{_CJK_PHONE_WORDS})\s*(?:号码|號碼)?\s*:?\s*\+?\(?\d[\d\s()+-]{{3,}}\d", "cjk"),
    # a site's registration numbers in its footer (京ICP备12345678号-1, ICP证:京B2-20990002,
    # 京公网安备 11000002099999号, 经营许可证编号:滇B-2-4-20990001) and postal codes
    (rf"(?<=icp)[{_AFTER_ICP}]\s*:?\s*[^\W\d_]{{0,2}}\d[\d-]*(?:[号號]-\d+)?", "cjk"),
    (rf"(?:{_SECURITY_WORDS})\s*\d+", "cjk"),
    (
        rf"(?:{_LICENCE_WORDS})(?:编号|編號|号|號)?\s*:?\s*[^\W\d_]{{0,3}}[-〔\[(]?\d[\d\-()\[\]〔〕]*",
        "cjk",
    ),
    (rf"(?:{_POSTAL_WORDS})\s*:?\s*\d{{6}}", "cjk"),
)
# Every letter the "latin" patterns can match (case-folded Latin, its accented letters and
# Cyrillic), and every character of the "cjk" patterns' scripts.
_LATIN = re.compile("[a-z\u00c0-\u024f\u0400-\u04ff]")
_CJK_OR_HANGUL = re.compile("[\u4e00-\u9fff\uac00-\ud7a3]")


def _from_run_start(pattern: str) -> str:
    """``pattern``, tried only where a run of digits (a number with its separators, for a
    pattern that reads one) begins, when it reads such a run from wherever it begins."""
    if pattern.startswith(_NUM):
        return rf"(?<!\d)(?<!\d[.,]){pattern}"
    if pattern.startswith(r"\d+"):
        return rf"(?<!\d){pattern}"
    return pattern


def _datelike(latin: bool, cjk: bool, run_starts: bool = False) -> re.Pattern[str]:
    """The patterns that can match a text with Latin letters or not, with CJK ones or not,
    in their order, behind the lookahead for where they begin: a text that holds no letter
    of a script has the same matches without that script's patterns. With ``run_starts``,
    a pattern that reads a run of digits from wherever it begins is tried only at a run's
    start (:func:`_datelike_sub`)."""
    scripts = {None, "latin" if latin else None, "cjk" if cjk else None}
    patterns = [pattern for pattern, script in _DATE_PATTERNS if script in scripts]
    if run_starts:
        patterns = [_from_run_start(pattern) for pattern in patterns]
    starts = f"[{_STARTS_AT}{_STARTS_CJK if cjk else ''}]"
    if latin:
        starts = f"{starts}|{_STARTS_WORD}"
    return re.compile(f"(?={starts})(?:{'|'.join(patterns)})")


# The alternation for a text, by (it holds a Latin letter, it holds a CJK one).
_DATELIKE = {
    (latin, cjk): _datelike(latin, cjk) for latin in (False, True) for cjk in (False, True)
}
# The same, each pattern that reads a run of digits from wherever it begins (``\d+``, or a
# number with its separators, first; nothing looked at behind it: 年, 阅读 or 页 after
# digits) tried only where the run begins. Tried at each digit, such a pattern reads the
# rest of the run before it fails: the digits of pi on a Chinese page (a run of thousands),
# or a lottery's numbers run together with commas, cost the run's length squared (8,000
# digits took 11 s). Where the alternation failed at the digit before (or at the digit
# before a separator), such a pattern fails too: it would have matched there, with one
# digit (or a digit and the separator) more. So it is left out exactly where the scan went
# past that digit; only just after a match (:func:`_datelike_sub`) was it not tried.
_DATELIKE_RUN_STARTS = {
    (latin, cjk): _datelike(latin, cjk, run_starts=True)
    for latin in (False, True)
    for cjk in (False, True)
}


def _hides(text: str, end: int) -> bool:
    """Whether, after a match ending at ``end``, the patterns tried only at a run's start may
    pass over a match that the whole alternation finds at ``end`` or the position after it:
    ``end`` in a run of digits (a postal code's six digits, then more), or at a separator
    between digits, or at a digit after one (the digits before it were the match's, and
    were not tried)."""
    after = text[end : end + 2]
    if not after or not (after[0].isdecimal() or after[0] in ".,"):
        return False
    before = text[max(0, end - 2) : end]
    if after[0] in ".,":
        return before[-1:].isdecimal() and after[1:].isdecimal()
    return before[-1:].isdecimal() or (before[-1:] in (".", ",") and before[:1].isdecimal())


def _datelike_sub(text: str, repl: Callable[[re.Match[str]], str]) -> str:
    """``_datelike_in(text).sub(repl, text)``, in time linear in the runs of digits: by
    the patterns tried only at a run's start (:data:`_DATELIKE_RUN_STARTS`), the whole
    alternation tried where a match ends in a run of digits or a number (and just after)."""
    scripts = _LATIN.search(text) is not None, _CJK_OR_HANGUL.search(text) is not None
    hidden = False

    def seen(match: re.Match[str]) -> str:
        nonlocal hidden
        hidden = hidden or _hides(text, match.end())
        return repl(match)

    fast = _DATELIKE_RUN_STARTS[scripts]
    done = fast.sub(seen, text)
    if not hidden:  # (most texts: no match ends in a number)
        return done
    # the scan again, the whole alternation tried where a match ended in a number
    whole = _DATELIKE[scripts]
    pieces: list[str] = []
    done_at = at = 0  # text[:done_at] is in pieces; the scan goes on at ``at``
    while (match := fast.search(text, at)) is not None:
        while match is not None:
            pieces += [text[done_at : match.start()], repl(match)]
            done_at = at = match.end()
            match = None
            if _hides(text, at):
                match = whole.match(text, at) or whole.match(text, at + 1)
                at += 2  # (both tried by the whole alternation)
    pieces.append(text[done_at:])
    return "".join(pieces)


def _datelike_in(text: str) -> re.Pattern[str]:
    """The alternation for ``text``: a window of an English page is tried for no 年, 阅读 or
    小时 at each of its digits (a third less time), a Chinese one for no month name."""
    return _DATELIKE[_LATIN.search(text) is not None, _CJK_OR_HANGUL.search(text) is not None]


_CURRENCY = r"[$€£¥￥₹₩₽]|us\$|usd|eur|gbp|rmb|cny|rs\.?"
# Units a measured number is written with. Words that are also common short words in some
# language ("in", "a", "t", "l", "w", "mi") are left out: after a number they more often
# start the next phrase than name a unit.
_UNITS = (
    "%|‰|°|"
    "mm|cm|m|km|inch|inches|ft|feet|miles?|kg|g|mg|lbs?|oz|tons?|tonnes?|ml|gal|"
    "mph|km/h|kmh|kph|hz|khz|mhz|ghz|kb|mb|gb|tb|kbps|mbps|gbps|kw|kwh|mah|wh|"
    "px|pixels?|mp|megapixels?|fps|dpi|ppi|nits|db|rpm|cc|hp|bhp|cores?|"
    "dollars?|euros?|pounds?|yen|yuan|usd|eur|gbp|cny|"
    "元|美元|欧元|歐元|英镑|英鎊|日元|万元|萬元|亿元|億元|块|塊|英寸|寸|厘米|毫米|米|公里|千米|"
    "克|千克|公斤|斤|吨|噸|升|毫升|瓦|千瓦|伏|毫安时|毫安時|毫安|像素|万像素|萬像素|核|赫兹|帧|幀|"
    "平方米|平米|度|円|원"
)
# Units after which a four-digit number is a size or a price, not a year ("2048 GB").
_YEAR_UNITS = (
    "%|gb|mb|tb|mah|mm|cm|km|kg|px|pixels?|mhz|ghz|dollars?|euros?|yuan|元|美元|毫安时|像素"
)
# A year on its own (in a byline, a copyright line); not a price or a size that looks like one.
_YEAR = re.compile(
    rf"(?<![\d.,$€£¥￥₹₩₽])(?:1[89]|20)\d\d(?![\d.,]?\d)(?!\s*(?:{_YEAR_UNITS})(?![^\W\d_]))"
)
_DIGITS = re.compile(r"\d+(?:st|nd|rd|th)?")
# (\d+ written \d\d*: the same matches, and a search skips to the next digit; ``re`` does
# that for a pattern that opens with a character class, not with a repeat of one)
_DIGIT = re.compile(r"\d\d*")
# Characters either side of a digit that the date and counter patterns may read.
_MARGIN = 40
# A stretch of digits, with the digits after it that are at most two margins away (found
# by the pattern, not by a loop over every number of a page).
_NEAR_DIGITS = re.compile(rf"\d\d*(?:\D{{0,{2 * _MARGIN}}}\d+)*")
_QUANTITY = re.compile(
    rf"(?:{_CURRENCY})\s*\d"
    rf"|\d\s*(?:{_UNITS})(?![^\W\d_])"
    r"|(?<![\d.,])\d+[.,]\d+(?![\d.,]?\d)"
    r"|(?<![\d.,:])\d{1,3}\s*(?:-|–|:|比)\s*\d{1,3}(?![\d.,:])"
    # a table row's number whose unit is in the name cell ("| weight (g) | 161 |"; version 16)
    rf"|[(\[]\s*(?:{_UNITS}|{_CURRENCY})\s*[)\]]\s*\|\s*\d"
)


def _blank(match: re.Match[str]) -> str:
    return _DIGITS.sub(" ", match.group())


def _spaces(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _blank_in_place(match: re.Match[str]) -> str:
    return _DIGITS.sub(_spaces, match.group())


def blank_dates(text: str, keep_length: bool = False) -> str:
    """``text`` (normalized: NFKC, case-folded) with the digits of its dates, times, years,
    durations and counters replaced by spaces, so that what digits remain are the numbers
    that belong to the page's content. Words are left in place. With ``keep_length``, each
    character blanked becomes one space (the text keeps its length, and every position its
    place); else each run of them becomes one space. The words read from either are the
    same.

    The patterns only read the text around digits: one alternation of them tried at every
    position of a page costs more than its segmentation, so they run on windows of
    :data:`_MARGIN` characters either side of each stretch of digits (wider than any
    pattern reaches from a digit)."""
    pieces: list[str] = []
    done = 0  # text[:done] is in pieces
    for near in _NEAR_DIGITS.finditer(text):  # one window each
        lo, hi = max(done, near.start() - _MARGIN), min(len(text), near.end() + _MARGIN)
        window = text[lo:hi]
        if keep_length:
            window = _YEAR.sub(_spaces, _datelike_sub(window, _blank_in_place))
        else:
            window = _YEAR.sub(" ", _datelike_sub(window, _blank))
        pieces += [text[done:lo], window]
        done = hi
    if not pieces:
        return text
    pieces.append(text[done:])
    return "".join(pieces)


def has_quantity(line: str) -> bool:
    """Whether a line (normalized) holds a measured number once its dates and counters are
    left out: a price, a number with a unit or a percent sign, a decimal, a score."""
    if _DIGIT.search(line) is None:  # every quantity holds a decimal digit
        return False
    return _QUANTITY.search(blank_dates(line)) is not None
