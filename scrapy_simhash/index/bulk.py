"""Preparing a bulk load: check the items column by column, sort them with numpy, and build
the LMDB entries a chunk at a time.

``insert_many`` is bound by the work done per item, and at millions of items by memory: a
pass that touches or creates millions of Python objects costs more in cache misses and page
faults than in work. So the items are checked a column at a time (a type test over each
column; the slow, per-item checks only to name a bad value), the sorts are numpy sorts of
fixed-width arrays, fixed-width entries (fingerprint links, table buckets) are cut from numpy
buffers, and the document records are built in id order a chunk at a time while LMDB
consumes them. :class:`Ahead` runs the tables' numpy work in a background thread.
"""

from __future__ import annotations

import gc
import hashlib
import itertools
import operator
import struct
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..text.signature import PageSignature
from .records import (
    HEADER,
    Buckets,
    Entry,
    check_fingerprint,
    check_key,
    sealed,
)

#: A fingerprint link entry: 8-byte fingerprint, 16-byte document id.
LINK = struct.Struct("8s16s")
_NO_IDS = np.zeros(0, dtype="V16")
#: Items encoded at a time while a bulk load streams its document records into LMDB. The
#: objects of one chunk are freed before the next is built, and a chunk is small enough for
#: them to fit in memory the allocator keeps: Python returns a memory arena to the OS once it
#: is empty, and faulting fresh pages back in cost more than building the records (1.2 s of
#: 8 s at 10^7 with chunks of 16384).
CHUNK = 1 << 10
_HEADER_DTYPE = np.dtype([("fp", ">u8"), ("seen", ">f8"), ("len", ">u4")])
assert _HEADER_DTYPE.itemsize == HEADER.size
_FP, _KEY, _RECORD = (operator.itemgetter(i) for i in range(3))


@dataclass
class Prepared:
    """Checked items with unique keys (the last of repeated keys wins), in document id order.

    Positions ``i`` count in that order: ``ids[i]`` is the id, ``fingerprints[i]`` the
    fingerprint, and ``order[i]`` where the item is among those read. Document records are
    encoded on demand, a chunk at a time (:meth:`entries`).
    """

    ids: np.ndarray  # V16: the 16-byte document ids, ascending
    fingerprints: np.ndarray  # uint64, one per id
    order: np.ndarray  # int64 positions in ``source``, one per id
    source: list[tuple[int, str, dict[str, Any]]]  # the items read, repeats included
    keys: list[str]  # key of each item read
    encoded: list[bytes] | None  # records of items with a record, one per id (else None)
    now: float

    @property
    def read(self) -> int:
        return len(self.source)

    def __len__(self) -> int:
        return len(self.order)

    def docids(self) -> list[bytes]:
        return self.ids.tolist()

    def item(self, i: int) -> tuple[int, str, dict[str, Any]]:
        """The item stored under id ``i``."""
        return self.source[int(self.order[i])]

    def entries(self, selected: np.ndarray | None = None) -> Iterator[tuple[bytes, bytes]]:
        """(document id, record) LMDB entries, ascending, of every id or the ``selected``
        positions (ascending), built a chunk at a time."""
        count = len(self) if selected is None else len(selected)
        chunks = (
            slice(start, start + CHUNK) if selected is None else selected[start : start + CHUNK]
            for start in range(0, count, CHUNK)
        )
        return itertools.chain.from_iterable(map(self._chunk, chunks))

    def _chunk(self, at: slice | np.ndarray) -> Iterator[tuple[bytes, bytes]]:
        """The entries of the positions ``at``."""
        ids = self.ids[at].tolist()
        if self.encoded is not None:
            if isinstance(at, slice):
                positions = list(range(*at.indices(len(self))))
            else:
                positions = at.tolist()
            return zip(ids, _picker(positions)(self.encoded), strict=True)
        data = list(map(str.encode, _picker(self.order[at].tolist())(self.keys)))
        header = np.empty(len(data), dtype=_HEADER_DTYPE)
        header["fp"] = self.fingerprints[at]
        header["seen"] = self.now
        header["len"] = np.fromiter(map(len, data), dtype=np.uint32, count=len(data))
        records = map(sealed, map(operator.add, header.view(f"V{HEADER.size}").tolist(), data))
        return zip(ids, records, strict=True)


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


def _fingerprints(column: list[Any]) -> np.ndarray:
    if set(map(type, column)) == {int}:
        try:
            return np.fromiter(column, dtype=np.uint64, count=len(column))
        except OverflowError:
            pass
    return np.fromiter(map(check_fingerprint, column), dtype=np.uint64, count=len(column))


def _check_columns(keys: list[Any], records: list[Any]) -> None:
    if set(map(type, keys)) != {str} or not all(keys):
        for key in keys:
            check_key(key)
    if set(map(type, records)) != {dict}:
        bad = next(r for r in records if type(r) is not dict)
        raise TypeError(f"record must be a dict, got {type(bad).__name__}")


def _triples(items: list[Any]) -> list[Any]:
    """``items`` if each is a tuple or list of 3, else the error of the first that does not
    unpack to 3 values (the others are converted to tuples)."""
    if set(map(type, items)) <= {tuple, list} and set(map(len, items)) == {3}:
        return items
    triples = []
    for item in items:
        try:
            item = tuple(item)
        except TypeError:
            _, _, _ = item  # the error of unpacking a non-iterable
        _, _, _ = item
        triples.append(item)
    return triples


def _doc_ids(keys: list[str]) -> bytearray:
    """The 16-byte BLAKE2b of each key (as :func:`.records.doc_id`), concatenated."""
    blank = hashlib.blake2b(digest_size=16)
    out = bytearray()
    for start in range(0, len(keys), CHUNK):
        for data in map(str.encode, keys[start : start + CHUNK]):
            h = blank.copy()
            h.update(data)
            out += h.digest()
    return out


def _packed_order(high: np.ndarray, low: np.ndarray) -> np.ndarray | None:
    """Positions of ``high`` in ascending order by a sort of values rather than an argsort
    (five times faster): each value's top bits with its position in the low bits. The few
    runs of values that agree on those top bits are then ordered by ``(high, low)``. None
    when there are too many values for this, or when two ids are equal."""
    bits = max(1, (len(high) - 1).bit_length())
    if bits > 32:
        return None
    mask = np.uint64((1 << bits) - 1)
    packed = high & ~mask
    packed |= np.arange(len(high), dtype=np.uint64)
    packed.sort()
    order = (packed & mask).astype(np.intp)
    packed &= ~mask
    same = packed[1:] == packed[:-1]
    if same.any():
        tied = np.zeros(len(order), dtype=bool)
        tied[1:] = same
        tied[:-1] |= same
        at = np.flatnonzero(tied)
        runs = order[at]
        # Runs are in the order of their top bits, which is the order of their values.
        runs = runs[np.lexsort((low[runs], high[runs]))]
        if ((high[runs][1:] == high[runs][:-1]) & (low[runs][1:] == low[runs][:-1])).any():
            return None
        order[at] = runs
    return order


def _unique_sorted(raw_ids: bytes | bytearray) -> np.ndarray:
    """Positions of the concatenated 16-byte ids in ascending order, the last position kept
    of repeated ids."""
    halves = np.frombuffer(raw_ids, dtype=">u8")
    high = halves[0::2].astype(np.uint64)
    low = halves[1::2]
    order = _packed_order(high, low)
    if order is not None:
        return order
    # Repeated ids (or more than 2^32): a full sort, then the last of each kept.
    low = low.astype(np.uint64)
    order = np.lexsort((np.arange(len(high)), low, high))
    high, low = high[order], low[order]
    last = np.ones(len(order), dtype=bool)
    last[:-1] = (high[1:] != high[:-1]) | (low[1:] != low[:-1])
    return order[last]


def _picker(positions: list[int]) -> Callable[[Sequence[Any]], Sequence[Any]]:
    """A function taking the elements at ``positions`` of a sequence (in C, not a loop)."""
    if len(positions) == 1:
        return lambda seq: (seq[positions[0]],)
    return operator.itemgetter(*positions)


@dataclass
class Columns:
    """Items read and checked, by column (in the order read)."""

    items: list[tuple[int, str, dict[str, Any]]]
    fingerprints: np.ndarray  # uint64
    keys: list[str]
    records: list[dict[str, Any]]

    def __len__(self) -> int:
        return len(self.items)


def read_items(items: Iterable[tuple[int, str, dict[str, Any]]]) -> Columns:
    """``(fingerprint, key, record)`` items by column, each column type-checked."""
    items = _triples(items if isinstance(items, list) else list(items))
    if not items:
        return Columns(items, np.zeros(0, dtype=np.uint64), [], [])
    fingerprints = _fingerprints(list(map(_FP, items)))
    keys = list(map(_KEY, items))
    records = list(map(_RECORD, items))
    _check_columns(keys, records)
    return Columns(items, fingerprints, keys, records)


def split_signatures(
    items: Iterable[tuple[int | PageSignature, str, dict[str, Any]]],
) -> tuple[list[tuple[Any, Any, Any]], dict[str, PageSignature | None]]:
    """The items with bare fingerprints, and each key's page signature (None when the last
    item of a key that had one gives a bare fingerprint): what a bulk load stores apart."""
    signatures: dict[str, PageSignature | None] = {}
    plain: list[tuple[Any, Any, Any]] = []
    for item in items:
        if isinstance(item, tuple) and len(item) == 3:
            fingerprint, key, record = item
            if isinstance(fingerprint, PageSignature):
                signatures[key] = fingerprint
                fingerprint = fingerprint.fingerprint
            elif signatures and isinstance(key, str):
                signatures[key] = None  # the last of repeated keys wins
            item = (fingerprint, key, record)
        plain.append(item)
    return plain, signatures


def prepare(columns: Columns, now: float) -> Prepared:
    """Items (first seen ``now``) hashed and sorted by document id, and records encoded.
    Every error left (a key that is not UTF-8, a record that is not JSON) is raised here,
    before anything is written."""
    keys, records = columns.keys, columns.records
    if not keys:
        nothing = np.zeros(0, dtype=np.int64)
        return Prepared(_NO_IDS, columns.fingerprints, nothing, columns.items, [], None, now)
    raw_ids = _doc_ids(keys)
    order = _unique_sorted(raw_ids)
    ids = np.take(np.frombuffer(raw_ids, dtype="V16"), order)
    encoded = None
    if any(records):
        fp_list = columns.fingerprints.tolist()
        encoded = []
        for i in order.tolist():
            entry = Entry(keys[i], records[i])
            encoded.append(entry.data(fp_list[i], now if entry.seen is None else entry.seen))
    return Prepared(
        ids, np.take(columns.fingerprints, order), order, columns.items, keys, encoded, now
    )


#: A fingerprint link entry as a numpy record (the layout of :data:`LINK`).
_LINK_DTYPE = np.dtype([("fp", ">u8"), ("id", "V16")])
assert _LINK_DTYPE.itemsize == LINK.size


def links(fingerprints: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The fingerprint link entries (8-byte fingerprint, 16-byte document id) in ascending
    order, as records to cut with :data:`LINK`; ``ids`` (V16) must be in ascending order."""
    order = np.argsort(fingerprints)
    ordered = fingerprints[order]
    if (ordered[1:] == ordered[:-1]).any():  # shared fingerprints: by document id
        order = np.argsort(fingerprints, kind="stable")
        ordered = fingerprints[order]
    rows = np.empty(len(order), dtype=_LINK_DTYPE)
    rows["fp"] = ordered
    rows["id"] = ids[order]
    return rows


class Ahead:
    """Calls run in one background thread, at most ``depth`` ahead of the results taken,
    in order: numpy releases the GIL while it sorts, so the next tables are sorted while the
    caller writes the previous ones to LMDB (which stays in the caller's thread)."""

    def __init__(self, calls: Iterable[Callable[[], Any]], depth: int = 2) -> None:
        self._calls = iter(calls)
        self._futures: deque[Future[Any]] = deque()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="scrapy-simhash-bulk")
        while len(self._futures) < depth and self._submit():
            pass

    def _submit(self) -> bool:
        call = next(self._calls, None)
        if call is None:
            return False
        try:
            future = self._pool.submit(call)
        except RuntimeError:  # no new thread (the interpreter is exiting): run it here
            future = Future()
            try:
                future.set_result(call())
            except Exception as exc:
                future.set_exception(exc)
        self._futures.append(future)
        return True

    def __iter__(self) -> Iterator[Any]:
        while self._futures:
            future = self._futures.popleft()
            self._submit()
            yield future.result()

    def close(self) -> None:
        """Cancel the calls not started; wait for the one running."""
        self._futures.clear()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sorted_distinct(values: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """``values`` sorted, repeats dropped; ``in_place`` sorts ``values`` itself (no copy)."""
    if in_place:
        values.sort()
    else:
        values = np.sort(values)
    if values.size > 1 and (values[1:] == values[:-1]).any():
        values = values[np.concatenate(([True], values[1:] != values[:-1]))]
    return values


def fingerprint_bytes(fingerprints: np.ndarray) -> list[bytes]:
    """8-byte big-endian forms of many fingerprints."""
    return np.asarray(fingerprints, dtype=np.uint64).astype(">u8").view("V8").ravel().tolist()


#: Values handled at a time by the passes over a whole table (see ``_layout._SPAN``).
_SPAN = 1 << 20


def bucket_entries(permuted: np.ndarray, codec: Buckets) -> list[tuple[bytes, memoryview]]:
    """(bucket key, bucket) LMDB entries of sorted, distinct permuted fingerprints. The
    buckets are views of one buffer, which holds every value's low bytes in order; the
    passes go a span at a time, so the only large allocation is that buffer."""
    n = permuted.size
    if not n:
        return []
    shift, w = np.uint64(codec.shift), codec.width
    buffer = np.empty((n, w), dtype=np.uint8)
    starts = [np.zeros(1, dtype=np.int64)]
    for start in range(0, n, _SPAN):
        part = permuted[max(0, start - 1) : start + _SPAN]  # with the value before the span
        keys = part >> shift
        starts.append(np.flatnonzero(keys[1:] != keys[:-1]) + max(1, start))
        part = permuted[start : start + _SPAN]
        buffer[start : start + part.size] = (
            part.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - w :]
        )
    first = np.concatenate(starts)
    heads = (permuted[first] >> shift).astype(">u8").view(np.uint8).reshape(-1, 8)
    key_list = heads[:, 8 - codec.key_bytes :].copy().view(f"V{codec.key_bytes}").ravel()
    view = memoryview(buffer).cast("B")
    bounds = (np.append(first, n) * w).tolist()
    buckets = list(map(view.__getitem__, itertools.starmap(slice, itertools.pairwise(bounds))))
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
