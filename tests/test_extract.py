"""Main-text extraction: real trafilatura on pages written for these tests."""

from __future__ import annotations

import os

from scrapy_simhash import Fingerprinter, extract_text, simhash

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
    import pytest

    with pytest.raises(TypeError, match="str or bytes"):
        extract_text(123)  # type: ignore[arg-type]
