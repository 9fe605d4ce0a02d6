"""``verify`` on big indexes: what it holds in memory grows by a few bytes a posting."""

from __future__ import annotations

import random
import tracemalloc

import lmdb

from scrapy_simhash.index import SimhashIndex
from scrapy_simhash.index.records import doc_id
from scrapy_simhash.index.sentences import Postings, posting_problems
from scrapy_simhash.text.signature import PageSignature


def _reference(wanted: set[tuple[bytes, bytes]], held: set[tuple[bytes, bytes]]) -> list[str]:
    """The problems as sets of tuples say them (what ``verify`` did before packing)."""
    found = [
        f"sentence {key.hex()} lists document {docid.hex()}, whose signature lacks it"
        for key, docid in sorted(held - wanted)[:20]
    ]
    found += [
        f"sentence {key.hex()} of document {docid.hex()} is not listed"
        for key, docid in sorted(wanted - held)[:20]
    ]
    return found


def _postings(pairs: list[tuple[bytes, bytes]]) -> Postings:
    postings = Postings()
    for key, docid in pairs:
        postings.add(key, docid)
    return postings


def test_posting_problems_are_those_of_sets_of_tuples():
    rng = random.Random(5)
    for trial in range(60):
        common = [(rng.randbytes(8), rng.randbytes(16)) for _ in range(rng.randrange(0, 300))]
        # keys sharing a prefix and ids sharing a key: the order is the pairs' order
        common += [(b"\x00" * 7 + bytes([i % 3]), bytes([i]) * 16) for i in range(20)]
        wanted = list(common)
        held = list(common)
        for _ in range(rng.randrange(0, 40) if trial % 3 else 0):
            pair = (rng.randbytes(8), rng.randbytes(16))
            (wanted if rng.random() < 0.5 else held).append(pair)
        if trial % 4 == 0:  # odd lengths, as a damaged index holds
            held += [(rng.randbytes(rng.randrange(0, 12)), rng.randbytes(16)) for _ in range(5)]
            held.append((rng.randbytes(8), rng.randbytes(15)))
            wanted.append((rng.randbytes(8), b"\xff" * 3))
            wanted.append(held[-1])  # an odd posting on both sides is no problem
        wanted += rng.sample(wanted, len(wanted) // 10)  # repeats count once
        rng.shuffle(wanted)
        rng.shuffle(held)
        expected = _reference(set(wanted), set(held))
        assert posting_problems(_postings(wanted), _postings(held)) == expected, trial


def _signed(n: int, seed: int = 3) -> list[tuple[PageSignature, str, dict[str, object]]]:
    rng = random.Random(seed)
    return [
        (
            PageSignature(rng.getrandbits(64), tuple(rng.getrandbits(64) for _ in range(8)), 300),
            f"https://s{i % 7}.example/{i}",
            {},
        )
        for i in range(n)
    ]


def test_verify_names_postings_extra_and_missing(tmp_path):
    path = tmp_path / "ix"
    items = _signed(50)
    with SimhashIndex(path) as ix:
        ix.insert_many(items)
        assert ix.verify() == []
    lost = items[7][0].sentences[2].to_bytes(8, "big")
    stray = (0x0102030405060708).to_bytes(8, "big")
    env = lmdb.open(str(path), max_dbs=80)
    try:
        with env.begin(write=True) as txn:
            sents = env.open_db(b"sents", txn=txn, create=False, dupsort=True, dupfixed=True)
            assert txn.delete(lost, doc_id(items[7][1]), db=sents)
            txn.put(stray, doc_id(items[3][1]), db=sents)
    finally:
        env.close()
    with SimhashIndex(path, readonly=True) as ix:
        assert ix.verify() == [
            f"sentence {stray.hex()} lists document {doc_id(items[3][1]).hex()}, whose "
            "signature lacks it",
            f"sentence {lost.hex()} of document {doc_id(items[7][1]).hex()} is not listed",
        ]


def test_verify_holds_the_postings_packed(tmp_path):
    # 8 postings a page: as sets of tuples of bytes, verify held about 400 bytes a posting
    # (3.2 KB a page, gigabytes for a million pages); packed, both sides take 48 bytes.
    pages = 12_000
    with SimhashIndex(tmp_path / "ix", expected_size=pages) as ix:
        ix.insert_many(_signed(pages))
        peak = _verify_peak(ix)
    assert peak / pages < 1200, f"verify held {peak / pages:.0f} bytes a page"


def test_verify_holds_the_documents_and_links_packed(tmp_path):
    # An index of bare fingerprints: the documents' fingerprints and ids, and the links, as
    # lists of Python ints and bytes took about 300 bytes a page; packed, 48.
    rng = random.Random(3)
    pages = 30_000
    with SimhashIndex(tmp_path / "ix", expected_size=pages) as ix:
        ix.insert_many((rng.getrandbits(64), f"https://site.example/{i}", {}) for i in range(pages))
        peak = _verify_peak(ix)
    assert peak / pages < 200, f"verify held {peak / pages:.0f} bytes a page"


def _verify_peak(ix: SimhashIndex) -> int:
    """The peak of Python's heap (numpy's arrays included) while ``ix`` verifies healthy."""
    tracemalloc.start()
    try:
        assert ix.verify() == []
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
