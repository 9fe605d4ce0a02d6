"""A bulk load into an empty index on a Redis server, built on the client.

A scripted insert (:meth:`.RedisIndex.insert_many` into an index that holds documents) pays
a script's work for every item: its record, links and postings read and written, and its
value put into one bucket of every table, each bucket copied and written again by every
insert. Into an empty index the same hashes are instead built whole on the client, as the
LMDB index's bulk load builds its tables (:mod:`.bulk`): the records in document id order,
the fingerprint links, the signatures and their sentence postings, and every table's buckets
sorted with numpy and written once each, a thousand fields to a command.

They are written under staging keys (``{KEY}:load:<token>:docs``, ...) that carry the
index's hash tag, so that on a cluster they live on the index's node, and that expire after
:data:`STAGING_TTL` seconds, so that a load that dies leaves nothing behind for long. Then
one script (:data:`INSTALL`) checks that the index is still the one opened and still empty,
and renames the staging keys into place and sets the count of fingerprints. Scripts are
atomic, so every other client sees the index empty before the script and whole after it:
no check ever meets a half-loaded index. When another client stored anything meanwhile,
the script deletes the staging keys and says so, and the caller inserts by scripts instead;
when a staging key lost fields (a ``volatile-*`` eviction policy may evict keys that expire),
it deletes them and fails: nothing is installed.

The result is the scripted insert's, key for key: the same records (first seen now, or the
``seen`` a record gives), signatures, postings and buckets; only the order of the document
ids within a fingerprint's link or a sentence's posting may differ, which no reader depends
on (``tests/test_redis_index.py`` compares the two).
"""

from __future__ import annotations

import itertools
import logging
import secrets
import time
from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from .bulk import gc_paused, links, prepare, read_items, sorted_distinct, split_signatures
from .records import doc_id, sealed
from .redis_calls import pipeline
from .sentences import sentence_key

if TYPE_CHECKING:
    from .redis_index import RedisIndex

logger = logging.getLogger(__name__)

#: Seconds a staging key lives unless the load installs it first.
STAGING_TTL = 3600
#: Hash fields set by one command, and commands sent in one pipeline.
FIELDS = 1000
COMMANDS = 16

#: KEYS: meta, then the index's keys to fill, then the index's other keys, then the staging
#: keys in the order of the keys to fill. ARGV: the index's token, the count of keys to fill,
#: the count of other keys, the count of distinct fingerprints loaded, then the fields
#: written to each staging key (0: none). The answer: 1 when installed, 0 when the index is
#: no longer empty; an error when a staging key lost fields (evicted by a ``volatile-*``
#: policy, or expired). Either way but the first, the staging keys are deleted.
INSTALL = """
if redis.call('HGET', KEYS[1], 'created') ~= ARGV[1] then
  return redis.error_reply('SIMHASHCHANGED the index was reset, replaced or lost ' ..
    '(a server restarted without persistence) since it was opened')
end
local filled, others = tonumber(ARGV[2]), tonumber(ARGV[3])
local first = 2 + filled + others
local function discard()
  for i = first, first + filled - 1 do redis.call('DEL', KEYS[i]) end
end
local empty = redis.call('HGET', KEYS[1], 'fingerprints') == '0'
for i = 2, 1 + filled + others do
  if empty and redis.call('EXISTS', KEYS[i]) == 1 then empty = false end
end
if not empty then discard() return 0 end
for i = 0, filled - 1 do
  if redis.call('HLEN', KEYS[first + i]) ~= tonumber(ARGV[5 + i]) then
    discard()
    return redis.error_reply('SIMHASHLOAD the bulk load lost a staging key (evicted or ' ..
      'expired) before its install; nothing was loaded')
  end
end
for i = 0, filled - 1 do
  local staged, target = KEYS[first + i], KEYS[2 + i]
  if tonumber(ARGV[5 + i]) > 0 then
    redis.call('RENAME', staged, target)
    redis.call('PERSIST', target)
  end
end
redis.call('HSET', KEYS[1], 'fingerprints', ARGV[4])
return 1
"""


def table_buckets(
    permuted: np.ndarray, field_bits: int, width: int
) -> Iterator[tuple[bytes, bytes]]:
    """(field, bucket) of one table: ``permuted``, the sorted distinct permuted fingerprints,
    grouped by their top ``field_bits`` bits (the field, in whole bytes, big-endian); a
    bucket is the other bits of each value, in ``width`` bytes, concatenated in order."""
    n = permuted.size
    if not n:
        return iter(())
    # no field bits: one bucket, without shifting by the whole 64 bits
    fields = permuted >> np.uint64(64 - field_bits) if field_bits else np.zeros_like(permuted)
    first = np.flatnonzero(np.concatenate(([True], fields[1:] != fields[:-1])))
    values = (permuted & np.uint64((1 << (64 - field_bits)) - 1)).astype(">u8")
    blob = values.view(np.uint8).reshape(-1, 8)[:, 8 - width :].tobytes()
    field_bytes = (field_bits + 7) // 8
    heads = fields[first].astype(">u8").view(np.uint8).reshape(-1, 8)[:, 8 - field_bytes :]
    names = [bytes(row) for row in heads]
    bounds = (np.append(first, n) * width).tolist()
    return zip(names, (blob[a:b] for a, b in itertools.pairwise(bounds)), strict=True)


class Staging:
    """The staging keys of one load, written through pipelines to the index's node."""

    def __init__(self, index: RedisIndex, names: list[str]) -> None:
        self.index = index
        tag = "{" + index.key + "}"
        token = secrets.token_hex(8)
        self.keys = [f"{tag}:load:{token}:{name}" for name in names]
        self._pipe = pipeline(index)
        self._commands = 0
        #: Fields written to each staging key.
        self.counts = [0] * len(names)

    def put(self, at: int, fields: Iterator[tuple[bytes, bytes]]) -> None:
        """Set ``fields`` in the staging key ``at``, :data:`FIELDS` a command."""
        key = self.keys[at]
        while True:
            mapping = dict(itertools.islice(fields, FIELDS))
            if not mapping:
                return
            self._pipe.hset(key, mapping=mapping)
            self.counts[at] += len(mapping)
            self._pipe.expire(key, STAGING_TTL)
            self._commands += 1
            if self._commands >= COMMANDS:
                self.flush()

    def flush(self) -> None:
        if self._commands:
            self._pipe.execute()
            self._commands = 0

    def discard(self) -> None:
        """Delete the staging keys (after a failure: they would expire anyway)."""
        try:
            self._pipe.reset()
            for key in self.keys:
                self.index.client.delete(key)
        except Exception:  # the failure being raised says more
            logger.debug("could not delete the staging keys of %s", self.index.path)


def bulk_load(index: RedisIndex, items: list[Any]) -> int | None:
    """Load ``items`` (``(fingerprint or signature, key, record)``) into ``index``, empty
    when the caller looked: how many items were read, or None when another client stored a
    document meanwhile (nothing was loaded). Every item is checked before anything is
    written."""
    with gc_paused():
        return _bulk_load(index, items)


def _bulk_load(index: RedisIndex, items: list[Any]) -> int | None:
    plain, signatures = split_signatures(items)
    columns = read_items(plain)
    if not len(columns):
        return 0
    batch = prepare(columns, time.time())
    started = time.monotonic()
    split = index._split
    names = ["docs", "fps", "sigs", "sents", *(f"t{i:02d}" for i in range(index.layout.tables))]
    targets = [index._docs, index._fps, index._sigs, index._sents, *index._tables]
    others = [index._drops, index._dseq, index._dkept, index._reps]
    staging = Staging(index, names)
    try:
        staging.put(0, batch.entries())
        staging.put(1, _links(batch.fingerprints, batch.ids))
        sigs: list[tuple[bytes, bytes]] = []
        postings: defaultdict[bytes, list[bytes]] = defaultdict(list)
        for key, signature in signatures.items():
            if signature is None:
                continue
            docid = doc_id(key)
            sigs.append((docid, sealed(signature.pack(), docid)))
            for sentence in dict.fromkeys(signature.sentences):
                postings[sentence_key(sentence)].append(docid)
        staging.put(2, iter(sigs))
        del sigs
        staging.put(3, ((name, b"".join(ids)) for name, ids in postings.items()))
        del postings
        distinct = sorted_distinct(batch.fingerprints)
        for i, plan in enumerate(index.layout.plans):
            permuted = sorted_distinct(plan.forward_np(distinct), in_place=True)
            staging.put(4 + i, table_buckets(permuted, split.bits, split.width))
            del permuted
        staging.flush()
        installed = index._install(
            [index._meta, *targets, *others, *staging.keys],
            [index._token, len(targets), len(others), len(distinct), *staging.counts],
        )
    except BaseException:
        staging.discard()
        raise
    if not installed:
        logger.info(
            "index %s: another client stored documents during the bulk load; inserting them "
            "one by one instead",
            index.path,
        )
        return None
    logger.debug(
        "index %s: bulk-loaded %d documents (%d fingerprints) in %.1f s",
        index.path,
        len(batch),
        len(distinct),
        time.monotonic() - started,
    )
    return batch.read


def _links(fingerprints: np.ndarray, ids: np.ndarray) -> Iterator[tuple[bytes, bytes]]:
    """(fingerprint, the ids of its documents concatenated) for the documents' fingerprints
    and ids (``ids`` ascending, as :class:`.bulk.Prepared` holds them)."""
    rows = links(fingerprints, ids)
    n = len(rows)
    if not n:
        return
    fps = rows["fp"]
    first = np.flatnonzero(np.concatenate(([True], fps[1:] != fps[:-1])))
    fp_blob = fps[first].tobytes()
    id_blob = rows["id"].tobytes()
    bounds = (np.append(first, n) * 16).tolist()
    for j, (a, b) in enumerate(itertools.pairwise(bounds)):
        yield fp_blob[8 * j : 8 * j + 8], id_blob[a:b]
