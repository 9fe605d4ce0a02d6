"""The quality bench's construction of moved pages (``bench/_variants.py``), on pages written
here: a moved copy carries the article and the layout's chrome, and nothing of the layout's
own article. The bench's figures rest on it (``docs/quality.md``)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import lxml.html
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

import _variants as V

SOURCE_ARTICLE = (
    "The harbour authority opened the new ferry terminal on the east pier this morning after "
    "three years of building work that ran well over its first budget. Commuters from the "
    "island towns will save twenty minutes on each crossing once the timetable changes next "
    "month, the authority said. Local traders welcomed the terminal but asked for more "
    "parking near the market square, where the old ticket office used to stand."
)
LAYOUT_ARTICLE = (
    "The city library will stay open late on weekdays from the first of the month, its "
    "board decided after a long meeting with readers and staff. Students had asked for quiet "
    "rooms in the evening during the examination season for several years. The extra hours "
    "are paid for by a grant from the regional council, which will review the scheme in a "
    "year and decide whether the reading rooms keep their new hours."
)
MENU = "Home | World | Sports | Weather | Opinion"


def _source(wrapped_in_form: bool) -> str:
    first, rest = SOURCE_ARTICLE.split(". ", 1)
    if wrapped_in_form:  # most of the article inside a form, as an ASP.NET page has it
        story = f"<p>{first}.</p><form id='aspnetForm'><p>{rest}</p></form>"
    else:
        story = f"<p>{first}.</p><p>{rest}</p><form><button>Subscribe</button></form>"
    return (
        f"<html><head><title>Ferry terminal</title></head><body><p>{MENU}</p>"
        f'<div id="story">{story}</div></body></html>'
    )


def _layout(hidden_copy: bool) -> str:
    hidden = ""
    if hidden_copy:  # a schema.org copy of the layout's own article, a little longer
        hidden = (
            '<div style="display:none" itemscope itemtype="http://schema.org/Article">'
            f'<div itemprop="articleBody">Library hours. {LAYOUT_ARTICLE} Updated daily.</div>'
            "</div>"
        )
    return (
        f"<html><head><title>Library hours | Gazette</title></head><body>"
        f"<nav><p>{MENU}</p></nav><h1>Library hours</h1>"
        f'<div id="main"><p>{LAYOUT_ARTICLE}</p></div>{hidden}'
        f"<footer><p>Gazette, all rights reserved</p></footer></body></html>"
    )


def _moved(source_html: str, layout_html: str) -> str:
    """The source's article moved into the layout, as ``bench/quality.py`` builds it."""
    source, layout = V.parse(source_html), V.parse(layout_html)
    assert source is not None and layout is not None
    article = V.locate(source, SOURCE_ARTICLE)
    slot = V.locate(layout, LAYOUT_ARTICLE)
    assert article is not None and slot is not None
    text, nodes = V.article_nodes(source, article)
    head = lxml.html.Element("h1")
    head.text = "Ferry terminal"
    V.put_in_template(layout, slot, LAYOUT_ARTICLE, text, nodes, head, "Ferry terminal", "Gazette")
    return V.text_of(layout.find("body"))


@pytest.mark.parametrize("wrapped_in_form", [False, True])
def test_a_moved_copy_carries_the_article_even_inside_a_form(wrapped_in_form):
    moved = _moved(_source(wrapped_in_form), _layout(hidden_copy=False))
    assert V._norm(SOURCE_ARTICLE) in V._norm(moved)
    assert "Subscribe" not in moved  # a form that is a widget is still left out
    assert "Weather" in moved and "all rights reserved" in moved  # the layout's chrome stays


@pytest.mark.parametrize("hidden_copy", [False, True])
def test_a_moved_copy_holds_nothing_of_the_layouts_own_article(hidden_copy):
    moved = _moved(_source(wrapped_in_form=False), _layout(hidden_copy))
    assert "examination season" not in moved
    assert V._norm(SOURCE_ARTICLE) in V._norm(moved)
    assert "Weather" in moved


def test_an_edit_with_a_control_character_from_the_reference_builds():
    # A reference text may carry a control character from its page; a word of it edited into
    # an article is left without it (an lxml text node cannot hold one), not a crash.
    doc = V.parse(_source(wrapped_in_form=False))
    assert doc is not None
    article = V.locate(doc, SOURCE_ARTICLE)
    assert article is not None
    V.edit_article(article, "en+", 0.5, ["ferry\x0bboat"], random.Random(1))
    text = V.text_of(article)
    assert "ferryboat" in text and "\x0b" not in text


def test_the_slot_is_the_layouts_article_body_not_its_frame():
    # A post's frame (a row with a share bar of icons) around the cell that holds its body:
    # both hold the same text, and the moved article goes into the body's cell, whose class
    # the layout's markup gives it; the frame's textless parts stay.
    layout = V.parse(
        "<html><head><title>Library hours | Gazette</title></head><body>"
        f"<p>{MENU}</p><table><tr id='post-1'><td><table>"
        f"<tr><td class='post-body'><p>{LAYOUT_ARTICLE}</p></td></tr>"
        "<tr><td class='share'><img src='share.png'></td></tr>"
        "</table></td></tr></table></body></html>"
    )
    assert layout is not None
    frame = V.locate(layout, LAYOUT_ARTICLE)
    assert frame is not None and frame.find(".//td[@class='post-body']") is not None
    assert V.article_body(frame).get("class") == "post-body"  # not its paragraph
    source = V.parse(_source(wrapped_in_form=False))
    assert source is not None
    article = V.locate(source, SOURCE_ARTICLE)
    assert article is not None and article.get("id") == "story"
    text, nodes = V.article_nodes(source, article)
    V.put_in_template(layout, frame, LAYOUT_ARTICLE, text, nodes, None, "Ferry", "Gazette")
    (body,) = layout.find_class("post-body")
    assert V._norm(SOURCE_ARTICLE) in V._norm(V.text_of(body))
    assert layout.find(".//img[@src='share.png']") is not None
    assert "examination season" not in V.text_of(layout.find("body"))
