"""``scrapy-simhash``: inspect and maintain a near-duplicate index.

Also run as ``python -m scrapy_simhash`` and, through Scrapy's ``scrapy.commands`` entry
point, as ``scrapy simhash``. Exit codes: 0 on success, 1 on an expected failure (one line
``scrapy-simhash: error: ...``, or ``scrapy simhash: error: ...``, on stderr), 2 on a usage
error, 130 interrupted and 143 terminated (SIGTERM; one line too).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from . import commands, report
from .output import CliError, CliUsage, Output, Terminated
from .redis_target import RedisTarget, resolve

__all__ = ["build_parser", "main"]

logger = logging.getLogger(__name__)

PROG = "scrapy-simhash"

Handler = Callable[[argparse.Namespace, Output], int]

#: The index of the README's example crawl, as seen from the repository root.
EXAMPLE_INDEX = "example_project/.scrapy/simhash/news"

_EPILOG = f"""\
fingerprints are 16 hex digits (0x optional) or decimal; dates are ISO 8601 UTC.
Inspection opens the index read-only: it works while a crawl writes to it.
INDEX is one spider's index folder, <SIMHASH_DIR>/<spider name>: by default
.scrapy/simhash/<spider name> in the Scrapy project (inside a project, `scrapy simhash`
also takes the spider's name).

examples, on the README's example crawl (from the repository root, after its quick start):
  .venv/bin/scrapy-simhash info {EXAMPLE_INDEX}
  .venv/bin/scrapy-simhash lookup {EXAMPLE_INDEX} \\
      --html example_project/site/wire/bike-lanes.html
  .venv/bin/scrapy-simhash clusters {EXAMPLE_INDEX} --json
"""

#: INDEX of ``scrapy simhash`` inside a project (whose own ``-h`` shows the command's
#: description, not this parser's epilog).
SPIDER_HELP = (
    "a spider of this project (its index, <SIMHASH_DIR>/<spider name>, as the crawl opens it)"
    " or an index folder; a folder of that name wins over a spider"
)


def _example(example: str, spiders: bool) -> str:
    """A subcommand's example; with spiders, on a spider's index, as a project's user would."""
    return example.replace("INDEX", "SPIDER", 1) if spiders else example


def _output_options() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group("output").add_mutually_exclusive_group()
    group.add_argument(
        "--json", dest="format", action="store_const", const="json", help="one JSON document"
    )
    group.add_argument(
        "--jsonl", dest="format", action="store_const", const="jsonl", help="JSON lines"
    )
    parent.set_defaults(format="table")
    return parent


def _k_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-k", type=int, metavar="N", help="largest distance in bits (default: the index's k)"
    )


def build_parser(prog: str = PROG, spiders: bool = False) -> argparse.ArgumentParser:
    """The parser; with ``spiders``, INDEX may also be a spider's name (``scrapy simhash``
    inside a project), and the help says so."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Inspect and maintain a scrapy-simhash near-duplicate index.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--debug", action="store_true", help="log debug messages; tracebacks on unexpected errors"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    out = [_output_options()]

    def add(
        name: str, handler: Handler, summary: str, example: str, index: bool = True
    ) -> argparse.ArgumentParser:
        cmd = sub.add_parser(
            name,
            parents=out,
            help=summary,
            description=summary,
            epilog=f"example:\n  {prog} {name} {_example(example, spiders)}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        cmd.set_defaults(handler=handler, subparser=cmd)
        if index:
            cmd.add_argument("--key", help="with INDEX a redis:// URL: the index's key")
        if index and spiders:
            cmd.add_argument("index", metavar="SPIDER|INDEX", help=SPIDER_HELP)
        elif index:
            cmd.add_argument("index", metavar="INDEX", help="index directory")
        return cmd

    add(
        "info",
        commands.cmd_info,
        "entries, layout, versions, disk and map use, age",
        "INDEX --json",
    )

    cmd = add(
        "lookup",
        commands.cmd_lookup,
        "stored entries near a fingerprint, nearest first",
        "INDEX --html page.html",
    )
    cmd.add_argument("fingerprint", metavar="FINGERPRINT", nargs="?", help="a fingerprint")
    cmd.set_defaults(late="fingerprint")
    cmd.add_argument("--url", help="the fingerprint stored or dropped for this URL")
    cmd.add_argument("--html", metavar="FILE", help="the fingerprint of an HTML page's text")
    cmd.add_argument("--text", metavar="FILE", help="the fingerprint of a UTF-8 text file")
    _k_option(cmd)

    cmd = add(
        "explain",
        commands.cmd_explain,
        "why a URL was kept or dropped: its near pages, or what it duplicates",
        "INDEX https://a.b/c",
    )
    cmd.add_argument("url", metavar="URL", help="a stored or dropped URL")
    _k_option(cmd)

    add(
        "dump",
        commands.cmd_dump,
        "every entry: URL, fingerprint, first seen (streamed)",
        "INDEX --jsonl > all.jsonl",
    )

    cmd = add(
        "clusters",
        commands.cmd_clusters,
        "the near-duplicate groups: kept pages and the copies dropped against them",
        "INDEX -k 2 --json",
    )
    _k_option(cmd)

    cmd = add(
        "fingerprint",
        commands.cmd_fingerprint,
        "the fingerprint of files, no index",
        "--html *.html",
        index=False,
    )
    cmd.add_argument("files", metavar="FILE", nargs="+", help="text files (UTF-8) or pages")
    cmd.set_defaults(late="files")
    cmd.add_argument("--html", action="store_true", help="files are HTML: extract the main text")

    cmd = add(
        "remove",
        commands.cmd_remove,
        "remove entries by URL or age",
        "INDEX --older-than 30 --dry-run",
    )
    cmd.add_argument("--url", action="append", help="a stored or dropped URL (may be repeated)")
    cmd.add_argument(
        "--older-than",
        type=float,
        metavar="DAYS",
        help="entries first seen, and drops recorded, more than DAYS ago",
    )
    cmd.add_argument("--dry-run", action="store_true", help="show the count, remove nothing")

    cmd = add(
        "report",
        report.cmd_report,
        "one HTML page on the drops: sites, distances, groups, a URL search",
        "INDEX -o report.html",
    )
    cmd.add_argument(
        "-o", "--output", required=True, metavar="FILE", help="the page to write (- for stdout)"
    )
    _k_option(cmd)

    add("verify", commands.cmd_verify, "check tables against documents (exit 1 on damage)", "INDEX")

    cmd = add(
        "compact",
        commands.cmd_compact,
        "write a compacted copy of the index",
        "INDEX INDEX.compact",
    )
    cmd.add_argument("dest", metavar="DEST", help="a new or empty directory")
    return parser


def main(
    argv: Sequence[str] | None = None,
    prog: str = PROG,
    locate: Callable[[str], str] | None = None,
) -> int:
    """Run one command; returns the exit code (never raises, prints no traceback).

    ``locate`` turns the INDEX argument into the index folder to open (``scrapy simhash``
    inside a project: a spider's name becomes its index; it raises :class:`CliError` with a
    message for the user). Errors start with ``prog``, the program the user ran.
    """
    if sys.stdout is None:  # started with its standard output closed (`>&-`)
        if sys.stderr is not None:
            sys.stderr.write(f"{prog}: error: the standard output is closed\n")
        return 1
    parser = build_parser(prog, spiders=locate is not None)
    try:
        args, extra = parser.parse_known_args(argv)
        _place_late_positionals(args, extra)
    except SystemExit as exc:  # --help (0) or a usage error (2), already printed
        return exc.code if isinstance(exc.code, int) else 2
    # Libraries' log lines (trafilatura warns about pages it discards) only with --debug;
    # a no-op when the host (pytest, a Scrapy command) already configured logging.
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.CRITICAL,
        format="%(name)s %(levelname)s: %(message)s",
    )
    out = Output(args.format)
    with _terminated_on_sigterm():
        return _run(args, out, prog, locate)


def _run(
    args: argparse.Namespace, out: Output, prog: str, locate: Callable[[str], str] | None
) -> int:
    try:
        if getattr(args, "index", None) is not None:
            resolve(args)  # a Redis URL and --key
        index = getattr(args, "index", None)
        if locate is not None and index is not None and not isinstance(index, RedisTarget):
            args.index = locate(index)
        code: int = args.handler(args, out)
        # a pipe's reader gone shows here for a short output; a full disk is the output's
        # CliError, as for every write through it
        out.stream.flush()
    except CliUsage as exc:
        sub = args.subparser
        sub.print_usage(sys.stderr)
        sys.stderr.write(f"{sub.prog}: error: {exc}\n")
        return 2
    except CliError as exc:
        _fail(prog, str(exc))
        return 1
    except BrokenPipeError:  # `scrapy-simhash dump INDEX | head`: the reader had enough
        _silence_stdout()
        return 0
    except KeyboardInterrupt as exc:
        _fail(prog, _said("interrupted", exc), flush=False)
        return 130
    except Terminated as exc:
        _fail(prog, _said("terminated", exc), flush=False)
        return 143
    except Exception as exc:
        if args.debug:
            logger.exception("unexpected error")
        hint = "" if args.debug else " (run with --debug for the traceback)"
        _fail(prog, f"unexpected {type(exc).__name__}: {exc}{hint}")
        return 1
    return code


def _said(what: str, exc: BaseException) -> str:
    """``what`` stopped the command, and what the command said of its work so far."""
    return f"{what}: {exc}" if str(exc) else what


@contextlib.contextmanager
def _terminated_on_sigterm() -> Iterator[None]:
    """SIGTERM raises :class:`Terminated` in the command (its cleanup runs, one line is
    said), where this is the main thread; the handler before is restored after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: Any) -> None:
        # once: the same SIGTERM can come twice (sent to the process group, and passed on
        # by the parent of cli/guard.py), and a second must not break the first's cleanup
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated

    before = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _place_late_positionals(args: argparse.Namespace, extra: list[str]) -> None:
    """Give a command's last positional what argparse left over when an option came before
    it (``lookup INDEX -k 2 FINGERPRINT``, ``fingerprint a.html --html b.html``): argparse
    fills positionals in one go, the optional FINGERPRINT with nothing, and the rest of FILE
    not at all. Anything else left over is a usage error of the command."""
    late = getattr(args, "late", None)
    values = [value for value in extra if not value.startswith("-") or value == "-"]
    rest = [value for value in extra if value.startswith("-") and value != "-"]
    current = getattr(args, late) if late is not None else None
    if late is not None and values and isinstance(current, list):
        setattr(args, late, [*current, *values])
    elif late is not None and values and current is None:
        setattr(args, late, values[0])
        rest += values[1:]
    else:
        rest = extra
    if rest:
        args.subparser.error(f"unrecognized arguments: {' '.join(rest)}")


def _silence_stdout() -> None:
    with contextlib.suppress(OSError, ValueError):  # not a real file: captured output
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _fail(prog: str, message: str, flush: bool = True) -> None:
    """Say an error on stderr, after what the command printed (``flush``; else, interrupted,
    what it had not printed yet is left out: its reader may be what is stuck)."""
    if not flush:
        _silence_stdout()
    else:
        try:
            sys.stdout.flush()
        except OSError:  # the reader is gone, or the disk full: the error goes to stderr
            _silence_stdout()
    sys.stderr.write(f"{prog}: error: {message}\n")
