"""What a reader of a page never sees: the elements its markup hides, left out before
extraction.

trafilatura's own pass already leaves out hidden elements, but in its recall-favouring mode
the fallback extractors it compares with read the whole tree. On a page whose article is
short, they can return the text of a closed cookie-consent banner (a table of cookies,
their providers and purposes), a pop-up that is never shown, or the notice a
``<noscript>`` shows to readers whose browsers run no scripts; that text, the same on every
page of the site, then becomes the page's. Only what the markup itself says is hidden
counts; class names ("modal", "popup") are not read, since articles sit in elements so
named on real sites.

Only elements near the top of the body are left out (:data:`OVERLAY_DEPTH`): a banner or a
pop-up is put there, outside the layout's columns, so that it shows above the page. What a
page hides deep in its columns is most often its own article again (a copy for search
engines' structured data, a print version, a passage its scripts reveal), which the fallback
extractors may still read. Inside the layout's own landmarks (a ``<header>``, ``<nav>``,
``<aside>`` or ``<footer>``, or an element whose role names one) a hidden element that
holds text is left out at any depth: a site keeps its sign-in and sign-up pop-ups, its
menus' closed panels and its subscription offers there, never a copy of the article.
"""

from __future__ import annotations

import re

from lxml import etree
from lxml.html import HtmlElement

#: The attributes that hide an element, found by the attribute axis (the cheap way to find
#: them: a test of every element costs a tenth of the extraction's time).
_HIDING_ATTRIBUTES = etree.XPath("//@style | //@hidden | //@aria-hidden | //@aria-modal | //@role")
#: The elements hidden by what they are: a ``<dialog>`` not open, and ``<noscript>``, shown
#: only to a reader whose browser runs no scripts (a consent notice, "enable JavaScript").
#: Found in one walk of the tree (``iter`` with both tags: two thirds of the time of the
#: XPath ``//noscript | //dialog[not(@open)]``, which walks it once a tag).
_HIDDEN_TAGS = ("noscript", "dialog")
_HIDING_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
_DIALOG_ROLES = frozenset({"dialog", "alertdialog"})
#: Elements never left out, whatever they say: a page that hides its whole body until its
#: scripts run is still read.
_KEPT_TAGS = frozenset({"html", "head", "body"})
#: How deep below ``<body>`` a hidden element is left out (1: a child of ``<body>``). The
#: consent banners and pop-ups of the benchmarks' real pages sit 1 to 3 levels down; nearly
#: all the hidden copies of a page's own article, 4 to 12.
OVERLAY_DEPTH = 3
#: The layout's landmarks, by tag and by ARIA role: a hidden element that holds text inside
#: one is left out at any depth. Of the 1,221 real pages of the benchmarks, none extracts to
#: another text for it (``docs/quality-history.md``).
_LANDMARK_TAGS = frozenset({"header", "nav", "aside", "footer"})
_LANDMARK_ROLES = frozenset({"banner", "navigation", "complementary", "contentinfo"})


def _near_top(element: HtmlElement) -> bool:
    """Whether ``element`` is at most :data:`OVERLAY_DEPTH` levels below ``<body>`` (or the
    root, in a tree without one); its ancestors are walked no further than that."""
    depth = 1
    for ancestor in element.iterancestors():
        if ancestor.tag in ("body", "html"):
            return True
        depth += 1
        if depth > OVERLAY_DEPTH:
            return False
    return True


def _in_landmark(element: HtmlElement) -> bool:
    """Whether ``element`` is inside one of the layout's landmarks (:data:`_LANDMARK_TAGS`,
    :data:`_LANDMARK_ROLES`)."""
    for ancestor in element.iterancestors():
        if ancestor.tag in _LANDMARK_TAGS:
            return True
        role = ancestor.get("role")
        if role is not None and role.strip().lower() in _LANDMARK_ROLES:
            return True
    return False


def _left_out_where(element: HtmlElement) -> bool:
    """Whether a hidden ``element`` is where hidden elements are left out: near the top of
    the body, or, when it holds text, inside a landmark of the layout (a hidden icon there,
    a menu's toggle, holds nothing a reader would be given; the tree around it is left as
    it was)."""
    return _near_top(element) or (_in_landmark(element) and _holds_text(element))


def _holds_text(element: HtmlElement) -> bool:
    """Whether ``element`` holds any text but white space."""
    return any(not text.isspace() for text in element.itertext() if text)


def _hides(name: str, value: str) -> bool:
    """Whether an attribute hides its element from a reader."""
    if name == "style":
        lowered = value.lower()
        return ("none" in lowered or "hidden" in lowered) and (
            _HIDING_STYLE.search(lowered) is not None
        )
    if name == "hidden":
        # hidden="until-found" is content the browser reveals when it is searched for
        # (an accordion's panel): the page's own text
        return value.strip().lower() != "until-found"
    if name in ("aria-hidden", "aria-modal"):
        return value.strip().lower() == "true"
    return value.strip().lower() in _DIALOG_ROLES  # role


def hidden_elements(tree: HtmlElement) -> list[HtmlElement]:
    """The elements of ``tree`` that a reader does not see: ``<noscript>``, a ``<dialog>``
    not open, and an element whose markup hides it (an inline ``display: none`` or
    ``visibility: hidden``, the ``hidden`` attribute but for ``hidden="until-found"``,
    ``aria-hidden="true"``) or makes it a dialog (``role="dialog"`` or ``"alertdialog"``,
    ``aria-modal="true"``); each at most :data:`OVERLAY_DEPTH` levels below ``<body>``, or,
    holding text, inside a ``<header>``, ``<nav>``, ``<aside>`` or ``<footer>`` (or an
    element of the role ``banner``, ``navigation``, ``complementary`` or ``contentinfo``)
    at any depth. ``<html>``, ``<head>`` and ``<body>`` are never among them."""
    found: dict[int, HtmlElement] = {}
    for element in tree.iter(_HIDDEN_TAGS):
        if (element.tag == "noscript" or element.get("open") is None) and _left_out_where(element):
            found[id(element)] = element
    for value in _HIDING_ATTRIBUTES(tree):
        element = value.getparent()
        if (
            element is not None
            and id(element) not in found
            and element.tag not in _KEPT_TAGS
            and _hides(value.attrname, value)
            and _left_out_where(element)
        ):
            found[id(element)] = element
    return list(found.values())


def drop_hidden(tree: HtmlElement) -> None:
    """Remove from ``tree`` what :func:`hidden_elements` finds (each element's tail, the text
    after it, stays)."""
    for element in hidden_elements(tree):
        if element.getparent() is not None:
            element.drop_tree()
