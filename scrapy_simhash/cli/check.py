"""``verify``'s scan, run in a child process so that damage cannot kill the command.

Walking a damaged LMDB file can make the library read outside the file's mapping (SIGBUS) or
fail an assertion (SIGABRT): in the process that reads, no handler can recover. The parent
(:func:`verify_in_child`) runs ``python -m scrapy_simhash.cli.check INDEX``, which prints one
JSON object, and reports a child killed by a signal, or one that could not decode what it
read, as damage.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import lmdb

from ..index import DamagedIndexError, SimhashIndex
from .open_index import reword
from .output import CliError


def _scan(path: str) -> dict[str, Any]:
    try:
        index = SimhashIndex(path, readonly=True, create=False)
    except lmdb.InvalidError as exc:  # no LMDB file: no index to check (reword says which)
        raise reword(path, exc) from exc
    except DamagedIndexError as exc:  # found by the check made at open
        return {"entries": None, "tables": None, "problems": [str(exc)]}
    except (OSError, ValueError, lmdb.Error) as exc:
        raise reword(path, exc) from exc
    with index:
        problems = index.verify()
        return {
            "entries": len(index),
            "tables": index.layout.tables,
            "drop_records": index.drop_count(),
            "problems": problems,
        }


#: The signals by which reading a damaged file kills the reader: a read outside the mapping,
#: a fault, an abort of the library's own checks.
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})


def verify_in_child(path: str) -> dict[str, Any]:
    """``{"entries", "tables", "problems"}`` for the index at ``path``, from a child process;
    a child that died or failed gives one problem saying how. Raises :class:`CliError` when
    ``path`` cannot be opened as an index (the child opens it: even the open can crash)."""
    # Started in the folder that holds the package: ``-m`` puts the child's working folder
    # first on its path, and a numpy.py or lmdb.py in the user's would be imported instead.
    child = subprocess.run(
        [sys.executable, "-m", __name__, os.path.abspath(path)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        if -child.returncode not in _CRASHES:  # killed from outside: the OOM killer, a kill
            raise CliError(f"verify's reader was killed by {name}: nothing was checked")
        why = f"reading it crashed the LMDB library ({name}): the file is damaged or truncated"
        return {"entries": None, "tables": None, "problems": [why]}
    try:
        result = json.loads(child.stdout)
    except ValueError:
        tail = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return {"entries": None, "tables": None, "problems": [f"cannot be read: {tail}"]}
    if "error" in result:
        raise CliError(result["error"])
    return result


def main(argv: list[str]) -> int:
    (path,) = argv
    try:
        result = _scan(path)
    except CliError as exc:
        result = {"error": str(exc)}
    except (ValueError, KeyError, UnicodeDecodeError) as exc:
        # What a damaged record decodes into (the open's own errors are the parent's).
        result = {"entries": None, "tables": None, "problems": [f"{type(exc).__name__}: {exc}"]}
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
