"""``python -m scrapy_simhash`` and the ``scrapy-simhash`` script: the command line.

:func:`run` loads the command line's modules (numpy, LMDB, the text code: half a second)
itself, so that a Ctrl-C meanwhile ends the command as one during it does, in one line; the
command runs in a forked child (:mod:`.cli.guard`).
"""

import sys

#: The exit status of a command interrupted (as :mod:`.cli.main` gives it).
_INTERRUPTED = 130


def run() -> int:
    """Run the command of ``sys.argv``; its exit status."""
    try:
        from .cli import main
        from .cli.guard import in_child
    except KeyboardInterrupt:
        sys.stderr.write("scrapy-simhash: error: interrupted\n")
        return _INTERRUPTED
    return in_child(main, "scrapy-simhash")  # a damaged index never kills the command


if __name__ == "__main__":
    raise SystemExit(run())
