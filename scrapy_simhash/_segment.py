"""CJK word segmentation over jieba's dictionary: loaded once, lazily and quietly.

The words are jieba's (``jieba.Tokenizer().cut(run, HMM=False)`` gives the same ones): for
each run of CJK characters, the segmentation of highest probability under jieba's word
frequencies. We run that dynamic programme ourselves over one table of log probabilities,
which is about twice as fast as jieba's own loop, and keep no jieba tokenizer afterwards.
A private dictionary keeps our fingerprints independent of words a user adds to jieba's
global one. jieba's dictionary cache goes to the user's cache directory (``$XDG_CACHE_HOME``
or ``~/.cache``), else the temporary directory, never the working directory.
"""

from __future__ import annotations

import logging
import math
import os
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

#: Kana and CJK ideographs: the characters segmented by dictionary rather than by spaces.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
_lock = threading.Lock()
# word or word prefix -> log probability of the word (None: only a prefix of longer words)
_lexicon: dict[str, float | None] | None = None
_unknown = 0.0


def cache_dir() -> str:
    """A writable directory for jieba's dictionary cache."""
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
    """jieba's dictionary as log probabilities, built on first use (about 0.7 s)."""
    global _lexicon, _unknown
    if _lexicon is None:
        with _lock:
            if _lexicon is None:
                import jieba

                tok = jieba.Tokenizer()
                tok.tmp_dir = cache_dir()
                # jieba logs "Building prefix dict ..." to stderr at DEBUG through its own
                # handler: keep it quiet while we load.
                level = jieba.default_logger.level
                jieba.default_logger.setLevel(logging.WARNING)
                try:
                    tok.initialize()
                finally:
                    jieba.default_logger.setLevel(level)
                log_total = math.log(tok.total)
                _unknown = -log_total  # jieba scores unknown characters as frequency 1
                _lexicon = {
                    w: (math.log(f) - log_total if f else None) for w, f in tok.FREQ.items()
                }
    return _lexicon


@lru_cache(maxsize=65536)
def _segment(run: str) -> tuple[str, ...]:
    lex = lexicon()
    unknown = _unknown
    n = len(run)
    score = [0.0] * (n + 1)
    end = [0] * n
    for k in range(n - 1, -1, -1):
        best = (lex.get(run[k]) or unknown) + score[k + 1]
        best_end = k
        i = k + 2
        while i <= n:
            frag = run[k:i]
            if frag not in lex:
                break
            logp = lex[frag]
            if logp is not None and logp + score[i] >= best:  # ties: the longer word
                best, best_end = logp + score[i], i - 1
            i += 1
        score[k] = best
        end[k] = best_end
    words = []
    k = 0
    while k < n:
        words.append(run[k : end[k] + 1])
        k = end[k] + 1
    return tuple(words)


def segment_cjk(run: str) -> tuple[str, ...]:
    """The jieba words of a run of CJK characters."""
    if len(run) == 1:
        return (run,)
    return _segment(run)
