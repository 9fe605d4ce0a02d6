"""Property tests on the Redis index: every layout answers exactly what brute force answers,
on a real redis-server (and a few examples on the 3-master cluster)."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scrapy_simhash.index.layout import build_layout
from scrapy_simhash.index.redis_index import RedisIndex

from .test_index_properties import LAYOUTS, brute, planted

_SETTINGS = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _exact_answers(url: str, layout_index: int, seed: int, expected_size: int) -> None:
    k, blocks, sub_blocks = LAYOUTS[layout_index]
    layout = build_layout(k, blocks, sub_blocks)
    query, stored = planted(seed, k, 200)
    key = f"prop:{uuid.uuid4().hex}"
    with RedisIndex(url, key, k, expected_size, layout=layout) as ix:
        try:
            half = len(stored) // 2
            ix.insert_many((fp, f"bulk{i}", {}) for i, fp in enumerate(stored[:half]))
            for i, fp in enumerate(stored[half:]):
                ix.insert(fp, f"one{i}")
            assert {m.fingerprint: m.distance for m in ix.query(query)} == brute(query, stored, k)
            for smaller in range(k):
                got = {m.fingerprint: m.distance for m in ix.query(query, max_distance=smaller)}
                assert got == brute(query, stored, smaller)
            matches = ix.query(query)
            assert [m.distance for m in matches] == sorted(m.distance for m in matches)
            # check_and_insert decides as brute force does, and stores only when nothing is near
            match = ix.check_and_insert(query, "query")
            near = brute(query, stored, k)
            if near:
                assert match is not None and match.distance == min(near.values())
                assert "query" not in ix
            else:
                assert match is None and "query" in ix
            assert ix.verify() == []
        finally:
            ix.drop()


@_SETTINGS
@given(layout_index=st.integers(0, len(LAYOUTS) - 1), seed=st.integers(0, 2**32 - 1))
def test_every_layout_returns_exactly_the_brute_force_set(redis_server, layout_index, seed):
    _exact_answers(redis_server.url, layout_index, seed, 1000)


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    layout_index=st.integers(0, len(LAYOUTS) - 1),
    seed=st.integers(0, 2**32 - 1),
    expected_size=st.sampled_from([10, 10**6, 10**8]),
)
def test_every_bucket_split_returns_exactly_the_brute_force_set(
    redis_server, layout_index, seed, expected_size
):
    """Buckets of every width: few fields (whole-table buckets), many, the widest."""
    _exact_answers(redis_server.url, layout_index, seed, expected_size)


@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(layout_index=st.integers(0, len(LAYOUTS) - 1), seed=st.integers(0, 2**32 - 1))
def test_exact_on_the_cluster(redis_cluster, layout_index, seed):
    _exact_answers(redis_cluster.url, layout_index, seed, 1000)
