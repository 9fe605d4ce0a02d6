"""A persistent index that finds every stored simhash within Hamming distance k.

Manku, Jain and Das Sarma's permuted tables ("Detecting Near-Duplicates for Web Crawling",
WWW 2007, section 3): exact (never approximate), on disk, shared by several processes.
:class:`SimhashIndex` is the public face; the tables and their two levels are in
:mod:`.tables`, the documents and their fingerprint links in :mod:`.documents`, the stored
parameters in :mod:`.meta`, bulk loads in :mod:`.loading`, ``verify`` in
:mod:`.maintenance`, and the storage underneath (LMDB) behind the interface of
:mod:`.storage`.

Every change is one write transaction, so a killed process loses only uncommitted work, and
``check_and_insert`` is atomic across processes. Reads use one short transaction per call.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import Any

import numpy as np

from ..text.fingerprint import FINGERPRINT_VERSION, hamming
from ..text.rule import DEFAULT_RULE
from ..text.signature import PageSignature
from . import tables
from .bulk import gc_paused, prepare, read_items, split_signatures
from .documents import Documents, Match
from .drops import BY_KEPT, DROPS, ORDER, Drop, Drops, check_drop_limit
from .face import IndexFace, layout_stats
from .layout import Layout
from .lmdb_storage import DEFAULT_MAP_SIZE, LmdbStorage, remove_environment
from .loading import load
from .maintenance import count_stats, quick_check, verify
from .meta import (
    FORMAT_VERSION,
    IndexMismatchError,
    Params,
    check_open,
    new_params,
    read_params,
    write_params,
)
from .pairs import document_pairs
from .records import (
    DamagedIndexError,
    Entry,
    SignedItem,
    check_fingerprint,
    check_key,
    checked_signed_items,
    decode_doc,
    doc_id,
    signed,
)
from .sentences import REPEATS, SENTS, SIGS, Sentences, site_of
from .storage import DOCS, LINKS, META, Storage, Txn, is_table
from .tables import open_levels, recent_limit
from .transactions import Transactions

__all__ = ["FORMAT_VERSION", "IndexMismatchError", "Layout", "Match", "SimhashIndex"]


logger = logging.getLogger(__name__)


class SimhashIndex(IndexFace):
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

    ``drop_records=N`` records, up to N (the oldest evicted first), the keys that
    :meth:`check_and_insert` finds to be near duplicates, with the record they came with and
    the stored key they duplicate (see :mod:`.drops`); 0, the default, records none. The
    records already held are read and removed whatever ``N`` is.

    ``numbers`` says whether the pages' fingerprints and signatures were computed with numbers
    as features (``Fingerprinter(numbers=...)``, ``SIMHASH_NUMBERS``): stored when the index is
    created (True unless False is given), and checked like ``max_distance`` when given.
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
        map_size: int = DEFAULT_MAP_SIZE,
        layout: Layout | None = None,
        sync: bool = True,
        drop_records: int = 0,
        numbers: bool | None = None,
    ) -> None:
        self.path = os.fspath(path)
        self.readonly = bool(readonly)
        self._create = bool(create) and not self.readonly
        max_distance = check_open(max_distance, expected_size, layout, readonly, reset)
        self.drop_records = check_drop_limit(drop_records)
        #: The decision rule (:class:`scrapy_simhash.text.rule.Rule`).
        self.rule = DEFAULT_RULE
        if not self._create:
            if not os.path.exists(os.path.join(self.path, "data.mdb")):
                raise FileNotFoundError(f"no index at {self.path!r}")
        else:
            os.makedirs(self.path, exist_ok=True)
        self._closed = True
        self._queries = 0
        self._candidates = 0
        open_storage = partial(
            LmdbStorage, self.path, readonly=self.readonly, map_size=map_size, sync=bool(sync)
        )
        try:
            storage = open_storage()
        except DamagedIndexError as exc:
            if not reset:
                raise
            # an environment LMDB cannot open (cut short, not LMDB's): the reset asked for
            # starts afresh from its files, as it would from its contents
            logger.warning("index %s cannot be opened (%s): reset makes it anew", self.path, exc)
            remove_environment(self.path)
            storage = open_storage()
        self._tx = Transactions(storage, self._put_pending)
        self._closed = False
        try:
            params, new = self._open_params(max_distance, expected_size, layout, reset, numbers)
        except BaseException:
            self.close()
            raise
        self.layout = params.layout
        self.recent_layout = params.recent_layout
        self._codec = params.codec
        self.max_distance = self.layout.max_distance
        #: Whether numbers are features of the fingerprints the index holds (``numbers``).
        self.numbers = params.numbers
        try:
            # A new index's databases are all made before its parameters are written: an
            # index killed in between is still new, and in one that has parameters, a missing
            # database is damage, never made again empty.
            self._open_spaces(create=new)
            if new:
                with self._tx.storage.write() as txn:
                    write_params(txn, self._meta, params)
                logger.debug(
                    "created index %s: %s, %d-byte buckets",
                    self.path,
                    params.layout,
                    params.codec.key_bytes,
                )
            with self._tx.storage.read() as txn:
                quick_check(txn, self._docs, self._levels)
        except BaseException:
            self.close()
            raise

    # -- opening -------------------------------------------------------------------------

    def _open_params(
        self,
        max_distance: int | None,
        expected_size: int,
        layout: Layout | None,
        reset: bool,
        numbers: bool | None,
    ) -> tuple[Params, bool]:
        """The index's parameters, and whether they are new (to be written once its
        databases are made)."""
        storage = self._tx.storage
        try:
            meta = storage.space(META, create=self._create)
        except KeyError:
            raise ValueError(f"{self.path!r} is an LMDB environment, not an index") from None
        with storage.read() as txn:
            stored = {bytes(k): v for k, v in txn.scan(meta)}
        if stored and reset:
            tables = [name for name in storage.space_names() if is_table(name)]
            empty = [
                meta,
                storage.space(DOCS),
                storage.space(LINKS, multi=True),
                storage.space(DROPS),
                storage.space(ORDER),
                storage.space(BY_KEPT, multi=True),
                storage.space(SIGS),
                storage.space(SENTS, multi=True),
                storage.space(REPEATS, multi=True),
            ]
            storage.drop(tables, empty)
            logger.info("reset index %s", self.path)
            stored = {}
        if stored:
            return read_params(self.path, stored, max_distance, layout, numbers), False
        if not self._create:
            raise ValueError(f"{self.path!r} holds no index")
        return new_params(max_distance, expected_size, layout, numbers is not False), True

    def _open_spaces(self, create: bool = False) -> None:
        """Open the index's databases, made when ``create`` (a missing one raises
        :class:`~.lmdb_storage.MissingSpaceError` otherwise)."""
        storage = self._tx.storage

        def space(name: bytes, multi: bool = False) -> Any:
            return storage.space(name, multi=multi, create=create)

        self._meta = storage.space(META)
        self._levels = open_levels(
            self.layout, self.recent_layout, self._codec, space, self._meta, self.path
        )
        self._docs = Documents(
            space(DOCS),
            space(LINKS, multi=True),
            Sentences(space(SIGS), space(SENTS, multi=True), space(REPEATS, multi=True)),
            self._add_to_tables,
            self._remove_from_tables,
        )
        self._drops = Drops(
            space(DROPS),
            space(ORDER),
            space(BY_KEPT, multi=True),
            self._meta,
            self._docs.docs,
        )

    # -- transactions ----------------------------------------------------------------------

    def _live(self) -> Storage:
        """The storage, reopened in a process forked since it was opened."""
        if self._closed:
            raise ValueError(f"index {self.path!r} is closed")
        storage = self._tx.storage
        if storage.stale:  # forked: never touch the parent's environment
            self._tx.forget()
            self._tx.storage = storage = storage.reopen()
            self._open_spaces()
        return storage

    def _read(self) -> AbstractContextManager[Txn]:
        self._live()
        return self._tx.read()

    def _write(self, single: bool = False) -> AbstractContextManager[Txn]:
        self._live()
        if self.readonly:
            raise ValueError(f"index {self.path!r} is open read-only")
        return self._tx.write(single)

    @contextmanager
    def batch(self, commit_every: int = 1000) -> Iterator[SimhashIndex]:
        """Group the writes made inside the block into transactions of ``commit_every``
        operations (committed when full and at the end): the way to insert one by one quickly.

        Reads inside the block see the uncommitted writes. Other processes' writers wait while
        a batch transaction is open, so keep blocks short-lived. Each operation is atomic: one
        whose input is bad fails before it writes, and leaves the batch untouched. When the
        block raises, the operations done so far are committed, except after a storage error
        or an exception inside an operation (such as KeyboardInterrupt), which roll back those
        not committed yet.

        The table entries of fingerprints new to the index are held back until the
        transaction commits and then written sorted, a bucket at a time (queries in the block
        meanwhile search them by brute force): random single inserts would otherwise rewrite
        a bucket per table each.
        """
        if commit_every < 1:
            raise ValueError(f"commit_every must be >= 1, got {commit_every}")
        self._live()
        if self.readonly:
            raise ValueError(f"index {self.path!r} is open read-only")
        with self._tx.batched(commit_every):
            yield self

    # -- writing ---------------------------------------------------------------------------

    def _put_pending(self, txn: Txn, fingerprints: np.ndarray) -> None:
        """A batch's held-back fingerprints, into the tables."""
        self._levels.put(txn, fingerprints)

    def _add_to_tables(self, txn: Txn, fingerprint: int) -> None:
        """A fingerprint new to the index: held back inside a batch, else into the tables."""
        if self._tx.batching():
            self._tx.pending.add(fingerprint)
        else:
            self._levels.add(txn, fingerprint)

    def _remove_from_tables(self, txn: Txn, fingerprint: int) -> None:
        """A fingerprint no document has any more."""
        if self._tx.batching() and self._tx.pending.discard(fingerprint):
            return
        self._levels.remove(txn, fingerprint)

    def insert(self, fingerprint: int | PageSignature, key: str, **record: Any) -> None:
        """Store ``key`` with ``fingerprint`` (or a page signature, with which the sentence
        rule can find it too) and a JSON-serializable ``record``.

        A key stored before is replaced (a recrawled URL): its fingerprint and record change,
        its first-seen time ``seen`` stays unless ``seen=`` is given.
        """
        fingerprint, signature = signed(fingerprint)
        entry = Entry(check_key(key), record)
        with self._write(single=True) as txn:
            self._docs.store(txn, fingerprint, key, entry, time.time(), signature=signature)
            self._drops.forget(txn, key)

    def insert_many(self, items: Iterable[tuple[int | PageSignature, str, dict[str, Any]]]) -> int:
        """Store many ``(fingerprint, key, record)`` in one write transaction (the last of
        repeated keys wins); returns how many items were read.

        New keys are written sorted (appended without comparisons into an empty index), and
        each table's buckets are written once each, in order: the fast path for a bulk import.
        Keys already stored are replaced as by :meth:`insert`. Every item is checked before
        anything is written. The garbage collector is paused during the call, and the tables
        (and, into an empty index, the fingerprint links) are sorted in a background thread
        (numpy; the storage is used from the calling thread only).
        """
        with gc_paused():
            # The columns and the prepared batch (lists of millions of items) are freed before
            # the collector resumes: else its first collection traverses them (a second at 10^7).
            return self._insert_many(items)

    def _insert_many(self, items: Iterable[tuple[int | PageSignature, str, dict[str, Any]]]) -> int:
        plain, signatures = split_signatures(items)
        columns = read_items(plain)
        if not len(columns):
            return 0
        # Into an empty index, the tables are sorted in the background from now on.
        ahead = None
        if len(columns) > tables._FEW and len(self) == 0:
            ahead = self._levels.main.ahead(columns.fingerprints)
        try:
            batch = prepare(columns, time.time())
            with self._write() as txn:
                load(txn, self._docs, self._levels, batch, ahead)
                sentences = self._docs.sentences
                for key, signature in signatures.items():
                    if signature is None:
                        sentences.remove(txn, doc_id(key))
                    else:
                        sentences.put(txn, doc_id(key), signature)
                if self._drops.count(txn):  # keys stored now are no longer dropped
                    for docid in batch.docids():
                        self._drops.forget_id(txn, docid)
        finally:
            if ahead is not None:
                ahead.close()
        return batch.read

    def _record_drop(self, item: SignedItem, kept: str, distance: int, rule: str) -> None:
        fingerprint, key, entry, _ = item
        if kept not in self:  # (refused in the write, a batch's earlier writes went with it)
            raise ValueError(f"{kept!r} is not stored in the index")
        with self._write(single=True) as txn:
            if txn.get(doc_id(kept), db=self._docs.docs) is None:
                raise ValueError(f"{kept!r} is not stored in the index")
            limit = max(self.drop_records, 1)
            self._drops.record(
                txn, fingerprint, key, entry, kept, distance, time.time(), limit, rule
            )

    def remove(self, key: str) -> bool:
        """Remove the document stored under ``key`` and the drop records of the keys dropped
        against it, or the drop record of ``key``; False if there was neither."""
        key = check_key(key)
        with self._write(single=True) as txn:
            removed = self._docs.remove(txn, key)
            if removed:
                self._drops.forget_kept(txn, key)
            return self._drops.forget(txn, key) or removed

    # -- reading ---------------------------------------------------------------------------

    def _probe(self, txn: Txn, query: int, k: int) -> dict[int, int]:
        """Stored fingerprints within ``k`` of ``query``: {fingerprint: distance}."""
        found: dict[int, int] = {}
        scanned = self._levels.probe(txn, query, k, found)
        pending = self._tx.pending
        if len(pending) and self._tx.batching():
            found.update(pending.near(query, k))
        self._queries += 1
        self._candidates += scanned
        return found

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        """Every stored document within ``max_distance`` (default and at most the index's k)
        bits of ``fingerprint``, nearest first, then by key."""
        fingerprint = check_fingerprint(fingerprint)
        k = self._query_distance(max_distance)
        with self._read() as txn:
            return self._docs.matches(txn, self._probe(txn, fingerprint, k))

    def query_many(
        self, fingerprints: Iterable[int], max_distance: int | None = None
    ) -> list[list[Match]]:
        """:meth:`query` for each fingerprint, in one read transaction."""
        queries = [check_fingerprint(fp, "fingerprints") for fp in fingerprints]
        k = self._query_distance(max_distance)
        with self._read() as txn:
            return [self._docs.matches(txn, self._probe(txn, fp, k)) for fp in queries]

    def _decide(
        self,
        txn: Txn,
        fingerprint: int,
        signature: PageSignature | None,
        exclude: bytes | None,
        site: bytes = b"",
    ) -> Match | None:
        """The stored document (but ``exclude``) a page of ``site`` is a near duplicate of, by
        the rule of :mod:`scrapy_simhash.text.rule`: the nearest within k that the
        Hamming rule accepts, else the one sharing the most long sentences that the sentence
        rule accepts (then the nearest, then by key), counting the sentences that pass the
        guard (:mod:`.sentences`). A bare fingerprint, or a stored document without a
        signature, is decided by the Hamming distance alone."""
        k = self.max_distance
        rule = self.rule
        sentences = self._docs.sentences
        for match in self._docs.matches(txn, self._probe(txn, fingerprint, k), exclude):
            if signature is None:
                return match
            stored = sentences.get(txn, doc_id(match.key))
            if stored is None or rule.decide(signature, stored, k) == "hamming":
                return match
        fewest = rule.fewest_shared
        if signature is None or not signature.sentences or len(signature.sentences) < fewest:
            return None
        found: list[tuple[int, int, str, Match]] = []
        for other, counted in sentences.shared(
            txn, signature.sentences, rule.guard, exclude, site
        ).items():
            if counted < fewest:
                continue
            if rule.needs_runs(counted) and not rule.takes_one(
                signature, *sentences.sketches(txn, other), k
            ):
                continue  # decoded only when its runs of words could take so few sentences
            stored = sentences.get(txn, other)
            by = None if stored is None else rule.decide(signature, stored, k, counted)
            if by is None:
                continue  # its document is read only when the rule takes it
            data = txn.get(other, db=self._docs.docs)
            if data is None:
                continue
            stored_fp, key, record = decode_doc(data)
            distance = hamming(fingerprint, stored_fp)
            found.append((-counted, distance, key, Match(stored_fp, key, distance, record, by)))
        return min(found)[3] if found else None

    def _check_and_store(
        self,
        txn: Txn,
        fingerprint: int,
        signature: PageSignature | None,
        key: str,
        entry: Entry,
        now: float,
    ) -> Match | None:
        site = site_of(key)
        match = self._decide(txn, fingerprint, signature, doc_id(key), site)
        if match is not None:
            if match.rule == "sentences" and signature is not None:
                kept = self._docs.sentences.get(txn, doc_id(match.key))
                if kept is not None:
                    limit = self.rule.guard
                    self._docs.sentences.learn(txn, doc_id(key), signature, kept, site, limit)
            if self.drop_records:
                self._drops.record(
                    txn,
                    fingerprint,
                    key,
                    entry,
                    match.key,
                    match.distance,
                    now,
                    self.drop_records,
                    match.rule,
                )
            return match
        self._docs.store(txn, fingerprint, key, entry, now, signature=signature)
        self._drops.forget(txn, key)
        return None

    def check_and_insert(
        self, fingerprint: int | PageSignature, key: str, **record: Any
    ) -> Match | None:
        """In one write transaction: the stored document (other than ``key`` itself) this
        page is a near duplicate of, if there is one, else insert this one and return None.
        Processes racing with near duplicates of one another admit exactly one. With
        ``drop_records``, a key found to be a near duplicate is recorded as dropped, with
        ``record``.

        Given a bare fingerprint, the page is a near duplicate of the nearest stored
        document within k. Given a page signature
        (:func:`scrapy_simhash.page_signature`), the index's rule decides: the Hamming
        rule, or the sentence rule for a copy whose long sentences a stored page holds
        (:class:`Match` ``.rule`` says which)."""
        fingerprint, signature = signed(fingerprint)
        entry = Entry(check_key(key), record)
        with self._write(single=True) as txn:
            return self._check_and_store(txn, fingerprint, signature, key, entry, time.time())

    def check_and_insert_many(
        self, items: Sequence[tuple[int | PageSignature, str, dict[str, Any]]]
    ) -> list[Match | None]:
        """:meth:`check_and_insert` for each ``(fingerprint, key, record)`` in ONE write
        transaction, each item seeing those admitted before it. Every item is checked before
        any is written."""
        checked = checked_signed_items(items)
        now = time.time()
        with self._write() as txn:
            return [self._check_and_store(txn, fp, sig, key, e, now) for fp, key, e, sig in checked]

    def decide(self, signature: int | PageSignature, key: str | None = None) -> Match | None:
        """The stored document (other than ``key``) that a page with this fingerprint or
        signature would be found a near duplicate of by :meth:`check_and_insert`, or None;
        nothing is written."""
        fingerprint, signed_as = signed(signature)
        exclude = None if key is None else doc_id(check_key(key))
        with self._read() as txn:
            return self._decide(txn, fingerprint, signed_as, exclude, site_of(key))

    def signature(self, key: str) -> PageSignature | None:
        """The page signature ``key`` was stored with, or None (not stored, or stored with a
        bare fingerprint)."""
        key = check_key(key)
        with self._read() as txn:
            return self._docs.sentences.get(txn, doc_id(key))

    def get(self, key: str) -> Match | None:
        """The stored entry for ``key`` (distance 0), or None."""
        key = check_key(key)
        with self._read() as txn:
            return self._docs.get(txn, key)

    def __len__(self) -> int:
        with self._read() as txn:
            return txn.count(self._docs.docs)

    def __contains__(self, key: object) -> bool:
        try:
            check_key(key)
        except (TypeError, ValueError):  # no key: never stored
            return False
        with self._read() as txn:
            return txn.get(doc_id(key), db=self._docs.docs) is not None

    def items(self) -> Iterator[Match]:
        """Every stored document (distance 0), streamed in short read transactions."""
        for data in self._docs.stream(self._read):
            fingerprint, key, record = decode_doc(data)
            yield Match(fingerprint, key, 0, record)

    def seen_range(
        self, progress: Callable[[int], object] | None = None
    ) -> tuple[Match | None, Match | None]:
        """The entries first seen earliest and latest (distance 0), or Nones when the index is
        empty. A scan of the record headers in short read transactions: only the two found
        are decoded whole. ``progress``, if given, is called with the number of entries
        scanned since its last call."""
        return self._docs.seen_range(self._read, progress)

    def dropped(self, key: str) -> Drop | None:
        """The drop record of ``key`` (a page found to be a near duplicate), or None."""
        key = check_key(key)
        with self._read() as txn:
            return self._drops.get(txn, key)

    def drops_of(self, key: str) -> list[Drop]:
        """The drop records of the keys dropped against the stored ``key``, nearest first."""
        key = check_key(key)
        with self._read() as txn:
            return self._drops.of_kept(txn, key)

    def drops(self) -> Iterator[Drop]:
        """Every drop record, oldest first, streamed in short read transactions."""
        return self._drops.stream(self._read)

    def forget_drop(self, key: str) -> bool:
        """Remove the drop record of ``key``; False if there was none."""
        key = check_key(key)
        with self._write(single=True) as txn:
            return self._drops.forget(txn, key)

    def drop_count(self) -> int:
        """How many drop records the index holds."""
        with self._read() as txn:
            return self._drops.count(txn)

    def repeats(self) -> list[tuple[bytes, bytes]]:
        """What the guard learned (:mod:`.sentences`): ``(sentence hash + site, id of a page
        of that site dropped through the sentence)``, in key order."""
        with self._read() as txn:
            return [(bytes(k), bytes(v)) for k, v in txn.scan(self._docs.sentences.repeats)]

    def add_repeats(self, repeats: Iterable[tuple[bytes, bytes]]) -> None:
        """Add ``repeats`` (as :meth:`repeats` gives them) to what the guard learned, in one
        write transaction: a copy of an index carries it."""
        space = self._docs.sentences.repeats
        with self._write() as txn:
            for key, docid in repeats:
                if len(key) != 16 or len(docid) != 16:
                    raise ValueError(f"not a repeated sentence's page: {key!r}, {docid!r}")
                txn.put(space, key, docid)

    # -- batch mode ------------------------------------------------------------------------

    def pairs(self, max_distance: int | None = None) -> Iterator[tuple[str, str, int]]:
        """Batch mode: every pair of stored documents within ``max_distance`` bits, as
        ``(key_a, key_b, distance)`` with ``key_a < key_b``, found by sorting each table's
        permutation of all fingerprints (not by one query per fingerprint)."""
        k = self._query_distance(max_distance)
        with self._read() as txn:
            rows = [(fpb, docid) for fpb, docid in txn.scan(self._docs.links)]
        fps = np.frombuffer(b"".join(f for f, _ in rows), dtype=">u8").astype(np.uint64)

        def keys_of(wanted: set[int]) -> dict[int, list[str]]:
            docids: dict[int, list[bytes]] = {fp: [] for fp in wanted}
            for fp, (_, docid) in zip(fps.tolist(), rows, strict=True):
                if fp in wanted:
                    docids[fp].append(docid)
            out: dict[int, list[str]] = {}
            with self._read() as txn:
                for fp, group in docids.items():
                    records = (txn.get(d, db=self._docs.docs) for d in group)
                    # A link whose document is missing is passed over, as a query passes it
                    # over (Documents.matches) and the Redis index's pairs does: the pairs of
                    # the documents that are there stand, and verify names the link. A record
                    # that does not decode raises DamagedIndexError, as on every read.
                    out[fp] = sorted(decode_doc(data)[1] for data in records if data is not None)
            return out

        yield from document_pairs(self.layout, fps, keys_of, k)

    # -- maintenance -----------------------------------------------------------------------

    def stats(self, *, seen: bool = True) -> dict[str, Any]:
        """Counts, layout, disk use and probe cost of the index. ``oldest_seen`` and
        ``newest_seen`` take a scan of the documents, made only with ``seen`` and up to
        100,000 entries (otherwise ``None``)."""
        storage = self._live()
        self._tx.flush()
        with self._read() as txn:
            counts = count_stats(txn, self._docs, self._levels)
            drops = self._drops.count(txn)
            repeated = len({k for k, _ in txn.scan(self._docs.sentences.repeats)})
        oldest = newest = None
        if seen and counts["entries"] <= 100_000:  # a scan of the document headers
            oldest, newest = self.seen_range()
        fingerprints = counts["fingerprints"]
        layout = self.layout
        return {
            "path": self.path,
            "entries": counts["entries"],
            "fingerprints": fingerprints,
            **layout_stats(layout),
            "bucket_key_bytes": self._codec.key_bytes,
            "recent_tables": 0 if self.recent_layout is None else self.recent_layout.tables,
            "recent_fingerprints": counts["recent_fingerprints"],
            "recent_limit": recent_limit(fingerprints) if self.recent_layout else 0,
            "merging": counts["merging"],
            "merged_tables": counts["merged_tables"],
            "drops": drops,
            "repeated_sentences": repeated,
            "max_distance": self.max_distance,
            "fingerprint_version": FINGERPRINT_VERSION,
            "numbers": self.numbers,
            "format_version": FORMAT_VERSION,
            **storage.usage(),
            "candidates_per_probe": (self._candidates / self._queries) if self._queries else None,
            "expected_candidates_per_probe": layout.candidates_per_probe(fingerprints),
            "queries": self._queries,
            "oldest_seen": oldest.record["seen"] if oldest else None,
            "newest_seen": newest.record["seen"] if newest else None,
        }

    def verify(self) -> list[str]:
        """Problems found (empty when healthy): every document is linked to its fingerprint,
        every link has its document, and every table holds exactly the linked fingerprints.
        Runs in one read transaction."""
        self._tx.flush()
        with self._read() as txn:
            return (
                verify(txn, self._docs, self._levels)
                + self._docs.sentences.problems(txn, self._docs.docs)
                + self._drops.problems(txn)
            )

    def compact(self, dest: str | os.PathLike[str]) -> None:
        """Write a compacted copy of the index to the new or empty directory ``dest``."""
        dest = os.fspath(dest)
        os.makedirs(dest, exist_ok=True)
        if os.listdir(dest):
            raise ValueError(f"dest {dest!r} must be an empty directory")
        self._live().copy(dest)

    def close(self) -> None:
        """Release the environment (closed when its last index in this process closes).

        Called inside a :meth:`batch` block, it commits the writes made so far, as the
        block's end would (see :meth:`.transactions.Transactions.end_at_close`)."""
        if self._closed:
            return
        tx = self._tx
        try:
            tx.end_at_close()
        finally:
            if tx.batch is None or tx.storage.stale:
                self._closed = True
                tx.forget()
                tx.storage.close()

    def __repr__(self) -> str:
        state = self._state()
        return f"SimhashIndex({self.path!r}, {self.layout.name}, k={self.max_distance}, {state})"
