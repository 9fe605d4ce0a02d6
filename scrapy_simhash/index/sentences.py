"""The second signal of the index's rule: stored pages' signatures and their sentences.

The index decides a page a near duplicate by the Hamming distance of fingerprints, or by
the long sentences it shares with a stored page (:mod:`scrapy_simhash.text.rule`). For
the second rule it keeps, beside the documents:

* ``sigs``: document id -> the page's packed signature (fingerprint, the hashes of its
  longest sentences, its counts of words and numbers, its numbers' bits) | CRC-32;
* ``sents``: sentence hash (8 bytes, big-endian) -> the ids of the documents holding it (a
  multi space): a look-up reads one key per sentence of the page.

* ``repeats``: sentence hash (8 bytes) + site (8 bytes, :func:`site_of` a page's URL) -> the
  ids of the pages of that site found near duplicates by the sentence rule through this
  sentence (a multi space; ``guard`` ids at most: no more are needed). Distinct pages, so
  that a copy checked again in every crawl is counted once.

A sentence held by ``guard`` stored documents or more no longer counts (a disclaimer, a
byline, a newsletter box): a look-up reads at most ``guard`` ids of each. The stored
documents alone cannot learn a site's boilerplate: if one site's pages share a few long
sentences (a returns policy, a legal notice) that outweigh their own, its second page is
found a near duplicate of its first and is not stored, and neither is any page after it.
So a sentence also stops counting, for the pages of one site, once the stored documents
holding it and the pages of that site already dropped through it reach ``guard``
together: at most ``guard`` - 1 of a site's pages are lost that way, never all of them. A
syndicated article has one copy per site, so its sentences keep counting on every site.
A key that is not a URL with a host (:func:`site_of` gives ``b""``) learns nothing.

A document stored without a signature (:meth:`~.index.SimhashIndex.insert` of a bare
fingerprint) is found by its fingerprint only.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import numpy as np

from ..text.signature import PageSignature
from .records import DamagedIndexError, sealed, unsealed
from .storage import Space, Txn

SIGS = b"sigs"
SENTS = b"sents"
REPEATS = b"repeats"


def sentence_key(sentence: int) -> bytes:
    return sentence.to_bytes(8, "big")


def site_of(key: str | None) -> bytes:
    """The site of a page's key, as 8 bytes: a hash of the URL's host name (lower case,
    without user, port or a final dot), or ``b""`` for a key that is not a URL with a host."""
    if not key:
        return b""
    try:
        host = urlsplit(key).hostname
    except ValueError:  # an unbalanced "[" in the host
        return b""
    host = (host or "").rstrip(".")
    if not host:
        return b""
    return hashlib.blake2b(host.encode("utf-8", "surrogatepass"), digest_size=8).digest()


class Sentences:
    """The stored signatures and the sentence postings of an index."""

    def __init__(self, sigs: Space, sents: Space, repeats: Space) -> None:
        self.sigs = sigs
        self.sents = sents
        self.repeats = repeats

    def put(self, txn: Txn, docid: bytes, signature: PageSignature) -> None:
        """Keep the signature of the document ``docid`` (replacing any it had)."""
        self.remove(txn, docid)
        txn.put(self.sigs, docid, sealed(signature.pack(), docid))
        for sentence in signature.sentences:
            txn.put(self.sents, sentence_key(sentence), docid)

    def remove(self, txn: Txn, docid: bytes) -> bool:
        """Forget the signature of ``docid``; False if it had none."""
        data = txn.pop(self.sigs, docid)
        if data is None:
            return False
        for sentence in decode_signature(data, docid).sentences:
            txn.delete(self.sents, sentence_key(sentence), docid)
        return True

    def get(self, txn: Txn, docid: bytes) -> PageSignature | None:
        data = txn.get(docid, db=self.sigs)
        return None if data is None else decode_signature(data, docid)

    def sketches(self, txn: Txn, docid: bytes) -> tuple[int, int]:
        """The fingerprint and shingles sketch of a stored signature, read from its packed
        bytes without its checksum ((0, 0) when there is none): a look before decoding it
        whole."""
        data = txn.get(docid, db=self.sigs)
        return (0, 0) if data is None else PageSignature.sketches_of(bytes(data))

    def shared(
        self,
        txn: Txn,
        sentences: Iterable[int],
        guard: int,
        exclude: bytes | None = None,
        site: bytes = b"",
    ) -> Counter[bytes]:
        """For each stored document but ``exclude``: how many of ``sentences`` it holds,
        counting only the sentences that fewer than ``guard`` documents hold, together with
        the pages of ``site`` (but ``exclude``: a page's own earlier drop does not count
        against it) dropped through them."""
        tally: Counter[bytes] = Counter()
        for sentence in sentences:
            key = sentence_key(sentence)
            if txn.get(key, db=self.sents) is None:  # most of a new page's: no cursor
                continue
            holders = list(itertools.islice(txn.values(self.sents, key), guard))
            others = [d for d in self.repeated(txn, sentence, site, guard + 1) if d != exclude]
            if len(holders) + len(others) < guard:
                tally.update(bytes(d) for d in holders if d != exclude)
        return tally

    def repeated(self, txn: Txn, sentence: int, site: bytes, limit: int) -> list[bytes]:
        """The pages of ``site`` dropped through ``sentence`` (``limit`` at most)."""
        if not site:
            return []
        key = sentence_key(sentence) + site
        if txn.get(key, db=self.repeats) is None:
            return []
        return [bytes(d) for d in itertools.islice(txn.values(self.repeats, key), limit)]

    def learn(
        self,
        txn: Txn,
        docid: bytes,
        page: PageSignature,
        kept: PageSignature,
        site: bytes,
        limit: int,
    ) -> None:
        """Count the page ``docid`` of ``site``, dropped by the sentence rule against a page
        ``kept``, under each long sentence they share (``limit`` pages of a site at most)."""
        if not site:
            return
        for sentence in set(page.sentences).intersection(kept.sentences):
            held = self.repeated(txn, sentence, site, limit)
            if docid not in held and len(held) < limit:
                txn.put(self.repeats, sentence_key(sentence) + site, docid)

    def problems(self, txn: Txn, docs: Space) -> list[str]:
        """``verify``'s rules for the signatures: each decodes and belongs to a document,
        and the postings are exactly the signatures' sentences."""
        found: list[str] = []
        wanted = wanted_postings(
            ((bytes(docid), data) for docid, data in txn.scan(self.sigs)),
            lambda docid: txn.get(docid, db=docs) is not None,
            found,
        )
        held = Postings()
        for key, docid in txn.scan(self.sents):
            held.add(bytes(key), bytes(docid))
        return found + posting_problems(wanted, held) + repeat_problems(txn.scan(self.repeats))


def decode_signature(data: bytes, docid: bytes) -> PageSignature:
    """A stored signature (sealed with its document's id), or :class:`DamagedIndexError`."""
    packed = unsealed(data, "a page signature", docid)
    try:
        return PageSignature.unpack(packed)
    except ValueError as exc:
        raise DamagedIndexError(
            f"index damaged: a page signature cannot be decoded ({exc})"
        ) from None


def wanted_postings(
    sigs: Iterable[tuple[bytes, bytes]], stored: Callable[[bytes], bool], found: list[str]
) -> Postings:
    """The ``(sentence key, document id)`` postings that the stored signatures ``sigs``
    (``(document id, sealed signature)``) call for; a signature that does not decode, or
    whose document is not ``stored``, is added to ``found``. ``verify``'s first half, on any
    storage."""
    wanted = Postings()
    for docid, data in sigs:
        try:
            signature = decode_signature(data, docid)
        except DamagedIndexError as exc:
            found.append(f"signature of document {docid.hex()}: {exc}")
            continue
        if not stored(docid):
            found.append(f"signature of document {docid.hex()}, which is not stored")
        for sentence in signature.sentences:
            wanted.add(sentence_key(sentence), docid)
    return wanted


#: A posting as ``verify`` holds it: an 8-byte sentence key and a 16-byte document id, whose
#: order as 24 bytes is that of the (key, id) pairs.
_ROW = np.dtype("V24")


class Postings:
    """A set of ``(sentence key, document id)`` postings, for ``verify``.

    An index holds about 8 postings a page: as a set of tuples of bytes (some 400 bytes a
    posting) ``verify`` of a million pages needed gigabytes. Well-formed postings are packed
    here, 24 bytes each, and compared sorted in place; the odd ones (a key or an id of
    another length, only in a damaged index) are kept as tuples.
    """

    def __init__(self) -> None:
        self._packed = bytearray()
        self._odd: set[tuple[bytes, bytes]] = set()

    def add(self, key: bytes, docid: bytes) -> None:
        if len(key) == 8 and len(docid) == 16:
            self._packed += key
            self._packed += docid
        else:
            self._odd.add((key, docid))

    def rows(self) -> np.ndarray:
        """The packed postings, sorted (by their bytes) and distinct, as 24-byte items; the
        packing is sorted in place, and this holds no more postings afterwards."""
        rows = np.frombuffer(self._packed, dtype=_ROW)
        self._packed = bytearray()  # the rows hold the old one, which can no longer grow
        rows.sort()
        if len(rows) > 1:
            distinct = np.concatenate([[True], rows[1:] != rows[:-1]])
            if not distinct.all():
                rows = rows[distinct]
        return rows


def posting_problems(wanted: Postings, held: Postings) -> list[str]:
    """``verify``'s second half: the postings held that no signature calls for, and those
    called for and not held (20 of each at most)."""
    extra, missing = _differences(held, wanted)
    found = [
        f"sentence {key.hex()} lists document {docid.hex()}, whose signature lacks it"
        for key, docid in extra
    ]
    found += [
        f"sentence {key.hex()} of document {docid.hex()} is not listed" for key, docid in missing
    ]
    return found


def _differences(
    a: Postings, b: Postings, most: int = 20
) -> tuple[list[tuple[bytes, bytes]], list[tuple[bytes, bytes]]]:
    """The first ``most`` postings (in order) of ``a`` not in ``b``, and of ``b`` not in
    ``a``."""
    odd_a, odd_b = a._odd - b._odd, b._odd - a._odd
    rows_a, rows_b = a.rows(), b.rows()
    if rows_a.shape == rows_b.shape and (rows_a == rows_b).all():
        only_a, only_b = rows_a[:0], rows_b[:0]
    else:
        only_a = _missing_from(rows_b, rows_a)[:most]
        only_b = _missing_from(rows_a, rows_b)[:most]
    # A packed posting never equals an odd one, and the first of the union of both kinds
    # are among the first of each: as sorted tuples, since their parts have fixed lengths.
    first_a = sorted([*odd_a, *(_split(bytes(row)) for row in only_a)])[:most]
    first_b = sorted([*odd_b, *(_split(bytes(row)) for row in only_b)])[:most]
    return first_a, first_b


def _missing_from(sorted_rows: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The ``rows`` that the sorted ``sorted_rows`` lack, in their order."""
    if not len(sorted_rows):
        return rows
    at = np.minimum(np.searchsorted(sorted_rows, rows), len(sorted_rows) - 1)
    return rows[sorted_rows[at] != rows]


def _split(posting: bytes) -> tuple[bytes, bytes]:
    return posting[:8], posting[8:]


def repeat_problems(repeats: Iterable[tuple[bytes, bytes]]) -> list[str]:
    """``verify``'s rule for the pages of a site dropped through a sentence: a 16-byte key
    and a 16-byte page id (20 problems at most)."""
    found = []
    for key, value in repeats:
        if len(key) != 16 or len(value) != 16:
            found.append(f"repeated sentence {bytes(key).hex()}: a page id {bytes(value).hex()!r}")
            if len(found) == 20:
                break
    return found
