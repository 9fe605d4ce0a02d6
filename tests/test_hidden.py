"""Hidden elements left out before extraction: real trafilatura on pages written for these
tests, each a short article beside a long banner of cookies that the page never shows."""

from __future__ import annotations

import lxml.html
import pytest

from scrapy_simhash import extract_text, page_signature
from scrapy_simhash.text.hidden import OVERLAY_DEPTH, drop_hidden, hidden_elements

FERRY = (
    "The harbour authority opened a second ferry terminal on Monday, cutting the waiting "
    "time for passengers travelling to the islands by almost half during the summer months. "
    "Officials said the new terminal would handle up to forty departures a day and that the "
    "old quay would be kept for freight and fishing boats."
)
ORCHARD = (
    "A cooperative of fruit growers in the valley has planted six hundred apple trees of old "
    "local varieties, grafted from the last trees left in farmyards and church gardens. The "
    "growers hope to sell the first juice within five years and to give cuttings to anyone "
    "who wants to keep one of the varieties alive."
)
PROVIDERS = ["Northwind Analytics", "Bluebird Ads", "Cedar Metrics", "Harbor Video", "Lumen Social"]


def banner() -> str:
    """A consent banner's table of cookies: long, the same on every page of the site."""
    rows = []
    for i, name in enumerate(PROVIDERS * 3):
        rows.append(
            f"<div class='row'><p>Provider: {name}</p><p>Purpose: This cookie stores "
            "information about the way visitors use the website so that the provider can "
            "measure how often pages are viewed and which offers are shown to them on partner "
            f"sites and other platforms.</p><p>Expiry: {i + 1} months</p><p>Name: _id{i}</p></div>"
        )
    return "".join(rows)


def page(article: str, hiding: str = 'style="display: none"', body: str = "") -> str:
    return (
        "<html><head><title>Local news</title></head>"
        f"<body {body}><nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        f"<main><article><h1>Local news</h1><p>{article}</p></article></main>"
        f"<div id='consent-overlay' {hiding}><h2>Cookie settings</h2>{banner()}</div>"
        "<footer>Harbour News</footer></body></html>"
    )


HIDINGS = [
    'style="display: none"',
    'style="DISPLAY:NONE"',
    'style="Display: None"',
    'style="position: fixed; visibility : hidden"',
    "hidden",
    'hidden="hidden"',
    'aria-hidden="true"',
    'role="dialog"',
    'role="alertdialog"',
    'aria-modal="true"',
]


@pytest.mark.parametrize("hiding", HIDINGS)
def test_a_hidden_banner_is_not_read_as_the_article(hiding: str) -> None:
    text = extract_text(page(FERRY, hiding))
    assert text is not None
    assert "second ferry terminal" in text
    assert "Provider" not in text


@pytest.mark.parametrize("tag", ["noscript", "dialog"])
def test_a_banner_for_readers_without_scripts_or_in_a_closed_dialog_is_not_read(tag: str) -> None:
    html = (
        page(FERRY, hiding="")
        .replace("<div id='consent-overlay' >", f"<{tag} id='consent-overlay'>")
        .replace("</div><footer>", f"</{tag}><footer>")
    )
    assert f"<{tag} id='consent-overlay'>" in html and f"</{tag}><footer>" in html
    text = extract_text(html)
    assert text is not None
    assert "second ferry terminal" in text
    assert "Provider" not in text


def test_an_open_dialog_is_kept() -> None:
    doc = lxml.html.fromstring(
        "<html><body><dialog id='open' open>Shown</dialog><dialog id='closed'>Not shown</dialog>"
        "<noscript id='ns'>Enable scripts</noscript></body></html>"
    )
    assert sorted(e.get("id") for e in hidden_elements(doc)) == ["closed", "ns"]


@pytest.mark.parametrize("hiding", ['style="display: block"', 'aria-hidden="false"', 'role="note"'])
def test_a_shown_element_is_kept(hiding: str) -> None:
    doc = lxml.html.fromstring(page(FERRY, hiding))
    assert not [e for e in hidden_elements(doc) if e.get("id") == "consent-overlay"]


def assert_two_pages(html_a: str, html_b: str) -> None:
    """Both pages have a signature, and neither is a near duplicate of the other."""
    a = page_signature(extract_text(html_a) or "")
    b = page_signature(extract_text(html_b) or "")
    assert a is not None and b is not None
    assert not a.is_near_duplicate(b)
    assert not b.is_near_duplicate(a)


def test_two_articles_in_one_layout_with_a_hidden_banner_are_two_pages() -> None:
    assert_two_pages(page(FERRY), page(ORCHARD))


def test_a_body_hidden_until_its_scripts_run_is_still_read() -> None:
    text = extract_text(
        "<html><head><title>Local news</title></head><body style='display:none' hidden>"
        f"<article><h1>Local news</h1><p>{FERRY}</p><p>{ORCHARD}</p></article></body></html>"
    )
    assert text is not None
    assert "second ferry terminal" in text and "apple trees" in text


def test_what_is_found_and_what_stays() -> None:
    doc = lxml.html.fromstring(
        "<html><head></head><body aria-hidden='true'><div id='a'>"
        "<p id='kept'>An article's paragraph.</p>"
        "<div id='panel' hidden='until-found'>An accordion's panel, found by search.</div>"
        "<span id='icon' aria-hidden='true'>*</span> the tail stays"
        "<div id='dialog' role='Dialog'><p id='inner' style='display:none'>Sign up</p></div>"
        "</div></body></html>"
    )
    assert [e.get("id") for e in hidden_elements(doc)] == ["icon", "dialog", "inner"]
    drop_hidden(doc)
    assert doc.xpath("//*[@id='icon' or @id='dialog' or @id='inner']") == []
    assert doc.xpath("//*[@id='kept' or @id='panel']") != []
    assert "the tail stays" in doc.text_content()
    assert doc.find("body") is not None


def test_what_is_hidden_deep_in_the_layouts_columns_stays() -> None:
    """A hidden element more than OVERLAY_DEPTH levels below <body> (a copy of the article for
    structured data, a passage the page's scripts reveal) is not left out; one at that depth
    is."""

    def nested(levels: int) -> str:
        inner = "<div id='copy' style='display:none'>The article again.</div>"
        for _ in range(levels - 1):
            inner = f"<div>{inner}</div>"
        return f"<html><head></head><body>{inner}</body></html>"

    at_depth = lxml.html.fromstring(nested(OVERLAY_DEPTH))
    assert [e.get("id") for e in hidden_elements(at_depth)] == ["copy"]
    deeper = lxml.html.fromstring(nested(OVERLAY_DEPTH + 1))
    assert hidden_elements(deeper) == []
    drop_hidden(deeper)
    assert "The article again." in deeper.text_content()


#: What a site's sign-in and sign-up pop-ups say, step by step.
POPUP_LINES = [
    "We have sent an email with instructions to the address you gave us, and your existing "
    "password has not been changed.",
    "Your newsletters, saved articles and comment history stay as they were while you confirm "
    "the new address.",
    "By clicking confirm, you agree to the terms of service, the privacy policy and the cookie "
    "policy of the publisher.",
    "Sign in with the account you use for our contests, videos and newsletters, or create one "
    "in less than a minute.",
    "If you did not ask for a new password, you can ignore this message and your account will "
    "not change in any way.",
    "Members get early access to tickets, a weekly digest of the best stories and invitations "
    "to events near them.",
    "An error has occurred while trying to update your details, so please try again later or "
    "contact our support team.",
    "Thank you for signing up, and please check your inbox for the link that activates your "
    "account with us today.",
    "Choose the newsletters you want to receive, and change your choice at any time from the "
    "settings of your profile.",
    "Your profile picture and display name are shown beside your comments, while your email "
    "address is never shown.",
]


def sign_in_popups() -> str:
    """A site's sign-in and sign-up pop-ups, six steps kept hidden until a reader clicks
    "Sign in": longer than a short article, the same on every page of the site."""
    return "".join(
        f"<div id='popup{i}' style='display:none;'><h2>Step {i + 1}</h2>"
        + "".join(f"<p>{POPUP_LINES[(3 * i + j) % len(POPUP_LINES)]}</p>" for j in range(3))
        + "</div>"
        for i in range(6)
    )


LANDMARKS = [
    ("footer", ""),
    ("nav", ""),
    ("header", ""),
    ("aside", ""),
    ("div", "role='contentinfo'"),
    ("div", "role='Navigation'"),
]


def landmark_page(article: str, tag: str = "footer", attrs: str = "") -> str:
    """A short article in a plain column, and the site's pop-ups hidden inside a landmark of
    its layout, six levels below <body> (deeper than OVERLAY_DEPTH)."""
    return (
        "<html><head><title>Match report</title></head><body><div id='page'>"
        f"<div class='content'><h1>Match report</h1><div class='story'>{article}</div></div>"
        f"<div class='bottom'><{tag} {attrs}><div class='inner'><div class='widgets'>"
        f"{sign_in_popups()}</div></div></{tag}></div></div></body></html>"
    )


@pytest.mark.parametrize(("tag", "attrs"), LANDMARKS)
def test_what_a_landmark_of_the_layout_hides_is_left_out_at_any_depth(tag: str, attrs: str) -> None:
    html = landmark_page(FERRY, tag, attrs)
    doc = lxml.html.fromstring(html)
    popup = doc.get_element_by_id("popup0")
    # its depth below <body> (a child of <body> is 1, with <body> and <html> above it)
    assert len(list(popup.iterancestors())) - 1 == 6 > OVERLAY_DEPTH
    assert {e.get("id") for e in hidden_elements(doc)} == {f"popup{i}" for i in range(6)}
    text = extract_text(html)
    assert text is not None
    assert "second ferry terminal" in text
    assert not any(line in text for line in POPUP_LINES)


def test_two_short_articles_in_a_layout_whose_footer_hides_its_pop_ups_are_two_pages() -> None:
    """The fallback extractors read a hidden block longer than a short article as part of
    the page's text; left in, the pop-ups would be most of the text of every page of the
    site, and its short articles one page."""
    assert_two_pages(landmark_page(FERRY), landmark_page(ORCHARD))


def test_what_is_hidden_deep_outside_the_landmarks_stays() -> None:
    """The same pop-ups deep in a plain <div>, or in an <article>'s columns, stay (what a page
    hides in its columns is most often its own article again)."""
    for tag in ("div", "section", "article"):
        doc = lxml.html.fromstring(landmark_page(FERRY, tag))
        assert hidden_elements(doc) == []


def test_a_hidden_icon_in_a_landmark_stays() -> None:
    """A hidden element without text inside a landmark (a menu's toggle icon) holds nothing a
    reader would be given: the tree is left as it was."""
    doc = lxml.html.fromstring(
        "<html><body><div><div><div><nav><div><a id='toggle' aria-hidden='true'>"
        "<span class='icon'> </span></a><a href='/'>Home</a></div></nav></div></div></div>"
        "</body></html>"
    )
    assert hidden_elements(doc) == []
