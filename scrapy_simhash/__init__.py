"""Near-duplicate page detection for Scrapy crawls: main text, simhash, LMDB index.

The package holds four parts, each in a subpackage, imports running one way
(``crawl`` and ``cli`` use ``index`` and ``text``; ``index`` uses ``text``):

* :mod:`scrapy_simhash.text`: main text, words and the 64-bit fingerprint;
* :mod:`scrapy_simhash.index`: the permuted-table index and its storage;
* :mod:`scrapy_simhash.crawl`: the Scrapy components and the service they share;
* :mod:`scrapy_simhash.cli`: the ``scrapy-simhash`` command line.

Every name is imported on first use: the fingerprint and index names without Scrapy, the
Scrapy components (:class:`SimhashMiddleware`, :class:`SimhashPipeline`,
:class:`NearDuplicate`, :class:`Addon`) with it, so ``scrapy_simhash.SimhashPipeline`` works
in settings, ``import scrapy_simhash`` does not load Scrapy, and the command line starts
before numpy and LMDB load (a Ctrl-C meanwhile is one line, not a traceback).
"""

from __future__ import annotations

import sys
import types
from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .crawl.addon import Addon
    from .crawl.middleware import SimhashMiddleware
    from .crawl.pipeline import NearDuplicate, SimhashPipeline
    from .index import IndexMismatchError, Match, SimhashIndex
    from .text import (
        FINGERPRINT_VERSION,
        Fingerprinter,
        PageSignature,
        PageText,
        extract_page,
        extract_text,
        hamming,
        page_signature,
        simhash,
        text_signature,
    )

__version__ = "0.1.0"

_TEXT_NAMES = ("FINGERPRINT_VERSION", "Fingerprinter", "PageSignature", "PageText",
               "extract_page", "extract_text", "hamming", "page_signature", "simhash",
               "text_signature")  # fmt: skip
_SUBPACKAGES = frozenset({"cli", "commands", "crawl", "index", "text"})
#: The module each public name is imported from, on first use.
_PUBLIC = {
    **dict.fromkeys(("IndexMismatchError", "Match", "SimhashIndex"), ".index"),
    **dict.fromkeys(_TEXT_NAMES, ".text"),
    "Addon": ".crawl.addon",
    "NearDuplicate": ".crawl.pipeline",
    "SimhashMiddleware": ".crawl.middleware",
    "SimhashPipeline": ".crawl.pipeline",
}

__all__ = [
    "FINGERPRINT_VERSION",
    "Addon",
    "Fingerprinter",
    "IndexMismatchError",
    "Match",
    "NearDuplicate",
    "PageSignature",
    "PageText",
    "SimhashIndex",
    "SimhashMiddleware",
    "SimhashPipeline",
    "extract_page",
    "extract_text",
    "hamming",
    "page_signature",
    "simhash",
    "text_signature",
]


class _Package(types.ModuleType):
    """This package's module type: imports a public name on first use. As methods of the type
    (not functions in the module), the hooks stay out of ``help(scrapy_simhash)``, which
    lists the names themselves."""

    def __getattr__(self, name: str) -> Any:
        if name in _SUBPACKAGES:  # scrapy_simhash.text.hamming after import scrapy_simhash
            return import_module(f".{name}", self.__name__)
        module = _PUBLIC.get(name)
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(import_module(module, self.__name__), name)
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *_PUBLIC})


sys.modules[__name__].__class__ = _Package
