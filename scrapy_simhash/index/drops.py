"""Drop records: the pages found to be near duplicates of a stored one, and of which.

A check-and-insert that finds a stored document within k does not store the page; with drop
records on, it records the drop instead, in the same write transaction, so that ``explain``
can answer for a dropped URL and ``clusters`` and ``report`` can show each kept page with its
copies. Three spaces hold them:

* ``drops``: the dropped key's id (16 bytes, as a document's) -> ``sequence (8) | time
  (float64) | distance (1) | rule (1: its place in RULES) | fingerprint (8) | kept document
  id (16) | key length (4) | key | JSON of the record | CRC-32 (4)`` (the record the page
  would have been stored with);
* ``dseq``: sequence (8, big-endian) -> dropped key's id, the order of arrival, so that the
  oldest records are evicted first when there are more than the index's writer allows;
* ``dkept``: kept document id -> the ids of the keys dropped against it (a multi space).

``meta``'s ``drops_seq`` holds the last sequence number given. One record per key: a key
dropped again replaces its record, and a key stored as a document (a recrawled page that
changed) loses it. Removing a document removes the records of the copies dropped against it.
"""

from __future__ import annotations

import itertools
import json
import struct
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..text.rule import RULES
from .records import (
    DamagedIndexError,
    Entry,
    decode_key,
    doc_id,
    sealed,
    stored_count,
    unsealed,
)
from .storage import Space, Txn, stream

DROPS = b"drops"
ORDER = b"dseq"
BY_KEPT = b"dkept"
#: The meta key of the last sequence number given to a drop record.
LAST = b"drops_seq"

HEADER = struct.Struct(">QdBBQ16sI")
SEQUENCE = struct.Struct(">Q")


@dataclass(frozen=True)
class Drop:
    """A page dropped as a near duplicate of the stored page ``kept``."""

    key: str
    fingerprint: int
    kept: str | None  # None only in a damaged index (``verify`` says so)
    distance: int
    seen: float  # when it was dropped (unix time)
    record: dict[str, Any]
    rule: str = "hamming"  # the rule that found it a near duplicate

    @property
    def dry_run(self) -> bool:
        """Whether a dry run recorded it: the page was kept (``SIMHASH_DRY_RUN``)."""
        return bool(self.record.get("dry_run"))


def rule_code(rule: str) -> int:
    """The stored code of a rule's name; ValueError for a name that is not a rule."""
    try:
        return RULES.index(rule)
    except ValueError:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}") from None


def check_drop_limit(drop_records: object) -> int:
    """``drop_records`` (an index's bound on its drop records) if it is an int >= 0, else
    TypeError/ValueError."""
    if isinstance(drop_records, bool) or not isinstance(drop_records, int):
        raise TypeError(f"drop_records must be an int, got {type(drop_records).__name__}")
    if drop_records < 0:
        raise ValueError(f"drop_records must be >= 0, got {drop_records}")
    return drop_records


def _damaged(exc: Exception) -> DamagedIndexError:
    return DamagedIndexError(f"index damaged: a drop record cannot be decoded ({exc})")


def decode_drop(data: bytes) -> tuple[int, float, int, int, bytes, str, dict[str, Any], str]:
    """(sequence, time, distance, fingerprint, kept id, key, record, rule) of a drop
    record."""
    data = unsealed(data, "a drop record")
    try:
        seq, seen, distance, code, fingerprint, kept, key_len = HEADER.unpack_from(data)
        rule = RULES[code]
        start = HEADER.size
        key = bytes(data[start : start + key_len]).decode("utf-8")
        body = data[start + key_len :]
        record = json.loads(bytes(body)) if body else {}
    except (struct.error, ValueError, IndexError) as exc:
        raise _damaged(exc) from None
    if not isinstance(record, dict):
        raise _damaged(TypeError(f"a JSON {type(record).__name__}, not an object"))
    return seq, seen, distance, fingerprint, kept, key, record, rule


def last_drop_given(txn: Txn, meta: Space) -> int:
    """The last sequence number given to a drop record (0 before the first);
    DamagedIndexError when ``meta`` holds no number there."""
    last = txn.get(LAST, db=meta)
    if last is None:
        return 0
    given = stored_count(bytes(last))
    if given is None:
        raise DamagedIndexError(
            f"index damaged: the last drop sequence number given is {bytes(last)[:40]!r},"
            " not a number of a drop record"
        )
    return given


class Drops:
    """The drop records of an index (see the module's docstring)."""

    def __init__(self, drops: Space, order: Space, by_kept: Space, meta: Space, docs: Space):
        self.drops = drops
        self.order = order
        self.by_kept = by_kept
        self.meta = meta
        self.docs = docs

    # -- writing ---------------------------------------------------------------------------

    def record(
        self,
        txn: Txn,
        fingerprint: int,
        key: str,
        entry: Entry,
        kept: str,
        distance: int,
        now: float,
        limit: int,
        rule: str = "hamming",
    ) -> None:
        """Record that ``key`` (``fingerprint``) was dropped as a duplicate of the stored
        ``kept`` at ``distance``, found by ``rule``, at ``now`` unless the record gave its
        time (``seen``), then evict the oldest records beyond ``limit``."""
        dropped = doc_id(key)
        self.forget_id(txn, dropped)
        seq = self.last_given(txn) + 1
        txn.put(self.meta, LAST, str(seq).encode())
        seen = now if entry.seen is None else entry.seen
        header = HEADER.pack(
            seq, seen, distance, rule_code(rule), fingerprint, doc_id(kept), entry.key_len
        )
        txn.put(self.drops, dropped, sealed(header + entry.payload))
        txn.put(self.order, SEQUENCE.pack(seq), dropped)
        txn.put(self.by_kept, doc_id(kept), dropped)
        self.evict(txn, limit)

    def evict(self, txn: Txn, limit: int) -> int:
        """Remove the oldest records beyond ``limit``; how many were removed."""
        excess = txn.count(self.order) - limit
        if excess <= 0:
            return 0
        oldest = [bytes(d) for _, d in itertools.islice(txn.scan(self.order), excess)]
        for dropped in oldest:
            self.forget_id(txn, dropped)
        return len(oldest)

    def forget(self, txn: Txn, key: str) -> bool:
        """Remove the drop record of ``key``; False if there was none."""
        return self.forget_id(txn, doc_id(key))

    def forget_id(self, txn: Txn, dropped: bytes) -> bool:
        """Remove the drop record stored under the id ``dropped``; False if there was none."""
        data = txn.pop(self.drops, dropped)
        if data is None:
            return False
        seq, _, _, _, kept, _, _, _ = decode_drop(data)
        txn.delete(self.order, SEQUENCE.pack(seq))
        txn.delete(self.by_kept, kept, dropped)
        return True

    def forget_kept(self, txn: Txn, kept: str) -> int:
        """Remove the records of every key dropped against the document ``kept``."""
        kept_id = doc_id(kept)
        dropped = [bytes(d) for d in txn.values(self.by_kept, kept_id)]
        for one in dropped:
            self.forget_id(txn, one)
        return len(dropped)

    # -- reading ---------------------------------------------------------------------------

    def count(self, txn: Txn) -> int:
        return txn.count(self.drops)

    def get(self, txn: Txn, key: str) -> Drop | None:
        data = txn.get(doc_id(key), db=self.drops)
        return None if data is None else self._drop(txn, data)

    def of_kept(self, txn: Txn, kept: str) -> list[Drop]:
        """The copies dropped against ``kept``, nearest first, then by key."""
        drops = []
        for dropped in txn.values(self.by_kept, doc_id(kept)):
            data = txn.get(dropped, db=self.drops)
            if data is not None:
                drops.append(self._drop(txn, data))
        drops.sort(key=lambda d: (d.distance, d.key))
        return drops

    def stream(self, read: Callable[[], Any]) -> Iterator[Drop]:
        """Every drop record, oldest first, a chunk per short read transaction."""
        return stream(read, self.order, self._in_order)

    def _in_order(self, txn: Txn, seq: bytes, dropped: bytes) -> Drop | None:
        data = txn.get(dropped, db=self.drops)
        return None if data is None else self._drop(txn, data)

    def _drop(self, txn: Txn, data: bytes) -> Drop:
        _, seen, distance, fingerprint, kept_id, key, record, rule = decode_drop(data)
        kept_data = txn.get(kept_id, db=self.docs)
        kept = None if kept_data is None else decode_key(kept_data)[1]
        return Drop(key, fingerprint, kept, distance, seen, record, rule)

    # -- checking --------------------------------------------------------------------------

    def problems(self, txn: Txn) -> list[str]:
        """What is wrong with the drop records (``verify``, :func:`drop_problems`), and with
        the last sequence number given (:meth:`sequence_problems`)."""
        return self.sequence_problems(txn) + drop_problems(
            ((bytes(d), bytes(data)) for d, data in txn.scan(self.drops)),
            lambda seq, dropped: txn.get(SEQUENCE.pack(seq), db=self.order) == dropped,
            txn.count(self.order),
            {(bytes(kept), bytes(dropped)) for kept, dropped in txn.scan(self.by_kept)},
            lambda kept: txn.get(kept, db=self.docs) is not None,
        )

    def last_given(self, txn: Txn) -> int:
        """The last sequence number given to a drop record (:func:`last_drop_given`)."""
        return last_drop_given(txn, self.meta)

    def sequence_problems(self, txn: Txn) -> list[str]:
        """``meta``'s last sequence number, unless it is a number at least that of the newest
        record in the arrival order: the next drop, numbered after it, would else replace an
        older record's place there (or fail)."""
        try:
            given = self.last_given(txn)
        except DamagedIndexError as exc:
            return [str(exc).removeprefix("index damaged: ")]
        newest = txn.last(self.order)
        if newest is None or len(newest[0]) != SEQUENCE.size:  # none, or said by the order
            return []
        top = SEQUENCE.unpack(bytes(newest[0]))[0]
        if given >= top:
            return []
        return [
            f"the last drop sequence number given is {given}, below the {top} of a recorded"
            " drop: the next drops would take the places of older ones"
        ]


def drop_problems(
    records: Iterable[tuple[bytes, bytes]],
    in_order: Callable[[int, bytes], bool],
    order_count: int,
    links: set[tuple[bytes, bytes]],
    stored: Callable[[bytes], bool],
) -> list[str]:
    """What is wrong with the drop ``records`` (dropped id, record) of an index, LMDB or Redis:
    each decodable, stored under its key's id, in the arrival order under its sequence number
    (``in_order(seq, id)``; ``order_count`` ids in that order), linked from the document it
    was dropped against (``links``: (kept id, dropped id)), which exists (``stored``)."""
    problems: list[str] = []
    ordered = 0
    linked = 0
    for dropped, data in records:
        try:
            seq, _, _, _, kept, key, _, _ = decode_drop(data)
        except DamagedIndexError as exc:
            problems.append(f"drop record {dropped.hex()}: {exc}")
            continue
        if doc_id(key) != dropped:
            problems.append(f"drop record of {key!r} is stored under another id")
        if not in_order(seq, dropped):
            problems.append(f"drop record of {key!r} is not in the arrival order")
        else:
            ordered += 1
        if (kept, dropped) not in links:
            problems.append(f"drop record of {key!r} is not linked from its kept page")
        else:
            linked += 1
        if not stored(kept):
            problems.append(f"drop record of {key!r} names a kept page that is not stored")
    if order_count != ordered:
        problems.append(f"{order_count} drops in the arrival order, {ordered} recorded there")
    if len(links) != linked:
        problems.append(f"{len(links)} drop links, {linked} recorded")
    return problems
