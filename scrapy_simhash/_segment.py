"""CJK word segmentation with jieba: a private tokenizer, loaded once, lazily and quietly.

A private ``jieba.Tokenizer`` keeps our fingerprints independent of words a user adds to
jieba's global dictionary. Its cache goes to the user's cache directory (``$XDG_CACHE_HOME``
or ``~/.cache``), else the temporary directory, never the working directory.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import threading
from functools import lru_cache
from pathlib import Path
from typing import Any

_CJK_RUN = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff]+"
)
_lock = threading.Lock()
_tokenizer: Any = None


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


def tokenizer() -> Any:
    """The jieba tokenizer, initialized on first use (about 0.5 s with a warm cache)."""
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
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
                _tokenizer = tok
    return _tokenizer


def is_cjk_run(token: str) -> bool:
    return _CJK_RUN.fullmatch(token) is not None


@lru_cache(maxsize=65536)
def _segment(run: str) -> tuple[str, ...]:
    return tuple(w for w in tokenizer().cut(run, HMM=True) if w.strip())


def segment_cjk(run: str) -> tuple[str, ...]:
    """The jieba words of a run of CJK characters."""
    if len(run) == 1:
        return (run,)
    return _segment(run)
