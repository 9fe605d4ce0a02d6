"""The index: every stored fingerprint within Hamming distance k of a query, exactly.

Manku, Jain and Das Sarma's permuted tables, written once over a storage layer:

* :mod:`.index`: :class:`SimhashIndex`, the public face (open, check-and-insert, query,
  remove, batches, bulk loads);
* :mod:`.layout`: which bits each table's prefix takes, and the permutations;
* :mod:`.records`: the stored document records and the packed bucket encoding;
* :mod:`.bulk`: column-wise preparation and sorting for bulk loads and batches;
* :mod:`.pairs`: batch mode, every near pair at once by sorting each table;
* :mod:`.lmdb_env`: LMDB environments shared per process and path.

Imports nothing of Scrapy, of the crawl or of the command line; uses
:mod:`scrapy_simhash.text` only for the fingerprint version it stores.
"""

from .index import FORMAT_VERSION, IndexMismatchError, Match, SimhashIndex
from .layout import Layout

__all__ = ["FORMAT_VERSION", "IndexMismatchError", "Layout", "Match", "SimhashIndex"]
