"""Copying one index into another, LMDB or Redis: its documents with their page signatures and
first-seen times, its drop records, and what its frequency guard learned (``compact`` from a
Redis index into an LMDB directory, ``RedisIndex.load`` from either)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..text.signature import PageSignature
from .documents import Match

if TYPE_CHECKING:
    from .face import IndexFace

#: Documents whose signatures are read at once.
CHUNK = 1000


def signed_items(source: IndexFace) -> Iterator[tuple[int | PageSignature, str, dict[str, Any]]]:
    """Every document of ``source`` (an index, LMDB or Redis) as ``(signature or fingerprint,
    key, record)``, for ``insert_many``; the signatures read :data:`CHUNK` documents at a time
    (on a server, a round trip each)."""
    chunk: list[Match] = []

    def flush() -> Iterator[tuple[int | PageSignature, str, dict[str, Any]]]:
        keys = [m.key for m in chunk]
        for match, signature in zip(chunk, source.signatures(keys), strict=True):
            yield (match.fingerprint if signature is None else signature, match.key, match.record)
        chunk.clear()

    for match in source.items():
        chunk.append(match)
        if len(chunk) == CHUNK:
            yield from flush()
    yield from flush()


def copy_repeats(source: Any, dest: Any) -> None:
    """Add to ``dest`` what the guard of ``source`` learned (indexes, LMDB or Redis)."""
    dest.add_repeats(source.repeats())


def copy_drops(source: Any, dest: Any) -> int:
    """Record in ``dest`` every drop record of ``source`` (indexes, LMDB or Redis), oldest
    first, whose kept page ``dest`` holds; how many were copied. ``dest`` keeps them all
    whatever its bound (a writer's bound applies at its next drop). Each record is passed
    whole (``add_drop``): a field named as a parameter of ``record_drop`` (``rule``, ``key``,
    ...) is copied as any other, not taken for that parameter."""
    bound = dest.drop_records
    dest.drop_records = max(bound, source.drop_count())
    copied = 0
    try:
        for drop in source.drops():
            if drop.kept is not None and drop.kept in dest:
                dest.add_drop(drop)
                copied += 1
    finally:
        dest.drop_records = bound
    return copied
