"""The command line: ``scrapy-simhash`` (and ``scrapy simhash``), which inspects and
maintains an index.

* :mod:`.main`: the parser and :func:`main`;
* :mod:`.commands`: one function a subcommand;
* :mod:`.open_index`: opening an index named on the command line, with errors a user reads;
* :mod:`.output`: text and JSON output, progress, fingerprint and time formats.

Uses :mod:`scrapy_simhash.text` and :mod:`scrapy_simhash.index`; imports nothing of Scrapy.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
