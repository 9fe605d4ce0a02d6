"""The chrome-line filter and the number rules of fingerprint version 3: what they leave out,
what they keep, in English and Chinese."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scrapy_simhash import Fingerprinter, hamming, page_signature
from scrapy_simhash.text import chrome, numbers
from scrapy_simhash.text.chrome import (
    MIN_KEPT,
    Verdict,
    _judged,
    is_chrome,
    is_related_heading,
    line_size,
    strip_chrome,
)
from scrapy_simhash.text.fingerprint import normalize
from scrapy_simhash.text.numbers import blank_dates, has_quantity

from .test_signature import PARAGRAPHS

PROSE_EN = (
    "The city council voted on Tuesday to extend the tram line across the river, ending a "
    "debate that had divided the neighbourhoods on both banks for more than a decade."
)
PROSE_ZH = (
    "市政府周二召开新闻发布会，宣布将在明年春季启动老城区供水管网改造工程，预计惠及沿线居民。"
)


# ---------------------------------------------------------------- chrome lines


def test_line_size_counts_words_cjk_halves_and_no_numbers() -> None:
    assert line_size("one two three") == 3
    assert line_size("国家气象中心") == 3  # six characters, about three words
    assert line_size("2019-09-09 19:28 12 comments") == 1  # numbers make no words


@pytest.mark.parametrize(
    "line",
    [
        "",
        "Sign up for our newsletter",  # short
        "By Jane Smith, AFP/Getty Images",
        "全国版 | 安徽省 | 北京市 | 天津市 | 河北省 | 山西省",  # a menu
        "Home > World > Europe > Politics > Elections > Results",
        "News · Sport · Business · Culture · Travel · Opinion · Video",
        "- Ten things to know about the tram line before it opens",  # a list item
        "- 国旗在小桥流水的古镇飘扬 2019-09-09 18:38",  # a headline with its date
        "| Home | World news | Business and markets | Sport results |",  # a link table
        "热点新闻",
        "  - 万元背包遗落请店方暂存，4个月后竟然被扔了… 2019-09-09 19:28 中国雷人秀",
        # other headlines with their dates (version 12): a list item however long its
        # headline, a section's name after the stamp or not, and headlines run into one line
        "- 老城区供水管网改造工程明年春季启动，施工期间部分街道将分段停水，居民可提前储水 "
        "2019-09-09 18:38 城市建设",
        "- The council votes to extend the tram line across the river after a decade of "
        "debate between the two banks 2019/09/09",
        "- 港口渡轮时刻表下周一起调整，早晚高峰加开班次，夜间末班船延后半小时，"
        "周末增开两班观光船 09-09 17:55",
        "编辑推荐 渡轮时刻表下周一起调整，早晚高峰加开班次2019-09-06救生艇队员在海角救起"
        "两名皮划艇爱好者2019-03-27通往医院的新公交线路本月开通，沿途设置八个站点"
        "2018-12-05老街夜市重新开张",
    ],
)
def test_chrome_lines_are_recognised(line: str) -> None:
    assert is_chrome(line)


@pytest.mark.parametrize(
    "line",
    [
        PROSE_EN,
        PROSE_ZH,
        "He said the plan, first proposed in 2009, would cost less than the bridge it replaces.",
        # a sentence with a slash or two is still prose
        "Residents of the east and west banks and/or their representatives will vote in June.",
        "- The new line will run every six minutes at peak hours and every ten in the evening "
        "from the central station to the airport.",
        # dates in prose: two in a sentence, one ending a sentence in a list, and a live
        # blog's entry that puts its stamp first (version 12 leaves those in)
        "The first phase ran from 2019-01-01 to 2019-06-30, and the council expects the "
        "second to finish before the winter timetable starts.",
        "- The council said the bridge, closed for repairs since the spring floods, opened to "
        "traffic again on 2019-09-09.",
        "- 2019-09-09 18:38 Police closed the bridge to traffic after a lorry lost its load "
        "on the approach road from the ring road",
    ],
)
def test_prose_lines_are_kept(line: str) -> None:
    assert not is_chrome(line)


def test_a_long_line_is_judged_by_all_of_its_words() -> None:
    """Numbers then prose is prose; a long menu is chrome; verse quoted with slashes for its
    line breaks is prose (many separators, but over four words between them)."""
    numbers_then_prose = " ".join(str(n) for n in range(2000, 2100)) + " " + PROSE_EN * 2
    assert not is_chrome(numbers_then_prose)
    assert strip_chrome(f"Home | News\n{numbers_then_prose}") == numbers_then_prose
    long_word_then_prose = "x" * 350 + " " + PROSE_EN * 2
    assert strip_chrome(f"Share this\n{long_word_then_prose}") == long_word_then_prose
    menu = " | ".join(f"Section {n} news" for n in range(60))  # 180 words, 59 separators
    assert line_size(menu) >= MIN_KEPT and is_chrome(menu)
    verse = " / ".join([PROSE_EN[:60], PROSE_EN[60:]] * 15)  # 29 separators
    assert line_size(verse) > 4 * 30 and not is_chrome(verse)


def _strip_line_by_line(text: str, keep=None) -> str:
    """strip_chrome as its docstring says it, every line judged in full: a related heading
    that is chrome and not kept, then a list item, a table row or a bare item mark after it
    (empty lines between), leaves out itself and the list items, table rows, bare marks and
    empty lines that follow it, and an indented line after a bare mark (the item's text)."""
    lines = text.split("\n")
    listed = lambda s: not s or s == "-" or s.startswith(("- ", "|"))  # noqa: E731
    left_out: set[int] = set()
    for i, line in enumerate(lines):
        if i in left_out or not is_related_heading(line) or not _judged(line)[0]:
            continue
        if keep is not None and keep(line):
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j < len(lines) and listed(lines[j].strip()):
            left_out.add(i)
            j = i + 1
            marked = False  # an item's text after its bare mark goes with the list
            while j < len(lines) and (
                listed(lines[j].strip()) or (marked and lines[j][:1].isspace())
            ):
                marked = lines[j].strip() == "-" or (marked and not lines[j].strip())
                left_out.add(j)
                j += 1
    out, kept = [], 0
    for i, line in enumerate(lines):
        if i in left_out:
            continue
        verdict, size = _judged(line)
        kept_anyway = verdict is Verdict.CHROME and keep is not None and line.strip()
        if not verdict or (kept_anyway and keep(line)):
            out.append(line)
            kept += size
    if kept >= MIN_KEPT:
        return "\n".join(out)

    # nothing kept, and every line that holds something a layout table's row or a menu line
    # (a few words an item between separators): the page's own text was missed
    def layout(line: str) -> bool:
        s = line.strip()
        verdict, size = _judged(s)
        separators = chrome._separators(s)
        menu = separators >= 2 and size <= chrome.MENU_ITEM * (separators + 1)
        return verdict is Verdict.CHROME and (s.startswith("|") or menu)

    nothing = not any(line.strip() for line in out)
    if nothing and all(layout(line) for line in lines if line.strip()):
        return ""
    return text


# Lines of words (long and short, numbers, CJK) between white space or separators (a
# slash among them), some starting as list items or table rows; and lines of prose.
_WORDS = [
    *["alpha", "bravo", "it's", "2024", "12", "新闻", "国", "Ünïcode", "$5", "x" * 30],
    *["2019-09-09", "2019/09/09 18:38", "09-09 17:55", "2019-09-09."],  # date stamps, or not
]
_BETWEEN = [" "] * 8 + [" | ", "|", " / ", "/", " > ", "·", " • "]


@st.composite
def _lines(draw) -> str:
    start = draw(st.sampled_from(["", "", "- ", "| ", "  "]))
    parts = draw(
        st.lists(st.tuples(st.sampled_from(_WORDS), st.sampled_from(_BETWEEN)), max_size=40)
    )
    return start + "".join(word + between for word, between in parts)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.one_of(
            _lines(),
            st.just(PROSE_EN),
            st.sampled_from(
                ["Related articles", "相关推荐", "Read more: Ferry", "- 相关文章", "", "-", "- "]
            ),
        ),
        max_size=10,
    )
)
def test_long_lines_read_by_their_start_are_judged_as_in_full(lines) -> None:
    """A long line shown to be prose by its first characters, and the words kept counted
    from those, strip a text exactly as judging every line in full does."""
    text = "\n".join(lines)
    assert strip_chrome(text) == _strip_line_by_line(text)
    digits = lambda line: any(c.isdigit() for c in line)  # noqa: E731
    assert strip_chrome(text, keep=digits) == _strip_line_by_line(text, keep=digits)


@pytest.mark.parametrize(
    "heading",
    [
        "Related articles",
        "More from the Harbour Post",
        "Most read",
        "Las más leídas",
        "Lesen Sie auch:",
        "相关推荐",
        "您可能感兴趣的文章",
        "【相关阅读】",
        "- 相关文章",
        "関連記事",
    ],
)
def test_a_list_of_other_articles_under_its_heading_is_left_out(heading: str) -> None:
    """The heading, and the list items and table rows after it however long (a teaser is a
    headline and its first sentences); what follows the list is read again."""
    assert is_related_heading(heading)
    text = "\n".join(
        [
            PROSE_EN,
            PROSE_ZH,
            heading,
            "",
            f"- {PROSE_EN}",
            "",
            f"- {PROSE_ZH}",
            f"| {PROSE_EN} | 2019-09-09 |",
            "-",
            f"{PROSE_EN} Again.",
            f"- {PROSE_ZH}",
        ]
    )
    kept = [PROSE_EN, PROSE_ZH, f"{PROSE_EN} Again.", f"- {PROSE_ZH}"]
    assert strip_chrome(text) == "\n".join(kept)
    # a line that a caller keeps besides prose (one holding a number) goes with the list
    digits = lambda line: any(c.isdigit() for c in line)  # noqa: E731
    assert strip_chrome(text, keep=digits) == "\n".join(kept)


def test_a_related_lists_item_whose_text_follows_its_bare_mark_goes_with_it() -> None:
    """A list item whose text starts on the line after its mark (``<li>`` then a line
    break, the text indented as the source indents it): the text goes with the list,
    however long (here, teasers and their comment counts run into one line); a line after
    the list, or after a bare mark, that is not indented is read again (version 12)."""
    teasers = (
        "渡轮时刻表下周一起调整，早晚高峰加开班次 评论 683救生艇队员在海角救起两名皮划艇爱好者 "
        "评论 327通往医院的新公交线路本月开通，沿途设置八个站点 评论 150老街夜市重新开张 赞 42"
    )
    assert not is_chrome(teasers)
    text = "\n".join(
        [PROSE_ZH * 3, "相关推荐", "- ", "\t\t", f"    {teasers}", "-", f"\t{teasers}"]
    )
    assert strip_chrome(text) == PROSE_ZH * 3
    assert strip_chrome(f"{text}\n{PROSE_EN}") == "\n".join([PROSE_ZH * 3, PROSE_EN])
    assert strip_chrome(f"{text}\n-\n{PROSE_EN}") == "\n".join([PROSE_ZH * 3, PROSE_EN])
    # under another line, the mark is an empty list item and what follows it is read
    other = "\n".join([PROSE_ZH * 3, "- ", teasers])
    assert strip_chrome(other) == "\n".join([PROSE_ZH * 3, teasers])


def test_an_article_in_a_layout_with_its_dated_headlines_keeps_its_signature() -> None:
    """A Chinese article set in a portal's layout, with its lists of other headlines and
    their dates (an author's latest articles run into one line, a list of the latest news
    with date, time and section, a related list whose items' text follows their marks):
    those lines are left out, and the page's signature is the article's (version 11 read
    them as prose: they moved the fingerprint and took long sentences)."""
    layout = [
        "作者最近文章 渡轮时刻表下周一起调整，早晚高峰加开班次2019-09-06救生艇队员在海角救起"
        "两名皮划艇爱好者2019-08-27通往医院的新公交线路本月开通，沿途设置八个站点2019-08-07"
        "老街夜市重新开张，摊主们提前一周就开始准备2019-06-28",
        *(
            f"- {headline} 2019-09-09 1{n}:{n}8 {section}"
            for n, (headline, section) in enumerate(
                [
                    ("市图书馆延长周末开放时间，并新增自习座位三百个，方便学生复习备考", "文化"),
                    ("气象台发布大风蓝色预警，提醒市民注意防范高空坠物，出海船只及时回港", "天气"),
                    ("新建体育公园下月对外开放，园内设有篮球场、足球场和长约三公里的跑道", "城市"),
                ]
            )
        ),
        "相关推荐",
        "- ",
        "    渡轮时刻表下周一起调整，早晚高峰加开班次 评论 683救生艇队员在海角救起两名皮划艇爱好者 "
        "评论 327通往医院的新公交线路本月开通，沿途设置八个站点 评论 150",
    ]
    article = "\n".join(ZH_ARTICLE_NUMBERS)
    assert strip_chrome("\n".join([article, *layout])) == article
    alone = page_signature(article)
    in_layout = page_signature("\n".join([article, *layout]))
    assert alone is not None and in_layout == alone
    assert Fingerprinter(chrome=False).simhash("\n".join([article, *layout])) != (
        Fingerprinter(chrome=False).simhash(article)
    )


def test_other_headlines_holding_a_price_or_a_spec_are_still_chrome() -> None:
    """The fingerprint keeps chrome lines that hold a content number (a spec line and its
    price), but not other headlines with their dates, whatever numbers they hold: a
    headline's "售价2999元" or "12.9英寸" is no spec of this page (version 13; version 12
    kept such lines, and a copy of the article in another layout lost them)."""
    run = (
        "作者最近文章 新款手机搭载八核处理器，售价2999元2019-09-06救生艇队员在海角救起两名"
        "皮划艇爱好者2019-08-27通往医院的新公交线路本月开通，沿途设置八个站点2019-08-07"
    )
    item = "- 新款平板电脑今天发布，屏幕12.9英寸，续航时间长达十个小时 2019-09-09 18:03 科技"
    spec = "- 屏幕 12.9英寸 重量 682克"  # a spec line: short chrome, kept for its numbers
    for line in (run, item):
        assert _judged(line)[0] is Verdict.HEADLINES and has_quantity(normalize(line))
    assert _judged(spec)[0] is Verdict.CHROME and has_quantity(normalize(spec))
    article = "\n".join(ZH_ARTICLE_NUMBERS)
    page = "\n".join([article, run, item, spec])
    quantities = lambda line: has_quantity(normalize(line))  # noqa: E731
    assert strip_chrome(page, keep=quantities) == "\n".join([article, spec])
    assert Fingerprinter().prose(page) == "\n".join([article, spec])
    with_spec = page_signature("\n".join([article, spec]))
    assert with_spec is not None and page_signature(page) == with_spec


@pytest.mark.parametrize(
    "line",
    [
        "Read more: Ferry timetable changes from Monday",  # a link, not a heading
        "推荐阅读：老街夜市重新开张",
        "Ingredients",  # an article's own list
        "Highlights",
        "The related question",
        "Relatedness",
        "Related articles on the harbour, the market hall and the grain terminal",  # long
    ],
)
def test_lists_under_other_lines_are_read(line: str) -> None:
    assert not is_related_heading(line)
    text = "\n".join([PROSE_EN, line, f"- {PROSE_EN} One.", f"- {PROSE_ZH}"])
    assert f"- {PROSE_EN} One.\n- {PROSE_ZH}" in strip_chrome(text)


def test_a_related_heading_without_a_list_after_it_leaves_out_nothing_else() -> None:
    text = "\n".join([PROSE_EN, "Related articles", f"{PROSE_EN} Two.", f"- {PROSE_ZH}"])
    assert strip_chrome(text) == "\n".join([PROSE_EN, f"{PROSE_EN} Two.", f"- {PROSE_ZH}"])


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="|｜>›»·•/ \tab", max_size=30))
def test_separators_are_counted_as_the_pattern_finds_them(line: str) -> None:
    assert chrome._separators(line) == len(chrome._SEPARATOR.findall(line))


_ITEMS = ["alpha bravo", "charlie delta", "echo foxtrot", "golf hotel", "india juliet"] * 2


@pytest.mark.parametrize(
    ("line", "is_chrome_line"),
    [
        ("- " + " ".join(_ITEMS[:6]), True),  # a list item of 12 words
        ("| " + " | ".join(_ITEMS[:6]) + " |", True),  # a table row of short cells
        ("| abcd efgh ijkl mnop qrst uvwx yzab | cdef ghij klmn opqr stuv wxyz abcd", True),
        ("x" * 70 + " word", True),  # two words
        (" / ".join(_ITEMS), True),  # menus: 20 words, 9 separators
        (" > ".join(_ITEMS), True),
        ("·".join(_ITEMS), True),
        (" • ".join(_ITEMS), True),
        ("alpha/bravo charlie/delta echo/foxtrot golf/hotel india/juliet kilo lima", False),
        (" ".join(_ITEMS), False),
        (" / ".join([PROSE_EN[:60], PROSE_EN[60:]] * 3), False),  # verse
    ],
)
def test_a_long_line_read_by_its_start_is_judged_as_in_full(
    line: str, is_chrome_line: bool
) -> None:
    text = "\n".join([PROSE_EN, line, PROSE_EN])
    assert len(line) > 64 and is_chrome(line) is is_chrome_line
    assert strip_chrome(text) == _strip_line_by_line(text)
    assert (line in strip_chrome(text).split("\n")) is not is_chrome_line


def test_strip_chrome_keeps_the_prose_in_order() -> None:
    text = "\n".join(
        ["Home | News | Sport | Weather", "By Jane Smith", PROSE_EN, "Share this", PROSE_EN * 2]
    )
    assert strip_chrome(text) == "\n".join([PROSE_EN, PROSE_EN * 2])
    zh = "\n".join(["首页 | 新闻 | 体育 | 财经", "2024年11月19日 10:45 来源：新华社", PROSE_ZH * 3])
    assert strip_chrome(zh) == PROSE_ZH * 3


def test_a_text_with_too_little_prose_is_kept_whole() -> None:
    text = "\n".join(["Home | News | Sport | Weather", PROSE_EN, "Share this"])
    assert line_size(PROSE_EN) < MIN_KEPT
    assert strip_chrome(text) == text


def test_lines_a_caller_keeps_survive() -> None:
    text = "\n".join([PROSE_EN * 2, "| Price | $1,299.00 |", "| Colour | Blue |"])
    assert strip_chrome(text) == PROSE_EN * 2
    kept = strip_chrome(text, keep=lambda line: "$" in line)
    assert kept == "\n".join([PROSE_EN * 2, "| Price | $1,299.00 |"])


def test_chrome_around_an_article_does_not_move_its_fingerprint() -> None:
    article = "\n".join([PROSE_EN, PROSE_EN.replace("Tuesday", "Monday"), PROSE_EN * 2])
    in_layout = "\n".join(
        [
            "World | Politics | Business | Tech | Science | Health | Sport",
            "By Jane Smith and John Doe, Reuters",
            "Photo: AFP/Getty Images",
            article,
            "SIGN UP FOR OUR NEWSLETTER",
            "- Other story about the weather this week",
            "- Another story about the elections",
        ]
    )
    assert hamming(Fingerprinter().simhash(article), Fingerprinter().simhash(in_layout)) == 0
    assert Fingerprinter(chrome=False).simhash(article) != (
        Fingerprinter(chrome=False).simhash(in_layout)
    )


# ---------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "text",
    [
        "published 19 november 2019, 10:45 am",
        "nov. 19th, 2019",
        "2019-11-19t10:45:00",
        "19.11.2019 um 10:45",
        "updated 3 hours ago · 5 min read",
        "1,234 views, 12 comments, 1.2k likes",
        "comments (12) views: 1,234",
        "page 2 of 5",
        "photo (3/10)",
        "© 2024 the company",
        "19 de noviembre de 2024",
        "vor 3 stunden",
        "2024年11月19日 下午3点20分",
        "11月19号 10:45",
        "3小时前 阅读 1.2万 评论(36) 36人参与 12条评论",
        "第2页 共5页",
        # a list's short dates, and telephone numbers (version 5)
        "·电话专访阿汤哥：做明星的孩子不容易 (04-19) ·哈里森福特回应订婚谣言 [12-31]",
        "请联系我们：010-56807194，传真 0432-62523538",
        "call (555) 123-4567 or 555-987-6543",
        "tel. +86 10 5680 7194, +44 20-7946-0958",
        # numbers after the word that names them a telephone or fax number, and a site's
        # registration numbers and postal code (version 11)
        "联系电话：010--61234567 010--61234568 举报电话：12377 客服热线 95588",
        "地址：太原市新建南路 邮编：030099 电话：0351 1234567 传真:(0351)1234568",
        "滇ICP备12345678号-1 经营许可证编号：滇B-2-4-20990001",
        "京ICP证099999号 京公网安备 11000002099999号 ICP证：京B2-20990002",
        "Tel.: 030 / 1234 567-890, Fax: (0341) 1234567, phone 555.123.4567",
        "Telefon: +49 - (40) - 123 45 - 6789, fon 05191 123456",
        # a time's fraction of a second (version 17: its digits were content numbers)
        "er gewann in 1:46,47 minuten vor linke (10:58.94 min)",
    ],
)
def test_dates_times_and_counters_are_not_numbers(text: str) -> None:
    assert not any(c.isdigit() for c in blank_dates(normalize(text)))


# Pieces of text the date and counter patterns read: their words, digits, the characters
# around them, and letters that begin no pattern.
_PIECES = [
    *numbers._MONTHS.split("|")[::7],
    *numbers._COUNTERS.replace("?", "").split("|")[::3],
    *numbers._CJK_COUNTERS.replace("?", "").split("|")[::2],
    *numbers._TIME_UNITS.replace("?", "").split("|")[::5],
    *numbers._PAGE_WORDS.split("|"),
    *"0123456789",
    "2024",
    "19",
    "1.2",
    "1,234",
    "١٢",
    " ",
    " ",
    "-",
    "/",
    ".",
    ",",
    ":",
    "(",
    ")",
    "[",
    "]",
    "de ",
    "of ",
    "am",
    "p.m.",
    "年",
    "月",
    "日",
    "号",
    "点",
    "分",
    "第",
    "共",
    "页",
    "万",
    "人",
    "条",
    "t",
    "h",
    "k",
    "the",
    "zebra",
    "hotel",
    "quay",
    "新闻",
    "发布会",
    "x",
    "+",
    "555-123-4567",
    "010-56807194",
    "(04-19)",
    # telephone words, postal and registration labels (version 11)
    *numbers._PHONE_WORDS.split("|")[::2],
    *numbers._CJK_PHONE_WORDS.split("|")[::2],
    "号码",
    "icp",
    "备",
    "证",
    "公网安备",
    "许可证",
    "编号",
    "邮编",
    "b2",
    "〔",
]


def test_every_word_and_character_a_pattern_begins_with_is_a_start() -> None:
    """The lookahead admits the first character of every pattern: a digit, a bracket, 第 or 共,
    and each month, counter, page word, CJK counter, telephone word, registration or postal
    label where the patterns read it (and 备 or 证, where a registration number follows ICP)."""
    starts = re.compile(numbers._DATELIKE[True, True].pattern.split("(?:", 1)[0])
    words = "|".join(
        [
            numbers._MONTHS,
            numbers._COUNTERS,
            numbers._PAGE_WORDS,
            numbers._CJK_COUNTERS,
            numbers._PHONE_WORDS,
            numbers._CJK_PHONE_WORDS,
            numbers._SECURITY_WORDS,
            numbers._LICENCE_WORDS,
            numbers._POSTAL_WORDS,
        ]
    )
    for word in [*words.replace("?", "").split("|"), *"0٣([+第共", *numbers._AFTER_ICP]:
        assert starts.match(f" {word} 5", 1), word
    assert not starts.match(" hotel 5", 1) and not starts.match("xmay 5", 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_the_patterns_find_the_same_matches_where_only_their_starts_are_tried(pieces) -> None:
    """The lookahead that skips positions where no pattern can begin changes no match; nor
    does leaving out the patterns of a script the text holds no letter of."""
    text = "".join(pieces)
    plain = re.compile("|".join(pattern for pattern, _ in numbers._DATE_PATTERNS))
    assert numbers._DATELIKE[True, True].sub("#", text) == plain.sub("#", text)
    assert numbers._datelike_in(text).sub("#", text) == plain.sub("#", text)


@pytest.mark.parametrize("script", ["latin", "cjk"])
def test_a_pattern_of_a_script_matches_nothing_without_its_letters(script) -> None:
    """The patterns left out of a text without Latin letters, or without CJK ones, need one
    of them in every match: tried on the pieces the patterns read, those letters left out."""
    letters = numbers._LATIN if script == "latin" else numbers._CJK_OR_HANGUL
    pieces = [p for p in [*_PIECES, "10", "h", "2 ", "+86 10 5680 7194"] if not letters.search(p)]
    rng = random.Random(script)
    texts = ["".join(rng.choices(pieces, k=30)) for _ in range(2000)]
    texts += [" ".join(pieces), "".join(pieces)]
    for pattern, of in numbers._DATE_PATTERNS:
        if of == script:
            compiled = re.compile(pattern)
            assert not any(compiled.search(t) for t in texts), pattern
    assert any(re.search(p, t) for p, of in numbers._DATE_PATTERNS if of is None for t in texts)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40))
def test_dates_blanked_in_place_keep_every_position_and_give_the_same_words(pieces) -> None:
    """``keep_length``: each character blanked becomes one space, so a position of the text is
    a position of the result (the page signature reads a sentence's numbers there), and
    the words read from it are those read from the usual result."""
    text = normalize("".join(pieces))
    blanked, kept = blank_dates(text), blank_dates(text, keep_length=True)
    assert len(kept) == len(text)
    assert all(k == t or k == " " for k, t in zip(kept, text, strict=True))
    words = re.compile(r"\w+")
    assert words.findall(kept) == words.findall(blanked)


# Stretches without digits, shorter and longer than the two margins that part two windows.
_FILLERS = ["lorem ipsum dolor sit amet " * k for k in (1, 2, 3, 4)] + ["x" * 79, "y" * 81]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES + _FILLERS), max_size=40), st.sampled_from(["", " "]))
def test_dates_blanked_window_by_window_are_those_blanked_in_the_whole_text(pieces, glue) -> None:
    """``blank_dates`` runs the patterns on windows around each stretch of near digits only;
    what it blanks is what they blank run on the whole text."""
    text = normalize(glue.join(pieces))
    whole = numbers._DATELIKE[True, True].sub(numbers._blank_in_place, text)
    assert blank_dates(text, keep_length=True) == numbers._YEAR.sub(numbers._spaces, whole)
    whole = numbers._DATELIKE[True, True].sub(numbers._blank, text)
    assert blank_dates(text) == numbers._YEAR.sub(" ", whole)


def test_dates_are_blanked_in_long_runs_of_digits_as_the_whole_alternation_blanks_them():
    """A Chinese page of the digits of pi (a run of 300,000), or of a lottery's numbers run
    together with commas, is read once (the patterns that read digits up to 年, 阅读 or 页
    were tried at each digit, and read the rest of the run each time: 8,000 digits took 11
    s, and the time grew with their square). What is blanked is what the alternation tried
    at every digit blanks, on runs short enough for it, and after a match that ends in a
    run (a postal code's six digits, then more; a date, then a number)."""
    rng = random.Random(11)
    digits = "".join(rng.choices("0123456789", k=300_000))
    for text in (f"圆周率{digits}", "开奖号码" + ",".join(digits[:150_000])):
        assert blank_dates(text) == text and blank_dates(text, keep_length=True) == text
    pieces = ["邮编", "1", "23", "456789", "年", "阅读", "万", ",", ".", "2024.1.1,", "页", "/"]
    pieces += ["第", "3点", "12:30", "小时", "(", ")", "tel ", "page ", "x", " ", "中"]
    for _ in range(300):
        text = "".join(rng.choices(pieces, k=40))
        whole = numbers._datelike_in(text)
        assert blank_dates(text, keep_length=True) == numbers._YEAR.sub(
            numbers._spaces, whole.sub(numbers._blank_in_place, text)
        )
        assert blank_dates(text) == numbers._YEAR.sub(" ", whole.sub(numbers._blank, text))
    # after a postal code, the rest of its run is a year's; after a date, a count of reads
    blanked = "邮编  年  . . , 万阅读"
    for run in (digits[:50], digits[:20_000]):
        text = f"邮编{run}年 2024.1.1,{run}万阅读"
        assert blank_dates(text) == blanked
    whole = numbers._datelike_in(text)
    short = f"邮编{digits[:50]}年 2024.1.1,{digits[:50]}万阅读"
    assert numbers._YEAR.sub(" ", whole.sub(numbers._blank, short)) == blanked


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("price: $1,299.00", ["1,299.00"]),
        ("a 16.5 inch screen and 2048 gb of storage", ["16.5", "2048"]),
        ("final score: harbor city 3, riverside 1", ["3", "1"]),
        ("56% of voters", ["56"]),
        ("the vector 19 laptop", ["19"]),
        ("售价¥5999，运行内存16gb，屏幕尺寸6.5英寸", ["5999", "6.5"]),
        ("全场比分3比1，射门23次", ["3", "1", "23"]),
        # not a month and day, not a telephone number
        ("scores (13-45) and (3-1)", ["13", "45", "3", "1"]),
        ("part 1234-5678 and 0800-123", ["1234", "5678", "0800", "123"]),
        # a word that names a telephone, not followed by one (version 11)
        ("the iphone 12 costs $999, a phone with 5g and 128 gb", ["12", "999", "128"]),
        ("tel aviv won 2-1 before 30,000 fans", ["2", "1", "30,000"]),
        ("手机屏幕6.5英寸，电池4500毫安时，电话手表售价599元", ["6.5", "4500", "599"]),
        ("全市取得营业许可证的企业有35家", ["35"]),
    ],
)
def test_content_numbers_are_features(text: str, kept: list[str]) -> None:
    words = Fingerprinter(chrome=False).content_words(text)
    assert [w for w in words if w[0].isdigit() and not w[-1].isalpha()] == kept


def test_dates_keep_their_words_and_lose_their_digits() -> None:
    words = Fingerprinter(chrome=False).content_words("Updated Nov. 19, 2024, 3 hours ago")
    assert words == ["updated", "nov", "hours", "ago"]


@pytest.mark.parametrize(
    ("line", "quantity"),
    [
        ("| Price | $2,390.36 |", True),
        ("| Memory | 16 GB |", True),
        ("Battery: 5039 mAh", True),
        ("| 价格 | ¥5999 |", True),
        ("| 屏幕尺寸 | 6.5英寸 |", True),
        ("湖人 102-98 勇士", True),
        ("| Warranty | 5 years |", False),  # a duration
        ("Published 19 November 2019, 10:45", False),
        ("阅读 1234 评论 56", False),
        ("Home | News | Sport", False),
        ("Top 10 stories", False),
    ],
)
def test_lines_holding_a_quantity(line: str, quantity: bool) -> None:
    assert has_quantity(normalize(line)) is quantity


def _product(price: str, memory: str, screen: str) -> str:
    intro = (
        "The Brightfield Vector is a laptop for everyday work and travel, with a bright "
        "display, a quiet keyboard and a battery that lasts a full working day away from "
        "a desk. Free delivery within a few working days, and returns are accepted for "
        "a month after purchase."
    )
    rows = [
        f"| Price | {price} |",
        f"| Memory | {memory} |",
        f"| Screen size | {screen} |",
        "| Warranty | 2 years |",
    ]
    return "\n".join([intro, "Technical specifications", *rows])


def test_pages_that_differ_in_their_numbers_are_told_apart() -> None:
    a = _product("$1,299.00", "16 GB", "15.6 inches")
    b = _product("$899.00", "8 GB", "13.3 inches")
    assert Fingerprinter().simhash(a) != Fingerprinter().simhash(b)
    # version 2's behaviour: numbers are not features, the pages are the same
    v2 = Fingerprinter(numbers=False)
    assert v2.simhash(a) == v2.simhash(b)


def test_an_article_whose_layouts_add_a_telephone_number_or_list_dates_is_one_article() -> None:
    """An article with two numbers of its own, in one layout with the site's telephone
    numbers below it and in another with a list of headlines and their short dates: its
    numbers are the article's two in both (before version 5, four and five others made the
    numbers veto refuse the copy)."""
    article = [*PARAGRAPHS, "The new rules run to 56 articles in 11 chapters."]
    contact = "Questions about this story? Call the newsroom on (555) 123-4567 or 555-987-6543."
    headlines = (
        "Ferry timetable changes from Monday, say harbour officials (04-19) Lifeboat crew "
        "rescues two kayakers off the point (04-18) New bus route to the hospital (04-17)"
    )
    first = page_signature("\n".join([*article, contact]))
    second = page_signature("\n".join([*article, headlines]))
    assert first is not None and second is not None
    assert first.number_count == second.number_count == 2
    assert second.is_near_duplicate(first)


# A Chinese article with three numbers of its own, and two sites' footers: their contact
# lines and registration numbers, each written its own way.
ZH_ARTICLE_NUMBERS = [
    "市住房和城乡建设局周四表示，老城区供水管网改造工程将在明年春季全面启动，"
    "施工期间部分街道将分段停水，具体时间会提前在社区公告栏和政府网站上通知居民。",
    "负责勘察的工程师介绍，老城区的供水管道大多铺设于上世纪八十年代，管材老化严重，"
    "每到冬季就容易发生爆管漏水，维修人员常常需要连夜抢修才能恢复供水。",
    "不少居民表示支持这项工程，但也希望施工单位合理安排作业时间，尽量避开早晚用水高峰，"
    "并在停水期间安排送水车进入小区，照顾行动不便的老人和家中有婴儿的家庭。",
    "据统计，今年全市共有12个街道参与改造，涉及居民3.5万户，总投资约8.6亿元。",
]
ZH_FOOTERS = (
    "主办单位：某某日报社 地址：某某市新建南路 邮编：030099 联系电话：0351-1234567 "
    "传真：0351 1234568 晋ICP备12345678号-1 晋公网安备 14000002099999号",
    "违法和不良信息举报电话：010--61234567 010--61234568 互联网新闻信息服务许可证编号："
    "53120990001 经营许可证编号：滇B-2-4-20990001 京ICP证099999号",
)


def test_a_footers_registration_and_contact_numbers_leave_an_article_one_article() -> None:
    """A Chinese article in two sites' layouts, each with its footer: the footers' telephone
    numbers, postal code and registration numbers are not content numbers, so both pages
    hold the article's three numbers (version 10 read six and eight others, and the
    numbers veto refused the copy)."""
    first, second = (
        page_signature("\n".join([*ZH_ARTICLE_NUMBERS, footer])) for footer in ZH_FOOTERS
    )
    alone = page_signature("\n".join(ZH_ARTICLE_NUMBERS))
    assert first is not None and second is not None and alone is not None
    assert first.number_count == second.number_count == alone.number_count == 3
    assert first.numbers == second.numbers == alone.numbers
    assert second.is_near_duplicate(first)


def test_pages_that_differ_in_their_dates_and_counters_are_the_same() -> None:
    body = "\n".join([PROSE_EN, PROSE_EN.replace("Tuesday", "Monday"), PROSE_EN * 2])
    a = f"Published 19 November 2019, 10:45 AM · 1,234 views\n{body}\n12 comments"
    b = f"Published 21 November 2019, 08:02 PM · 5,678 views\n{body}\n31 comments"
    assert Fingerprinter(chrome=False).simhash(a) == Fingerprinter(chrome=False).simhash(b)
    zh_body = PROSE_ZH * 3
    a = f"2024年11月19日 10:45 阅读 1234\n{zh_body}\n评论(12) 3小时前"
    b = f"2024年11月21日 08:02 阅读 5678\n{zh_body}\n评论(31) 5小时前"
    assert Fingerprinter(chrome=False).simhash(a) == Fingerprinter(chrome=False).simhash(b)


def test_numbers_do_not_make_a_text_long_enough() -> None:
    text = "Prices: " + " ".join(f"${n}.99" for n in range(100)) + " only today"
    assert Fingerprinter(min_words=5).is_too_short(text)
    assert Fingerprinter(min_words=5).fingerprint(text) is None


def test_data_tables_are_runs_of_rows_with_filled_cells() -> None:
    """``data_table_words``: the words of runs of at least DATA_ROWS table rows with at least
    DATA_CELLS filled cells each; a shorter run, rows of fewer cells (a list of headlines and
    their dates, a menu row) and lines that are no rows count nothing."""
    from scrapy_simhash.text.chrome import DATA_CELLS, DATA_ROWS, data_table_words, line_size

    row = "| Harbour City Rovers | Riverside Athletic | home win | 3 |"
    assert (DATA_ROWS, DATA_CELLS) == (6, 3)
    table = "\n".join([row] * DATA_ROWS)
    assert data_table_words(table) == DATA_ROWS * line_size(row) > 0
    assert data_table_words("\n".join([row] * (DATA_ROWS - 1))) == 0
    # a run broken by another line is two runs; a run at the end of the text counts
    broken = "\n".join([row] * 3 + ["A line of prose between the rows."] + [row] * 3)
    assert data_table_words(broken) == 0
    assert data_table_words("Intro line.\n" + table) == data_table_words(table + "\nEnd.")
    headlines = "\n".join(["| Council approves the new bridge | 2019-09-09 |"] * 10)
    menu = "\n".join(["| Home | | News |"] * 10)  # two filled cells
    assert data_table_words(headlines) == data_table_words(menu) == 0
    assert data_table_words("\n".join(["  " + row] * DATA_ROWS)) == data_table_words(table)


# ---------------------------------------------------------------- spec tables (version 16)


SPEC_ROWS_EN = ["| Weight | 245 g |", "|---|---|", "| Drop | 6 |", "| Stack height | 28 |"]


def test_a_run_of_name_and_number_rows_is_a_spec_table() -> None:
    lines = [PROSE_EN, *SPEC_ROWS_EN, "| Width | 98 |", PROSE_EN]
    # the rule line between the first rows breaks no run, and is no row of it
    assert chrome.spec_rows(lines) == {1, 3, 4, 5}
    assert chrome.spec_rows([*SPEC_ROWS_EN, PROSE_EN, "| Width | 98 |"]) == set()  # 3, 1
    zh = ["| 存储容量 | 256 |", "| 运行内存 | 16 |", "| 屏幕尺寸 | 6.7 |", "| 重量 | 186 |"]
    assert chrome.spec_rows(zh) == {0, 1, 2, 3}


@pytest.mark.parametrize(
    "row",
    [
        "| Weight | heavy |",  # no number first in the value
        "| 2019 | 245 |",  # a number for a name
        "| Weight | 245 | 312 |",  # three cells: a data table's row, not a name and its value
        "| - | 245 |",  # no letter in the name
        "| Council approves budget | 2019-09-01 |",  # a headline and its date
        "| Doors open | 10:00 |",  # a time
        "| Views | 1234 |",  # a counter, told by its name
        "| 阅读 | 1234 |",
    ],
)
def test_rows_that_are_no_name_and_number_break_a_spec_table(row) -> None:
    rows = ["| Weight | 245 |", "| Drop | 6 |", "| Stack height | 28 |", "| Width | 98 |"]
    assert chrome.spec_rows(rows) == {0, 1, 2, 3}
    assert chrome.spec_rows([*rows[:2], row, *rows[2:]]) == set()


#: What trafilatura returned of a shop's product page whose product it missed (a script
#: renders it, or its fallback took the layout's longest block): the site's province menu
#: and footer, laid out in tables, the same on every page of the site.
LAYOUT_ONLY = [
    "| 全国版 | 安徽省 | 北京市 | 重庆市 | 福建省 | 贵州省 | 广东省 | 广西省 | 甘肃省 | 河北省 |",
    "| 江苏省 | 江西省 | 辽宁省 | 内蒙古 | 宁夏区 | 青海省 | 山西省 | 山东省 | 四川省 | 上海市 |",
    "| 报社新闻 频道 |",
    "",
    "Home | Regional news | Sport | Weather | Shop",
    "| CopyRight 2012-2021 查报纸网 版权所有 关于我们 \\| 网站公告 \\| 联系方式 \\| 广告服务 |",
]


def test_a_text_of_layout_rows_and_menus_alone_has_no_words_to_fingerprint() -> None:
    text = "\n".join(LAYOUT_ONLY)
    assert strip_chrome(text) == "" and strip_chrome(text, keep=has_quantity) == ""
    assert page_signature(text) is None and Fingerprinter().is_too_short(text)
    # were it fingerprinted whole, as a short page is, every page of the site would be one
    assert Fingerprinter(chrome=False, min_words=5).simhash(text) is not None


@pytest.mark.parametrize(
    "own",
    [
        "Norvik Aspen 12, $499.00",  # a line of its own, however short: kept whole, as before
        "- Ferry timetable changes next week",  # a list of headlines: a listing page's text
        "| Weight | 245 g |\n| Drop | 6 mm |\n| Stack height | 28 mm |\n| Width | 98 mm |",
    ],
)
def test_a_layout_text_with_any_line_of_its_own_is_kept(own) -> None:
    text = "\n".join([*LAYOUT_ONLY, own])
    kept = strip_chrome(text, keep=has_quantity)
    assert kept == text or own in kept


def test_short_lines_of_their_own_are_no_layout() -> None:
    poem = "\n".join(
        ["The harbour lights are burning low", "the ferry sleeps beside the pier",
         "the gulls have gone where sailors go", "and only wind and tide are here"] * 3
    )  # fmt: skip
    assert strip_chrome(poem) == poem and page_signature(poem) is not None


def test_spec_rows_are_kept_only_with_number_features() -> None:
    rows = ["| Weight | 245 |", "| Drop | 6 |", "| Stack height | 28 |", "| Width | 98 |"]
    text = "\n".join([PROSE_EN, PROSE_EN.replace("Tuesday", "Friday"), *rows])
    assert strip_chrome(text).split("\n")[2:] == []
    assert strip_chrome(text, keep=lambda line: False).split("\n")[2:] == rows


@pytest.mark.parametrize(
    ("line", "quantity"),
    [
        ("| weight (g) | 161 |", True),
        ("| battery (mah) | 4346 |", True),
        ("| 重量(克) | 180 |", True),
        ("| price (usd) | 300 |", True),
        ("| weight [kg] | 12 |", True),
        ("| weight | 161 |", False),  # no unit: kept only as a row of a spec table
        ("| notes (see below) | 161 |", False),  # no unit in the brackets
    ],
)
def test_a_table_rows_unit_may_be_in_its_name_cell(line, quantity) -> None:
    assert has_quantity(line) is quantity


@pytest.mark.parametrize("line", ["| views | 1234 |", "| comments | 12 |", "| 阅读 | 1234 |"])
def test_a_counter_in_a_tables_cells_is_no_content_number(line) -> None:
    assert not any(c.isdigit() for c in blank_dates(normalize(line)))


def test_a_table_of_headlines_and_their_dates_is_no_spec_table() -> None:
    """Version 13 keeps other headlines with their dates out whatever they hold; a table of
    them, one headline and its date a row, is no spec table either."""
    rows = [
        "| Council approves budget for the harbour | 2019-09-01 |",
        "| Ferry timetable changes from Monday | 2019-08-28 |",
        "| Lifeboat crew rescues two kayakers | 2019-08-20 |",
        "| 麒麟990 5G发布会定于下周举行 | 2019-09-06 |",
        "| New bus route to the hospital | 2019-08-02 |",
    ]
    assert chrome.spec_rows(rows) == set()
    text = "\n".join([PROSE_EN, PROSE_EN.replace("Tuesday", "Friday"), *rows])
    assert strip_chrome(text, keep=lambda line: False).split("\n")[2:] == []
