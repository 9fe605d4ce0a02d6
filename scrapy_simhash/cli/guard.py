"""A command run in a forked child, so that no damage to an index can kill the command.

Reading a damaged LMDB file can kill the reader by a signal no handler recovers from: a page
LMDB's own checks find inconsistent aborts the process (SIGABRT), a page it maps past a file
cut short faults (SIGBUS). The check made at open finds what it cheaply can (a file cut
short, its first and last records); a scan of the whole index (``info``, ``dump``,
``compact``, ``remove --older-than``) meets the rest. :func:`in_child` runs the command in a
child process that writes to the same standard streams, and says in one line, exit status 1,
how a child that died by such a signal died, as ``verify`` does (:mod:`.check`).

The parent passes a SIGTERM sent to it alone on to the child, which ends as the command
says (143); a terminal's Ctrl-C reaches the child itself, in the same process group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

#: The signals by which reading a damaged file kills the reader.
CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL, signal.SIGFPE})


def in_child(command: Callable[[], int], prog: str) -> int:
    """``command()``'s exit status, run in a forked child where the system forks (else run
    here)."""
    if not hasattr(os, "fork"):
        return command()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    pid = os.fork()
    if pid == 0:  # the child: the command, and its status, whatever it raises
        code = 1
        try:
            code = command()
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    if stream is not None:
                        stream.flush()
            os._exit(code)

    def forward(signum: int, frame: Any) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    before = {
        signal.SIGTERM: signal.signal(signal.SIGTERM, forward),
        signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),  # the child's to handle
    }
    try:
        _, status = os.waitpid(pid, 0)
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    died = os.WTERMSIG(status)
    name = signal.Signals(died).name
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
