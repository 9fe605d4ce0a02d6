"""Why the quality bench's signature rule misses a duplicate or merges two different pages.

Reads the pages and signatures ``bench/quality.py`` built and cached for a seed (built here
when they are not), decides every pair as that bench does (the default rule, the index's
frequency guard simulated), and gives each duplicate missed one cause, the first that holds:

  no signature          a side extracted nothing, or under 20 content words
  numbers veto          both pages' content numbers disagree (``Rule.numbers_differ``)
  under 30% of words    one text has under 30% of the other's words (no length guard takes it)
  length guard          the rule would take it were its length guards off (30-50% of words)
  within k, vetoed      fingerprints within k, refused by the shingles or a rewrite veto
  past k, none shared   fingerprints past k, no long sentence shared
  past k, too few       fingerprints past k, fewer long sentences shared than the rule asks

and each pair of different pages merged the rule that merged it (``hamming``, ``sentences``;
``cross`` pairs included). Printed per group and kind, with up to ``--examples`` pairs of each
(stored page, then page: the corpus ids, ``rid@layout`` for a page moved into a layout,
``rid~kind`` for another variant), and the details of each example with ``--details``:
Hamming distance, shingles sketches apart, long sentences shared (and counted by the guard)
of each side's, words and content numbers of each side.

    python bench/misses.py                     # seed 7
    python bench/misses.py --seed 7 --seed 11  # causes summed over seeds
    python bench/misses.py --kind moved --examples 20 --details
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality as Q
from _corpus import load_pages, require_corpus

from scrapy_simhash import hamming
from scrapy_simhash.text.signature import DEFAULT_RULE, PageSignature, Rule

#: The rule with its length guards off: what "length guard" asks of a missed pair.
NO_LENGTH_GUARDS = dataclasses.replace(
    DEFAULT_RULE, length=0.0, hamming_length=0.0, contained_length=0.0
)


def counted(page: PageSignature, stored: PageSignature, held: Counter, rule: Rule) -> int:
    """The shared long sentences the simulated guard lets count (as ``quality.Guarded``)."""
    shared = set(page.sentences).intersection(stored.sentences)
    return sum(1 for h in shared if held[h] < rule.guard)


def cause(page: PageSignature | None, stored: PageSignature | None, held: Counter, k: int) -> str:
    """Why the default rule does not take ``page`` for ``stored`` (see the module's docstring)."""
    if page is None or stored is None:
        return "no signature"
    if DEFAULT_RULE.numbers_differ(page, stored):
        return "numbers veto"
    fewer, more = sorted((page.words, stored.words))
    if more and fewer / more < 0.3:
        return "under 30% of words"
    if NO_LENGTH_GUARDS.decide(page, stored, k, counted(page, stored, held, NO_LENGTH_GUARDS)):
        return "length guard"
    if hamming(page.fingerprint, stored.fingerprint) <= k:
        return "within k, vetoed"
    if counted(page, stored, held, DEFAULT_RULE) == 0:
        return "past k, none shared"
    return "past k, too few"


def details(page: PageSignature, stored: PageSignature, held: Counter) -> str:
    shared = set(page.sentences).intersection(stored.sentences)
    runs = hamming(page.shingles, stored.shingles) if page.shingles and stored.shingles else "-"
    return (
        f"{hamming(page.fingerprint, stored.fingerprint)} bits, shingles {runs} apart, "
        f"sentences {len(shared)} shared ({counted(page, stored, held, DEFAULT_RULE)} counted) "
        f"of {len(stored.sentences)} / {len(page.sentences)}, words {stored.words} / "
        f"{page.words}, numbers {stored.number_count} / {page.number_count}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", "--k", type=int, default=3, help="Hamming distance threshold")
    ap.add_argument("--seed", type=int, action="append", help="seed (default 7; repeatable)")
    ap.add_argument("--fast", action="store_true", help="trafilatura's fast mode")
    ap.add_argument("--kind", action="append", default=[], help="only this kind (repeatable)")
    ap.add_argument("--examples", type=int, default=3, help="example pairs per cause")
    ap.add_argument("--details", action="store_true", help="each example's measures")
    args = ap.parse_args(argv)
    require_corpus()
    pages = load_pages()
    method_args = argparse.Namespace(
        k=args.k, ablation=False, rule=[], variant=[], no_baselines=True
    )
    found: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for seed in args.seed or [7]:
        data = Q.build(Q.select(pages, 0, seed), seed, args.fast)
        method = Q.methods_for(method_args)[0]  # the signature rule
        sigs = Q.signatures(method, data)
        guarded = Q.Guarded()
        guarded.prepare(sigs, data)
        docs = data["docs"]
        pairs = [tuple(p) for p in data["pairs"]]
        known = {frozenset(p) for p in data["known"]}
        originals = [r for r in data["originals"] if sigs[r] is not None]
        for i, a in enumerate(originals):
            for b in originals[i + 1 :]:
                same_group = docs[a]["group"] == docs[b]["group"]
                if same_group and frozenset((a, b)) not in known:
                    pairs.append(("cross", a, b))
        for kind, a, b in pairs:
            if args.kind and kind not in args.kind:
                continue
            group = docs[a]["group"]
            held = guarded.held[group]
            stored, page = sigs[a], sigs[b]
            decided = None
            if stored is not None and page is not None:
                decided = DEFAULT_RULE.decide(
                    page, stored, args.k, counted(page, stored, held, DEFAULT_RULE)
                )
            if kind in Q.POSITIVE and decided is None:
                why = cause(page, stored, held, args.k)
            elif kind not in Q.POSITIVE and decided is not None:
                why = decided
            else:
                continue
            line = f"seed {seed}: {a}  {b}"
            if args.details and page is not None and stored is not None:
                line += f"  ({details(page, stored, held)})"
            found[(group, kind, why)].append(line)
    for group, name in Q.GROUPS:
        print(f"\n### {name}\n")
        for kind in Q.POSITIVE + Q.NEGATIVE:
            causes = {w: ex for (g, k, w), ex in found.items() if g == group and k == kind}
            if not causes:
                continue
            what = "missed" if kind in Q.POSITIVE else "merged"
            summary = ", ".join(f"{w} {len(ex)}" for w, ex in sorted(causes.items()))
            print(f"{kind} {what}: {summary}")
            for w, ex in sorted(causes.items()):
                for line in ex[: args.examples]:
                    print(f"    {w}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
