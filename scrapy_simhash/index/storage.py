"""What the index asks of a storage: named key spaces of bytes, in transactions.

The permuted-table logic (:mod:`.tables`, :mod:`.documents`, :mod:`.index`) is written once
against these two small interfaces; :mod:`.lmdb_storage` implements them on LMDB. A storage
holds *spaces*: ordered maps from bytes to bytes, opened by name once
(:meth:`Storage.space`), and handed back to every call as the handle it returned.

* ``meta``: the index's parameters and counts;
* ``docs``: document id -> document record;
* ``fps``: fingerprint -> document ids, a *multi* space (one key, several sorted values);
* ``t00``, ``t01``, ... and ``r00``, ...: the main and recent tables, bucket key -> packed
  bucket;
* ``sigs``, ``sents`` and ``repeats``: the page signatures, the postings of their long
  sentences and the frequency guard's counts (:mod:`.sentences`);
* ``drops``, ``dseq`` and ``dkept``: the drop records (:mod:`.drops`).

Every read and write goes through a :class:`Txn`. A write transaction is atomic and isolated
from other processes' writers (LMDB serialises them), which makes the index's
check-and-insert, a probe followed by an insert in one write transaction, atomic across
processes.

A server that cannot hold a transaction across round trips (Redis) does not fit these
interfaces: :class:`~.redis_index.RedisIndex` shares the index's public face
(:mod:`.face`), its layouts and its byte encodings instead, and decides each check-and-insert
in one server-side script. LMDB's calls take microseconds, and the crawl makes them in the
reactor thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

#: A space's handle, as :meth:`Storage.space` returned it (opaque to the index).
Space = Any
#: Items a stream reads per short read transaction.
CHUNK = 1000

T = TypeVar("T")

META = b"meta"
DOCS = b"docs"
LINKS = b"fps"


def main_table(i: int) -> bytes:
    """The name of main table ``i``'s space."""
    return b"t%02d" % i


def recent_table(i: int) -> bytes:
    """The name of recent table ``i``'s space."""
    return b"r%02d" % i


def is_table(name: bytes) -> bool:
    return name[:1] in (b"t", b"r") and name[1:].isdigit()


class Txn(Protocol):
    """A transaction: reads see its own writes, and nothing of it is seen by others before
    it commits."""

    def get(self, key: bytes, db: Space) -> bytes | None:
        """The value of ``key`` in the space ``db`` (the first of a multi space's values), or
        None. The one call with the key first and the space as ``db=``: a probe makes it for
        every table, and LMDB's transactions take it in that form, without a wrapper."""

    def put(self, space: Space, key: bytes, value: bytes) -> None:
        """Set ``key`` (add ``value`` to a multi space's values)."""

    def delete(self, space: Space, key: bytes, value: bytes | None = None) -> None:
        """Remove ``key`` (only ``value`` of a multi space's values, when given)."""

    def pop(self, space: Space, key: bytes) -> bytes | None:
        """Remove ``key`` and return its value, or None."""

    def values(self, space: Space, key: bytes) -> Iterator[bytes]:
        """Every value of ``key`` in a multi space, sorted."""

    def scan(self, space: Space, start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """``(key, value)`` in key order from the first key >= ``start`` (every value of a
        multi space's key, each as an item)."""

    def last(self, space: Space) -> tuple[bytes, bytes] | None:
        """The item with the largest key (the last value of a multi key), or None."""

    def count(self, space: Space) -> int:
        """How many items the space holds."""

    def put_many(
        self, space: Space, items: Iterable[tuple[bytes, Any]], *, append: bool = False
    ) -> int:
        """Write ``items`` (sorted by key; with ``append``, all after any key held): how many
        were added."""

    def clear(self, space: Space) -> None:
        """Remove every item of the space."""


class Storage(Protocol):
    """Where an index lives: spaces, transactions, and what only the storage can tell."""

    path: str
    readonly: bool
    #: What its failed reads and writes raise (a full disk, an I/O error, damage).
    errors: tuple[type[BaseException], ...]

    def space(self, name: bytes, *, multi: bool = False, create: bool = True) -> Space:
        """The handle of space ``name``, opened (created unless ``create`` is False) once;
        KeyError if it does not exist and is not created."""

    def space_names(self) -> list[bytes]:
        """The names of every space the storage holds."""

    def read(self) -> AbstractContextManager[Txn]:
        """A read transaction for the block."""

    def write(self, parent: Txn | None = None) -> AbstractContextManager[Txn]:
        """A write transaction for the block, committed at its end and rolled back if it
        raises; nested in ``parent`` (committed into it) when given."""

    def begin(self) -> Txn:
        """A write transaction left open: the caller commits or aborts it (a batch)."""

    def commit(self, txn: Txn) -> None: ...

    def abort(self, txn: Txn) -> None: ...

    def drop(self, names: Iterable[bytes], empty: Iterable[Space]) -> None:
        """Delete the spaces ``names`` and empty the spaces ``empty`` (handles), in one
        write transaction."""

    def usage(self) -> dict[str, int]:
        """Disk and memory use: ``bytes_on_disk``, ``file_size``, ``map_size``,
        ``map_used``."""

    def copy(self, dest: str) -> None:
        """Write a compacted copy into the empty directory ``dest``."""

    @property
    def stale(self) -> bool:
        """True in a process forked after the storage was opened: it must be reopened."""

    def reopen(self) -> Storage:
        """The storage opened anew in this process (after a fork)."""

    def close(self) -> None: ...


def stream(
    read: Callable[[], AbstractContextManager[Txn]],
    space: Space,
    item: Callable[[Txn, bytes, bytes], T | None],
) -> Iterator[T]:
    """``item(txn, key, value)`` for every item of ``space`` in key order (None ones left
    out), :data:`CHUNK` items per short read transaction (``read()`` opens one), so that a
    long scan never holds a reader open; each transaction resumes after the last key the one
    before it scanned."""
    after: bytes | None = None
    while True:
        chunk: list[T] = []
        scanned = 0
        with read() as txn:
            for key, value in txn.scan(space, after):
                if key == after:
                    continue
                after = bytes(key)
                scanned += 1
                found = item(txn, after, value)
                if found is not None:
                    chunk.append(found)
                if scanned == CHUNK:
                    break
        if not scanned:
            return
        yield from chunk
