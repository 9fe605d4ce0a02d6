"""The index: every stored fingerprint within Hamming distance k of a query, exactly.

Manku, Jain and Das Sarma's permuted tables, written once over a storage layer:

* :mod:`.index`: :class:`SimhashIndex`, the public face (open, check-and-insert, query,
  remove, batches, stats), on LMDB; :mod:`.face` what it shares with the index on Redis;
* :mod:`.tables`: the permuted tables (probes, writes) and their two levels with the merge;
* :mod:`.documents`: document records and their fingerprint links;
* :mod:`.sentences`: the page signatures, their long sentences' postings and the frequency
  guard;
* :mod:`.drops`: the records of pages dropped as near duplicates, and of which;
* :mod:`.meta`: the parameters stored at creation and checked at every open;
* :mod:`.layout`: which bits each table's prefix takes, and the permutations;
* :mod:`.records`: the stored document records and the packed bucket encoding;
* :mod:`.bulk` and :mod:`.loading`: bulk loads, prepared column-wise and sorted with numpy;
* :mod:`.copies`: one index into another, LMDB or Redis;
* :mod:`.pairs`: batch mode, every near pair at once by sorting each table;
* :mod:`.maintenance`: ``verify``'s rules;
* :mod:`.transactions`: one transaction a call, or a batch's long one;
* :mod:`.storage`: what the above ask of a storage; :mod:`.lmdb_storage` gives it on LMDB;
* :mod:`.redis_index` (with ``redis_script.lua``), :mod:`.redis_meta`, :mod:`.redis_calls`,
  :mod:`.redis_drops`, :mod:`.redis_bulk`, :mod:`.redis_checks`, :mod:`.redis_client`: the
  index on a Redis or Valkey server or cluster, its stored parameters, its script's calls,
  its drop records, its bulk loads, its ``verify`` and its connections.

Only :mod:`.lmdb_storage` imports LMDB's binding, and only the Redis modules redis-py.

Imports nothing of Scrapy, of the crawl or of the command line; uses
:mod:`scrapy_simhash.text` for the fingerprint version it stores, the page signature and
the rule that decides between two pages.
"""

from .drops import Drop
from .index import FORMAT_VERSION, IndexMismatchError, Match, SimhashIndex
from .layout import Layout
from .lmdb_storage import ERRORS
from .pairs import Group
from .records import DamagedIndexError

#: What a failed read or write of an index raises: the storage's errors (a full disk, an
#: I/O error, a damaged file) and records that cannot be decoded.
STORAGE_ERRORS: tuple[type[BaseException], ...] = (*ERRORS, DamagedIndexError)

__all__ = [
    "FORMAT_VERSION",
    "STORAGE_ERRORS",
    "DamagedIndexError",
    "Drop",
    "Group",
    "IndexMismatchError",
    "Layout",
    "Match",
    "SimhashIndex",
]
