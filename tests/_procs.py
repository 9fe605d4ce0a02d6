"""Finding worker processes through /proc (Linux), for the tests of worker processes."""

from __future__ import annotations

import os
from pathlib import Path


def _stat(pid: int | str) -> tuple[str, int] | None:
    """(state, parent pid) of a process, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return fields[0], int(fields[1])


def worker_pids(parent: int | None = None) -> list[int]:
    """Live worker processes of ``parent`` (default: this process)."""
    parent = os.getpid() if parent is None else parent
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = _stat(entry.name)
        if stat is None or stat[1] != parent or stat[0] == "Z":
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"scrapy_simhash.crawl.workers" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped does not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"
