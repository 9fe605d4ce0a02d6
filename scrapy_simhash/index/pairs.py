"""Batch mode: every pair of fingerprints within distance k, by sorting each permutation.

For each table the permuted fingerprints are sorted; near duplicates then lie in the same run
of equal prefixes, so comparing each element with the next ones while the prefix stays equal
(vectorized, one offset at a time) finds every pair the table can see. Pairs found by several
tables are kept once. The index's ``pairs``, ``clusters`` and ``groups`` turn them into pairs
and groups of documents (``groups`` with the drop records against them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np

from .bulk import sorted_distinct
from .drops import Drop
from .layout import Layout


def near_pairs(
    layout: Layout, fingerprints: np.ndarray, max_distance: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(a, b, distance) arrays, ``a < b``, of distinct fingerprints within ``max_distance``."""
    values = sorted_distinct(np.asarray(fingerprints, dtype=np.uint64))
    found_a: list[np.ndarray] = []
    found_b: list[np.ndarray] = []
    for plan in layout.plans:
        permuted = plan.forward_np(values)
        permuted.sort()
        prefix = permuted >> np.uint64(64 - plan.prefix_bits) if plan.prefix_bits < 64 else permuted
        # Indices whose next element shares the prefix: only they can start a pair.
        live = np.flatnonzero(prefix[:-1] == prefix[1:])
        offset = 1
        while live.size:
            other = live + offset
            distance = np.bitwise_count(permuted[live] ^ permuted[other])
            hit = distance <= max_distance
            if hit.any():
                found_a.append(plan.inverse_np(permuted[live[hit]]))
                found_b.append(plan.inverse_np(permuted[other[hit]]))
            offset += 1
            live = live[live + offset < permuted.size]
            live = live[prefix[live] == prefix[live + offset]]
    if not found_a:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty, np.zeros(0, dtype=np.uint8)
    a = np.concatenate(found_a)
    b = np.concatenate(found_b)
    low, high = np.minimum(a, b), np.maximum(a, b)
    pairs = np.unique(np.stack([low, high], axis=1), axis=0)
    distance = np.bitwise_count(pairs[:, 0] ^ pairs[:, 1]).astype(np.uint8)
    return pairs[:, 0], pairs[:, 1], distance


def document_pairs(
    layout: Layout, fps: np.ndarray, keys_of: Callable[[set[int]], dict[int, list[str]]], k: int
) -> Iterator[tuple[str, str, int]]:
    """Every pair of documents within ``k`` as ``(key_a, key_b, distance)``, ``key_a <
    key_b``: ``fps`` holds each document's fingerprint, and ``keys_of(fingerprints)`` gives
    the sorted keys of the documents of each of those fingerprints."""
    a, b, dist = near_pairs(layout, fps, k)
    distinct, counts = np.unique(fps, return_counts=True)
    shared = distinct[counts > 1]
    keys = keys_of(set(np.concatenate([a, b, shared]).tolist()))
    for fp in shared.tolist():
        group = keys[fp]
        for i, ka in enumerate(group):
            for kb in group[i + 1 :]:
                yield ka, kb, 0
    for fa, fb, d in zip(a.tolist(), b.tolist(), dist.tolist(), strict=True):
        for ka in keys[fa]:
            for kb in keys[fb]:
                yield (ka, kb, d) if ka < kb else (kb, ka, d)


class _Components:
    """Union-find over keys."""

    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        parent = self.parent
        root = parent.setdefault(x, x)
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> dict[str, list[str]]:
        """Root -> the sorted keys of its component."""
        found: dict[str, list[str]] = {}
        for key in self.parent:
            found.setdefault(self.find(key), []).append(key)
        for keys in found.values():
            keys.sort()
        return found


def components(pairs: Iterable[tuple[str, str, int]]) -> list[list[str]]:
    """Connected components of ``pairs``, each sorted, biggest first."""
    union = _Components()
    for ka, kb, _ in pairs:
        union.join(ka, kb)
    return sorted(union.groups().values(), key=lambda g: (-len(g), g[0]))


@dataclass(frozen=True)
class Group:
    """Stored documents near one another (``kept``, sorted) and the pages dropped as near
    duplicates of them (``dropped``, by kept page, then nearest first, then by key)."""

    kept: list[str]
    dropped: list[Drop]

    def __len__(self) -> int:
        return len(self.kept) + len(self.dropped)


def groups(pairs: Iterable[tuple[str, str, int]], drops: Iterable[Drop]) -> list[Group]:
    """The connected components of ``pairs`` of stored documents, each with the ``drops``
    against its documents, and every document with drops but no near document: biggest
    first."""
    union = _Components()
    for ka, kb, _ in pairs:
        union.join(ka, kb)
    dropped: dict[str, list[Drop]] = {}
    for drop in drops:
        if drop.kept is not None:
            dropped.setdefault(union.find(drop.kept), []).append(drop)
    found = []
    for root, kept in union.groups().items():
        place = {key: i for i, key in enumerate(kept)}
        copies = sorted(dropped.get(root, ()), key=lambda d: (place[d.kept], d.distance, d.key))
        if len(kept) + len(copies) > 1:
            found.append(Group(kept, copies))
    found.sort(key=lambda g: (-len(g), g.kept[0]))
    return found
