"""``scrapy simhash <command> ...``: the ``scrapy-simhash`` tool as a Scrapy command.

Registered through the ``scrapy.commands`` entry point (or ``COMMANDS_MODULE =
"scrapy_simhash.commands"``). Everything after ``simhash`` is handed to
:func:`scrapy_simhash.cli.main.main`, so both surfaces share one parser and one implementation.
"""

from __future__ import annotations

import argparse
from typing import Any, ClassVar

from scrapy.commands import ScrapyCommand

from ..cli import main


class Command(ScrapyCommand):
    requires_project = False
    requires_crawler_process = False
    default_settings: ClassVar[dict[str, Any]] = {"LOG_ENABLED": False}

    def syntax(self) -> str:
        return "<info|lookup|explain|dump|clusters|fingerprint|remove|verify|compact> [options]"

    def short_desc(self) -> str:
        return "Inspect and maintain a scrapy-simhash near-duplicate index"

    def long_desc(self) -> str:
        return (
            "Inspect and maintain a scrapy-simhash near-duplicate index: the commands of the"
            " scrapy-simhash tool. Run 'scrapy simhash <command> -h' for a command's options."
        )

    def add_options(self, parser: argparse.ArgumentParser) -> None:
        super().add_options(parser)
        # Everything from the subcommand on is ours: Scrapy's parser must not read --json,
        # -k or -h there (REMAINDER keeps option-like strings once the first positional is met).
        parser.add_argument("simhash_args", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)

    def run(self, args: list[str], opts: argparse.Namespace) -> None:
        self.exitcode = main([*args, *opts.simhash_args], prog="scrapy simhash")
