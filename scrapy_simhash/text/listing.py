"""Listing pages: a blog's home, label and archive pages, which show several posts whole.

trafilatura returns one block of such a page as its main text (the first post, in most
layouts), so the listing reads as a copy of that post. Crawled before the post's own page, it
makes that page a near duplicate, which the spider then never parses; crawled after it, the
listing is dropped itself, and the links to its other posts are never followed. A crawl lets a
listing through unchecked and unstored (``simhash/skipped/listing``, ``SIMHASH_SKIP_LISTINGS``).

A page is a listing when it shows at least :data:`MIN_POSTS` posts: elements of one ``class``
attribute that names a post's body (``post-body``, ``entry-content``, ``postContent``,
``article__body``, ``story-body`` ...), none inside another, each of at least
:data:`MIN_POST_WORDS` words and each under a title that links to another page: a heading
(``<h1>`` to ``<h6>``, or an element whose class names a title) holding an ``<a href>`` that
is not an anchor of the page itself, found before the post's body inside its own post (back
to the post before it). That is how Blogger, WordPress and most blog and forum software set
their listings. An article's own page does not read as one: an article set in several blocks
of one class (between pictures or advertisements) has no title linking away above each block,
and the excerpts of other articles that a page may list in its body's class are shorter than
:data:`MIN_POST_WORDS` (WordPress cuts them at 55 words); a listing of such excerpts is no copy
of any post, and stays a page like any other. Of the 1,221 real pages of the benchmarks, two
read as listings, a blog's home page of nine posts and a forum thread of four, and none of
the article pages (``bench/listing_pages.py``).
"""

from __future__ import annotations

import re
from collections import Counter

from lxml import etree
from lxml.html import HtmlElement

from .chrome import line_size

#: A page showing this many posts whole, or more, is a listing.
MIN_POSTS = 2
#: A post shown whole holds at least this many words (a CJK character counts a half); an
#: excerpt, fewer.
MIN_POST_WORDS = 80

#: Every class attribute of the tree, as plain strings: one walk of the tree by the attribute
#: axis, the cheapest (a test of each value in the XPath, or a walk in Python, costs more);
#: only a class that two elements or more share is then looked at.
_CLASSES = etree.XPath("//@class", smart_strings=False)
#: The elements of one class attribute, in document order.
_OF_CLASS = etree.XPath("//*[@class = $name]")
#: A class name of a post's body: what holds it, then what it is.
_BODY_CLASS = re.compile(
    r"(?:post|entry|article|story|blog)[-_]{0,2}(?:body|content|entry)", re.IGNORECASE
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def count_posts(tree: HtmlElement) -> int:
    """How many posts ``tree`` shows whole under titles that link to them, in the one class of
    post bodies that shows most; 0 when no class shows :data:`MIN_POSTS` of them."""
    best = 0
    for name, count in Counter(_CLASSES(tree)).items():
        if count >= MIN_POSTS and _BODY_CLASS.search(name):
            best = max(best, _titled_posts(_OF_CLASS(tree, name=name)))
    return best if best >= MIN_POSTS else 0


def _titled_posts(elements: list[HtmlElement]) -> int:
    """How many of ``elements`` (the elements of one class) are posts shown whole: not inside
    another of them, of :data:`MIN_POST_WORDS` words or more, under a title linking away."""
    members = set(elements)
    bodies = [e for e in elements if not any(a in members for a in e.iterancestors())]
    if len(bodies) < MIN_POSTS:
        return 0
    long_bodies = [b for b in bodies if line_size(b.text_content()) >= MIN_POST_WORDS]
    if len(long_bodies) < MIN_POSTS:
        return 0
    # how many bodies each element holds (a body holds itself): a post's own part of the
    # page ends at an element that holds another
    held: Counter[HtmlElement] = Counter(bodies)
    for body in bodies:
        held.update(body.iterancestors())
    return sum(1 for body in long_bodies if _under_title(body, held))


def _under_title(body: HtmlElement, held: Counter[HtmlElement]) -> bool:
    """Whether a title linking away comes before ``body`` inside its own post: among the
    elements before it, and before each of its ancestors up to the first that holds another
    body (``held``: how many bodies an element holds), back to one that holds a body."""
    node = body
    while True:
        for before in node.itersiblings(preceding=True):
            if before in held:
                return False  # the post before this one
            if isinstance(before.tag, str) and _holds_title_link(before):
                return True
        parent = node.getparent()
        if parent is None or held[parent] > 1:
            return False
        node = parent


def _holds_title_link(element: HtmlElement) -> bool:
    """Whether ``element`` is or holds a title (a heading, or an element whose class names a
    title) with a link to another page in it."""
    for link in element.iter("a"):
        href = (link.get("href") or "").strip()
        if not href or href.startswith(("#", "javascript:")):
            continue
        for node in (link, *link.iterancestors()):
            if _is_title(node):
                return True
            if node is element:
                break
    return False


def _is_title(element: HtmlElement) -> bool:
    return element.tag in _HEADINGS or "title" in (element.get("class") or "").lower()
