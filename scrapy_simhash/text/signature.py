"""A page's signature: what an index keeps of a page to decide on it.

The 64-bit fingerprint (:mod:`.fingerprint`) catches copies whose words are nearly all the
same: edits, dates, ads, tracking parameters, a truncated copy. It cannot catch every copy
of an article in another site's layout: two texts differ in a bit of it with probability
(1 - J) / 2, so k = 3 of 64 bits asks for a weighted Jaccard of about 0.9 and more, and the
text trafilatura returns for a syndicated copy often carries some of the other site's
standfirst, captions, credits or lists (``docs/quality.md``). So the signature holds a second
signal beside it, which layouts do not change and edits do:

* the hashes of the text's :data:`.sentences.SENTENCES` longest distinct sentences (a
  sentence: split at sentence ends, line breaks, runs of tildes and white space within CJK
  text (before a CJK character, a digit, an opening quote or a paragraph's symbol), measured
  by its letters, case-folded; at least :data:`.sentences.SENTENCE_MIN` letters; known by
  those letters and the content numbers it holds, not its dates, times or counters), from
  the prose lines the fingerprint reads (those of a hard-wrapped text joined first, so a
  line break in mid-sentence does not cut one). A sentence's words do not tell a product's
  variants or a league's match reports apart, and the sentence rule would take them for one
  page: their numbers do (version 7; without number features, a sentence is known by its
  letters alone);
* the count of content words, with the words of the text's data tables that the chrome
  filter left out (for the length guards; version 15);
* the set of the distinct numbers that are features (prices, specs, scores; not dates,
  times or counters) as 64 bits, one a number (:func:`numbers_bits`; version 17, a one-bit
  minhash before), and their count, for the numbers veto;
* a 64-bit one-bit minhash of the text's shingles, its runs of :data:`SHINGLE` of the words
  its fingerprint keeps (:func:`shingles_sketch`; version 10; 0 in a signature made without
  it, which no veto then reads), for the shingles veto: the fingerprint weighs words,
  and a page rewritten with the article's own words, or common ones, keeps its weight where
  it was while it keeps few of the article's runs of words.

The rule that decides whether two pages are near duplicates from their signatures is
:mod:`.rule`; the long sentences are read by :mod:`.sentences`.

A signature depends on the text alone, and is a storage format (:meth:`PageSignature.pack`):
any change to what this module computes bumps :data:`.fingerprint.FINGERPRINT_VERSION`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from .chrome import data_table_words
from .fingerprint import (
    DEFAULT_FINGERPRINTER,
    Fingerprinter,
    _mix,
    feature_hashes,
    nfkc,
    odd_factors,
)
from .rule import DEFAULT_RULE
from .sentences import longest_sentences

#: How many consecutive content words make a shingle (:func:`shingles_sketch`).
SHINGLE = 5

_SHINGLE_FACTORS = odd_factors(b"scrapy_simhash shingle factors", SHINGLE)
_BIN_BITS = 6
_BINS = 1 << _BIN_BITS
_BIN_PLACES = np.arange(_BINS, dtype=np.intp)
_BIN_SALTS = _mix(np.arange(1, _BINS + 1, dtype=np.uint64))
_NUMBER_SALT = np.uint64(0x6E756D6265727331)  # the numbers' bits: "numbers1"
_EMPTY = np.uint64((1 << 64) - 1)  # a bin no shingle fell in (a least hash of all ones: never)
# fingerprint, numbers' bits, shingles sketch, words, number count, sentences
_HEAD = struct.Struct("<QQQIHB")
_MASK = (1 << 64) - 1


def shingles_sketch(in_order: np.ndarray) -> int:
    """One-bit minhash of a text's shingles (every run of :data:`SHINGLE` consecutive words
    among those its fingerprint keeps: every word of a text of at most 512 distinct ones;
    ``in_order``: their feature hashes, in the text's order), by one permutation: a
    shingle's mixed hash falls in one of 64 bins by its top 6 bits, a bin's bit is the lowest
    bit of its least hash mixed again, and an empty bin borrows the least hash of the next
    bin that has one (salted by its own place). Two texts differ in a bit with probability
    about (1 - J) / 2, J the Jaccard similarity of their shingles: a copy keeps its runs of
    words, a rewritten text keeps its words but few of their runs."""
    count = in_order.size
    if count == 0:
        return 0
    runs = max(1, count - SHINGLE + 1)
    shingles = in_order[:runs] * _SHINGLE_FACTORS[0]
    for j in range(1, min(SHINGLE, count)):
        shingles += in_order[j : j + runs] * _SHINGLE_FACTORS[j]
    shingles = _mix(shingles)
    least = np.full(_BINS, _EMPTY, dtype=np.uint64)
    np.minimum.at(least, (shingles >> np.uint64(64 - _BIN_BITS)).astype(np.intp), shingles)
    filled = np.flatnonzero(least != _EMPTY)
    if filled.size < _BINS:
        borrowed = filled[np.searchsorted(filled, _BIN_PLACES) % filled.size]
        least = least[borrowed] ^ (borrowed != _BIN_PLACES) * _BIN_SALTS
    bits = (_mix(least) & np.uint64(1)).astype(np.uint8)
    return int.from_bytes(np.packbits(bits).tobytes(), "big")


def numbers_bits(numbers: list[str]) -> int:
    """The set of a text's distinct numbers as 64 bits: each number sets the bit that the top
    6 bits of its mixed feature hash name. A product page's 10-30 numbers set most of theirs
    alone, so two pages whose numbers differ show bits that only one of them sets, on both
    sides (:meth:`.rule.Rule.numbers_differ`); a copy that only gained numbers (a layout's
    prices beside the article) shows them on one side."""
    distinct = sorted(set(numbers))
    if not distinct:
        return 0
    places = _mix(feature_hashes(distinct) ^ _NUMBER_SALT) >> np.uint64(64 - _BIN_BITS)
    return int(np.bitwise_or.reduce(np.left_shift(np.uint64(1), places)))


@dataclass(frozen=True)
class PageSignature:
    """What the index keeps of a page to decide on it: the 64-bit ``fingerprint``, the hashes
    of its longest ``sentences``, its count of content ``words`` (with its data tables'
    words that the chrome filter left out), the bits and count of its content ``numbers``
    (:func:`numbers_bits`), and the sketch of its ``shingles`` (:func:`shingles_sketch`).
    Picklable; compared with :meth:`is_near_duplicate`."""

    fingerprint: int
    sentences: tuple[int, ...] = ()
    words: int = 0
    numbers: int = 0
    number_count: int = 0
    shingles: int = 0

    def is_near_duplicate(self, other: PageSignature, max_distance: int = 3) -> bool:
        """Whether ``other`` is a near duplicate of this page, decided exactly as an index
        holding only this page would (:data:`.rule.DEFAULT_RULE`)."""
        return DEFAULT_RULE.decide(other, self, max_distance) is not None

    def pack(self) -> bytes:
        """The stored form: 31 bytes and 8 per sentence, little-endian."""
        head = _HEAD.pack(
            self.fingerprint,
            self.numbers,
            self.shingles,
            min(self.words, 0xFFFFFFFF),
            min(self.number_count, 0xFFFF),
            len(self.sentences),
        )
        return head + struct.pack(f"<{len(self.sentences)}Q", *self.sentences)

    @staticmethod
    def sketches_of(data: bytes) -> tuple[int, int]:
        """The fingerprint and the shingles sketch in the stored form ``data``, read alone
        ((0, 0) when it is too short to hold them)."""
        if len(data) < _HEAD.size:
            return 0, 0
        return int.from_bytes(data[:8], "little"), int.from_bytes(data[16:24], "little")

    @classmethod
    def unpack(cls, data: bytes) -> PageSignature:
        """The signature :meth:`pack` gave; ValueError if ``data`` is not one."""
        if len(data) < _HEAD.size:
            raise ValueError(f"a signature takes at least {_HEAD.size} bytes, got {len(data)}")
        fingerprint, numbers, shingles, words, number_count, n = _HEAD.unpack_from(data)
        if len(data) != _HEAD.size + 8 * n:
            raise ValueError(f"a signature of {n} sentences takes {_HEAD.size + 8 * n} bytes")
        sentences = struct.unpack_from(f"<{n}Q", data, _HEAD.size)
        return cls(fingerprint, sentences, words, numbers, number_count, shingles)


def page_signature(
    text: str, fingerprinter: Fingerprinter = DEFAULT_FINGERPRINTER
) -> PageSignature | None:
    """The signature of an extracted text, or ``None`` when it is too short to fingerprint
    (under ``fingerprinter.min_words`` content words)."""
    if not isinstance(text, str):
        raise TypeError(
            f"page_signature() takes a page's extracted text (str), not "
            f"{type(text).__name__}: extract_text() gives it from the page's HTML"
        )
    prose = fingerprinter.prose(text)
    # the words of the data tables the chrome filter left out: no features, but the page's
    # length (a table-heavy article's first 30% is a shorter page; version 15)
    tables = data_table_words(text)
    if tables:
        tables = max(0, tables - data_table_words(prose))
    normal = nfkc(prose)  # one pass, for the words and the sentences
    read: list[tuple[str, str]] = []  # the blocks read, and their dates blanked
    numbers: list[str] = []  # the tokens that are numbers, found as the words are read
    tokens = fingerprinter.prose_words(prose, normal, read, numbers)
    words = len(tokens) - len(numbers)  # Fingerprinter.word_count, the numbers found once
    if words < fingerprinter.min_words:
        return None
    hashes, weights, in_order = fingerprinter.features_in_order(tokens)
    return PageSignature(
        fingerprint=fingerprinter.sketch_of(hashes, weights) & _MASK,
        sentences=longest_sentences(normal, numbers=fingerprinter.numbers, read=read),
        # as stored (pack): an index decides with the counts it keeps, so a page is decided
        # alike before and after it is stored, on LMDB and on Redis (whose script reads them)
        words=min(words + tables, 0xFFFFFFFF),
        numbers=numbers_bits(numbers),
        number_count=min(len(set(numbers)), 0xFFFF),
        shingles=shingles_sketch(in_order),
    )
