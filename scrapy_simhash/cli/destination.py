"""The destination folder of ``compact``: new or empty, and left as it was if the copy does
not finish (an interrupted copy would otherwise look like a whole index of fewer entries)."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator

from .output import CliError


@contextlib.contextmanager
def new_directory(dest: str) -> Iterator[None]:
    """A copy into ``dest`` (checked new or empty) inside the block: whatever it wrote is
    removed when the block raises, interrupted or failed, and the error goes on (an OSError
    as a CliError naming ``dest``: it cannot be written there)."""
    if os.path.exists(dest) and (not os.path.isdir(dest) or os.listdir(dest)):
        raise CliError(f"{dest} exists and is not an empty directory")
    existed = os.path.isdir(dest)
    try:
        yield
    except OSError as exc:
        _remove_copy(dest, existed)
        raise CliError(f"cannot write the copy to {dest}: {exc.strerror or exc}") from exc
    except BaseException:
        _remove_copy(dest, existed)
        raise


def _remove_copy(dest: str, existed: bool) -> None:
    """Remove what a copy wrote to ``dest`` (the folder itself, unless it ``existed``)."""
    with contextlib.suppress(OSError):
        if not existed:
            shutil.rmtree(dest)
        else:
            for name in os.listdir(dest):
                path = os.path.join(dest, name)
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.remove(path)
