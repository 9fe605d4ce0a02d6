"""The Scrapy side: the components a crawl enables, and the service they share.

* :mod:`.middleware` (drops a page before the spider parses it), :mod:`.pipeline` (drops
  items), :mod:`.addon` (enables both);
* :mod:`.service`: the per-crawl service both components share (the index, the decision
  memory, stats); :mod:`.writes`: its writes to the index, batched, committed and retried;
* :mod:`.config`: the ``SIMHASH_*`` settings, read once into a typed config;
* :mod:`.pages`, :mod:`.workers`, :mod:`.worker`, :mod:`.turns`: a page's text and
  signature, computed in worker processes (the pool, and the process's side), decided in the
  order pages arrived;
* :mod:`.remote`: the checks against a Redis index, off the reactor thread.

Uses :mod:`scrapy_simhash.text` and :mod:`scrapy_simhash.index`, which never import it. This
``__init__`` imports nothing, so that a worker process (``python -m
scrapy_simhash.crawl.worker``) starts without loading Scrapy or Twisted; the components are imported
from the package root (``scrapy_simhash.SimhashMiddleware``) or their modules.
"""
