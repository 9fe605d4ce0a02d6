"""Opening an index for the ``scrapy-simhash`` command, with LMDB's errors reworded."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager

import lmdb

from ..index import DamagedIndexError, IndexMismatchError, SimhashIndex
from .output import CliError
from .redis_target import RedisTarget, open_redis


def _not_an_index(path: str, why: str = "") -> CliError:
    return CliError(f"{path} is not a scrapy-simhash index{why}")


def reword(path: str, exc: BaseException, *, write: bool = False) -> CliError:
    """The one-line message for an error raised while opening or reading ``path`` (or
    writing it, when ``write``: a full disk, an I/O error on commit)."""
    if isinstance(exc, IndexMismatchError):
        return CliError(str(exc))
    if isinstance(exc, lmdb.InvalidError):  # (NotLmdbFileError is damage too)
        return _not_an_index(path, " (its data.mdb is not an LMDB file)")
    if isinstance(exc, DamagedIndexError):
        return CliError(f"{path}: {exc}; 'scrapy-simhash verify {path}' checks it whole")
    if isinstance(exc, FileNotFoundError):
        return CliError(f"no index at {path}")
    if isinstance(exc, PermissionError) or getattr(exc, "errno", None) == errno.EACCES:
        return CliError(f"cannot open {path}: permission denied")
    if isinstance(exc, lmdb.VersionMismatchError):
        return CliError(f"{path} was written by another version of LMDB")
    if isinstance(exc, lmdb.CorruptedError | lmdb.PageNotFoundError):
        return CliError(f"{path} is damaged (LMDB: {lmdb_reason(exc)})")
    if isinstance(exc, lmdb.ReadonlyError):
        return _not_an_index(path, " (no index databases in it)")
    if isinstance(exc, lmdb.Error):
        return CliError(f"cannot {'write' if write else 'read'} {path}: {lmdb_reason(exc)}")
    if isinstance(exc, ValueError) and ("not an index" in str(exc) or "holds no index" in str(exc)):
        return _not_an_index(path, " (an LMDB environment without index metadata)")
    return CliError(str(exc))


def lmdb_reason(exc: BaseException) -> str:
    """LMDB's message without the path and function name it starts with."""
    return str(exc).rsplit(": ", 1)[-1]


def check_path(path: str, *, write: bool = False) -> None:
    """Fail with one line unless ``path`` looks like an index directory that this user may
    open (for writing, if ``write``)."""
    if not os.path.exists(path):
        raise CliError(f"no index at {path}")
    if os.path.isdir(path) and not os.access(path, os.R_OK | os.X_OK):
        raise CliError(f"cannot open {path}: permission denied (the folder cannot be read)")
    data = os.path.join(path, "data.mdb")
    if not os.path.isdir(path) or not os.path.isfile(data):
        raise _not_an_index(path, _spiders_hint(path))
    if os.path.getsize(data) == 0:
        raise _not_an_index(path, " (its data.mdb is empty)")
    if not os.access(data, os.R_OK | (os.W_OK if write else 0)):
        what = "written" if write else "read"
        raise CliError(f"cannot open {path}: permission denied (its data.mdb cannot be {what})")
    lock = os.path.join(path, "lock.mdb")
    lockable = (
        os.access(lock, os.R_OK | os.W_OK) if os.path.exists(lock) else os.access(path, os.W_OK)
    )
    if not lockable and not _read_only_filesystem(path):
        # (on a read-only file system LMDB reads without its lock: no writer can be there)
        raise CliError(
            f"cannot open {path}: permission denied: every reader of an index writes its "
            f"lock.mdb (LMDB's table of readers), which this user cannot; run as the "
            f"index's owner, or read a copy of the folder"
        )


def _read_only_filesystem(path: str) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def spider_indexes(path: str) -> list[str]:
    """The names of the subfolders of ``path`` that hold an index, sorted: ``path`` is then a
    SIMHASH_DIR, one index per spider."""
    try:
        with os.scandir(path) as entries:
            return sorted(
                e.name
                for e in entries
                if e.is_dir() and os.path.isfile(os.path.join(e.path, "data.mdb"))
            )
    except OSError:  # not a directory, or unreadable: no hint to give
        return []


def _spiders_hint(path: str) -> str:
    """Where ``path`` is a SIMHASH_DIR, the index folders to give instead: the parent folder
    is what a user sees after a crawl, and the easiest mistake to make."""
    names = spider_indexes(path)
    if not names:
        return ""
    first = os.path.join(path, names[0])
    if len(names) == 1:
        return f": it holds the index of spider {names[0]}: give {first}"
    listed = ", ".join(names)
    return f": it holds the indexes of spiders {listed}: give one of them, such as {first}"


@contextmanager
def open_index(path: str, *, write: bool = False) -> Iterator[SimhashIndex]:
    """The index at ``path``, read-only unless ``write``; it must exist either way. ``path``
    may name an index on a Redis server (see :mod:`.redis_target`)."""
    if isinstance(path, RedisTarget):
        with open_redis(path, write=write) as remote:
            yield remote  # type: ignore[misc]
        return
    check_path(path, write=write)
    try:
        index = SimhashIndex(path, readonly=not write, create=False)
    except (OSError, ValueError, lmdb.Error) as exc:
        raise reword(path, exc) from exc
    try:
        yield index
    except (lmdb.Error, DamagedIndexError) as exc:
        raise reword(path, exc, write=write) from exc
    finally:
        index.close()
