"""A page's signature, and the rule that decides whether two pages are near duplicates.

The 64-bit fingerprint (:mod:`.fingerprint`) catches copies whose words are nearly all the
same: edits, dates, ads, tracking parameters, a truncated copy. It cannot catch every copy
of an article in another site's layout: two texts differ in a bit of it with probability
(1 - J) / 2, so k = 3 of 64 bits asks for a weighted Jaccard of about 0.9 and more, and the
text trafilatura returns for a syndicated copy often carries some of the other site's
standfirst, captions, credits or lists (``docs/quality.md``). So the signature holds a second
signal beside it, which layouts do not change and edits do:

* the hashes of the text's :data:`SENTENCES` longest distinct sentences (a sentence: split at
  sentence ends, line breaks, runs of tildes and white space within CJK text (before a CJK
  character, a digit, an opening quote or a paragraph's symbol), measured by its letters,
  case-folded; at least :data:`SENTENCE_MIN` letters; known by those letters and the content
  numbers it holds, not its dates, times or counters), from the prose lines the fingerprint
  reads (those of a hard-wrapped text joined first, so a line break in mid-sentence does not
  cut one). A sentence's words do not tell a product's variants or a league's match reports
  apart, and the sentence rule would take them for one page: their numbers do (version 7;
  without number features, a sentence is known by its letters alone);
* the count of content words, with the words of the text's data tables that the chrome
  filter left out (for the length guards; version 15);
* a 64-bit one-bit minhash of the distinct numbers that are features (prices, specs,
  scores; not dates, times or counters) and their count, for the numbers veto;
* a 64-bit one-bit minhash of the text's shingles, its runs of :data:`SHINGLE` of the words
  its fingerprint keeps (:func:`shingles_sketch`; version 10; 0 in a signature made without
  it, which no veto then reads), for the shingles veto: the fingerprint weighs words,
  and a page rewritten with the article's own words, or common ones, keeps its weight where
  it was while it keeps few of the article's runs of words.

Two pages are near duplicates (:meth:`Rule.decide`) by one of two rules, which a drop names
(``simhash/duplicate/by/<rule>``):

``hamming``
    the fingerprints are within ``k`` bits, unless

    * the shorter text has under :attr:`Rule.hamming_length` of the longer's words (a first
      page of a long article is not the article);
    * their shingles sketches differ in more than :attr:`Rule.shingles_distance` bits (a
      Jaccard of their runs of words of about 0.3 or less: a 20%-edited page keeps about a
      third of its runs of five words, a 2%-edited copy nine tenths; version 10);
    * they read as a rewrite: both have :attr:`Rule.sentences_veto` long sentences or more,
      and either they share none, while their fingerprints differ in
      :attr:`Rule.veto_distance` bits or more and their shingles sketches in more than
      :attr:`Rule.runs_near` (a 20%-edited page keeps almost none of its long sentences
      whole; a 2%-edited copy can break each of its 8 longest, but keeps most of its runs of
      words), or they share at most one, are of like length (the shorter has
      :attr:`Rule.veto_length` of the longer's words) and their shingles sketches differ in
      :attr:`Rule.veto_runs` bits or more, whatever their fingerprints (a rewrite of a fifth
      of the words can keep the fingerprint within a bit and one long sentence whole).

``sentences``
    they share enough of their longest sentences, and the shorter has at least
    :attr:`Rule.length` of the longer's words. Enough is the fewest that applies of:

    * :attr:`Rule.shared`, and at least :attr:`Rule.shared_share` of the long sentences of the
      page that has fewer (a few long sentences that a site prints on every page do not make
      two of its articles one);
    * :attr:`Rule.shared` alone, when the fingerprints are within ``k`` + :attr:`Rule.near`
      bits and the shingles sketches within :attr:`Rule.shingles_distance` (a 2%-edited copy
      one bit past ``k`` whose edits broke most of its long sentences: two weak signals that
      agree), or when the shingles sketches are within :attr:`Rule.runs_near` bits (a Jaccard
      of about 0.7 or more: a few edits, wherever the fingerprint landed, as edits near the
      top or a layout's lead can move it far);
    * one, when the shingles sketches are within :attr:`Rule.runs_same` bits (a Jaccard of
      about 0.85 or more: an ad, a list or a few edits moved the fingerprint and broke most
      long sentences), or within :attr:`Rule.runs_near` with the fingerprints within ``k`` +
      :attr:`Rule.near` (:meth:`Rule.takes_one`; in an index, the one sentence is what finds
      the stored page).

    Or the shorter page is contained in the longer: they share :attr:`Rule.contained` long
    sentences or more, and all but one of those of the page that has fewer, and the shorter
    has at least :attr:`Rule.contained_length` of the longer's words (the longer's extra
    words are not prose of the same article, which would have taken places among its
    longest sentences, but shorter text around it, such as a layout's comments or lists),
    unless their shingles sketches differ in more than :attr:`Rule.contained_runs` bits
    beyond what a text inside the other gives (32 x (1 - the shorter's share of the longer's
    words)): the shorter's own runs of words are then mostly not in the longer, and what
    both hold is a part of each (two front pages of one blog, each with its own newest post
    over the same older ones).

    Neither takes pages that share fewer than :attr:`Rule.block_shared` long sentences
    while their fingerprints are :attr:`Rule.block_distance` bits apart or more (as far as
    unrelated texts) and their shingles sketches :attr:`Rule.block_runs` or more: what they
    share is a block of prose both carry (a company's boilerplate under its press releases, a
    disclaimer), not the article; nor, whatever their fingerprints, such pages whose shingles
    sketches are :attr:`Rule.block_far_runs` bits apart or more, unless they share every long
    sentence of the page that has fewer or the shorter reads as contained in the longer (the
    shorter's list of long sentences begins with the shared ones, the longer's with its own:
    what a longer page's own text does to a text inside it; pages of one length never do).
    A box of prose a site prints above each article heads both lists, and weighs as the lead
    of both fingerprints, which it brings within a few bits. Nor, when their fingerprints
    are :attr:`Rule.apart_distance` bits apart or more, their shingles sketches
    :attr:`Rule.apart_runs` or more (both about as far as unrelated texts) and they are of
    like length (the shorter has :attr:`Rule.apart_length` of the longer's words), pages
    that do not share every long sentence of the page that has fewer, however many they
    share: two listings of one blog whose first post differs share the other posts'
    sentences, and a page with a new post on top is new (a copy in a layout that adds its
    own replies or teasers is longer).

    In an index, a sentence held by :attr:`Rule.guard` or more stored pages does not count
    (a disclaimer, a byline, a newsletter box): that is learned across pages, and acts only
    in the decision.

Neither applies when their numbers disagree: both have :attr:`Rule.numbers_min` content
numbers or more, in like amounts (the fewer at least :attr:`Rule.numbers_ratio` of the more),
the pages are of like length (the shorter has at least :attr:`Rule.numbers_length` of the
longer's words), both hold at least :attr:`Rule.numbers_density` content numbers a word (one
in 200), and their sketches differ in more than :attr:`Rule.numbers_distance` bits (two
product pages or match reports share their words and their prose, not their numbers; dates,
times and counters are not content numbers). Two pages of one kind carry about as many
numbers and as many words; when one carries over twice the other's numbers, or a fifth more
words, the extra ones come from the page around the text (a layout's sidebar of prices or
scores, its tables, its lists of other stories), and the numbers say nothing of the text. Nor
do a long text's few numbers (a 1,700-word essay's six), which come mostly from around it
(a layout's lists, its readers' comments), and whose sketch swings with one lost or gained.
The rule's parameters were chosen on ``bench/quality.py`` (``docs/quality.md``).

A signature depends on the text alone, and is a storage format (:meth:`PageSignature.pack`):
any change to what this module computes bumps :data:`.fingerprint.FINGERPRINT_VERSION`.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import math
import re
import struct
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .chrome import data_table_words
from .fingerprint import (
    _CJK,
    DEFAULT_FINGERPRINTER,
    Fingerprinter,
    _minhash_from,
    _mix,
    blake2b_64,
    feature_hashes,
    hamming,
    nfkc,
)
from .numbers import blank_dates
from .segment import CJK_CHARS

#: How many of a text's longest sentences its signature keeps.
SENTENCES = 8
#: A sentence shorter than this, in letters (CJK characters included), is not kept.
SENTENCE_MIN = 20
#: The rules a decision can name (``simhash/duplicate/by/<rule>``).
RULES = ("hamming", "sentences")

# A sentence ends at a line break, at CJK or Latin end punctuation, at a run of tildes (an
# informal full stop in Chinese and Japanese forums and blogs: "好看~~"; version 9), at a
# full stop followed by white space (not inside "3.5" or "U.S."), or at white space after a
# CJK character (with a closing quote, bracket or colon of its own or not) before a CJK
# character, a digit, an opening quote or bracket, or a symbol that opens a paragraph (a
# bullet, a star or triangle, an arrow, an emoji, a character lost to a broken encoding;
# version 9). Chinese and Japanese prose puts no space between words: a space there is where
# a layout ran two paragraphs or items into one line (a table cell holding the article; a
# subheading or a quotation without its full stop ran into what follows), which another
# layout of the same article sets as lines of their own (version 6). A space before a Latin
# word ("使用 Python 编程") or after a comma ends none. The text is NFKC-normalized first
# (full-width colons, brackets and tildes are ASCII then).
_CJK_BEFORE_SPACE = f"(?:(?<=[{CJK_CHARS}])|(?<=[{CJK_CHARS}][:)”」』》]))"
# General punctuation to dingbats and arrows (bullets, ★ ▲ ● ➨ ↓), the replacement
# character, and the emoji planes.
_PARAGRAPH_SYMBOLS = "\u2000-\u2bff\ufffd\U0001f000-\U0001faff"
# The end marks are taken out with the split: a sentence is measured by its letters. The
# white space rule is tried only where white space follows (most positions fail that at
# once) and only in a text holding CJK characters (the one search costs less than trying it
# at every space of a Latin text). Each alternative begins with its own character, so that
# the split skips to where one can begin (``re`` does so for a pattern whose alternatives all
# open with a literal, or that opens with a character class; not for ``[...]+`` or an
# alternation of classes: half the time of ``[\n。！？!?；;…]|\.\s+``, the same matches).
_ENDS = "|".join([*map(re.escape, "\n。！？!?；;…"), r"\.\s+"])
_SENTENCE_END = re.compile(_ENDS)
# A run of tildes is read as a line break before the split (an alternative of its own in the
# split's pattern would cost every text a fifth more there, tildes or not).
_TILDES = re.compile(r"~~+|〜〜+")
_SENTENCE_END_CJK = re.compile(
    rf"{_ENDS}|(?=\s){_CJK_BEFORE_SPACE}\s+(?=[{CJK_CHARS}\d“「『《({_PARAGRAPH_SYMBOLS}])"
)
_NOT_LETTER = re.compile(r"[\W\d_][\W\d_]*")  # (as [\W\d_]+: see _ENDS)
_DIGITS = re.compile(r"\d\d*")
#: How many consecutive content words make a shingle (:func:`shingles_sketch`).
SHINGLE = 5


def _odd_factors(label: bytes, count: int) -> np.ndarray:
    """``count`` odd 64-bit factors drawn from ``label`` (SHAKE-256): the weights of a run's
    places in a hash of runs of values, the same in every process."""
    drawn = np.frombuffer(hashlib.shake_256(label).digest(8 * count), ">u8")
    return (drawn | np.uint64(1)).astype(np.uint64)


_SHINGLE_FACTORS = _odd_factors(b"scrapy_simhash shingle factors", SHINGLE)
_BIN_BITS = 6
_BINS = 1 << _BIN_BITS
_BIN_PLACES = np.arange(_BINS, dtype=np.intp)
_BIN_SALTS = _mix(np.arange(1, _BINS + 1, dtype=np.uint64))
_EMPTY = np.uint64((1 << 64) - 1)  # a bin no shingle fell in (a least hash of all ones: never)
# fingerprint, numbers sketch, shingles sketch, words, number count, sentences
_HEAD = struct.Struct("<QQQIHB")
_MASK = (1 << 64) - 1


def sentence_hash(sentence: str) -> int:
    """Stable unsigned 64-bit hash of a normalized sentence (BLAKE2b, 8 bytes, big-endian)."""
    return blake2b_64(sentence)


# A text of thousands of sentences as long as its n-th longest, each holding a number (a
# catalogue of one line an item), looks each of them up in the blocks the fingerprint read,
# and each search can read all of them. Past this many searches in one text, a sentence is
# first looked up in an index of the blocks' runs of _GRAM characters: a sentence holding a
# run that none of them holds is in none of them (the same key, without the search); one
# whose runs are all there is searched for from the first place where each of them can be
# (a search from the start read the blocks up to the sentence, each time: the blocks of a
# text of 4 MB of dated sentences, read whole, took 68 s).
_SEARCHES_BEFORE_GRAMS = 64
_GRAM = 16
_GRAM_FACTORS = _odd_factors(b"scrapy_simhash read grams", _GRAM)
# A sentence whose rarest run is in at most so many places is compared at each of them.
_PLACES_TRIED = 64
_GRAM_OFFSETS = np.arange(_GRAM)


def _codes(text: str) -> np.ndarray:
    """The code points of ``text`` (a lone surrogate's too), as uint64."""
    data = text.encode("utf-32-le", "surrogatepass")
    return np.frombuffer(data, dtype="<u4").astype(np.uint64)


class _ReadIndex:
    """The blocks read joined by line breaks (which no block and no sentence searched for
    holds), and where each of their runs of :data:`_GRAM` characters is, by its hash (numpy
    arrays: a set of the runs of 4 MB took 400 MB)."""

    def __init__(self, read: Sequence[tuple[str, str]]) -> None:
        self.read = read
        self.text = "\n".join(block for block, _ in read)
        self.starts: list[int] = []  # where each block begins in ``text``
        at = 0
        for block, _ in read:
            self.starts.append(at)
            at += len(block) + 1
        codes = _codes(self.text)
        count = max(0, codes.size - _GRAM + 1)
        hashes = np.zeros(count, dtype=np.uint64)
        for k in range(_GRAM if count else 0):
            hashes += codes[k : k + count] * _GRAM_FACTORS[k]
        # the places of the runs by their hash, and of one hash in the text's order
        self.places = np.argsort(hashes, kind="stable")
        ordered = hashes[self.places]
        new = np.ones(count, dtype=bool)
        new[1:] = ordered[1:] != ordered[:-1]
        self.groups = np.flatnonzero(new)  # where each hash's places begin in ``places``
        self.hashes = ordered[self.groups]
        self.counts = np.diff(np.append(self.groups, count))

    def find(self, normal: str) -> int:
        """Where ``normal`` (of :data:`_GRAM` characters or more) first is in ``text``, or -1.
        A text that holds it holds each of its runs at its offset: it is looked for at the
        places of its rarest run (a run that no block holds: nowhere), or, when that one is
        in many places, from the first place where each of its runs can be."""
        # its runs that begin at every _GRAM-th character, and its last run (a run at each
        # offset would cost each search more numpy calls than the searches it saves)
        offsets = [*range(0, len(normal) - _GRAM, _GRAM), len(normal) - _GRAM]
        runs = _codes(normal)[np.add.outer(offsets, _GRAM_OFFSETS)]
        hashes = runs @ _GRAM_FACTORS
        at = np.searchsorted(self.hashes, hashes)
        if at.max() >= self.hashes.size or (self.hashes[at] != hashes).any():
            return -1  # (a run that no block holds: a sentence read after the words ran out)
        counts = self.counts[at]
        rarest = int(counts.argmin())
        offset = offsets[rarest]
        if counts[rarest] <= _PLACES_TRIED:
            group = self.groups[at[rarest]]
            for place in self.places[group : group + counts[rarest]].tolist():
                if place >= offset and self.text.startswith(normal, place - offset):
                    return place - offset
            return -1
        firsts = self.places[self.groups[at]] - np.array(offsets)
        return self.text.find(normal, max(0, int(firsts.max())))


class ReadBlocks:
    """The blocks the fingerprint read (normalized, beside the same block with its dates
    blanked), searched for the sentences that hold numbers (:func:`sentence_key`)."""

    def __init__(self, read: Sequence[tuple[str, str]] = ()) -> None:
        self.read = read
        self.searches = 0
        self.index: _ReadIndex | None = None
        self.indexed = True  # (until blocks with line breaks are seen)
        self.known: dict[str, tuple[str, int] | None] = {}  # a sentence said again

    def first(self, normal: str) -> tuple[str, int] | None:
        """The first block that holds ``normal``, with its dates blanked, and where in it
        ``normal`` begins (None when no block holds it)."""
        if normal in self.known:
            return self.known[normal]
        if self.index is None and self.indexed and self.searches >= _SEARCHES_BEFORE_GRAMS:
            # the blocks from page_signature hold no line break (white space collapsed)
            self.indexed = not any("\n" in block for block, _ in self.read)
            self.index = _ReadIndex(self.read) if self.indexed else None
        found = None
        if self.index is not None and len(normal) >= _GRAM and "\n" not in normal:
            at = self.index.find(normal)
            if at >= 0:
                block = bisect.bisect_right(self.index.starts, at) - 1
                found = self.read[block][1], at - self.index.starts[block]
        else:
            self.searches += 1
            for block, dated in self.read:
                at = block.find(normal)
                if at >= 0:
                    found = dated, at
                    break
        self.known[normal] = found
        return found


def sentence_key(
    letters: str, sentence: str, read: Sequence[tuple[str, str]] | ReadBlocks = ()
) -> str:
    """What a sentence is known by: its ``letters`` (as :func:`longest_sentences` reads
    them), and the content numbers it holds, in order (version 7). Dates, times, counters
    and telephone numbers are not content numbers (:func:`.numbers.blank_dates`): a copy
    with other dates keeps its sentences, while two sentences that say the same words with
    other prices, scores or specs (a product's variants, a league's match reports) are two
    sentences. A sentence without content numbers is known by its letters alone.

    The numbers are read where the fingerprint read them: in the first of the ``read``
    blocks (normalized, and with their dates blanked in place) that holds the sentence, so
    a date is known by the text around it as the fingerprint knows it; else from the
    sentence alone."""
    if not _DIGITS.search(sentence):
        return letters
    normal = " ".join(sentence.casefold().split())
    blocks = read if isinstance(read, ReadBlocks) else ReadBlocks(read)
    found = blocks.first(normal)
    if found is not None:
        dated, at = found
        numbers = _DIGITS.findall(dated, at, at + len(normal))
    else:
        numbers = _DIGITS.findall(blank_dates(normal))
    return f"{letters}\x00{' '.join(numbers)}" if numbers else letters


def longest_sentences(
    prose: str,
    n: int = SENTENCES,
    numbers: bool = True,
    read: Sequence[tuple[str, str]] = (),
) -> tuple[int, ...]:
    """Hashes of the ``n`` longest distinct sentences of ``prose`` (longest first by their
    letters, ties by hash): each read as its letters, NFKC and case-folded, digits and
    punctuation left out, kept when it has at least :data:`SENTENCE_MIN` of them, and
    known by its letters and, with ``numbers``, its content numbers (:func:`sentence_key`;
    ``read``: the blocks the fingerprint read)."""
    # A sentence has at most as many letters as characters: read longest first, and stop at
    # the first that is shorter than the n-th longest found so far (none after it can
    # reach that). Those as long as the n-th are all kept: ties are broken by hash.
    text = unicodedata.normalize("NFKC", prose)
    if "~~" in text or "〜〜" in text:
        text = _TILDES.sub("\n", text)
    splitter = _SENTENCE_END_CJK if _CJK.search(text) else _SENTENCE_END
    candidates = [
        s
        for s in splitter.split(text)
        if len(s) >= SENTENCE_MIN  # else it has fewer letters than that
    ]
    candidates.sort(key=len, reverse=True)
    blocks = ReadBlocks(read)
    found: dict[str, int] = {}  # sentence_key -> letters
    longest: list[int] = []  # the n largest sizes found (a heap: the n-th longest first)
    shortest = SENTENCE_MIN  # the n-th longest found, once n are found
    for sentence in candidates:
        if len(sentence) < shortest:
            break
        letters = _NOT_LETTER.sub("", sentence.casefold())
        if len(letters) >= shortest:
            key = sentence_key(letters, sentence, blocks) if numbers else letters
            if key not in found:
                found[key] = len(letters)
                if len(longest) < n:
                    heapq.heappush(longest, len(letters))
                else:
                    heapq.heappushpop(longest, len(letters))
                if len(longest) == n:
                    shortest = longest[0]
    hashed = sorted((-size, sentence_hash(key)) for key, size in found.items() if size >= shortest)
    return tuple(h for _, h in hashed[:n])


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


def numbers_sketch(numbers: list[str]) -> int:
    """One-bit minhash of a set of numbers (each weighing the same): two sets differ in a bit
    with probability (1 - J) / 2."""
    distinct = sorted(set(numbers))
    if not distinct:
        return 0
    return _minhash_from(feature_hashes(distinct), np.ones(len(distinct), dtype=np.float64))


@dataclass(frozen=True)
class PageSignature:
    """What the index keeps of a page to decide on it: the 64-bit ``fingerprint``, the hashes
    of its longest ``sentences``, its count of content ``words`` (with its data tables'
    words that the chrome filter left out), the sketch and count of its
    content ``numbers``, and the sketch of its ``shingles`` (:func:`shingles_sketch`).
    Picklable; compared with :meth:`is_near_duplicate`."""

    fingerprint: int
    sentences: tuple[int, ...] = ()
    words: int = 0
    numbers: int = 0
    number_count: int = 0
    shingles: int = 0

    def is_near_duplicate(self, other: PageSignature, max_distance: int = 3) -> bool:
        """Whether ``other`` is a near duplicate of this page, decided exactly as an index
        holding only this page would (:data:`DEFAULT_RULE`)."""
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


@dataclass(frozen=True)
class Rule:
    """The decision between a page and a stored page (see the module's docstring). The
    defaults were chosen on ``bench/quality.py`` (``docs/quality.md``)."""

    #: Shared long sentences that make two pages one article...
    shared: int = 3
    #: ... and at least this share of the long sentences of the page that has fewer...
    shared_share: float = 0.5
    #: ... unless the fingerprints are within k + this many bits (then ``shared`` is enough).
    near: int = 1
    #: The sentence rule's length guard: shorter words / longer words at least this.
    length: float = 0.5
    #: The Hamming rule's length guard.
    hamming_length: float = 0.5
    #: Shared long sentences, and all but one of those of the page that has fewer, that make
    #: the shorter page contained in the longer...
    contained: int = 5
    #: ... when its words are at least this share of the longer's (the sentence rule's
    #: length guard then)...
    contained_length: float = 0.3
    #: ... and the shingles sketches differ in at most this many bits more than a text
    #: inside the other would give (32 x (1 - the shorter's share of the longer's words):
    #: its runs of words all among the longer's). Two front pages of one blog share their
    #: older posts' long sentences, while most of the shorter's runs of words (its own
    #: newest post) are not in the longer.
    contained_runs: int = 6
    #: Both pages with this many long sentences and none shared: not the same text...
    sentences_veto: int = 6
    #: ... when their fingerprints differ in this many bits or more (and their shingles
    #: sketches in more than ``runs_near``).
    veto_distance: int = 2
    #: Nor with at most one shared, at any distance, when their shingles sketches differ in
    #: this many bits or more (under about half their runs of words the same: a rewrite)...
    veto_runs: int = 18
    #: ... and the shorter has at least this share of the longer's words (a text inside a
    #: longer one shares at most that share of the longer's runs, however alike).
    veto_length: float = 0.8
    #: The Hamming rule's other veto, and the ``near`` clause's: the shingles sketches differ
    #: in more than this many bits (their words are alike, their runs of words are not: a
    #: rewritten text; version 10).
    shingles_distance: int = 22
    #: ``shared`` sentences are enough too when the shingles sketches are within this many
    #: bits (most of their runs of words are the same: a few edits, whatever the fingerprint
    #: or the long sentences the edits broke).
    runs_near: int = 10
    #: One shared sentence is enough when the shingles sketches are within this many bits
    #: (nearly all their runs of words are the same), or within ``runs_near`` with the
    #: fingerprints within k + ``near`` (-1: one is never enough).
    runs_same: int = 5
    #: The numbers veto applies when both pages have this many content numbers...
    numbers_min: int = 3
    #: ... and vetoes when their numbers sketches differ in more bits than this...
    numbers_distance: int = 20
    #: ... if the fewer numbers are at least this share of the more...
    numbers_ratio: float = 0.5
    #: ... and the shorter page has at least this share of the longer's words.
    numbers_length: float = 0.8
    #: ... and both pages hold at least this many content numbers a word (one in 200): a
    #: long text's handful of numbers comes mostly from around it (a layout's lists, its
    #: replies), and a sketch of a few numbers swings with one lost or gained.
    numbers_density: float = 0.005
    #: In an index, a sentence held by this many stored pages no longer counts.
    guard: int = 3
    #: The sentence rule refuses pages that share fewer than this many long sentences...
    block_shared: int = 5
    #: ... when their fingerprints differ in this many bits or more (unrelated texts)...
    block_distance: int = 22
    #: ... and their shingles sketches in this many or more: what they share is a block of
    #: prose both carry (a company's boilerplate, a disclaimer), not the article.
    block_runs: int = 14
    #: Nor, whatever their fingerprints, when their shingles sketches differ in this many bits
    #: or more (about as far apart as unrelated texts) and some long sentence of the page
    #: with fewer is not shared, unless the shorter page reads as contained in the longer
    #: (:func:`_reads_contained`): a block of prose both carry (a box the site prints above
    #: its articles) weighs as a lead and brings the fingerprints near.
    block_far_runs: int = 20
    #: Pages whose fingerprints differ in this many bits or more...
    apart_distance: int = 26
    #: ... and their shingles sketches in this many or more (both about as far apart as
    #: unrelated texts)...
    apart_runs: int = 20
    #: ... and of like length (the shorter has this share of the longer's words) are one
    #: article only when every long sentence of the page with fewer is shared: what the rest
    #: share is a part both carry (a listing's other posts). A copy whose layout adds its
    #: own text (replies, teasers) is longer.
    apart_length: float = 0.8

    def decide(
        self,
        page: PageSignature,
        stored: PageSignature,
        max_distance: int,
        counted: int | None = None,
    ) -> str | None:
        """The rule by which ``page`` is a near duplicate of ``stored``, or None.
        ``counted`` is how many of their shared sentences pass the index's frequency guard
        (by default, every shared sentence)."""
        if self.numbers_differ(page, stored):
            return None
        common = set(page.sentences).intersection(stored.sentences)
        shared = len(common)
        distance = hamming(page.fingerprint, stored.fingerprint)
        fewer = min(len(page.sentences), len(stored.sentences))
        shorter = _shorter(page, stored)
        # a signature without the sketch (0: made by hand, or pickled by version 9) has no say
        sketched = bool(page.shingles and stored.shingles)
        runs_apart = hamming(page.shingles, stored.shingles) if sketched else 0
        runs_agree = runs_apart <= self.shingles_distance
        runs_alike = sketched and runs_apart <= self.runs_near  # a few edits, at most
        rewritten = fewer >= self.sentences_veto and (
            (shared == 0 and distance >= self.veto_distance and not runs_alike)
            or (
                shared <= 1
                and sketched
                and runs_apart >= self.veto_runs
                and shorter >= self.veto_length
            )
        )
        if (
            distance <= max_distance
            and runs_agree
            and not (shorter < self.hamming_length or rewritten)
        ):
            return "hamming"
        needed = max(self.shared, math.ceil(self.shared_share * fewer))
        if (distance <= max_distance + self.near and runs_agree) or runs_alike:
            needed = self.shared  # long sentences shared, and a few edits
        if sketched and self._one_is_enough(runs_apart, distance, max_distance):
            needed = min(needed, 1)  # one sentence to find it by: the runs say the rest
        counts = shared if counted is None else counted
        if (
            counts < self.block_shared
            and sketched
            and (
                (distance >= self.block_distance and runs_apart >= self.block_runs)
                or (
                    runs_apart >= self.block_far_runs
                    and shared < fewer  # (whether the guard lets each count or not)
                    and not _reads_contained(page, stored, common)
                )
            )
        ):
            return None  # a shared block of prose, two texts otherwise unrelated
        if (
            shared < fewer  # (every sentence, whether the index's guard lets it count or not)
            and distance >= self.apart_distance
            and sketched
            and runs_apart >= self.apart_runs
            and shorter >= self.apart_length
        ):
            return None  # unrelated as wholes, and not all of the fewer's sentences shared
        if counts >= needed and shorter >= self.length:
            return "sentences"
        if (
            counts >= max(self.contained, fewer - 1)
            and shorter >= self.contained_length
            and not (sketched and runs_apart > _INSIDE_RUNS * (1 - shorter) + self.contained_runs)
        ):
            return "sentences"  # contained: what the longer adds is not the article's prose
        return None

    @property
    def fewest_shared(self) -> int:
        """The fewest shared sentences the sentence rule ever takes (an index reads no
        stored page sharing fewer): ``shared`` or ``contained``, or one when nearly all
        the runs of words can say the rest."""
        fewest = min(self.shared, self.contained)
        return min(fewest, 1) if self.runs_same >= 0 else fewest

    def takes_one(
        self, page: PageSignature, fingerprint: int, shingles: int, max_distance: int
    ) -> bool:
        """Whether one shared sentence is enough between ``page`` and a stored page of this
        ``fingerprint`` and ``shingles`` sketch: both sketched, and the sketches within
        :attr:`runs_same` bits, or within :attr:`runs_near` with the fingerprints within
        ``max_distance`` + :attr:`near` (the runs of words say the rest)."""
        if not (page.shingles and shingles):
            return False
        return self._one_is_enough(
            hamming(page.shingles, shingles), hamming(page.fingerprint, fingerprint), max_distance
        )

    def _one_is_enough(self, runs_apart: int, distance: int, max_distance: int) -> bool:
        """:meth:`takes_one` of two sketched pages, by how far apart their shingles sketches
        and their fingerprints are."""
        if self.runs_same < 0:
            return False
        return runs_apart <= self.runs_same or (
            runs_apart <= self.runs_near and distance <= max_distance + self.near
        )

    def needs_runs(self, counted: int) -> bool:
        """Whether the sentence rule takes ``counted`` shared sentences only when one is
        enough (:meth:`takes_one`: fewer than ``shared`` and ``contained``)."""
        return counted < min(self.shared, self.contained)

    def numbers_differ(self, a: PageSignature, b: PageSignature) -> bool:
        """Whether two pages' content numbers disagree: both have enough of them, in like
        amounts, and their sketches say the sets overlap little."""
        fewer, more = sorted((a.number_count, b.number_count))
        if fewer < self.numbers_min or fewer < self.numbers_ratio * more:
            return False
        if _shorter(a, b) < self.numbers_length:
            return False  # the longer's own text brings numbers of its own
        if any(page.number_count < self.numbers_density * page.words for page in (a, b)):
            return False  # a few numbers in a long text: not what the page says
        return hamming(a.numbers, b.numbers) > self.numbers_distance


#: A one-bit minhash's expected bits apart for two sets of Jaccard 0: of Jaccard J, this
#: times 1 - J. A text inside a longer one has the Jaccard of their lengths.
_INSIDE_RUNS = 32


def _reads_contained(a: PageSignature, b: PageSignature, shared: set[int]) -> bool:
    """Whether the shorter page reads as contained in the longer by their lists of long
    sentences (longest first; ``shared``: the sentences both hold): the shorter's list
    begins with the sentences they share, and the longer's with text of its own. The
    longer's own text can only push the shorter's shorter sentences out of its list; a
    block of prose both carry beside texts of their own (a box of the site's) stands in
    both lists where its lengths put it. Of two pages of one length, neither is inside the
    other."""
    if a.words == b.words:
        return False
    shorter, longer = (a, b) if a.words < b.words else (b, a)
    first = len(shared)
    return bool(shared) and (
        shared.issuperset(shorter.sentences[:first])
        and not shared.issuperset(longer.sentences[:first])
    )


def _shorter(a: PageSignature, b: PageSignature) -> float:
    """The shorter page's words over the longer's (1.0 when neither counts any)."""
    longer = max(a.words, b.words)
    return min(a.words, b.words) / longer if longer else 1.0


#: The rule the index and :meth:`PageSignature.is_near_duplicate` apply.
DEFAULT_RULE = Rule()


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
        numbers=numbers_sketch(numbers),
        number_count=min(len(set(numbers)), 0xFFFF),
        shingles=shingles_sketch(in_order),
    )
