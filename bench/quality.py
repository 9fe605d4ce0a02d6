"""Fingerprint quality on real pages: pair precision, recall and F1 at k.

Reads the real pages of ``../shared/corpus`` (skips cleanly where it is absent) and builds
pairs the way the web makes them.

Near-duplicates (positives):
  moved      the article's text moved into another site's page layout (vs the original page)
  edit1      1% of the words edited (replaced, deleted or inserted)
  edit2      2% of the words edited
  decorated  dates changed, ads inserted, a related-articles list added, tracking parameters
             on the page URL and its links (vs the original page)
  prefix80   the first 80% of the article
Not duplicates (negatives):
  template   a different article in the same site template (the template's own page vs
             the template carrying another article), and every pair of different articles
             from one site in the corpus
  edit20     20% of the words changed
  prefix30   only the first 30% of the article
  cross      every pair of different original pages (a guard on degenerate fingerprints)

Each method fingerprints both sides of every pair; a pair is predicted a near-duplicate when
the Hamming distance is <= k. Printed: per group (``en+``: English and the 15 other
languages; ``zh``: Chinese) precision, recall and F1, and per category the share of pairs
within k and the mean distance, for our fingerprinter beside the ``simhash`` package on the
whole page's text and on trafilatura's text.

    python bench/quality.py                      # defaults, k=3
    python bench/quality.py --fast               # trafilatura's fast mode
    python bench/quality.py --variant '{"tf_exponent": 0.5}' --variant '{"use_idf": false}'
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import lxml.html
from _corpus import ROOT, Page, load_pages, require_corpus

from scrapy_simhash import Fingerprinter, extract_text, hamming
from scrapy_simhash.text.fingerprint import FINGERPRINT_VERSION

POSITIVE = ("moved", "edit1", "edit2", "decorated", "prefix80")
NEGATIVE = ("template", "edit20", "prefix30", "cross")
CACHE = ROOT / "bench" / ".data"

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


# ---------------------------------------------------------------- building the pairs


def build(pages: list[Page], seed: int, fast: bool) -> dict:
    """Texts of every document and the labelled pairs, cached by corpus and settings."""
    key = hashlib.sha1(json.dumps([seed, fast, [p.rid for p in pages], 7]).encode()).hexdigest()[
        :12
    ]
    path = CACHE / f"quality-{key}.json.gz"
    if path.exists():
        return json.loads(gzip.open(path, "rt", encoding="utf-8").read())
    rng = random.Random(seed)
    t0 = time.perf_counter()
    docs: dict[str, dict] = {}  # id -> {"group", "html_text", "text"}

    def add(doc_id: str, group: str, html: str | None, text: str | None, url: str | None) -> bool:
        if html is not None:
            text = extract_text(html, url, fast=fast)
            try:
                whole = lxml.html.fromstring(html).text_content()
            except Exception:
                whole = ""
        else:
            whole = None
        if not text:
            return False
        docs[doc_id] = {"group": group, "text": text, "whole": whole}
        return True

    originals = []
    for p in pages:
        if add(p.rid, p.group, p.html, None, p.url or None):
            originals.append(p)
    print(f"extracted {len(originals)}/{len(pages)} originals in {time.perf_counter() - t0:.0f} s")
    by_group: dict[str, list[Page]] = defaultdict(list)
    for p in originals:
        by_group[p.group].append(p)
    pools = {
        g: [t for p in ps for t in tokenize(docs[p.rid]["text"], g) if _WORD.search(t)]
        for g, ps in by_group.items()
    }
    titles = {p.rid: page_title(p.html) for p in originals}
    # Templates where the construction works: moving the page's own text back into it gives
    # the same text (otherwise the template's own article survives somewhere on the page).
    templates = set()
    for p in originals:
        own = docs[p.rid]["text"]
        rebuilt = move_into(p.html, own, own, titles[p.rid])
        again = extract_text(rebuilt, fast=fast) if rebuilt else None
        if again and jaccard(own, again) >= 0.9:
            templates.add(p.rid)
    print(f"{len(templates)} pages usable as templates")
    pairs: list[tuple[str, str, str]] = []  # (category, id_a, id_b)
    for p in originals:
        g, text = p.group, docs[p.rid]["text"]
        others = [q for q in by_group[g] if q.site != p.site and q.rid in templates]
        # moved: this article in another site's layout
        for _ in range(3):
            tpl = rng.choice(others)
            html = move_into(tpl.html, docs[tpl.rid]["text"], text, titles[p.rid])
            if html and add(f"{p.rid}@{tpl.rid}", g, html, None, None):
                pairs.append(("moved", p.rid, f"{p.rid}@{tpl.rid}"))
                # template: the template's own article vs this one in its layout
                pairs.append(("template", tpl.rid, f"{p.rid}@{tpl.rid}"))
                break
        for cat, share in (("edit1", 0.01), ("edit2", 0.02), ("edit20", 0.20)):
            if add(f"{p.rid}~{cat}", g, None, edit(text, g, share, pools[g], rng), None):
                pairs.append((cat, p.rid, f"{p.rid}~{cat}"))
        for cat, share in (("prefix80", 0.8), ("prefix30", 0.3)):
            if add(f"{p.rid}~{cat}", g, None, prefix(text, g, share), None):
                pairs.append((cat, p.rid, f"{p.rid}~{cat}"))
        related = [titles[q.rid] for q in rng.sample(by_group[g], 5)]
        html = decorate(p.html, g, related, rng)
        url = (p.url or "http://example.com/a") + "?" + TRACKING.format(n=7, s=1)
        if html and add(f"{p.rid}~decorated", g, html, None, url):
            pairs.append(("decorated", p.rid, f"{p.rid}~decorated"))
    # every pair of different articles from one site of the corpus (real templates)
    by_site: dict[str, list[Page]] = defaultdict(list)
    for p in originals:
        by_site[p.site].append(p)
    known = known_duplicates(originals)
    for ps in by_site.values():
        for i, a in enumerate(ps):
            for b in ps[i + 1 :]:
                if frozenset((a.rid, b.rid)) not in known:
                    pairs.append(("template", a.rid, b.rid))
    data = {
        "docs": docs,
        "pairs": pairs,
        "originals": [p.rid for p in originals],
        "known": [sorted(k) for k in known],
    }
    print(f"built {len(docs)} documents, {len(pairs)} pairs in {time.perf_counter() - t0:.0f} s")
    CACHE.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(data, f)
    return data


def jaccard(a: str, b: str) -> float:
    sa, sb = set(re.findall(r"\w+", a.casefold())), set(re.findall(r"\w+", b.casefold()))
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def known_duplicates(pages: list[Page]) -> set[frozenset[str]]:
    """Pairs of corpus pages whose reference texts are mostly the same (real duplicates):
    left out of every negative category."""
    out = set()
    for i, a in enumerate(pages):
        for b in pages[i + 1 :]:
            if a.gt and b.gt and jaccard(a.gt, b.gt) >= 0.5:
                out.add(frozenset((a.rid, b.rid)))
    return out


# ---------------------------------------------------------------- scoring


def pkg_simhash(text: str) -> int:
    """The ``simhash`` package's fingerprint with its default features (character 4-grams).

    Its weighted path overflows uint8 under numpy 2 for counts above 255, so counts are
    passed in chunks of at most 50: the sums, and so the fingerprint, are the same.
    """
    from collections import Counter

    from simhash import Simhash

    counts = Counter(Simhash(0)._tokenize(text))
    feats = []
    for feat, n in counts.items():
        while n > 0:
            feats.append((feat, min(n, 50)))
            n -= 50
    return Simhash(feats).value


def score(name: str, fp: Callable[[dict], int | None], data: dict, k: int) -> dict[str, dict]:
    docs = data["docs"]
    prints = {i: fp(d) for i, d in docs.items()}
    per_cat: dict[tuple[str, str], list[int]] = defaultdict(list)
    skipped: dict[str, int] = defaultdict(int)
    for cat, a, b in data["pairs"]:
        g = docs[a]["group"]
        if prints[a] is None or prints[b] is None:
            skipped[g] += 1
            per_cat[(g, cat)].append(65)  # unfingerprintable: never matched
            continue
        per_cat[(g, cat)].append(hamming(prints[a], prints[b]))
    known = {frozenset(k) for k in data["known"]}
    origs = [r for r in data["originals"] if prints[r] is not None]
    for i, a in enumerate(origs):
        ga = docs[a]["group"]
        for b in origs[i + 1 :]:
            if docs[b]["group"] == ga and frozenset((a, b)) not in known:
                d = hamming(prints[a], prints[b])
                per_cat[(ga, "cross")].append(d if d <= k else 64)
    out = {}
    for g in ("en+", "zh"):
        tp = sum(d <= k for c in POSITIVE for d in per_cat[(g, c)])
        fn = sum(d > k for c in POSITIVE for d in per_cat[(g, c)])
        fp_ = sum(d <= k for c in NEGATIVE for d in per_cat[(g, c)])
        precision = tp / (tp + fp_) if tp + fp_ else 1.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        cats = {}
        for c in POSITIVE + NEGATIVE:
            ds = per_cat[(g, c)]
            real = [d for d in ds if d <= 64]
            cats[c] = {
                "n": len(ds),
                "within_k": sum(d <= k for d in ds) / len(ds) if ds else 0.0,
                "mean": sum(real) / len(real) if real and c != "cross" else None,
            }
        out[g] = {
            "name": name,
            "precision": precision,
            "recall": recall,
            "f1": f1,
            "fp": fp_,
            "skipped": skipped[g],
            "cats": cats,
        }
    return out


def report(results: list[dict[str, dict]], k: int) -> None:
    for g, label in (("en+", "English and other languages"), ("zh", "Chinese")):
        print(f"\n## {label} (k={k})\n")
        head = "| method | precision | recall | F1 | false merges | " + " | ".join(
            POSITIVE + NEGATIVE
        )
        print(head + " |")
        print("|" + "---|" * (5 + len(POSITIVE) + len(NEGATIVE)))
        for res in results:
            r = res[g]
            cells = []
            for c in POSITIVE + NEGATIVE:
                s = r["cats"][c]
                mean = f" ({s['mean']:.1f})" if s["mean"] is not None else ""
                cells.append(f"{100 * s['within_k']:.1f}%{mean}")
            print(
                f"| {r['name']} | {r['precision']:.4f} | {r['recall']:.4f} | {r['f1']:.4f} "
                f"| {r['fp']} | " + " | ".join(cells) + " |"
            )
        n = {c: results[0][g]["cats"][c]["n"] for c in POSITIVE + NEGATIVE}
        print(f"\npairs: {n}")
    print(
        "\ncells: share of pairs within k (mean distance); a good method is near 100% on the"
        "\nfirst five columns (near-duplicates) and 0% on the last four (not duplicates)."
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", type=int, default=3, help="Hamming distance threshold (default 3)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--fast", action="store_true", help="trafilatura's fast mode")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="extra Fingerprinter options as JSON, measured beside the default",
    )
    ap.add_argument("--no-baselines", action="store_true")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    require_corpus()
    data = build(load_pages(), args.seed, args.fast)

    methods: list[tuple[str, Callable[[dict], int | None]]] = []
    ours = Fingerprinter()
    methods.append(
        (f"scrapy_simhash v{FINGERPRINT_VERSION}", lambda d: ours.fingerprint(d["text"]))
    )
    for v in args.variant:
        fpr = Fingerprinter(**json.loads(v))
        methods.append((f"variant {v}", lambda d, f=fpr: f.fingerprint(d["text"])))
    if not args.no_baselines:
        try:
            import simhash  # noqa: F401
        except ImportError:
            print("simhash package not installed (pip install -e '.[bench]'): baselines left out")
        else:
            methods.append(
                ("simhash pkg, whole page", lambda d: pkg_simhash(d["whole"] or d["text"]))
            )
            methods.append(("simhash pkg, trafilatura text", lambda d: pkg_simhash(d["text"])))
    results = []
    for name, fn in methods:
        t0 = time.perf_counter()
        results.append(score(name, fn, data, args.k))
        print(f"scored {name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    report(results, args.k)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
