"""The encoding of a page that names none and is not UTF-8.

Browsers read such a page in the legacy encoding of their locale (windows-1252 in most;
the HTML standard's table of suggested defaults). A crawler has no locale, but the page
often says its language (``<html lang>``); so the page is tried in the encoding that
language suggests, then in windows-1252, each kept only if its bytes read as text of that
kind. Otherwise a detector decides (``charset_normalizer``).

Every test reads a sample of the body, its non-ASCII bytes with a little ASCII around
them (at most :data:`SAMPLE_BYTES`), since a page's first bytes are mostly markup and
scripts: a detector shown only those reads a Latin-1 article as ASCII.
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from collections import Counter
from typing import Any

#: Most bytes of a body that the tests read.
SAMPLE_BYTES = 65536
#: ASCII bytes kept on each side of a run of non-ASCII bytes in the sample.
_CONTEXT = 64

_CYRILLIC = ("ba", "be", "bg", "kk", "ky", "mk", "ru", "sah", "sr", "tg", "tt", "uk")
#: The encoding the HTML standard suggests for a page of no label, by language (its table
#: of locale defaults); every other language suggests windows-1252.
_SUGGESTED = {
    **dict.fromkeys(("ar", "fa"), "cp1256"),
    **dict.fromkeys(_CYRILLIC, "cp1251"),
    **dict.fromkeys(("cs", "hr", "sk"), "cp1250"),
    **dict.fromkeys(("hu", "pl", "sl"), "iso8859_2"),
    **dict.fromkeys(("et", "lt", "lv"), "cp1257"),
    **dict.fromkeys(("ku", "tr"), "cp1254"),
    "el": "iso8859_7",
    "he": "cp1255",
    "ja": "cp932",
    "ko": "cp949",
    "th": "cp874",
    "vi": "cp1258",
    "zh": "gb18030",
    "zh-hk": "big5",
    "zh-tw": "big5",
}
#: Encodings whose non-ASCII letters stand among ASCII ones: a run of several of them in a
#: row is another encoding's text (CJK read byte by byte).
_LATIN = frozenset({"cp1250", "cp1252", "cp1254", "cp1257", "cp1258", "iso8859-2"})
#: Encodings of two bytes a character: their text is CJK.
_WIDE = frozenset({"cp932", "cp949", "gb18030", "gbk", "big5", "shift_jis", "euc_jp", "euc_kr",
                   "euc_jis_2004", "shift_jis_2004"})  # fmt: skip
#: Python's codecs of the encodings of the web (the Encoding Standard's, and the Windows
#: code pages its Shift_JIS, EUC-KR and GBK labels read as).
_WEB = frozenset(
    codecs.lookup(name).name
    for name in (
        "big5", "big5hkscs", "cp866", "cp874", "cp932", "cp949", "euc_jp", "euc_kr",
        "gb18030", "gb2312", "gbk", "iso2022_jp", "koi8_r", "koi8_u", "mac_cyrillic",
        "mac_roman", "shift_jis", *(f"cp{n}" for n in range(1250, 1259)),
        "euc_jis_2004", "shift_jis_2004",  # supersets of EUC-JP and Shift_JIS
        *(f"iso8859_{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
    )
)  # fmt: skip
_OTHER_DEFAULTS = ("cp1252", "cp1253", "koi8_r", "shift_jis", "euc_jp", "gbk", "euc_kr")
#: The encodings that are a language's default (the table above, windows-1252 and -1253,
#: KOI8-R, and the other labels of its CJK encodings): among the detector's guesses that it
#: finds as little chaotic, these are preferred.
_DEFAULTS = frozenset(codecs.lookup(name).name for name in (*_SUGGESTED.values(), *_OTHER_DEFAULTS))
#: The detector's chaos (its share of odd characters) within which two guesses tie.
CHAOS_TIE = 0.01
#: The share of a sample's non-ASCII characters that may look like another encoding's.
ODD_SHARE = 0.02
#: The share of a sample's non-ASCII letters that must be of one script (Japanese read as
#: windows-1256 gives Arabic letters and Latin ones, about 7 to 3).
SCRIPT_SHARE = 0.9
#: The share of a sample's cased non-ASCII letters that may be upper case, once there are
#: :data:`CASED_MIN` of them.
UPPER_SHARE = 0.5
CASED_MIN = 20
#: The share of a Latin sample's letters and other characters that may be non-ASCII (the
#: sample is the text around its non-ASCII bytes; Polish or Czech text holds a tenth).
LATIN_SHARE = 0.5
#: The share of a Latin sample's non-ASCII letters that may stand in runs of 4 or more.
RUN_SHARE = 0.2

#: ``<html lang>``: its attributes read up to 1 KB, so that a page of many unclosed ``<html``
#: costs linear time.
_LANG = re.compile(
    rb"""<html\b[^>]{0,1024}?\blang\s*=\s*["']?\s*([a-zA-Z]{2,3}(?:[-_][a-zA-Z]{2,4})?)""",
    re.IGNORECASE,
)
_NON_ASCII = re.compile(rb"[\x80-\xff]+")
#: Unicode categories of code points no text holds: controls, private use, unassigned.
_NOT_TEXT = frozenset({"Cc", "Co", "Cn", "Cs"})
#: Categories of characters that stand between two letters only in another encoding's text:
#: symbols, signs, other figures (``³``) and other punctuation (``¿``).
_NOT_IN_WORDS = frozenset({"Sm", "Sc", "Sk", "So", "No", "Po"})
#: Characters of those categories that do stand inside words: accents used as apostrophes,
#: the middle dot.
_INSIDE_WORDS = frozenset("`´·")


def sample(data: bytes, size: int = SAMPLE_BYTES) -> bytes:
    """The runs of non-ASCII bytes of ``data``, each with up to :data:`_CONTEXT` ASCII bytes
    around it (runs that close merged), joined by newlines, at most ``size`` bytes. Each piece
    starts on ASCII; only the last may end inside a character, where the size cuts it."""
    pieces: list[bytes] = []
    total = 0
    start = end = -1
    for run in _NON_ASCII.finditer(data):
        if start < 0 or run.start() - _CONTEXT > end:
            if start >= 0:
                pieces.append(data[start:end])
                total += end - start + 1
            start = max(0, run.start() - _CONTEXT)
        end = min(len(data), run.end() + _CONTEXT)
        if total + end - start >= size:
            pieces.append(data[start : start + size - total])
            return b"\n".join(pieces)
    if start >= 0:
        pieces.append(data[start:end])
    return b"\n".join(pieces)


def suggested(data: bytes) -> str | None:
    """The encoding suggested by the language of the page's ``<html lang>``, if it names
    one other than windows-1252's."""
    found = _LANG.search(data[:8192])
    if not found:
        return None
    tag = found.group(1).decode("ascii").lower().replace("_", "-")
    return _SUGGESTED.get(tag) or _SUGGESTED.get(tag.split("-")[0])


def reads_as(piece: bytes, name: str) -> bool:
    """Whether ``piece`` (a :func:`sample`) reads as text in encoding ``name``: every byte
    decoded, and few characters of the kind a wrong encoding makes (controls, unassigned
    code points, a symbol inside a word, letters of several scripts, mostly capitals; for
    CJK encodings, a character that is not CJK; for Latin ones, more non-ASCII characters
    than ASCII letters, or long runs of accented letters)."""
    codec = _codec(name)
    try:
        text = piece.decode(codec)
    except UnicodeDecodeError as exc:
        if exc.start < len(piece) - 4:  # not a character cut at the sample's end
            return False
        text = piece[: exc.start].decode(codec)
    chars = [c for c in text if ord(c) > 127]
    if not chars:
        return True
    if codec in _WIDE:
        odd = sum(1 for c in chars if not _is_cjk(c))
        return odd <= ODD_SHARE * len(chars)
    odd = 0
    for i, c in enumerate(text):
        if ord(c) > 127 and _odd(text, i):
            odd += 1
    if odd > ODD_SHARE * len(chars):
        return False
    scripts = Counter(unicodedata.name(c, "?").split()[0] for c in chars if c.isalpha())
    if scripts and max(scripts.values()) < SCRIPT_SHARE * scripts.total():
        return False
    upper = sum(1 for c in chars if c.isupper())
    cased = upper + sum(1 for c in chars if c.islower())
    if cased >= CASED_MIN and upper > UPPER_SHARE * cased:
        return False  # text is mostly lower case: KOI8-R read as windows-1251 is not
    if codec in _LATIN:
        ascii_letters = sum(1 for c in text if c.isascii() and c.isalpha())
        if len(chars) > LATIN_SHARE * (ascii_letters + len(chars)):
            return False
        letters = [m.group() for m in re.finditer(r"[^\x00-\x7f\W\d_]+", text)]
        in_runs = sum(len(run) for run in letters if len(run) >= 4)
        return in_runs <= RUN_SHARE * max(1, sum(len(run) for run in letters))
    return True


def _is_cjk(c: str) -> bool:
    name = unicodedata.name(c, "")
    return name.startswith(("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "FULLWIDTH", "HALFWIDTH",
                            "IDEOGRAPHIC")) or unicodedata.category(c)[0] in "PZS"  # fmt: skip


def _odd(text: str, i: int) -> bool:
    """Whether the character at ``i`` looks like another encoding's: a control, private or
    unassigned code point, or a symbol, a sign or a figure between two letters (``by³o``,
    ``mo¿na``: a Polish page read as windows-1252), where dashes, spaces, quotes and soft
    hyphens stand in real text."""
    category = unicodedata.category(text[i])
    if category in _NOT_TEXT:
        return True
    if category not in _NOT_IN_WORDS or text[i] in _INSIDE_WORDS:
        return False
    return 0 < i < len(text) - 1 and text[i - 1].isalpha() and text[i + 1].isalpha()


def detect(data: bytes) -> str | None:
    """The Python codec to read ``data`` in, for a body that names no encoding and is not
    UTF-8: the encoding its language suggests, then windows-1252, each if the body reads as
    text in it; else the detector's guesses that are encodings of the web (a browser reads
    no page in EBCDIC or a DOS code page): the first that reads as text, or a language's
    default that the detector finds as little chaotic (ISO-8859-2 before the ISO-8859-3 or
    -10 that read a short Polish text as well; never among CJK encodings, which share their
    kana and punctuation), else its first guess; None when it has none."""
    piece = sample(data)
    for name in dict.fromkeys(n for n in (suggested(data), "cp1252") if n):
        if reads_as(piece, name):
            return name
    from charset_normalizer import from_bytes

    matches: list[Any] = []
    # a sample cut by its size may end inside a character, which the detector refuses
    for cut in range(4 if len(piece) >= SAMPLE_BYTES else 1):
        matches = list(from_bytes(piece[: len(piece) - cut]))
        if matches:
            break
    guesses = [(m.encoding, m.chaos) for m in matches if _codec(m.encoding) in _WEB]
    readable = [(name, chaos) for name, chaos in guesses if reads_as(piece, name)]
    if not readable:
        return guesses[0][0] if guesses else None
    first, least = readable[0]
    if _codec(first) in _WIDE:
        return first  # CJK encodings share their kana and punctuation: its order holds
    tied = [name for name, chaos in readable if chaos <= least + CHAOS_TIE]
    return next((name for name in tied if _codec(name) in _DEFAULTS), first)


def _codec(name: str) -> str:
    return codecs.lookup(name).name
