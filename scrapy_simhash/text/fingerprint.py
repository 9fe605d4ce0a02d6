"""Text to a 64-bit fingerprint of weighted word features, compared by Hamming distance.

Words are the features: runs of CJK characters are segmented with jieba, everything else is
split into case-folded words. Stop words and punctuation are left out. Numbers are features
too (version 3), except those of dates, times, durations and counters (:mod:`.numbers`), so
two pages that differ only in a price or a score are told apart while a copy with other dates
or view counts is not; ``numbers=False`` leaves every number out, as version 2 did.

Before the words are read, the lines that site chrome forms (menus, bylines, short link lines,
lists of other headlines) are left out (:mod:`.chrome`, version 3): a syndicated copy in another
site's layout then gives nearly the same words as the original. ``chrome=False`` reads the
whole text, as version 2 did; ``Fingerprinter(chrome=False, numbers=False, unwrap=False)``
computes version 2's fingerprints. Before that, a hard-wrapped text (e-mail, forum posts,
``<pre>`` blocks: lines cut at one width in mid-sentence) is read with its wrapped lines
joined, as a browser shows it (:mod:`.wrap`, version 5), and so are the indented continued
lines of a paragraph whose HTML source was wrapped (version 14), so a copy whose extraction
kept the line breaks and one whose did not give the same lines; ``unwrap=False`` reads the
lines as extraction returned them.

Each occurrence of a word counts ``(1 + position / L) ** -decay_power``: the lead of an
article weighs more than its tail. ``L`` is ``position_decay``, stretched for texts of more
than 300 words by ``(words / 300) ** decay_stretch``. A word's weight is ``tf ** tf_exponent``
over those counts, so the article's repeated key terms outweigh single words, which is what
edits touch (``use_idf`` multiplies by an inverse document frequency, which measured no
better). Only the ``max_features`` heaviest words are kept (the rest weigh next to nothing).

The default sketch is a one-bit weighted minhash: each of the 64 bits is a race between the
features, in which a feature with weight ``w`` draws an exponential time ``-ln(u) / w`` from
its own hash and the bit's seed; the bit is one bit of the winner's hash. Two texts pick the
same winner with probability equal to the probability-Jaccard similarity of their weight
vectors, so they differ in a bit with probability ``(1 - J) / 2``: the expected distance grows
linearly with the share of the weight that changed. Charikar's simhash (``sketch="simhash"``,
version 1's sketch) grows only with its square root, which put 2%-edited copies and
20%-edited pages too close together (``docs/quality-history.md``).

The feature hash is BLAKE2b and the per-bit hashes are integer mixes of it, so a fingerprint
is the same in every process, on every platform and Python version (the race compares
floating-point times; platforms whose ``log`` differs in the last bit could only disagree on
a race won by a margin of that size). ``bench/quality.py`` measures these choices.

Fingerprints are a storage format: any change to what this module computes must bump
:data:`FINGERPRINT_VERSION`, which the index stores and checks.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import filterfalse

import numpy as np

from .caches import make_room
from .chrome import strip_chrome
from .lexicon import STOP_WORDS, idf_weights, is_stop_word
from .numbers import blank_dates, has_quantity
from .segment import CJK_CHARS, tokenizer
from .wrap import join_continued, unwrap

#: Names the algorithm (features, weights, hash). Stored in every index; an index built with
#: another version refuses these fingerprints.
#: 4: the page signature (:mod:`.signature`: the longest sentences, the word and number
#: counts and the numbers sketch) stored beside the fingerprint, which is version 3's.
#: 5: hard-wrapped text read with its wrapped lines joined (``unwrap``); telephone numbers and
#: a list's short dates ("(04-19)") are not content numbers (:mod:`.numbers`).
#: 6: a page signature's sentences also end at white space within CJK text (a table cell that
#: runs an article's paragraphs into one line; :mod:`.sentences`).
#: 7: a page signature's sentence is known by its letters and the content numbers it holds
#: (not its dates, times or counters), so the sentence rule tells apart pages whose sentences
#: differ only in their prices, specs or scores (:func:`.sentences.sentence_key`).
#: 8: a list of other articles under its heading ("Related articles", "相关推荐") is left out
#: with its heading, however long its teasers (:func:`.chrome.strip_chrome`).
#: 9: a page signature's sentences also end at a run of tildes, and at white space within CJK
#: text before a symbol that opens a paragraph (a bullet, a star, an emoji; :mod:`.sentences`).
#: 10: a page signature also holds a sketch of the text's shingles (runs of five of the
#: words the fingerprint keeps), and the Hamming rule is vetoed when those sketches disagree
#: (a rewritten text; :func:`.signature.shingles_sketch`).
#: 11: the numbers after a word that names a telephone or fax number ("Tel.:", "电话："), postal
#: codes after their label ("邮编") and a site's registration numbers (ICP, 公网安备, licences)
#: are not content numbers: a site's footer no longer makes the numbers veto refuse a copy of
#: an article in its layout (:mod:`.numbers`).
#: 12: other headlines with their date stamps are chrome: a list item that is a headline and
#: its date ("2019-09-09 18:38"), a line of headlines run together between their dates, and
#: the text of a related list's item that follows its bare mark (:mod:`.chrome`).
#: 13: those headlines are chrome whatever numbers they hold: a price or a spec in another
#: article's headline ("麒麟990 5G") no longer keeps the line as a content line
#: (:func:`.chrome.strip_chrome`).
#: 14: a line indented as the page's source indents a paragraph's continued lines is read
#: joined to the line before it (``unwrap``; :func:`.wrap.join_continued`): trafilatura's
#: fallback extractors keep a source-wrapped paragraph's line breaks, its own extraction and
#: the same article in another layout do not.
#: 15: a page signature's count of words holds the words of the text's data tables that the
#: chrome filter leaves out (:func:`.chrome.data_table_words`): no feature changes, but the
#: first 30% of an article that is mostly tables is a shorter page. Fingerprints unchanged.
#: 16: with numbers as features, a spec table's rows (runs of rows of a name and a number:
#: "| Weight | 245 |") and a table row whose unit is in its name cell ("| Weight (g) | 245 |")
#: are content lines, whatever their length (:func:`.chrome.spec_rows`,
#: :func:`.numbers.has_quantity`); a counter in a table's cells ("| views | 1234 |") is no
#: content number. Two products of one description, with other specs, are told apart.
#: 17: a page signature holds its content numbers as a set of 64 bits, one a number, not as
#: a one-bit minhash of them, and the numbers veto asks that each page hold numbers the other
#: lacks (:func:`.signature.numbers_bits`, :meth:`.rule.Rule.numbers_differ`): a product's
#: other configuration, another price and a spec or two, is told apart. A time's fraction of
#: a second ("1:46,47") is blanked with the time (:mod:`.numbers`). Fingerprints unchanged
#: for every text without such a time.
FINGERPRINT_VERSION = 17

BITS = 64
_MASK = (1 << BITS) - 1
SKETCHES = ("minhash", "simhash")
# One seed per bit of the minhash sketch: fixed, derived from a name rather than chosen.
_SLOT_SEEDS = np.frombuffer(
    hashlib.shake_256(b"scrapy_simhash minhash slot seeds").digest(8 * BITS), dtype=">u8"
).astype(np.uint64)
_BIT_INDEX = np.arange(BITS)

# A token is a run of CJK ideographs/kana, or a run of other letters and digits.
# (findall gives (run, "") or ("", word) pairs)
_TOKEN = re.compile(rf"([{CJK_CHARS}]+)|([^\W_{CJK_CHARS}]+(?:['\u2019][^\W_{CJK_CHARS}]+)*)")
# The same with numbers as tokens of their own: digits with their decimal and thousands
# separators ("1,299.00", "3.5"), not attached to letters ("16gb" stays one word, as before;
# "6.5英寸" is a number and a word).
# (findall gives (run, "", ""), ("", number, "") or ("", "", word))
_TOKEN_NUMBERS = re.compile(
    rf"([{CJK_CHARS}]+)|(\d+(?:[.,]\d+)*)(?![^\W_{CJK_CHARS}])"
    rf"|([^\W_{CJK_CHARS}]+(?:['\u2019][^\W_{CJK_CHARS}]+)*)"
)
# The same tokens in a block without CJK characters, unsplit (findall gives each token as
# a string): there ``[^\W_]`` is ``\w`` once underscores are spaces, a third less time. Its
# first character is read before the alternatives (a number when it is a digit), so that
# findall skips to where a token begins (``re`` does so for a pattern that opens with a
# character class).
_TOKEN_NUMBERS_NO_CJK = re.compile(r"\w(?:(?<=\d)\d*(?:[.,]\d+)*(?!\w)|\w*(?:['\u2019]\w+)*)")
_CJK = re.compile(f"[{CJK_CHARS}]")
# Texts are read in blocks cut at white space or CJK punctuation, and CJK runs are cut at
# this length before jieba (a page without punctuation would otherwise be one huge run).
_BLOCK = 1 << 16
_BREAKS = (" ", "\n", "。", "，")
_CJK_RUN_MAX = 256

_ASCII_DIGIT = re.compile("[0-9]")
_hash_cache: dict[str, int] = {}
_HASH_CACHE_MAX = 1 << 15


def blake2b_64(text: str) -> int:
    """Stable unsigned 64-bit hash of a string (BLAKE2b of its UTF-8, 8 bytes, big-endian):
    a feature's, and a sentence's (:func:`.sentences.sentence_hash`)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big")


def blake2b_64_each(texts: list[str]) -> list[int]:
    """:func:`blake2b_64` of each string: their digests joined and read as one big-endian
    array (a third less time than an integer made from each digest)."""
    blake2b = hashlib.blake2b
    digests = b"".join([blake2b(t.encode("utf-8"), digest_size=8).digest() for t in texts])
    return np.frombuffer(digests, dtype=">u8").tolist()


def feature_hash(feature: str) -> int:
    """Stable unsigned 64-bit hash of a feature (BLAKE2b, 8 bytes, big-endian)."""
    h = _hash_cache.get(feature)
    if h is None:
        h = blake2b_64(feature)
        make_room(_hash_cache, 1, _HASH_CACHE_MAX)
        _hash_cache[feature] = h
    return h


def feature_hashes(features: list[str]) -> np.ndarray:
    """:func:`feature_hash` of each feature, as uint64 (those not in the cache hashed, and
    room made for them, at once)."""
    found = list(map(_hash_cache.get, features))
    if None in found:
        missing = [f for f, h in zip(features, found, strict=True) if h is None]
        new = dict(zip(missing, blake2b_64_each(missing), strict=True))
        make_room(_hash_cache, len(new), _HASH_CACHE_MAX)
        _hash_cache.update(new)
        found = [new[f] if h is None else h for f, h in zip(features, found, strict=True)]
    return np.array(found, dtype=np.uint64)


# Runs of anything but CJK unified ideographs. An ideograph is unchanged by NFKC and never
# composes with what is before or after it, so NFKC of a text is NFKC of each run between
# ideographs, the ideographs kept as they are.
_NOT_IDEOGRAPHS = re.compile("[^\u4e00-\u9fff]+")


def _nfkc_run(match: re.Match[str]) -> str:
    run = match.group()
    if run.isascii():
        return run
    if "\n" not in run:
        return unicodedata.normalize("NFKC", run)
    # A line break composes with nothing and nothing is reordered across it: NFKC of a run
    # is NFKC of each of its lines, and a line already in NFKC is only checked (one
    # no-break space no longer sends a whole page's text through normalization).
    return "\n".join([unicodedata.normalize("NFKC", line) for line in run.split("\n")])


def nfkc(text: str) -> str:
    """``unicodedata.normalize("NFKC", text)``, computed on the runs between CJK ideographs
    only (about half the time on Chinese text, whose ideographs NFKC would read one by one;
    the same result)."""
    return text if text.isascii() else _NOT_IDEOGRAPHS.sub(_nfkc_run, text)


def normalize(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: the form both hashes are computed on."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _blocks(text: str, nfkc: str | None = None) -> Iterator[str]:
    """``text`` normalized a block at a time, each cut at white space or CJK punctuation.
    ``nfkc``, if given, is ``text`` in NFKC already: a text of one block is then read from it
    (the same block, without a second NFKC pass)."""
    if nfkc is not None and len(text) <= _BLOCK:
        if text:
            yield " ".join(nfkc.casefold().split())
        return
    start = 0
    while start < len(text):
        end = min(len(text), start + _BLOCK)
        if end < len(text):
            cut = max(text.rfind(c, start, end) for c in _BREAKS)
            end = cut + 1 if cut > start else end
        yield normalize(text[start:end])
        start = end


def _is_content(token: str) -> bool:
    return not is_stop_word(token) and not token.isdecimal()  # isdecimal: all of \d


def _block_words(
    block: str,
    content: bool,
    numbers: bool = False,
    read: list[tuple[str, str]] | None = None,
    found_numbers: list[str] | None = None,
) -> list[str]:
    """The words of a normalized block in order (only content words if ``content``; with
    ``numbers``, also the numbers that are not dates, times or counters, which
    ``found_numbers``, if given, gets too, in order; then ``read``, if given, gets the block
    and the block with its dates blanked in place).

    Each CJK run is segmented where it is met (cut first into pieces of at most
    :data:`_CJK_RUN_MAX` characters); a CJK word is a stop word only by the list (all its
    characters are CJK, never digits). A block without CJK characters, read for content
    words and numbers (a page's text in most languages), is read without the loop
    (:func:`_words_no_cjk`)."""
    out: list[str] = []
    cut: Callable[[str, bool], list[str]] | None = None  # the segmenter's, at the first run

    def add_run(cjk: str) -> None:
        nonlocal cut
        if cut is None:
            cut = tokenizer().cut
        for i in range(0, len(cjk), _CJK_RUN_MAX):
            # as segment_cjk: HMM off (a keyword argument costs 0.1 ms a Chinese page)
            found = cut(cjk[i : i + _CJK_RUN_MAX], False)
            out.extend(filterfalse(STOP_WORDS.__contains__, found) if content else found)

    if numbers:
        dated = blank_dates(block, keep_length=read is not None)
        if read is not None:
            read.append((block, dated))
        if content and _CJK.search(dated) is None:
            return _words_no_cjk(dated, found_numbers)
        for cjk, number, other in _TOKEN_NUMBERS.findall(dated):
            if cjk:
                add_run(cjk)
            elif number:
                out.append(number)
                if found_numbers is not None:
                    found_numbers.append(number)
            # _is_content(other), written out: it runs for each of a page's thousand words
            elif (
                other not in STOP_WORDS
                and (len(other) > 1 or "\u3040" <= other <= "\U0002ffff")
                and not other.isdecimal()
            ):
                out.append(other)
    else:
        for cjk, other in _TOKEN.findall(block):
            if cjk:
                add_run(cjk)
            elif not content or _is_content(other):
                out.append(other)
    return out


def _words_no_cjk(dated: str, found_numbers: list[str] | None) -> list[str]:
    """:func:`_block_words` of a block without CJK characters (dates blanked), content words
    and numbers: the loop written as one filter. No stop word is or begins with a number, and
    a one-character token that is all digits is a number (a word is never all digits)."""
    tokens = _TOKEN_NUMBERS_NO_CJK.findall(dated.replace("_", " "))
    out = [
        t
        for t in tokens
        if t not in STOP_WORDS and (len(t) > 1 or t.isdecimal() or "\u3040" <= t <= "\U0002ffff")
    ]
    if found_numbers is not None:
        found_numbers += [t for t in out if t[0].isdecimal() and is_number(t)]
    return out


def is_number(token: str) -> bool:
    """Whether a token is a number (digits, with their separators), not a word."""
    return token[:1].isdecimal() and token.replace(",", "").replace(".", "").isdecimal()


def _holds_quantity(line: str) -> bool:
    # NFKC and case-folding leave an ASCII line ASCII, and its digits where they were: most
    # short lines (menu entries, bylines) hold none, and need not be normalized
    if line.isascii() and _ASCII_DIGIT.search(line) is None:
        return False
    return has_quantity(normalize(line))


def words(text: str) -> Iterator[str]:
    """The words of ``text`` in order, normalized, stop words and numbers included.

    Lazy: the text is normalized and segmented a block at a time, so a caller that stops
    early does not pay for the rest of a huge text."""
    for block in _blocks(text):
        yield from _block_words(block, content=False)


def hamming(a: int, b: int) -> int:
    """Number of bits in which two fingerprints differ (their low 64 bits: a negative
    int is read as its 64-bit two's complement)."""
    return ((a ^ b) & _MASK).bit_count()


def text_signature(text: str) -> bytes:
    """Exact 16-byte signature of the normalized text: equal for texts that differ only in
    case, Unicode form and white space. A fast path for exact copies. A lone surrogate (bytes
    of another encoding decoded with ``surrogateescape``) is hashed as such, not refused."""
    data = normalize(text).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).digest()


def _simhash_from(hashes: np.ndarray, weights: np.ndarray) -> int:
    """Charikar's sum: bit i is set when the weights of features with bit i set outweigh
    those without. ``hashes`` uint64, ``weights`` int64; exact integer arithmetic."""
    if hashes.size == 0:
        return 0
    bits = np.unpackbits(hashes.astype(">u8").view(np.uint8).reshape(-1, 8), axis=1)
    signed = bits.astype(np.int64) * 2 - 1
    totals = weights @ signed
    return int.from_bytes(np.packbits(totals > 0).tobytes(), "big")


def odd_factors(label: bytes, count: int) -> np.ndarray:
    """``count`` odd 64-bit factors drawn from ``label`` (SHAKE-256): the weights of a run's
    places in a hash of runs of values, the same in every process."""
    drawn = np.frombuffer(hashlib.shake_256(label).digest(8 * count), ">u8")
    return (drawn | np.uint64(1)).astype(np.uint64)


def _mix(x: np.ndarray) -> np.ndarray:
    """A bijective 64-bit integer mix (the splitmix64 finalizer), element-wise on uint64, in
    place (``x`` is returned)."""
    shifted = x >> np.uint64(30)
    x ^= shifted
    x *= np.uint64(0xBF58476D1CE4E5B9)
    np.right_shift(x, np.uint64(27), out=shifted)
    x ^= shifted
    x *= np.uint64(0x94D049BB133111EB)
    np.right_shift(x, np.uint64(31), out=shifted)
    x ^= shifted
    return x


def _minhash_from(hashes: np.ndarray, weights: np.ndarray) -> int:
    """One-bit weighted minhash: for each bit, every feature draws an exponential time
    ``-ln(u) / weight`` (``u`` from its hash and the bit's seed); the first to arrive wins,
    and the bit is the lowest bit of the winner's mixed hash (independent of ``u``, which
    comes from the top 53 bits). ``weights`` float64, all > 0."""
    if hashes.size == 0:
        return 0
    # a row a bit, a column a feature: each bit's race is read along its row
    mixed = _mix(_SLOT_SEEDS[:, None] ^ hashes[None, :])
    u = (mixed >> np.uint64(11)).astype(np.float64)
    u += 0.5  # in place: the same operations, without a new array for each
    u *= 2.0**-53
    np.log(u, out=u)
    u /= weights[None, :]
    # the latest arrival in log(u) / w is the earliest in -ln(u) / w
    winners = np.argmax(u, axis=1)
    bits = (mixed[_BIT_INDEX, winners] & np.uint64(1)).astype(np.uint8)
    return int.from_bytes(np.packbits(bits).tobytes(), "big")


@dataclass(frozen=True)
class Fingerprinter:
    """Turns text into a 64-bit fingerprint, with the options that decide the features,
    their weights and the sketch.

    ``min_words`` is the number of content words (stop words and numbers not counted) below
    which a text is too short to fingerprint: such texts give few features, and their
    fingerprints would match unrelated short pages. Callers should skip them
    (:meth:`fingerprint` returns ``None``).

    ``sketch`` is ``"minhash"`` (the default, since version 2) or ``"simhash"`` (Charikar's,
    the sketch of version 1; ``Fingerprinter(sketch="simhash", position_decay=150,
    decay_stretch=0.75, max_features=None, chrome=False, numbers=False, unwrap=False)``
    computes version 1's fingerprints).

    ``chrome`` leaves out the lines site chrome forms before the words are read; ``numbers``
    makes the numbers that are not dates, times or counters features (both version 3; off,
    version 2's fingerprints). Numbers never count towards ``min_words``. ``unwrap`` joins
    the lines of a hard-wrapped text first (version 5), and the indented continued lines of a
    paragraph whose source was wrapped (version 14); off, version 4's.
    """

    min_words: int = 20
    max_words: int = 20_000
    tf_exponent: float = 1.25
    position_decay: float | None = 90.0
    decay_power: float = 2.0
    decay_stretch: float = 0.5
    use_idf: bool = False
    weight_scale: int = 1000
    sketch: str = "minhash"
    max_features: int | None = 512
    chrome: bool = True
    numbers: bool = True
    unwrap: bool = True

    def __post_init__(self) -> None:
        if self.min_words < 1:
            raise ValueError(f"min_words must be >= 1, got {self.min_words}")
        if self.max_words < self.min_words:
            raise ValueError(f"max_words must be >= min_words, got {self.max_words}")
        if not 0.0 <= self.tf_exponent <= 3.0:
            raise ValueError(f"tf_exponent must be in [0, 3], got {self.tf_exponent}")
        # (not ``<= 0``: NaN passes it, and made every weight NaN and every fingerprint 0)
        if self.position_decay is not None and not self.position_decay > 0:
            raise ValueError(f"position_decay must be > 0 or None, got {self.position_decay}")
        for name in ("decay_power", "decay_stretch"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be a number >= 0, got {getattr(self, name)}")
        if isinstance(self.weight_scale, bool) or not (
            isinstance(self.weight_scale, int) and self.weight_scale >= 1
        ):  # a scale of 0 made every weight 0, and every fingerprint 0
            raise ValueError(f"weight_scale must be an int >= 1, got {self.weight_scale!r}")
        if self.sketch not in SKETCHES:
            raise ValueError(f"sketch must be one of {SKETCHES}, got {self.sketch!r}")
        if self.max_features is not None and self.max_features < 1:
            raise ValueError(f"max_features must be >= 1 or None, got {self.max_features}")

    def content_words(self, text: str) -> list[str]:
        """The words that make features, in order: no stop words, no numbers (with
        ``numbers``, the numbers that are not dates, times or counters), at most
        ``max_words`` (the tail of a huge text weighs next to nothing, and this bounds the
        work on a 10 MB page). With ``chrome``, from the text's prose lines only."""
        return self.prose_words(self.prose(text))

    def prose(self, text: str) -> str:
        """The lines of ``text`` the words are read from (with ``unwrap``, its hard-wrapped
        lines and its paragraphs' indented continued lines joined first): with ``chrome``,
        its prose lines (and, with ``numbers``, the lines holding a quantity); else the
        whole text."""
        if self.unwrap:
            text = join_continued(unwrap(text))
        if not self.chrome:
            return text
        return strip_chrome(text, keep=_holds_quantity if self.numbers else None)

    def prose_words(
        self,
        prose: str,
        nfkc: str | None = None,
        read: list[tuple[str, str]] | None = None,
        found_numbers: list[str] | None = None,
    ) -> list[str]:
        """:meth:`content_words` of a text that :meth:`prose` gave (``nfkc``: that text in
        NFKC, when the caller has it). With ``numbers``, ``read`` (if given) gets each block
        read, normalized, beside the same block with its dates blanked in place; and the list
        ``found_numbers`` (if given) gets :meth:`number_tokens` of the words, found as they are
        read (a second pass over every word costs a page 1-2% of its signature)."""
        found: list[str] = []
        for block in _blocks(prose, nfkc):
            found += _block_words(
                block, content=True, numbers=self.numbers, read=read, found_numbers=found_numbers
            )
            if len(found) >= self.max_words:
                found = found[: self.max_words]
                if found_numbers is not None:
                    found_numbers[:] = self.number_tokens(found)
                return found
        return found

    def number_tokens(self, tokens: list[str]) -> list[str]:
        """The tokens that are numbers (none without ``numbers``), in order."""
        if not self.numbers:
            return []
        return [t for t in tokens if t[:1].isdecimal() and is_number(t)]

    def word_count(self, tokens: list[str]) -> int:
        """How many of the tokens are words (numbers do not make a text long enough)."""
        return len(tokens) - len(self.number_tokens(tokens))

    def features(self, text: str | Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """Feature hashes (uint64) and their weights (float64, > 0), at most
        ``max_features`` of them, heaviest first when some were left out."""
        tokens = self.content_words(text) if isinstance(text, str) else list(text)
        hashes, weights, _ = self.features_in_order(tokens)
        return hashes, weights

    def features_in_order(self, tokens: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`features` of the content words ``tokens``, and the hashes of the tokens
        that are kept features, in the text's order (uint64: every token of a text of at most
        ``max_features`` distinct words; for the signature's shingles sketch)."""
        if not tokens:
            empty = np.zeros(0, dtype=np.uint64)
            return empty, np.zeros(0, dtype=np.float64), empty
        distinct = list(dict.fromkeys(tokens))
        index = dict(zip(distinct, range(len(distinct)), strict=True))
        ids = np.fromiter(map(index.__getitem__, tokens), dtype=np.intp, count=len(tokens))
        if self.position_decay is None:
            tf = np.bincount(ids).astype(np.float64)
        else:
            scale = self.position_decay * max(1.0, len(tokens) / 300.0) ** self.decay_stretch
            at = (1.0 + np.arange(len(tokens), dtype=np.float64) / scale) ** -self.decay_power
            tf = np.bincount(ids, weights=at)
        weights = tf**self.tf_exponent
        if self.use_idf:
            weights *= np.array(idf_weights(distinct), dtype=np.float64)
        if self.max_features is not None and len(weights) > self.max_features:
            keep = np.argsort(-weights, kind="stable")[: self.max_features]
            weights = weights[keep]
            distinct = [distinct[i] for i in keep.tolist()]
            place = np.full(len(index), -1, dtype=np.intp)
            place[keep] = np.arange(keep.size)
            ids = place[ids]
            ids = ids[ids >= 0]
        hashes = feature_hashes(distinct)
        return hashes, weights, hashes[ids]

    def sketch_of(self, hashes: np.ndarray, weights: np.ndarray) -> int:
        """The 64-bit sketch of features (hashes and weights, as :meth:`features` gives)."""
        if self.sketch == "simhash":
            return _simhash_from(hashes, np.rint(weights * self.weight_scale).astype(np.int64))
        return _minhash_from(hashes, weights)

    def simhash(self, text: str) -> int:
        """The 64-bit fingerprint of ``text`` (0 for a text without features)."""
        return self.sketch_of(*self.features(text))

    def is_too_short(self, text: str) -> bool:
        return self.word_count(self.content_words(text)) < self.min_words

    def fingerprint(self, text: str) -> int | None:
        """The fingerprint, or ``None`` when the text is too short to fingerprint."""
        tokens = self.content_words(text)
        if self.word_count(tokens) < self.min_words:
            return None
        return self.sketch_of(*self.features(tokens))


DEFAULT_FINGERPRINTER = Fingerprinter()


def simhash(text: str) -> int:
    """The 64-bit fingerprint of ``text`` with the default options."""
    return DEFAULT_FINGERPRINTER.simhash(text)
