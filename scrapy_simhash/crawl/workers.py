"""Worker processes for the CPU work on pages (``SIMHASH_WORKERS``), off Scrapy's reactor.

Each worker is a fresh interpreter (``python -m scrapy_simhash.crawl.worker``, :mod:`.worker`,
never a fork of the crawl, and never a re-import of the crawl's ``__main__``) that loads
trafilatura and the Chinese dictionary once, then extracts and fingerprints one page at a time.
In the crawl process, one thread per worker takes jobs from a shared queue, sends each to its
worker over a socket pair and waits for the answer with the page timeout; the answer goes back
to the reactor thread, which fires the job's Deferred. Jobs finish in whatever order their
workers do.

A worker that dies (killed, or crashed by a page) is replaced and its page tried once more on
the new one; a page that dies twice is answered ``"worker_died"``. A worker that takes longer
than the timeout on a page is killed and replaced, and the page answered ``"timeout"``. If
workers cannot be started at all, the pool is marked broken and answers :data:`BROKEN`, and
the caller does the work itself.

Backpressure: at most ``queue_size`` jobs are submitted and unfinished at once; further
:meth:`WorkerPool.submit` calls wait (their Deferreds fire later) instead of piling up pages.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import subprocess
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from twisted.internet.defer import Deferred, DeferredSemaphore

from .pages import PageOptions, Result, describe

logger = logging.getLogger(__name__)

#: The module a worker process runs (it loads no Twisted and no Scrapy).
WORKER_MODULE = "scrapy_simhash.crawl.worker"
#: Answer of a broken pool (workers cannot start): do the work in the crawl process.
BROKEN = "broken"
#: How long a new worker may take to import its libraries and load the dictionary.
START_TIMEOUT = 120.0
#: Consecutive failed starts after which the pool gives up.
MAX_FAILED_STARTS = 3
#: The longest timeout a page may be given, in seconds (a day: longer is no timeout, and
#: the socket's wait takes at most about 24 days).
MAX_TIMEOUT = 86_400.0


class WorkerError(Exception):
    """An unexpected exception in a worker, with the worker's traceback as its message."""


@dataclass
class _Job:
    kind: str  # a PageWork method: "html" or "text"
    args: tuple[Any, ...]
    deferred: Deferred[Result] = field(default_factory=Deferred)


class WorkerPool:
    """``size`` worker processes sharing one job queue. Use from the reactor thread."""

    def __init__(
        self,
        size: int,
        options: PageOptions,
        *,
        timeout: float = 30.0,
        queue_size: int | None = None,
    ) -> None:
        from twisted.internet import reactor

        if size < 1:
            raise ValueError(f"a worker pool needs at least 1 worker, got {size}")
        if not 0 < timeout <= MAX_TIMEOUT:
            raise ValueError(
                f"a page's timeout must be > 0 and <= {MAX_TIMEOUT:g} s, got {timeout}"
            )
        self.size = size
        self.options = options
        self.timeout = timeout
        self.queue_size = queue_size or 2 * size
        self.reactor: Any = reactor
        #: Why the pool stopped working (then every job is answered BROKEN), or None.
        self.broken: str | None = None
        #: Workers started to replace one that died or hung.
        self.restarts = 0
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._slots = DeferredSemaphore(self.queue_size)
        self._failed_starts = 0
        self._lost = 0  # workers killed after dying or hanging
        self._lock = threading.Lock()
        self._threads = [
            threading.Thread(target=self._serve, name=f"simhash-worker-{n}", daemon=True)
            for n in range(size)
        ]
        self._closing = False

    def start(self) -> None:
        """Start the threads that hand pages to the workers: each starts its worker process
        with its first page (the process then loads its libraries)."""
        for thread in self._threads:
            thread.start()

    def submit(self, kind: str, *args: Any) -> Deferred[Result]:
        """The result of ``PageWork.<kind>(*args)`` in a worker: a fingerprint, a skip reason,
        or :data:`BROKEN`. Waits for a free place when ``queue_size`` jobs are unfinished."""
        if self._closing:
            raise RuntimeError("the worker pool is closed")
        return self._slots.run(self._enqueue, _Job(kind, args))

    def _enqueue(self, job: _Job) -> Deferred[Result]:
        self._jobs.put(job)
        return job.deferred

    def close(self, timeout: float = 10.0) -> None:
        """Stop the workers once the queued jobs are done (call when every submitted job has
        answered); waits up to ``timeout`` seconds for them to exit, then kills what is left."""
        if self._closing:
            return
        self._closing = True
        for _ in self._threads:
            self._jobs.put(None)
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            if thread.is_alive():
                thread.join(max(0.0, deadline - time.monotonic()))

    # -- in each worker's thread ------------------------------------------------------------

    def _serve(self) -> None:
        worker: _Worker | None = None
        try:
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                try:
                    result, worker = self._run(job, worker)
                except Exception:  # a fault of this thread's own: the job is still answered
                    result = WorkerError(traceback.format_exc())
                self.reactor.callFromThread(_fire, job.deferred, result)
        finally:
            if worker is not None:
                worker.stop()

    def _run(self, job: _Job, worker: _Worker | None) -> tuple[Any, _Worker | None]:
        for attempt in (1, 2):
            if self.broken:
                return BROKEN, worker
            while worker is None and not self.broken:
                worker = self._start()
            if worker is None:
                return BROKEN, None
            try:
                answer = worker.ask((job.kind, job.args), self.timeout)
            except TimeoutError:
                logger.warning(
                    "Simhash worker %d took more than %g s on %s: killed, page skipped",
                    worker.pid,
                    self.timeout,
                    describe(job.kind, job.args),
                )
                worker.kill()
                self._count_lost()
                return "timeout", None
            except (EOFError, OSError):
                code = worker.kill()
                self._count_lost()
                logger.warning(
                    "Simhash worker %d died (exit status %s) on %s%s",
                    worker.pid,
                    code,
                    describe(job.kind, job.args),
                    ": trying it on a new worker" if attempt == 1 else ": page skipped",
                )
                worker = None
                continue
            except Exception:  # a job that cannot be sent, a wait the socket refuses
                worker.kill()  # in a state unknown: replaced at the next job
                self._count_lost()
                return WorkerError(traceback.format_exc()), None
            if isinstance(answer, tuple):  # ("error", traceback): the work raised
                return WorkerError(answer[1]), worker
            return answer, worker
        return "worker_died", worker

    def _count_lost(self) -> None:
        with self._lock:
            self._lost += 1

    def _start(self) -> _Worker | None:
        with self._lock:
            if self.broken:
                return None
        try:
            worker = _Worker.spawn(self.options)
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            with self._lock:
                self._failed_starts += 1
                if self._failed_starts >= MAX_FAILED_STARTS and not self.broken:
                    self.broken = reason
                    logger.error(
                        "Simhash worker processes cannot start (%s); pages are processed in "
                        "the crawl process instead",
                        reason,
                    )
            return None
        with self._lock:
            self._failed_starts = 0
            if self._lost > self.restarts:  # this one replaces a worker that died or hung
                self.restarts += 1
        return worker


def _fire(d: Deferred[Any], result: Any) -> None:
    if isinstance(result, Exception):
        d.errback(result)
    else:
        d.callback(result)


def package_folder() -> str:
    """The folder that holds the ``scrapy_simhash`` package (put on a worker's PYTHONPATH, so
    that a crawl which imports the package from a checkout starts workers that find it)."""
    return str(Path(__file__).resolve().parents[2])


class _Worker:
    """One worker process and the crawl's end of its socket."""

    def __init__(self, process: subprocess.Popen[bytes], conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.pid = process.pid

    @classmethod
    def spawn(cls, options: PageOptions) -> _Worker:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (package_folder(), env.get("PYTHONPATH", "")) if p
        )
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                env=env,
                # a session of its own: a terminal's Ctrl-C, sent to the crawl's process group,
                # does not reach it while it imports its libraries (before main() can ignore
                # it: a traceback, and a worker lost); the crawl ends it
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        worker = cls(process, Connection(ours.detach()))
        try:
            worker.conn.send(options)
            hello = worker.ask(None, START_TIMEOUT, send=False)
        except (EOFError, OSError):
            raise RuntimeError(f"worker exited with status {worker.kill()} at start") from None
        except BaseException:
            worker.kill()
            raise
        if hello != ("ready", process.pid):
            worker.kill()
            raise RuntimeError(f"unexpected first message from a worker: {hello!r}")
        logger.debug("Simhash worker %d started", process.pid)
        return worker

    def ask(self, message: Any, timeout: float, send: bool = True) -> Any:
        """Send ``message`` and wait up to ``timeout`` seconds for the answer.

        Raises ``TimeoutError``, or ``EOFError``/``OSError`` when the process is gone."""
        if send:
            self.conn.send(message)
        if not self.conn.poll(timeout):
            raise TimeoutError(f"no answer within {timeout:.0f} s")
        return self.conn.recv()

    def kill(self) -> int | None:
        """Kill the process (if still running) and return its exit status."""
        if self.process.poll() is None:
            self.process.kill()
        try:
            code = self.process.wait(10)
        except subprocess.TimeoutExpired:  # pragma: no cover - a process that ignores SIGKILL
            code = None
        self.conn.close()
        return code

    def stop(self) -> None:
        """Ask the process to exit, and kill it if it does not within a few seconds."""
        try:
            self.conn.send(None)
            self.process.wait(5)
        except (OSError, EOFError, subprocess.TimeoutExpired):
            pass
        self.kill()
