"""A command run in a forked child, so that no damage to an index can kill the command.

Reading a damaged LMDB file can kill the reader by a signal no handler recovers from: a page
LMDB's own checks find inconsistent aborts the process (SIGABRT), a page it maps past a file
cut short faults (SIGBUS). The check made at open finds what it cheaply can (a file cut
short, its first and last records); a scan of the whole index (``info``, ``dump``,
``compact``, ``remove --older-than``) meets the rest. :func:`in_child` runs the command in a
child process that writes to the same standard streams, and says in one line, exit status 1,
how a child that died by such a signal died, as ``verify`` does (:mod:`.check`).

Signals: the parent passes SIGINT and SIGTERM on to the child, which takes the first of each
(a terminal's Ctrl-C reaches both, in one process group: the copy the parent passes on is
ignored), and ends as the command says (130, 143). A child whose parent dies (SIGKILL, a
caller's timeout) is sent SIGTERM (Linux), so that no command goes on writing unseen.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from typing import Any

#: The signals by which reading a damaged file kills the reader.
CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})
#: The signals the parent passes on.
_PASSED = (signal.SIGINT, signal.SIGTERM)
#: Linux's prctl option that signals a process when its parent dies.
_PR_SET_PDEATHSIG = 1


def in_child(command: Callable[[], int], prog: str) -> int:
    """``command()``'s exit status, run in a forked child where the system forks and this is
    the main thread (signals are handled there only); else run here."""
    if not hasattr(os, "fork") or threading.current_thread() is not threading.main_thread():
        return command()
    _flush()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # never returns: the child must not go on as the caller
        code = 1
        try:
            code = _child(command, prog, parent)
        finally:
            os._exit(code)

    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    before = {signum: signal.signal(signum, forward) for signum in _PASSED}
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    died = os.WTERMSIG(status)
    try:
        name = signal.Signals(died).name
    except ValueError:  # a real-time signal
        name = f"signal {died}"
    if died in CRASHES:
        said = (
            f"reading the index crashed the LMDB library ({name}): it is damaged; "
            "'scrapy-simhash verify INDEX' checks it whole"
        )
    else:  # killed from outside: the OOM killer, a kill
        said = f"the command was killed by {name}"
    if sys.stderr is not None:
        sys.stderr.write(f"{prog}: error: {said}\n")
        sys.stderr.flush()
    return 1


def _child(command: Callable[[], int], prog: str, parent: int) -> int:
    """The child's side: the command's exit status, whatever escapes it said in one line."""
    _die_with(parent)
    for signum in _PASSED:
        if signal.getsignal(signum) is signal.default_int_handler or signum == signal.SIGTERM:
            signal.signal(signum, _first_only(signum, signal.getsignal(signum)))
    code = 1
    try:
        code = command()
    except KeyboardInterrupt:  # before the command's own handling began
        _say(prog, "interrupted")
        code = 130
    except BaseException:
        traceback.print_exc()
        code = 1
    finally:
        _flush()
    return code


def _first_only(signum: int, handler: Any) -> Callable[[int, Any], None]:
    """A handler that takes ``signum`` once, as ``handler`` would, and ignores it after: the
    same interrupt can come twice (from the terminal, and passed on by the parent)."""

    def once(received: int, frame: Any) -> None:
        signal.signal(signum, signal.SIG_IGN)
        if callable(handler):
            handler(received, frame)
        elif handler == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    return once


def _die_with(parent: int) -> None:
    """Ask Linux to send this process SIGTERM when its parent dies (nothing elsewhere)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError, TypeError):
        libc = ctypes.CDLL(None, use_errno=True)  # the process's own symbols: libc's prctl
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request
        os.kill(os.getpid(), signal.SIGTERM)


def _say(prog: str, what: str) -> None:
    if sys.stderr is not None:
        with contextlib.suppress(Exception):
            sys.stderr.write(f"{prog}: error: {what}\n")


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.flush()
