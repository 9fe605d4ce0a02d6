"""The index's storage on LMDB: one environment per directory, a named database per space.

LMDB forbids opening one path twice in a process, and an environment must not be used after
``fork``: a registry hands out the environment already open for a path, and a forked child
that opens a path again first closes its inherited copy (never using it). Write transactions
are serialised across processes by LMDB's lock, which makes the index's check-and-insert
atomic. The multi space (``fps``) is a DUPSORT+DUPFIXED database.
"""

from __future__ import annotations

import contextlib
import logging
import os
import struct
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import lmdb

from .layout import MAX_TABLES
from .records import DamagedIndexError

logger = logging.getLogger(__name__)

#: Sparse map reserved at open and never grown (growing it while other processes hold the
#: environment has known bugs): 1 TiB on 64-bit systems. Only used pages take disk space.
DEFAULT_MAP_SIZE = (1 << 40) if sys.maxsize > 2**32 else (1 << 30)
#: Named databases an environment can hold: an index's tables (at most MAX_TABLES, and its
#: recent tables, fewer than those) and its own databases (9), with room to spare. (80, as
#: it was, was too few for k=5 at 10 million fingerprints: 56 tables, 21 recent ones.)
MAX_DBS = 2 * MAX_TABLES + 16


class MissingSpaceError(DamagedIndexError, KeyError):
    """A named database of the environment is missing: the index is damaged (a KeyError too,
    as :meth:`~.storage.Storage.space` promises, so that an environment without the index's
    metadata is still told apart as no index at all)."""

    def __init__(self, name: bytes) -> None:
        super().__init__(name)  # the only argument: the error pickles
        self.name = name

    def __str__(self) -> str:  # not KeyError's, the key quoted
        shown = self.name.decode("utf-8", "backslashreplace")
        return f"index damaged: its database {shown!r} is missing"


class NotLmdbFileError(DamagedIndexError, lmdb.InvalidError):
    """The data file is not an LMDB file (another program's, or one whose creation stopped
    within its header): LMDB's ``InvalidError``, and damage, which a reset starts afresh
    from."""


class BatchInThreadError(lmdb.Error, RuntimeError):
    """A write refused in a thread where another index object on the same path holds a
    batch open: LMDB's own refusal (an ``lmdb.Error``, handled as any storage error), in
    words that say what to do."""


@dataclass(eq=False)
class SharedEnv:
    """An open environment, the process that opened it and how many indexes use it."""

    env: lmdb.Environment
    path: str
    readonly: bool
    pid: int = field(default_factory=os.getpid)
    refs: int = 1
    dbs: dict[bytes, Any] = field(default_factory=dict)
    #: The threads holding a batch's write transaction open (LMDB allows one a thread).
    batches: set[int] = field(default_factory=set)

    def db(self, name: bytes, *, create: bool = True, **flags: Any) -> Any:
        """A named database handle, opened once per environment (created if missing, when
        ``create`` and the environment is writable)."""
        handle = self.dbs.get(name)
        if handle is None:
            handle = self.env.open_db(name, create=create and not self.readonly, **flags)
            self.dbs[name] = handle
        return handle

    @property
    def stale(self) -> bool:
        """True in a process forked after this environment was opened."""
        return self.pid != os.getpid()


_lock = threading.Lock()
_open: dict[str, SharedEnv] = {}


def _close_inherited(shared: SharedEnv) -> None:
    """Close, in a forked child, an environment the parent opened. This only unmaps the
    child's copy and closes the child's descriptors: LMDB clears reader slots of the calling
    process only, and fcntl locks are not inherited, so the parent's environment is untouched.
    py-lmdb refuses to open a path whose environment it still counts as open."""
    try:
        shared.env.close()
    except lmdb.Error:  # pragma: no cover - nothing more to release
        logger.debug("closing inherited environment %s failed", shared.path, exc_info=True)


def acquire(path: str, readonly: bool, map_size: int, sync: bool = True) -> SharedEnv:
    """The environment for ``path`` in this process, opening it if needed.

    ``sync=False`` leaves flushing commits to disk to the OS (see ``SimhashIndex``); it applies
    when this call opens the environment.

    A read-only request shares a writable environment already open; a writable request while
    the path is open read-only in this process is refused (LMDB cannot reopen it).
    """
    key = os.path.realpath(path)
    with _lock:
        shared = _open.get(key)
        if shared is not None and shared.stale:
            _close_inherited(shared)
            shared = None
        if shared is not None:
            if shared.readonly and not readonly:
                raise ValueError(
                    f"index {path!r} is already open read-only in this process; close it"
                    " before opening it for writing"
                )
            shared.refs += 1
            return shared
        try:
            env = _open_env(key, readonly, map_size, sync)
        except lmdb.InvalidError as exc:  # a data file not LMDB's, or cut within its header
            raise NotLmdbFileError(str(exc)) from None
        try:
            _refuse_cut_short(env, key)
        except BaseException:
            env.close()
            raise
        shared = SharedEnv(env, key, readonly)
        _open[key] = shared
        logger.debug("opened LMDB environment %s (readonly=%s)", key, readonly)
        return shared


#: The smallest map tried where the address space is limited (``ulimit -v``).
SMALLEST_MAP = 1 << 28


def _open_env(key: str, readonly: bool, map_size: int, sync: bool) -> lmdb.Environment:
    """The LMDB environment of the directory ``key``, its map ``map_size`` bytes, or where
    the process may not reserve so much address space (``ulimit -v``, a 32-bit system), the
    largest power-of-two fraction of it that it may and that holds the data file twice over
    (at least :data:`SMALLEST_MAP`): the index can then grow to that size only, and says so
    in its log."""
    data = os.path.join(key, "data.mdb")
    held = os.path.getsize(data) if os.path.exists(data) else 0
    size = map_size
    while True:
        try:
            env = _lmdb_open(key, readonly, size, sync)
        except lmdb.MemoryError:
            size //= 2
            if size < max(SMALLEST_MAP, 2 * held):
                raise
            continue
        if size < map_size:
            logger.warning(
                "index %s: the address space this process may use is limited (ulimit -v): "
                "its map is %d MiB, not %d, and the index can grow to that size only",
                key, size >> 20, map_size >> 20,
            )  # fmt: skip
        return env


def _lmdb_open(key: str, readonly: bool, map_size: int, sync: bool) -> lmdb.Environment:
    return lmdb.open(
        os.fsencode(key),  # (a str is encoded strictly: a file name not UTF-8 would fail)
        map_size=map_size,
        max_dbs=MAX_DBS,
        readonly=readonly,
        lock=True,
        subdir=True,
        create=not readonly,
        max_readers=512,
        readahead=False,
        sync=sync,
    )


#: LMDB's meta page (``MDB_meta`` after the 16-byte page header): magic, version, address,
#: map size, then the free and the main database (``MDB_db``: its root page last), then the
#: last page and the transaction id.
_META = struct.Struct("<IIQQ" + "IHHQQQQQ" * 2 + "QQ")
_MAGIC, _NO_PAGE = 0xBEEFC0DE, (1 << 64) - 1


def _refuse_cut_short(env: lmdb.Environment, path: str) -> None:
    """Refuse a data file cut short (a copy stopped midway, a disk that filled while it was
    written): LMDB would read the missing pages through its memory map, and the process would
    die by SIGBUS at the first of them. The root pages of the last commit's two trees, read
    from its meta page with plain reads, must lie within the file (they always do: a
    commit writes them; the file may end before its last page number, which can be a page
    freed in its own transaction and never written)."""
    page_size = env.stat()["psize"]
    data = os.path.join(path, "data.mdb")
    with open(data, "rb") as f:
        head = f.read(2 * page_size)
        size = os.fstat(f.fileno()).st_size
    metas = []
    for page in range(2):
        offset = page * page_size + 16
        if len(head) < offset + _META.size:
            continue
        fields = _META.unpack_from(head, offset)
        if fields[0] == _MAGIC:
            metas.append((fields[-1], fields[11], fields[19]))  # txn id, the two roots
    if not metas:
        return  # LMDB opened it: a layout this reads otherwise, left to LMDB
    _, *roots = max(metas)
    pages = size // page_size
    if any(root != _NO_PAGE and root >= pages for root in roots):
        raise DamagedIndexError(
            f"index damaged: its data file is cut short ({size} bytes: the last commit's "
            f"pages {', '.join(str(r) for r in roots if r != _NO_PAGE)} are past its end)"
        )


#: The files of an LMDB environment in its directory.
FILES = ("data.mdb", "lock.mdb")


def remove_environment(path: str) -> None:
    """Remove the environment's files from the directory ``path`` (a reset of one LMDB
    cannot open: cut short, or not LMDB's), leaving the directory."""
    for name in FILES:
        with contextlib.suppress(FileNotFoundError):
            os.remove(os.path.join(path, name))


def release(shared: SharedEnv) -> None:
    """Drop one reference; the last one closes the environment (not in a forked child)."""
    with _lock:
        if shared.stale:
            return
        shared.refs -= 1
        if shared.refs > 0:
            return
        if _open.get(shared.path) is shared:
            del _open[shared.path]
        shared.env.close()
        logger.debug("closed LMDB environment %s", shared.path)


class LmdbTxn:
    """A :class:`~.storage.Txn` over an LMDB transaction; spaces are database handles."""

    __slots__ = ("get", "raw")

    def __init__(self, raw: lmdb.Transaction) -> None:
        self.raw = raw
        #: ``get(key, db=space)``: the transaction's own method, the probes' hot path.
        self.get: Callable[..., bytes | None] = raw.get

    def put(self, space: Any, key: bytes, value: bytes) -> None:
        self.raw.put(key, value, db=space, dupdata=True)

    def delete(self, space: Any, key: bytes, value: bytes | None = None) -> None:
        self.raw.delete(key, b"" if value is None else value, db=space)

    def pop(self, space: Any, key: bytes) -> bytes | None:
        return self.raw.pop(key, db=space)

    def values(self, space: Any, key: bytes) -> Iterator[bytes]:
        cur = self.raw.cursor(space)
        if cur.set_key(key):
            yield from cur.iternext_dup()

    def scan(self, space: Any, start: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        cur = self.raw.cursor(space)
        if cur.first() if start is None else cur.set_range(start):
            yield from cur.iternext()

    def last(self, space: Any) -> tuple[bytes, bytes] | None:
        cur = self.raw.cursor(space)
        return cur.item() if cur.last() else None

    def count(self, space: Any) -> int:
        return int(self.raw.stat(space)["entries"])

    def put_many(
        self, space: Any, items: Iterable[tuple[bytes, Any]], *, append: bool = False
    ) -> int:
        with self.raw.cursor(space) as cur:
            return int(cur.putmulti(items, append=append)[1])

    def clear(self, space: Any) -> None:
        self.raw.drop(space, delete=False)


#: What a failed read or write of an LMDB index raises.
ERRORS: tuple[type[BaseException], ...] = (lmdb.Error,)


class _Read:
    """A read transaction for a ``with`` block (a class: a query opens one, and a generator
    context manager costs a query a tenth of its time)."""

    __slots__ = ("_env", "_txn")

    def __init__(self, env: lmdb.Environment) -> None:
        self._env = env

    def __enter__(self) -> LmdbTxn:
        self._txn = self._env.begin()
        return LmdbTxn(self._txn)

    def __exit__(self, *exc: object) -> None:
        self._txn.abort()


class LmdbStorage:
    """An index directory's LMDB environment, shared with the other indexes of this process
    on the same path (see :func:`acquire`)."""

    errors = ERRORS

    def __init__(
        self,
        path: str,
        *,
        readonly: bool = False,
        map_size: int = DEFAULT_MAP_SIZE,
        sync: bool = True,
    ) -> None:
        self.path = path
        self.readonly = readonly
        self._map_size = map_size
        self._sync = sync
        self._shared = acquire(path, readonly, map_size, sync)
        self._closed = False

    @property
    def env(self) -> lmdb.Environment:
        return self._shared.env

    @property
    def stale(self) -> bool:
        return self._shared.stale

    def reopen(self) -> LmdbStorage:
        logger.debug("reopening index %s after fork", self.path)
        return LmdbStorage(
            self.path, readonly=self.readonly, map_size=self._map_size, sync=self._sync
        )

    def space(self, name: bytes, *, multi: bool = False, create: bool = True) -> Any:
        flags = {"dupsort": True, "dupfixed": True} if multi else {}
        try:
            return self._shared.db(name, create=create, **flags)
        except lmdb.NotFoundError:
            raise MissingSpaceError(name) from None

    def space_names(self) -> list[bytes]:
        with self.env.begin() as txn:
            return [bytes(name) for name, _ in txn.cursor()]

    def read(self) -> _Read:
        return _Read(self.env)

    def _no_batch_here(self) -> None:
        """Refuse a write transaction in a thread where another index object on this path
        holds a batch open: LMDB would refuse it too (one write transaction a thread), in
        words that do not say what to do."""
        if threading.get_ident() in self._shared.batches:
            raise BatchInThreadError(
                f"index {self.path!r}: another index object on this path has a batch of writes "
                "open in this thread; write through that object, or end its batch() first"
            )

    @contextmanager
    def write(self, parent: LmdbTxn | None = None) -> Iterator[LmdbTxn]:
        if parent is None:
            self._no_batch_here()
        raw = None if parent is None else parent.raw
        with self.env.begin(write=True, parent=raw) as txn:
            yield LmdbTxn(txn)

    def begin(self) -> LmdbTxn:
        self._no_batch_here()
        txn = LmdbTxn(self.env.begin(write=True))
        self._shared.batches.add(threading.get_ident())
        return txn

    def commit(self, txn: LmdbTxn) -> None:
        self._shared.batches.discard(threading.get_ident())
        txn.raw.commit()

    def abort(self, txn: LmdbTxn) -> None:
        self._shared.batches.discard(threading.get_ident())
        txn.raw.abort()

    def drop(self, names: Iterable[bytes], empty: Iterable[Any]) -> None:
        shared = self._shared
        if shared.refs > 1:
            raise ValueError(f"cannot reset {self.path!r}: it is open elsewhere in this process")
        names = list(names)
        # Handles are opened before the write transaction: opening one takes a transaction.
        multi = {"dupsort": True, "dupfixed": True}
        deleted = [shared.db(name, **multi) for name in names]
        with self.env.begin(write=True) as txn:
            for handle in empty:
                txn.drop(handle, delete=False)
            for handle in deleted:
                txn.drop(handle, delete=True)
        for name in names:
            shared.dbs.pop(name, None)

    def usage(self) -> dict[str, int]:
        info = self.env.info()
        page = self.env.stat()["psize"]
        disk = os.stat(os.path.join(self.path, "data.mdb"))
        return {
            "bytes_on_disk": disk.st_blocks * 512,
            "file_size": disk.st_size,
            "map_size": info["map_size"],
            "map_used": (info["last_pgno"] + 1) * page,
        }

    def copy(self, dest: str) -> None:
        self.env.copy(os.fsencode(dest), compact=True)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        release(self._shared)
