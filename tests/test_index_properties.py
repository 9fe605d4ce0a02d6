"""Property tests: every layout answers exactly what brute force answers."""

from __future__ import annotations

import itertools
import shutil
import tempfile

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scrapy_simhash.index.tables as index_module
from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.layout import build_layout, candidate_layouts
from scrapy_simhash.index.pairs import near_pairs

LAYOUTS = [(k, b, s) for k in range(0, 5) for b, s in candidate_layouts(k)]
LAYOUTS += [(8, 9, 0), (8, 10, 0)]


def planted(seed: int, k: int, size: int) -> tuple[int, list[int]]:
    """A query and stored fingerprints: neighbours at every distance 0..k+1 and random ones."""
    rng = np.random.default_rng(seed)
    query = int(rng.integers(0, 2**64, dtype=np.uint64))
    stored = [int(x) for x in rng.integers(0, 2**64, size=size, dtype=np.uint64)]
    for distance in range(k + 2):
        for _ in range(2):
            fp = query
            for bit in rng.choice(64, size=distance, replace=False):
                fp ^= 1 << int(bit)
            stored.append(fp)
    # Neighbours that share the query's top bits, so low-prefix scans see near misses too.
    stored.append(query ^ (1 << 0) ^ (1 << 1) ^ (1 << 2) ^ (1 << 3) ^ (1 << 4))
    return query, stored


def brute(query: int, stored: list[int], k: int) -> dict[int, int]:
    return {fp: (fp ^ query).bit_count() for fp in stored if (fp ^ query).bit_count() <= k}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout_index=st.integers(0, len(LAYOUTS) - 1), seed=st.integers(0, 2**32 - 1))
def test_every_layout_returns_exactly_the_brute_force_set(layout_index, seed):
    k, blocks, sub_blocks = LAYOUTS[layout_index]
    layout = build_layout(k, blocks, sub_blocks)
    query, stored = planted(seed, k, 200)
    path = tempfile.mkdtemp()
    try:
        with SimhashIndex(path, max_distance=k, layout=layout) as ix:
            half = len(stored) // 2
            ix.insert_many((fp, f"bulk{i}", {}) for i, fp in enumerate(stored[:half]))
            for i, fp in enumerate(stored[half:]):
                ix.insert(fp, f"one{i}")
            expected = brute(query, stored, k)
            got = {m.fingerprint: m.distance for m in ix.query(query)}
            assert got == expected
            for smaller in range(k):
                got = {m.fingerprint: m.distance for m in ix.query(query, max_distance=smaller)}
                assert got == brute(query, stored, smaller)
            matches = ix.query(query)
            assert [m.distance for m in matches] == sorted(m.distance for m in matches)
    finally:
        shutil.rmtree(path)


@settings(max_examples=25, deadline=None)
@given(layout_index=st.integers(0, len(LAYOUTS) - 1), seed=st.integers(0, 2**32 - 1))
def test_batch_pairs_equal_brute_force_pairs(layout_index, seed):
    k, blocks, sub_blocks = LAYOUTS[layout_index]
    layout = build_layout(k, blocks, sub_blocks)
    _, stored = planted(seed, k, 60)
    values = sorted(set(stored))
    expected = {
        (a, b): (a ^ b).bit_count()
        for a, b in itertools.combinations(values, 2)
        if (a ^ b).bit_count() <= k
    }
    a, b, d = near_pairs(layout, np.array(values, dtype=np.uint64), k)
    got = dict(zip(zip(a.tolist(), b.tolist(), strict=True), d.tolist(), strict=True))
    assert got == expected


def brute_keys(query: int, docs: dict[str, int], k: int) -> dict[str, int]:
    return {
        key: (fp ^ query).bit_count() for key, fp in docs.items() if (fp ^ query).bit_count() <= k
    }


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout_index=st.integers(0, len(LAYOUTS) - 1),
    seed=st.integers(0, 2**32 - 1),
    expected_size=st.sampled_from([100, 10**6, 10**8]),
    few=st.sampled_from([0, 10**6]),
    recent=st.sampled_from([3, 40, 10**6]),
)
def test_every_write_path_keeps_brute_force_answers(layout_index, seed, expected_size, few, recent):
    """Bulk loads into empty and non-empty tables (merged buckets, appended buckets),
    reinserted keys, shared fingerprints, single inserts and removals, for every bucket
    key width, with recent tables merged into the main ones often, now and then or never:
    queries equal brute force over what is stored, and verify() is clean."""
    k, blocks, sub_blocks = LAYOUTS[layout_index]
    layout = build_layout(k, blocks, sub_blocks)
    query, stored = planted(seed, k, 120)
    rng = np.random.default_rng(seed)
    docs: dict[str, int] = {}
    path = tempfile.mkdtemp()
    saved, index_module._FEW = index_module._FEW, few  # numpy merges, or bisection
    saved_recent, index_module._RECENT_MIN = index_module._RECENT_MIN, recent
    try:
        with SimhashIndex(path, max_distance=k, layout=layout, expected_size=expected_size) as ix:
            first = [(fp, f"a{i}", {}) for i, fp in enumerate(stored[::2])]
            first.append((stored[0], "shares-a0", {}))
            ix.insert_many(first)
            docs.update((key, fp) for fp, key, _ in first)
            # Into non-empty tables: new keys, reinserted keys with new fingerprints, the
            # extremes (appended after the last bucket, or before the first).
            second = [(fp, f"b{i}", {"i": i}) for i, fp in enumerate(stored[1::2])]
            second += [(stored[1] ^ 1, "a1", {}), (2**64 - 1, "top", {}), (0, "bottom", {})]
            ix.insert_many(second)
            docs.update((key, fp) for fp, key, _ in second)
            ix.insert_many([(2**64 - 2, "top2", {})])
            docs["top2"] = 2**64 - 2
            for i in range(10):
                fp = stored[int(rng.integers(0, len(stored)))] ^ (1 << i)
                ix.insert(fp, f"one{i}")
                docs[f"one{i}"] = fp
            for key in rng.choice(sorted(docs), size=15, replace=False).tolist():
                assert ix.remove(key)
                del docs[key]
            ix.insert(docs.get("a2", 5), "a3")
            docs["a3"] = docs.get("a2", 5)
            assert ix.verify() == []
            assert len(ix) == len(docs)
            assert ix.stats()["fingerprints"] == len(set(docs.values()))
            picked = [stored[int(i)] for i in rng.integers(0, len(stored), size=5)]
            for q in [query, *picked, 0, 2**64 - 1]:
                got = {m.key: m.distance for m in ix.query(q)}
                assert got == brute_keys(q, docs, k)
    finally:
        index_module._FEW = saved
        index_module._RECENT_MIN = saved_recent
        shutil.rmtree(path)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    layout_index=st.integers(0, len(LAYOUTS) - 1),
    seed=st.integers(0, 2**32 - 1),
    commit_every=st.sampled_from([1, 3, 50, 10_000]),
    recent=st.sampled_from([2, 10**6]),
    ops=st.lists(
        st.tuples(st.sampled_from(["insert", "check", "remove", "many", "query"]), st.integers()),
        min_size=5,
        max_size=60,
    ),
)
def test_queries_inside_a_batch_see_held_back_entries(
    layout_index, seed, commit_every, recent, ops
):
    """Inside batch(): inserts (new, repeated and shared fingerprints, reinserted keys),
    check_and_insert, removals and bulk loads, with table entries held back until commit
    (and recent tables merged often, or never); every query in the block equals brute force
    over what the block stored so far."""
    k, blocks, sub_blocks = LAYOUTS[layout_index]
    layout = build_layout(k, blocks, sub_blocks)
    query, stored = planted(seed, k, 30)
    docs: dict[str, int] = {}
    path = tempfile.mkdtemp()
    saved_recent, index_module._RECENT_MIN = index_module._RECENT_MIN, recent
    try:
        with SimhashIndex(path, max_distance=k, layout=layout) as ix:
            ix.insert_many((fp, f"pre{i}", {}) for i, fp in enumerate(stored[:10]))
            docs.update((f"pre{i}", fp) for i, fp in enumerate(stored[:10]))
            with ix.batch(commit_every=commit_every):
                for op, n in ops:
                    fp = stored[n % len(stored)]
                    key = f"key{n % 13}"
                    if op == "insert":
                        ix.insert(fp, key)
                        docs[key] = fp
                    elif op == "check":
                        nearest = brute_keys(fp, {a: b for a, b in docs.items() if a != key}, k)
                        got = ix.check_and_insert(fp, key)
                        if nearest:
                            assert got is not None and got.distance == min(nearest.values())
                        else:
                            assert got is None
                            docs[key] = fp
                    elif op == "remove":
                        assert ix.remove(key) == (docs.pop(key, None) is not None)
                    elif op == "many":
                        batch = [(fp, key, {}), (fp ^ 1, f"many{n % 5}", {})]
                        ix.insert_many(batch)
                        docs.update((b, a) for a, b, _ in batch)
                    for q in (query, fp):
                        assert {m.key: m.distance for m in ix.query(q)} == brute_keys(q, docs, k)
                assert len(ix) == len(docs)
            assert ix.verify() == []
            assert ix.stats()["fingerprints"] == len(set(docs.values()))
            for q in (query, *stored[::7]):
                assert {m.key: m.distance for m in ix.query(q)} == brute_keys(q, docs, k)
    finally:
        index_module._RECENT_MIN = saved_recent
        shutil.rmtree(path)
