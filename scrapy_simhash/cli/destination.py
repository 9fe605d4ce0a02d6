"""The destination folder of ``compact``: new or empty, and left as it was if the copy does
not finish (an interrupted copy would otherwise look like a whole index of fewer entries).

The copy is written into a staging folder inside ``dest`` (``.partial-PID``), and its files
moved up into ``dest`` once whole: a copy killed where nothing can clean up after it
(SIGKILL, a crash) leaves that folder, never an index at ``dest``; the next compact into
``dest`` takes it for the leftover it is. ``dest`` itself is never replaced: a symbolic link
to a folder, a mount point, its owner and mode stay as they were.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

from .output import CliError

#: The staging folder's name in ``dest``, before the process id.
STAGING = ".partial-"


@contextlib.contextmanager
def new_directory(dest: str) -> Iterator[str]:
    """The folder to write a copy into, inside the block, its files moved into ``dest``
    (checked new or empty, but for a killed copy's leftovers) when the block ends: whatever
    it wrote is removed when the block raises, interrupted or failed, and the error goes on
    (an OSError as a CliError naming ``dest``: it cannot be written there)."""
    leftovers = []
    if os.path.exists(dest):
        if not os.path.isdir(dest):
            raise CliError(f"{dest} exists and is not an empty directory")
        names = os.listdir(dest)
        leftovers = [name for name in names if name.startswith(STAGING)]
        if len(leftovers) < len(names):
            raise CliError(f"{dest} exists and is not an empty directory")
    existed = os.path.isdir(dest)
    staging = os.path.join(dest, f"{STAGING}{os.getpid()}")
    try:
        os.makedirs(staging)  # dest too, when new
        for name in leftovers:
            shutil.rmtree(os.path.join(dest, name), ignore_errors=True)
        yield staging
        for name in os.listdir(staging):
            os.rename(os.path.join(staging, name), os.path.join(dest, name))
        os.rmdir(staging)
    except OSError as exc:
        _remove(dest, staging, existed)
        raise CliError(f"cannot write the copy to {dest}: {exc.strerror or exc}") from exc
    except BaseException:
        _remove(dest, staging, existed)
        raise


def _remove(dest: str, staging: str, existed: bool) -> None:
    """Remove a copy that did not finish (and ``dest``, unless it ``existed``)."""
    with contextlib.suppress(OSError):
        shutil.rmtree(dest if not existed else staging)
