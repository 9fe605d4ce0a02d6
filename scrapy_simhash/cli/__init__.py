"""The command line: ``scrapy-simhash`` (and ``scrapy simhash``), which inspects and
maintains an index.

* :mod:`.main`: the parser and :func:`main`;
* :mod:`.commands`: a function a subcommand (``cmd_<name>``), :mod:`.report`'s
  ``cmd_report`` apart;
* :mod:`.report`: the HTML report on a crawl;
* :mod:`.check`: ``verify`` run in a child process, so that a damaged index that crashes
  LMDB is reported, never the command's death;
* :mod:`.guard`: the command run in a forked child, so that an index whose damage kills
  its reader (SIGBUS, SIGABRT) is said in one line, never the command's death;
* :mod:`.open_index`: opening an index named on the command line, with errors a user reads;
* :mod:`.redis_target`: a Redis URL (with ``--key``) as INDEX, and the subcommands' Redis
  sides;
* :mod:`.destination`: ``compact``'s new folder, removed again if the copy does not finish;
* :mod:`.output`: text and JSON output, progress, fingerprint and time formats.

Uses :mod:`scrapy_simhash.text` and :mod:`scrapy_simhash.index`; imports nothing of Scrapy.
"""

from .main import build_parser, main

__all__ = ["build_parser", "main"]
