"""Main-text extraction: real trafilatura on pages written for these tests."""

from __future__ import annotations

import codecs
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scrapy_simhash import Fingerprinter, extract_page, extract_text, simhash
from scrapy_simhash.text.decode import decode_html
from scrapy_simhash.text.headings import _elements, page_title

PARAS = [
    "The city council voted on Tuesday to expand the public library network with three new "
    "branches in neighbourhoods that have long lacked them.",
    "Council members said the branches would open within two years and offer study rooms, "
    "free internet access and evening reading programmes for children and adults.",
    "Residents who attended the meeting welcomed the decision, although some asked whether the "
    "budget would also cover longer opening hours at the existing central library.",
    "The mayor promised that the opening hours would be reviewed next spring, once the "
    "construction contracts for the new branches have been signed.",
]


def article_page(paras: list[str], title: str, layout: str = "a", charset: str = "utf-8") -> str:
    body = "".join(f"<p>{p}</p>" for p in paras)
    if layout == "a":
        return (
            f'<html><head><meta charset="{charset}"><title>{title}</title></head><body>'
            '<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav>'
            f"<article><h1>{title}</h1>{body}</article>"
            "<footer>© City Herald. All rights reserved. Contact us. Privacy policy.</footer>"
            "</body></html>"
        )
    return (
        f'<html><head><meta charset="{charset}"><title>{title} | Daily Wire Service</title></head>'
        '<body><div id="top"><ul><li><a href="/">Front page</a></li><li><a href="/w">World'
        '</a></li></ul></div><div class="main"><div class="story">'
        f"<h2>{title}</h2>{body}</div>"
        '<aside><h3>Most read</h3><ul><li><a href="/x">Ten tips for travel</a></li></ul></aside>'
        "</div><div class='legal'>Daily Wire Service, syndicated content.</div></body></html>"
    )


def test_extracts_the_main_text_without_boilerplate() -> None:
    text = extract_text(article_page(PARAS, "Library network to grow"))
    assert text is not None
    assert "three new branches" in text
    assert "All rights reserved" not in text
    assert "Sport" not in text


def test_one_article_in_two_layouts_gives_the_same_fingerprint() -> None:
    a = extract_text(article_page(PARAS, "Library network to grow", "a"))
    b = extract_text(article_page(PARAS, "Library network to grow", "b"))
    assert a is not None and b is not None
    assert simhash(a) == simhash(b)


def test_extraction_favours_recall() -> None:
    """trafilatura runs favouring recall, as the README says: on this page (a <header> menu
    over lines in <div>s) its default mode keeps the menu, and the recall-favouring mode
    the plugin uses leaves it out."""
    import trafilatura

    lines = [
        "The harbour ferry timetable changes on Monday, with two early sailings added",
        "Residents of the island asked the operator for a later boat on summer weekends",
        "The operator said the new vessel would carry more bicycles and have a waiting room",
        "Tickets bought before the change stay valid until the end of the month on every route",
    ]
    page = (
        "<html><head><title>Ferry notice</title></head><body><header>Island council notes on "
        "lighthouse repairs, fishing quotas and the winter market</header>"
        + "".join(f"<div>{line}.</div>" for line in lines)
        + "</body></html>"
    )
    options = {"deduplicate": False, "include_comments": False, "output_format": "txt"}
    assert "Island council" in trafilatura.extract(page, **options)  # the page tells them apart
    assert "Island council" not in trafilatura.extract(page, favor_recall=True, **options)
    text = extract_text(page)
    assert text is not None and "Island council" not in text
    assert all(line in text for line in lines)


def test_bytes_and_str_give_the_same_text() -> None:
    html = article_page(PARAS, "Library network to grow")
    assert extract_text(html.encode("utf-8")) == extract_text(html)


def test_deterministic_whatever_was_extracted_before() -> None:
    html = article_page(PARAS, "Library network to grow")
    first = extract_text(html)
    for _ in range(3):
        extract_text(article_page(PARAS[:2], "Other"))
        assert extract_text(html) == first


ZH_PARAS = [
    "国家气象中心周一发布消息，预计本周末北方大部分地区将迎来明显降温和降雪天气。",
    "气象专家提醒，降雪可能影响道路交通和航班运行，请公众及时关注天气预报，合理安排出行。",
    "农业部门也表示，各地应提前做好大棚蔬菜和畜牧业的防寒保暖工作，减少降温降雪带来的损失。",
]


def test_gbk_page_declared_as_such() -> None:
    html = article_page(ZH_PARAS, "北方将迎来降温降雪", charset="gbk").encode("gbk", "ignore")
    text = extract_text(html)
    assert text is not None
    assert "降雪可能影响道路交通" in text


def test_gbk_page_without_declaration_is_detected() -> None:
    html = article_page(ZH_PARAS * 3, "北方将迎来降温降雪").replace('<meta charset="utf-8">', "")
    text = extract_text(html.encode("gb18030"))
    assert text is not None
    assert "降雪可能影响道路交通" in text


def test_http_encoding_is_used_when_given() -> None:
    html = article_page(ZH_PARAS, "北方将迎来降温降雪").replace('<meta charset="utf-8">', "")
    text = extract_text(html.encode("big5", "ignore"), encoding="big5")
    assert text is not None
    assert "氣象" in text or "气象" in text or "預計" in text or "预计" in text


def test_invalid_utf8_bytes_do_not_raise() -> None:
    html = article_page(PARAS, "Library network to grow").encode("utf-8")
    at = html.index(b"</p>") + 4
    broken = html[:at] + b"\xff\xfe\xc3\x28\xa0\xa1" + html[at:]
    text = extract_text(broken)
    assert text is not None
    assert "three new branches" in text


def test_binary_bodies_give_none() -> None:
    assert extract_text(os.urandom(50_000)) is None
    assert extract_text(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 100) is None
    assert extract_text(b"%PDF-1.4\n" + b"\x00\x01\x02\x03" * 1000) is None


def test_empty_and_textless_pages_give_none() -> None:
    assert extract_text("") is None
    assert extract_text(b"") is None
    assert extract_text("   \n ") is None
    assert extract_text("<html><head><title>x</title></head><body></body></html>") is None
    nav_only = '<html><body><nav><a href="/a">A</a> <a href="/b">B</a></nav></body></html>'
    # trafilatura may keep the link labels: too short to fingerprint either way
    assert Fingerprinter().fingerprint(extract_text(nav_only) or "") is None


def test_malformed_html_does_not_raise() -> None:
    # Unclosed paragraphs and stray end tags: lxml repairs the tree, and both paragraphs are
    # the page's text, each on its own line.
    broken = "<html><body><div><p>" + PARAS[0] + "<p><b><i>" + PARAS[1] + "</div></span></html"
    assert extract_text(broken) == PARAS[0] + "\n" + PARAS[1]
    assert extract_text("<<<>>><!-- unterminated <script>alert(1)") is None


#: The cut, as the README states it: pages are cut at 4 MiB before extraction.
CUT = 4 * 1024 * 1024

BEFORE_CUT = "Harbour pilots reported a record season for cruise arrivals at the northern quay."
AFTER_CUT = "The lighthouse keeper retired after forty winters on the rock and wrote a memoir."


def _page_around_the_cut(size: int) -> str:
    """An article whose paragraphs are the four of ``PARAS``, then one that ends just before
    byte ``CUT`` and one that starts just after it, with ASCII padding (comments) between
    them and after, up to ``size`` bytes."""
    head, tail = article_page(PARAS, "Library network to grow").split("</article>")
    before, after = f"<p>{BEFORE_CUT}</p>", f"<p>{AFTER_CUT}</p>"
    page = head + "<!--" + "x" * (CUT - 64 - len(head) - len(before)) + "-->" + before
    page += "<!--" + "y" * (CUT + 64 - len(page)) + "-->" + after
    page += "<!--" + "z" * (size - len(page)) + "--></article>" + tail
    assert page.index(BEFORE_CUT) + len(BEFORE_CUT) < CUT < page.index(AFTER_CUT)
    return page


def test_huge_page_is_cut_at_4_mib_and_does_not_raise() -> None:
    html = _page_around_the_cut(20_000_000)
    for page in (html.encode("utf-8"), html):  # bytes are cut in bytes, str in characters
        text = extract_text(page)
        assert text is not None
        assert "three new branches" in text
        assert BEFORE_CUT in text
        assert AFTER_CUT not in text


def test_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="HTML must be str or bytes, not int"):
        extract_text(123)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="HTML must be str or bytes, not list"):
        extract_page([], listings=True)  # type: ignore[arg-type]


# -- labels, stray bytes and cut characters ---------------------------------------------------


@pytest.mark.parametrize(
    "label",
    ["hex", "base64", "zlib", "rot13", "uu", "undefined", "idna", "unicode_escape", "utf-7"],
)
def test_a_label_naming_no_page_encoding_is_ignored(label: str) -> None:
    """A codec that does not turn bytes into text (or that no page is written in) is no
    page's encoding: the page is read as if it had no label, whether the label is its
    <meta charset> or the HTTP header's, and its title is found (a crawl reads the title
    before any worker: an exception there would lose the page)."""
    html = article_page(PARAS, "Library network to grow", charset=label).encode("utf-8")
    assert "three new branches" in (extract_text(html) or "")
    assert page_title(html) == "Library network to grow"
    plain = article_page(PARAS, "Library network to grow").encode("utf-8")
    assert "three new branches" in (extract_text(plain, encoding=label) or "")
    assert page_title(plain, label) == "Library network to grow"
    assert page_title(plain, "utf-8\x00") == "Library network to grow"


def test_a_meta_label_of_utf16_is_read_as_utf8() -> None:
    # a page whose <meta> is readable as ASCII is not UTF-16: browsers read it as UTF-8
    for page in ("<p>é</p>", "<p>é</p> "):  # an even and an odd number of bytes
        html = article_page([*PARAS, page], "Library network to grow", charset="utf-16")
        text = extract_text(html.encode("utf-8"))
        assert text is not None and "three new branches" in text and "é" in text


def test_a_stray_byte_does_not_lose_a_declared_encoding() -> None:
    """One byte the declared encoding cannot read, in a page whose first 64 KB are ASCII
    (a long script): the page is read in its encoding, the byte replaced, not decoded by a
    guess from its ASCII start."""
    html = article_page(ZH_PARAS, "北方将迎来降温降雪", charset="gbk")
    html = html.replace("</head>", "<script>" + "var a = 1;\n" * 7000 + "</script></head>")
    good = html.encode("gbk", "ignore")
    at = good.index("©".encode("gbk", "ignore") or b"<footer>")
    bad = good[:at] + b"\xff" + good[at:]
    for body, encoding in ((bad, "gbk"), (bad, None)):
        text = extract_text(body, encoding=encoding)
        assert text is not None and "降雪可能影响道路交通" in text
        assert "\ufffd" not in text


def test_a_body_cut_inside_a_character_is_read_in_its_encoding() -> None:
    html = article_page(ZH_PARAS * 4, "北方将迎来降温降雪").replace('<meta charset="utf-8">', "")
    body = html.encode("gb18030")
    for cut in range(len(body) // 2, len(body) // 2 + 4):  # one of them splits a character
        text = decode_html(body[:cut], "gbk")
        assert text is not None and "\ufffd" not in text
        assert body.startswith(text.encode("gb18030"))


# -- the title and headline scan ----------------------------------------------------------------

_OLD_TITLE = re.compile(r"<(title|h1)\b[^>]*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)


@given(
    st.lists(
        st.sampled_from(
            [
                "<title>",
                "</title>",
                "<h1>",
                "</h1>",
                "<H1 class=x>",
                "</TITLE >",
                "<title",
                "<h1",
                "</h1",
                ">",
                "<",
                "/",
                "a",
                " ",
                "\n",
                "<h2>",
                "<title x='>'>",
            ]
        ),
        max_size=16,
    ),
    st.integers(min_value=0, max_value=200),
)
def test_the_title_scan_finds_what_a_regular_expression_finds(atoms: list[str], end: int) -> None:
    """The <title> and <h1> elements are found as the regular expression above finds them (an
    opening tag, the first closing tag of its name after it), in one pass: that expression
    looked for a closing tag from every opening one, and took minutes on a page of tens of
    thousands of unclosed <h1> (bench/text_bench.py)."""
    html = "".join(atoms)
    expected = [(m.group(1).lower(), m.group(2)) for m in _OLD_TITLE.finditer(html, 0, end)]
    assert list(_elements(html, end)) == expected


def test_the_title_is_found_after_many_unclosed_headlines() -> None:
    html = "<html><head>" + "<h1>" * 20_000 + "<title>The real title</title></head></html>"
    assert page_title(html) is None  # past the first 64 KB, where titles are looked for
    html = "<html><head>" + "<h1>" * 2_000 + "<title>The real title</title></head></html>"
    assert page_title(html) == page_title(html.encode("utf-8")) == "The real title"


def test_a_title_or_headline_of_many_unclosed_tags_reads_as_a_regular_expression_reads_it():
    """A <title> or <h1> whose HTML holds tens of thousands of ``<`` and no ``>`` after them
    is read in one pass, its tags removed as ``<[^>]*>`` removes them (each ``<`` read the
    rest of the element before that expression failed: 2.7 s for a title of 64 KB, a minute
    for an <h1> of 200 KB)."""
    from scrapy_simhash.text.headings import headings

    tags = re.compile(r"<[^>]*>")
    head, tail = "A <b>bold</b> title < and <i x=1>more", " and its end"
    assert tags.sub(" ", head + "<" * 50 + tail) == tags.sub(" ", head) + "<" * 50 + tail
    title_html = head + "<" * 60_000 + tail
    title = " ".join((tags.sub(" ", head) + "<" * 60_000 + tail).split())[:200]
    html = f"<title>{title_html}</title><h1>{head + '<' * 300_000 + tail}</h1><p>x</p>"
    assert page_title(html) == page_title(html.encode("utf-8")) == title
    heading = "a bold title more and its end"  # ("< and <i x=1>": one tag)
    assert headings(html) == [heading, heading]
    assert headings("<h1>a <b>c</b> < d > e <f</h1>") == ["a c e f"]


def test_trafilatura_says_a_page_has_no_article_at_debug_only(caplog) -> None:
    """trafilatura logs ERROR and WARNING lines for a page without an article ("empty HTML
    tree"): in a crawl with the work inline they read as failures, for a page the crawl
    counts (``simhash/skipped/no_text``). Made in extract_text, they go out at DEBUG; made
    elsewhere, as they are."""
    import logging

    caplog.set_level(logging.DEBUG)
    assert extract_text(b"<p>hi</p>") is None
    mine = [r for r in caplog.records if r.name.startswith("trafilatura")]
    assert mine and all(r.levelno == logging.DEBUG for r in mine)
    caplog.clear()
    logging.getLogger("trafilatura.core").error("a line of the user's own trafilatura call")
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


def test_the_title_of_a_page_in_utf16_or_utf32_is_found() -> None:
    html = article_page(PARAS, "Library network to grow")
    marked = {  # each with its byte-order mark
        "utf-16": html.encode("utf-16"),
        "utf-16-be": codecs.BOM_UTF16_BE + html.encode("utf-16-be"),
        "utf-32": html.encode("utf-32"),
    }
    for body in marked.values():
        assert page_title(body) == "Library network to grow"
        assert "three new branches" in (extract_text(body) or "")


def test_a_title_keeps_no_control_characters() -> None:
    """A page's title goes into the index's records and the command line's tables: the escape
    sequences a site puts there (to recolour or retitle a terminal) are left out."""
    html = "<html><head><title>Budget\x1b]0;pwned\x07 news\x1b[2J\x00</title></head></html>"
    assert page_title(html) == "Budget]0;pwned news[2J"
    page = article_page(PARAS, "Budget\x1b[31m news").encode("utf-8")  # as a crawl reads it
    assert page_title(page) == "Budget[31m news"


def test_a_page_in_utf16_or_utf32_without_a_byte_order_mark_is_read_in_its_http_encoding() -> None:
    """A page in UTF-16 or UTF-32 without a byte-order mark, its HTTP header naming the
    encoding: its ASCII characters hold NUL bytes, which made it a binary body (no text, no
    title), whatever the header said."""
    html = article_page(PARAS, "Library network to grow").replace('<meta charset="utf-8">', "")
    expected = extract_text(html)
    assert expected is not None and "three new branches" in expected
    for label, codec in (
        ("utf-16le", "utf-16-le"),
        ("utf-16be", "utf-16-be"),
        ("utf-16", "utf-16-le"),  # the label with no byte order: little-endian, as browsers
        ("utf-32le", "utf-32-le"),
    ):
        body = html.encode(codec)
        assert extract_text(body, encoding=label) == expected, label
        assert page_title(body, label) == "Library network to grow", label
    # without the header's word, such a body is still no page
    assert extract_text(html.encode("utf-16-le")) is None


def test_a_lone_surrogate_in_an_items_html_does_not_cut_its_text() -> None:
    """An item's HTML decoded with ``surrogateescape`` holds a lone surrogate for each byte of
    another encoding: lxml stopped reading the page there, and the text lost all after it
    (a page too short, or the fingerprint of its first lines). It is read with the byte
    replaced (U+FFFD), as a stray byte of a page's bytes is."""
    body = article_page(PARAS, "Library network to grow").encode("utf-8")
    body = body.replace(b"study rooms", b"study\xa0rooms")  # a Latin-1 no-break space
    html = body.decode("utf-8", "surrogateescape")
    text = extract_text(html)
    assert text is not None and PARAS[-1] in text
    assert text == extract_text(body.decode("utf-8", "replace"))


def test_a_stray_nul_byte_near_a_pages_start_does_not_lose_its_text() -> None:
    """One NUL byte in a page's first 4 KB (a broken template) made it a binary body, while
    the same byte further down was read past, as lxml reads it: a body is binary by the
    share of its control bytes, as :func:`looks_binary` says, whether bytes or str."""
    html = article_page(PARAS, "Library network to grow")
    expected = extract_text(html)
    at = html.index("</head>")
    stray = html[:at] + "\x00" + html[at:]
    assert extract_text(stray) == extract_text(stray.encode("utf-8")) == expected
    assert extract_text(os.urandom(50_000).decode("latin-1")) is None
    assert extract_text(html[:at] + "\x00\x01\x02\x03" * 100 + html[at:]) is None
