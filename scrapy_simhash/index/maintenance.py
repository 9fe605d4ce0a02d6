"""Checking an index: ``verify``'s rules, written against the storage interface.

A healthy index has every document record decodable (its key, first-seen time and JSON) and
linked to its fingerprint, and every link to its document; the fingerprint count equal to the
distinct fingerprints linked; every recent table holding the same fingerprints (those counted
as recent); every main table holding the linked fingerprints the recent ones do not, and
those before a merge's ``done`` the merge's fingerprints too; and every bucket well formed and
sorted.
"""

from __future__ import annotations

from array import array

import numpy as np

from .bulk import LINK, links, sorted_distinct
from .documents import Documents
from .drops import last_drop_given
from .records import DamagedIndexError, decode_doc, decode_key, doc_id
from .storage import Space, Txn
from .tables import COUNT, RECENT, Levels, Tables, read_count


def quick_check(txn: Txn, docs: Documents, levels: Levels) -> None:
    """A cheap structural check made at every open: the counts in ``meta`` are numbers, and
    the first and last items of the documents and of every table are well formed. Raises
    :class:`DamagedIndexError` naming what is wrong (``verify`` checks everything)."""
    for name in (COUNT, RECENT):
        read_count(txn, levels.meta, name)  # DamagedIndexError when it is no number
    last_drop_given(txn, levels.meta)
    levels.merging(txn)  # a merge in progress: its count and fingerprints
    for docid, data in _ends(txn, docs.docs):
        if len(docid) != 16:
            raise DamagedIndexError(f"index damaged: a document id of {len(docid)} bytes")
        decode_doc(data)
    tables = [levels.main] if levels.recent is None else [levels.main, levels.recent]
    for level in tables:
        for i, space in enumerate(level.spaces):
            for key, bucket in _ends(txn, space):
                try:
                    level.codec.opened(key, bucket)
                except DamagedIndexError as exc:
                    what = str(exc).removeprefix("index damaged: ")
                    raise DamagedIndexError(f"index damaged: {level.name} {i}: {what}") from None


def _ends(txn: Txn, space: Space) -> list[tuple[bytes, bytes]]:
    """The first and the last item of a space (one item, or none, for smaller spaces)."""
    first = next(iter(txn.scan(space)), None)
    last = txn.last(space)
    return [item for item in (first, last) if item is not None]


def count_stats(txn: Txn, docs: Documents, levels: Levels) -> dict[str, int]:
    """The counts of :meth:`~.index.SimhashIndex.stats`: documents, distinct fingerprints,
    those in the recent tables, those being merged and the main tables merged so far."""
    merging, done = levels.merging(txn) or ((), 0)
    return {
        "entries": txn.count(docs.docs),
        "fingerprints": read_count(txn, levels.meta),
        "recent_fingerprints": read_count(txn, levels.meta, RECENT),
        "merging": len(merging),
        "merged_tables": done,
    }


def verify(txn: Txn, docs: Documents, levels: Levels) -> list[str]:
    """Problems found in the index read by ``txn`` (empty when healthy)."""
    problems: list[str] = []
    # packed as they are read (8 and 16 bytes a document: as lists of Python ints and bytes,
    # and the links as a list of bytes, an index of a million pages took some 300 MB here)
    fingerprints = array("Q")
    ids = bytearray()
    for docid, data in txn.scan(docs.docs):
        try:
            fingerprint, key, _ = decode_doc(data)  # the whole record, as every read decodes it
        except DamagedIndexError as exc:
            problems.append(f"document {bytes(docid).hex()}: {exc}")
            continue
        if doc_id(key) != docid:
            problems.append(f"document {key!r} is stored under another id")
        fingerprints.append(fingerprint)
        ids += docid
    documents = len(fingerprints)
    # The links the documents call for, in the order of the fingerprint links (by
    # fingerprint, then document id), against the links stored.
    wanted = links(
        np.frombuffer(fingerprints, dtype=np.uint64), np.frombuffer(bytes(ids), dtype="V16")
    )
    del fingerprints, ids
    stored = bytearray()
    held = 0
    for fpb, docid in txn.scan(docs.links):
        stored += fpb
        stored += docid
        held += 1
    if wanted.tobytes() != stored:  # (damage: each link read again, whole)
        links_held = [fpb + docid for fpb, docid in txn.scan(docs.links)]
        problems += _link_problems(txn, docs, wanted, links_held)
    linked = sorted_distinct(np.frombuffer(stored, dtype=wanted.dtype)["fp"].astype(np.uint64))
    if held != documents:
        problems.append(f"{held} fingerprint links for {documents} documents")
    counted = read_count(txn, levels.meta)
    if counted != linked.size:
        problems.append(f"{counted} fingerprints counted, {linked.size} linked")
    recent = np.empty(0, dtype=np.uint64)  # what any recent table holds
    if levels.recent is not None:
        contents = []
        for i in range(len(levels.recent.spaces)):
            held_i, shape = levels.recent.contents(txn, i)
            problems += shape
            contents.append(held_i)
        recent = sorted_distinct(np.concatenate(contents))
        wanted_recent = np.intersect1d(recent, linked, assume_unique=True)
        for i, held_i in enumerate(contents):
            problems += _table_problems(levels.recent, i, held_i, wanted_recent, linked)
        counted = read_count(txn, levels.meta, RECENT)
        if counted != wanted_recent.size:
            problems.append(f"{counted} recent fingerprints counted, {wanted_recent.size} held")
    # Main tables hold what the recent ones do not, and those before ``done`` the
    # fingerprints of a merge in progress too.
    try:
        merging, done = levels.merging(txn) or (np.empty(0, dtype=np.uint64), 0)
    except DamagedIndexError as exc:
        return [*problems, str(exc)]
    strays = np.setdiff1d(merging, recent).size
    if strays:
        problems.append(f"{strays} fingerprints being merged are in no recent table")
    wanted_main = np.setdiff1d(linked, recent, assume_unique=True)
    wanted_done = wanted_main
    if done:
        merged = np.intersect1d(merging, linked, assume_unique=True)
        wanted_done = sorted_distinct(np.concatenate([wanted_main, merged]))
    for i in range(len(levels.main.spaces)):
        held_i, shape = levels.main.contents(txn, i)
        expected = wanted_done if i < done else wanted_main
        problems += shape + _table_problems(levels.main, i, held_i, expected, linked)
    return problems


def _link_problems(txn: Txn, docs: Documents, wanted: np.ndarray, held: list[bytes]) -> list[str]:
    """What differs between the links the documents call for and those stored."""
    problems = []
    stored = set(held)
    raw = wanted.tobytes()
    pairs = [raw[at : at + LINK.size] for at in range(0, len(raw), LINK.size)]
    for pair in pairs:
        if pair not in stored:
            fingerprint = int.from_bytes(pair[:8], "big")
            _, key = decode_key(txn.get(pair[8:], db=docs.docs))
            problems.append(f"document {key!r} is not linked to {fingerprint:#018x}")
    expected = set(pairs)
    for pair in held:
        if pair not in expected:
            fingerprint = int.from_bytes(pair[:8], "big")
            if txn.get(pair[8:], db=docs.docs) is None:
                problems.append(f"fingerprint {fingerprint:#018x} links a missing document")
            else:
                problems.append(f"fingerprint {fingerprint:#018x} links another's document")
    return problems


def _table_problems(
    tables: Tables, i: int, held: np.ndarray, wanted: np.ndarray, linked: np.ndarray
) -> list[str]:
    """How what table ``i`` of ``tables`` holds differs from the sorted ``wanted``
    (``linked``: every fingerprint of a document)."""
    if held.size == wanted.size and (held == wanted).all():
        return []
    problems = []
    for fp in np.setdiff1d(held, wanted, assume_unique=True)[:10].tolist():
        where = "in the other level" if fp in linked else "linked to no document"
        problems.append(f"{tables.name} {i} holds {fp:#018x}, {where}")
    for fp in np.setdiff1d(wanted, held, assume_unique=True)[:10].tolist():
        problems.append(f"{tables.name} {i} lacks {fp:#018x}")
    return problems
