"""One LMDB environment per index directory and process, shared and reference-counted.

LMDB forbids opening one path twice in a process, and an environment must not be used after
``fork``: the registry hands out the environment already open for a path, and a forked child
that opens a path again first closes its inherited copy (never using it).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import lmdb

logger = logging.getLogger(__name__)

#: Sparse map reserved at open and never grown (growing it while other processes hold the
#: environment has known bugs): 1 TiB on 64-bit systems. Only used pages take disk space.
DEFAULT_MAP_SIZE = (1 << 40) if sys.maxsize > 2**32 else (1 << 30)
#: Named databases an environment can hold (tables plus the index's own databases).
MAX_DBS = 80


@dataclass(eq=False)
class SharedEnv:
    """An open environment, the process that opened it and how many indexes use it."""

    env: lmdb.Environment
    path: str
    readonly: bool
    pid: int = field(default_factory=os.getpid)
    refs: int = 1
    dbs: dict[bytes, Any] = field(default_factory=dict)

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
        env = lmdb.open(
            key,
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
        shared = SharedEnv(env, key, readonly)
        _open[key] = shared
        logger.debug("opened LMDB environment %s (readonly=%s)", key, readonly)
        return shared


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
