"""A persistent index that finds every stored simhash within Hamming distance k.

Manku, Jain and Das Sarma's permuted tables ("Detecting Near-Duplicates for Web Crawling",
WWW 2007, section 3) on LMDB: exact (never approximate), on disk, shared by several processes.

One LMDB environment per index directory holds these named databases:

* ``meta``: format version, fingerprint version, k and the layout (checked at every open);
* ``docs``: document id (16-byte hash of the key) -> fingerprint, first-seen time, key, record;
* ``fps``: fingerprint (8 bytes) -> document ids (DUPSORT+DUPFIXED: documents may share one);
* ``t00``, ``t01``, ...: one per table, the permuted fingerprints grouped in buckets by their
  top ``key_bytes`` bytes (1-3, chosen at creation from the expected size and stored in
  ``meta``): one entry per bucket, whose value is the sorted run of the other bytes of its
  fingerprints, bisected by a query. A bulk load writes one entry per bucket, not one per
  fingerprint.
* ``r00``, ``r01``, ...: the *recent* tables, a second level for layouts of more tables than
  a small index needs (k=3: 4 recent tables beside 10): fingerprints added a few at a time
  go there (buckets with 2-byte keys), and are merged into the main tables, sorted, once the
  recent tables hold a 64th of the index (at least 16,384), one main table per write of new
  fingerprints (a commit, or every 4096 inside a batch). A random fingerprint written into the
  main tables rewrites a page of each; merged by the hundred thousand, the main tables' pages
  are rewritten once for many. Queries probe both levels.

``meta`` also counts the distinct fingerprints (what the main and recent tables hold between
them) and those in the recent tables, and holds a merge in progress (its fingerprints, and
how many main tables have them).

Every change is one write transaction, so a killed process loses only uncommitted work, and
``check_and_insert`` is atomic across processes. Reads use one short transaction per call.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from typing import Any

import lmdb
import numpy as np

from ..text.fingerprint import FINGERPRINT_VERSION
from . import lmdb_env as _lmdb
from .bulk import (
    LINK,
    Ahead,
    Pending,
    Prepared,
    bucket_entries,
    bucket_values,
    fingerprint_bytes,
    gc_paused,
    links,
    prepare,
    read_items,
    sorted_distinct,
)
from .layout import MAX_SUPPORTED_DISTANCE, Layout, TablePlan, choose_layout
from .pairs import near_pairs
from .records import (
    Buckets,
    Entry,
    check_fingerprint,
    check_key,
    choose_key_bytes,
    decode_doc,
    decode_header,
    decode_key,
    doc_id,
)

__all__ = ["FORMAT_VERSION", "IndexMismatchError", "Layout", "Match", "SimhashIndex"]

logger = logging.getLogger(__name__)

#: Version of the on-disk format written by this module; other versions are refused.
#: 2: tables of sorted buckets (1 had a DUPSORT entry per fingerprint and table).
#: 3: recent tables beside the main ones.
FORMAT_VERSION = 3
#: k of a new index when none is given.
DEFAULT_MAX_DISTANCE = 3

_META = b"meta"
_DOCS = b"docs"
_FPS = b"fps"
_COUNT = b"fingerprints"
_RECENT = b"recent"
_MERGING = b"merging"  # the fingerprints being merged: sorted, 8 bytes each (big-endian)
_MERGED = b"merged"  # how many main tables hold them already
_CHUNK = 1000  # entries per read transaction when streaming
_PENDING_MAX = 4096  # held-back table entries written before a batch commits
_FEW = 20_000  # new fingerprints bisected into their buckets; more are merged with numpy
#: The recent tables are merged into the main ones when they hold this many fingerprints, or
#: a _RECENT_SHARE-th of the index if that is more (a merge rewrites most main table pages).
_RECENT_MIN = 1 << 14
_RECENT_SHARE = 64
#: The recent tables' layout is the one chosen for this many fingerprints.
_RECENT_SIZE = 1 << 18
#: Bucket key width of the recent tables (part of format 3: a change bumps FORMAT_VERSION).
_RECENT_KEY_BYTES = 2


class IndexMismatchError(ValueError):
    """The index on disk was built with other parameters (k, layout, fingerprint or format
    version) than the ones asked for or understood by this code."""


@dataclass(frozen=True)
class _Tables:
    """One level of permuted tables: their plans, LMDB databases and bucket encoding."""

    name: str  # in verify()'s messages
    plans: Sequence[TablePlan]
    dbs: Sequence[Any]
    codec: Buckets

    def part(self, start: int, stop: int) -> _Tables:
        """Tables ``start`` to ``stop`` (excluded) of this level."""
        return _Tables(self.name, self.plans[start:stop], self.dbs[start:stop], self.codec)


@dataclass(frozen=True)
class Match:
    """A stored document near a query."""

    fingerprint: int
    key: str
    distance: int
    record: dict[str, Any]


def _fp_bytes(fingerprint: int) -> bytes:
    return fingerprint.to_bytes(8, "big")


class SimhashIndex:
    """Every stored fingerprint within ``max_distance`` bits of a query, from an LMDB index.

    ``path`` is a directory (created if missing, unless ``readonly``). A new index chooses its
    layout from ``max_distance`` (default 3) and ``expected_size`` so that table prefixes are
    close to log2(N) bits, or takes ``layout`` as given. An existing index keeps the k and layout
    it was built with: ``expected_size`` is then ignored, while a different ``max_distance`` or
    ``layout``, or an index written by another fingerprint or format version, raises
    :class:`IndexMismatchError` naming both values. ``reset=True`` empties the index at open and
    starts afresh with the given parameters.

    ``readonly=True`` inspects an index (which must exist) while other processes write to it;
    ``create=False`` opens an existing index for writing and never creates one.
    The environment is opened once per process and path and shared by every index object on it;
    after ``fork`` the child opens its own. ``map_size`` is reserved once, sparse, and large
    (1 TiB on 64-bit) so that the map is never full and never grown.

    ``sync=False`` does not flush each commit to disk (LMDB's ``MDB_NOSYNC``): commits are
    faster, and a killed process still loses nothing committed, but an OS crash or power loss
    can lose recent commits or damage the index. It applies to the environment opened first in
    this process for ``path``.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_distance: int | None = None,
        expected_size: int = 1_000_000,
        *,
        readonly: bool = False,
        reset: bool = False,
        create: bool = True,
        map_size: int = _lmdb.DEFAULT_MAP_SIZE,
        layout: Layout | None = None,
        sync: bool = True,
    ) -> None:
        self.path = os.fspath(path)
        self.readonly = bool(readonly)
        self._create = bool(create) and not self.readonly
        if max_distance is not None:
            max_distance = _check_distance(max_distance, "max_distance", MAX_SUPPORTED_DISTANCE)
        if isinstance(expected_size, bool) or not isinstance(expected_size, int):
            raise TypeError(f"expected_size must be an int, got {type(expected_size).__name__}")
        if expected_size < 1:
            raise ValueError(f"expected_size must be >= 1, got {expected_size}")
        if layout is not None and max_distance is not None and layout.max_distance != max_distance:
            raise ValueError(
                f"layout is for max_distance={layout.max_distance}, not {max_distance}"
            )
        if readonly and reset:
            raise ValueError("reset=True cannot be used with readonly=True")
        if not self._create:
            if not os.path.exists(os.path.join(self.path, "data.mdb")):
                raise FileNotFoundError(f"no index at {self.path!r}")
        else:
            os.makedirs(self.path, exist_ok=True)
        self._closed = True
        self._batch: lmdb.Transaction | None = None
        self._batch_ops = 0
        self._batch_size = 0
        self._pending = Pending()
        self._queries = 0
        self._candidates = 0
        self._sync = bool(sync)
        self._shared = _lmdb.acquire(self.path, self.readonly, map_size, self._sync)
        self._closed = False
        try:
            self.layout = self._open_meta(max_distance, expected_size, layout, reset)
        except BaseException:
            self.close()
            raise
        self.max_distance = self.layout.max_distance
        self._open_dbs()

    # -- opening -------------------------------------------------------------------------

    def _open_meta(
        self, max_distance: int | None, expected_size: int, layout: Layout | None, reset: bool
    ) -> Layout:
        env = self._shared.env
        try:
            meta = self._shared.db(_META, create=self._create)
        except lmdb.NotFoundError:
            raise ValueError(f"{self.path!r} is an LMDB environment, not an index") from None
        with env.begin() as txn:
            stored = dict(txn.cursor(db=meta))
        if stored and reset:
            self._reset()
            stored = {}
        if not stored:
            if not self._create:
                raise ValueError(f"{self.path!r} holds no index")
            k = DEFAULT_MAX_DISTANCE if max_distance is None else max_distance
            if layout is None:
                layout = choose_layout(k, expected_size)
            key_bytes = choose_key_bytes(expected_size, min(layout.prefix_bits))
            recent = choose_layout(k, _RECENT_SIZE)
            recent_json = recent.to_json() if recent.tables < layout.tables else ""
            with env.begin(write=True) as txn:
                txn.put(b"format_version", str(FORMAT_VERSION).encode(), db=meta)
                txn.put(b"fingerprint_version", str(FINGERPRINT_VERSION).encode(), db=meta)
                txn.put(b"max_distance", str(k).encode(), db=meta)
                txn.put(b"layout", layout.to_json().encode(), db=meta)
                txn.put(b"key_bytes", str(key_bytes).encode(), db=meta)
                txn.put(b"recent_layout", recent_json.encode(), db=meta)
                txn.put(_COUNT, b"0", db=meta)
                txn.put(_RECENT, b"0", db=meta)
                txn.put(b"created", repr(time.time()).encode(), db=meta)
            logger.debug("created index %s: %s, %d-byte buckets", self.path, layout, key_bytes)
            self._codec = Buckets(key_bytes)
            self.recent_layout = Layout.from_json(recent_json) if recent_json else None
            return layout
        layout = self._check_meta(stored, max_distance, layout)
        try:
            self._codec = Buckets(int(stored[b"key_bytes"]))
            recent_json = stored[b"recent_layout"].decode()
            self.recent_layout = Layout.from_json(recent_json) if recent_json else None
        except (KeyError, ValueError) as exc:
            raise IndexMismatchError(f"index {self.path!r}: bad bucket meta ({exc})") from None
        return layout

    def _check_meta(
        self, stored: dict[bytes, bytes], max_distance: int | None, layout: Layout | None
    ) -> Layout:
        def differ(what: str, on_disk: object, wanted: object) -> IndexMismatchError:
            return IndexMismatchError(
                f"index {self.path!r} was built with {what}={on_disk}, not {wanted}"
            )

        fmt = int(stored.get(b"format_version", b"0"))
        if fmt != FORMAT_VERSION:
            raise differ("format_version", fmt, f"{FORMAT_VERSION} (this code's format)")
        fpv = int(stored.get(b"fingerprint_version", b"0"))
        if fpv != FINGERPRINT_VERSION:
            raise differ(
                "fingerprint_version", fpv, f"{FINGERPRINT_VERSION} (this code's fingerprints)"
            )
        k = int(stored[b"max_distance"])
        if max_distance is not None and max_distance != k:
            raise differ("max_distance", k, max_distance)
        try:
            on_disk = Layout.from_json(stored[b"layout"].decode())
        except ValueError as exc:
            raise IndexMismatchError(f"index {self.path!r}: {exc}") from None
        if layout is not None and layout != on_disk:
            raise differ("layout", f"'{on_disk}'", f"'{layout}'")
        return on_disk

    def _reset(self) -> None:
        """Empty every database of the index (tables are deleted: the new layout may differ)."""
        shared = self._shared
        if shared.refs > 1:
            raise ValueError(f"cannot reset {self.path!r}: it is open elsewhere in this process")
        with shared.env.begin() as txn:
            names = [bytes(name) for name, _ in txn.cursor()]
        fixed = {"dupsort": True, "dupfixed": True}
        handles = [(shared.db(_META), False), (shared.db(_DOCS), False)]
        handles.append((shared.db(_FPS, **fixed), False))
        tables = [n for n in names if n[:1] in (b"t", b"r")]
        handles += [(shared.db(n, **fixed), True) for n in tables]
        with shared.env.begin(write=True) as txn:
            for handle, delete in handles:
                txn.drop(handle, delete=delete)
        for name in tables:
            shared.dbs.pop(name, None)
        logger.info("reset index %s", self.path)

    def _open_dbs(self) -> None:
        shared = self._shared
        fixed = {"dupsort": True, "dupfixed": True}
        self._docs = shared.db(_DOCS)
        self._fps = shared.db(_FPS, **fixed)
        self._meta = shared.db(_META)
        dbs = [shared.db(b"t%02d" % i) for i in range(self.layout.tables)]
        self._main = _Tables("table", self.layout.plans, dbs, self._codec)
        self._recent: _Tables | None = None
        if self.recent_layout is not None:
            dbs = [shared.db(b"r%02d" % i) for i in range(self.recent_layout.tables)]
            self._recent = _Tables(
                "recent table", self.recent_layout.plans, dbs, Buckets(_RECENT_KEY_BYTES)
            )

    # -- transactions ----------------------------------------------------------------------

    def _env(self) -> lmdb.Environment:
        if self._closed:
            raise ValueError(f"index {self.path!r} is closed")
        if self._shared.stale:  # forked: never touch the parent's environment
            logger.debug("reopening index %s after fork", self.path)
            self._batch = None
            self._pending.take()
            self._shared = _lmdb.acquire(
                self.path, self.readonly, _lmdb.DEFAULT_MAP_SIZE, self._sync
            )
            self._open_dbs()
        return self._shared.env

    @contextmanager
    def _read(self) -> Iterator[lmdb.Transaction]:
        env = self._env()
        if self._batch is not None:
            yield self._batch
            return
        with env.begin() as txn:
            yield txn

    @contextmanager
    def _write(self, single: bool = False) -> Iterator[lmdb.Transaction]:
        """A write transaction for one operation. Inside a batch, the operation runs in a
        nested transaction (one that fails leaves the batch untouched), or, when ``single``
        (an operation that checked its input and cannot fail before it writes), in the batch
        transaction itself: nesting costs more than the operation once the batch holds
        thousands of pages. Such an operation interrupted midway rolls back the whole
        uncommitted batch."""
        env = self._env()
        if self.readonly:
            raise ValueError(f"index {self.path!r} is open read-only")
        if self._batch is None:
            with env.begin(write=True) as txn:
                yield txn
            return
        if single:
            try:
                yield self._batch
            except BaseException:
                self._restart_batch(env)
                raise
        else:
            self._pending.begin()
            try:
                with env.begin(write=True, parent=self._batch) as txn:
                    yield txn
            except BaseException:
                self._pending.rollback()
                raise
            self._pending.keep()
        self._batch_ops += 1
        if self._batch_ops >= self._batch_size:
            self._commit_batch(env)
        elif len(self._pending) >= _PENDING_MAX:
            self._flush()

    def _restart_batch(self, env: lmdb.Environment) -> None:
        """Roll back the uncommitted batch and begin it afresh."""
        assert self._batch is not None
        self._batch.abort()
        self._pending.take()
        self._batch = env.begin(write=True)
        self._batch_ops = 0

    def _flush(self) -> None:
        """Write the pending table entries into the batch transaction (an LMDB error there
        rolls back the whole uncommitted batch, as its documents lack their entries)."""
        if not len(self._pending):
            return
        assert self._batch is not None
        try:
            self._put_tables(self._batch, self._pending.take())
        except lmdb.Error:
            self._restart_batch(self._env())
            raise

    def _commit_batch(self, env: lmdb.Environment | None) -> None:
        """Flush and commit the batch transaction; begin the next one if ``env`` is given."""
        assert self._batch is not None
        self._flush()
        self._batch.commit()
        self._batch = None if env is None else env.begin(write=True)
        self._batch_ops = 0

    @contextmanager
    def batch(self, commit_every: int = 1000) -> Iterator[SimhashIndex]:
        """Group the writes made inside the block into transactions of ``commit_every``
        operations (committed when full and at the end): the way to insert one by one quickly.

        Reads inside the block see the uncommitted writes. Other processes' writers wait while
        a batch transaction is open, so keep blocks short-lived. Each operation is atomic: one
        whose input is bad fails before it writes, and leaves the batch untouched. When the
        block raises, the operations done so far are committed, except after an LMDB error or
        an exception inside an operation (such as KeyboardInterrupt), which roll back those
        not committed yet.

        The table entries of fingerprints new to the index are held back until the
        transaction commits and then written sorted, a bucket at a time (queries in the block
        meanwhile search them by brute force): random single inserts would otherwise rewrite
        a bucket per table each.
        """
        if commit_every < 1:
            raise ValueError(f"commit_every must be >= 1, got {commit_every}")
        if self._batch is not None:
            raise RuntimeError("batch() blocks do not nest")
        env = self._env()
        if self.readonly:
            raise ValueError(f"index {self.path!r} is open read-only")
        self._batch = env.begin(write=True)
        self._batch_ops = 0
        self._batch_size = commit_every
        try:
            yield self
        except lmdb.Error:
            if self._batch is not None:
                self._batch.abort()
            raise
        except BaseException:
            if self._batch is not None:
                self._commit_batch(None)
            raise
        else:
            if self._batch is not None:
                self._commit_batch(None)
        finally:
            if self._batch is not None:  # left open only by an LMDB error at the end
                self._batch.abort()
            self._batch = None
            self._pending.take()

    # -- writing ---------------------------------------------------------------------------

    def _count(self, txn: lmdb.Transaction, delta: int, name: bytes = _COUNT) -> int:
        """Add ``delta`` to a stored count (of distinct fingerprints unless ``name`` says
        otherwise); the new count."""
        count = int(txn.get(name, b"0", db=self._meta)) + delta
        txn.put(name, str(count).encode(), db=self._meta)
        return count

    def _add_to_tables(self, txn: lmdb.Transaction, fingerprint: int) -> None:
        if self._batch is not None:
            self._pending.add(fingerprint)
            return
        tables = self._recent or self._main
        split, added = tables.codec.split, tables.codec.added
        for plan, db in zip(tables.plans, tables.dbs, strict=True):
            key, value = split(plan.forward(fingerprint))
            bucket = added(txn.get(key, db=db), value)
            if bucket is not None:
                txn.put(key, bucket, db=db)
        self._counted(txn, 1, tables is self._recent)

    def _counted(self, txn: lmdb.Transaction, added: int, recent: bool) -> None:
        """Count ``added`` new fingerprints (in the recent tables if ``recent``, which then
        take a step towards the main tables)."""
        count = self._count(txn, added)
        if recent:
            self._merge_step(txn, self._count(txn, added, _RECENT), count)

    def _merging(self, txn: lmdb.Transaction) -> tuple[np.ndarray, int] | None:
        """The fingerprints being merged into the main tables, sorted, and how many main
        tables hold them already; None between merges."""
        merging = txn.get(_MERGING, db=self._meta)
        if merging is None:
            return None
        done = int(txn.get(_MERGED, b"0", db=self._meta))
        return np.frombuffer(merging, dtype=">u8").astype(np.uint64), done

    def _merge_step(self, txn: lmdb.Transaction, held: int, count: int) -> None:
        """Merge the recent tables into one more main table, one table per call (per write
        of new fingerprints, so no commit is long): a merge begins once they hold
        :func:`_recent_limit` fingerprints, which stay in the recent tables (and are found
        there) until every main table has them. Fingerprints added meanwhile go to the recent
        tables and wait for the next merge."""
        assert self._recent is not None
        main, meta = self._main, self._meta
        merging = self._merging(txn)
        if merging is None:
            if held < _recent_limit(count):
                return
            fingerprints, _ = self._table_contents(txn, self._recent, 0)
            txn.put(_MERGING, fingerprints.astype(">u8").tobytes(), db=meta)
            merging = fingerprints, 0
            logger.info(
                "index %s: merging %d recent fingerprints into the main tables, a table at a time",
                self.path,
                fingerprints.size,
            )
        fingerprints, done = merging
        self._put_sorted(txn, main.part(done, done + 1), fingerprints)
        done += 1
        if done < len(main.dbs):
            txn.put(_MERGED, str(done).encode(), db=meta)
            return
        # Every main table has them: the recent tables keep what came since.
        held_now, _ = self._table_contents(txn, self._recent, 0)
        kept = np.setdiff1d(held_now, fingerprints, assume_unique=True)
        for db in self._recent.dbs:
            txn.drop(db, delete=False)
        if kept.size:
            self._put_sorted(txn, self._recent, kept)
        txn.put(_RECENT, str(kept.size).encode(), db=meta)
        txn.delete(_MERGING, db=meta)
        txn.delete(_MERGED, db=meta)
        logger.info("index %s: merged %d recent fingerprints", self.path, fingerprints.size)

    def _remove_from_tables(self, txn: lmdb.Transaction, fingerprint: int) -> None:
        if self._batch is not None and self._pending.discard(fingerprint):
            return
        if self._recent is not None and self._remove_from(txn, self._recent, fingerprint):
            self._count(txn, -1, _RECENT)
            self._unmerge(txn, fingerprint)
        else:
            self._remove_from(txn, self._main, fingerprint)
        self._count(txn, -1)

    def _unmerge(self, txn: lmdb.Transaction, fingerprint: int) -> None:
        """Take ``fingerprint`` out of a merge in progress, and out of the main tables that
        have it already."""
        merging = self._merging(txn)
        if merging is None:
            return
        fingerprints, done = merging
        at = int(np.searchsorted(fingerprints, np.uint64(fingerprint)))
        if at == fingerprints.size or int(fingerprints[at]) != fingerprint:
            return
        txn.put(_MERGING, np.delete(fingerprints, at).astype(">u8").tobytes(), db=self._meta)
        self._remove_from(txn, self._main.part(0, done), fingerprint)

    def _remove_from(self, txn: lmdb.Transaction, tables: _Tables, fingerprint: int) -> bool:
        """Remove ``fingerprint`` from ``tables``; False (nothing changed) if the first of
        them does not hold it."""
        split, removed = tables.codec.split, tables.codec.removed
        for i, (plan, db) in enumerate(zip(tables.plans, tables.dbs, strict=True)):
            key, value = split(plan.forward(fingerprint))
            old = txn.get(key, db=db)
            bucket = None if old is None else removed(old, value)
            if bucket:
                txn.put(key, bucket, db=db)
            elif bucket is not None:
                txn.delete(key, db=db)
            elif i == 0:
                return False
        return True

    def _unlink(self, txn: lmdb.Transaction, fingerprint: int, docid: bytes) -> bool:
        """Detach a document from its fingerprint; True if that was the fingerprint's last."""
        fpb = _fp_bytes(fingerprint)
        txn.delete(fpb, docid, db=self._fps)
        if txn.get(fpb, db=self._fps) is None:
            self._remove_from_tables(txn, fingerprint)
            return True
        return False

    def _link(self, txn: lmdb.Transaction, fingerprint: int, docid: bytes) -> bool:
        """Attach a document to a fingerprint; True if the fingerprint is new."""
        fpb = _fp_bytes(fingerprint)
        new = txn.get(fpb, db=self._fps) is None
        txn.put(fpb, docid, db=self._fps, dupdata=True)
        return new

    def _store(
        self,
        txn: lmdb.Transaction,
        fingerprint: int,
        key: str,
        entry: Entry,
        now: float,
        tables: bool = True,
    ) -> bool:
        """Insert or replace one document; True if its fingerprint is new to the index (then
        added to the tables unless ``tables`` is False)."""
        docid = doc_id(key)
        old = txn.get(docid, db=self._docs)
        seen = now if entry.seen is None else entry.seen
        old_fp = None
        if old is not None:
            old_fp, old_seen = decode_header(old)
            if entry.seen is None:
                seen = old_seen
        new = False
        if old_fp is None:
            new = self._link(txn, fingerprint, docid)
        else:
            if old_fp != fingerprint:
                self._unlink(txn, old_fp, docid)
                new = self._link(txn, fingerprint, docid)
        txn.put(docid, entry.data(fingerprint, seen), db=self._docs)
        if new and tables:
            self._add_to_tables(txn, fingerprint)
        return new

    def insert(self, fingerprint: int, key: str, **record: Any) -> None:
        """Store ``key`` with ``fingerprint`` and a JSON-serializable ``record``.

        A key stored before is replaced (a recrawled URL): its fingerprint and record change,
        its first-seen time ``seen`` stays unless ``seen=`` is given.
        """
        fingerprint = check_fingerprint(fingerprint)
        entry = Entry(check_key(key), record)
        with self._write(single=True) as txn:
            self._store(txn, fingerprint, key, entry, time.time())

    def insert_many(self, items: Iterable[tuple[int, str, dict[str, Any]]]) -> int:
        """Store many ``(fingerprint, key, record)`` in one write transaction (the last of
        repeated keys wins); returns how many items were read.

        New keys are written sorted (appended without comparisons into an empty index), and
        each table's buckets are written once each, in order: the fast path for a bulk import.
        Keys already stored are replaced as by :meth:`insert`. Every item is checked before
        anything is written. The garbage collector is paused during the call, and the tables
        (and, into an empty index, the fingerprint links) are sorted in a background thread
        (numpy; LMDB is used from the calling thread only).
        """
        with gc_paused():
            # The columns and the prepared batch (lists of millions of items) are freed before
            # the collector resumes: else its first collection traverses them (a second at 10^7).
            return self._insert_many(items)

    def _insert_many(self, items: Iterable[tuple[int, str, dict[str, Any]]]) -> int:
        columns = read_items(items)
        if not len(columns):
            return 0
        # Into an empty index, the tables are sorted in the background from now on.
        ahead = None
        if len(columns) > _FEW and self._empty():
            ahead = self._tables_ahead(self._main, columns.fingerprints)
        try:
            batch = prepare(columns, time.time())
            with self._write() as txn:
                self._load(txn, batch, ahead)
        finally:
            if ahead is not None:
                ahead.close()
        return batch.read

    def _empty(self) -> bool:
        with self._read() as txn:
            return txn.stat(self._docs)["entries"] == 0

    def _tables_ahead(
        self, tables: _Tables, fingerprints: np.ndarray, whole: Sequence[bool] | None = None
    ) -> Ahead:
        """Each table's entries for ``fingerprints`` (see :meth:`_table_entries`), computed in a
        background thread: all of them ahead when they take at most 1 GiB, else two."""
        if whole is None:
            whole = [True] * len(tables.plans)
        calls = [
            partial(self._table_entries, plan, tables.codec, fingerprints, w)
            for plan, w in zip(tables.plans, whole, strict=True)
        ]
        fit = (1 << 30) // max(1, 8 * fingerprints.size)
        return Ahead(calls, depth=max(2, min(len(calls), fit)))

    def _load(self, txn: lmdb.Transaction, batch: Prepared, ahead: Ahead | None) -> None:
        if txn.stat(self._docs)["entries"] == 0:
            if ahead is None or len(batch) != batch.read:  # repeated keys: fewer fingerprints
                if ahead is not None:
                    ahead.close()
                ahead = self._tables_ahead(self._main, batch.fingerprints)
            with ahead:
                self._load_empty(txn, batch, ahead)
            return
        if ahead is not None:  # sorted for an empty index, which another process filled
            ahead.close()
        # Keys stored before are replaced one by one; new ones are written sorted.
        fresh = []
        new_fps: list[int] = []
        now = time.time()
        for i, docid in enumerate(batch.docids()):
            if txn.get(docid, db=self._docs) is None:
                fresh.append(i)
                continue
            fp, key, record = batch.item(i)
            if self._store(txn, fp, key, Entry(key, record), now, tables=False):
                new_fps.append(fp)
        selected = np.array(fresh, dtype=np.int64)
        fps = batch.fingerprints[selected]
        with txn.cursor(self._docs) as cur:
            added = cur.putmulti(batch.entries(selected))
        _check_added(added, len(selected), "docs")
        # Fingerprints new to the index (checked before their links are written).
        new = sorted_distinct(fps)
        new = np.array(
            [
                f
                for f, b in zip(new.tolist(), fingerprint_bytes(new), strict=True)
                if txn.get(b, db=self._fps) is None
            ],
            dtype=np.uint64,
        )
        with txn.cursor(self._fps) as cur:
            added = cur.putmulti(LINK.iter_unpack(links(fps, batch.ids[selected])))
        _check_added(added, len(selected), "fps")
        # A fingerprint is new at most once per call (keys are unique in it), and no new one
        # is unlinked again: add them all to the tables, sorted per table.
        self._put_tables(txn, np.concatenate([np.array(new_fps, dtype=np.uint64), new]))

    def _load_empty(self, txn: lmdb.Transaction, batch: Prepared, tables: Ahead) -> None:
        """Bulk load into an empty index: every entry appended in order, while ``tables``
        computes the tables' entries in the background."""
        # The links are sorted in the background too, while the records are written.
        with Ahead([partial(links, batch.fingerprints, batch.ids)], depth=1) as rows:
            with txn.cursor(self._docs) as cur:
                added = cur.putmulti(batch.entries(), append=True)
            _check_added(added, len(batch), "docs")
            with txn.cursor(self._fps) as cur:
                added = cur.putmulti(LINK.iter_unpack(next(iter(rows))), append=True)
            _check_added(added, len(batch), "fps")
        count = 0
        for db, result in zip(self._main.dbs, tables, strict=True):
            count, entries = result
            self._write_buckets(txn, db, entries)
        self._count(txn, count)

    def _table_entries(
        self, plan: TablePlan, codec: Buckets, fingerprints: np.ndarray, whole: bool
    ) -> Any:
        """A table's permutation of ``fingerprints``, sorted and without repeats; as bucket
        entries when ``whole`` (the table is empty: nothing to merge with)."""
        permuted = sorted_distinct(plan.forward_np(fingerprints), in_place=True)
        return (permuted.size, bucket_entries(permuted, codec)) if whole else permuted

    def _write_buckets(self, txn: lmdb.Transaction, db: Any, entries: list[Any]) -> None:
        """Write a table's bucket entries, in key order."""
        with txn.cursor(db) as cur:
            # Not appended: pages split half full leave room for later single inserts (a
            # full page splits on the next one, writing two pages and its parent).
            added = cur.putmulti(entries)
        _check_added(added, len(entries), "table")

    def _put_tables(self, txn: lmdb.Transaction, fingerprints: np.ndarray) -> None:
        """Add fingerprints new to the index to every table, sorted: each bucket touched is
        written once. Into the recent tables unless they are as many as a merge of them."""
        if not fingerprints.size:
            return
        count = int(fingerprints.size)
        tables = self._main  # where a merge's worth goes straight
        indexed = int(txn.get(_COUNT, b"0", db=self._meta)) + count
        if self._recent is not None and count < _recent_limit(indexed):
            tables = self._recent
        self._put_sorted(txn, tables, fingerprints)
        self._counted(txn, count, tables is self._recent)

    def _put_sorted(self, txn: lmdb.Transaction, tables: _Tables, fingerprints: np.ndarray) -> None:
        if fingerprints.size <= _FEW:
            self._insert_sorted(txn, tables, fingerprints.tolist())
        else:
            self._merge_sorted(txn, tables, fingerprints)

    def _insert_sorted(
        self, txn: lmdb.Transaction, tables: _Tables, fingerprints: list[int]
    ) -> None:
        """A few fingerprints: bisected into their buckets, one bucket after the other."""
        codec = tables.codec
        shift, added = codec.shift, codec.added
        for plan, db in zip(tables.plans, tables.dbs, strict=True):
            permuted = sorted(map(plan.forward, fingerprints))
            i = 0
            while i < len(permuted):
                high = permuted[i] >> shift
                key = high.to_bytes(codec.key_bytes, "big")
                bucket = txn.get(key, db=db)
                while i < len(permuted) and permuted[i] >> shift == high:
                    bucket = added(bucket, permuted[i] & codec.value_mask) or bucket
                    i += 1
                txn.put(key, bucket, db=db)

    def _merge_sorted(
        self, txn: lmdb.Transaction, tables: _Tables, fingerprints: np.ndarray
    ) -> None:
        """Many distinct fingerprints: each table's new entries sorted with numpy (in a
        background thread, a table or two ahead), merged with the buckets they fall in, and
        the buckets written in key order."""
        whole = [txn.stat(db)["entries"] == 0 for db in tables.dbs]
        with self._tables_ahead(tables, fingerprints, whole) as ahead:
            for db, w, result in zip(tables.dbs, whole, ahead, strict=True):
                if w:
                    self._write_buckets(txn, db, result[1])
                    continue
                permuted = self._merge_buckets(txn, tables.codec, db, result)
                self._write_buckets(txn, db, bucket_entries(permuted, tables.codec))

    def _merge_buckets(
        self, txn: lmdb.Transaction, codec: Buckets, db: Any, permuted: np.ndarray
    ) -> np.ndarray:
        """Sorted ``permuted`` values together with those already in the buckets they fall in
        (a bucket is rewritten whole)."""
        keys = sorted_distinct(permuted >> np.uint64(codec.shift))
        width = codec.key_bytes
        raw = keys.astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - width :]
        old = []
        for key in raw.copy().view(f"V{width}").ravel().tolist():
            bucket = txn.get(key, db=db)
            if bucket is not None:
                old.append((key, bucket))
        return np.sort(np.concatenate([bucket_values(old, codec), permuted]))

    def remove(self, key: str) -> bool:
        """Remove the document stored under ``key``; False if there was none."""
        key = check_key(key)
        docid = doc_id(key)
        with self._write(single=True) as txn:
            old = txn.pop(docid, db=self._docs)
            if old is None:
                return False
            self._unlink(txn, decode_header(old)[0], docid)
            return True

    # -- reading ---------------------------------------------------------------------------

    def _probe(self, txn: lmdb.Transaction, query: int, k: int) -> dict[int, int]:
        """Stored fingerprints within ``k`` of ``query``: {fingerprint: distance}."""
        found: dict[int, int] = {}
        scanned = self._probe_tables(txn, self._main, query, k, found)
        if self._recent is not None:
            scanned += self._probe_tables(txn, self._recent, query, k, found)
        if len(self._pending):
            found.update(self._pending.near(query, k))
        self._queries += 1
        self._candidates += scanned
        return found

    def _probe_tables(
        self, txn: lmdb.Transaction, tables: _Tables, query: int, k: int, found: dict[int, int]
    ) -> int:
        """Add the fingerprints of ``tables`` within ``k`` of ``query`` to ``found``; the
        number of stored fingerprints scanned."""
        scanned = 0
        codec = tables.codec
        w, vshift, key_bytes = codec.width, codec.shift, codec.key_bytes
        for plan, db in zip(tables.plans, tables.dbs, strict=True):
            permuted = plan.forward(query)
            shift = 64 - plan.prefix_bits
            if shift <= vshift:
                # The prefix covers the bucket key: one bucket, bisected to the prefix.
                bucket = txn.get((permuted >> vshift).to_bytes(key_bytes, "big"), db=db)
                if bucket is None:
                    continue
                high = (permuted >> vshift) << vshift
                low = permuted & codec.value_mask
                start = (low >> shift) << shift
                end = start + (1 << shift)
                i = codec.position(bucket, start) * w if start else 0
                size = len(bucket)
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
                cur = txn.cursor(db)
                if not cur.set_range((first >> vshift).to_bytes(key_bytes, "big")):
                    continue
                for key, bucket in cur.iternext():
                    high = int.from_bytes(key, "big")
                    if high > last_key:
                        break
                    high <<= vshift
                    for i in range(0, len(bucket), w):
                        v = high | int.from_bytes(bucket[i : i + w], "big")
                        scanned += 1
                        distance = (v ^ permuted).bit_count()
                        if distance <= k:
                            found[plan.inverse(v)] = distance
        return scanned

    def _matches(
        self, txn: lmdb.Transaction, found: dict[int, int], exclude: bytes | None = None
    ) -> list[Match]:
        matches = []
        cur = txn.cursor(self._fps)
        for fingerprint, distance in found.items():
            if not cur.set_key(_fp_bytes(fingerprint)):
                continue
            for docid in cur.iternext_dup():
                if docid == exclude:
                    continue
                data = txn.get(docid, db=self._docs)
                if data is None:
                    continue
                _, key, record = decode_doc(data)
                matches.append(Match(fingerprint, key, distance, record))
        matches.sort(key=lambda m: (m.distance, m.key))
        return matches

    def _query_distance(self, max_distance: int | None) -> int:
        if max_distance is None:
            return self.max_distance
        return _check_distance(max_distance, "max_distance", self.max_distance)

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        """Every stored document within ``max_distance`` (default and at most the index's k)
        bits of ``fingerprint``, nearest first, then by key."""
        fingerprint = check_fingerprint(fingerprint)
        k = self._query_distance(max_distance)
        with self._read() as txn:
            return self._matches(txn, self._probe(txn, fingerprint, k))

    def query_many(
        self, fingerprints: Iterable[int], max_distance: int | None = None
    ) -> list[list[Match]]:
        """:meth:`query` for each fingerprint, in one read transaction."""
        queries = [check_fingerprint(fp, "fingerprints") for fp in fingerprints]
        k = self._query_distance(max_distance)
        with self._read() as txn:
            return [self._matches(txn, self._probe(txn, fp, k)) for fp in queries]

    def _check_and_store(
        self, txn: lmdb.Transaction, fingerprint: int, key: str, entry: Entry, now: float
    ) -> Match | None:
        docid = doc_id(key)
        matches = self._matches(txn, self._probe(txn, fingerprint, self.max_distance), docid)
        if matches:
            return matches[0]
        self._store(txn, fingerprint, key, entry, now)
        return None

    def check_and_insert(self, fingerprint: int, key: str, **record: Any) -> Match | None:
        """In one write transaction: the nearest stored document within k (other than ``key``
        itself) if there is one, else insert this one and return None. Processes racing with
        near duplicates of one another admit exactly one."""
        fingerprint = check_fingerprint(fingerprint)
        entry = Entry(check_key(key), record)
        with self._write(single=True) as txn:
            return self._check_and_store(txn, fingerprint, key, entry, time.time())

    def check_and_insert_many(
        self, items: Sequence[tuple[int, str, dict[str, Any]]]
    ) -> list[Match | None]:
        """:meth:`check_and_insert` for each ``(fingerprint, key, record)`` in ONE write
        transaction, each item seeing those admitted before it. Every item is checked before
        any is written."""
        checked = []
        for fingerprint, key, record in items:
            if not isinstance(record, dict):
                raise TypeError(f"record must be a dict, got {type(record).__name__}")
            key = check_key(key)
            checked.append((check_fingerprint(fingerprint), key, Entry(key, record)))
        now = time.time()
        with self._write() as txn:
            return [self._check_and_store(txn, fp, key, e, now) for fp, key, e in checked]

    def get(self, key: str) -> Match | None:
        """The stored entry for ``key`` (distance 0), or None."""
        key = check_key(key)
        with self._read() as txn:
            data = txn.get(doc_id(key), db=self._docs)
        if data is None:
            return None
        fingerprint, key, record = decode_doc(data)
        return Match(fingerprint, key, 0, record)

    def __len__(self) -> int:
        with self._read() as txn:
            return int(txn.stat(self._docs)["entries"])

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or not key:
            return False
        with self._read() as txn:
            return txn.get(doc_id(key), db=self._docs) is not None

    def _stream_docs(self) -> Iterator[bytes]:
        """Every document record, a chunk per short read transaction."""
        after: bytes | None = None
        while True:
            with self._read() as txn:
                cur = txn.cursor(self._docs)
                positioned = cur.first() if after is None else cur.set_range(after)
                chunk = []
                while positioned and len(chunk) < _CHUNK:
                    docid, data = cur.item()
                    if docid != after:
                        chunk.append((docid, data))
                    positioned = cur.next()
            if not chunk:
                return
            after = chunk[-1][0]
            for _, data in chunk:
                yield data

    def items(self) -> Iterator[Match]:
        """Every stored document (distance 0), streamed in short read transactions."""
        for data in self._stream_docs():
            fingerprint, key, record = decode_doc(data)
            yield Match(fingerprint, key, 0, record)

    def seen_range(
        self, progress: Callable[[int], object] | None = None
    ) -> tuple[Match | None, Match | None]:
        """The entries first seen earliest and latest (distance 0), or Nones when the index is
        empty. A scan of the record headers in short read transactions: only the two found
        are decoded whole. ``progress``, if given, is called with the number of entries
        scanned since its last call."""
        oldest: tuple[float, bytes] | None = None
        newest: tuple[float, bytes] | None = None
        scanned = 0
        for data in self._stream_docs():
            seen = decode_header(data)[1]
            if oldest is None or seen < oldest[0]:
                oldest = (seen, data)
            if newest is None or seen > newest[0]:
                newest = (seen, data)
            scanned += 1
            if progress is not None and scanned == _CHUNK:
                progress(scanned)
                scanned = 0
        if progress is not None and scanned:
            progress(scanned)
        return _entry(oldest), _entry(newest)

    def keys(self) -> Iterator[str]:
        """Every stored key, streamed in short read transactions."""
        for match in self.items():
            yield match.key

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    # -- batch mode ------------------------------------------------------------------------

    def _all_links(self) -> tuple[np.ndarray, list[bytes]]:
        """(fingerprints as uint64, document ids), one per stored document."""
        with self._read() as txn:
            fps = []
            ids = []
            for fpb, docid in txn.cursor(self._fps):
                fps.append(fpb)
                ids.append(docid)
        return np.frombuffer(b"".join(fps), dtype=">u8").astype(np.uint64), ids

    def pairs(self, max_distance: int | None = None) -> Iterator[tuple[str, str, int]]:
        """Batch mode: every pair of stored documents within ``max_distance`` bits, as
        ``(key_a, key_b, distance)`` with ``key_a < key_b``, found by sorting each table's
        permutation of all fingerprints (not by one query per fingerprint)."""
        k = self._query_distance(max_distance)
        fps, ids = self._all_links()
        a, b, dist = near_pairs(self.layout, fps, k)
        distinct, counts = np.unique(fps, return_counts=True)
        shared = distinct[counts > 1]
        wanted = set(np.concatenate([a, b, shared]).tolist())
        docids: dict[int, list[bytes]] = {}
        for fp, docid in zip(fps.tolist(), ids, strict=True):
            if fp in wanted:
                docids.setdefault(fp, []).append(docid)
        keys: dict[int, list[str]] = {}
        with self._read() as txn:
            for fp, group in docids.items():
                keys[fp] = sorted(decode_doc(txn.get(d, db=self._docs))[1] for d in group)
        for fp in shared.tolist():
            group = keys[fp]
            for i, ka in enumerate(group):
                for kb in group[i + 1 :]:
                    yield ka, kb, 0
        for fa, fb, d in zip(a.tolist(), b.tolist(), dist.tolist(), strict=True):
            for ka in keys[fa]:
                for kb in keys[fb]:
                    yield (ka, kb, d) if ka < kb else (kb, ka, d)

    def clusters(self, max_distance: int | None = None) -> list[list[str]]:
        """Connected components (of two or more documents) of :meth:`pairs`, each sorted,
        biggest first."""
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            root = parent.setdefault(x, x)
            while parent[root] != root:
                root = parent[root]
            while parent[x] != root:
                parent[x], x = root, parent[x]
            return root

        for ka, kb, _ in self.pairs(max_distance):
            ra, rb = find(ka), find(kb)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
        groups: dict[str, list[str]] = {}
        for key in parent:
            groups.setdefault(find(key), []).append(key)
        return sorted((sorted(g) for g in groups.values()), key=lambda g: (-len(g), g[0]))

    # -- maintenance -----------------------------------------------------------------------

    def stats(self, *, seen: bool = True) -> dict[str, Any]:
        """Counts, layout, disk use and probe cost of the index. ``oldest_seen`` and
        ``newest_seen`` take a scan of the documents, made only with ``seen`` and up to
        100,000 entries (otherwise ``None``)."""
        env = self._env()
        if self._batch is not None:
            self._flush()
        with self._read() as txn:
            entries = int(txn.stat(self._docs)["entries"])
            fingerprints = int(txn.get(_COUNT, b"0", db=self._meta))
            recent = int(txn.get(_RECENT, b"0", db=self._meta))
            merging, done = self._merging(txn) or ((), 0)
        oldest = newest = None
        if seen and entries <= 100_000:  # a scan of the document headers
            oldest, newest = self.seen_range()
        info = env.info()
        page = env.stat()["psize"]
        data_file = os.path.join(self.path, "data.mdb")
        disk = os.stat(data_file)
        return {
            "path": self.path,
            "entries": entries,
            "fingerprints": fingerprints,
            "tables": self.layout.tables,
            "blocks": list(self.layout.blocks),
            "sub_blocks": list(self.layout.sub_blocks),
            "prefix_bits": list(self.layout.prefix_bits),
            "layout": str(self.layout),
            "bucket_key_bytes": self._codec.key_bytes,
            "recent_tables": 0 if self.recent_layout is None else self.recent_layout.tables,
            "recent_fingerprints": recent,
            "recent_limit": _recent_limit(fingerprints) if self.recent_layout else 0,
            "merging": len(merging),
            "merged_tables": done,
            "max_distance": self.max_distance,
            "fingerprint_version": FINGERPRINT_VERSION,
            "format_version": FORMAT_VERSION,
            "bytes_on_disk": disk.st_blocks * 512,
            "file_size": disk.st_size,
            "map_size": info["map_size"],
            "map_used": (info["last_pgno"] + 1) * page,
            "candidates_per_probe": (self._candidates / self._queries) if self._queries else None,
            "expected_candidates_per_probe": self.layout.candidates_per_probe(fingerprints),
            "queries": self._queries,
            "oldest_seen": oldest.record["seen"] if oldest else None,
            "newest_seen": newest.record["seen"] if newest else None,
        }

    def verify(self) -> list[str]:
        """Problems found (empty when healthy): every document is linked to its fingerprint,
        every link has its document, and every table holds exactly the linked fingerprints.
        Runs in one read transaction."""
        problems: list[str] = []
        if self._batch is not None:
            self._flush()
        with self._read() as txn:
            fingerprints = []
            ids = []
            for docid, data in txn.cursor(self._docs):
                fingerprint, key = decode_key(data)
                if doc_id(key) != docid:
                    problems.append(f"document {key!r} is stored under another id")
                fingerprints.append(fingerprint)
                ids.append(docid)
            # The links the documents call for, in the order of the fingerprint database
            # (by fingerprint, then document id), against the links it holds.
            wanted = links(
                np.array(fingerprints, dtype=np.uint64),
                np.frombuffer(b"".join(ids), dtype="V16"),
            )
            held = [fpb + docid for fpb, docid in txn.cursor(self._fps)]
            stored = b"".join(held)
            if wanted.tobytes() != stored:
                problems += self._link_problems(txn, wanted, held)
            linked = sorted_distinct(
                np.frombuffer(stored, dtype=wanted.dtype)["fp"].astype(np.uint64)
            )
            if len(held) != len(ids):
                problems.append(f"{len(held)} fingerprint links for {len(ids)} documents")
            counted = int(txn.get(_COUNT, b"0", db=self._meta))
            if counted != linked.size:
                problems.append(f"{counted} fingerprints counted, {linked.size} linked")
            recent = np.empty(0, dtype=np.uint64)  # what any recent table holds
            if self._recent is not None:
                contents = []
                for i in range(len(self._recent.dbs)):
                    held, shape = self._table_contents(txn, self._recent, i)
                    problems += shape
                    contents.append(held)
                recent = sorted_distinct(np.concatenate(contents))
                wanted_recent = np.intersect1d(recent, linked, assume_unique=True)
                for i, held in enumerate(contents):
                    problems += _table_problems(self._recent, i, held, wanted_recent, linked)
                counted = int(txn.get(_RECENT, b"0", db=self._meta))
                if counted != wanted_recent.size:
                    problems.append(
                        f"{counted} recent fingerprints counted, {wanted_recent.size} held"
                    )
            # Main tables hold what the recent ones do not, and those before ``done`` the
            # fingerprints of a merge in progress too.
            merging, done = self._merging(txn) or (np.empty(0, dtype=np.uint64), 0)
            strays = np.setdiff1d(merging, recent).size
            if strays:
                problems.append(f"{strays} fingerprints being merged are in no recent table")
            wanted = np.setdiff1d(linked, recent, assume_unique=True)
            if done:
                merged = np.intersect1d(merging, linked, assume_unique=True)
                wanted_done = sorted_distinct(np.concatenate([wanted, merged]))
            for i in range(len(self._main.dbs)):
                held, shape = self._table_contents(txn, self._main, i)
                expected = wanted_done if i < done else wanted
                problems += shape + _table_problems(self._main, i, held, expected, linked)
        return problems

    def _link_problems(
        self, txn: lmdb.Transaction, wanted: np.ndarray, held: list[bytes]
    ) -> list[str]:
        """What differs between the links the documents call for and those stored."""
        problems = []
        stored = set(held)
        raw = wanted.tobytes()
        pairs = [raw[at : at + LINK.size] for at in range(0, len(raw), LINK.size)]
        for pair in pairs:
            if pair not in stored:
                fingerprint = int.from_bytes(pair[:8], "big")
                _, key = decode_key(txn.get(pair[8:], db=self._docs))
                problems.append(f"document {key!r} is not linked to {fingerprint:#018x}")
        expected = set(pairs)
        for pair in held:
            if pair not in expected:
                fingerprint = int.from_bytes(pair[:8], "big")
                if txn.get(pair[8:], db=self._docs) is None:
                    problems.append(f"fingerprint {fingerprint:#018x} links a missing document")
                else:
                    problems.append(f"fingerprint {fingerprint:#018x} links another's document")
        return problems

    def _table_contents(
        self, txn: lmdb.Transaction, tables: _Tables, i: int
    ) -> tuple[np.ndarray, list[str]]:
        """The fingerprints table ``i`` of ``tables`` holds (sorted, without repeats), and
        the problems of its buckets' shapes and order."""
        codec = tables.codec
        problems = []
        entries = []
        for key, bucket in txn.cursor(tables.dbs[i]):
            if len(key) != codec.key_bytes or not bucket or len(bucket) % codec.width:
                problems.append(
                    f"{tables.name} {i} bucket {bytes(key).hex()} has a {len(key)}-byte key"
                    f" and {len(bucket)} bytes"
                )
                continue
            entries.append((key, bucket))
        permuted = bucket_values(entries, codec)
        if not (permuted[1:] > permuted[:-1]).all():
            problems.append(f"{tables.name} {i} is out of order or holds repeats")
        return sorted_distinct(tables.plans[i].inverse_np(permuted)), problems

    def compact(self, dest: str | os.PathLike[str]) -> None:
        """Write a compacted copy of the index to the new or empty directory ``dest``."""
        dest = os.fspath(dest)
        os.makedirs(dest, exist_ok=True)
        if os.listdir(dest):
            raise ValueError(f"dest {dest!r} must be an empty directory")
        self._env().copy(dest, compact=True)

    def close(self) -> None:
        """Release the environment (closed when its last index in this process closes)."""
        if self._closed:
            return
        self._closed = True
        if self._batch is not None and not self._shared.stale:
            self._batch.abort()
        self._batch = None
        self._pending.take()
        _lmdb.release(self._shared)

    def __enter__(self) -> SimhashIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("read-only" if self.readonly else "open")
        return f"SimhashIndex({self.path!r}, {self.layout.name}, k={self.max_distance}, {state})"


def _table_problems(
    tables: _Tables, i: int, held: np.ndarray, wanted: np.ndarray, linked: np.ndarray
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


def _recent_limit(count: int) -> int:
    """How many fingerprints the recent tables of an index of ``count`` hold before a merge."""
    return max(_RECENT_MIN, count // _RECENT_SHARE)


def _entry(found: tuple[float, bytes] | None) -> Match | None:
    if found is None:
        return None
    fingerprint, key, record = decode_doc(found[1])
    return Match(fingerprint, key, 0, record)


def _check_added(result: tuple[int, int], expected: int, what: str) -> None:
    """putmulti(append=True) skips out-of-order records silently: make that loud."""
    if result[1] != expected:
        raise RuntimeError(f"bulk load wrote {result[1]} of {expected} {what} entries")


def _check_distance(value: Any, name: str, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 0 <= value <= limit:
        raise ValueError(f"{name} must be in 0..{limit}, got {value}")
    return value
