"""Documents and their fingerprints: the ``docs`` records and the ``fps`` links.

A document is stored under its id (a 16-byte hash of its key) with its fingerprint,
first-seen time, key and record (:mod:`.records`); ``fps`` links each fingerprint to the ids
of its documents (several documents may share one). A fingerprint is in the tables while at
least one document links to it: the first link adds it, the last unlink removes it, through
the two callbacks the index gives (which hold a batch's new fingerprints back). A document's
page signature, when it was stored with one, is kept beside it (:mod:`.sentences`), stored,
replaced and removed with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..text.signature import PageSignature
from .records import DamagedIndexError, Entry, decode_doc, decode_header, doc_id
from .sentences import Sentences
from .storage import CHUNK, Space, Txn, stream

TableChange = Callable[[Txn, int], None]


@dataclass(frozen=True)
class Match:
    """A stored document near a query: at Hamming ``distance``, found by ``rule``
    (``"hamming"``, or ``"sentences"`` for a page that shares its long sentences)."""

    fingerprint: int
    key: str
    distance: int
    record: dict[str, Any]
    rule: str = "hamming"


def fp_bytes(fingerprint: int) -> bytes:
    return fingerprint.to_bytes(8, "big")


class Documents:
    """The document records and fingerprint links of an index."""

    def __init__(
        self,
        docs: Space,
        links: Space,
        sentences: Sentences,
        added: TableChange,
        removed: TableChange,
    ) -> None:
        self.docs = docs
        self.links = links
        self.sentences = sentences
        self._added = added  # a fingerprint new to the index, for the tables
        self._removed = removed  # a fingerprint no document has any more

    def link(self, txn: Txn, fingerprint: int, docid: bytes) -> bool:
        """Attach a document to a fingerprint; True if the fingerprint is new."""
        fpb = fp_bytes(fingerprint)
        new = txn.get(fpb, db=self.links) is None
        txn.put(self.links, fpb, docid)
        return new

    def unlink(self, txn: Txn, fingerprint: int, docid: bytes) -> bool:
        """Detach a document from its fingerprint; True if that was the fingerprint's last
        (then taken out of the tables)."""
        fpb = fp_bytes(fingerprint)
        txn.delete(self.links, fpb, docid)
        if txn.get(fpb, db=self.links) is None:
            self._removed(txn, fingerprint)
            return True
        return False

    def store(
        self,
        txn: Txn,
        fingerprint: int,
        key: str,
        entry: Entry,
        now: float,
        tables: bool = True,
        signature: PageSignature | None = None,
    ) -> bool:
        """Insert or replace one document, with its page ``signature`` if given; True if its
        fingerprint is new to the index (then added to the tables unless ``tables`` is
        False)."""
        docid = doc_id(key)
        old = txn.get(docid, db=self.docs)
        seen = now if entry.seen is None else entry.seen
        old_fp = None
        if old is not None:
            old_fp, old_seen = decode_header(old)
            if entry.seen is None:
                seen = old_seen
        new = False
        if old_fp is None:
            new = self.link(txn, fingerprint, docid)
        elif old_fp != fingerprint:
            self.unlink(txn, old_fp, docid)
            new = self.link(txn, fingerprint, docid)
        txn.put(self.docs, docid, entry.data(fingerprint, seen))
        if signature is not None:
            self.sentences.put(txn, docid, signature)
        elif old is not None:
            self.sentences.remove(txn, docid)
        if new and tables:
            self._added(txn, fingerprint)
        return new

    def remove(self, txn: Txn, key: str) -> bool:
        """Remove the document stored under ``key``; False if there was none."""
        docid = doc_id(key)
        old = txn.pop(self.docs, docid)
        if old is None:
            return False
        self.unlink(txn, decode_header(old)[0], docid)
        self.sentences.remove(txn, docid)
        return True

    def matches(self, txn: Txn, found: dict[int, int], exclude: bytes | None = None) -> list[Match]:
        """The documents of the fingerprints ``found`` ({fingerprint: distance}) but
        ``exclude``, nearest first, then by key."""
        matches = []
        for fingerprint, distance in found.items():
            for docid in txn.values(self.links, fp_bytes(fingerprint)):
                if docid == exclude:
                    continue
                data = txn.get(docid, db=self.docs)
                if data is None:
                    continue
                stored, key, record = decode_doc(data)
                if stored != fingerprint:
                    raise DamagedIndexError(
                        f"index damaged: fingerprint {fingerprint:#018x} links the document"
                        f" {key!r} of {stored:#018x}"
                    )
                matches.append(Match(fingerprint, key, distance, record))
        matches.sort(key=lambda m: (m.distance, m.key))
        return matches

    def get(self, txn: Txn, key: str) -> Match | None:
        data = txn.get(doc_id(key), db=self.docs)
        if data is None:
            return None
        fingerprint, key, record = decode_doc(data)
        return Match(fingerprint, key, 0, record)

    def stream(self, read: Callable[[], Any]) -> Iterator[bytes]:
        """Every document record, a chunk per short read transaction (``read()`` opens one)."""
        return stream(read, self.docs, lambda txn, docid, data: data)

    def seen_range(
        self, read: Callable[[], Any], progress: Callable[[int], object] | None
    ) -> tuple[Match | None, Match | None]:
        """The documents first seen earliest and latest, from a scan of the record headers
        (see :meth:`~.index.SimhashIndex.seen_range`)."""
        oldest: tuple[float, bytes] | None = None
        newest: tuple[float, bytes] | None = None
        scanned = 0
        for data in self.stream(read):
            seen = decode_header(data)[1]
            if oldest is None or seen < oldest[0]:
                oldest = (seen, data)
            if newest is None or seen > newest[0]:
                newest = (seen, data)
            scanned += 1
            if progress is not None and scanned == CHUNK:
                progress(scanned)
                scanned = 0
        if progress is not None and scanned:
            progress(scanned)
        return _entry_of(oldest), _entry_of(newest)


def _entry_of(found: tuple[float, bytes] | None) -> Match | None:
    """The match of a ``(seen, record)`` pair, or None."""
    if found is None:
        return None
    fingerprint, key, record = decode_doc(found[1])
    return Match(fingerprint, key, 0, record)
