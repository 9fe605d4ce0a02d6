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
        if b"scrapy_simhash.crawl.worker" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped does not)."""
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


#: A worker process that meets a fault on pages whose URL ends with ``MARK``: it hangs, or
#: SIGKILLs itself (and, if asked, its sibling workers first) the first ``KILLS`` times such a
#: page comes, counting each death in ``DEATHS``. Every other page is worked on as usual.
FAULTY_WORKER = """#!{python}
import os, signal, sys, time
from pathlib import Path

sys.path.insert(0, {tests_parent!r})
from scrapy_simhash.crawl import pages, worker
from tests._procs import worker_pids

MARK, DEATHS, KILLS, SIBLINGS, HANG = {mark!r}, Path({deaths!r}), {kills!r}, {siblings!r}, {hang!r}
work = pages.PageWork.html


def html(self, html, url, encoding=None):
    if url and url.endswith(MARK):
        if HANG:
            time.sleep(3600)
        died = len(DEATHS.read_text()) if DEATHS.exists() else 0
        if died < KILLS:
            with DEATHS.open("a") as f:
                f.write("x")
            if SIBLINGS:
                for pid in worker_pids(os.getppid()):
                    if pid != os.getpid():
                        os.kill(pid, signal.SIGKILL)
            os.kill(os.getpid(), signal.SIGKILL)
    return work(self, html, url, encoding)


pages.PageWork.html = html
worker.main(int(sys.argv[-1]))
"""


def faulty_python(
    folder: Path, mark: str, kills: int = 0, siblings: bool = False, hang: bool = False
) -> tuple[Path, Path]:
    """Write a :data:`FAULTY_WORKER` launcher in ``folder``, to be set as ``sys.executable``
    (which worker processes are started with); returns it and its file of deaths."""
    import stat
    import sys

    launcher, deaths = folder / "faulty-python", folder / "deaths"
    launcher.write_text(
        FAULTY_WORKER.format(
            python=sys.executable,
            tests_parent=str(Path(__file__).parents[1]),
            mark=mark,
            deaths=str(deaths),
            kills=kills,
            siblings=siblings,
            hang=hang,
        )
    )
    launcher.chmod(launcher.stat().st_mode | stat.S_IXUSR)
    return launcher, deaths
