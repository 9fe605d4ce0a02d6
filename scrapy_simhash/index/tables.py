"""The permuted tables: probes, writes, and the two levels with their staged merge.

A table holds every fingerprint permuted by its plan (:mod:`.layout`), grouped in buckets by
the top ``key_bytes`` bytes: one storage item per bucket, whose value is the sorted run of
the other bytes of its fingerprints (:class:`~.records.Buckets`), bisected by a query.

Layouts of more tables than a small index needs (k=3: 10) also keep *recent* tables (k=3: 4,
with 2-byte bucket keys): fingerprints added a few at a time go there, and are merged into
the main tables, sorted, once the recent tables hold a 64th of the index (at least 16,384),
one main table per write of new fingerprints (a commit, or every 4096 inside a batch). A
random fingerprint written into the main tables rewrites a page of each; merged by the
hundred thousand, the main tables' pages are rewritten once for many. The fingerprints being
merged stay in the recent tables until every main table has them, so queries probing both
levels always find them. A merge in progress is stored in ``meta`` (its fingerprints, and
how many main tables have them): it survives a crash, and another process carries it on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from .bulk import Ahead, bucket_entries, bucket_values, sorted_distinct
from .layout import Layout, TablePlan
from .records import CHECK, Buckets, DamagedIndexError, stored_count
from .storage import Space, Txn, main_table, recent_table

logger = logging.getLogger(__name__)

COUNT = b"fingerprints"  # distinct fingerprints, in either level
RECENT = b"recent"  # fingerprints in the recent tables
MERGING = b"merging"  # the fingerprints being merged: sorted, 8 bytes each (big-endian)
MERGED = b"merged"  # how many main tables hold them already
#: New fingerprints up to this many are bisected into their buckets; more are merged with
#: numpy.
_FEW = 20_000
#: The recent tables are merged into the main ones when they hold this many fingerprints, or
#: a _RECENT_SHARE-th of the index if that is more (a merge rewrites most main table pages).
_RECENT_MIN = 1 << 14
_RECENT_SHARE = 64
#: The recent tables' layout is the one chosen for this many fingerprints.
RECENT_SIZE = 1 << 18
#: Bucket key width of the recent tables (part of format 3: a change bumps FORMAT_VERSION).
RECENT_KEY_BYTES = 2


def recent_limit(count: int) -> int:
    """How many fingerprints the recent tables of an index of ``count`` hold before a merge."""
    return max(_RECENT_MIN, count // _RECENT_SHARE)


def check_added(added: int, expected: int, what: str) -> None:
    """A sorted bulk write that skipped entries (out of order when appended) fails loudly."""
    if added != expected:
        raise RuntimeError(f"bulk load wrote {added} of {expected} {what} entries")


def read_count(txn: Txn, meta: Space, name: bytes = COUNT) -> int:
    """A stored count (0 when none is stored); DamagedIndexError when it is no number (the
    check at open reads it too, but another process may write it while this one has the
    index open)."""
    stored = txn.get(name, db=meta)
    value = b"0" if stored is None else bytes(stored)
    count = stored_count(value)
    if count is None:
        raise DamagedIndexError(f"index damaged: its count {name.decode()!r} is {value[:40]!r}")
    return count


def add_count(txn: Txn, meta: Space, delta: int, name: bytes = COUNT) -> int:
    """Add ``delta`` to a stored count (of distinct fingerprints unless ``name`` says
    otherwise); the new count."""
    count = read_count(txn, meta, name) + delta
    txn.put(meta, name, str(count).encode())
    return count


@dataclass(frozen=True)
class Tables:
    """One level of permuted tables: their plans, storage spaces and bucket encoding."""

    name: str  # in verify()'s messages
    plans: Sequence[TablePlan]
    spaces: Sequence[Space]
    codec: Buckets

    def part(self, start: int, stop: int) -> Tables:
        """Tables ``start`` to ``stop`` (excluded) of this level."""
        return Tables(self.name, self.plans[start:stop], self.spaces[start:stop], self.codec)

    def __iter__(self) -> Iterator[tuple[TablePlan, Space]]:
        return iter(zip(self.plans, self.spaces, strict=True))

    # -- reading ---------------------------------------------------------------------------

    def probe(self, txn: Txn, query: int, k: int, found: dict[int, int]) -> int:
        """Add the fingerprints within ``k`` of ``query`` to ``found`` ({fingerprint:
        distance}); the number of stored fingerprints scanned."""
        scanned = 0
        codec = self.codec
        w, vshift, key_bytes = codec.width, codec.shift, codec.key_bytes
        get, check = txn.get, codec.check
        for plan, space in self:
            permuted = plan.forward(query)
            shift = 64 - plan.prefix_bits
            if shift <= vshift:
                # The prefix covers the bucket key: one bucket, bisected to the prefix.
                key = (permuted >> vshift).to_bytes(key_bytes, "big")
                bucket = get(key, db=space)
                if bucket is None:
                    continue
                check(key, bucket)  # read in place: the values, then the checksum
                high = (permuted >> vshift) << vshift
                low = permuted & codec.value_mask
                start = (low >> shift) << shift
                end = start + (1 << shift)
                i = codec.position(bucket, start) * w if start else 0
                size = len(bucket) - CHECK
                while i < size:
                    v = int.from_bytes(bucket[i : i + w], "big")
                    if v >= end:
                        break
                    scanned += 1
                    distance = (v ^ low).bit_count()
                    if distance <= k:
                        found[plan.inverse(high | v)] = distance
                    i += w
            else:
                # A prefix narrower than the key: every bucket in its range, whole.
                first = (permuted >> shift) << shift
                last_key = (first | ((1 << shift) - 1)) >> vshift
                start_key = (first >> vshift).to_bytes(key_bytes, "big")
                for key, bucket in txn.scan(space, start_key):
                    high = int.from_bytes(key, "big")
                    if high > last_key:
                        break
                    check(key, bucket)
                    high <<= vshift
                    for i in range(0, len(bucket) - CHECK, w):
                        v = high | int.from_bytes(bucket[i : i + w], "big")
                        scanned += 1
                        distance = (v ^ permuted).bit_count()
                        if distance <= k:
                            found[plan.inverse(v)] = distance
        return scanned

    def contents(self, txn: Txn, i: int) -> tuple[np.ndarray, list[str]]:
        """The fingerprints table ``i`` holds (sorted, without repeats), and the problems of
        its buckets' shapes and order."""
        codec = self.codec
        problems = []
        entries = []
        for key, bucket in txn.scan(self.spaces[i]):
            try:
                entries.append((key, codec.opened(key, bucket)))
            except DamagedIndexError as exc:
                problems.append(f"{self.name} {i}: {exc}")
        permuted = bucket_values(entries, codec)
        if not (permuted[1:] > permuted[:-1]).all():
            problems.append(f"{self.name} {i} is out of order or holds repeats")
        return sorted_distinct(self.plans[i].inverse_np(permuted)), problems

    # -- writing ---------------------------------------------------------------------------

    def add(self, txn: Txn, fingerprint: int) -> None:
        """One fingerprint into its bucket of every table."""
        codec = self.codec
        for plan, space in self:
            key, value = codec.split(plan.forward(fingerprint))
            bucket = codec.added(self._values(txn, space, key), value)
            if bucket is not None:
                txn.put(space, key, codec.seal(key, bucket))

    def remove(self, txn: Txn, fingerprint: int) -> bool:
        """Remove ``fingerprint``; False (nothing changed) if the first table lacks it."""
        codec = self.codec
        for i, (plan, space) in enumerate(self):
            key, value = codec.split(plan.forward(fingerprint))
            old = self._values(txn, space, key)
            bucket = None if old is None else codec.removed(old, value)
            if bucket:
                txn.put(space, key, codec.seal(key, bucket))
            elif bucket is not None:
                txn.delete(space, key)
            elif i == 0:
                return False
        return True

    def put_sorted(self, txn: Txn, fingerprints: np.ndarray) -> None:
        """Add distinct fingerprints new to these tables, each bucket touched written once."""
        if fingerprints.size <= _FEW:
            self._insert_sorted(txn, fingerprints.tolist())
        else:
            self._merge_sorted(txn, fingerprints)

    def _insert_sorted(self, txn: Txn, fingerprints: list[int]) -> None:
        """A few fingerprints: bisected into their buckets, one bucket after the other."""
        codec = self.codec
        shift, added = codec.shift, codec.added
        for plan, space in self:
            permuted = sorted(map(plan.forward, fingerprints))
            i = 0
            while i < len(permuted):
                high = permuted[i] >> shift
                key = high.to_bytes(codec.key_bytes, "big")
                bucket = self._values(txn, space, key)
                while i < len(permuted) and permuted[i] >> shift == high:
                    bucket = added(bucket, permuted[i] & codec.value_mask) or bucket
                    i += 1
                assert bucket is not None
                txn.put(space, key, codec.seal(key, bucket))

    def _merge_sorted(self, txn: Txn, fingerprints: np.ndarray) -> None:
        """Many fingerprints: each table's new entries sorted with numpy (in a background
        thread, a table or two ahead), merged with the buckets they fall in, and the buckets
        written in key order."""
        whole = [txn.count(space) == 0 for space in self.spaces]
        with self.ahead(fingerprints, whole) as ahead:
            for space, w, result in zip(self.spaces, whole, ahead, strict=True):
                if w:
                    self.write_buckets(txn, space, result[1])
                    continue
                permuted = self._merge_buckets(txn, space, result)
                self.write_buckets(txn, space, bucket_entries(permuted, self.codec))

    def _merge_buckets(self, txn: Txn, space: Space, permuted: np.ndarray) -> np.ndarray:
        """Sorted ``permuted`` values together with those already in the buckets they fall in
        (a bucket is rewritten whole)."""
        codec = self.codec
        keys = sorted_distinct(permuted >> np.uint64(codec.shift))
        width = codec.key_bytes
        raw = keys.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - width :]
        old = []
        for key in raw.copy().view(f"V{width}").ravel().tolist():
            bucket = self._values(txn, space, key)
            if bucket is not None:
                old.append((key, bucket))
        return np.sort(np.concatenate([bucket_values(old, codec), permuted]))

    def ahead(self, fingerprints: np.ndarray, whole: Sequence[bool] | None = None) -> Ahead:
        """Each table's entries for ``fingerprints`` (see :meth:`entries`), computed in a
        background thread: all of them ahead when they take at most 1 GiB, else two."""
        if whole is None:
            whole = [True] * len(self.plans)
        calls = [
            partial(self.entries, plan, fingerprints, w)
            for plan, w in zip(self.plans, whole, strict=True)
        ]
        fit = (1 << 30) // max(1, 8 * fingerprints.size)
        return Ahead(calls, depth=max(2, min(len(calls), fit)))

    def entries(self, plan: TablePlan, fingerprints: np.ndarray, whole: bool) -> Any:
        """A table's permutation of ``fingerprints``, sorted and without repeats; as
        ``(count, bucket entries)`` when ``whole`` (the table is empty: nothing to merge
        with)."""
        permuted = sorted_distinct(plan.forward_np(fingerprints), in_place=True)
        return (permuted.size, bucket_entries(permuted, self.codec)) if whole else permuted

    def _values(self, txn: Txn, space: Space, key: bytes) -> bytes | None:
        """The values of the bucket ``key`` (checked), or None when there is none."""
        bucket = txn.get(key, db=space)
        return None if bucket is None else self.codec.opened(key, bucket)

    def write_buckets(self, txn: Txn, space: Space, entries: list[Any]) -> None:
        """Write a table's bucket entries (key, values), in key order, sealed."""
        seal = self.codec.seal
        sealed = [(key, seal(key, values)) for key, values in entries]
        # Not appended: pages split half full leave room for later single inserts (a full
        # page splits on the next one, writing two pages and its parent).
        check_added(txn.put_many(space, sealed), len(entries), "table")


class Levels:
    """The main tables and, for large layouts, the recent tables, with the staged merge
    between them and the counts kept in ``meta``."""

    def __init__(self, main: Tables, recent: Tables | None, meta: Space, path: str) -> None:
        self.main = main
        self.recent = recent
        self.meta = meta
        self._path = path  # in log lines

    def probe(self, txn: Txn, query: int, k: int, found: dict[int, int]) -> int:
        """Both levels' fingerprints within ``k`` of ``query``, into ``found``; how many
        stored fingerprints were scanned."""
        scanned = self.main.probe(txn, query, k, found)
        if self.recent is not None:
            scanned += self.recent.probe(txn, query, k, found)
        return scanned

    def add(self, txn: Txn, fingerprint: int) -> None:
        """A fingerprint new to the index, into the recent tables if there are any."""
        tables = self.recent or self.main
        tables.add(txn, fingerprint)
        self._counted(txn, 1, tables is self.recent)

    def put(self, txn: Txn, fingerprints: np.ndarray) -> None:
        """Fingerprints new to the index, sorted into every table: each bucket touched is
        written once. Into the recent tables unless they are as many as a merge of them."""
        if not fingerprints.size:
            return
        count = int(fingerprints.size)
        tables = self.main  # where a merge's worth goes straight
        indexed = read_count(txn, self.meta) + count
        if self.recent is not None and count < recent_limit(indexed):
            tables = self.recent
        tables.put_sorted(txn, fingerprints)
        self._counted(txn, count, tables is self.recent)

    def remove(self, txn: Txn, fingerprint: int) -> None:
        """A fingerprint no document has any more, out of the level that holds it."""
        if self.recent is not None and self.recent.remove(txn, fingerprint):
            add_count(txn, self.meta, -1, RECENT)
            self._unmerge(txn, fingerprint)
        else:
            self.main.remove(txn, fingerprint)
        add_count(txn, self.meta, -1)

    def merging(self, txn: Txn) -> tuple[np.ndarray, int] | None:
        """The fingerprints being merged into the main tables, sorted, and how many main
        tables hold them already; None between merges."""
        merging = txn.get(MERGING, db=self.meta)
        if merging is None:
            return None
        done = bytes(txn.get(MERGED, db=self.meta) or b"0")
        if not done.isdigit():
            raise DamagedIndexError(f"index damaged: the merged tables' count is {done!r}")
        if len(merging) % 8:
            raise DamagedIndexError(
                f"index damaged: the fingerprints being merged take {len(merging)} bytes,"
                " not 8 each"
            )
        return np.frombuffer(merging, dtype=">u8").astype(np.uint64), int(done)

    def _counted(self, txn: Txn, added: int, recent: bool) -> None:
        """Count ``added`` new fingerprints (in the recent tables if ``recent``, which then
        take a step towards the main tables)."""
        count = add_count(txn, self.meta, added)
        if recent:
            self._merge_step(txn, add_count(txn, self.meta, added, RECENT), count)

    def _merge_step(self, txn: Txn, held: int, count: int) -> None:
        """Merge the recent tables into one more main table, one table per call (per write
        of new fingerprints, so no commit is long): a merge begins once they hold
        :func:`recent_limit` fingerprints, which stay in the recent tables (and are found
        there) until every main table has them. Fingerprints added meanwhile go to the recent
        tables and wait for the next merge."""
        assert self.recent is not None
        main, meta = self.main, self.meta
        merging = self.merging(txn)
        if merging is None:
            if held < recent_limit(count):
                return
            fingerprints, _ = self.recent.contents(txn, 0)
            txn.put(meta, MERGING, fingerprints.astype(">u8").tobytes())
            merging = fingerprints, 0
            logger.info(
                "index %s: merging %d recent fingerprints into the main tables, a table at a time",
                self._path,
                fingerprints.size,
            )
        fingerprints, done = merging
        main.part(done, done + 1).put_sorted(txn, fingerprints)
        done += 1
        if done < len(main.spaces):
            txn.put(meta, MERGED, str(done).encode())
            return
        # Every main table has them: the recent tables keep what came since.
        held_now, _ = self.recent.contents(txn, 0)
        kept = np.setdiff1d(held_now, fingerprints, assume_unique=True)
        for space in self.recent.spaces:
            txn.clear(space)
        if kept.size:
            self.recent.put_sorted(txn, kept)
        txn.put(meta, RECENT, str(kept.size).encode())
        txn.delete(meta, MERGING)
        txn.delete(meta, MERGED)
        logger.info("index %s: merged %d recent fingerprints", self._path, fingerprints.size)

    def _unmerge(self, txn: Txn, fingerprint: int) -> None:
        """Take ``fingerprint`` out of a merge in progress, and out of the main tables that
        have it already."""
        merging = self.merging(txn)
        if merging is None:
            return
        fingerprints, done = merging
        at = int(np.searchsorted(fingerprints, np.uint64(fingerprint)))
        if at == fingerprints.size or int(fingerprints[at]) != fingerprint:
            return
        txn.put(self.meta, MERGING, np.delete(fingerprints, at).astype(">u8").tobytes())
        self.main.part(0, done).remove(txn, fingerprint)


def open_levels(
    layout: Layout,
    recent_layout: Layout | None,
    codec: Buckets,
    space: Any,
    meta: Space,
    path: str,
) -> Levels:
    """The levels of an index, their spaces opened with ``space(name)``."""
    main = Tables(
        "table", layout.plans, [space(main_table(i)) for i in range(layout.tables)], codec
    )
    recent = None
    if recent_layout is not None:
        spaces = [space(recent_table(i)) for i in range(recent_layout.tables)]
        recent = Tables("recent table", recent_layout.plans, spaces, Buckets(RECENT_KEY_BYTES))
    return Levels(main, recent, meta, path)
