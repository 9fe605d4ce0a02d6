"""The drop records of an index on a Redis server (:class:`.redis_index.RedisIndex`): the
records of pages found to be near duplicates, and of which stored page, as :mod:`.drops`
has them on LMDB (the same bytes).

They live in ``{KEY}:drops`` (dropped key's id -> record), ``{KEY}:dseq`` (the ids by
sequence number, a sorted set: the oldest are evicted first beyond the writer's bound) and
``{KEY}:dkept`` (kept document id -> the ids dropped against it). A check-and-insert records
its drop in its own script; a drop is recorded or forgotten alone by the script's modes
``drop`` and ``forget``, and read here with plain commands.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .drops import Drop, decode_drop, rule_code
from .records import SignedItem, check_key, decode_key, doc_id, packed_ids
from .redis_calls import CHUNK, DROPPING, item_args, one, store_args

if TYPE_CHECKING:
    from .redis_index import RedisIndex


def record_drop(index: RedisIndex, item: SignedItem, kept: str, distance: int, rule: str) -> None:
    """One script: the record written unless ``kept`` is not stored."""
    index._writable()
    args = store_args(index, item, time.time(), b"")
    args[DROPPING] = doc_id(kept) + bytes([distance, rule_code(rule)])
    if int(one(index, "drop", index.max_distance, args)[0]) == -2:
        raise ValueError(f"{kept!r} is not stored in the index")


def forget_drop(index: RedisIndex, key: str) -> bool:
    """Remove the drop record of ``key``; False if there was none."""
    docid = doc_id(check_key(key))
    index._writable()
    return bool(int(one(index, "forget", 0, item_args(index, None, docid=docid))[1]))


def _drop(index: RedisIndex, data: bytes) -> Drop:
    _, seen, distance, fingerprint, kept_id, key, record, rule = decode_drop(data)
    kept_data = index.client.hget(index._docs, kept_id)
    kept = None if kept_data is None else decode_key(bytes(kept_data))[1]
    return Drop(key, fingerprint, kept, distance, seen, record, rule)


def dropped(index: RedisIndex, key: str) -> Drop | None:
    """The drop record of ``key`` (a page found to be a near duplicate), or None."""
    data = index.client.hget(index._drops, doc_id(check_key(key)))
    return None if data is None else _drop(index, bytes(data))


def drops_of(index: RedisIndex, key: str) -> list[Drop]:
    """The drop records of the keys dropped against the stored ``key``, nearest first."""
    ids = bytes(index.client.hget(index._dkept, doc_id(check_key(key))) or b"")
    wanted = packed_ids(ids)
    found = index.client.hmget(index._drops, wanted) if wanted else []
    drops = [_drop(index, bytes(data)) for data in found if data is not None]
    drops.sort(key=lambda d: (d.distance, d.key))
    return drops


def stream(index: RedisIndex) -> Iterator[Drop]:
    """Every drop record, oldest first, read :data:`.redis_calls.CHUNK` at a time."""
    start = 0
    while True:
        ids = index.client.zrange(index._dseq, start, start + CHUNK - 1)
        if not ids:
            return
        for data in index.client.hmget(index._drops, ids):
            if data is not None:  # forgotten meanwhile
                yield _drop(index, bytes(data))
        start += CHUNK


def count(index: RedisIndex) -> int:
    """How many drop records the index holds."""
    return int(index.client.hlen(index._drops))
