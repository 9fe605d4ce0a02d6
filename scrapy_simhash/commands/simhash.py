"""``scrapy simhash <command> ...``: the ``scrapy-simhash`` tool as a Scrapy command.

Registered through the ``scrapy.commands`` entry point (or ``COMMANDS_MODULE =
"scrapy_simhash.commands"``). Everything after ``simhash`` is handed to
:func:`scrapy_simhash.cli.main.main`, so both surfaces share one parser and one implementation.

Inside a project, INDEX may also be a spider's name: it becomes the index the crawl of that
spider opens, under the project's settings: on the Redis server of ``SIMHASH_REDIS_URL``
under ``SIMHASH_REDIS_KEY`` when it is set, else the folder in ``SIMHASH_DIR`` and Scrapy's
``.scrapy`` data directory (through :func:`scrapy_simhash.crawl.service.index_path`, the
crawl's own rule). An existing folder of that name wins, so that a path given on purpose is
never reinterpreted.
Outside a project, INDEX is a folder, as for ``scrapy-simhash``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any, ClassVar

from scrapy.commands import ScrapyCommand
from scrapy.settings import BaseSettings
from scrapy.spiderloader import get_spider_loader
from scrapy.utils.project import inside_project

from ..cli import main
from ..cli.guard import in_child
from ..cli.main import SPIDER_HELP, build_parser
from ..cli.output import CliError
from ..cli.redis_target import RedisTarget
from ..crawl.config import redis_settings, simhash_dir
from ..crawl.service import index_path

PROG = "scrapy simhash"


def subcommands() -> list[str]:
    """The command line's subcommands, as its parser has them."""
    for action in build_parser(PROG)._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


class Command(ScrapyCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return f"<{'|'.join(subcommands())}> [SPIDER|INDEX] [options]"

    def short_desc(self) -> str:
        return "Inspect and maintain a scrapy-simhash near-duplicate index"

    def long_desc(self) -> str:
        return (
            "Inspect and maintain a scrapy-simhash near-duplicate index: the commands of the"
            f" scrapy-simhash tool. Inside a project, SPIDER|INDEX is {SPIDER_HELP}; outside"
            " one, an index folder. Example, in a project with a spider 'news': 'scrapy simhash"
            " info news'. Run 'scrapy simhash <command> -h' for a command's options."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        # Everything from the subcommand on is ours: Scrapy's parser must not read --json,
        # -k or -h there (REMAINDER keeps option-like strings once the first positional is met).
        parser.add_argument("simhash_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        # self.settings holds the project's settings (and -s options) when there is a project.
        locate = spider_locator(self.settings) if inside_project() else None
        argv = [*args, *opts.simhash_args]
        # in a forked child: a damaged index never kills the command (cli/guard.py)
        self.exitcode = in_child(lambda: main(argv, prog=PROG, locate=locate), PROG)


def spider_locator(settings: BaseSettings) -> Callable[[str], str]:
    """The INDEX argument to the index to open: an existing path as it is, a spider of the
    project as its index under ``settings`` (a folder, or a :class:`RedisTarget`); anything
    else as it is, for the usual errors."""

    def locate(name: str) -> str:
        if os.path.exists(name):  # a folder wins over a spider of the same name
            return name
        spiders = _spider_names(settings)
        if name not in spiders:
            if os.sep in name or not spiders:
                return name  # a path: "no index at <path>"
            raise CliError(
                f"no index at {name}: not a folder, nor a spider of this project"
                f" (its spiders: {', '.join(spiders)})"
            )
        try:
            redis = redis_settings(settings)
            if redis["redis_url"] is not None:  # the crawl's index is on that server
                key = redis["redis_key"] % {"spider": name}
                # connected as the crawl connects: its cluster flag and connection options
                # (a password or TLS options given there, not in the URL)
                return RedisTarget(
                    redis["redis_url"], key, redis["redis_cluster"], redis["redis_params"]
                )
            path = index_path(simhash_dir(settings), name)
        except ValueError as exc:  # a bad SIMHASH_DIR or SIMHASH_REDIS_*, named by the message
            raise CliError(str(exc)) from None
        if not os.path.exists(path):
            raise CliError(f"no index of spider {name} at {path}: crawl it first")
        return path

    return locate


def _spider_names(settings: BaseSettings) -> list[str]:
    """The project's spiders, sorted; a project whose spiders cannot be loaded fails with
    one line, as the user would see from ``scrapy list``."""
    try:
        return sorted(get_spider_loader(settings).list())
    except Exception as exc:
        raise CliError(f"cannot list the spiders of this project: {exc}") from exc
