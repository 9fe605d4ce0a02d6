"""Permuted-table layouts (Manku, Jain, Das Sarma, WWW 2007, section 3).

The 64 bits are split into ``r`` blocks; each table puts ``r - k`` of them in front (its
*prefix*) and keeps the other bits behind, in their original order. Two fingerprints within
``k`` bits differ in at most ``k`` blocks, so they agree on the whole prefix of at least one
table: a prefix scan per table finds every near duplicate. A two-level layout splits the bits
left behind by the first level into ``r2`` sub-blocks and puts ``r2 - k`` of those in front too.

A table's permutation moves contiguous runs of bits, so it is a handful of mask-and-shift
operations, compiled once per table to a small function (and a numpy twin for batches).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import comb

import numpy as np

BITS = 64
#: Largest Hamming distance a layout can be built for.
MAX_SUPPORTED_DISTANCE = 8
#: No layout with more tables than this is built (inserts and disk grow with the tables).
MAX_TABLES = 64

# Run = (lowest source bit, width); bit 0 is the least significant bit.
Run = tuple[int, int]

# Rough cost model, in microseconds, used to pick a layout for an expected size: a query
# costs a seek (and an insert a write) per table, each candidate in a scanned prefix range
# costs a compare.
_SEEK_COST = 5.0
_CANDIDATE_COST = 0.3


def _split(runs: Sequence[Run], parts: int) -> list[tuple[Run, ...]]:
    """Split a bit sequence (runs, most significant first) into ``parts`` blocks as even as
    possible, wider blocks first."""
    total = sum(w for _, w in runs)
    widths = [total // parts + (1 if i < total % parts else 0) for i in range(parts)]
    # Flatten to single bits (most significant first), then regroup: at most 64 bits.
    bits = [lo + w - 1 - j for lo, w in runs for j in range(w)]
    blocks = []
    pos = 0
    for width in widths:
        blocks.append(_runs_of(bits[pos : pos + width]))
        pos += width
    return blocks


def _runs_of(bits: Sequence[int]) -> tuple[Run, ...]:
    """Group source bit positions (most significant first) into maximal descending runs."""
    runs: list[list[int]] = []
    for b in bits:
        if runs and runs[-1][0] == b + 1:
            runs[-1][0] = b
            runs[-1][1] += 1
        else:
            runs.append([b, 1])
    return tuple((lo, w) for lo, w in runs)


def _width(block: Sequence[Run]) -> int:
    return sum(w for _, w in block)


@dataclass(frozen=True)
class TablePlan:
    """One table: the runs of source bits in output order (most significant first), and how
    many leading output bits form the exact-match prefix."""

    runs: tuple[Run, ...]
    prefix_bits: int
    forward: Callable[[int], int] = field(init=False, repr=False, compare=False)
    inverse: Callable[[int], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if sorted(b for lo, w in self.runs for b in range(lo, lo + w)) != list(range(BITS)):
            raise ValueError(f"table runs {self.runs!r} are not a permutation of 64 bits")
        object.__setattr__(self, "forward", _compile(self._moves(invert=False)))
        object.__setattr__(self, "inverse", _compile(self._moves(invert=True)))

    def _moves(self, invert: bool) -> list[tuple[int, int, int]]:
        """(source low bit, width, destination low bit) per run."""
        moves = []
        dst = BITS
        for lo, w in self.runs:
            dst -= w
            moves.append((dst, w, lo) if invert else (lo, w, dst))
        return moves

    def forward_np(self, values: np.ndarray) -> np.ndarray:
        """The permutation applied to a uint64 array."""
        return _apply_np(self._moves(invert=False), values)

    def inverse_np(self, values: np.ndarray) -> np.ndarray:
        """The inverse permutation applied to a uint64 array."""
        return _apply_np(self._moves(invert=True), values)


def _compile(moves: list[tuple[int, int, int]]) -> Callable[[int], int]:
    terms = []
    for src, w, dst in moves:
        mask = ((1 << w) - 1) << src
        if dst >= src:
            terms.append(f"((x & {mask:#x}) << {dst - src})")
        else:
            terms.append(f"((x & {mask:#x}) >> {src - dst})")
    # The expression holds integer constants only: generated from validated runs.
    return eval(f"lambda x: {' | '.join(terms)}")


#: Values permuted at a time: the scratch array stays in cache, and no temporary as large as
#: the input is allocated (fresh memory costs more than the arithmetic at millions of values).
_SPAN = 1 << 20


def _apply_np(moves: list[tuple[int, int, int]], values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=np.uint64)
    out = np.zeros_like(values)
    scratch = np.empty(min(values.size, _SPAN), dtype=np.uint64)
    for start in range(0, values.size, _SPAN):
        source = values[start : start + _SPAN]
        target = out[start : start + _SPAN]
        part = scratch[: source.size]
        for src, w, dst in moves:
            np.bitwise_and(source, np.uint64(((1 << w) - 1) << src), out=part)
            if dst >= src:
                np.left_shift(part, np.uint64(dst - src), out=part)
            else:
                np.right_shift(part, np.uint64(src - dst), out=part)
            target |= part
    return out


@dataclass(frozen=True)
class Layout:
    """A set of permuted tables for Hamming distance ``max_distance``.

    ``blocks`` are the first-level block widths, ``sub_blocks`` the second-level ones (empty
    for a one-level layout); ``tables`` is the number of tables and ``prefix_bits`` the
    prefix width of each table. ``str(layout)`` describes it in words.
    """

    max_distance: int
    blocks: tuple[int, ...]
    sub_blocks: tuple[int, ...]
    plans: tuple[TablePlan, ...]

    @property
    def tables(self) -> int:
        return len(self.plans)

    @property
    def prefix_bits(self) -> tuple[int, ...]:
        return tuple(p.prefix_bits for p in self.plans)

    @property
    def name(self) -> str:
        """Short id: ``"4x16"`` (first level only) or ``"4x16/4x12"`` (two levels)."""
        one = _describe_blocks(self.blocks, "x")
        return f"{one}/{_describe_blocks(self.sub_blocks, 'x')}" if self.sub_blocks else one

    def __str__(self) -> str:
        k = self.max_distance
        lo, hi = min(self.prefix_bits), max(self.prefix_bits)
        prefix = f"{lo}" if lo == hi else f"{lo}-{hi}"
        text = (
            f"{self.tables} tables for k={k}: blocks {'+'.join(map(str, self.blocks))},"
            f" {len(self.blocks) - k} leading"
        )
        if self.sub_blocks:
            text += (
                f", then sub-blocks {'+'.join(map(str, self.sub_blocks))},"
                f" {len(self.sub_blocks) - k} leading"
            )
        return f"{text}; prefix {prefix} bits"

    def to_json(self) -> str:
        """The stored form: parameters and the explicit runs of every table."""
        return json.dumps(
            {
                "max_distance": self.max_distance,
                "blocks": list(self.blocks),
                "sub_blocks": list(self.sub_blocks),
                "tables": [[list(r) for r in p.runs] for p in self.plans],
                "prefix_bits": list(self.prefix_bits),
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> Layout:
        """Rebuild a stored layout; raises ValueError if this code would build other tables
        for the same parameters (the stored tables could not be read correctly)."""
        try:
            spec = json.loads(text)
            k, blocks, sub_blocks = spec["max_distance"], spec["blocks"], spec["sub_blocks"]
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"stored layout {text[:200]!r} cannot be read ({exc!r})") from None
        if not (
            isinstance(k, int)
            and not isinstance(k, bool)
            and 0 <= k <= MAX_SUPPORTED_DISTANCE
            and isinstance(blocks, list)
            and isinstance(sub_blocks, list)
            and k < len(blocks) <= BITS
            and table_count(k, len(blocks), len(sub_blocks)) <= MAX_TABLES
        ):
            # checked before building: damaged parameters could ask for billions of tables
            raise ValueError(f"stored layout {text[:200]!r} is not one this version builds")
        layout = build_layout(k, len(blocks), len(sub_blocks))
        if layout.to_json() != json.dumps(spec, sort_keys=True):
            raise ValueError(f"stored layout {spec!r} differs from the one this version builds")
        return layout

    def candidates_per_probe(self, size: int) -> float:
        """Expected stored fingerprints scanned per query among ``size`` random ones."""
        return float(sum(size / 2**p for p in self.prefix_bits))


def _describe_blocks(widths: Sequence[int], sep: str) -> str:
    if len(set(widths)) == 1:
        return f"{len(widths)}{sep}{widths[0]}"
    return "+".join(map(str, widths))


def table_count(max_distance: int, blocks: int, sub_blocks: int = 0) -> int:
    """How many tables :func:`build_layout` builds for these parameters: one for each way
    to leave ``max_distance`` blocks behind, at each level."""
    return comb(blocks, max_distance) * (comb(sub_blocks, max_distance) if sub_blocks else 1)


def build_layout(max_distance: int, blocks: int, sub_blocks: int = 0) -> Layout:
    """A layout of ``blocks`` first-level blocks (``> max_distance``) and optionally
    ``sub_blocks`` second-level blocks (``> max_distance``, or 0 for one level)."""
    k = max_distance
    if not 0 <= k <= MAX_SUPPORTED_DISTANCE:
        raise ValueError(f"max_distance must be in 0..{MAX_SUPPORTED_DISTANCE}, got {k}")
    if blocks <= k or blocks > BITS:
        raise ValueError(f"blocks must be in {k + 1}..{BITS} for max_distance={k}, got {blocks}")
    if sub_blocks and (sub_blocks <= k or k == 0):
        raise ValueError(f"sub_blocks must be 0 or more than max_distance={k}, got {sub_blocks}")
    level1 = _split([(0, BITS)], blocks)
    plans = []
    for lead in combinations(range(blocks), blocks - k):
        front = [run for i in lead for run in level1[i]]
        rest = [run for i in range(blocks) if i not in lead for run in level1[i]]
        if not sub_blocks:
            plans.append(TablePlan(_merge(front + rest), sum(w for _, w in front)))
            continue
        level2 = _split(rest, sub_blocks)
        for lead2 in combinations(range(sub_blocks), sub_blocks - k):
            front2 = [run for i in lead2 for run in level2[i]]
            rest2 = [run for i in range(sub_blocks) if i not in lead2 for run in level2[i]]
            runs = _merge(front + front2 + rest2)
            plans.append(TablePlan(runs, sum(w for _, w in front + front2)))
    return Layout(
        k,
        tuple(_width(b) for b in level1),
        tuple(_width(b) for b in _split(_rest_of(level1, k), sub_blocks)) if sub_blocks else (),
        tuple(plans),
    )


def _rest_of(level1: list[tuple[Run, ...]], k: int) -> list[Run]:
    """Bits behind the first table's prefix (all tables leave ``k`` blocks behind)."""
    return [run for block in level1[len(level1) - k :] for run in block]


def _merge(runs: Sequence[Run]) -> tuple[Run, ...]:
    """Merge runs adjacent in both source and output order (fewer shifts)."""
    out: list[Run] = []
    for lo, w in runs:
        if out and out[-1][0] == lo + w:
            out[-1] = (lo, out[-1][1] + w)
        else:
            out.append((lo, w))
    return tuple(out)


def candidate_layouts(max_distance: int) -> list[tuple[int, int]]:
    """(blocks, sub_blocks) pairs worth considering for ``max_distance``."""
    k = max_distance
    if k == 0:
        return [(1, 0)]
    out = [(r, 0) for r in range(k + 1, k + 7) if table_count(k, r) <= MAX_TABLES]
    for r1 in range(k + 1, k + 4):
        for r2 in range(k + 1, k + 4):
            if table_count(k, r1, r2) <= MAX_TABLES:
                out.append((r1, r2))
    return out


def choose_layout(max_distance: int, expected_size: int) -> Layout:
    """The layout with the cheapest expected query for ``expected_size`` fingerprints: prefix
    widths near log2(N), as in the paper (k=3: 4 tables of 16 bits up to a few million,
    10 tables of 25-26 bits to a few 10^8, 16 two-level tables of 28 bits beyond)."""
    if not 0 <= max_distance <= MAX_SUPPORTED_DISTANCE:
        raise ValueError(f"max_distance must be in 0..{MAX_SUPPORTED_DISTANCE}, got {max_distance}")
    if expected_size < 1:
        raise ValueError(f"expected_size must be >= 1, got {expected_size}")
    best: tuple[float, Layout] | None = None
    for blocks, sub_blocks in candidate_layouts(max_distance):
        layout = build_layout(max_distance, blocks, sub_blocks)
        cost = layout.tables * _SEEK_COST + layout.candidates_per_probe(expected_size) * (
            _CANDIDATE_COST
        )
        if best is None or cost < best[0]:
            best = (cost, layout)
    assert best is not None
    return best[1]
