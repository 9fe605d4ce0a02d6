"""Checking an index on a Redis server: ``verify``'s rules, as :mod:`.maintenance` has them for
LMDB, read from the index's keys (:class:`.redis_index.RedisIndex`) with HSCAN.

A healthy index has every document record decodable and linked to its fingerprint, and every
link to documents of that fingerprint, each once; every table holding exactly the linked
fingerprints, in well-formed buckets of sorted values; the count in ``meta`` equal to the
fingerprints linked; every page signature sound and of a stored document, with the sentence postings
exactly the signatures' sentences; what the guard learned well formed; and the drop records
as :func:`.drops.drop_problems` wants them. Run it while no one writes: HSCAN sees a hash
that changes under it only in part.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from .drops import drop_problems
from .records import DamagedIndexError, decode_doc, doc_id, packed_ids
from .sentences import Postings, posting_problems, repeat_problems, wanted_postings

if TYPE_CHECKING:
    from .redis_index import RedisIndex

#: Fields read a call of HSCAN or ZSCAN.
SCAN = 1000


def verify(index: RedisIndex) -> list[str]:
    """Every problem of ``index`` (empty when healthy)."""
    client = index.client
    problems: list[str] = []
    linked: dict[int, bytes] = dict(index._links())
    for docid, data in client.hscan_iter(index._docs, count=SCAN):
        try:
            fingerprint, key, _ = decode_doc(data)
        except ValueError as exc:
            problems.append(f"document {bytes(docid).hex()}: {exc}")
            continue
        if doc_id(key) != docid:
            problems.append(f"document {key!r} is stored under another id")
        ids = linked.get(fingerprint, b"")
        if docid not in packed_ids(ids):
            problems.append(f"document {key!r} is not linked to its fingerprint")
    for fingerprint, ids in linked.items():
        listed = packed_ids(ids)
        if len(set(listed)) != len(listed):  # a query would give the document twice
            problems.append(f"fingerprint {fingerprint:016x} links a document twice")
        for linked_id in dict.fromkeys(listed):
            data = client.hget(index._docs, linked_id)
            try:
                held = None if data is None else decode_doc(data)[0]
            except DamagedIndexError:
                continue  # listed with the documents above: a problem, not the end of verify
            if held != fingerprint:
                problems.append(f"fingerprint {fingerprint:016x} links a missing document")
    expected = np.array(sorted(linked), dtype=np.uint64)
    for i, table in enumerate(index._tables):
        held, bad = table_contents(index, i, table)
        problems += bad
        if held.shape != expected.shape or not (held == expected).all():
            problems.append(
                f"table {i} holds {held.size} fingerprints, not the {expected.size} linked"
            )
    count = index.client.hget(index._meta, "fingerprints")
    if count is None or not bytes(count).isdigit():
        problems.append(f"meta's count of fingerprints is {count!r}, not a number")
    elif int(count) != len(linked):
        problems.append(f"meta counts {int(count)} fingerprints, {len(linked)} are linked")
    return problems + signature_problems(index) + drop_record_problems(index)


def table_contents(index: RedisIndex, i: int, table: str) -> tuple[np.ndarray, list[str]]:
    """The fingerprints table ``i`` (the hash ``table``) holds, sorted, and the problems of
    its buckets."""
    split = index._split
    w, shift = split.width, 64 - split.bits
    inverse = index._inverse[i]
    problems = []
    out = []
    for field, bucket in index.client.hscan_iter(table, count=SCAN):
        high = (int.from_bytes(field, "big") << shift) if shift < 64 else 0
        if not bucket or len(bucket) % w:
            problems.append(f"table {i} bucket {bytes(field).hex()} has {len(bucket)} bytes")
            continue
        values = [int.from_bytes(bucket[j : j + w], "big") for j in range(0, len(bucket), w)]
        if any(b <= a for a, b in pairwise(values)):
            problems.append(f"table {i} bucket {bytes(field).hex()} is out of order")
        out += [inverse(high | v) for v in values]
    return np.array(sorted(out), dtype=np.uint64), problems


def signature_problems(index: RedisIndex) -> list[str]:
    """The rules of ``Sentences.problems`` on LMDB: each signature decodes and belongs to a
    document, the postings are exactly the signatures' sentences, and what the guard learned
    lists each page once."""
    client = index.client
    found: list[str] = []
    wanted = wanted_postings(
        ((bytes(docid), bytes(data)) for docid, data in client.hscan_iter(index._sigs, count=SCAN)),
        lambda docid: bool(client.hexists(index._docs, docid)),
        found,
    )
    held = Postings()
    for key, ids in client.hscan_iter(index._sents, count=SCAN):
        key, ids = bytes(key), bytes(ids)
        if not ids or len(ids) % 16:
            found.append(f"sentence {key.hex()} lists {len(ids)} bytes of documents")
        listed = packed_ids(ids[: len(ids) - len(ids) % 16])  # whole ids only
        if len(set(listed)) != len(listed):
            found.append(f"sentence {key.hex()} lists a document twice")
        for docid in listed:
            held.add(key, docid)
    repeats = []
    for key, ids in client.hscan_iter(index._reps, count=SCAN):
        key, ids = bytes(key), bytes(ids)
        listed = packed_ids(ids)
        if not listed or len(set(listed)) != len(listed):
            found.append(f"repeated sentence {key.hex()} lists {len(ids)} bytes of pages")
        repeats += [(key, docid) for docid in listed]
    return found + posting_problems(wanted, held) + repeat_problems(repeats)


def drop_record_problems(index: RedisIndex) -> list[str]:
    """The drop records' rules, as on LMDB (:func:`.drops.drop_problems`)."""
    client = index.client
    order = {bytes(d): int(seq) for d, seq in client.zscan_iter(index._dseq, count=SCAN)}
    links = set()
    for kept, ids in client.hscan_iter(index._dkept, count=SCAN):
        links.update((bytes(kept), docid) for docid in packed_ids(bytes(ids)))
    records = client.hscan_iter(index._drops, count=SCAN)
    return drop_problems(
        ((bytes(d), bytes(data)) for d, data in records),
        lambda seq, dropped: order.get(dropped) == seq,
        len(order),
        links,
        lambda kept: bool(client.hexists(index._docs, kept)),
    )
