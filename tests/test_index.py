"""SimhashIndex behaviour on real LMDB environments."""

from __future__ import annotations

import bisect
import dataclasses
import json
import os
import random
import re
import subprocess
import sys
import threading

import pytest

from scrapy_simhash.index import (
    FORMAT_VERSION,
    DamagedIndexError,
    IndexMismatchError,
    Match,
    SimhashIndex,
)
from scrapy_simhash.index.layout import build_layout, choose_layout
from scrapy_simhash.index.records import Buckets, choose_key_bytes, doc_id
from scrapy_simhash.text.fingerprint import FINGERPRINT_VERSION
from scrapy_simhash.text.signature import PageSignature


def flip(fp: int, *bits: int) -> int:
    for b in bits:
        fp ^= 1 << b
    return fp


@pytest.fixture
def index(tmp_path):
    with SimhashIndex(tmp_path / "ix", max_distance=3, expected_size=1000) as ix:
        yield ix


def test_query_finds_neighbours_within_k_nearest_first(index):
    base = 0x0123_4567_89AB_CDEF
    index.insert(base, "exact", title="a")
    index.insert(flip(base, 0, 63, 31), "three")
    index.insert(flip(base, 5), "one")
    index.insert(flip(base, 1, 2, 3, 4), "four")
    matches = index.query(base)
    assert [(m.key, m.distance) for m in matches] == [("exact", 0), ("one", 1), ("three", 3)]
    assert matches[0].fingerprint == base
    assert matches[0].record["title"] == "a"
    assert isinstance(matches[0].record["seen"], float)
    assert [m.key for m in index.query(base, max_distance=1)] == ["exact", "one"]


def test_same_fingerprint_several_documents_and_ties_by_key(index):
    index.insert(42, "b")
    index.insert(42, "a")
    assert [m.key for m in index.query(42)] == ["a", "b"]
    assert len(index) == 2
    assert index.stats()["fingerprints"] == 1
    assert index.remove("a")
    assert [m.key for m in index.query(42)] == ["b"]
    assert index.verify() == []


def test_reinsert_key_replaces_fingerprint_and_keeps_first_seen(index):
    index.insert(1 << 20, "url", v=1)
    first = index.get("url")
    index.insert(0xFFFF_0000_FFFF_0000, "url", v=2)
    assert len(index) == 1
    assert index.query(1 << 20) == []
    again = index.get("url")
    assert again.fingerprint == 0xFFFF_0000_FFFF_0000
    assert again.record["v"] == 2
    assert again.record["seen"] == first.record["seen"]
    index.insert(5, "url", seen=123.0)
    assert index.get("url").record["seen"] == 123.0
    assert index.verify() == []


def test_remove_contains_get_keys_items(index):
    index.insert(1, "a")
    index.insert(2, "b")
    assert "a" in index and "z" not in index and 3 not in index
    assert sorted(index.keys()) == ["a", "b"]
    assert sorted(m.key for m in index.items()) == ["a", "b"]
    assert index.get("a") == Match(1, "a", 0, index.get("a").record)
    assert index.remove("a") is True
    assert index.remove("a") is False
    assert index.get("a") is None
    assert index.query(1) == [Match(2, "b", 2, index.get("b").record)]
    assert list(index.keys()) == ["b"]


def test_keys_stream_over_many_chunks(index):
    index.insert_many((i * 7919, f"k{i}", {}) for i in range(2500))
    assert sorted(index.keys()) == sorted(f"k{i}" for i in range(2500))


def test_long_and_unicode_keys(index):
    long_key = "https://example.com/" + "x" * 5000
    index.insert(99, long_key, title="long")
    index.insert(99 ^ 1, "https://例え.jp/ページ")
    assert index.get(long_key).key == long_key
    assert long_key in index
    assert [m.key for m in index.query(99)] == [long_key, "https://例え.jp/ページ"]
    assert index.remove(long_key)
    assert index.verify() == []


def test_check_and_insert(index):
    assert index.check_and_insert(0b1111, "first") is None
    dup = index.check_and_insert(0b1000_0111, "second")
    assert dup is not None and dup.key == "first" and dup.distance == 2
    assert "second" not in index
    # Its own earlier version does not count as a duplicate of a recrawled key.
    assert index.check_and_insert(0b1111, "first", v=2) is None
    assert index.get("first").record["v"] == 2
    assert index.check_and_insert(1 << 50 | 1 << 40 | 1 << 30 | 1 << 20, "far") is None


def test_check_and_insert_many_sees_earlier_items_of_the_batch(index):
    items = [(100, "a", {}), (101, "b", {}), (1 << 60, "c", {}), ((1 << 60) | 3, "d", {})]
    out = index.check_and_insert_many(items)
    assert out[0] is None and out[2] is None
    assert out[1].key == "a" and out[3].key == "c"
    assert sorted(index.keys()) == ["a", "c"]


def test_insert_many_into_empty_and_nonempty(index):
    rng = random.Random(1)
    first = [(rng.getrandbits(64), f"a{i}", {"i": i}) for i in range(500)]
    first.append((first[0][0], "shares-fp", {}))
    first.append((7, "a3", {"i": "last wins"}))
    assert index.insert_many(first) == 502
    assert len(index) == 501
    assert index.get("a3").record["i"] == "last wins"
    second = [(rng.getrandbits(64), f"b{i}", {}) for i in range(300)]
    second += [(flip(7, 1), "a3", {}), (first[1][0], "b-shares", {})]
    index.insert_many(second)
    assert len(index) == 802
    assert index.get("a3").fingerprint == flip(7, 1)
    assert index.verify() == []
    for fp, key, _ in first[4:40]:
        assert key in {m.key for m in index.query(fp)}
    assert index.insert_many([]) == 0


def test_batch_groups_commits_and_reads_see_uncommitted(index):
    with index.batch(commit_every=7) as ix:
        for i in range(20):
            ix.insert(i << 20, f"k{i}")
        assert len(ix) == 20
        assert ix.query(3 << 20)[0].key == "k3"
    assert len(index) == 20
    with pytest.raises(ZeroDivisionError), index.batch():
        index.insert(1, "kept")
        raise ZeroDivisionError
    assert "kept" in index
    with index.batch():
        index.insert(2, "before")
        with pytest.raises(TypeError, match="record"):
            index.insert_many([(3, "new", {}), (1 << 40, "before", {"bad": object()})])
        index.insert(4, "after")
    assert "new" not in index and index.get("before").fingerprint == 2 and "after" in index
    assert index.verify() == []


def test_pairs_and_clusters(index):
    index.insert(0, "a")
    index.insert(1, "b")
    index.insert(3, "c")
    index.insert(0b111_0000, "d")  # 3 from a, 4 from b
    index.insert(0, "a2")
    far = 0xF0F0_F0F0_F0F0_F0F0
    index.insert(far, "lone")
    index.insert(flip(far, 1, 2, 3), "x")
    index.insert(flip(far, 1, 2, 4), "y")
    pairs = sorted(index.pairs())
    assert pairs == sorted(
        [
            ("a", "a2", 0),
            ("a", "b", 1),
            ("a2", "b", 1),
            ("a", "c", 2),
            ("a2", "c", 2),
            ("b", "c", 1),
            ("a", "d", 3),
            ("a2", "d", 3),
            ("lone", "x", 3),
            ("lone", "y", 3),
            ("x", "y", 2),
        ]
    )
    near = [("a", "a2", 0), ("a", "b", 1), ("a2", "b", 1), ("b", "c", 1)]
    assert sorted(index.pairs(max_distance=1)) == near
    assert index.clusters() == [["a", "a2", "b", "c", "d"], ["lone", "x", "y"]]


def test_stats(index):
    index.insert(5, "a")
    index.query(5)
    stats = index.stats()
    assert stats["entries"] == 1
    assert stats["tables"] == 4 and stats["prefix_bits"] == [16] * 4
    assert stats["max_distance"] == 3
    assert stats["fingerprint_version"] == FINGERPRINT_VERSION
    assert stats["format_version"] == FORMAT_VERSION
    assert stats["bytes_on_disk"] > 0 and stats["map_size"] >= 1 << 30
    assert stats["candidates_per_probe"] >= 1
    assert stats["oldest_seen"] == stats["newest_seen"] == index.get("a").record["seen"]
    assert "4 tables" in stats["layout"]
    without = index.stats(seen=False)
    assert without["oldest_seen"] is None and without["newest_seen"] is None
    assert without["entries"] == 1


def test_bad_input_is_refused_with_the_parameter_named(index, tmp_path):
    with pytest.raises(ValueError, match="fingerprint"):
        index.insert(1 << 64, "a")
    with pytest.raises(ValueError, match="fingerprint"):
        index.query(-1)
    with pytest.raises(TypeError, match="fingerprint"):
        index.insert("12", "a")
    with pytest.raises(TypeError, match="fingerprint"):
        index.insert(True, "a")
    with pytest.raises(TypeError, match="key"):
        index.insert(1, b"a")
    with pytest.raises(ValueError, match="key"):
        index.insert(1, "")
    with pytest.raises(TypeError, match="record"):
        index.insert(1, "a", obj=object())
    with pytest.raises(ValueError, match="max_distance"):
        index.query(1, max_distance=4)
    with pytest.raises(ValueError, match="max_distance"):
        SimhashIndex(tmp_path / "k", max_distance=9)
    with pytest.raises(ValueError, match="expected_size"):
        SimhashIndex(tmp_path / "n", expected_size=0)
    with pytest.raises(TypeError, match="record"):
        index.insert_many([(1, "a", None)])
    assert len(index) == 0
    assert index.verify() == []


def test_reopen_keeps_parameters_and_refuses_mismatches(tmp_path):
    path = tmp_path / "ix"
    with SimhashIndex(path, max_distance=2, expected_size=10**8) as ix:
        ix.insert(1, "a")
        layout = ix.layout
        assert ix.stats()["recent_fingerprints"] == 1  # a big layout: recent tables too
    with SimhashIndex(path, expected_size=10) as ix:
        assert ix.max_distance == 2 and ix.layout == layout and "a" in ix
        assert [m.key for m in ix.query(1)] == ["a"] and ix.recent_layout is not None
    with pytest.raises(IndexMismatchError, match=r"max_distance=2, not 3"):
        SimhashIndex(path, max_distance=3)
    with pytest.raises(IndexMismatchError, match="layout"):
        SimhashIndex(path, layout=build_layout(2, 3))
    with SimhashIndex(path, max_distance=3, reset=True, expected_size=1000) as ix:
        assert len(ix) == 0 and ix.max_distance == 3 and ix.layout.tables == 4
        assert ix.recent_layout is None and ix.verify() == []
        ix.insert(1, "b")
    with SimhashIndex(path, reset=True, expected_size=10**7) as ix:  # recent tables anew
        assert (ix.layout.tables, ix.recent_layout.tables, len(ix)) == (10, 4, 0)
        ix.insert(1, "c")
        assert [m.key for m in ix.query(1)] == ["c"] and ix.verify() == []


def test_a_layout_of_more_tables_than_an_index_holds_is_refused_before_the_index_is_made(
    tmp_path,
):
    """84 tables (k=3, 9 blocks): refused at once, naming the limit, with nothing on disk.
    Such an index used to fail while it was being made, in LMDB's own words (its named
    databases ran out), and its stored layout would be refused at every later open."""
    path = tmp_path / "ix"
    with pytest.raises(ValueError, match="an index holds at most 64 tables"):
        SimhashIndex(path, layout=build_layout(3, 9))
    assert not path.exists()
    with SimhashIndex(path, layout=build_layout(3, 8)) as ix:  # 56 tables: the most for k=3
        ix.insert(7, "a")
    with SimhashIndex(path) as ix:
        assert ix.layout.tables == 56 and "a" in ix


def _overwrite_meta(path, key: bytes, value: bytes) -> None:
    """Write one of an index's parameters as a damaged or other version's index holds it."""
    import lmdb

    env = lmdb.open(str(path), max_dbs=8)
    try:
        with env.begin(write=True) as txn:
            txn.put(key, value, db=env.open_db(b"meta", txn=txn))
    finally:
        env.close()


@pytest.mark.parametrize(
    ("meta_key", "value", "what"),
    [
        (b"fingerprint_version", b"999", "fingerprint_version=999"),
        (b"format_version", b"999", "format_version=999"),
        (b"format_version", b"5", r"format_version=5, not 6 \(this code's format\)"),
    ],
)
def test_other_versions_are_refused(tmp_path, meta_key, value, what):
    path = tmp_path / "ix"
    SimhashIndex(path).close()
    _overwrite_meta(path, meta_key, value)
    with pytest.raises(IndexMismatchError, match=what):
        SimhashIndex(path)


def _damaged_layouts() -> list[tuple[str, bytes]]:
    spec = json.loads(build_layout(3, 4).to_json())
    return [
        # billions of tables (C(64, 56)): checked before any is built
        ("64 blocks, k 8", json.dumps({**spec, "max_distance": 8, "blocks": [1] * 64}).encode()),
        ("k as a string", json.dumps({**spec, "max_distance": "3"}).encode()),
        ("no blocks", json.dumps({k: v for k, v in spec.items() if k != "blocks"}).encode()),
        ("not JSON", b"{tables"),
        ("not UTF-8", b"\xff\xfe"),
    ]


@pytest.mark.parametrize(
    ("meta_key", "value"),
    [
        *[(b"layout", value) for _, value in _damaged_layouts()],
        (b"max_distance", b"three"),
        (b"max_distance", b"2"),  # one bit flipped: not the layout's k
        (b"numbers", b"x"),
        (b"format_version", b"\x00"),
    ],
    ids=[
        *[what for what, _ in _damaged_layouts()],
        "k not a number",
        "k not the layout's",
        "numbers neither 0 nor 1",
        "format not a number",
    ],
)
def test_damaged_metadata_is_refused_at_once_in_one_line(tmp_path, meta_key, value):
    """Damaged parameters are an IndexMismatchError with the index's path, at once: never
    an unexpected TypeError, never a layout of billions of tables built in memory. The CLI's
    open runs in a subprocess here, so that a regression fails on its timeout, not by
    hanging the suite."""
    path = tmp_path / "ix"
    with SimhashIndex(path) as ix:
        ix.insert(1, "a")
    _overwrite_meta(path, meta_key, value)
    done = subprocess.run(
        [sys.executable, "-m", "scrapy_simhash", "info", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith(f"scrapy-simhash: error: index {str(path)!r}")
    assert done.stderr.count("\n") == 1 and "unexpected" not in done.stderr
    with pytest.raises(IndexMismatchError, match=re.escape(repr(str(path)))):
        SimhashIndex(path)


def test_readonly(tmp_path):
    path = tmp_path / "ix"
    with pytest.raises(FileNotFoundError):
        SimhashIndex(path, readonly=True)
    assert not path.exists()
    with SimhashIndex(path) as writer:
        writer.insert(9, "a")
        # The same path in the same process shares the environment.
        with SimhashIndex(path, readonly=True) as reader:
            assert [m.key for m in reader.query(9)] == ["a"]
            writer.insert(10, "b")
            assert len(reader) == 2
            with pytest.raises(ValueError, match="read-only"):
                reader.insert(1, "x")
        writer.insert(11, "c")
    with SimhashIndex(path, readonly=True) as reader:
        assert len(reader) == 3
        with pytest.raises(ValueError, match="read-only"):
            SimhashIndex(path)


def test_shared_environment_and_close(tmp_path):
    a = SimhashIndex(tmp_path / "ix")
    b = SimhashIndex(tmp_path / "ix")
    a.insert(1, "x")
    a.close()
    assert "x" in b
    b.close()
    b.close()
    with pytest.raises(ValueError, match="closed"):
        b.query(1)


def test_compact_copy(index, tmp_path):
    index.insert_many((i << 30, f"k{i}", {}) for i in range(100))
    dest = tmp_path / "copy"
    index.compact(dest)
    with SimhashIndex(dest, readonly=True) as copy:
        assert len(copy) == 100 and copy.verify() == []
    with pytest.raises(ValueError, match="dest"):
        index.compact(dest)


def test_verify_reports_damage(index):
    index.insert(1, "a")
    index.insert(2, "b")
    env = index._tx.storage.env
    with env.begin(write=True) as txn:
        txn.delete((1).to_bytes(8, "big"), db=index._docs.links)
    problems = index.verify()
    assert any("not linked" in p for p in problems)
    assert any("no document" in p for p in problems)


def test_pairs_pass_over_a_link_whose_document_is_missing(index):
    """A fingerprint link whose document is gone (damage ``verify`` names): ``pairs``,
    ``clusters`` and ``groups`` give the pairs of the documents that are there, as a query
    passes over such a link (and as the Redis index's ``pairs`` does), instead of failing
    with a TypeError."""
    index.insert(1, "a")
    index.insert(3, "b")
    index.insert(3, "c")
    far = 0xF0F0_F0F0_F0F0_F0F0
    index.insert(far, "d")
    index.insert(flip(far, 1), "e")
    env = index._tx.storage.env
    with env.begin(write=True) as txn:
        txn.delete(doc_id("b"), db=index._docs.docs)  # 3 still links "b"
        txn.delete(doc_id("e"), db=index._docs.docs)  # flip(far, 1) links only "e"
    assert f"fingerprint {3:#018x} links a missing document" in index.verify()
    assert sorted(index.pairs()) == [("a", "c", 1)]
    assert index.clusters() == [["a", "c"]]
    assert [m.key for m in index.query(1)] == ["a", "c"]


def test_verify_names_each_kind_of_damage(index):
    for i in range(5):
        index.insert(i << 50, f"k{i}")
    assert index.verify() == []
    env = index._tx.storage.env
    with env.begin(write=True) as txn:
        # A link to a document that does not exist, one to another fingerprint's document,
        # and a document stored under another key's id.
        txn.put((9 << 50).to_bytes(8, "big"), doc_id("nobody"), db=index._docs.links, dupdata=True)
        txn.put((2 << 50).to_bytes(8, "big"), doc_id("k1"), db=index._docs.links, dupdata=True)
        txn.put(doc_id("moved"), txn.get(doc_id("k3"), db=index._docs.docs), db=index._docs.docs)
    problems = index.verify()
    assert f"fingerprint {9 << 50:#018x} links a missing document" in problems
    assert f"fingerprint {2 << 50:#018x} links another's document" in problems
    assert "document 'k3' is stored under another id" in problems
    assert f"document 'k3' is not linked to {3 << 50:#018x}" in problems
    assert "7 fingerprint links for 6 documents" in problems


@pytest.mark.parametrize("k", [0, 1, 2, 3, 4, 8])
def test_every_supported_k_finds_its_neighbours(tmp_path, k):
    rng = random.Random(k)
    with SimhashIndex(tmp_path / "ix", max_distance=k, expected_size=100) as ix:
        base = rng.getrandbits(64)
        ix.insert(base, "base")
        ix.insert(flip(base, *rng.sample(range(64), k)), "at-k")
        ix.insert(flip(base, *rng.sample(range(64), k + 1)), "beyond")
        assert [m.key for m in ix.query(base)] == (["at-k", "base"] if k == 0 else ["base", "at-k"])


def test_bucket_key_width_follows_the_expected_size(tmp_path):
    widths = {}
    for size in (100, 10**6, 10**7, 10**8):
        with SimhashIndex(tmp_path / str(size), expected_size=size) as ix:
            widths[size] = ix.stats()["bucket_key_bytes"]
            ix.insert(5, "a")
        with SimhashIndex(tmp_path / str(size), expected_size=10) as ix:
            assert ix.stats()["bucket_key_bytes"] == widths[size]  # stored, not chosen again
            assert [m.key for m in ix.query(5)] == ["a"]
    assert widths == {100: 1, 10**6: 2, 10**7: 2, 10**8: 3}
    assert choose_key_bytes(10**9, 7) == 1  # never wider than the narrowest prefix


@pytest.mark.parametrize("key_bytes", [1, 2, 3])
def test_bucket_position_is_the_bisection_point_however_values_are_spread(key_bytes):
    codec = Buckets(key_bytes)
    top = 1 << codec.shift
    rng = random.Random(key_bytes)
    spreads = {
        "even": lambda n: rng.sample(range(top), n),
        "bunched low": lambda n: rng.sample(range(64), min(n, 64)),
        "bunched high": lambda n: rng.sample(range(top - 64, top), min(n, 64)),
        "two bunches": lambda n: (
            [rng.randrange(32) for _ in range(n)] + [top - 1 - rng.randrange(32) for _ in range(n)]
        ),
    }
    for spread, make in spreads.items():
        for n in (0, 1, 2, 5, 40, 300):
            values = sorted(set(make(n)))
            bucket = b"".join(v.to_bytes(codec.width, "big") for v in values)
            probes = [0, top - 1, *values, *(v + 1 for v in values if v + 1 < top)]
            probes += [rng.randrange(top) for _ in range(50)]
            for probe in probes:
                expected = bisect.bisect_left(values, probe)
                assert codec.position(bucket, probe) == expected, (spread, n, probe)


def test_layout_choice_follows_the_paper():
    assert choose_layout(3, 10**6).tables == 4
    assert choose_layout(3, 10**7).tables == 10
    assert sorted(choose_layout(3, 10**7).prefix_bits) == [25] * 4 + [26] * 6
    assert choose_layout(3, 10**8).tables == 10
    big = choose_layout(3, 10**9)
    assert big.tables == 16 and set(big.prefix_bits) == {28}
    assert "16 tables" in str(big)


def test_open_is_lazy_about_the_directory(tmp_path):
    path = tmp_path / "a" / "b"
    with SimhashIndex(path):
        pass
    assert os.path.exists(path / "data.mdb")


def test_create_false_opens_an_existing_index_and_never_makes_one(tmp_path):
    import lmdb

    missing = tmp_path / "missing"
    with pytest.raises(FileNotFoundError):
        SimhashIndex(missing, create=False)
    assert not missing.exists()
    plain = tmp_path / "plain"
    lmdb.open(str(plain)).close()
    with pytest.raises(ValueError, match=r"not an index|holds no index"):
        SimhashIndex(plain, create=False)
    env = lmdb.open(str(plain), max_dbs=4)
    with env.begin() as txn:
        assert list(txn.cursor()) == []  # nothing was written into the foreign environment
    env.close()
    with SimhashIndex(tmp_path / "idx") as index:
        index.insert(1, "a")
    with SimhashIndex(tmp_path / "idx", create=False) as index:
        index.insert(2, "b")
        assert len(index) == 2


def test_batch_holds_back_table_entries_and_rolls_back_failed_operations(index):
    with index.batch(commit_every=1000):
        index.insert(0xABCD << 40, "a")
        assert [m.key for m in index.query(0xABCD << 40 | 1)] == ["a"]  # held back, found
        assert index.stats()["fingerprints"] == 1  # stats write the held-back entries first
        assert index.verify() == []
        index.insert(0x1234 << 40, "b")
        with pytest.raises(TypeError, match="record"):
            index.insert_many([(0x5555 << 40, "c", {}), (0x7777 << 40, "b", {"x": object()})])
        assert index.query(0x5555 << 40) == []
        with pytest.raises(TypeError, match="JSON"):  # fails after its first item was stored
            index.check_and_insert_many([(0x6666 << 40, "d", {}), (0x9999 << 40, "e", {"x": {1}})])
        assert index.query(0x6666 << 40) == [] and "d" not in index
        index.insert(0x4321 << 40, "b")  # reinserted: its old fingerprint is dropped unwritten
        assert index.query(0x1234 << 40) == []
        assert index.remove("a")
        assert index.query(0xABCD << 40) == []
    assert sorted(index.keys()) == ["b"]
    assert [m.key for m in index.query(0x4321 << 40)] == ["b"]
    assert index.stats()["fingerprints"] == 1
    assert index.verify() == []


def test_a_call_refused_for_its_input_inside_a_batch_leaves_the_batch_as_it_was(index):
    """README: an operation with bad input fails before it writes and leaves the batch as it
    was. These were refused only inside their write, which rolled the whole batch back: a
    drop record against a page not stored, a key with a lone surrogate, a page signature that
    cannot be stored (300 sentences, negative words, a hash past 64 bits)."""
    bad_calls = [
        lambda: index.record_drop(5, "dropped", "not-stored", 1),
        lambda: index.remove("\udcff"),
        lambda: index.forget_drop("\udcff"),
        lambda: index.insert(PageSignature(9, tuple(range(300))), "p"),
        lambda: index.insert(PageSignature(9, (1, 2), words=-1), "p"),
        lambda: index.check_and_insert(PageSignature(1 << 63, (2**64,)), "p"),
    ]
    with index.batch(commit_every=1000):
        index.insert_many((i << 40, f"k{i}", {}) for i in range(1, 101))
        for call in bad_calls:
            with pytest.raises(ValueError):
                call()
            assert len(index) == 100
        assert "\udcff" not in index
    assert len(index) == 100 and index.verify() == []


class _Interrupted(SimhashIndex):
    """An index whose table writes raise for one fingerprint: an operation interrupted after
    it began to write (as by KeyboardInterrupt)."""

    fail_on = -1

    def _add_to_tables(self, txn, fingerprint):
        if fingerprint == self.fail_on:
            raise KeyboardInterrupt
        super()._add_to_tables(txn, fingerprint)

    def _open_spaces(self, create=False):
        super()._open_spaces(create)
        main = self._levels.main
        entries = main.entries

        def failing_entries(plan, fingerprints, whole):
            if self.fail_on in fingerprints.tolist() and plan is main.plans[-1]:
                raise MemoryError("table sort failed")
            return entries(plan, fingerprints, whole)

        object.__setattr__(main, "entries", failing_entries)


def test_an_operation_interrupted_midway_rolls_back_the_uncommitted_batch(tmp_path):
    with _Interrupted(tmp_path / "ix", expected_size=1000) as ix:
        rng = random.Random(3)
        fps = [rng.getrandbits(64) for _ in range(9)]
        ix.fail_on = fps[6]
        with ix.batch(commit_every=4):
            for i in range(6):
                ix.insert(fps[i], f"k{i}")  # k0-k3 committed, k4 and k5 not yet
            with pytest.raises(KeyboardInterrupt):
                ix.insert(fps[6], "dead")  # its document was written: all roll back
            ix.insert(fps[7], "after")
            with pytest.raises(TypeError, match="JSON"):  # bad input: fails before writing
                ix.insert(fps[8], "bad", x=object())
        assert sorted(ix.keys()) == ["after", "k0", "k1", "k2", "k3"]
        assert ix.verify() == []
        assert [m.key for m in ix.query(fps[7])] == ["after"]
        assert ix.query(fps[4]) == [] and ix.query(fps[6]) == []


class _InterruptedFlush(SimhashIndex):
    """An index whose batch is interrupted (as by Ctrl-C) while it writes its held-back
    table entries, half of them written."""

    interrupt = False

    def _put_pending(self, txn, fingerprints):
        if self.interrupt:
            super()._put_pending(txn, fingerprints[: len(fingerprints) // 2])
            raise KeyboardInterrupt
        super()._put_pending(txn, fingerprints)


def test_a_batch_interrupted_while_it_writes_its_table_entries_commits_no_damage(tmp_path):
    """README: an exception inside an operation (such as KeyboardInterrupt) rolls back what
    the batch has not committed. The table entries a commit writes first are part of the
    operation that commits: interrupted there, the pages since the last commit are rolled
    back (they were committed with half their entries: documents no query found)."""
    rng = random.Random(11)
    fps = [rng.getrandbits(64) for _ in range(300)]
    with _InterruptedFlush(tmp_path / "ix", expected_size=1000) as ix:
        with pytest.raises(KeyboardInterrupt), ix.batch(commit_every=100):
            for i, fp in enumerate(fps):
                ix.interrupt = i == 299  # the operation that commits the third hundred
                ix.insert(fp, f"k{i}")
        ix.interrupt = False
        assert ix.verify() == []
        assert len(ix) == 200
        assert all([m.key for m in ix.query(fp)] == [f"k{i}"] for i, fp in enumerate(fps[:200]))
        assert ix.query(fps[250]) == []


def test_a_count_damaged_while_the_index_is_open_is_damage_to_its_writes(tmp_path):
    """The count of fingerprints is checked at open; written no number by another process
    while this one has the index open, each write that counts is refused as damage (it
    raised int()'s bare ValueError, which a crawl does not take for damage)."""
    from scrapy_simhash.index import DamagedIndexError

    path = str(tmp_path / "ix")
    with SimhashIndex(path) as ix:
        ix.insert(1 << 40, "https://example.com/a")
        damage = (
            "import lmdb, sys\n"
            "env = lmdb.open(sys.argv[1], max_dbs=80)\n"
            "with env.begin(write=True) as txn:\n"
            "    txn.put(b'fingerprints', b'lots', db=env.open_db(b'meta', txn=txn))\n"
        )
        subprocess.run([sys.executable, "-c", damage, path], check=True, timeout=60)
        with pytest.raises(DamagedIndexError, match="its count 'fingerprints' is b'lots'"):
            ix.insert(1 << 50, "https://example.com/b")
        assert ix.get("https://example.com/b") is None  # nothing of it written


def test_a_bulk_load_whose_background_table_sort_fails_writes_nothing(tmp_path, monkeypatch):
    import scrapy_simhash.index.tables as index_module

    monkeypatch.setattr(index_module, "_FEW", 10)  # tables sorted ahead from the start
    rng = random.Random(5)
    items = [(rng.getrandbits(64), f"k{i}", {}) for i in range(200)]
    with _Interrupted(tmp_path / "ix", expected_size=1000) as ix:
        ix.fail_on = items[7][0]
        with pytest.raises(MemoryError, match="table sort"):
            ix.insert_many(items)
        assert len(ix) == 0 and ix.verify() == []
        ix.fail_on = -1
        # Repeated keys: the tables sorted ahead from every item read are not used (the
        # superseded fingerprint is in no document).
        assert ix.insert_many([*items, (1 << 63, "k3", {})]) == 201
        assert len(ix) == 200 and ix.verify() == []
        assert ix.query(items[3][0]) == []
        assert [m.key for m in ix.query(1 << 63)] == ["k3"]
        assert [m.key for m in ix.query(items[4][0])] == ["k4"]


def test_seen_range_finds_the_oldest_and_newest_entries(index):
    assert index.seen_range() == (None, None)
    for i in range(2500):  # several read transactions
        index.insert(i << 20, f"k{i}", seen=1000.0 + (i * 7919) % 2500, n=i)
    calls = []
    oldest, newest = index.seen_range(calls.append)
    assert (oldest.key, oldest.record["seen"], oldest.record["n"]) == ("k0", 1000.0, 0)
    newest_i = max(range(2500), key=lambda i: (i * 7919) % 2500)
    assert (newest.key, newest.record["n"]) == (f"k{newest_i}", newest_i)
    assert sum(calls) == 2500 and len(calls) == 3


def test_close_inside_a_batch_commits_what_the_block_wrote(tmp_path):
    """A close() between two operations of a batch ends it as the block's end would: the
    writes so far are kept, not silently rolled back."""
    ix = SimhashIndex(tmp_path / "ix", expected_size=1000)
    with ix.batch(commit_every=100):
        ix.insert(flip(0, 1), "a")
        ix.insert(flip(0, 2, 40), "b")
        ix.close()
    with SimhashIndex(tmp_path / "ix") as again:
        assert sorted(again.keys()) == ["a", "b"]
        assert [m.key for m in again.query(0)] == ["a", "b"]
        assert again.verify() == []


class _ClosedMidway(SimhashIndex):
    """An index closed (as by a signal handler) while a batch writes its held-back table
    entries, half of them written."""

    def _put_pending(self, txn, fingerprints):
        super()._put_pending(txn, fingerprints[: len(fingerprints) // 2])
        self.close()
        raise KeyboardInterrupt


def test_close_in_the_middle_of_a_batch_operation_commits_nothing_half_done(tmp_path):
    ix = _ClosedMidway(tmp_path / "ix", expected_size=1000)
    with pytest.raises(KeyboardInterrupt), ix.batch(commit_every=3):
        for i in range(3):  # the third commits: its flush is where the close comes
            ix.insert(i << 20, f"k{i}")
    with SimhashIndex(tmp_path / "ix") as again:
        assert len(again) == 0 and again.verify() == []


def test_a_second_index_object_on_the_path_is_told_of_the_batch_in_its_thread(tmp_path):
    a = SimhashIndex(tmp_path / "ix", expected_size=1000)
    b = SimhashIndex(tmp_path / "ix")
    try:
        with a.batch():
            a.insert(1, "a")
            with pytest.raises(RuntimeError, match="another index object on this path"):
                b.insert(2, "b")
            with pytest.raises(RuntimeError, match="another index object"), b.batch():
                pass
            assert b.query(1) == []  # b reads what is committed
            assert [m.key for m in a.query(1)] == ["a"]
        b.insert(2, "b")
        assert sorted(b.keys()) == ["a", "b"] and b.verify() == []
    finally:
        a.close()
        b.close()


def test_other_threads_read_the_committed_index_and_wait_to_write(tmp_path):
    """A batch is its thread's: another thread reading meanwhile sees what is committed,
    not the batch's transaction, and its write waits for the batch to commit."""
    ix = SimhashIndex(tmp_path / "ix", expected_size=1000)
    seen: list[object] = []
    wrote = threading.Event()

    def read() -> None:
        seen.append([m.key for m in ix.query(0)])

    def write() -> None:
        ix.insert(flip(0, 9), "thread")
        wrote.set()

    try:
        ix.insert(flip(0, 3), "old")
        with ix.batch():
            ix.insert(flip(0, 1), "new")
            reader = threading.Thread(target=read)
            reader.start()
            reader.join(10)
            writer = threading.Thread(target=write)
            writer.start()
            assert not wrote.wait(0.5)  # the batch holds LMDB's write lock
            # another thread's stats() neither writes the batch's held-back table entries
            # nor sees them
            held = len(ix._tx.pending)
            assert held and threading_result(ix.stats)["entries"] == 1
            assert len(ix._tx.pending) == held
            with pytest.raises(RuntimeError, match="another thread"):
                threading_result(lambda: ix.batch().__enter__())
        writer.join(10)
        assert seen == [["old"]] and wrote.is_set()
        assert [m.key for m in ix.query(0)] == ["new", "old", "thread"]
        assert ix.verify() == []
    finally:
        ix.close()


def threading_result(call):
    """``call()`` run in another thread: its result, or its exception raised here."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(("ok", call()))
        except BaseException as exc:  # handed to the caller
            out.append(("err", exc))

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    kind, value = out[0]
    if kind == "err":
        raise value  # type: ignore[misc]
    return value


def test_bulk_load_into_an_empty_index_inside_a_batch(tmp_path, monkeypatch):
    import scrapy_simhash.index.tables as index_module

    monkeypatch.setattr(index_module, "_FEW", 10)  # tables sorted ahead, in the background
    rng = random.Random(8)
    items = [(rng.getrandbits(64), f"k{i}", {"i": i}) for i in range(300)]
    with SimhashIndex(tmp_path / "ix", expected_size=1000) as ix:
        with ix.batch(commit_every=100):
            ix.insert(1 << 60, "gone")
            assert ix.remove("gone")
            assert ix.insert_many(items) == 300  # into an empty index, inside the batch
            ix.insert(items[5][0] ^ 1, "near5")
            assert {m.key for m in ix.query(items[5][0])} == {"k5", "near5"}
        assert len(ix) == 301 and ix.verify() == []
        assert ix.get("k7").record["i"] == 7
        assert [m.key for m in ix.query(items[9][0])] == ["k9"]


@pytest.mark.parametrize("space", [3, 1 << 20, 1 << 62])
def test_bulk_id_order_is_a_full_sort_with_ties_and_repeats(space):
    """The document ids of a bulk load are ordered by a sort of packed values: ids that agree
    on the bits packed (or entirely) must still come out in full order, the last of repeated
    ids kept."""
    import numpy as np

    from scrapy_simhash.index.bulk import _unique_sorted

    rng = np.random.default_rng(space)
    for n in (1, 2, 17, 1000, 5000):
        ids = np.empty(2 * n, dtype=">u8")
        # High halves from a small space (or shifted up) share their top bits.
        ids[0::2] = rng.integers(0, space, size=n, dtype=np.uint64) << np.uint64(40)
        ids[1::2] = rng.integers(0, 4 if space == 3 else 1 << 60, size=n, dtype=np.uint64)
        pairs = [(int(ids[2 * i]), int(ids[2 * i + 1])) for i in range(n)]
        last = {pair: i for i, pair in enumerate(pairs)}
        want = [last[pair] for pair in sorted(last)]
        assert _unique_sorted(ids.tobytes()).tolist() == want


def test_table_passes_a_span_at_a_time_match_whole_array_passes(tmp_path, monkeypatch):
    """Bulk loads permute and cut the tables a span of values at a time: with spans of a few
    values, buckets that straddle spans come out whole, and every table matches the
    documents."""
    import scrapy_simhash.index.bulk as bulk_module
    import scrapy_simhash.index.layout as layout_module
    import scrapy_simhash.index.tables as index_module

    monkeypatch.setattr(index_module, "_FEW", 10)
    monkeypatch.setattr(bulk_module, "_SPAN", 7)
    monkeypatch.setattr(layout_module, "_SPAN", 5)
    rng = random.Random(21)
    # Few buckets (an index expected small): most buckets straddle several spans.
    items = [(rng.getrandbits(64), f"k{i}", {}) for i in range(400)]
    with SimhashIndex(tmp_path / "ix", expected_size=100) as ix:
        assert ix.insert_many(items) == 400
        assert ix.verify() == []
        more = [(rng.getrandbits(64), f"m{i}", {}) for i in range(100)]
        ix.insert_many(more)  # merged into the buckets written before
        assert len(ix) == 500 and ix.verify() == []
        for fp, key, _ in items[::37] + more[::23]:
            assert [m.key for m in ix.query(fp)] == [key]
            assert [m.key for m in ix.query(fp ^ 0b1011)] == [key]


@pytest.mark.parametrize(
    ("bad", "error", "match"),
    [
        ((True, "b", {}), TypeError, "fingerprint must be an int, got bool"),
        ((1.0, "b", {}), TypeError, "fingerprint must be an int, got float"),
        ((-1, "b", {}), ValueError, "fingerprint must be in"),
        ((1 << 64, "b", {}), ValueError, "fingerprint must be in"),
        ((2, b"b", {}), TypeError, "key must be a str"),
        ((2, "", {}), ValueError, "key must be a non-empty str"),
        ((2, "b", None), TypeError, "record must be a dict, got NoneType"),
        ((2, "b", {"x": object()}), TypeError, "JSON-serializable"),
        ((2, "b"), ValueError, "not enough values to unpack"),
        ((2, "b", {}, 4), ValueError, "too many values to unpack"),
        (7, TypeError, "cannot unpack non-iterable int"),
    ],
)
def test_insert_many_checks_every_item_before_writing(tmp_path, bad, error, match):
    """A bad item among many, first or last, fails with the error a single insert would give
    (the items are checked a column at a time), and nothing of the call is written."""
    good = [(i << 24, f"k{i}", {}) for i in range(70)]
    with SimhashIndex(tmp_path / "ix", expected_size=1000) as ix:
        ix.insert(1 << 50, "before")
        for items in ([*good, bad], [bad, *good]):
            with pytest.raises(error, match=match):
                ix.insert_many(items)
            assert list(ix.keys()) == ["before"] and ix.verify() == []


def test_recent_tables_take_single_inserts_and_merge_a_main_table_per_commit(
    tmp_path, monkeypatch, caplog
):
    import scrapy_simhash.index.tables as index_module

    monkeypatch.setattr(index_module, "_RECENT_MIN", 50)
    rng = random.Random(11)
    docs: dict[str, int] = {}

    def check(ix: SimhashIndex, **expected: int) -> None:
        stats = ix.stats()
        assert {name: stats[name] for name in expected} == expected
        assert stats["fingerprints"] == len(set(docs.values())) and len(ix) == len(docs)
        assert ix.verify() == []
        for q in [*rng.sample(sorted(docs.values()), min(30, len(docs))), rng.getrandbits(64)]:
            assert {m.key: m.distance for m in ix.query(q)} == {
                key: (fp ^ q).bit_count() for key, fp in docs.items() if (fp ^ q).bit_count() <= 3
            }

    def insert(ix: SimhashIndex, key: str) -> None:
        docs[key] = rng.getrandbits(64)
        ix.insert(docs[key], key)

    path = tmp_path / "ix"
    caplog.set_level("INFO", logger="scrapy_simhash.index")
    with SimhashIndex(path, expected_size=10**7) as ix:  # 10 tables, and 4 recent ones
        check(ix, tables=10, recent_tables=4, recent_limit=50, recent_fingerprints=0)
        ix.insert_many((rng.getrandbits(64), f"bulk{i}", {}) for i in range(1000))
        docs.update((m.key, m.fingerprint) for m in ix.items())
        check(ix, recent_fingerprints=0)  # a bulk load goes to the main tables
        for i in range(49):  # one by one, each in its own transaction
            insert(ix, f"one{i}")
        check(ix, recent_fingerprints=49, merging=0, merged_tables=0)
        insert(ix, "one49")  # the recent tables are full: a merge begins
        check(ix, recent_fingerprints=50, merging=50, merged_tables=1)
        assert "merging 50 recent fingerprints" in caplog.text
        assert ix.remove("one7") and ix.remove("bulk3")  # from a merge, from the main tables
        del docs["one7"], docs["bulk3"]
        ix.insert(docs["one8"], "shares-one8")
        docs["shares-one8"] = docs["one8"]
        check(ix, recent_fingerprints=49, merging=49, merged_tables=1)
        for i in range(50, 58):
            insert(ix, f"one{i}")
        check(ix, recent_fingerprints=57, merging=49, merged_tables=9)
        insert(ix, "one58")  # the last main table: the recent tables keep the 9 since
        check(ix, recent_fingerprints=9, merging=0, merged_tables=0)
        assert "merged 49 recent fingerprints" in caplog.text
        with ix.batch(commit_every=7):  # a merge step at each commit
            for i in range(100):
                fp = rng.choice(sorted(docs.values())) ^ (1 << rng.randrange(64))
                if ix.check_and_insert(fp, f"near{i}") is None:
                    docs[f"near{i}"] = fp
                insert(ix, f"batch{i}")
        assert caplog.text.count("merged") == 2
        check(ix)
        stats = ix.stats()
    with SimhashIndex(path, readonly=True) as ix:  # both levels, and the merge, are on disk
        check(ix, recent_fingerprints=stats["recent_fingerprints"], merging=stats["merging"])


def test_verify_names_damage_to_the_recent_tables(tmp_path):
    with SimhashIndex(tmp_path / "ix", expected_size=10**7) as ix:
        ix.insert_many((i << 40, f"main{i}", {}) for i in range(5))
        for i in range(5, 8):
            ix.insert(i << 40, f"recent{i}")
        assert ix.stats()["recent_fingerprints"] == 3 and ix.verify() == []
        recent, main = ix._levels.recent, ix._levels.main
        with ix._tx.storage.write() as txn:
            recent.remove(txn, 5 << 40)  # in neither level now
            main.remove(txn, 2 << 40)  # the same
            ix._add_to_tables(txn, 1 << 40)  # in both
            key, value = recent.codec.split(recent.plans[1].forward(6 << 40))
            codec = recent.codec
            bucket = codec.opened(key, txn.get(key, db=recent.spaces[1]))  # lost from one table
            txn.put(recent.spaces[1], key, codec.seal(key, codec.removed(bucket, value) or b"\0"))
        problems = ix.verify()
    assert f"table 0 holds {1 << 40:#018x}, in the other level" in problems
    assert f"table 9 lacks {2 << 40:#018x}" in problems
    assert f"table 3 lacks {5 << 40:#018x}" in problems
    assert f"recent table 1 lacks {6 << 40:#018x}" in problems
    width = recent.codec.key_bytes
    assert (
        f"recent table 1: index damaged: bucket {key.hex()} has a {width}-byte key and 1 bytes"
        " of values" in problems
    )
    assert "4 recent fingerprints counted, 3 held" in problems


def test_records_drops_and_buckets_end_in_their_crc32(tmp_path):
    """The format 5 layouts, rebuilt here with struct and zlib: a document record, a drop
    record, a page signature and a bucket, each followed by the CRC-32 of what precedes it,
    little-endian (a bucket's seeded with its key, a signature's with its document id)."""
    import hashlib
    import struct
    import zlib

    import lmdb

    from scrapy_simhash import PageSignature

    path = tmp_path / "ix"
    signature = PageSignature(
        0x0123456789ABCDEF, (7, 5, 3), 120, 0xFEDCBA9876543210, 4, 0x1122334455667788
    )
    with SimhashIndex(path, drop_records=5) as ix:
        ix.insert(signature, "https://a/", title="T", seen=1000.5)
        ix.check_and_insert(0x0123456789ABCDEE, "https://b/", seen=2000.0)
    doc = hashlib.blake2b(b"https://a/", digest_size=16).digest()
    dropped = hashlib.blake2b(b"https://b/", digest_size=16).digest()
    record = struct.pack(">QdI", 0x0123456789ABCDEF, 1000.5, 10) + b'https://a/{"title":"T"}'
    drop = struct.pack(">QdBBQ16sI", 1, 2000.0, 1, 0, 0x0123456789ABCDEE, doc, 10) + b"https://b/"
    # fingerprint, numbers' bits (version 17), shingles sketch (version 10), words, numbers,
    # sentences; then each sentence's hash
    packed = struct.pack(
        "<QQQIHB3Q", 0x0123456789ABCDEF, 0xFEDCBA9876543210, 0x1122334455667788, 120, 4, 3, 7, 5, 3
    )
    # 4 tables of 16-bit prefixes, 2-byte bucket keys: table 0 keeps the fingerprint's order.
    bucket_key, values = bytes.fromhex("0123"), bytes.fromhex("456789abcdef")
    crc = zlib.crc32
    env = lmdb.open(str(path), readonly=True, max_dbs=80, lock=False)
    try:
        with env.begin() as txn:
            stored = {
                name: dict(txn.cursor(env.open_db(name, txn=txn, create=False)))
                for name in (b"docs", b"drops", b"t00", b"sigs")
            }
            sents = env.open_db(b"sents", txn=txn, create=False, dupsort=True)
            postings = [(bytes(k), bytes(v)) for k, v in txn.cursor(sents)]
    finally:
        env.close()
    assert stored[b"docs"][doc] == record + crc(record).to_bytes(4, "little")
    assert stored[b"sigs"] == {doc: packed + crc(packed, crc(doc)).to_bytes(4, "little")}
    assert postings == [(h.to_bytes(8, "big"), doc) for h in (3, 5, 7)]
    assert stored[b"drops"][dropped] == drop + crc(drop).to_bytes(4, "little")
    seal = crc(values, crc(bucket_key)).to_bytes(4, "little")
    assert stored[b"t00"] == {bucket_key: values + seal}


def test_a_flipped_bit_in_a_bucket_or_record_is_damage_not_a_wrong_answer(tmp_path, monkeypatch):
    import lmdb

    from scrapy_simhash.index import index as index_module

    path = tmp_path / "ix"
    with SimhashIndex(path) as ix:
        ix.insert(0x0123456789ABCDEF, "a")
        ix.insert(0xFEDCBA9876543210, "b")
    env = lmdb.open(str(path), max_dbs=80)
    try:
        with env.begin(write=True) as txn:
            t01 = env.open_db(b"t01", txn=txn)
            key, value = next(iter(txn.cursor(t01)))
            txn.put(key, bytes([value[0] ^ 0x10]) + value[1:], db=t01)  # a bit of a value
            docs = env.open_db(b"docs", txn=txn)
            key, value = list(txn.cursor(docs))[-1]
            txn.put(key, value[:8] + bytes([value[8] ^ 1]) + value[9:], db=docs)  # of `seen`
    finally:
        env.close()
    with pytest.raises(DamagedIndexError, match="fails its checksum"):
        SimhashIndex(path, readonly=True).close()  # the open's check reads both ends
    monkeypatch.setattr(index_module, "quick_check", lambda *args: None)  # verify, then
    with SimhashIndex(path, readonly=True) as ix:
        with pytest.raises(DamagedIndexError, match="fails its checksum"):
            ix.query(0x0123456789ABCDEF)  # every read checks what it reads
        problems = ix.verify()
    assert any(
        "table 1: index damaged: bucket" in p and "fails its checksum" in p for p in problems
    )
    assert any("a document record fails its checksum" in p for p in problems)


def _stored_digest(path) -> str:
    """SHA-256 of every item of every database of the index at ``path`` (but its creation
    time and the fingerprint version, pinned by the fingerprint's own tests), in order: the
    stored format, byte for byte."""
    import hashlib

    import lmdb

    env = lmdb.open(str(path), readonly=True, max_dbs=80, lock=False, subdir=True)
    digest = hashlib.sha256()
    try:
        with env.begin() as txn:
            for name in sorted(bytes(n) for n, _ in txn.cursor()):
                db = env.open_db(name, txn=txn, create=False)
                for key, value in txn.cursor(db):
                    if name != b"meta" or key not in (b"created", b"fingerprint_version"):
                        digest.update(name + b"\0" + key + b"\0" + value + b"\n")
    finally:
        env.close()
    return digest.hexdigest()


@pytest.mark.parametrize(
    ("expected_size", "golden"),
    [
        (1000, "b9aed09688b1b3f8f22d0b97f6f88e07fe1af330b82b454011d7f68455394ae4"),
        (10**7, "bc2db043caf4d9fb708ae9819e9ff01b2f330153b12b5c1b974d0dcfce2d6cdb"),
    ],
    ids=["4 tables", "10 tables and 4 recent ones"],
)
def test_stored_format_is_pinned(tmp_path, expected_size, golden):
    """Format 6 as written by a bulk load, single check-and-inserts (with page signatures),
    near duplicates recorded as drops (some evicted, some by the sentence rule, counted
    under their site's sentences), and removals: a change to what is stored must bump
    FORMAT_VERSION (or, for the packed page signatures, FINGERPRINT_VERSION: version 10 added
    the shingles sketch) and this value."""
    from scrapy_simhash import PageSignature

    assert FORMAT_VERSION == 6
    rng = random.Random(expected_size)

    def signature(fingerprint: int, *sentences: int) -> PageSignature:
        return PageSignature(
            fingerprint, sentences, 300, rng.getrandbits(64), 2, shingles=rng.getrandbits(64)
        )

    with SimhashIndex(tmp_path / "ix", expected_size=expected_size, drop_records=20) as ix:
        ix.insert_many(
            (rng.getrandbits(64), f"bulk{i}", {"url": f"u{i}", "seen": 1000.0 + i})
            for i in range(3000)
        )
        for i in range(200):
            signed = signature(rng.getrandbits(64), *(10 * i + j for j in range(8)))
            ix.check_and_insert(signed, f"one{i}", seen=5000.0 + i, title="t")
        for i in range(30):  # a copy of bulk{i}, one bit away: dropped
            near = ix.get(f"bulk{i}").fingerprint ^ (1 << i)
            ix.check_and_insert(near, f"copy{i}", seen=6000.0 + i, title="c")
        for i in range(5):  # shares three of one{i}'s sentences: dropped by the sentence rule
            signed = signature(rng.getrandbits(64), 10 * i, 10 * i + 1, 10 * i + 2, 99_999)
            # its runs of words as one{i}'s: three shared sentences in texts otherwise
            # unrelated are a block of prose both carry, not a copy (Rule.block_shared)
            signed = dataclasses.replace(signed, shingles=ix.signature(f"one{i}").shingles)
            moved = f"https://copies.example/moved{i}"
            assert ix.check_and_insert(signed, moved, seen=7000.0 + i).rule == "sentences"
        ix.remove("bulk7")
        ix.remove("bulk20")  # and the record of copy20 with it
        ix.remove("one3")  # its signature and sentences with it, and moved3's record
        # (the count of copies.example's pages dropped through its sentences stays)
        # 35 recorded, the 15 oldest evicted, copy20's removed with bulk20, moved3's with one3.
        assert ix.drop_count() == 18 and ix.verify() == []
        assert ix.stats()["repeated_sentences"] == 15  # 3 sentences of each moved page
        assert ix.dropped("copy9") is None and ix.dropped("copy20") is None
        drop = ix.dropped("copy25")
        assert (drop.kept, drop.distance, drop.seen, drop.record) == (
            "bulk25",
            1,
            6025.0,
            {"title": "c"},
        )
    assert _stored_digest(tmp_path / "ix") == golden


@pytest.mark.parametrize(("max_distance", "expected_size"), [(5, 10**7), (6, 10**8)])
def test_the_most_tables_the_index_chooses_fit_in_its_environment(
    tmp_path, max_distance, expected_size
):
    """k=5 at 10 million fingerprints takes 56 tables and 21 recent ones, k=6 at 100
    million 49 and 28: the most of any k and size. Such an index opens, works and opens
    again (80 named databases, as the environment held before, were too few: it failed at
    its first open with LMDB's MDB_DBS_FULL)."""
    path = tmp_path / "ix"
    with SimhashIndex(path, max_distance=max_distance, expected_size=expected_size) as ix:
        assert ix.layout.tables + ix.recent_layout.tables == 77
        ix.insert(0b1011, "a")
        assert [m.key for m in ix.query(0b1011 ^ (1 << 40))] == ["a"]
    with SimhashIndex(path) as ix:
        assert len(ix) == 1 and ix.verify() == []


def test_no_layout_the_index_chooses_has_more_tables_than_its_environment_holds():
    """Every k and size: the tables, the recent tables and the index's own 9 databases."""
    from scrapy_simhash.index.layout import MAX_SUPPORTED_DISTANCE
    from scrapy_simhash.index.lmdb_storage import MAX_DBS
    from scrapy_simhash.index.tables import RECENT_SIZE

    most = 0
    for k in range(MAX_SUPPORTED_DISTANCE + 1):
        recent = choose_layout(k, RECENT_SIZE)
        for size in (10**e for e in range(1, 11)):
            tables = choose_layout(k, size).tables
            most = max(most, tables + (recent.tables if recent.tables < tables else 0))
    assert most == 77 and most + 9 <= MAX_DBS


@pytest.mark.parametrize(
    ("meta_key", "damage"),
    [(b"merged", lambda value: b"x"), (b"merging", lambda value: value[:-1])],
    ids=["merged tables not a number", "merging fingerprints cut short"],
)
def test_a_damaged_merge_in_progress_is_refused_at_open_and_named_by_verify(
    tmp_path, monkeypatch, meta_key, damage
):
    """The state of a merge in progress is read like the counts: damaged, it is refused at
    open with DamagedIndexError, and verify lists it as a problem, never a bare ValueError
    from int() or numpy escaping a write or verify."""
    import scrapy_simhash.index.tables as index_module

    monkeypatch.setattr(index_module, "_RECENT_MIN", 20)
    path = tmp_path / "ix"
    rng = random.Random(5)
    with SimhashIndex(path, expected_size=10**7) as ix:
        for i in range(22):
            ix.insert(rng.getrandbits(64), f"k{i}")
        assert ix.stats()["merging"] == 20 and ix.verify() == []
    with SimhashIndex(path) as ix:  # damaged while open: verify names it, a write refuses
        env = ix._tx.storage.env
        with env.begin(write=True) as txn:
            meta = env.open_db(b"meta", txn=txn)
            txn.put(meta_key, damage(txn.get(meta_key, db=meta)), db=meta)
        problems = ix.verify()
        assert len(problems) == 1 and "merg" in problems[0], problems
        with pytest.raises(DamagedIndexError, match=r"index damaged: .*merg"):
            ix.insert(rng.getrandbits(64), "after")
        assert [m.key for m in ix.query(0, 0)] == []  # reads that need no merge state still run
    with pytest.raises(DamagedIndexError, match=r"index damaged: .*merg"):
        SimhashIndex(path)
    with pytest.raises(DamagedIndexError, match=r"index damaged: .*merg"):
        SimhashIndex(path, readonly=True)
