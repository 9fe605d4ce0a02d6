"""What an index answers the same way on any storage (LMDB's :class:`~.index.SimhashIndex`,
the Redis server's :class:`~.redis_index.RedisIndex`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..text.signature import PageSignature
from .documents import Match
from .drops import Drop, rule_code
from .layout import Layout
from .meta import check_distance
from .pairs import Group, components, groups
from .records import SignedItem, check_key, checked_signed_items

if TYPE_CHECKING:
    from typing_extensions import Self


class IndexFace:
    """The shared part of an index's public face."""

    max_distance: int
    readonly: bool
    _closed: bool

    def items(self) -> Iterator[Match]:
        raise NotImplementedError

    def pairs(self, max_distance: int | None = None) -> Iterator[tuple[str, str, int]]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def _query_distance(self, max_distance: int | None) -> int:
        if max_distance is None:
            return self.max_distance
        return check_distance(max_distance, "max_distance", self.max_distance)

    def keys(self) -> Iterator[str]:
        """Every stored key, streamed."""
        for match in self.items():
            yield match.key

    def __iter__(self) -> Iterator[str]:
        return self.keys()

    def clusters(self, max_distance: int | None = None) -> list[list[str]]:
        """Connected components (of two or more documents) of :meth:`pairs`, each sorted,
        biggest first."""
        return components(self.pairs(max_distance))

    def signature(self, key: str) -> PageSignature | None:
        raise NotImplementedError

    def signatures(self, keys: Sequence[str]) -> list[PageSignature | None]:
        """:meth:`signature` for each of ``keys``."""
        return [self.signature(key) for key in keys]

    def drops(self) -> Iterator[Drop]:
        raise NotImplementedError

    def record_drop(
        self,
        fingerprint: int | PageSignature,
        key: str,
        kept: str,
        distance: int,
        rule: str = "hamming",
        **record: Any,
    ) -> None:
        """Record ``key`` (``fingerprint``) as dropped, a near duplicate at ``distance`` of
        the stored key ``kept`` found by ``rule``, with a JSON-serializable ``record`` (its
        time ``seen``, now unless given), as ``check_and_insert`` does with
        ``drop_records``; kept to that bound, or to one record when it is 0. ValueError if
        ``kept`` is not stored. A record with a field named as one of these parameters
        (``rule``, ``key``, ...) is recorded by :meth:`add_drop`."""
        self._checked_drop(fingerprint, key, kept, distance, rule, record)

    def add_drop(self, drop: Drop) -> None:
        """Record ``drop`` (as :meth:`drops` gives it, from this index or another) here, with
        its time: :meth:`record_drop` with the record passed whole, so that a field of it named
        as one of that method's parameters (``rule``, ``kept``, ``distance``, ``fingerprint``,
        ``key``) is a field like any other (a copy takes every drop record as it is).
        ValueError if its kept page is not stored."""
        if drop.kept is None:  # a damaged index's record
            raise ValueError(f"the drop record of {drop.key!r} names no kept page")
        record = {**drop.record, "seen": drop.seen}
        self._checked_drop(drop.fingerprint, drop.key, drop.kept, drop.distance, drop.rule, record)

    def _checked_drop(
        self,
        fingerprint: int | PageSignature,
        key: str,
        kept: str,
        distance: int,
        rule: str,
        record: Mapping[str, Any],
    ) -> None:
        """:meth:`record_drop`'s checks, then the drop recorded: ``record`` a mapping, whatever
        its field names."""
        item = checked_signed_items([(fingerprint, key, dict(record))])[0]
        distance = check_distance(distance, "distance", 64)  # a sentence-rule drop: any
        rule_code(rule)
        self._record_drop(item, check_key(kept), distance, rule)

    def _record_drop(self, item: SignedItem, kept: str, distance: int, rule: str) -> None:
        raise NotImplementedError

    def groups(self, max_distance: int | None = None) -> list[Group]:
        """:meth:`clusters` with the drop records: each group of stored documents within
        ``max_distance`` of one another with the pages dropped against them, and each
        document with dropped copies, biggest first."""
        return groups(self.pairs(max_distance), self.drops())

    def _state(self) -> str:
        return "closed" if self._closed else ("read-only" if self.readonly else "open")

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def layout_stats(layout: Layout) -> dict[str, Any]:
    """The layout's part of an index's ``stats()``."""
    return {
        "tables": layout.tables,
        "blocks": list(layout.blocks),
        "sub_blocks": list(layout.sub_blocks),
        "prefix_bits": list(layout.prefix_bits),
        "layout": str(layout),
    }
