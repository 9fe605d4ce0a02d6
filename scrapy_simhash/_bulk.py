"""Preparing a bulk load: validate and encode all items at once, sort with numpy.

``insert_many`` is bound by the work done per item, so the items are checked column by
column (a type test over each column; the slow, per-item checks only to name a bad value),
keys are hashed and records encoded in comprehensions, every sort is a numpy sort of
fixed-width arrays, and fixed-width LMDB entries (fingerprint links, table buckets) are cut
from one bytes buffer rather than built one by one.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import operator
import struct
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._records import (
    HEADER,
    Buckets,
    check_fingerprint,
    check_key,
    encode_doc,
    split_seen,
)

_LINK = struct.Struct("8s16s")
_NO_IDS = np.zeros((0, 16), dtype=np.uint8)


@dataclass
class Prepared:
    """Items with unique keys (the last of repeated keys wins)."""

    docids: Sequence[bytes]  # sorted ascending
    fingerprints: np.ndarray  # uint64, one per docid
    encoded: list[bytes]  # document records, one per docid
    positions: list[int]  # where each docid's item is in ``source``
    source: list[tuple[int, str, dict[str, Any]]]  # the items read, repeats included
    id_rows: np.ndarray  # the docids as rows of a (n, 16) uint8 array

    @property
    def read(self) -> int:
        return len(self.source)

    def item(self, i: int) -> tuple[int, str, dict[str, Any]]:
        """The item stored under ``docids[i]``."""
        return self.source[self.positions[i]]


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off for a block: a bulk load allocates millions of
    objects, none in a cycle, and the collections they trigger cost a quarter of its time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _fingerprints(column: tuple[Any, ...]) -> np.ndarray:
    if set(map(type, column)) == {int}:
        try:
            return np.fromiter(column, dtype=np.uint64, count=len(column))
        except OverflowError:
            pass
    return np.fromiter(map(check_fingerprint, column), dtype=np.uint64, count=len(column))


def _check_columns(keys: tuple[Any, ...], records: tuple[Any, ...]) -> None:
    if set(map(type, keys)) != {str} or not all(keys):
        for key in keys:
            check_key(key)
    if set(map(type, records)) != {dict}:
        bad = next(r for r in records if type(r) is not dict)
        raise TypeError(f"record must be a dict, got {type(bad).__name__}")


def _doc_ids(key_bytes: list[bytes]) -> bytearray:
    """The 16-byte BLAKE2b of each key (as :func:`._records.doc_id`), concatenated."""
    blank = hashlib.blake2b(digest_size=16)
    out = bytearray()
    for data in key_bytes:
        h = blank.copy()
        h.update(data)
        out += h.digest()
    return out


def _unique_sorted(ids: np.ndarray) -> np.ndarray:
    """Positions of the 16-byte ids (rows of a (n, 2) uint64 array) in ascending order,
    the last position kept of repeated ids."""
    order = np.argsort(ids[:, 0])
    high = ids[order, 0]
    if not (high[1:] == high[:-1]).any():
        return order
    positions = np.arange(len(ids))
    order = np.lexsort((positions, ids[:, 1], ids[:, 0]))
    sorted_ids = ids[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (sorted_ids[1:] != sorted_ids[:-1]).any(axis=1)
    return order[last]


def _picker(positions: list[int]) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """A function taking the elements at ``positions`` of a sequence (in C, not a loop)."""
    if len(positions) == 1:
        return lambda seq: (seq[positions[0]],)
    return operator.itemgetter(*positions)


def prepare(items: Iterable[tuple[int, str, dict[str, Any]]], now: float) -> Prepared:
    """Validate and encode ``(fingerprint, key, record)`` items (first seen ``now``)."""
    items = items if isinstance(items, list) else list(items)
    if not items:
        return Prepared((), np.zeros(0, dtype=np.uint64), [], [], items, _NO_IDS)
    try:
        fp_column, keys, records = zip(*items, strict=True)
    except (TypeError, ValueError):
        for item in items:  # the error of the first malformed item
            _, _, _ = item
        raise
    fingerprints = _fingerprints(fp_column)
    _check_columns(keys, records)
    key_bytes = list(map(str.encode, keys))
    raw_ids = _doc_ids(key_bytes)
    order = _unique_sorted(np.frombuffer(raw_ids, dtype=">u8").astype(np.uint64).reshape(-1, 2))
    positions = order.tolist()
    pick = _picker(positions)
    # Records are encoded in input order (sequential memory access), then picked once.
    fp_list = fingerprints.tolist()
    if any(records):
        encoded = []
        for fp, key, record in zip(fp_list, keys, records, strict=True):
            body, seen = split_seen(record, now)
            encoded.append(encode_doc(fp, seen, key, body))
    else:
        pack = HEADER.pack
        encoded = [
            pack(fp, now, len(data)) + data for fp, data in zip(fp_list, key_bytes, strict=True)
        ]
    id_rows = np.frombuffer(raw_ids, dtype=np.uint8).reshape(-1, 16)[order]
    raw_sorted = id_rows.tobytes()
    sorted_ids = [raw_sorted[i : i + 16] for i in range(0, len(raw_sorted), 16)]
    return Prepared(sorted_ids, fingerprints[order], pick(encoded), positions, items, id_rows)


def links(fingerprints: np.ndarray, id_rows: np.ndarray) -> Iterator[tuple[bytes, bytes]]:
    """(8-byte fingerprint, document id) entries in ascending order, for ``putmulti``; the
    ids (rows of 16 bytes) must be in ascending order."""
    order = np.argsort(fingerprints)
    ordered = fingerprints[order]
    if (ordered[1:] == ordered[:-1]).any():  # shared fingerprints: by document id
        order = np.argsort(fingerprints, kind="stable")
    rows = np.empty((len(order), 24), dtype=np.uint8)
    rows[:, :8] = fingerprints[order].astype(">u8").view(np.uint8).reshape(-1, 8)
    rows[:, 8:] = id_rows[order]
    return _LINK.iter_unpack(rows.tobytes())


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a uint64 array, ascending."""
    values = np.sort(values)
    if values.size > 1:
        values = values[np.concatenate(([True], values[1:] != values[:-1]))]
    return values


def fingerprint_bytes(fingerprints: np.ndarray) -> list[bytes]:
    """8-byte big-endian forms of many fingerprints."""
    return np.asarray(fingerprints, dtype=np.uint64).astype(">u8").view("V8").ravel().tolist()


def bucket_entries(permuted: np.ndarray, codec: Buckets) -> list[tuple[bytes, bytes]]:
    """(bucket key, bucket) LMDB entries of sorted, distinct permuted fingerprints."""
    if not permuted.size:
        return []
    rows = permuted.astype(">u8").view(np.uint8).reshape(-1, 8)
    keys = permuted >> np.uint64(codec.shift)
    starts = np.flatnonzero(np.concatenate(([True], keys[1:] != keys[:-1])))
    key_list = rows[starts, : codec.key_bytes].copy().view(f"V{codec.key_bytes}").ravel()
    buffer = rows[:, codec.key_bytes :].tobytes()
    w = codec.width
    bounds = (np.append(starts, permuted.size) * w).tolist()
    buckets = [buffer[a:b] for a, b in itertools.pairwise(bounds)]
    return list(zip(key_list.tolist(), buckets, strict=True))


def bucket_values(entries: Iterable[tuple[bytes, bytes]], codec: Buckets) -> np.ndarray:
    """The permuted fingerprints held by (bucket key, bucket) entries, in their order."""
    keys = []
    buckets = []
    for key, bucket in entries:
        keys.append(bytes(key))
        buckets.append(bytes(bucket))
    if not keys:
        return np.zeros(0, dtype=np.uint64)
    w = codec.width
    counts = np.fromiter(map(len, buckets), dtype=np.int64, count=len(buckets)) // w
    rows = np.empty((int(counts.sum()), 8), dtype=np.uint8)
    key_rows = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, codec.key_bytes)
    rows[:, : codec.key_bytes] = np.repeat(key_rows, counts, axis=0)
    rows[:, codec.key_bytes :] = np.frombuffer(b"".join(buckets), dtype=np.uint8).reshape(-1, w)
    return rows.view(">u8").ravel().astype(np.uint64)


class Pending:
    """Fingerprints new to the index whose table entries wait for the end of a batch
    transaction (then written sorted, a bucket at a time), searched by brute force meanwhile.

    Changes made since :meth:`begin` are undone by :meth:`rollback` (an operation that
    failed) or kept by :meth:`keep`.
    """

    def __init__(self) -> None:
        self._slot: dict[int, int] = {}  # fingerprint -> index in _values
        self._values = np.zeros(64, dtype=np.uint64)
        self._journal: list[tuple[int, bool]] | None = None

    def __len__(self) -> int:
        return len(self._slot)

    def _put(self, fp: int) -> None:
        n = len(self._slot)
        if n == self._values.size:
            self._values = np.concatenate([self._values, np.zeros(n, dtype=np.uint64)])
        self._values[n] = fp
        self._slot[fp] = n

    def _drop(self, fp: int) -> None:
        at = self._slot.pop(fp)
        last = len(self._slot)
        if at != last:  # the last value moves into the freed slot
            moved = int(self._values[last])
            self._values[at] = moved
            self._slot[moved] = at

    def add(self, fp: int) -> None:
        if fp not in self._slot:
            self._put(fp)
            if self._journal is not None:
                self._journal.append((fp, True))

    def discard(self, fp: int) -> bool:
        """Forget ``fp``; False if it was not pending."""
        if fp not in self._slot:
            return False
        self._drop(fp)
        if self._journal is not None:
            self._journal.append((fp, False))
        return True

    def begin(self) -> None:
        self._journal = []

    def keep(self) -> None:
        self._journal = None

    def rollback(self) -> None:
        journal, self._journal = self._journal or [], None
        for fp, added in reversed(journal):
            if added:
                self._drop(fp)
            else:
                self._put(fp)

    def take(self) -> np.ndarray:
        """Every pending fingerprint; none is pending afterwards."""
        values = self._values[: len(self._slot)].copy()
        self._slot.clear()
        return values

    def near(self, query: int, k: int) -> list[tuple[int, int]]:
        """(fingerprint, distance) of the pending fingerprints within ``k`` of ``query``."""
        values = self._values[: len(self._slot)]
        distance = np.bitwise_count(values ^ np.uint64(query))
        hits = np.flatnonzero(distance <= k)
        return list(zip(values[hits].tolist(), distance[hits].tolist(), strict=True))
