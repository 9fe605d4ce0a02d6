"""``python -m scrapy_simhash`` and the ``scrapy-simhash`` script: the command line.

:func:`run` loads the command line's modules (numpy, LMDB, the text code: half a second)
itself, so that a Ctrl-C meanwhile ends the command as one during it does, in one line.
"""

import sys

#: The exit status of a command interrupted (as :mod:`.cli.main` gives it).
_INTERRUPTED = 130


def run() -> int:
    """Run the command of ``sys.argv``; its exit status."""
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.stderr.write("scrapy-simhash: error: interrupted\n")
        return _INTERRUPTED
    return main()


if __name__ == "__main__":
    raise SystemExit(run())
