"""CJK word segmentation: jieba's dictionary words, segmented by jieba-rs.

The words are jieba's (``jieba.Tokenizer().cut(run, HMM=False)`` gives the same ones): for
each run of CJK characters, the segmentation of highest probability under the word
frequencies of jieba's dictionary, ties going to the longer word. jieba-rs, through its
Python binding ``rjieba``, runs that same dynamic programme over the same dictionary in
compiled code: about four times faster than this module's own numpy programme of fingerprint
version 7, which it replaced with the same words on every text of the quality bench (112,364
distinct runs, Chinese and Japanese). It loads its dictionary in about a tenth of a second,
once per process, on the first CJK text.

A private tokenizer keeps our fingerprints independent of words a user adds to jieba's or
rjieba's global dictionary. ``import rjieba`` builds that global one (24 MB): unless the
process has imported rjieba already, its compiled module is loaded alone, and registered
where the package would register it, so that a later ``import rjieba`` uses it. jieba-rs's
dictionary is compiled into ``rjieba``: the dependency is pinned to a minor version, and a
test checks its words against jieba's.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import logging
import os
import sys
import threading
from types import ModuleType
from typing import Protocol

#: Kana and CJK ideographs: the characters segmented by dictionary rather than by spaces.
CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"


class _Tokenizer(Protocol):
    def cut(self, text: str, hmm: bool = True) -> list[str]: ...


_lock = threading.Lock()
_tokenizer: _Tokenizer | None = None
logger = logging.getLogger(__name__)


def tokenizer() -> _Tokenizer:
    """Our private jieba-rs tokenizer, its dictionary loaded on first use."""
    global _tokenizer
    if _tokenizer is None:
        with _lock:
            if _tokenizer is None:
                _tokenizer = _compiled_module().Jieba()
    return _tokenizer


def _compiled_module() -> ModuleType:
    """rjieba's compiled module, loaded without the global tokenizer its package builds
    (unless the package, or this, loaded it already; or it is not where it should be)."""
    loaded = sys.modules.get("rjieba.rjieba")
    if loaded is not None:
        return loaded
    path = _compiled_path()
    if path is not None:
        loader = importlib.machinery.ExtensionFileLoader("rjieba.rjieba", path)
        spec = importlib.util.spec_from_file_location("rjieba.rjieba", path, loader=loader)
        if spec is not None:
            try:
                module = importlib.util.module_from_spec(spec)
                loader.exec_module(module)
            except ImportError as exc:
                logger.debug("rjieba's module %s not loaded alone: %s", path, exc)
            else:
                sys.modules["rjieba.rjieba"] = module
                return module
    import rjieba

    return rjieba


def _compiled_path() -> str | None:
    """The file of rjieba's compiled module, or None where it is not found."""
    spec = importlib.util.find_spec("rjieba")
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, f"rjieba{suffix}")
            if os.path.isfile(path):
                return path
    return None


def segment_cjk(run: str) -> tuple[str, ...]:
    """The jieba words of a run of CJK characters (jieba's HMM guesses off)."""
    return tuple(tokenizer().cut(run, False))
