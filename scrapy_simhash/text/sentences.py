"""A text's longest sentences: where a sentence ends, what it is known by (its letters and
its content numbers), and the hashes of the :data:`SENTENCES` longest, the signature's second
signal beside the fingerprint (:mod:`.signature`): a layout changes what is around an
article, not its sentences. What this module computes is part of a signature, a storage
format: any change to it bumps :data:`.fingerprint.FINGERPRINT_VERSION`.
"""

from __future__ import annotations

import bisect
import heapq
import re
import unicodedata
from collections.abc import Sequence

import numpy as np

from .fingerprint import _CJK, blake2b_64, odd_factors
from .numbers import blank_dates
from .segment import CJK_CHARS

#: How many of a text's longest sentences its signature keeps.
SENTENCES = 8
#: A sentence shorter than this, in letters (CJK characters included), is not kept.
SENTENCE_MIN = 20

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
_GRAM_FACTORS = odd_factors(b"scrapy_simhash read grams", _GRAM)
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
