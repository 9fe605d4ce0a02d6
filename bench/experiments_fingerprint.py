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

    python bench/experiments_fingerprint.py            # all, on the full bench's texts
    python bench/experiments_fingerprint.py --limit 40 # the texts of a --limit 40 bench
"""

from __future__ import annotations

import argparse
import hashlib
import re
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality as Q
from _corpus import load_pages, require_corpus

from scrapy_simhash import Fingerprinter, hamming

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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--fast", action="store_true")
    ap.add_argument("-k", "--k", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="the main candidates only")
    args = ap.parse_args(argv)
    require_corpus()
    data = Q.build(Q.select(load_pages(), args.limit, args.seed), args.seed, args.fast)
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
