"""Why the quality bench's signature rule misses a duplicate or merges two different pages.

Reads the pages and signatures ``bench/quality.py`` built and cached for a seed (built here
when they are not), decides every pair as that bench does (the default rule, the index's
frequency guard simulated), and gives each duplicate missed one cause, the first that holds:

  no signature          a side extracted nothing, or under 20 content words
  numbers veto          both pages' content numbers disagree (``Rule.numbers_differ``)
  under 30% of words    one text has under 30% of the other's words (no length guard takes it)
  runs not inside       the contained clause would take it but for its shingles sketches,
                        further apart than a text inside the other gives (``Rule.contained_runs``)
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
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import quality as Q
from _corpus import load_pages, require_corpus

from scrapy_simhash import hamming
from scrapy_simhash.text.rule import DEFAULT_RULE

#: The rule without the contained clause's runs check: what "runs not inside" asks.
ANY_RUNS = dataclasses.replace(DEFAULT_RULE, contained_runs=Q.OFF)
#: The rule with its length guards off: what "length guard" asks of a missed pair.
NO_LENGTH_GUARDS = dataclasses.replace(
    DEFAULT_RULE, length=0.0, hamming_length=0.0, contained_length=0.0
)


def cause(value, k: int) -> str:
    """Why the default rule does not take a pair (its ``quality.Guarded.measure`` value, None
    when a side has no signature); see the module's docstring."""
    if value is None:
        return "no signature"
    page, stored, _ = value
    if DEFAULT_RULE.numbers_differ(page, stored):
        return "numbers veto"
    fewer, more = sorted((page.words, stored.words))
    if more and fewer / more < 0.3:
        return "under 30% of words"
    if Q.signature_rule(ANY_RUNS, k)(value):
        return "runs not inside"
    if Q.signature_rule(NO_LENGTH_GUARDS, k)(value):
        return "length guard"
    if hamming(page.fingerprint, stored.fingerprint) <= k:
        return "within k, vetoed"
    if Q.counted(value, DEFAULT_RULE) == 0:
        return "past k, none shared"
    return "past k, too few"


def details(value) -> str:
    page, stored, held = value
    runs = hamming(page.shingles, stored.shingles) if page.shingles and stored.shingles else "-"
    return (
        f"{hamming(page.fingerprint, stored.fingerprint)} bits, shingles {runs} apart, "
        f"sentences {len(held)} shared ({Q.counted(value, DEFAULT_RULE)} counted) "
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
    method = Q.methods_for(method_args)[0]  # the signature rule, its guard simulated
    decide = Q.signature_rule(DEFAULT_RULE, args.k)
    found: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for seed in args.seed or [7]:
        data = Q.build(Q.select(pages, 0, seed), seed, args.fast)
        sigs = Q.signatures(method, data)
        method.prepare(sigs, data)
        docs = data["docs"]
        pairs = [
            *map(tuple, data["pairs"]),
            *(("cross", a, b) for a, b in Q.cross_pairs(data, sigs)),
        ]
        for kind, a, b in pairs:
            if args.kind and kind not in args.kind:
                continue
            group = docs[a]["group"]
            stored, page = sigs[a], sigs[b]
            value = None if stored is None or page is None else method.measure(stored, page, group)
            decided = None if value is None else decide(value)
            if kind in Q.POSITIVE and decided is None:
                why = cause(value, args.k)
            elif kind not in Q.POSITIVE and decided is not None:
                why = decided
            else:
                continue
            line = f"seed {seed}: {a}  {b}"
            if args.details and value is not None:
                line += f"  ({details(value)})"
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
