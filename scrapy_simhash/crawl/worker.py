"""A worker process (``python -m scrapy_simhash.crawl.worker FD``), started by
:class:`.workers.WorkerPool`: it loads trafilatura and the Chinese dictionary once, then
answers the crawl's jobs (:class:`.pages.PageWork`) over the socket ``FD``, one page at a time.
It loads no Scrapy and no Twisted (``tests/test_project.py``)."""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
import traceback
import warnings
from multiprocessing.connection import Connection
from typing import Any

from .pages import PageWork


def _watch_parent(parent: int) -> None:
    """Exit when the crawl process is gone, even while a page hangs the main thread."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(0)


def main(fd: int) -> None:
    """Worker process: answer jobs from the crawl process over the socket ``fd``."""
    # Ctrl-C, or a SIGTERM sent to every process of the crawl (systemd stopping its unit,
    # ``kill -- -PGID``): the crawl shuts down gracefully and still needs its workers until it
    # closes them. It ends a worker by SIGKILL, and a worker whose crawl is gone exits.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    # Nothing of the libraries' logging or warnings reaches the crawl's console from here.
    logging.getLogger().addHandler(logging.NullHandler())
    warnings.simplefilter("ignore")
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    conn = Connection(fd)
    try:
        _serve_crawl(conn)
    except (EOFError, OSError):  # the crawl is gone (killed, or stopped by force): so are we
        return


def _serve_crawl(conn: Connection) -> None:
    options = conn.recv()
    work = PageWork(options)
    work.warm_up()
    conn.send(("ready", os.getpid()))
    while True:
        message = conn.recv()
        if message is None:
            return
        kind, args = message
        try:
            answer: Any = getattr(work, kind)(*args)
        except Exception:
            answer = ("error", traceback.format_exc())
        conn.send(answer)


if __name__ == "__main__":
    main(int(sys.argv[1]))
