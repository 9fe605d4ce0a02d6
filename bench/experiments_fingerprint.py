"""Experiments: fingerprints that survive template chrome (issue 13, "What to build 2").

Works on the texts that ``bench/quality.py`` extracted and cached (run it first; it builds
them when absent), so every candidate sees exactly the pages of the quality bench. Nothing
here changes the package: candidates change the text units before the public
``Fingerprinter`` sees them, pass it other options, or add a second signal beside it.

Candidates:
  text units      drop lines that chrome forms and articles rarely do: short lines, list items
                  and table rows that are short, lines of menu items joined by ``|``, ``>``,
                  ``/``, ``·``, ``»``; the article's prose stays (a fallback keeps the whole text
                  when too little is left)
  lead weighting  ``position_decay`` larger or off
  longest         the "longest sentences" signal: the n longest sentences of the text, hashed;
                  two pages are the same article when at least m of them are shared, sentences
                  found in the texts of 3 or more different articles (chrome: disclaimers,
                  bylines, newsletter boxes) left out by a frequency guard, as an index would
  verify          candidates within a wider radius K, decided by a MinHash-128 of 5-word
                  shingles (estimated Jaccard >= t), as a verification stage would

``--units``: version 3's prose lines and their words computed once, then other units and
weights on top of them, each sketched as ``Fingerprinter`` does (tf^1.25, 512 features, the
one-bit minhash); its ``v3`` row equals ``Fingerprinter()`` pair for pair:
  punct           a prose line under 25 words that does not end a sentence (a full stop,
                  question or exclamation mark, colon, semicolon or ellipsis, Latin or CJK, a
                  closing quote allowed) is left out too (headlines of other articles,
                  subheadings, newsletter and credit lines); lines holding a quantity stay,
                  and so does the text's last line (a copy cut mid-sentence)
  plateau p       the position decay starts after p * L words (the first p * L weigh 1), so a
                  standfirst or byline kept in one layout and not the other shifts the weights
                  less
  ramp r          the first r words weigh from 0.5 up to 1 (times the decay): a lead that one
                  layout adds or drops weighs less
  tf t, features  the tf exponent (1.25) and the number of features kept (512)
  bigrams a       word bigrams as features beside the words, weighing a * the first word's
  ceiling         the weighted Jaccard (tf^1.25, no decay) of each pair's words: a 64-bit
                  one-bit minhash at k=3 catches a pair reliably only from about J >= 0.9

    python bench/experiments_fingerprint.py            # all, on the full bench's texts
    python bench/experiments_fingerprint.py --limit 40 # the texts of a --limit 40 bench
    python bench/experiments_fingerprint.py --units    # text units and weights
    python bench/experiments_fingerprint.py --units --seeds 4   # and the sketch's noise
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np
import quality as Q
from _corpus import load_pages, require_corpus

from scrapy_simhash import Fingerprinter, hamming
from scrapy_simhash.text import fingerprint as F
from scrapy_simhash.text.chrome import line_size, strip_chrome

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af]")
_WORDS = re.compile(r"[^\W_]+")
_SEPARATORS = re.compile(r"\s[|>/·»›•]\s|[|｜>›»·•]")
_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|(?<=[.])\s+|\n")
_NON_WORD = re.compile(r"[\W_]+")


def size(line: str) -> int:
    """A line's length in words: CJK characters count a half each (two characters make
    about one word), other words one."""
    cjk = len(_CJK.findall(line))
    other = len(_WORDS.findall(_CJK.sub(" ", line)))
    return other + cjk // 2


def is_chrome_line(line: str, min_size: int) -> bool:
    s = line.strip()
    if not s:
        return True
    n = size(s)
    if n < min_size:
        return True
    seps = len(_SEPARATORS.findall(s))
    if seps >= 2 and n / (seps + 1) <= 4:  # menu items joined by separators
        return True
    # a table row or list item made of short cells / links
    if s.startswith(("|", "- ")) and n < 2 * min_size:
        cells = [c for c in re.split(r"\|", s) if c.strip()]
        if s.startswith("- ") or all(size(c) < min_size for c in cells):
            return True
    return False


def prose(text: str, min_size: int = 8, keep_min: int = 40) -> str:
    """The lines of ``text`` that are prose; the whole text when they hold too little."""
    kept = [ln for ln in text.split("\n") if not is_chrome_line(ln, min_size)]
    out = "\n".join(kept)
    return out if size(out) >= keep_min else text


def sentences(text: str) -> list[str]:
    out = []
    for s in _SENTENCE_END.split(text):
        norm = _NON_WORD.sub("", s.casefold())
        if norm:
            out.append(norm)
    return out


def longest(text: str, n: int) -> tuple[int, ...]:
    """Hashes of the ``n`` longest distinct sentences (length in characters of their
    word characters; ties by hash)."""
    keyed = {}
    for s in sentences(text):
        if len(s) >= 20:
            h = int.from_bytes(hashlib.blake2b(s.encode(), digest_size=8).digest(), "big")
            keyed[h] = len(s)
    return tuple(sorted(keyed, key=lambda h: (-keyed[h], h))[:n])


def article_key(doc_id: str) -> str:
    """The article a text is a version of (variants and moves of one page share it)."""
    return re.split(r"[@~]", doc_id)[0] if not doc_id.startswith(("product", "match")) else doc_id


def sentence_df(docs: dict, n: int) -> Counter:
    """In how many different articles' texts each sentence (of any page's n longest) occurs."""
    seen: dict[int, set] = defaultdict(set)
    for doc_id, d in docs.items():
        if d["text"]:
            for h in longest(d["text"], n):
                seen[h].add(article_key(doc_id))
    return Counter({h: len(a) for h, a in seen.items()})


# ---------------------------------------------------------------- --units

Lines = list[tuple[str, list[str]]]
_ENDS_SENTENCE = re.compile(r"[.!?。！？…:：;；]['\"”’）)\]」』】]*\s*$")


def prose_lines(text: str) -> Lines:
    """Version 3's prose lines (``strip_chrome`` keeping lines with a quantity), each with
    its content words: the words ``Fingerprinter().content_words`` reads, line by line."""
    kept = strip_chrome(text, keep=F._holds_quantity)
    return [
        (line, F._block_words(F.normalize(line), content=True, numbers=True))
        for line in kept.split("\n")
    ]


def ends_sentence(line: str) -> bool:
    """Whether a line is prose by its form: 25 words or more, a sentence's last character,
    or a quantity (a product spec)."""
    return line_size(line) >= 25 or bool(_ENDS_SENTENCE.search(line)) or F._holds_quantity(line)


def sentence_lines(lines: Lines) -> Lines:
    """The lines that end a sentence (``ends_sentence``) and the last one, or all of them
    when those hold fewer than 40 words (as ``strip_chrome`` keeps a text whole)."""
    last = max((j for j, (line, _) in enumerate(lines) if line.strip()), default=-1)
    kept = [x for j, x in enumerate(lines) if j == last or ends_sentence(x[0])]
    return kept if sum(line_size(line) for line, _ in kept) >= 40 else lines


def units_fingerprint(
    lines: Lines,
    punct: bool = False,
    plateau: float = 0.0,
    ramp: float = 0.0,
    decay: float = 90.0,
    power: float = 2.0,
    bigrams: float = 0.0,
    tf: float = 1.25,
    features: int = 512,
) -> int | None:
    """The fingerprint of a candidate (module docstring, ``--units``); ``None`` when the text
    is too short, as ``Fingerprinter(min_words=20)`` decides."""
    if punct:
        lines = sentence_lines(lines)
    tokens = [w for _, ws in lines for w in ws]
    if len(tokens) - sum(map(F.is_number, tokens)) < Q.MIN_WORDS:
        return None
    n = len(tokens)
    scale = decay * max(1.0, n / 300.0) ** 0.5
    i = np.arange(n, dtype=np.float64)
    weights_at = (1.0 + np.maximum(0.0, i - plateau * scale) / scale) ** -power
    if ramp:
        weights_at *= np.minimum(1.0, 0.5 + 0.5 * i / ramp)
    if bigrams and n > 1:
        tokens = tokens + [f"{a} {b}" for a, b in itertools.pairwise(tokens)]
        weights_at = np.concatenate([weights_at, bigrams * weights_at[:-1]])
    distinct = list(dict.fromkeys(tokens))
    index = dict(zip(distinct, range(len(distinct)), strict=True))
    ids = np.fromiter(map(index.__getitem__, tokens), dtype=np.intp, count=len(tokens))
    weights = np.bincount(ids, weights=weights_at) ** tf
    if len(weights) > features:
        keep = np.argsort(-weights, kind="stable")[:features]
        weights = weights[keep]
        distinct = [distinct[i] for i in keep.tolist()]
    return F._minhash_from(F.feature_hashes(distinct), weights)


UNITS = {
    "v3": {},
    "no decay": {"power": 0.0},
    "plateau 0.5": {"plateau": 0.5},
    "plateau 1": {"plateau": 1.0},
    "plateau 0.5, L = 120": {"plateau": 0.5, "decay": 120.0},
    "ramp 60": {"ramp": 60.0},
    "punct": {"punct": True},
    "punct, plateau 0.5": {"punct": True, "plateau": 0.5},
    "punct, plateau 0.5, L = 75": {"punct": True, "plateau": 0.5, "decay": 75.0},
    "punct, plateau 0.5, 256 features": {"punct": True, "plateau": 0.5, "features": 256},
    "punct, ramp 60": {"punct": True, "ramp": 60.0},
    "punct, tf^1": {"punct": True, "tf": 1.0},
    "punct, tf^1.5": {"punct": True, "tf": 1.5},
    "bigrams 1": {"bigrams": 1.0},
    "bigrams 0.5": {"bigrams": 0.5},
    "bigrams 1, plateau 1": {"bigrams": 1.0, "plateau": 1.0},
    "bigrams 0.3, punct, plateau 0.5": {"bigrams": 0.3, "punct": True, "plateau": 0.5},
    "bigrams 0.5, punct, plateau 0.75": {"bigrams": 0.5, "punct": True, "plateau": 0.75},
}
#: Candidates measured again with other per-bit seeds (``--seeds``): the sketch's own noise.
SEEDED = ("v3", "punct", "punct, plateau 0.5, 256 features")


def slot_seeds(n: int) -> np.ndarray:
    """The n-th set of per-bit seeds: 0 is the package's, the others derived from a name."""
    name = b"scrapy_simhash minhash slot seeds" if n == 0 else b"experiment seeds %d" % n
    digest = hashlib.shake_256(name).digest(8 * F.BITS)
    return np.frombuffer(digest, dtype=">u8").astype(np.uint64)


def second_signal(
    lines: dict[str, Lines | None], data: dict, args, fingerprints: dict[str, dict]
) -> list[dict]:
    """The longest-sentences rule beside a fingerprint (a second rule an index would need):
    at least m of the n longest sentences shared, sentences of 3 or more different articles
    left out (the frequency guard), and with a length guard, the shorter text at least
    ``ratio`` of the longer's words (a first page of a long article is not the article)."""
    docs = data["docs"]
    texts = {i: d["text"] for i, d in docs.items()}
    longs = {n: {i: (longest(t, n) if t else ()) for i, t in texts.items()} for n in (5, 8)}
    dfs = {n: sentence_df(docs, n) for n in longs}
    size = {i: (0 if ls is None else sum(len(ws) for _, ws in ls)) for i, ls in lines.items()}

    def shared(n: int, m: int, ratio: float = 0.0) -> Callable:
        ls, df = longs[n], dfs[n]

        def rule(a, b):
            if sum(1 for h in set(ls[a]) & set(ls[b]) if df[h] < 3) < m:
                return False
            return min(size[a], size[b]) >= ratio * max(size[a], size[b])

        return rule

    def ham(fp: dict) -> Callable:
        return lambda a, b: fp[a] is not None and fp[b] is not None and hamming(fp[a], fp[b]) <= 3

    rules = [
        ("longest 8 >= 3, length >= 0.6 (alone)", shared(8, 3, 0.6)),
        ("v3 OR longest 8 >= 5", lambda a, b: ham(fingerprints["v3"])(a, b) or shared(8, 5)(a, b)),
    ]
    for base_name in ("v3", "punct"):
        near = ham(fingerprints[base_name])
        for n, m, ratio in ((8, 5, 0.6), (8, 3, 0.6), (8, 3, 0.5), (5, 2, 0.6)):
            same = shared(n, m, ratio)
            rules.append(
                (
                    f"{base_name} OR longest {n} >= {m}, length >= {ratio}",
                    lambda a, b, near=near, same=same: near(a, b) or same(a, b),
                )
            )
    rows = []
    for name, rule in rules:
        row = Q.score(name, lambda v: v, measures_of(rule, data), False)
        for g, _ in Q.GROUPS:
            for c in row[g]["cats"].values():
                c["mean"] = None
        rows.append(row)
    return rows


def weighted_jaccard(a: list[str], b: list[str]) -> float:
    """Weighted Jaccard of two texts' tf^1.25 vectors, each scaled to sum 1 (no decay)."""
    ca, cb = Counter(a), Counter(b)
    x = {k: v**1.25 for k, v in ca.items()}
    y = {k: v**1.25 for k, v in cb.items()}
    sx, sy = sum(x.values()), sum(y.values())
    keys = x.keys() | y.keys()
    lo = sum(min(x.get(k, 0.0) / sx, y.get(k, 0.0) / sy) for k in keys)
    hi = sum(max(x.get(k, 0.0) / sx, y.get(k, 0.0) / sy) for k in keys)
    return lo / hi if hi else 1.0


def ceiling(lines: dict[str, Lines | None], data: dict) -> None:
    """Share of each kind's pairs by the weighted Jaccard of their words (v3's and punct's)."""
    docs = data["docs"]
    cuts = (0.5, 0.7, 0.8, 0.9, 0.95)
    print("\n### Weighted Jaccard of the pairs' words (tf^1.25, no decay)\n")
    print("| units | group | kind | " + " | ".join(f"J >= {c}" for c in cuts) + " |")
    print("|---|---|---|" + "---|" * len(cuts))
    for punct in (False, True):
        for g, _ in Q.GROUPS:
            for kind in ("moved", "moved2", "edit2", "prefix80", "edit20", "prefix30"):
                js = []
                for k_, a, b in data["pairs"]:
                    if k_ != kind or docs[a]["group"] != g:
                        continue
                    la, lb = lines[a], lines[b]
                    if la is None or lb is None:
                        js.append(0.0)
                        continue
                    if punct:
                        la, lb = sentence_lines(la), sentence_lines(lb)
                    wa = [w for _, ws in la for w in ws]
                    wb = [w for _, ws in lb for w in ws]
                    js.append(weighted_jaccard(wa, wb) if wa and wb else 0.0)
                shares = " | ".join(f"{sum(j >= c for j in js) / len(js):.0%}" for c in cuts)
                print(f"| {'punct' if punct else 'v3'} | {g} | {kind} | {shares} |")


def units(data: dict, args) -> int:
    t0 = time.perf_counter()
    docs = data["docs"]
    lines = {i: (None if d["text"] is None else prose_lines(d["text"])) for i, d in docs.items()}
    print(f"prose lines in {time.perf_counter() - t0:.0f} s", file=sys.stderr)

    kept: dict[str, dict] = {}

    def scored(name: str, opts: dict) -> dict:
        fp = {i: (None if ls is None else units_fingerprint(ls, **opts)) for i, ls in lines.items()}
        kept.setdefault(name, fp)

        def rule(a, b):
            return fp[a] is not None and fp[b] is not None and hamming(fp[a], fp[b]) <= args.k

        row = Q.score(f"{name}, k={args.k}", lambda v: v, measures_of(rule, data), False)
        for g, _ in Q.GROUPS:
            for c in row[g]["cats"].values():
                c["mean"] = None
        return row

    rows = [scored(name, opts) for name, opts in UNITS.items()]
    print(f"# experiments (--units): seed {args.seed}, limit {args.limit or 'none'}, k={args.k}")
    Q.report(rows, args)
    if args.seeds > 1:
        package_seeds = F._SLOT_SEEDS
        by_name: dict[str, list[dict]] = defaultdict(list)
        try:
            for n in range(args.seeds):
                F._SLOT_SEEDS = slot_seeds(n)
                for name in SEEDED:
                    by_name[name].append(scored(name, UNITS[name]))
        finally:
            F._SLOT_SEEDS = package_seeds
        print(f"\n### Other per-bit seeds ({args.seeds} sets, the package's first)\n")
        kinds = ("moved", "moved2", "edit2", "prefix80", "edit20", "prefix30")
        head = "| candidate | group | F1, mean ± sd | false merges, mean | "
        print(head + " | ".join(kinds) + " |")
        print("|---|---|---|---|" + "---|" * len(kinds))
        for name, runs in by_name.items():
            for g, _ in Q.GROUPS:
                f1 = np.array([r[g]["f1"] for r in runs])
                fps = np.mean([r[g]["fp"] for r in runs])
                shares = " | ".join(
                    f"{100 * np.mean([r[g]['cats'][c]['share'] for r in runs]):.1f}%" for c in kinds
                )
                print(f"| {name} | {g} | {f1.mean():.3f} ± {f1.std():.3f} | {fps:.1f} | {shares} |")
    print("\n## Second signal: the longest sentences beside the fingerprint")
    Q.report(second_signal(lines, data, args, kept), args)
    ceiling(lines, data)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("-k", "--k", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the main candidates only")
    ap.add_argument("--units", action="store_true", help="text units and weights (--units)")
    ap.add_argument("--seeds", type=int, default=1, help="with --units: per-bit seed sets")
    args = ap.parse_args(argv)
    require_corpus()
    data = Q.build(Q.select(load_pages(), args.limit, args.seed), args.seed, args.fast)
    if args.units:
        return units(data, args)
    docs = data["docs"]
    texts = {i: d["text"] for i, d in docs.items()}
    k = args.k
    t0 = time.perf_counter()

    def fps(fpr: Fingerprinter, transform: Callable[[str], str] | None = None) -> dict:
        return {
            i: (None if t is None else fpr.fingerprint(transform(t) if transform else t))
            for i, t in texts.items()
        }

    base = Fingerprinter(min_words=Q.MIN_WORDS)
    sig: dict[str, dict] = {"v2": fps(base)}
    variants = {
        "prose8": (base, lambda t: prose(t, 8)),
        "prose5": (base, lambda t: prose(t, 5)),
        "prose12": (base, lambda t: prose(t, 12)),
        "decay180": (Fingerprinter(min_words=Q.MIN_WORDS, position_decay=180.0), None),
        "decay400": (Fingerprinter(min_words=Q.MIN_WORDS, position_decay=400.0), None),
        "nodecay": (Fingerprinter(min_words=Q.MIN_WORDS, position_decay=None), None),
        "prose8+decay180": (
            Fingerprinter(min_words=Q.MIN_WORDS, position_decay=180.0),
            lambda t: prose(t, 8),
        ),
        "prose8+decay400": (
            Fingerprinter(min_words=Q.MIN_WORDS, position_decay=400.0),
            lambda t: prose(t, 8),
        ),
        "prose8+nodecay": (
            Fingerprinter(min_words=Q.MIN_WORDS, position_decay=None),
            lambda t: prose(t, 8),
        ),
    }
    if args.quick:
        variants = {k_: v for k_, v in variants.items() if k_ in ("prose8", "prose8+decay180")}
    for name, (fpr, tr) in variants.items():
        sig[name] = fps(fpr, tr)
    print(f"fingerprints in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    t1 = time.perf_counter()
    longs = {n: {i: (longest(t, n) if t else ()) for i, t in texts.items()} for n in (5, 8, 10)}
    dfs = {n: sentence_df(docs, n) for n in longs}
    mh = {i: (Q.minhash(t) if t else None) for i, t in texts.items()}
    print(f"sentences and MinHash in {time.perf_counter() - t1:.0f} s", file=sys.stderr)

    def ham(name: str, kk: int = k) -> Callable:
        s = sig[name]

        def rule(a, b):
            return s[a] is not None and s[b] is not None and hamming(s[a], s[b]) <= kk

        return rule

    def shared(n: int, m: int, guard: int = 3) -> Callable:
        ls, df = longs[n], dfs[n]

        def rule(a, b):
            common = set(ls[a]) & set(ls[b])
            return sum(1 for h in common if df[h] < guard) >= m

        return rule

    def gated(name: str, kk: int, n: int, m: int) -> Callable:
        near, same = ham(name, kk), shared(n, m)
        return lambda a, b: near(a, b) and same(a, b)

    def verify(name: str, kk: int, t: float) -> Callable:
        s = sig[name]

        def rule(a, b):
            if s[a] is None or s[b] is None or hamming(s[a], s[b]) > kk:
                return False
            return float((mh[a] == mh[b]).mean()) >= t

        return rule

    def either(*rules: Callable) -> Callable:
        return lambda a, b: any(r(a, b) for r in rules)

    rules: list[tuple[str, Callable]] = [(f"v2 (today), k={k}", ham("v2"))]
    for name in variants:
        rules.append((f"{name}, k={k}", ham(name)))
    for n, m in ((5, 2), (5, 3), (8, 3), (8, 4), (8, 5), (10, 6)):
        rules.append((f"longest {n}, >= {m} shared (alone)", shared(n, m)))
    for base_name in ("v2", "prose8", "prose8+decay180"):
        for kk in (8, 10, 12):
            for n, m in ((5, 2), (8, 3)):
                rules.append(
                    (
                        f"{base_name} k={k} OR (k<={kk} AND longest {n} >= {m})",
                        either(ham(base_name), gated(base_name, kk, n, m)),
                    )
                )
    if args.quick:
        rules.append((f"v2 k={k} OR longest 8 >= 5", either(ham("v2"), shared(8, 5))))
        rules.append((f"prose8 k={k} OR longest 8 >= 5", either(ham("prose8"), shared(8, 5))))
        rules.append((f"prose8 k={k} OR longest 10 >= 6", either(ham("prose8"), shared(10, 6))))
    for base_name in ("v2", "prose8", "prose8+decay180", "prose8+decay400"):
        if args.quick or base_name not in sig:
            continue
        for n, m in ((5, 2), (5, 3), (8, 3)):
            rules.append(
                (f"{base_name} k={k} OR longest {n} >= {m}", either(ham(base_name), shared(n, m)))
            )
    rules.append(("v2 k=3 OR longest 5 >= 3, no guard", either(ham("v2"), shared(5, 3, 10**9))))
    for base_name in () if args.quick else ("v2", "prose8"):
        for kk, t in ((8, 0.5), (8, 0.6), (10, 0.5), (12, 0.5)):
            rules.append(
                (
                    f"{base_name} k={k} OR (k<={kk} AND MinHash J>={t})",
                    either(ham(base_name), verify(base_name, kk, t)),
                )
            )
    rows = []
    for name, rule in rules:
        per = measures_of(rule, data)
        row = Q.score(name, lambda v: v, per, False)
        for g, _ in Q.GROUPS:
            for c in row[g]["cats"].values():
                c["mean"] = None
        rows.append(row)
    print(f"# experiments: seed {args.seed}, limit {args.limit or 'none'}, k={k}")
    Q.report(rows, args)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


def measures_of(rule: Callable, data: dict) -> dict:
    """The rule's decision for every pair, by (group, kind), as ``quality.score`` takes them."""
    docs = data["docs"]
    out: dict[tuple[str, str], list] = defaultdict(list)
    for kind, a, b in data["pairs"]:
        if docs[a]["text"] is None or docs[b]["text"] is None:
            out[(docs[a]["group"], kind)].append(None)
        else:
            out[(docs[a]["group"], kind)].append(bool(rule(a, b)))
    known = {frozenset(x) for x in data["known"]}
    origs = data["originals"]
    for i, a in enumerate(origs):
        ga = docs[a]["group"]
        for b in origs[i + 1 :]:
            if docs[b]["group"] == ga and frozenset((a, b)) not in known:
                out[(ga, "cross")].append(bool(rule(a, b)))
    return out


if __name__ == "__main__":
    sys.exit(main())
