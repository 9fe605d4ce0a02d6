"""Text-level page variants of the earlier quality bench, kept for ``_crawl_site.py``.

``bench/quality.py`` no longer uses them: it builds every variant as a page from the
article's own HTML (``_variants.py``). These move an already extracted text into another
layout as plain paragraphs and edit extracted text.
"""

from __future__ import annotations

import random
import re

import lxml.html

_WORD = re.compile(r"\w", re.UNICODE)


# ---------------------------------------------------------------- page transformations


def article_container(doc: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    """The element holding most of the article's paragraphs (most direct <p> children)."""
    best, best_n = None, 1
    for el in doc.iter("div", "article", "section", "main", "td"):
        n = sum(1 for c in el if c.tag == "p" and len((c.text_content() or "").strip()) >= 15)
        if n > best_n:
            best, best_n = el, n
    return best


def parse_article(
    html: str,
) -> tuple[lxml.html.HtmlElement, lxml.html.HtmlElement] | None:
    """The parsed page and its article container, or None where either cannot be had."""
    try:
        doc = lxml.html.fromstring(html)
    except Exception:
        return None
    box = article_container(doc)
    return None if box is None else (doc, box)


def page_title(html: str) -> str:
    try:
        doc = lxml.html.fromstring(html)
    except Exception:
        return ""
    t = doc.find(".//title")
    return (t.text_content() or "").strip() if t is not None else ""


def move_into(template_html: str, template_text: str, text: str, title: str) -> str | None:
    """The template page with its own article taken out (every element holding a line of
    the template's extracted text) and ``text`` put in its place, one <p> a line."""
    parsed = parse_article(template_html)
    if parsed is None:
        return None
    doc, box = parsed
    lines = {" ".join(x.split()) for x in template_text.split("\n") if len(x.strip()) >= 10}
    blob = " ".join(lines)
    old_title = " ".join(page_title(template_html).split())
    blocks = ("p", "h2", "h3", "h4", "li", "blockquote", "figcaption", "span", "div", "td")
    for el in list(doc.iter(*blocks)):
        if el.getparent() is None or el is box or box in el.iterancestors():
            continue
        own = " ".join((el.text_content() or "").split())
        if len(own) >= 10 and (
            own in lines or (len(own) <= 2000 and own in blob) or own in old_title
        ):
            el.drop_tree()
    for child in list(box):
        box.remove(child)
    box.text = None
    for para in text.split("\n"):
        if para.strip():
            p = lxml.html.Element("p")
            p.text = para
            box.append(p)
    t = doc.find(".//title")
    if t is not None:
        t.text = title
    h1 = doc.find(".//h1")
    if h1 is not None:
        for child in list(h1):
            h1.remove(child)
        h1.text = title
    return lxml.html.tostring(doc, encoding="unicode")


# Ads as pages carry them: a labelled slot that a script fills, and a promotion box.
AD_SLOT = '<div class="ad-slot" id="div-gpt-ad-{n}"><span class="ad-label">{label}</span></div>'
PROMO = {
    "en+": "Subscribe to our newsletter: the day's top stories in your inbox every morning.",
    "zh": "订阅我们的新闻简报，每天早上把当日头条新闻送到您的邮箱。",
}
TRACKING = "utm_source=newsletter&utm_medium=email&utm_campaign=weekly_{n}&sessionid={s}"


def decorate(html: str, group: str, related: list[str], rng: random.Random) -> str | None:
    """Change dates, insert ads, add a related-articles list, tag links with tracking."""
    parsed = parse_article(html)
    if parsed is None:
        return None
    doc, box = parsed
    paras = [c for c in box if c.tag == "p"]
    for i in (1, 4):
        if i < len(paras):
            label = "广告" if group == "zh" else "Advertisement"
            ad = AD_SLOT.format(n=rng.randrange(10**6), label=label)
            paras[i].addnext(lxml.html.fragment_fromstring(ad))
    items = "".join(
        f'<li><a href="/related/{i}?{TRACKING.format(n=i, s=rng.randrange(10**9))}">{t}</a></li>'
        for i, t in enumerate(related)
    )
    heading = "相关阅读" if group == "zh" else "Related articles"
    box.addnext(
        lxml.html.fragment_fromstring(
            f'<div class="related"><h3>{heading}</h3><ul>{items}</ul></div>'
        )
    )
    box.addnext(
        lxml.html.fragment_fromstring(f'<aside class="promo"><p>{PROMO[group]}</p></aside>')
    )
    for a in doc.iter("a"):
        href = a.get("href")
        if href and not href.startswith(("#", "javascript:", "mailto:")):
            sep = "&" if "?" in href else "?"
            a.set("href", href + sep + TRACKING.format(n=1, s=rng.randrange(10**9)))
    out = lxml.html.tostring(doc, encoding="unicode")

    def shift_year(m: re.Match) -> str:
        return str(int(m.group()) + 1)

    out = re.sub(r"(?<!\d)(?:19|20)\d{2}(?!\d)", shift_year, out)
    return re.sub(
        r"(?<!\d)(\d{1,2}):(\d{2})(?!\d)", lambda m: f"{(int(m[1]) + 3) % 24}:{m[2]}", out
    )


def tokenize(text: str, group: str) -> list[str]:
    if group == "zh":
        import jieba

        jieba.setLogLevel(30)
        return jieba.lcut(text, HMM=False)
    return text.split()


def edit(text: str, group: str, share: float, pool: list[str], rng: random.Random) -> str:
    """Edit ``share`` of the words: replaced by a word from ``pool``, deleted, or inserted."""
    toks = tokenize(text, group)
    word_at = [i for i, t in enumerate(toks) if _WORD.search(t)]
    n = max(1, round(share * len(word_at)))
    chosen = sorted(rng.sample(word_at, min(n, len(word_at))), reverse=True)
    for i in chosen:
        op = rng.random()
        if op < 0.6:
            toks[i] = rng.choice(pool)
        elif op < 0.8:
            del toks[i]
        else:
            toks.insert(i, rng.choice(pool))
    return ("" if group == "zh" else " ").join(toks)


def prefix(text: str, group: str, share: float) -> str:
    toks = tokenize(text, group)
    n_words = sum(1 for t in toks if _WORD.search(t))
    keep, seen = [], 0
    for t in toks:
        if _WORD.search(t):
            if seen >= share * n_words:
                break
            seen += 1
        keep.append(t)
    return ("" if group == "zh" else " ").join(keep)


def jaccard(a: str, b: str) -> float:
    sa, sb = set(re.findall(r"\w+", a.casefold())), set(re.findall(r"\w+", b.casefold()))
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0
