"""Bounded memo dictionaries (feature hashes, segmented runs): full, they keep their recent half."""

from __future__ import annotations

from itertools import islice
from typing import Any


def make_room(cache: dict[Any, Any], needed: int, limit: int) -> None:
    """Before adding ``needed`` entries to ``cache``: if they would take it past ``limit``, drop
    its oldest entries (dicts keep insertion order) until it holds half the limit with them.

    Memory stays bounded, and a full cache keeps what was added last instead of starting empty
    (near-duplicate pages of a crawl tend to come close together)."""
    if len(cache) + needed <= limit:
        return
    keep = max(0, limit // 2 - needed)
    for key in list(islice(cache, len(cache) - keep)):
        cache.pop(key, None)  # (another thread may have made room already)
