"""CJK word segmentation over jieba's dictionary: loaded once, lazily and quietly.

The words are jieba's (``jieba.Tokenizer().cut(run, HMM=False)`` gives the same ones): for
each run of CJK characters, the segmentation of highest probability under jieba's word
frequencies. We run that dynamic programme ourselves and keep no jieba tokenizer afterwards.
It runs over all the runs of a text at once: the words of one to three characters at every
position (nine words in ten) are looked up together with numpy, in integer tables built
from jieba's dictionary, so the per-character Python loop only compares a few numbers; a
dictionary walk remains only where three characters begin a longer word. Same words, same
floating-point sums as a loop over one run at a time, about twice as fast.

A private dictionary keeps our fingerprints independent of words a user adds to jieba's
global one. Building the tables from jieba's dictionary takes about a second (jieba's own
cache alone takes 0.6 s to load), so they are kept, once built, in a file of numpy arrays
(``np.load`` without pickles; each array checked by the archive's CRC-32) named after a
hash of jieba's dictionary file: a process then loads them in a few tens of milliseconds,
without importing jieba. A file that is damaged or unreadable is built again. These files
and jieba's cache go to the user's cache directory (``$XDG_CACHE_HOME`` or ``~/.cache``),
else the temporary directory, never the working directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import logging
import math
import os
import tempfile
import threading
import zipfile
from itertools import compress, repeat
from operator import is_
from pathlib import Path
from typing import NamedTuple

import numpy as np

from .caches import make_room

#: Kana and CJK ideographs: the characters segmented by dictionary rather than by spaces.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_lock = threading.Lock()
# word or word prefix of four characters or more -> log probability of the word (None: only
# a prefix of longer words); the shorter ones are in the numpy tables
_lexicon: dict[str, float | None] | None = None
logger = logging.getLogger(__name__)


def cache_dir() -> str:
    """A writable directory for jieba's dictionary cache and our tables."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    path = os.path.join(base, "scrapy_simhash")
    try:
        os.makedirs(path, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    return tempfile.gettempdir()


def lexicon() -> dict[str, float | None]:
    """jieba's dictionary, loaded on first use: its words and word prefixes of four
    characters or more as log probabilities (the shorter ones are looked up in numpy
    tables). From the tables' file when there is one, else built from jieba's dictionary
    (about a second) and the file written."""
    global _lexicon, _tables
    if _lexicon is None:
        with _lock:
            if _lexicon is None:
                path = tables_path()
                loaded = _read_tables(path) if path is not None else None
                if loaded is None:
                    loaded = _from_jieba()
                    if path is not None:
                        _write_tables(path, *loaded)
                _tables, _lexicon = loaded
    return _lexicon


# Every CJK code point is below this (and so is the separator of runs).
_CODE_POINTS = 0x30000
_NOT_A_WORD = -math.inf


class _Tables(NamedTuple):
    """jieba's dictionary for looking up every position of a text at once with numpy."""

    single: np.ndarray  # code point -> log probability of the one-character word (or unknown)
    keys: np.ndarray  # sorted uint64 keys of the two- and three-character words and prefixes
    logp: np.ndarray  # their log probabilities (-inf: only a prefix of longer words)


_tables: _Tables | None = None


def _keys(*columns: np.ndarray) -> np.ndarray:
    """Integer keys of n-grams from the code points of their characters, 21 bits each (a
    three-character key is >= 2**42 > any two-character key: no key has code point 0)."""
    key = columns[0]
    for col in columns[1:]:
        key = (key << np.uint64(21)) | col
    return key


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4").astype(np.uint64)


def _build_tables(lex: dict[str, float | None], unknown: float) -> _Tables:
    single = np.full(_CODE_POINTS, unknown)
    for w, logp in lex.items():
        if len(w) == 1 and logp is not None and ord(w) < _CODE_POINTS:
            single[ord(w)] = logp
    keys, logp = [], []
    for length in (2, 3):
        words = [w for w in lex if len(w) == length]
        codes = _code_points("".join(words)).reshape(-1, length)
        keys.append(_keys(*codes.T))
        logp.append([_NOT_A_WORD if lex[w] is None else lex[w] for w in words])
    all_keys = np.concatenate(keys)
    order = np.argsort(all_keys)
    return _Tables(single, all_keys[order], np.concatenate(logp)[order])


#: Version of the tables' file: a change of what it holds bumps it.
TABLES_FORMAT = 1


def tables_path() -> str | None:
    """The tables' file for the installed jieba and its dictionary (named after a hash of
    both), or None when the dictionary cannot be found without importing jieba. (A change
    to how this module builds the tables bumps :data:`TABLES_FORMAT`.)"""
    spec = importlib.util.find_spec("jieba")
    if spec is None or spec.origin is None:
        return None
    try:
        with open(os.path.join(os.path.dirname(spec.origin), "dict.txt"), "rb") as f:
            source = hashlib.blake2b(f.read(), digest_size=12)
        source.update(importlib.metadata.version("jieba").encode())
    except (OSError, importlib.metadata.PackageNotFoundError):
        return None
    digest = source.hexdigest()
    return os.path.join(cache_dir(), f"segment-tables-{TABLES_FORMAT}-{digest}.npz")


def _from_jieba() -> tuple[_Tables, dict[str, float | None]]:
    """The tables and the long words, built from jieba's dictionary."""
    import jieba

    tok = jieba.Tokenizer()
    tok.tmp_dir = cache_dir()
    # jieba logs "Building prefix dict ..." to stderr at DEBUG through its own handler: keep
    # it quiet while we load.
    level = jieba.default_logger.level
    jieba.default_logger.setLevel(logging.WARNING)
    try:
        tok.initialize()
    finally:
        jieba.default_logger.setLevel(level)
    log_total = math.log(tok.total)
    lex = {w: (math.log(f) - log_total if f else None) for w, f in tok.FREQ.items()}
    # jieba scores an unknown character as a word of frequency 1
    tables = _build_tables(lex, -log_total)
    return tables, {w: logp for w, logp in lex.items() if len(w) >= 4}


def _write_tables(path: str, tables: _Tables, long: dict[str, float | None]) -> None:
    """Write the tables' file (to a temporary file, then renamed: a reader sees a whole file
    or none). A failure is logged and otherwise ignored: the tables are built again."""
    words = "\n".join(long).encode("utf-8")
    logp = np.array([math.nan if v is None else v for v in long.values()], dtype=np.float64)
    temp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temp, "wb") as f:
            np.savez(f, single=tables.single, keys=tables.keys, logp=tables.logp,
                     long_words=np.frombuffer(words, dtype=np.uint8), long_logp=logp)  # fmt: skip
        os.replace(temp, path)
    except OSError as exc:
        logger.debug("could not write the segmentation tables %s: %s", path, exc)
        with contextlib.suppress(OSError):
            os.unlink(temp)


def _read_tables(path: str) -> tuple[_Tables, dict[str, float | None]] | None:
    """The tables and long words of the file at ``path``, or None when it is missing or not
    whole and sound."""
    try:
        if hasattr(os, "getuid") and os.stat(path).st_uid != os.getuid():
            # another user's file (in a shared temporary directory): not ours to trust
            logger.warning("segmentation tables %s belong to another user: not read", path)
            return None
        with open(path, "rb") as f:
            archive = np.load(f, allow_pickle=False)
            if not isinstance(archive, np.lib.npyio.NpzFile):
                raise ValueError("not an archive of arrays")
            with archive:
                arrays = {name: archive[name] for name in _ARRAYS}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        logger.warning("segmentation tables %s unreadable (%s): building them again", path, exc)
        return None
    single, keys, logp = arrays["single"], arrays["keys"], arrays["logp"]
    words = arrays["long_words"].tobytes().decode("utf-8", errors="replace").split("\n")
    long_logp = arrays["long_logp"]
    if (
        single.dtype != np.float64
        or single.shape != (_CODE_POINTS,)
        or keys.dtype != np.uint64
        or logp.dtype != np.float64
        or keys.shape != logp.shape
        or long_logp.dtype != np.float64
        or len(words) != len(long_logp)
    ):
        logger.warning("segmentation tables %s malformed: building them again", path)
        return None
    long = dict(zip(words, [None if v != v else v for v in long_logp.tolist()], strict=True))
    return _Tables(single, keys, logp), long


_ARRAYS = ("single", "keys", "logp", "long_words", "long_logp")


def _lookup(tables: _Tables, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Log probabilities of the ``wanted`` keys (-inf where absent), and where present.
    (Searching in sorted order keeps consecutive binary searches in one part of the table.)"""
    order = np.argsort(wanted)
    at = np.minimum(np.searchsorted(tables.keys, wanted[order]), len(tables.keys) - 1)
    present = np.empty(len(wanted), dtype=bool)
    present[order] = tables.keys[at] == wanted[order]
    logp = np.empty(len(wanted))
    logp[order] = tables.logp[at]
    return np.where(present, logp, _NOT_A_WORD), present


# Runs are segmented together, joined by a character that is in no dictionary key, so no
# word can cross from one run into the next.
_SEP = "\n"
# The words of runs segmented before (a crawl meets the same short runs again and again).
_cache: dict[str, tuple[str, ...]] = {}
_CACHE_MAX = 1 << 13


def clear_cache() -> None:
    """Forget the runs segmented so far (as a new process would)."""
    _cache.clear()


def _segment_joined(runs: list[str]) -> list[tuple[str, ...]]:
    """The words of each run, by one dynamic programme over all the runs joined.

    For each start position, from the end backwards: the best score of the rest of the run
    is the best, over the dictionary words starting there (one character at least, unknown
    characters scoring as frequency 1), of the word's log probability plus the best score
    after it; ties go to the longer word. The words of one to three characters at every
    position are looked up at once (numpy, over integer keys); only the positions whose
    three characters begin a longer word walk on through the dictionary, one character at
    a time. The score at the end of each run is 0, so each run is segmented exactly as on
    its own, with the same floating-point sums.
    """
    lex = lexicon()
    tables = _tables
    assert tables is not None
    text = _SEP.join(runs)
    n = len(text)
    if n < 2:
        return [(run,) if run else () for run in runs]
    codes = _code_points(text)
    single = tables.single[np.minimum(codes, _CODE_POINTS - 1)].tolist()
    pair_found, pair_present = _lookup(tables, _keys(codes[:-1], codes[1:]))
    # three characters are a word or begin one only where their first two do (jieba's
    # dictionary holds every prefix of its words): about two positions in five
    at = np.flatnonzero(pair_present[: n - 2])
    triple_found = np.full(n - 2, _NOT_A_WORD)
    triple_present = np.zeros(n - 2, dtype=bool)
    triple_found[at], triple_present[at] = _lookup(
        tables, _keys(codes[at], codes[at + 1], codes[at + 2])
    )
    pair = [*pair_found.tolist(), _NOT_A_WORD]
    triple = [*triple_found.tolist(), _NOT_A_WORD, _NOT_A_WORD]
    walk = set(at[triple_present[at]].tolist())  # three characters begin a longer word
    # positions where a word of two characters or more may start (elsewhere: one character)
    choice = np.isfinite(pair_found)
    choice[: n - 2] |= triple_present
    several = [*choice.tolist(), False]
    score = [0.0] * (n + 3)
    end = list(range(1, n + 1))
    stop = n
    for run in reversed(runs):
        start = stop - len(run)
        score[stop] = 0.0  # the end of this run (a separator, or the end of the text)
        for k in range(stop - 1, start - 1, -1):
            if not several[k]:
                score[k] = single[k] + score[k + 1]  # and end[k] stays k + 1
                continue
            best = single[k] + score[k + 1]
            best_end = k + 1
            s = pair[k] + score[k + 2]
            if s >= best:
                best, best_end = s, k + 2
            s = triple[k] + score[k + 3]
            if s >= best:
                best, best_end = s, k + 3
            if k in walk:
                i = k + 4
                while i <= stop:
                    frag = text[k:i]
                    if frag not in lex:
                        break
                    logp = lex[frag]
                    if logp is not None and logp + score[i] >= best:
                        best, best_end = logp + score[i], i
                    i += 1
            score[k] = best
            end[k] = best_end
        stop = start - 1
    out = []
    k = 0
    for run in runs:
        stop = k + len(run)
        words = []
        while k < stop:
            e = end[k]
            words.append(text[k:e])
            k = e
        out.append(tuple(words))
        k += 1  # the separator
    return out


def segment_runs(runs: list[str]) -> list[tuple[str, ...]]:
    """The jieba words of each run of CJK characters."""
    cached = list(map(_cache.get, runs))
    todo = list(dict.fromkeys(compress(runs, map(is_, cached, repeat(None)))))
    if not todo:
        return cached  # type: ignore[return-value]
    new = dict(zip(todo, _segment_joined(todo), strict=True))
    make_room(_cache, len(new), _CACHE_MAX)
    _cache.update(new)
    return list(map(new.get, runs, cached))  # type: ignore[arg-type]


def segment_cjk(run: str) -> tuple[str, ...]:
    """The jieba words of a run of CJK characters."""
    return segment_runs([run])[0]
