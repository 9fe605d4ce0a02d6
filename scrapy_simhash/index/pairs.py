"""Batch mode: every pair of fingerprints within distance k, by sorting each permutation.

For each table the permuted fingerprints are sorted; near duplicates then lie in the same run
of equal prefixes, so comparing each element with the next ones while the prefix stays equal
(vectorized, one offset at a time) finds every pair the table can see. Pairs found by several
tables are kept once.
"""

from __future__ import annotations

import numpy as np

from .bulk import sorted_distinct
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
