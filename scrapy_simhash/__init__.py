"""Near-duplicate page detection for Scrapy crawls: main text, simhash, LMDB index.

The fingerprint and index names import without Scrapy; the Scrapy components
(``SimhashMiddleware``, ``SimhashPipeline``, ``NearDuplicate``, ``Addon``) are loaded on
first use, so ``scrapy_simhash.SimhashPipeline`` works in settings.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .extract import extract_text
from .fingerprint import FINGERPRINT_VERSION, Fingerprinter, hamming, simhash, text_signature
from .index import IndexMismatchError, Match, SimhashIndex

if TYPE_CHECKING:
    from .addon import Addon
    from .middleware import SimhashMiddleware
    from .pipeline import NearDuplicate, SimhashPipeline

__version__ = "0.1.0"

_SCRAPY_COMPONENTS = {
    "Addon": ".addon",
    "NearDuplicate": ".pipeline",
    "SimhashMiddleware": ".middleware",
    "SimhashPipeline": ".pipeline",
}

__all__ = [
    "FINGERPRINT_VERSION",
    "Addon",
    "Fingerprinter",
    "IndexMismatchError",
    "Match",
    "NearDuplicate",
    "SimhashIndex",
    "SimhashMiddleware",
    "SimhashPipeline",
    "extract_text",
    "hamming",
    "simhash",
    "text_signature",
]


def __getattr__(name: str) -> Any:
    module = _SCRAPY_COMPONENTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
