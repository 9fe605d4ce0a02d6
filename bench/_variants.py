"""HTML variants of real pages for ``bench/quality.py``: every variant is a whole page, which
the bench then extracts exactly as a crawl does.

The article of a page is located by its reference text (``gt`` in the corpus): the smallest
element whose text holds at least 85% of what the page's whole body holds of the reference
text (token counts, CJK characters one by one). Everything here works on lxml trees and
is deterministic given a ``random.Random``.
"""

from __future__ import annotations

import copy
import random
import re
from collections import Counter
from urllib.parse import urlsplit

import lxml.etree
import lxml.html

_TOK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]|[^\W_]+")
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
_HAS_WORD = re.compile(r"[^\W_]")
_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.IGNORECASE)
# What an lxml text node cannot hold: control characters other than tab and line breaks (a
# reference text may carry one from its page, and an edit may move it into the page).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
#: Elements whose text is never page text.
SKIP = frozenset({"script", "style", "noscript", "template", "svg", "iframe"})
#: Elements of the source site's widgets, not of its article, left out of a moved copy.
WIDGETS = ("script", "style", "noscript", "iframe", "form", "button", "svg", "nav")
#: Widgets that may wrap the article itself: kept (without their tag) when they hold at least
#: half of its text.
WRAPPERS = frozenset({"form", "nav"})
COVERAGE = 0.85
#: Elements that hold text rather than blocks: an article slot that is one is made a <div>.
TEXT_LEVEL = frozenset({"p", "span", "font", "a", "b", "i", "em", "strong", "ul", "ol", "li"})


def tokens(text: str) -> list[str]:
    return _TOK.findall(text.casefold())


def parse(html: str) -> lxml.html.HtmlElement | None:
    try:
        doc = lxml.html.document_fromstring(_XML_DECL.sub("", html, count=1))
    except Exception:
        return None
    return doc if doc.find("body") is not None else None


def serialize(doc: lxml.html.HtmlElement) -> bytes:
    """The page as UTF-8 bytes (a crawl would get them with ``charset=utf-8``)."""
    return lxml.etree.tostring(doc.getroottree(), method="html", encoding="utf-8")


def text_of(el: lxml.html.HtmlElement) -> str:
    """The element's visible text: no script, style and the like."""
    parts: list[str] = []

    def walk(x: lxml.html.HtmlElement) -> None:
        if isinstance(x.tag, str) and x.tag not in SKIP:
            if x.text:
                parts.append(x.text)
            for c in x:
                walk(c)
                if c.tail:
                    parts.append(c.tail)

    walk(el)
    return " ".join(parts)


def locate(doc: lxml.html.HtmlElement, gt: str) -> lxml.html.HtmlElement | None:
    """The article's element: the smallest holding >= 85% of what the body holds of ``gt``."""
    want = Counter(tokens(gt))
    total = sum(want.values())
    if total < 20:
        return None
    body = doc.find("body")
    found: list[tuple[float, int, lxml.html.HtmlElement]] = []
    for el in body.iter():
        if not isinstance(el.tag, str) or el.tag in SKIP:
            continue
        toks = tokens(text_of(el))
        if len(toks) < 0.5 * total:
            continue
        have = Counter(toks)
        cov = sum(min(n, have[w]) for w, n in want.items()) / total
        found.append((cov, len(toks), el))
    if not found:
        return None
    best = max(c for c, _, _ in found)
    if best < 0.5:
        return None
    _, _, el = min((f for f in found if f[0] >= COVERAGE * best), key=lambda f: f[1])
    return None if el.tag in ("body", "html") else el


def article_body(article: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    """Where another article goes in a layout whose article is ``article``: of a frame and
    the one child that holds all its text, the child, down to the block that holds the
    paragraphs. A layout's article body (``div.entry-content``, ``td.post-body``) sits in a
    textless frame (share bars, image boxes) that holds the same text; the frame and the
    body's own markup stay."""
    size = len(tokens(text_of(article)))
    while True:
        inner = [
            c
            for c in article
            if isinstance(c.tag, str) and c.tag not in SKIP and len(tokens(text_of(c))) == size
        ]
        if len(inner) != 1 or inner[0].tag in TEXT_LEVEL:
            return article
        article = inner[0]


def headline(
    doc: lxml.html.HtmlElement, article: lxml.html.HtmlElement
) -> lxml.html.HtmlElement | None:
    """The page's first <h1> with text, outside the article element."""
    inside = set(article.iter())
    for h in doc.iter("h1"):
        if h not in inside and text_of(h).strip():
            return h
    return None


def title_of(doc: lxml.html.HtmlElement) -> str:
    t = doc.find(".//title")
    return " ".join((t.text_content() if t is not None else "").split())


def headline_text(doc: lxml.html.HtmlElement, article: lxml.html.HtmlElement | None) -> str:
    """What the page calls its article: its <h1>, else the first part of its <title>."""
    for h in doc.iter("h1"):
        s = " ".join(text_of(h).split())
        if s:
            return s
    t = title_of(doc)
    return re.split(r"\s+[|\-–—_]\s+|_", t)[0].strip() if t else ""


# ---------------------------------------------------------------- moving an article


def article_nodes(doc: lxml.html.HtmlElement, article: lxml.html.HtmlElement) -> tuple[str, list]:
    """Copies of the article element's content (its text and children), without the source
    site's widgets (a form or nav that holds half the article or more is not one: its content
    stays), table cells turned into divisions."""
    box = copy.deepcopy(article)
    whole = len(_norm(text_of(box)))
    for el in list(box.iter(*WIDGETS)):
        if el.getparent() is None:
            continue
        if el.tag in WRAPPERS and len(_norm(text_of(el))) >= whole / 2:
            el.drop_tag()  # the article's text in a form (an ASP.NET page)
        else:
            el.drop_tree()
    if box.tag in ("tr", "tbody", "thead", "table", "ul", "ol"):
        for el in box.iter("td", "th", "tr", "tbody", "li"):
            el.tag = "div"
    return box.text or "", list(box)


def _attach(slot: lxml.html.HtmlElement, text: str, nodes: list) -> None:
    """Empty ``slot`` (its attributes stay) and put ``text`` and ``nodes`` in it."""
    for c in list(slot):
        slot.remove(c)
    if slot.tag in ("tr",):
        cell = lxml.html.Element("td")
        slot.append(cell)
        slot = cell
    elif slot.tag in ("table", "tbody", "thead"):
        row = lxml.html.Element("tr")
        cell = lxml.html.Element("td")
        row.append(cell)
        slot.append(row)
        slot = cell
    elif slot.tag in TEXT_LEVEL:
        slot.tag = "div"
    slot.text = text
    for n in nodes:
        slot.append(n)


def _norm(s: str) -> str:
    return " ".join(tokens(s))


def _repeats(text: str, article: Counter) -> bool:
    """Whether ``text`` is mostly a copy of the article whose tokens ``article`` counts: 50
    tokens or more, nine in ten of them the article's (a hidden schema.org ``articleBody``,
    a print version: the page's own article again, not what a copy of another carries)."""
    mine = Counter(tokens(text))
    total = sum(mine.values())
    return total >= 50 and sum((mine & article).values()) >= 0.9 * total


def put_in_template(
    tpl: lxml.html.HtmlElement,
    tpl_article: lxml.html.HtmlElement,
    tpl_gt: str,
    text: str,
    nodes: list,
    head: lxml.html.HtmlElement | None,
    title: str,
    site_name: str,
) -> lxml.html.HtmlElement:
    """The template page (modified in place) carrying other content in its article slot.

    The template's article body (:func:`article_body`) is emptied and gets ``text`` and
    ``nodes``; its headline (an <h1> outside the article element) gives way to ``head`` (or
    is removed); other elements outside the slot that only repeat the template's own article
    (a standfirst, a summary, a hidden copy of its body) are removed; its <title> and
    description meta tags name the new content. The rest (menus, breadcrumbs, related lists,
    footers) stays."""
    own_head = headline(tpl, tpl_article)
    own_title = _norm(headline_text(tpl, tpl_article))
    slot_and_above = set(tpl_article.iter()) | set(tpl_article.iterancestors())
    gt_norm = _norm(tpl_gt)
    gt_tokens = Counter(tokens(tpl_gt))
    drop = []
    for el in tpl.find("body").iter():
        if not isinstance(el.tag, str) or el in slot_and_above or el is own_head:
            continue
        if any(a in drop for a in el.iterancestors()):
            continue
        own = _norm(text_of(el))
        if len(own) >= 25 and (own in gt_norm or _repeats(own, gt_tokens)):
            drop.append(el)
    for el in drop:
        if el.getparent() is not None:
            el.drop_tree()
    # the template's headline elsewhere (a table cell, a breadcrumb) names the new content
    if len(own_title) >= 4:
        for el in list(tpl.find("body").iter()):
            if not isinstance(el.tag, str) or el in slot_and_above or el is own_head:
                continue
            if el.getparent() is None or el.tag in SKIP:
                continue
            if _norm(text_of(el)) == own_title and not any(
                _norm(text_of(c)) == own_title for c in el if isinstance(c.tag, str)
            ):
                for c in list(el):
                    el.remove(c)
                el.text = title
    slot = article_body(tpl_article)
    _attach(slot, text, nodes)
    if own_head is not None and own_head.getparent() is not None:
        if head is not None:
            own_head.addprevious(copy.deepcopy(head))
        own_head.drop_tree()
    elif head is not None:
        slot.insert(0, copy.deepcopy(head))
        slot[0].tail, slot.text = slot.text, None
    t = tpl.find(".//title")
    if t is not None:
        for c in list(t):
            t.remove(c)
        t.text = f"{title} | {site_name}" if title else site_name
    for meta in tpl.iter("meta"):
        key = (meta.get("name") or meta.get("property") or "").lower()
        if key in ("description", "og:description", "twitter:description"):
            meta.drop_tree()
        elif key in ("og:title", "twitter:title"):
            meta.set("content", title)
    for s in tpl.iter("script"):
        if (s.get("type") or "").lower() == "application/ld+json" and s.getparent() is not None:
            s.drop_tree()
    return tpl


def synthetic_url(tpl_url: str, slug: str) -> str | None:
    if not tpl_url:
        return None
    parts = urlsplit(tpl_url)
    return f"{parts.scheme or 'https'}://{parts.netloc}/syndicated/{slug}.html"


# ---------------------------------------------------------------- text-node edits


def text_slots(el: lxml.html.HtmlElement) -> list[tuple[lxml.html.HtmlElement, str]]:
    """(element, "text" | "tail") of every text node inside ``el``, in document order,
    leaving out scripts, styles and the like (and ``el``'s own tail)."""
    out: list[tuple[lxml.html.HtmlElement, str]] = []

    def walk(x: lxml.html.HtmlElement) -> None:
        if not isinstance(x.tag, str) or x.tag in SKIP:
            return
        out.append((x, "text"))
        for c in x:
            walk(c)
            out.append((c, "tail"))

    walk(el)
    return out


def _get(slot: tuple[lxml.html.HtmlElement, str]) -> str:
    return getattr(slot[0], slot[1]) or ""


def _set(slot: tuple[lxml.html.HtmlElement, str], value: str) -> None:
    setattr(slot[0], slot[1], _NOT_XML.sub("", value))


def split_words(text: str, group: str) -> list[str]:
    """``text`` cut into pieces that join back to it; word pieces match ``\\w``."""
    if group == "zh":
        import jieba

        jieba.setLogLevel(30)
        return jieba.lcut(text, HMM=False)
    return [p for p in re.split(f"({_WORD.pattern})", text) if p]


def is_word(piece: str) -> bool:
    return bool(_HAS_WORD.search(piece))


def edit_article(
    article: lxml.html.HtmlElement, group: str, share: float, pool: list[str], rng: random.Random
) -> None:
    """Edit ``share`` of the article's words in place: 60% replaced by a word of ``pool``,
    20% deleted, 20% with a word of ``pool`` inserted before them."""
    slots = text_slots(article)
    pieces = [split_words(_get(s), group) for s in slots]
    where = [(i, j) for i, ps in enumerate(pieces) for j, p in enumerate(ps) if is_word(p)]
    if not where:
        return
    n = max(1, round(share * len(where)))
    sep = "" if group == "zh" else " "
    for i, j in rng.sample(where, min(n, len(where))):
        op = rng.random()
        if op < 0.6:
            pieces[i][j] = rng.choice(pool)
        elif op < 0.8:
            pieces[i][j] = ""
        else:
            pieces[i][j] = rng.choice(pool) + sep + pieces[i][j]
    for s, ps in zip(slots, pieces, strict=True):
        _set(s, "".join(ps))


def truncate_article(article: lxml.html.HtmlElement, group: str, share: float) -> None:
    """Keep the first ``share`` of the article's words (and the markup before the cut)."""
    slots = text_slots(article)
    pieces = [split_words(_get(s), group) for s in slots]
    n_words = sum(1 for ps in pieces for p in ps if is_word(p))
    keep = round(share * n_words)
    seen = 0
    cut = None
    for i, ps in enumerate(pieces):
        for j, p in enumerate(ps):
            if is_word(p):
                if seen == keep:
                    cut = (i, j)
                    break
                seen += 1
        if cut:
            break
    if cut is None:
        return
    i, j = cut
    _set(slots[i], "".join(pieces[i][:j]).rstrip())
    started = {id(el): k for k, (el, kind) in enumerate(slots) if kind == "text"}
    later = [el for el, kind in slots if kind == "text" and started[id(el)] > i]
    for k in range(i + 1, len(slots)):
        if slots[k][1] == "tail":
            _set(slots[k], "")
    removed = set()
    for el in later:
        if el is article or any(id(a) in removed for a in el.iterancestors()):
            continue
        removed.add(id(el))
        if el.getparent() is not None:
            el.getparent().remove(el)


# ---------------------------------------------------------------- dates, ads, links

_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_DATES = [
    # 2019-11-19, 2019/11/19, 2019.11.19
    (re.compile(r"(?<!\d)((?:19|20)\d\d)([-/.])(\d{1,2})\2(\d{1,2})(?!\d)"), "iso"),
    # 19.11.2019, 19/11/2019
    (re.compile(r"(?<!\d)(\d{1,2})([./])(\d{1,2})\2((?:19|20)\d\d)(?!\d)"), "dmy"),
    # November 19, 2019 / Nov. 19
    (re.compile(rf"\b({_MONTHS})\.?\s+(\d{{1,2}})\b"), "md"),
    # 19 November 2019
    (re.compile(rf"\b(\d{{1,2}})\s+({_MONTHS})\b"), "dm"),
    # 2019年11月19日, 11月19日
    (re.compile(r"(\d{1,2})月(\d{1,2})日"), "zh"),
    # 10:45, 10:45:12
    (re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\d:])"), "time"),
    # 3 hours ago, 12 comments, 1,234 views, 5 min read
    (
        re.compile(
            r"(?<![\d.,])(\d[\d,]*)(\s*)(seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?|"
            r"comments?|views?|shares?|likes?|replies|reads?|min read)\b",
            re.IGNORECASE,
        ),
        "count",
    ),
    # 3小时前, 12条评论, 阅读 1234, 评论(12)
    (
        re.compile(r"(\d+)(\s*)(秒前|分钟前|小时前|天前|条评论|人参与|次阅读|人阅读|评论|阅读)"),
        "count",
    ),
    (re.compile(r"(阅读|评论|点赞|浏览|参与)(\s*[:：(（]?\s*)(\d+)"), "count_pre"),
    # a year alone (in a byline's date)
    (re.compile(r"(?<![\d.,])((?:19|20)\d\d)年"), "year_zh"),
]


def _shift_date(m: re.Match, kind: str, rng: random.Random) -> str:
    d = rng.randint(1, 27)
    if kind == "iso":
        return f"{m[1]}{m[2]}{m[3]}{m[2]}{d:0{len(m[4])}d}"
    if kind == "dmy":
        return f"{d:0{len(m[1])}d}{m[2]}{m[3]}{m[2]}{m[4]}"
    if kind == "md":
        return m[0].replace(m[2], str(d), 1) if m[2] else m[0]
    if kind == "dm":
        return f"{d} {m[2]}"
    if kind == "zh":
        return f"{m[1]}月{d}日"
    if kind == "time":
        h = (int(m[1]) + rng.randint(1, 11)) % (24 if int(m[1]) > 12 else 12) or 12
        return f"{h}:{rng.randint(0, 59):02d}" + (m[0][len(m[1]) + 3 :])
    if kind == "count":
        return f"{rng.randint(2, 999)}{m[2]}{m[3]}"
    if kind == "count_pre":
        return f"{m[1]}{m[2]}{rng.randint(2, 999)}"
    if kind == "year_zh":
        return f"{int(m[1]) + 1}年"
    return m[0]


def change_dates(doc: lxml.html.HtmlElement, rng: random.Random) -> int:
    """Change dates, times and counters (views, comments, "3 hours ago") in the page's text
    and in ``<time datetime>``; the number of changes."""
    changed = 0
    for slot in text_slots(doc.find("body")):
        s = _get(slot)
        if not s or not any(c.isdigit() for c in s):
            continue
        for rx, kind in _DATES:
            s, n = rx.subn(lambda m, kind=kind: _shift_date(m, kind, rng), s)
            changed += n
        _set(slot, s)
    for t in doc.iter("time"):
        if t.get("datetime"):
            t.set(
                "datetime",
                _DATES[0][0].sub(lambda m: _shift_date(m, "iso", rng), t.get("datetime")),
            )
    return changed


AD_LABEL = {"en+": "Advertisement", "zh": "广告"}
SPONSORED = {
    "en+": [
        "Sponsored: These are the best savings accounts of the year. See the rates",
        "Sponsored: Doctors stunned by this simple morning routine",
        "Sponsored: Compare car insurance quotes in two minutes",
        "Sponsored: The smart thermostat everyone is buying this winter",
    ],
    "zh": [
        "推广：今年最值得入手的理财产品，点击查看利率",
        "推广：医生都推荐的晨间习惯，坚持一个月见效",
        "推广：两分钟比较车险报价，立省上千元",
        "推广：这款智能家电今年冬天卖爆了",
    ],
}


def _blocks_in(article: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The article's paragraph-like elements that hold text, in order."""
    out = [
        el
        for el in article.iter("p", "h2", "h3", "blockquote", "li")
        if len(text_of(el).strip()) >= 20
    ]
    if not out:
        out = [el for el in article if isinstance(el.tag, str) and text_of(el).strip()]
    return out


def _insert_after(anchor: lxml.html.HtmlElement, fragment: str) -> None:
    node = lxml.html.fragment_fromstring(fragment)
    node.tail, anchor.tail = anchor.tail, None
    anchor.addnext(node)


def insert_ads(article: lxml.html.HtmlElement, group: str, rng: random.Random) -> None:
    """Ad slots and a sponsored link inside the article, after its 2nd and 5th paragraphs."""
    blocks = _blocks_in(article)
    label = AD_LABEL[group]
    spots = [b for k, b in enumerate(blocks) if k in (1, 4)] or blocks[-1:]
    for k, anchor in enumerate(spots):
        n = rng.randrange(10**6)
        if k == 0:
            frag = (
                f'<div class="ad-slot" id="div-gpt-ad-{n}"><span class="ad-label">{label}</span>'
                f'<iframe src="https://ads.example.net/slot/{n}"></iframe></div>'
            )
        else:
            teaser = rng.choice(SPONSORED[group])
            frag = (
                f'<div class="sponsored" data-ad="{n}"><span class="ad-label">{label}</span>'
                f'<a href="https://ads.example.net/c/{n}">{teaser}</a></div>'
            )
        _insert_after(anchor, frag)


READ_MORE = {"en+": "Read more:", "zh": "延伸阅读："}
RELATED = {"en+": "Related articles", "zh": "相关阅读"}


def insert_related(
    article: lxml.html.HtmlElement, group: str, titles: list[str], rng: random.Random
) -> None:
    """A "Read more: <headline>" line after the 3rd paragraph and a list of related headlines
    at the end of the article element."""
    blocks = _blocks_in(article)
    if len(blocks) > 3 and titles:
        t = titles[0]
        _insert_after(
            blocks[2],
            f'<p class="read-more"><strong>{READ_MORE[group]}</strong> '
            f'<a href="/news/{rng.randrange(10**6)}.html">{_esc(t)}</a></p>',
        )
    items = "".join(
        f'<li><a href="/news/{rng.randrange(10**6)}.html">{_esc(t)}</a></li>' for t in titles[1:]
    )
    article.append(
        lxml.html.fragment_fromstring(
            f'<div class="related"><h3>{RELATED[group]}</h3><ul>{items}</ul></div>'
        )
    )


def _esc(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


TRACKING = "utm_source=newsletter&utm_medium=email&utm_campaign=weekly_{n}&fbclid=IwAR{s}"


def add_tracking(doc: lxml.html.HtmlElement, url: str, rng: random.Random) -> str:
    """Tracking parameters on every link of the page; the page's own URL with them."""
    for a in doc.iter("a"):
        href = a.get("href")
        if href and not href.startswith(("#", "javascript:", "mailto:")):
            sep = "&" if "?" in href else "?"
            a.set(
                "href", href + sep + TRACKING.format(n=rng.randrange(100), s=rng.randrange(10**9))
            )
    base = url or "https://example.com/article"
    sep = "&" if "?" in base else "?"
    return base + sep + TRACKING.format(n=rng.randrange(100), s=rng.randrange(10**9))


# ---------------------------------------------------------------- pages of numbers

_BRANDS = ["Norvik", "Aldera", "Quenton", "Velmora", "Brightfield", "Castellan"]
_LINES = ["Aspen", "Nimbus", "Vector", "Orbit", "Summit", "Pulse"]
_KINDS_EN = ["laptop", "smartphone", "tablet", "monitor", "camera", "e-bike"]
_TEAMS = [
    "Harbor City",
    "Northgate United",
    "Riverside Athletic",
    "Old Mill Rovers",
    "Eastfield Town",
    "Westbrook Albion",
]
_PLAYERS = [
    "Daniel Okafor",
    "Marco Lindqvist",
    "Tomas Herrera",
    "Samuel Achterberg",
    "Luca Brennan",
    "Jonas Whitaker",
]
_BRANDS_ZH = ["华锐", "星辰", "远航", "青木", "博雅", "天择"]
_LINES_ZH = ["灵动", "凌云", "锐影", "智远", "开拓", "悦享"]
_KINDS_ZH = ["笔记本电脑", "智能手机", "平板电脑", "显示器", "相机", "电动自行车"]
_TEAMS_ZH = ["北方联", "江城队", "东港竞技", "西山体育", "南湖流浪者", "海川城"]
_PLAYERS_ZH = ["王建国", "李明辉", "张晓东", "陈志强", "刘宇航", "赵文博"]


def numbers_page(
    kind: str, group: str, names: tuple[int, int, int], rng: random.Random
) -> tuple[str, str]:
    """(headline, article HTML) of a product page or a match report whose words are fixed
    by ``names`` and whose numbers are drawn from ``rng``: two calls with the same names and
    different generators give pages that differ only in their numbers."""
    b, ln, k = names
    r = rng.randint
    if kind == "product" and group != "zh":
        name = f"{_BRANDS[b]} {_LINES[ln]} {r(2, 19)}"
        specs = [
            ("Price", f"${r(199, 2499)}.{r(0, 99):02d}"),
            ("Screen size", f"{r(5, 17)}.{r(0, 9)} inches"),
            ("Resolution", f"{r(1280, 3840)} x {r(720, 2160)} pixels"),
            ("Processor", f"{r(4, 16)} cores at {r(1, 4)}.{r(0, 9)} GHz"),
            ("Memory", f"{2 ** r(2, 6)} GB"),
            ("Storage", f"{2 ** r(6, 11)} GB"),
            ("Battery", f"{r(3000, 9000)} mAh, up to {r(6, 24)} hours"),
            ("Weight", f"{r(150, 2400)} g"),
            ("Dimensions", f"{r(70, 360)} x {r(140, 250)} x {r(6, 25)} mm"),
            ("Warranty", f"{r(1, 5)} years"),
        ]
        intro = (
            f"<p>The {name} is a {_KINDS_EN[k]} for everyday work and travel. This model "
            f"comes with {specs[4][1]} of memory, {specs[5][1]} of storage and a display of "
            f"{specs[1][1]}. Free delivery within {r(2, 9)} working days; returns accepted "
            f"for {r(14, 60)} days.</p>"
        )
        rows = "".join(f"<tr><th>{a}</th><td>{v}</td></tr>" for a, v in specs)
        body = f"{intro}<h2>Technical specifications</h2><table>{rows}</table>"
        return name, body
    if kind == "product":
        name = f"{_BRANDS_ZH[b]}{_LINES_ZH[ln]} {r(2, 19)}"
        specs = [
            ("价格", f"¥{r(999, 19999)}"),
            ("屏幕尺寸", f"{r(5, 17)}.{r(0, 9)}英寸"),
            ("分辨率", f"{r(1280, 3840)}×{r(720, 2160)}像素"),
            ("处理器", f"{r(4, 16)}核 {r(1, 4)}.{r(0, 9)}GHz"),
            ("运行内存", f"{2 ** r(2, 6)}GB"),
            ("存储容量", f"{2 ** r(6, 11)}GB"),
            ("电池容量", f"{r(3000, 9000)}毫安时，续航约{r(6, 24)}小时"),
            ("重量", f"{r(150, 2400)}克"),
            ("机身尺寸", f"{r(70, 360)}×{r(140, 250)}×{r(6, 25)}毫米"),
            ("保修期限", f"{r(1, 5)}年"),
        ]
        intro = (
            f"<p>{name}是一款面向日常办公和出行的{_KINDS_ZH[k]}。该型号配备{specs[4][1]}运行内存、"
            f"{specs[5][1]}存储空间和{specs[1][1]}屏幕。下单后{r(2, 9)}个工作日内免费送达，"
            f"支持{r(7, 30)}天无理由退货。</p>"
        )
        rows = "".join(f"<tr><th>{a}</th><td>{v}</td></tr>" for a, v in specs)
        return name, f"{intro}<h2>规格参数</h2><table>{rows}</table>"
    teams, players = (_TEAMS_ZH, _PLAYERS_ZH) if group == "zh" else (_TEAMS, _PLAYERS)
    home, away = teams[b], teams[(b + 1 + ln) % len(teams)]
    p1, p2, p3 = players[k], players[(k + 1) % 6], players[(k + 3) % 6]
    s1, s2 = r(0, 5), r(0, 5)
    if group != "zh":
        name = f"{home} {s1}-{s2} {away}: match report"
        body = (
            f"<p>Final score: {home} {s1}, {away} {s2}, in front of a crowd of "
            f"{r(2000, 60000)} on matchday {r(1, 38)}.</p>"
            f"<p>{p1} opened the scoring in minute {r(1, 45)} after a corner, and {p2} "
            f"answered in minute {r(46, 90)} with a shot from {r(11, 30)} metres. {p3} saw a "
            f"yellow card in minute {r(10, 89)}.</p>"
            f"<p>{home} had {r(35, 70)}% of possession and {r(5, 25)} shots, {r(1, 10)} of them "
            f"on target; {away} had {r(3, 20)} shots and won {r(1, 12)} corners. The home side "
            f"now sits in position {r(1, 20)} of the table with {r(10, 80)} points.</p>"
        )
        return name, body
    name = f"{home}{s1}比{s2}{away} 赛事战报"
    body = (
        f"<p>全场比分：{home}{s1}比{s2}{away}，本场为第{r(1, 30)}轮比赛，"
        f"现场观众{r(2000, 60000)}人。</p>"
        f"<p>{p1}在第{r(1, 45)}分钟利用角球机会首开纪录，{p2}在第{r(46, 90)}分钟从{r(11, 30)}米外"
        f"远射破门。{p3}在第{r(10, 89)}分钟吃到黄牌。</p>"
        f"<p>{home}全场控球率{r(35, 70)}%，射门{r(5, 25)}次，其中射正{r(1, 10)}次；{away}射门"
        f"{r(3, 20)}次，获得{r(1, 12)}个角球。赛后主队积{r(10, 80)}分，排名第{r(1, 16)}位。</p>"
    )
    return name, body
