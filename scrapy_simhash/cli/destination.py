"""The destination folder of ``compact``: new or empty, and left as it was if the copy does
not finish (an interrupted copy would otherwise look like a whole index of fewer entries).

The copy is written into a staging folder beside ``dest`` (``.NAME.partial-PID``, on the
same file system), renamed into place once whole: a copy killed where nothing can clean up
after it (SIGKILL, a crash) leaves that folder, never a partial index at ``dest``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

from .output import CliError


@contextlib.contextmanager
def new_directory(dest: str) -> Iterator[str]:
    """The folder to write a copy into, inside the block, renamed to ``dest`` (checked new
    or empty) when the block ends: whatever it wrote is removed when the block raises,
    interrupted or failed, and the error goes on (an OSError as a CliError naming ``dest``:
    it cannot be written there)."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise CliError(f"{dest} exists and is not an empty directory")
    parent, name = os.path.split(os.path.abspath(dest))
    staging = os.path.join(parent, f".{name}.partial-{os.getpid()}")
    try:
        if not os.path.lexists(parent):
            os.makedirs(parent)
        shutil.rmtree(staging, ignore_errors=True)  # a copy of this pid's, killed before
        os.mkdir(staging)
        yield staging
        if os.path.isdir(dest):  # checked empty above
            os.rmdir(dest)
        os.rename(staging, dest)
    except OSError as exc:
        _remove(staging)
        raise CliError(f"cannot write the copy to {dest}: {exc.strerror or exc}") from exc
    except BaseException:
        _remove(staging)
        raise


def _remove(staging: str) -> None:
    """Remove a copy that did not finish."""
    with contextlib.suppress(OSError):
        shutil.rmtree(staging)
