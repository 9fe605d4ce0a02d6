"""The index on a Redis server (Redis 6.2+, Valkey; one server or a Redis Cluster), shared by
crawls on many machines.

The same permuted tables as on LMDB (:mod:`.layout`: a table per plan, each fingerprint
permuted by it), the same exact answers, kept in a few hashes under one hash tag, so that an
index lives in one cluster slot and every script may touch all of its keys:

* ``{KEY}:meta``: format and fingerprint versions, k, the layout (JSON), the bucket split
  (``field_bits``), ``created`` (a token new at every creation) and the count of distinct
  fingerprints (:mod:`.redis_meta` creates, reads and checks it);
* ``{KEY}:docs``: document id (16 bytes, :func:`.records.doc_id`) -> document record (the
  LMDB index's bytes: fingerprint, first seen, key, JSON record);
* ``{KEY}:fps``: fingerprint (8 bytes) -> the ids of its documents, concatenated;
* ``{KEY}:sigs``: document id -> the page signature it was stored with
  (:meth:`.PageSignature.pack` and a CRC-32 seeded with the id: the LMDB index's ``sigs``
  values, byte for byte); a document stored with a bare fingerprint has none;
* ``{KEY}:sents``: sentence hash (8 bytes, big-endian) -> the ids of the documents whose
  signature holds it, concatenated (a sentence that many pages print is one field whose value
  grows by 16 bytes a page: a page's store rewrites it);
* ``{KEY}:reps``: sentence hash (8 bytes, big-endian) + site (8 bytes,
  :func:`.sentences.site_of`) -> the ids of the pages of that site dropped by the sentence rule
  through that sentence, concatenated (``guard`` at most), for the guard (:mod:`.sentences`);
* ``{KEY}:drops``, ``{KEY}:dseq``, ``{KEY}:dkept``: the drop records (:mod:`.drops`, read and
  written by :mod:`.redis_drops`), with
  ``drop_records`` on: dropped key's id -> the LMDB index's drop record, byte for byte (its
  CRC-32 computed by the script); the ids by sequence number (a sorted set: the oldest are
  evicted first beyond the writer's bound); kept document id -> the ids dropped against it.
  ``meta``'s ``drops_seq`` holds the last sequence number given;
* ``{KEY}:t00``, ...: one hash per table. A permuted fingerprint's top ``field_bits`` bits
  name its bucket (a hash field); the field's value is the bucket: the other bits of every
  permuted fingerprint in it, each in ``w`` bytes, concatenated in ascending order. Buckets
  hold hundreds of values at the expected size (:func:`.redis_meta.choose_field_bits`), so an
  index of 10^7 fingerprints is tens of thousands of fields per table, not one key per
  bucket, and costs about ``w`` (6 or 7) bytes per fingerprint and table.

Every change and every decision is made by one Lua script (``redis_script.lua``), called
by EVALSHA and loaded again on NOSCRIPT (after a restart or a failover); its arguments are
built, its calls made and their answers read by :mod:`.redis_calls`. A call carries one
item or a batch of up to :data:`.redis_calls.BATCH` (``check_and_insert_many``,
``insert_many``, ``query_many``), decided one after the other in the same run, so that a
script's fixed cost (its arguments and set-up, about half of a check's server time one by
one) is paid once for the batch. In each mode, for each item:

* ``check``: probe every table's bucket for the values sharing the query's prefix, compute
  their Hamming distance to the query (permutations keep distances), and decide by the rule
  of :meth:`.SimhashIndex._decide` (below); when no stored document (the page's own entry
  aside) is a near duplicate, store the record, the signature and its postings, link the
  record, forget the key's drop record, and add the fingerprint to every table, sorted;
  else, with drop records on, record the drop (evicting the oldest beyond the bound), in the
  same script: a decision and its record are never apart; a drop by the sentence rule
  counts the page's site under each sentence it shares with the kept page (``reps``);
* ``decide``: the decision alone, nothing written; ``insert`` and ``remove``: the writes
  without the check (``remove`` takes the drop records against the document too);
  ``drop`` and ``forget``: a drop record written or removed; ``probe``: the probe alone;
  ``query``: the probe and the documents of what it found (one round trip).

The decision, exactly as on LMDB: the documents of every fingerprint within k (the script
inverts a table's permutation, passed with the arguments, to read ``fps``), nearest first,
then by key (compared byte by byte: the UTF-8 order is the code points'); the first without
a stored signature, or that :meth:`.Rule.decide` accepts by the Hamming rule, wins (a bare
fingerprint: the first). Else the postings of the page's sentences (one HMGET), each counted
when it lists fewer than ``guard`` documents together with the pages of the page's site
dropped through it (``reps``, one HMGET); of the documents counting
:attr:`.Rule.fewest_shared` or more, those the rule accepts, the best by (most counted,
nearest, key). A document counting fewer than the rule takes without its runs of words
(:meth:`.Rule.needs_runs`) is decided only when its fingerprint and shingles sketch, read
from its packed signature before the checksum, let one sentence be enough
(:meth:`.Rule.takes_one`; the rule would refuse it otherwise), as on LMDB. The script reads
the rule's parameters from its arguments (:data:`.redis_calls.RULE_FIELDS` of the index's
:attr:`RedisIndex.rule`, ``DEFAULT_RULE``), so Python is the one place they are defined; the
arithmetic is the same (doubles for the share and the length ratios, popcounts on 32-bit
halves), and ``tests/test_redis_rule.py`` holds random signatures to the LMDB index's
decisions. The answer is the winner's record, distance and rule, read in the same script.

Why a check-and-insert is atomic and exact, on one server and on a cluster:

1. Redis runs a script to its end before any other command or script (scripts are atomic;
   a script's writes are replicated and written to the AOF as one transaction). Every key an
   index script touches carries the same hash tag, so on a cluster they are all in one slot,
   served by one master, and the script runs there whole; a script meeting a moved slot fails
   (MOVED) before it writes, and the client retries it at the new owner.
2. So two crawlers racing with near duplicates A and B are decided one after the other: if
   A's script runs first it stores A, in every table, with its signature and postings; B's
   script then probes the tables and reads the postings as A left them.
3. The probe finds every stored fingerprint within k: Manku et al.'s pigeonhole argument
   (two fingerprints within k bits agree on the whole prefix of at least one table, see
   :mod:`.layout`), and each table's bucket holds, sorted, every stored fingerprint whose
   permuted top ``field_bits`` bits are the query's (``field_bits`` <= every prefix), among
   which the script scans every value whose first 32 bits lie in the query prefix's range.
   Distances are computed on the permuted values, equal to the originals' distances.
4. The sentence candidates are every document listed under one of B's sentences: a
   signature's sentences are listed in the same script that stores it, and unlisted in the
   one that replaces or removes it, so ``sents`` holds exactly the stored signatures'
   sentences (``verify`` checks it); a page's site is counted under a sentence (``reps``) in
   the script that drops it by the sentence rule. So B's counts are LMDB's.
5. Hence B's script sees A, with its signature, and when the rule makes B a near duplicate
   of A (by either rule) it answers "duplicate": exactly one of the two is admitted. A
   decision depends on nothing but what the script reads, so scripts run in an order decide
   as ``check_and_insert`` in that order on an LMDB index; a batch's items are decided in
   their order within one script, as so many scripts run back to back.
6. A script reads the document's current record first and refuses (answers "again") when it
   is not the one the client built its arguments from (another process replaced or removed
   the same key meanwhile): the client reads it again and retries. A script also refuses to
   run on an index other than the one opened (``created`` differs: reset or replaced).

A server crash loses what its persistence had not written (AOF ``appendfsync everysec``:
about the last second); a failover loses what the replica had not received.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from ..text.fingerprint import FINGERPRINT_VERSION
from ..text.rule import DEFAULT_RULE, Rule
from ..text.signature import PageSignature
from . import redis_calls, redis_checks, redis_drops, redis_meta
from .copies import copy_drops, copy_repeats, signed_items
from .documents import Match
from .drops import Drop, check_drop_limit
from .face import IndexFace, layout_stats
from .layout import Layout
from .meta import IndexMismatchError, check_open
from .pairs import document_pairs
from .records import (
    DamagedIndexError,
    SignedItem,
    check_fingerprint,
    check_key,
    checked_signed_items,
    decode_doc,
    doc_id,
    packed_ids,
    sealed,
    signed,
)
from .redis_bulk import INSTALL, bulk_load
from .redis_calls import AGAIN, CHUNK, found_documents
from .redis_client import EvictingServerError, check_prefix, connect, redact, redis_errors
from .redis_meta import REDIS_FORMAT_VERSION, Split, fingerprint_count
from .sentences import decode_signature, site_of

logger = logging.getLogger(__name__)


class RedisIndex(IndexFace):
    """Every stored fingerprint within ``max_distance`` bits of a query, from an index on a
    Redis server: the API of :class:`~.index.SimhashIndex` where it makes sense on a server.

    ``url`` is a ``redis://``, ``rediss://`` or ``unix://`` URL (or ``client`` a redis-py
    client already made); ``key`` is the index's key prefix, wrapped in a hash tag
    (``{key}:meta``, ...). A Redis Cluster is detected unless ``cluster`` says. Parameters,
    their checks and ``reset``, ``readonly``, ``create`` and ``drop_records`` are as for
    ``SimhashIndex``; an index whose ``meta`` differs raises :class:`IndexMismatchError`.
    """

    def __init__(
        self,
        url: str,
        key: str = "simhash",
        max_distance: int | None = None,
        expected_size: int = 1_000_000,
        *,
        readonly: bool = False,
        reset: bool = False,
        create: bool = True,
        layout: Layout | None = None,
        cluster: bool | None = None,
        client: Any = None,
        options: dict[str, Any] | None = None,
        numbers: bool | None = None,
        drop_records: int = 0,
    ) -> None:
        self.url = redact(url)
        #: The bound on drop records this writer keeps (0: it records none).
        self.drop_records = check_drop_limit(drop_records)
        self.key = check_prefix(key)
        self.path = f"{self.url} {self.key}"  # in messages, as an LMDB index's path
        self.readonly = bool(readonly)
        self._create = bool(create) and not self.readonly
        max_distance = check_open(max_distance, expected_size, layout, readonly, reset)
        self._closed = False
        self.client = client if client is not None else connect(url, cluster, **(options or {}))
        self.cluster = type(self.client).__name__ == "RedisCluster"
        tag = "{" + self.key + "}"
        self._meta, self._docs, self._fps = f"{tag}:meta", f"{tag}:docs", f"{tag}:fps"
        self._sigs, self._sents = f"{tag}:sigs", f"{tag}:sents"
        self._drops, self._dseq, self._dkept = f"{tag}:drops", f"{tag}:dseq", f"{tag}:dkept"
        self._reps = f"{tag}:reps"
        #: The decision rule (:class:`scrapy_simhash.text.rule.Rule`), applied by the
        #: script with these parameters.
        self.rule = DEFAULT_RULE
        self._rule_args: tuple[Rule | None, list[str]] = (None, [])
        self._queries = 0
        try:
            self._open(max_distance, expected_size, layout, reset, numbers)
        except BaseException:  # a refused index leaves no connection open
            self.client.close()
            raise

    # -- meta ------------------------------------------------------------------------------

    def _open(
        self,
        max_distance: int | None,
        expected_size: int,
        layout: Layout | None,
        reset: bool,
        numbers: bool | None,
    ) -> None:
        stored = redis_meta.read_meta(self)
        if reset and (stored or redis_meta.leftovers(self)):
            self.drop()
            logger.info("reset index %s", self.path)
            stored = {}
        if not stored:
            if redis_meta.leftovers(self):
                raise redis_meta.meta_lost(self)
            if not self._create:
                raise ValueError(f"no index at {self.path}")
            stored = redis_meta.create_meta(
                self, max_distance, expected_size, layout, numbers is not False
            )
        self.layout = redis_meta.check_meta(self.path, stored, max_distance, layout, numbers)
        #: Whether numbers are features of the fingerprints the index holds (as on LMDB).
        self.numbers = stored.get("numbers", "1") == "1"
        self.max_distance = self.layout.max_distance
        self._split = Split(int(stored["field_bits"]))
        self._token = stored["created"]  # (present: check_meta asks for it)
        self._tables = [f"{{{self.key}}}:t{i:02d}" for i in range(self.layout.tables)]
        self._keys = [self._meta, self._docs, self._fps, self._sigs, self._sents,
                      self._drops, self._dseq, self._dkept, self._reps, *self._tables]  # fmt: skip
        # the tables' permutations and prefix ranges, as the script's arguments want them
        plans = self.layout.plans
        self._forward = [plan.forward for plan in plans]
        self._inverse = [plan.inverse for plan in plans]
        w = self._split.width
        self._ranges = [(64 - plan.prefix_bits, 8 * w - 32) for plan in plans]
        moves = []
        for plan in plans:
            inverse = plan._moves(invert=True)
            moves.append(bytes([len(inverse), *(b for move in inverse for b in move)]))
        self._moves = b"".join(moves)
        self._script = self.client.register_script(redis_calls.SCRIPT)
        self._install_script = self.client.register_script(INSTALL)

    def drop(self) -> None:
        """Delete every key of the index, in one command: a script another process runs
        meanwhile meets the index whole or finds it gone (never its meta over emptied
        keys, where it would write a page into the index that follows)."""
        self.client.unlink(self._meta, *redis_meta.other_keys(self))

    def _writable(self) -> None:
        if self._closed:
            raise ValueError(f"index {self.path} is closed")
        if self.readonly:
            raise ValueError(f"index {self.path} is open read-only")

    # -- writing ---------------------------------------------------------------------------

    def check_and_insert(
        self, fingerprint: int | PageSignature, key: str, **record: Any
    ) -> Match | None:
        """On the server, in one script: the stored document (other than ``key`` itself) this
        page is a near duplicate of, if there is one, else insert this one and return None.
        Processes racing with near duplicates of one another, on any machine, admit exactly
        one. A bare fingerprint is a near duplicate of the nearest stored document within k;
        a page signature is decided by the index's rule, as on LMDB (:class:`Match` ``.rule``
        says which)."""
        item = checked_signed_items([(fingerprint, key, record)])[0]
        return redis_calls.check_or_insert(self, "check", item)

    def check_and_insert_many(
        self, items: Sequence[tuple[int | PageSignature, str, dict[str, Any]]]
    ) -> list[Match | None]:
        """:meth:`check_and_insert` for each ``(fingerprint, key, record)``,
        :data:`.redis_calls.BATCH` a script, the scripts pipelined (a key given again starts
        another pipeline): decided in order, each item seeing those admitted before it, as on
        LMDB. Every item is checked before any is sent. A damaged page signature or document
        record met by a script raises DamagedIndexError; the items it decided before are
        written."""
        checked = checked_signed_items(items)
        self._writable()
        if not checked:
            return []
        return redis_calls.pipelined(self, "check", checked)

    @contextmanager
    def batch(self, commit_every: int = 1000) -> Iterator[RedisIndex]:
        """As ``SimhashIndex.batch`` for code written for both: on a server every write is
        made at once, so the block groups nothing."""
        self._writable()
        yield self

    def insert(self, fingerprint: int | PageSignature, key: str, **record: Any) -> None:
        """Store ``key`` with ``fingerprint`` (or a page signature, with which the sentence
        rule can find it too) and a JSON-serializable ``record`` (a key stored before is
        replaced, and loses its signature when given a bare fingerprint; its first-seen time
        stays unless ``seen=`` is given)."""
        item = checked_signed_items([(fingerprint, key, record)])[0]
        redis_calls.check_or_insert(self, "insert", item)

    def insert_many(self, items: Iterable[tuple[int | PageSignature, str, dict[str, Any]]]) -> int:
        """Store many ``(fingerprint or signature, key, record)`` (the last of repeated keys
        wins); returns how many items were read.

        Into an empty index the hashes are built on the client and installed by one script,
        all at once (:mod:`.redis_bulk`; every item is checked before anything is written).
        Else, or when another client stored a document meanwhile, the items are inserted by
        scripts, pipelined :data:`.redis_calls.CHUNK` at a time, every item of a chunk checked
        before the chunk is sent."""
        self._writable()
        if self._is_empty():
            items = items if isinstance(items, list) else list(items)
            loaded = bulk_load(self, items)
            if loaded is not None:
                return loaded
        read = 0
        chunk: list[tuple[int | PageSignature, str, dict[str, Any]]] = []
        for item in items:
            chunk.append(item)
            read += 1
            if len(chunk) == CHUNK:
                self._insert_chunk(chunk)
                chunk = []
        if chunk:
            self._insert_chunk(chunk)
        return read

    def _is_empty(self) -> bool:
        """Whether the index holds nothing: no document, drop record or learned sentence,
        and no table."""
        meta = self.client.hget(self._meta, "fingerprints")
        if meta is None or fingerprint_count(self, meta) != 0:
            return False
        return not self.client.exists(*self._keys[1:])

    def _install(self, keys: list[str], args: list[Any]) -> bool:
        """:data:`.redis_bulk.INSTALL`: True when installed, False when the index is no
        longer empty."""
        try:
            return bool(self._install_script(keys=keys, args=args))
        except redis_errors() as exc:
            redis_calls.changed(self, exc)
            raise

    def _insert_chunk(self, chunk: list[tuple[int | PageSignature, str, dict[str, Any]]]) -> None:
        checked = checked_signed_items(chunk)
        last = {item[1]: i for i, item in enumerate(checked)}  # repeated keys: the last wins
        redis_calls.pipelined(self, "insert", [c for i, c in enumerate(checked) if last[c[1]] == i])

    def remove(self, key: str) -> bool:
        """Remove the document stored under ``key`` and the drop records of the keys dropped
        against it, or the drop record of ``key``; False if there was neither."""
        key = check_key(key)
        self._writable()
        docid = doc_id(key)
        for _ in range(AGAIN):
            data = self.client.hget(self._docs, docid)
            if data is None:
                return self.forget_drop(key)
            item = redis_calls.item_args(self, None, bytes(data[:16]), docid=docid)
            answer = redis_calls.one(self, "remove", self.max_distance, item)
            if int(answer[0]) == 0:
                return bool(int(answer[1]))
        raise RuntimeError(f"index {self.path}: {key!r} kept changing under remove")

    # -- reading ---------------------------------------------------------------------------

    def probe(self, fingerprint: int, max_distance: int | None = None) -> dict[int, int]:
        """Stored fingerprints within ``max_distance`` of ``fingerprint``: {fp: distance}
        (one round trip; their documents are not read)."""
        fingerprint = check_fingerprint(fingerprint)
        k = self._query_distance(max_distance)
        self._queries += 1
        answer = redis_calls.one(self, "probe", k, redis_calls.item_args(self, fingerprint))
        return redis_calls.probed(self, fingerprint, answer)

    def query(self, fingerprint: int, max_distance: int | None = None) -> list[Match]:
        """Every stored document within ``max_distance`` (default and at most the index's k)
        bits of ``fingerprint``, nearest first, then by key (one script: the probe and the
        documents)."""
        return self.query_many([fingerprint], max_distance)[0]

    def decide(self, signature: int | PageSignature, key: str | None = None) -> Match | None:
        """The stored document (other than ``key``) that a page with this fingerprint or
        signature would be found a near duplicate of by :meth:`check_and_insert`, or None;
        nothing is written (the script's ``decide``, read-only)."""
        fingerprint, signed_as = signed(signature)
        exclude = b"" if key is None else doc_id(check_key(key))
        packed = b"" if signed_as is None else sealed(signed_as.pack(), exclude)
        self._queries += 1
        item = redis_calls.item_args(
            self, fingerprint, docid=exclude, signature=packed, site=site_of(key)
        )
        return redis_calls.match_of(redis_calls.one(self, "decide", self.max_distance, item))

    def signature(self, key: str) -> PageSignature | None:
        """The page signature ``key`` was stored with, or None (not stored, or stored with a
        bare fingerprint)."""
        docid = doc_id(check_key(key))
        data = self.client.hget(self._sigs, docid)
        return None if data is None else decode_signature(bytes(data), docid)

    def signatures(self, keys: Sequence[str]) -> list[PageSignature | None]:
        """:meth:`signature` for each key, in one round trip."""
        if not keys:
            return []
        docids = [doc_id(check_key(k)) for k in keys]
        return [
            None if data is None else decode_signature(bytes(data), docid)
            for docid, data in zip(docids, self.client.hmget(self._sigs, docids), strict=True)
        ]

    def query_many(
        self, fingerprints: Iterable[int], max_distance: int | None = None
    ) -> list[list[Match]]:
        """:meth:`query` for each fingerprint, :data:`.redis_calls.BATCH` a script, the
        scripts pipelined."""
        queries = [check_fingerprint(fp, "fingerprints") for fp in fingerprints]
        k = self._query_distance(max_distance)
        self._queries += len(queries)
        items = [redis_calls.item_args(self, fp) for fp in queries]
        if len(queries) <= 1:  # one round trip, no pipeline
            replies = [redis_calls.send(self, "query", k, items)]
        else:
            replies = redis_calls.pipelined_scripts(self, "query", k, items)
        return [found_documents(a) for reply in replies for a in redis_calls.answers(reply)]

    def get(self, key: str) -> Match | None:
        """The stored entry for ``key`` (distance 0), or None."""
        return self.get_many([key])[0]

    def get_many(self, keys: Sequence[str]) -> list[Match | None]:
        """:meth:`get` for each key, in one round trip."""
        if not keys:
            return []
        out: list[Match | None] = []
        for data in self.client.hmget(self._docs, [doc_id(check_key(k)) for k in keys]):
            if data is None:
                out.append(None)
                continue
            fingerprint, key, record = decode_doc(data)
            out.append(Match(fingerprint, key, 0, record))
        return out

    def __len__(self) -> int:
        return int(self.client.hlen(self._docs))

    def __contains__(self, key: object) -> bool:
        try:
            check_key(key)
        except (TypeError, ValueError):  # no key: never stored
            return False
        return bool(self.client.hexists(self._docs, doc_id(key)))

    def items(self) -> Iterator[Match]:
        """Every stored document (distance 0), streamed with HSCAN (a document changed
        during the scan may be missed or given twice)."""
        for _, data in self.client.hscan_iter(self._docs, count=CHUNK):
            fingerprint, key, record = decode_doc(data)
            yield Match(fingerprint, key, 0, record)

    def seen_range(
        self, progress: Callable[[int], object] | None = None
    ) -> tuple[Match | None, Match | None]:
        """The entries first seen earliest and latest, or Nones when the index is empty."""
        oldest = newest = None
        for i, match in enumerate(self.items(), 1):
            if oldest is None or match.record["seen"] < oldest.record["seen"]:
                oldest = match
            if newest is None or match.record["seen"] > newest.record["seen"]:
                newest = match
            if progress is not None and i % CHUNK == 0:
                progress(CHUNK)
        return oldest, newest

    def _links(self) -> Iterator[tuple[int, bytes]]:
        """(fingerprint, document ids) of every fingerprint link."""
        for fpb, ids in self.client.hscan_iter(self._fps, count=CHUNK):
            yield int.from_bytes(fpb, "big"), bytes(ids)

    def pairs(self, max_distance: int | None = None) -> Iterator[tuple[str, str, int]]:
        """Batch mode: every pair of stored documents within ``max_distance`` bits, as
        ``(key_a, key_b, distance)`` with ``key_a < key_b``."""
        k = self._query_distance(max_distance)
        rows = [(fp, docid) for fp, ids in self._links() for docid in packed_ids(ids)]
        fps = np.array([fp for fp, _ in rows], dtype=np.uint64)

        def keys_of(wanted: set[int]) -> dict[int, list[str]]:
            chosen = [(fp, docid) for fp, docid in rows if fp in wanted]
            data = self.client.hmget(self._docs, [d for _, d in chosen]) if chosen else []
            # every fingerprint asked for, with no key when none of its documents is there (a
            # link whose document is missing is passed over, as a query passes it over)
            out: dict[int, list[str]] = {fp: [] for fp in wanted}
            for (fp, _), record in zip(chosen, data, strict=True):
                if record is not None:
                    out[fp].append(decode_doc(record)[1])
            return {fp: sorted(keys) for fp, keys in out.items()}

        yield from document_pairs(self.layout, fps, keys_of, k)

    # -- drop records ----------------------------------------------------------------------

    def _record_drop(self, item: SignedItem, kept: str, distance: int, rule: str) -> None:
        """One script: the record written unless ``kept`` is not stored."""
        redis_drops.record_drop(self, item, kept, distance, rule)

    def forget_drop(self, key: str) -> bool:
        """Remove the drop record of ``key``; False if there was none."""
        return redis_drops.forget_drop(self, key)

    def dropped(self, key: str) -> Drop | None:
        """The drop record of ``key`` (a page found to be a near duplicate), or None."""
        return redis_drops.dropped(self, key)

    def drops_of(self, key: str) -> list[Drop]:
        """The drop records of the keys dropped against the stored ``key``, nearest first."""
        return redis_drops.drops_of(self, key)

    def drops(self) -> Iterator[Drop]:
        """Every drop record, oldest first, read :data:`.redis_calls.CHUNK` at a time."""
        return redis_drops.stream(self)

    def drop_count(self) -> int:
        """How many drop records the index holds."""
        return redis_drops.count(self)

    # -- maintenance -----------------------------------------------------------------------

    def eviction_policy(self) -> str:
        """The server's ``maxmemory-policy`` (of the node holding the index, on a cluster)."""
        kwargs: dict[str, Any] = {}
        if self.cluster:
            kwargs["target_nodes"] = self.client.get_node_from_key(self._meta)
        return str(self.client.info("memory", **kwargs).get("maxmemory_policy", "unknown"))

    def check_eviction(self) -> None:
        """Refuse a server that may evict the index's keys (``maxmemory-policy``
        ``allkeys-*``): the index would silently lose fingerprints."""
        policy = self.eviction_policy()
        if policy.startswith("allkeys"):
            raise EvictingServerError(
                f"the Redis server of index {self.path} has maxmemory-policy {policy}, which "
                f"may evict the index's keys; use noeviction (or a volatile-* policy: the index's "
                f"keys have no expiry)"
            )

    def memory(self) -> dict[str, int]:
        """Server memory of the index's keys (MEMORY USAGE, every field counted), in bytes:
        ``tables_memory``, ``links_memory``, ``docs_memory``, ``signatures_memory`` (the page
        signatures and their sentence postings), ``drops_memory`` (the drop records)."""

        def usage(key: str) -> int:
            return int(self.client.memory_usage(key, samples=0) or 0)

        return {
            "tables_memory": sum(usage(t) for t in self._tables),
            "links_memory": usage(self._fps),
            "docs_memory": usage(self._docs),
            "signatures_memory": usage(self._sigs) + usage(self._sents) + usage(self._reps),
            "drops_memory": usage(self._drops) + usage(self._dseq) + usage(self._dkept),
        }

    def stats(self, *, seen: bool = True) -> dict[str, Any]:
        """Counts, layout and server of the index (``seen`` as for ``SimhashIndex``)."""
        entries = len(self)
        oldest = newest = None
        if seen and entries <= 100_000:
            oldest, newest = self.seen_range()
        layout = self.layout
        fingerprints = fingerprint_count(self, self.client.hget(self._meta, "fingerprints") or b"0")
        return {
            "path": self.path,
            "url": self.url,
            "key": self.key,
            "cluster": self.cluster,
            "entries": entries,
            "fingerprints": fingerprints,
            **layout_stats(layout),
            "field_bits": self._split.bits,
            "max_distance": self.max_distance,
            "fingerprint_version": FINGERPRINT_VERSION,
            "numbers": self.numbers,
            "format_version": REDIS_FORMAT_VERSION,
            "maxmemory_policy": self.eviction_policy(),
            "expected_candidates_per_probe": layout.candidates_per_probe(fingerprints),
            "queries": self._queries,
            "drops": self.drop_count(),
            "repeated_sentences": int(self.client.hlen(self._reps)),
            "oldest_seen": oldest.record["seen"] if oldest else None,
            "newest_seen": newest.record["seen"] if newest else None,
        }

    def verify(self) -> list[str]:
        """Problems found (empty when healthy): every document linked to its fingerprint,
        every link to existing documents of that fingerprint (each once), every table
        holding exactly the linked fingerprints in sorted buckets, the count in ``meta``,
        every page signature sound and of a stored document, with the sentence postings
        exactly the signatures' sentences, and the drop records as on LMDB
        (:mod:`.redis_checks`). Read with HSCAN: run it while no one writes."""
        return redis_checks.verify(self)

    def repeats(self) -> Iterator[tuple[bytes, bytes]]:
        """What the guard learned (``reps``): ``(sentence hash + site, id of a page of that
        site dropped through the sentence)``, in the server's order (HSCAN)."""
        for key, ids in self.client.hscan_iter(self._reps, count=CHUNK):
            if len(key) != 16 or not ids or len(ids) % 16:  # (verify names each)
                raise DamagedIndexError(
                    f"index damaged: a repeated sentence's entry of {len(key)} and {len(ids)} bytes"
                )
            for docid in packed_ids(bytes(ids)):
                yield bytes(key), docid

    def add_repeats(self, repeats: Iterable[tuple[bytes, bytes]]) -> None:
        """Add ``repeats`` (as :meth:`repeats` gives them) to what the guard learned, for an
        index no other process writes to (a copy carries it): read, merged and written back
        :data:`CHUNK` sentences at a time."""
        self._writable()
        wanted: dict[bytes, list[bytes]] = {}
        for key, docid in repeats:
            if len(key) != 16 or len(docid) != 16:
                raise ValueError(f"not a repeated sentence's page: {key!r}, {docid!r}")
            wanted.setdefault(key, []).append(docid)
        keys = list(wanted)
        for start in range(0, len(keys), CHUNK):
            chunk = keys[start : start + CHUNK]
            held = self.client.hmget(self._reps, chunk)
            merged = {}
            for key, ids in zip(chunk, held, strict=True):
                listed = packed_ids(bytes(ids or b""))
                merged[key] = b"".join(dict.fromkeys(listed + wanted[key]))
            self.client.hset(self._reps, mapping=merged)

    def compact(self, dest: str) -> int:
        """Copy the index into a new LMDB index in the empty directory ``dest`` (same k and
        layout, records with their page signatures and first-seen times, the drop records and
        what the guard learned); how many documents were copied."""
        import os

        from .index import SimhashIndex

        os.makedirs(dest, exist_ok=True)
        if os.listdir(dest):
            raise ValueError(f"dest {dest!r} must be an empty directory")
        copy = SimhashIndex(dest, self.max_distance, layout=self.layout, numbers=self.numbers)
        with copy:
            copied = copy.insert_many(signed_items(self))
            copy_drops(self, copy)
            copy_repeats(self, copy)
            return copied

    def load(self, source: Any) -> int:
        """Copy every document of ``source`` (an index, LMDB or Redis) into this one, with
        their page signatures and first-seen times, then its drop records and what the
        guard learned; how many documents were copied. A source whose signatures were made
        with other ``numbers`` is refused (:class:`IndexMismatchError`): this index's rule
        would decide its pages with the other setting's sentences and sketches."""
        if source.numbers != self.numbers:
            raise IndexMismatchError(
                f"index {source.path} was built with numbers={source.numbers}, "
                f"not {self.numbers} as {self.path}"
            )
        copied = self.insert_many(signed_items(source))
        copy_drops(source, self)
        copy_repeats(source, self)
        return copied

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.client.close()

    def __repr__(self) -> str:
        return f"RedisIndex({self.url!r}, {self.key!r}, k={self.max_distance}, {self._state()})"
