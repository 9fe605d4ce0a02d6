"""Fingerprint quality on real pages, end to end: HTML variants, extracted as a crawl does.

Reads the real pages of ``../shared/corpus`` (or ``$SIMHASH_CORPUS``; skips cleanly where it
is absent). Every variant is a whole HTML page built from a corpus page (``_variants.py``)
and goes through ``extract_page(body, url, encoding=..., listings=True)`` exactly as the
crawl's middleware does (``scrapy_simhash.crawl.pages.PageWork``; a listing page, which shows
several posts whole, is skipped by a crawl and has no text here), then ``page_signature`` with
``Fingerprinter(min_words=20)``; the original is extracted from its own bytes and charset.
The article of a page is its element located by the corpus's reference text (the smallest
element holding 85% of it).

Near-duplicates (positives), each against the original page unless said otherwise:
  copy       the page parsed and written back (lxml): the construction's own noise
  moved      the article's own elements (headline, byline, standfirst, paragraphs, captions)
             in the article slot of another real page of the same group (another site), whose
             own article is removed and whose chrome stays; two layouts per article
  moved2     the article in one other layout vs the article in a second one
  edit1/2    1% / 2% of the article's words edited in the HTML (60% replaced by a corpus
             word, 20% deleted, 20% inserted)
  prefix80   the page with the first 80% of its article's words (the rest cut)
  dates      dates, times and counters (views, comments, "3 hours ago") changed
  ads        ad slots and a sponsored link inside the article
  related    a "Read more" link inside the article and a related-headlines list at its end
  tracking   tracking parameters on the page's URL and on every link
Not duplicates (negatives):
  template   different articles in one layout: a layout's own page vs another article moved
             into it, two articles moved into one layout, and every pair of different
             articles of one site in the corpus
  numbers    two product pages or two match reports in one layout, same words, other numbers
             (prices, specs, scores)
  edit20     20% of the article's words edited
  prefix30   the first 30% of the article
  cross      every pair of different original pages of a group

Pairs of real duplicates in the corpus (reference texts with word Jaccard >= 0.5) are left
out of the negatives.

Methods, on the same extracted texts:

* ours, the signature rule: ``page_signature(text, Fingerprinter(min_words=20))`` for every
  text, and each pair (a, the stored page, normally the original; b, the variant) decided by
  ``DEFAULT_RULE.decide(b, a, k, counted=...)``, with the index's frequency guard simulated:
  per group, the stored pages are the group's original corpus pages (as a crawl of those
  sites would have stored them; the variant pages are not), a sentence's count is how many
  of them hold it among their longest sentences (a stored original counts towards its own),
  and ``counted`` is the number of shared sentences held by fewer than ``Rule.guard``;
* ``--rule`` rows: the same with some of the Rule's fields replaced; ``--ablation`` rows:
  the rule built up from the fingerprint alone one part at a time;
* the fingerprint alone (``Fingerprinter(min_words=20)`` at ``-k``), and ``--variant``
  Fingerprinter options;
* the ``simhash`` package (character 4-grams) at the same k, and datasketch's MinHash (128
  permutations, shingles of 5 words, jieba words for CJK) at estimated Jaccard >= 0.5, 0.7
  and 0.8.

A pair with a side whose extraction gave nothing is never a match; texts too short for our
fingerprint (under 20 content words) never match for ours, as a crawl passes them through.
Printed per group (``en+``: English and the other languages; ``zh``: Chinese): precision,
recall, F1 (and F1 without the ``numbers`` kind), per kind the share of pairs caught, for
the signature rows the share of the duplicates each rule (hamming, sentences) decided, and a
one-line summary per row.

Built texts are cached in ``bench/.data/`` (and every extraction, by the page's bytes), and
so is each method's signature of every text (keyed by the code of ``scrapy_simhash/text``,
the options and the baselines' code and versions): a rerun with other Rule fields only
decides the pairs (seconds), one after a change to the package's code signs the texts again
(an edit of its docstrings or comments does not).

    python bench/quality.py                           # all pages, k=3
    python bench/quality.py --limit 40                # 40 pages per group, a quick look
    python bench/quality.py --fast                    # trafilatura's fast mode
    python bench/quality.py --ablation                # the signature rule part by part
    python bench/quality.py --no-baselines --rule '{"shared": 2}' --rule '{"guard": 5}'
    python bench/quality.py --variant '{"position_decay": null}'
    python bench/quality.py --seed 7 --seed 11        # pages built twice, side by side

A choice tuned on one seed's pages can fit that draw of layouts, edits and cuts; the rows
of another seed say whether it carries to pages it was not chosen on.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import gzip
import hashlib
import inspect
import json
import os
import pickle
import random
import re
import sys
import time
import zlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _variants as V
import lxml.html
from _corpus import ROOT, Page, load_pages, require_corpus

from scrapy_simhash import FINGERPRINT_VERSION, Fingerprinter, extract_page, hamming
from scrapy_simhash.text import extract as extract_module
from scrapy_simhash.text.rule import DEFAULT_RULE, Rule
from scrapy_simhash.text.signature import page_signature

POSITIVE = (
    "copy",
    "moved",
    "moved2",
    "edit1",
    "edit2",
    "prefix80",
    "dates",
    "ads",
    "related",
    "tracking",
)
NEGATIVE = ("template", "numbers", "edit20", "prefix30", "cross")
GROUPS = (("en+", "English and other languages"), ("zh", "Chinese"))
CACHE = ROOT / "bench" / ".data"
#: Bump when the construction changes (the cache of built pairs is keyed by it).
BUILD_VERSION = 6


def cached(path: Path, read: Callable[[Path], Any]) -> Any:
    """What ``read`` makes of the cache file ``path``, or None when it is absent or damaged
    (said on stderr: what it held is computed again, and the file written anew)."""
    if not path.exists():
        return None
    try:
        return read(path)
    except (OSError, EOFError, ValueError, zlib.error, pickle.UnpicklingError) as exc:
        print(f"{path.name}: damaged cache ({exc}), computed again", file=sys.stderr)
        return None


def cache(path: Path, write: Callable[[Path], None]) -> None:
    """``write`` the cache file ``path`` under a temporary name, then rename it into place:
    a run stopped mid-write, or two runs writing at once, never leave a torn file."""
    CACHE.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f"{path.name}.{os.getpid()}.part")
    try:
        write(part)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)


def read_json(path: Path) -> Any:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def json_writer(value: Any) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(value, f)

    return write


def code_of(source: str) -> str:
    """What ``source`` computes: its syntax tree without docstrings (and so without
    comments), so that a cache keyed by it outlives an edit of its prose."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def text_modules(module: ModuleType) -> list[ModuleType]:
    """``module`` and the modules of ``scrapy_simhash.text`` whose functions or classes it
    uses, and theirs in turn, by name."""
    found = {module.__name__: module}
    todo = [module]
    while todo:
        for value in vars(todo.pop()).values():
            name = getattr(value, "__module__", None)
            if (
                isinstance(name, str)
                and name.startswith("scrapy_simhash.text.")
                and name not in found
            ):
                found[name] = sys.modules[name]
                todo.append(found[name])
    return [found[name] for name in sorted(found)]


#: The extraction's own code (its options, and every module it calls: the decoding and the
#: charset's detection, the hidden elements left out, the headline dropped; docstrings and
#: comments aside): the cached texts are keyed by it, with trafilatura's version.
EXTRACTION = hashlib.sha1(
    "".join(code_of(inspect.getsource(m)) for m in text_modules(extract_module)).encode()
).hexdigest()[:8]
MIN_WORDS = 20  # the crawl's default (SIMHASH_MIN_WORDS)
LAYOUTS_PER_ARTICLE = 2


# ---------------------------------------------------------------- extraction, as a crawl


class Extractor:
    """``extract_page`` as the crawl calls it (a listing has no text), memoized by the page's
    bytes on disk."""

    def __init__(self, fast: bool) -> None:
        self.fast = fast
        mode = "fast" if fast else "default"
        self.path = CACHE / f"extract-{version('trafilatura')}-{EXTRACTION}-{mode}.json.gz"
        self.memo: dict[str, str | None] = cached(self.path, read_json) or {}
        self.calls = 0
        self.seconds = 0.0

    def __call__(self, body: bytes, url: str | None, encoding: str) -> str | None:
        key = hashlib.sha1(b"%s\0%s\0%s" % (body, (url or "").encode(), encoding.encode()))
        k = key.hexdigest()
        if k not in self.memo:
            t0 = time.perf_counter()
            self.memo[k] = extract_page(
                body, url, encoding=encoding, fast=self.fast, listings=True
            ).text
            self.seconds += time.perf_counter() - t0
            self.calls += 1
        return self.memo[k]

    def save(self) -> None:
        cache(self.path, json_writer(self.memo))


# ---------------------------------------------------------------- building the pairs


def jaccard(a: str, b: str) -> float:
    sa, sb = set(V.tokens(a)), set(V.tokens(b))
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def known_duplicates(pages: list[Page]) -> set[frozenset[str]]:
    """Pairs of corpus pages whose reference texts are mostly the same (real duplicates)."""
    sets = {p.rid: set(V.tokens(p.gt)) for p in pages}
    out = set()
    for i, a in enumerate(pages):
        for b in pages[i + 1 :]:
            sa, sb = sets[a.rid], sets[b.rid]
            if sa and sb and len(sa & sb) / len(sa | sb) >= 0.5:
                out.add(frozenset((a.rid, b.rid)))
    return out


def select(pages: list[Page], limit: int, seed: int) -> list[Page]:
    if not limit:
        return pages
    rng = random.Random(seed)
    out = []
    for g, _ in GROUPS:
        ps = [p for p in pages if p.group == g]
        out += sorted(rng.sample(ps, min(limit, len(ps))), key=lambda p: p.rid)
    return out


class Builder:
    def __init__(self, pages: list[Page], seed: int, fast: bool) -> None:
        self.pages = {p.rid: p for p in pages}
        self.rng = random.Random(seed)
        self.extract = Extractor(fast)
        self.docs: dict[str, dict] = {}
        self.pairs: list[tuple[str, str, str]] = []
        self.where: dict[str, tuple[str, str | None]] = {}  # rid -> (article path, h1 path)
        self.failed: Counter = Counter()

    # pages and their article element
    def tree(self, rid: str):
        """A fresh parse of the page, its article element and its headline outside it."""
        doc = V.parse(self.pages[rid].html)
        art_at, head_at = self.where[rid]
        nodes = list(doc.iter())
        return doc, nodes[art_at], (nodes[head_at] if head_at is not None else None)

    def locate_all(self) -> None:
        """Where each page's article and headline are, as positions in document order (the
        same in every parse of the page)."""
        for rid, p in self.pages.items():
            doc = V.parse(p.html)
            art = V.locate(doc, p.gt) if doc is not None else None
            if art is None:
                self.failed["no article located"] += 1
                continue
            head = V.headline(doc, art)
            at = {id(el): i for i, el in enumerate(doc.iter())}
            self.where[rid] = (at[id(art)], at[id(head)] if head is not None else None)

    def add(self, doc_id: str, group: str, body: bytes, url: str | None, encoding: str) -> bool:
        text = self.extract(body, url, encoding)
        self.docs[doc_id] = {"group": group, "text": text}
        return text is not None

    def pair(self, kind: str, a: str, b: str) -> None:
        if self.docs.get(a, {}).get("text") is None:
            self.failed[f"{kind}: original without text"] += 1
            return
        self.pairs.append((kind, a, b))

    def build(self) -> dict:
        rng = self.rng
        t0 = time.perf_counter()
        for rid, p in self.pages.items():
            self.add(rid, p.group, p.raw, p.url or None, p.encoding)
        print(f"originals extracted in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        t1 = time.perf_counter()
        self.locate_all()
        print(
            f"articles located in {len(self.where)}/{len(self.pages)} pages in "
            f"{time.perf_counter() - t1:.0f} s",
            file=sys.stderr,
        )
        usable = [r for r in self.pages if r in self.where and self.docs[r]["text"]]
        by_group = defaultdict(list)
        for r in usable:
            by_group[self.pages[r].group].append(r)
        self.known = known_duplicates(list(self.pages.values()))
        titles = {}
        for r in usable:
            doc, art, _ = self.tree(r)
            titles[r] = V.headline_text(doc, art)
        pools = {
            g: [w for r in rs for w in V.split_words(self.pages[r].gt, g) if V.is_word(w)]
            for g, rs in by_group.items()
        }
        for g, rs in by_group.items():
            self.build_moves(g, rs, titles)
            self.build_numbers(g, rs)
            for r in rs:
                others = [titles[q] for q in rng.sample(rs, min(6, len(rs))) if q != r]
                self.build_page_variants(r, g, pools[g], others[:5])
        self.build_site_pairs()
        self.extract.save()
        took = time.perf_counter() - t0
        print(
            f"built {len(self.docs)} pages ({self.extract.calls} extracted now, "
            f"{self.extract.seconds:.0f} s of extraction), {len(self.pairs)} pairs in "
            f"{took:.0f} s; not built: {dict(self.failed)}",
            file=sys.stderr,
        )
        return {
            "docs": self.docs,
            "pairs": self.pairs,
            "originals": [r for r in self.pages if self.docs[r]["text"]],
            "known": [sorted(k) for k in self.known],
            "build_seconds": took,
        }

    def is_dup(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self.known

    def moved_page(self, src: str, tpl: str, content=None) -> tuple[bytes, str | None]:
        """The template page ``tpl`` carrying ``src``'s article (or ``content``: headline
        and HTML of a made-up article)."""
        tp = self.pages[tpl]
        tdoc, tart, _ = self.tree(tpl)
        if content is None:
            sdoc, sart, shead = self.tree(src)
            text, nodes = V.article_nodes(sdoc, sart)
            title = V.headline_text(sdoc, sart)
            slug = src
        else:
            title, html = content
            frag = lxml.html.fragment_fromstring(html, create_parent="div")
            text, nodes = frag.text or "", list(frag)
            shead = lxml.html.Element("h1")
            shead.text = title
            slug = src
        V.put_in_template(tdoc, tart, tp.gt, text, nodes, shead, title, tp.site)
        return V.serialize(tdoc), V.synthetic_url(tp.url, slug)

    def build_moves(self, g: str, rs: list[str], titles: dict) -> None:
        """Each article into two other layouts of its group (another site; of its own
        language where three other sites have one), every layout used in turn."""
        rng = self.rng
        used = Counter()
        in_layout: dict[str, list[str]] = defaultdict(list)
        order = rs[:]
        rng.shuffle(order)
        for r in order:
            p = self.pages[r]
            ok = [q for q in rs if self.pages[q].site != p.site and not self.is_dup(r, q)]
            same = [q for q in ok if self.pages[q].lang == p.lang]
            if len({self.pages[q].site for q in same}) >= 3:
                ok = same
            rng.shuffle(ok)
            chosen: list[str] = []
            for q in sorted(ok, key=lambda q: used[q]):  # stable: least used first
                if len(chosen) == LAYOUTS_PER_ARTICLE:
                    break
                if all(self.pages[c].site != self.pages[q].site for c in chosen):
                    chosen.append(q)
            made = []
            for q in chosen:
                used[q] += 1
                doc_id = f"{r}@{q}"
                try:
                    body, url = self.moved_page(r, q)
                except Exception as e:  # a construction that lxml refuses
                    self.failed[f"moved: {type(e).__name__}"] += 1
                    continue
                if self.add(doc_id, g, body, url, "utf-8"):
                    made.append(doc_id)
                    in_layout[q].append(doc_id)
                self.pair("moved", r, doc_id)
                self.pair("template", q, doc_id)
            if len(made) >= 2:
                self.pair("moved2", made[0], made[1])
        for ids in in_layout.values():
            for i, a in enumerate(ids):
                for b in ids[i + 1 :]:
                    if not self.is_dup(a.split("@")[0], b.split("@")[0]):
                        self.pair("template", a, b)
        print(f"{g}: {len(used)} of {len(rs)} pages used as layouts", file=sys.stderr)

    def build_numbers(self, g: str, rs: list[str]) -> None:
        """In each layout, two product pages or two match reports differing in numbers."""
        rng = self.rng
        for i, q in enumerate(rs):
            kind = "product" if i % 2 == 0 else "match"
            names = (rng.randrange(6), rng.randrange(6), rng.randrange(6))
            ids = []
            for j in range(2):
                sub = random.Random(rng.random())
                content = V.numbers_page(kind, g, names, sub)
                doc_id = f"{kind}{j}@{q}"
                try:
                    body, url = self.moved_page(f"{kind}-{i}-{j}", q, content)
                except Exception as e:
                    self.failed[f"numbers: {type(e).__name__}"] += 1
                    continue
                if self.add(doc_id, g, body, url, "utf-8"):
                    ids.append(doc_id)
            if len(ids) == 2:
                self.pair("numbers", ids[0], ids[1])
            else:
                self.failed["numbers: no text"] += 1

    def build_page_variants(self, r: str, g: str, pool: list[str], related: list[str]) -> None:
        rng = self.rng
        p = self.pages[r]
        url = p.url or None

        def made(kind: str, change: Callable) -> None:
            doc, art, _ = self.tree(r)
            u = change(doc, art) or url
            self.add(f"{r}~{kind}", g, V.serialize(doc), u, "utf-8")  # no text: a miss
            self.pair(kind, r, f"{r}~{kind}")

        made("copy", lambda doc, art: None)
        for kind, share in (("edit1", 0.01), ("edit2", 0.02), ("edit20", 0.20)):
            made(kind, lambda doc, art, s=share: V.edit_article(art, g, s, pool, rng))
        for kind, share in (("prefix80", 0.8), ("prefix30", 0.3)):
            made(kind, lambda doc, art, s=share: V.truncate_article(art, g, s))
        made("dates", lambda doc, art: V.change_dates(doc, rng) and None)
        made("ads", lambda doc, art: V.insert_ads(art, g, rng))
        made("related", lambda doc, art: V.insert_related(art, g, related, rng))
        made("tracking", lambda doc, art: V.add_tracking(doc, p.url, rng))

    def build_site_pairs(self) -> None:
        """Every pair of different articles of one site in the corpus."""
        by_site = defaultdict(list)
        for r, p in self.pages.items():
            if self.docs[r]["text"]:
                by_site[(p.site, p.group)].append(r)
        for rs in by_site.values():
            for i, a in enumerate(rs):
                for b in rs[i + 1 :]:
                    if not self.is_dup(a, b):
                        self.pair("template", a, b)


def build(pages: list[Page], seed: int, fast: bool) -> dict:
    """Texts of every page and the labelled pairs, cached by corpus, seed and settings."""
    key = json.dumps(
        [BUILD_VERSION, seed, fast, version("trafilatura"), EXTRACTION, [p.rid for p in pages]]
    )
    path = CACHE / f"quality-{hashlib.sha1(key.encode()).hexdigest()[:12]}.json.gz"
    data = cached(path, read_json)
    if data is None:
        data = Builder(pages, seed, fast).build()
        cache(path, json_writer(data))
    data["key"] = path.name.split(".")[0]
    return data


# ---------------------------------------------------------------- methods


def pkg_simhash(text: str) -> int:
    """The ``simhash`` package's fingerprint with its default features (character 4-grams).

    Its weighted path overflows uint8 under numpy 2 for counts above 255, so counts are
    passed in chunks of at most 50: the sums, and so the fingerprint, are the same.
    """
    from simhash import Simhash

    counts = Counter(Simhash(0)._tokenize(text))
    feats = []
    for feat, n in counts.items():
        while n > 0:
            feats.append((feat, min(n, 50)))
            n -= 50
    return Simhash(feats).value


_CJK_RUN = re.compile(r"([\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]+)|([^\W_]+)")


def minhash_words(text: str) -> list[str]:
    """Words for the MinHash baseline: jieba's words in CJK runs, case-folded words elsewhere."""
    import jieba

    jieba.setLogLevel(30)
    out: list[str] = []
    for cjk, other in _CJK_RUN.findall(text.casefold()):
        if cjk:
            out += jieba.lcut(cjk)
        else:
            out.append(other)
    return out


def minhash(text: str):
    """datasketch MinHash, 128 permutations, over shingles of 5 words: its hash values."""
    from datasketch import MinHash

    w = minhash_words(text)
    shingles = {" ".join(w[i : i + 5]) for i in range(max(1, len(w) - 4))}
    m = MinHash(num_perm=128, seed=1)
    m.update_batch([s.encode("utf-8") for s in shingles])
    return m.hashvalues


class Method:
    """A signature per text, a measure per pair and one or more decision rules.

    ``measure(sa, sb, group)`` gives a pair's value; each rule is (row name, decision on
    the value: truthy for a duplicate, and the name of the rule that decided it where there
    are several). ``key``, when given, caches the signatures in ``bench/.data/`` (it must
    change with the code and options that compute them); ``prepare(sigs, data)`` runs once
    before the pairs are measured; ``mean`` maps a value to the number averaged in the cells.
    """

    def __init__(
        self, name, sign, measure, rules, higher_is_similar=False, key=None, prepare=None, mean=None
    ):
        self.name, self.sign, self.measure = name, sign, measure
        self.rules = rules
        self.higher = higher_is_similar
        self.key = key
        self.prepare = prepare
        self.mean = mean or (lambda v: v)


def code_key(*parts) -> str:
    """A short key of the code (functions' sources, or strings) that computes signatures."""
    h = hashlib.sha1()
    for part in parts:
        h.update((part if isinstance(part, str) else inspect.getsource(part)).encode())
        h.update(b"\0")
    return h.hexdigest()[:12]


@functools.cache
def package_code() -> str:
    """The code of ``scrapy_simhash/text`` (docstrings and comments aside) and the
    segmenter's version: what our fingerprints and signatures depend on."""
    files = sorted((ROOT / "scrapy_simhash" / "text").glob("*.py"))
    return "".join(code_of(f.read_text(encoding="utf-8")) for f in files) + version("rjieba")


OFF = 10**9  # a Rule parameter that never applies (a veto, a guard)


def parse_rule(spec: str) -> Rule:
    """:data:`DEFAULT_RULE` with the fields of a JSON object replaced (``--rule``)."""
    return dataclasses.replace(DEFAULT_RULE, **json.loads(spec))


def ablation_rules() -> list[tuple[str, Rule]]:
    """The signature rule built up one part at a time from the fingerprint alone."""
    d = DEFAULT_RULE
    any_runs = dataclasses.replace(d, contained_runs=OFF)  # a contained page's runs unread
    near_block = dataclasses.replace(any_runs, block_far_runs=OFF)  # a block heading both texts
    apart = dataclasses.replace(near_block, apart_distance=OFF)  # listings of other posts
    blocks = dataclasses.replace(apart, block_shared=0)  # a shared block of prose not told
    one_not_enough = dataclasses.replace(blocks, runs_same=-1)  # one sentence never enough
    no_rewrites = dataclasses.replace(one_not_enough, veto_runs=OFF)  # one shared: no veto
    veto_only = dataclasses.replace(no_rewrites, runs_near=-1)  # never says "a few edits"
    unshingled = dataclasses.replace(veto_only, shingles_distance=OFF)  # no shingles veto
    any_length = dataclasses.replace(unshingled, numbers_length=0.0)  # at any length
    uncontained = dataclasses.replace(any_length, contained=OFF)  # half the words at any share
    far = dataclasses.replace(uncontained, near=-OFF)  # half the sentences at every distance
    no_vetoes = dataclasses.replace(far, hamming_length=0.0, sentences_veto=OFF, numbers_min=OFF)
    return [
        ("+ sentence rule (no numbers veto)", no_vetoes),
        ("+ numbers veto", dataclasses.replace(no_vetoes, numbers_min=d.numbers_min)),
        ("+ hamming length guard", dataclasses.replace(far, sentences_veto=OFF)),
        ("+ sentences veto", far),
        ("+ 3 sentences enough within k+1 bits", uncontained),
        ("+ a contained page at 0.3 of the words", any_length),
        ("+ numbers compared for pages of like length", unshingled),
        ("+ shingles veto", veto_only),
        ("+ runs of words mostly the same: 3 sentences enough, no sentences veto", no_rewrites),
        ("+ at most 1 sentence shared, half the runs: a rewrite", one_not_enough),
        ("+ 1 sentence enough when the runs agree", blocks),
        ("+ under 5 shared in texts otherwise unrelated: a block", apart),
        ("+ not all shared in texts yet further apart: a part", near_block),
        (
            "+ under 5 shared in runs of words as far apart, unless one text reads as "
            "inside the other: a block",
            any_runs,
        ),
        ("+ a contained page's runs of words among the longer's (the default rule)", d),
        ("default rule without the frequency guard", dataclasses.replace(d, guard=OFF)),
        ("default rule, numbers in any amounts compared", dataclasses.replace(d, numbers_ratio=0)),
        (
            "default rule, numbers compared at any density",
            dataclasses.replace(d, numbers_density=0),
        ),
    ]


class Guarded:
    """The signature rule's pair values, with the index's frequency guard simulated.

    The stored pages of a group are its original corpus pages (as a crawl of those sites
    would have stored them; the variant pages are not stored): a sentence's count is how many
    of them hold it among their longest sentences, and a shared sentence counts for the rule
    (``counted``) while fewer than :attr:`Rule.guard` stored pages hold it. A pair's value is
    (page, stored page, the count of each sentence they share)."""

    def __init__(self) -> None:
        self.held: dict[str, Counter] = {}

    def prepare(self, sigs: dict, data: dict) -> None:
        self.held = {g: Counter() for g, _ in GROUPS}
        for r in data["originals"]:
            if sigs[r] is not None:
                self.held[data["docs"][r]["group"]].update(sigs[r].sentences)

    def measure(self, stored, page, group: str):
        held = self.held[group]
        shared = set(page.sentences).intersection(stored.sentences)
        return page, stored, tuple(held[h] for h in shared)


def counted(value, rule: Rule) -> int:
    """The shared long sentences of a pair's value (:meth:`Guarded.measure`) that the
    simulated guard lets count: those fewer than ``rule.guard`` stored pages hold."""
    _, _, held = value
    return sum(1 for n in held if n < rule.guard)


def signature_rule(rule: Rule, k: int) -> Callable:
    def decide(value) -> str | None:
        page, stored, _ = value
        return rule.decide(page, stored, k, counted=counted(value, rule))

    return decide


def methods_for(args) -> list[Method]:
    k = args.k
    out = []
    within = [(None, lambda d: d <= k)]

    def ours(fpr):
        return lambda t: None if t is None else fpr.fingerprint(t)

    def distance(a, b, group):
        return hamming(a, b)

    fpr = Fingerprinter(min_words=MIN_WORDS)
    guarded = Guarded()
    rules = [(f"**signature rule, k={k}**", signature_rule(DEFAULT_RULE, k))]
    if args.ablation:
        rules += [(f"{name}, k={k}", signature_rule(r, k)) for name, r in ablation_rules()]
    rules += [(f"rule {spec}, k={k}", signature_rule(parse_rule(spec), k)) for spec in args.rule]
    out.append(
        Method(
            f"signature v{FINGERPRINT_VERSION}",
            lambda t: None if t is None else page_signature(t, fpr),
            guarded.measure,
            rules,
            key=code_key("signature", package_code(), repr(fpr)),
            prepare=guarded.prepare,
            mean=lambda v: hamming(v[0].fingerprint, v[1].fingerprint),
        )
    )
    out.append(
        Method(
            f"fingerprint alone (v{FINGERPRINT_VERSION}), k={k}",
            ours(fpr),
            distance,
            within,
            key=code_key("fingerprint", package_code(), repr(fpr)),
        )
    )
    for v in args.variant:
        opts = {"min_words": MIN_WORDS, **json.loads(v)}
        f = Fingerprinter(**opts)
        out.append(
            Method(
                f"variant {v}, k={k}",
                ours(f),
                distance,
                within,
                key=code_key("fingerprint", package_code(), repr(f)),
            )
        )
    if args.no_baselines:
        return out
    try:
        import simhash  # noqa: F401
    except ImportError:
        print(
            "simhash package not installed (pip install -e '.[bench]'): left out", file=sys.stderr
        )
    else:
        out.append(
            Method(
                f"simhash pkg (char 4-grams), k={k}",
                lambda t: None if t is None else pkg_simhash(t),
                distance,
                within,
                key=code_key("simhash", pkg_simhash, version("simhash")),
            )
        )
    try:
        import datasketch  # noqa: F401
    except ImportError:
        print("datasketch not installed (pip install -e '.[bench]'): left out", file=sys.stderr)
    else:
        out.append(
            Method(
                "MinHash-128 (datasketch)",
                lambda t: None if t is None else minhash(t),
                lambda a, b, group: float((a == b).mean()),
                [(f"MinHash-128, J >= {t}", lambda j, t=t: j >= t) for t in (0.5, 0.7, 0.8)],
                higher_is_similar=True,
                key=code_key(
                    "minhash", minhash, minhash_words, version("datasketch"), version("jieba")
                ),
            )
        )
    return out


# ---------------------------------------------------------------- scoring


def signatures(m: Method, data: dict) -> dict:
    """The method's signature of every text, cached in ``bench/.data/`` under its key."""
    docs = data["docs"]
    path = CACHE / f"signs-{data['key']}-{m.key}.pkl" if m.key else None
    if path is not None and (sigs := cached(path, read_pickle)) is not None:
        return sigs
    sigs = {i: m.sign(d["text"]) for i, d in docs.items()}
    if path is not None:
        cache(path, pickle_writer(sigs))
    return sigs


def read_pickle(path: Path) -> Any:
    # the bench's own cache, written by this script on this machine
    with open(path, "rb") as f:
        return pickle.load(f)


def pickle_writer(value: Any) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        with open(path, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)

    return write


def cross_pairs(data: dict, sigs: dict) -> Iterator[tuple[str, str]]:
    """Every pair of different original pages of a group that both have a signature (the
    corpus's own duplicates left out)."""
    docs = data["docs"]
    known = {frozenset(k) for k in data["known"]}
    origs = [r for r in data["originals"] if sigs[r] is not None]
    for i, a in enumerate(origs):
        ga = docs[a]["group"]
        for b in origs[i + 1 :]:
            if docs[b]["group"] == ga and frozenset((a, b)) not in known:
                yield a, b


def measures(m: Method, data: dict) -> dict[tuple[str, str], list]:
    """The method's measure for every pair, by (group, kind); None where a side has none."""
    docs = data["docs"]
    sigs = signatures(m, data)
    if m.prepare is not None:
        m.prepare(sigs, data)
    out: dict[tuple[str, str], list] = defaultdict(list)
    for kind, a, b in data["pairs"]:
        sa, sb, g = sigs[a], sigs[b], docs[a]["group"]
        out[(g, kind)].append(None if sa is None or sb is None else m.measure(sa, sb, g))
    for a, b in cross_pairs(data, sigs):
        ga = docs[a]["group"]
        out[(ga, "cross")].append(m.measure(sigs[a], sigs[b], ga))
    origs = [r for r in data["originals"] if sigs[r] is not None]
    for g, _ in GROUPS:  # pairs with an unfingerprintable side still count in cross
        n = sum(1 for r in data["originals"] if docs[r]["group"] == g)
        n_sig = sum(1 for r in origs if docs[r]["group"] == g)
        missing = n * (n - 1) // 2 - n_sig * (n_sig - 1) // 2
        out[(g, "cross")] += [None] * max(0, missing)
    return out


def score(name: str, rule: Callable, per: dict, mean: Callable) -> dict:
    res = {"name": name}
    for g, _ in GROUPS:
        cats = {}
        for c in POSITIVE + NEGATIVE:
            vals = per.get((g, c), [])
            by: Counter = Counter()
            for v in vals:
                if v is not None:
                    decided = rule(v)
                    if decided:
                        by[decided if isinstance(decided, str) else "match"] += 1
            hits = sum(by.values())
            real = [mean(v) for v in vals if v is not None] if c != "cross" else []
            cats[c] = {
                "n": len(vals),
                "hit": hits,
                "share": hits / len(vals) if vals else float("nan"),
                "mean": sum(real) / len(real) if real else None,
                "by": dict(by),
            }

        def prf(neg, cats=cats):
            tp = sum(cats[c]["hit"] for c in POSITIVE)
            fn = sum(cats[c]["n"] - cats[c]["hit"] for c in POSITIVE)
            fp = sum(cats[c]["hit"] for c in neg)
            p = tp / (tp + fp) if tp + fp else 1.0
            r = tp / (tp + fn) if tp + fn else 0.0
            return p, r, (2 * p * r / (p + r) if p + r else 0.0), fp

        p, r, f1, fp = prf(NEGATIVE)
        f1_wo = prf(tuple(c for c in NEGATIVE if c != "numbers"))[2]

        def by(kinds, cats=cats) -> dict:
            total: Counter = Counter()
            for c in kinds:
                total.update(cats[c]["by"])
            return dict(total)

        res[g] = {
            "precision": p,
            "recall": r,
            "f1": f1,
            "f1_wo_numbers": f1_wo,
            "fp": fp,
            "cats": cats,
            "by_caught": by(POSITIVE),
            "by_merged": by(NEGATIVE),
        }
    return res


SUMMARY = ("moved", "moved2", "edit1", "edit2", "prefix80", "related")
SUMMARY_NEG = ("template", "numbers", "edit20", "prefix30", "cross")


def pct(cat: dict) -> str:
    return f"{100 * cat['share']:.1f}%" if cat["n"] else "-"


def report(rows: list[dict], args) -> None:
    for g, label in GROUPS:
        n = {c: rows[0][g]["cats"][c]["n"] for c in POSITIVE + NEGATIVE}
        print(f"\n### {label}\n")
        print("pairs: " + ", ".join(f"{c} {n[c]:,}" for c in POSITIVE + NEGATIVE) + "\n")
        print("| method | P | R | F1 | F1 w/o numbers | false merges |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            s = r[g]
            print(
                f"| {r['name']} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} "
                f"| {s['f1_wo_numbers']:.3f} | {s['fp']} |"
            )
        for part, kinds in (
            ("near-duplicates caught", POSITIVE),
            ("different pages merged", NEGATIVE),
        ):
            print(f"\n{part} ({label}):\n")
            print("| method | " + " | ".join(kinds) + " |")
            print("|---" * (len(kinds) + 1) + "|")
            for r in rows:
                cells = []
                for c in kinds:
                    s = r[g]["cats"][c]
                    if not s["n"]:
                        cells.append("-")
                        continue
                    cell = pct(s)
                    if s["mean"] is not None:
                        cell += f" ({s['mean']:.2f})" if r.get("higher") else f" ({s['mean']:.1f})"
                    cells.append(cell)
                print(f"| {r['name']} | " + " | ".join(cells) + " |")
        two = [r for r in rows if r.get("two_rules")]
        if two:
            print(f"\ndecided by which rule, signature rows ({label}):\n")
            print(
                "| method | duplicates caught: hamming | sentences | moved by sentences "
                "| false merges: hamming | sentences |"
            )
            print("|---|---|---|---|---|---|")
            for r in two:
                s = r[g]
                caught, merged = s["by_caught"], s["by_merged"]
                total = sum(caught.values()) or 1
                moved = s["cats"]["moved"]
                print(
                    f"| {r['name']} | {100 * caught.get('hamming', 0) / total:.1f}% "
                    f"| {100 * caught.get('sentences', 0) / total:.1f}% "
                    f"| {100 * moved['by'].get('sentences', 0) / max(1, moved['hit']):.1f}% "
                    f"| {merged.get('hamming', 0)} | {merged.get('sentences', 0)} |"
                )
    print(
        "\ncells: share of pairs decided duplicates (mean Hamming distance, or mean estimated "
        "Jaccard for MinHash)"
    )
    print("\n### Summary (English and others / Chinese)\n")
    kinds = SUMMARY + SUMMARY_NEG
    print("| method | F1 | " + " | ".join(kinds) + " | false merges |")
    print("|---" * (len(kinds) + 3) + "|")
    for r in rows:
        cells = [" / ".join(f"{r[g]['f1']:.3f}" for g, _ in GROUPS)]
        cells += [" / ".join(pct(r[g]["cats"][c]) for g, _ in GROUPS) for c in kinds]
        cells.append(" / ".join(str(r[g]["fp"]) for g, _ in GROUPS))
        print(f"| {r['name']} | " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", "--k", type=int, default=3, help="Hamming distance threshold (default 3)")
    ap.add_argument(
        "--seed",
        type=int,
        action="append",
        help="seed of every random choice (default 7); repeated, each seed's pages are built "
        "and scored in turn, then compared side by side",
    )
    ap.add_argument("--fast", action="store_true", help="trafilatura's fast mode")
    ap.add_argument("--limit", type=int, default=0, help="at most N pages per group (quick runs)")
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="Fingerprinter keyword arguments as JSON, a fingerprint-alone row (repeatable)",
    )
    ap.add_argument(
        "--rule",
        action="append",
        default=[],
        help="Rule fields as JSON, replacing the default rule's, a signature row (repeatable)",
    )
    ap.add_argument(
        "--ablation", action="store_true", help="the signature rule built up part by part"
    )
    ap.add_argument("--no-baselines", action="store_true", help="only our own methods")
    ap.add_argument("--json", help="write the results to this file")
    args = ap.parse_args(argv)
    for spec in args.rule:
        parse_rule(spec)  # a bad field fails before any work
    require_corpus()
    t0 = time.perf_counter()
    seeds = args.seed or [7]
    pages = load_pages()
    by_seed = {seed: scored(args, pages, seed) for seed in seeds}
    if len(seeds) > 1:
        across_seeds(by_seed)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    if args.json:
        out = by_seed[seeds[0]] if len(seeds) == 1 else {str(k): v for k, v in by_seed.items()}
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


def scored(args: argparse.Namespace, pages: list[Page], seed: int) -> list[dict]:
    """The variants of ``pages`` for ``seed`` built (or read from the cache), every
    method's rows scored and reported."""
    t0 = time.perf_counter()
    data = build(select(pages, args.limit, seed), seed, args.fast)
    print(f"pages and texts ready in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    rows = []
    for m in methods_for(args):
        t1 = time.perf_counter()
        per = measures(m, data)
        t2 = time.perf_counter()
        for rule_name, rule in m.rules:
            row = score(rule_name or m.name, rule, per, m.mean)
            row["higher"] = m.higher
            row["two_rules"] = m.prepare is not None
            rows.append(row)
        print(
            f"scored {m.name} in {time.perf_counter() - t1:.1f} s "
            f"({t2 - t1:.1f} s signing and measuring)",
            file=sys.stderr,
        )
    rule = ", ".join(f"{f.name}={getattr(DEFAULT_RULE, f.name)}" for f in dataclasses.fields(Rule))
    print(
        f"# quality: seed {seed}, k={args.k}, fast={args.fast}, limit={args.limit or 'none'}, "
        f"fingerprint version {FINGERPRINT_VERSION}, trafilatura {version('trafilatura')}; "
        f"{len(data['docs'])} pages, {len(data['pairs'])} pairs besides cross; "
        f"signature rule: Rule({rule})"
    )
    report(rows, args)
    return rows


def across_seeds(by_seed: dict[int, list[dict]]) -> None:
    """Each method's F1 and the kinds the goals name, seed beside seed (English and others
    / Chinese): what a choice gives on pages built with other draws of the same corpus."""
    seeds = list(by_seed)
    kinds = ("moved", "moved2", "template", "numbers", "edit20", "prefix30")
    print("\n### Across seeds (English and others / Chinese)\n")
    print("| method | seed | F1 | " + " | ".join(kinds) + " | false merges |")
    print("|---|---|---|" + "---|" * len(kinds) + "---|")
    for i, row in enumerate(by_seed[seeds[0]]):
        for seed in seeds:
            r = by_seed[seed][i]
            cells = [" / ".join(pct(r[g]["cats"][c]) for g, _ in GROUPS) for c in kinds]
            f1 = " / ".join(f"{r[g]['f1']:.3f}" for g, _ in GROUPS)
            fp = " / ".join(str(r[g]["fp"]) for g, _ in GROUPS)
            print(f"| {row['name']} | {seed} | {f1} | " + " | ".join(cells) + f" | {fp} |")


if __name__ == "__main__":
    sys.exit(main())
