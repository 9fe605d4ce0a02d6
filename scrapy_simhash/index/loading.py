"""Bulk loads (``insert_many``): many documents in one write transaction.

Into an empty index every record and link is appended in key order, while a background
thread sorts each table's entries (:class:`~.bulk.Ahead`). Into a filled one, keys stored
before are replaced one by one and new ones written sorted, their new fingerprints added to
the tables sorted, each bucket written once.
"""

from __future__ import annotations

import time
from functools import partial

import numpy as np

from .bulk import LINK, Ahead, Prepared, fingerprint_bytes, links, sorted_distinct
from .documents import Documents
from .records import Entry
from .storage import Txn
from .tables import Levels, add_count, check_added


def load(txn: Txn, docs: Documents, levels: Levels, batch: Prepared, ahead: Ahead | None) -> None:
    """Store the prepared ``batch``; ``ahead``, if given, sorts the main tables' entries for
    an index that was empty when the load began."""
    if txn.count(docs.docs) == 0:
        if ahead is None or len(batch) != batch.read:  # repeated keys: fewer fingerprints
            if ahead is not None:
                ahead.close()
            ahead = levels.main.ahead(batch.fingerprints)
        with ahead:
            _load_empty(txn, docs, levels, batch, ahead)
        return
    if ahead is not None:  # sorted for an empty index, which another process filled
        ahead.close()
    # Keys stored before are replaced one by one; new ones are written sorted.
    fresh = []
    new_fps: list[int] = []
    now = time.time()
    for i, docid in enumerate(batch.docids()):
        if txn.get(docid, db=docs.docs) is None:
            fresh.append(i)
            continue
        fp, key, record = batch.item(i)
        if docs.store(txn, fp, key, Entry(key, record), now, tables=False):
            new_fps.append(fp)
    selected = np.array(fresh, dtype=np.int64)
    fps = batch.fingerprints[selected]
    check_added(txn.put_many(docs.docs, batch.entries(selected)), len(selected), "docs")
    # Fingerprints new to the index (checked before their links are written).
    new = sorted_distinct(fps)
    new = np.array(
        [
            f
            for f, b in zip(new.tolist(), fingerprint_bytes(new), strict=True)
            if txn.get(b, db=docs.links) is None
        ],
        dtype=np.uint64,
    )
    pairs = LINK.iter_unpack(links(fps, batch.ids[selected]))
    check_added(txn.put_many(docs.links, pairs), len(selected), "fps")
    # A fingerprint is new at most once per call (keys are unique in it), and no new one is
    # unlinked again: add them all to the tables, sorted per table.
    levels.put(txn, np.concatenate([np.array(new_fps, dtype=np.uint64), new]))


def _load_empty(txn: Txn, docs: Documents, levels: Levels, batch: Prepared, tables: Ahead) -> None:
    """Bulk load into an empty index: every entry appended in order, while ``tables``
    computes the tables' entries in the background."""
    # The links are sorted in the background too, while the records are written.
    with Ahead([partial(links, batch.fingerprints, batch.ids)], depth=1) as rows:
        added = txn.put_many(docs.docs, batch.entries(), append=True)
        check_added(added, len(batch), "docs")
        pairs = LINK.iter_unpack(next(iter(rows)))
        check_added(txn.put_many(docs.links, pairs, append=True), len(batch), "fps")
    count = 0
    for space, result in zip(levels.main.spaces, tables, strict=True):
        count, entries = result
        levels.main.write_buckets(txn, space, entries)
    add_count(txn, levels.meta, count)
