"""The dedup service shared by the middleware and the pipeline: one per crawler.

It holds the config, the index (one LMDB environment), the fingerprinter and the stats, and
remembers what it decided for each page in this crawl, so that an item from a page the
middleware admitted is not checked again (and found to duplicate itself), and so that no
page is extracted twice.
"""

from __future__ import annotations

import hashlib
import logging
import os
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.project import data_path

from ._config import SimhashConfig
from .extract import extract_text
from .fingerprint import Fingerprinter, hamming
from .index import IndexMismatchError, SimhashIndex

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

#: How many page decisions are remembered (by URL and by body digest) for the items of a page.
DECISION_MEMORY = 50_000

_ATTRIBUTE = "_simhash_service"


@dataclass(frozen=True)
class Decision:
    """What was decided for one page: skipped (``skipped`` names why), unique, or a near
    duplicate of the page ``duplicate_of`` at ``distance`` bits."""

    fingerprint: int | None = None
    duplicate_of: str | None = None
    distance: int | None = None
    skipped: str | None = None

    @property
    def is_duplicate(self) -> bool:
        return self.duplicate_of is not None

    def as_meta(self) -> dict[str, Any]:
        """The form put in ``response.meta["simhash"]``."""
        return {
            "fingerprint": self.fingerprint,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
        }


def digest(data: str | bytes) -> str:
    """A short hash of a page body (bytes) or its decoded HTML (str), to link items to pages."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class DedupService:
    """Config, index, fingerprinter and stats of one crawl. Get it with :meth:`from_crawler`."""

    def __init__(self, crawler: Crawler, config: SimhashConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self.fingerprinter = Fingerprinter(min_words=config.min_text_length)
        #: Stored with every entry this crawl writes, to tell them from earlier crawls' entries.
        self.run = uuid.uuid4().hex
        self._index: SimhashIndex | None = None
        self._decided: OrderedDict[str, Decision] = OrderedDict()
        crawler.signals.connect(self.close, signal=signals.spider_closed)
        if crawler.spider is not None:
            self._open()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupService:
        """The crawler's service, created by the first component that asks for it.

        Raises ``NotConfigured`` when ``SIMHASH_ENABLED`` is false, ``ValueError`` naming the
        setting when a ``SIMHASH_*`` setting is invalid or the index cannot be used.
        """
        service: DedupService | None = getattr(crawler, _ATTRIBUTE, None)
        if service is None:
            config = SimhashConfig.from_settings(crawler.settings)
            if not config.enabled:
                raise NotConfigured
            service = cls(crawler, config)
            setattr(crawler, _ATTRIBUTE, service)
        return service

    # -- index -----------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """``<SIMHASH_DIR>/<spider name>``, a relative SIMHASH_DIR being inside ``.scrapy``."""
        spider = self.crawler.spider
        name = spider.name if spider is not None and spider.name else "default"
        return os.path.join(data_path(self.config.dir), name)

    @property
    def index(self) -> SimhashIndex:
        return self._open() if self._index is None else self._index

    def _open(self) -> SimhashIndex:
        config = self.config
        try:
            index = SimhashIndex(
                self.path,
                config.max_distance,
                config.expected_size,
                reset=config.reset,
            )
        except IndexMismatchError as exc:
            raise ValueError(
                f"{exc}. Set SIMHASH_MAX_DISTANCE to the index's value, or SIMHASH_RESET=True "
                f"(or another SIMHASH_DIR) to start a new index"
            ) from None
        self._index = index
        logger.info(
            "Simhash index %(path)s: %(entries)d entries, max distance %(k)d, %(layout)s%(dry)s",
            {
                "path": index.path,
                "entries": len(index),
                "k": index.max_distance,
                "layout": index.layout,
                "dry": " (dry run: near-duplicates are counted, not dropped)"
                if config.dry_run
                else "",
            },
            extra={"spider": self.crawler.spider},
        )
        return index

    def close(self) -> None:
        """At spider_closed: record ``simhash/index/size`` and release the index."""
        index, self._index = self._index, None
        if index is None:
            return
        try:
            self.stats.set_value("simhash/index/size", len(index))
        finally:
            index.close()

    # -- stats -----------------------------------------------------------------------------

    def skip(self, reason: str) -> Decision:
        self.stats.inc_value(f"simhash/skipped/{reason}")
        return Decision(skipped=reason)

    # -- decisions ---------------------------------------------------------------------------

    def remember(self, keys: list[str], decision: Decision) -> None:
        for key in keys:
            self._decided[key] = decision
            self._decided.move_to_end(key)
        while len(self._decided) > DECISION_MEMORY:
            self._decided.popitem(last=False)

    def recall(self, *keys: str) -> Decision | None:
        """The decision taken in this crawl for a page URL or body digest, if any."""
        for key in keys:
            decision = self._decided.get(key)
            if decision is not None:
                return decision
        return None

    def recall_page(self, url: str) -> Decision | None:
        """The decision for the page at ``url`` in this crawl: remembered, or (once forgotten)
        an index entry this crawl stored."""
        decision = self.recall(url)
        if decision is None and self._index is not None:
            stored = self._index.get(url)
            if stored is not None and stored.record.get("run") == self.run:
                decision = Decision(fingerprint=stored.fingerprint)
        return decision

    def fingerprint_html(
        self, html: str | bytes, url: str | None, encoding: str | None = None
    ) -> Decision:
        """Extract and fingerprint a page: a decision to skip, or one with the fingerprint
        (not yet checked against the index)."""
        if self.config.max_body_size and len(html) > self.config.max_body_size:
            return self.skip("too_large")
        text = extract_text(html, url, encoding=encoding)
        if text is None:
            return self.skip("no_text")
        return self.fingerprint_text(text)

    def check_html(
        self, key: str, html: str | bytes, url: str | None, encoding: str | None = None
    ) -> Decision:
        """Extract, fingerprint and check a page: skipped, unique (stored) or a duplicate."""
        decision = self.fingerprint_html(html, url, encoding)
        if decision.fingerprint is None:
            return decision
        return self.check(key, decision.fingerprint)

    def check_text(self, key: str, text: str) -> Decision:
        """Fingerprint and check an already extracted text."""
        decision = self.fingerprint_text(text)
        if decision.fingerprint is None:
            return decision
        return self.check(key, decision.fingerprint)

    def fingerprint_text(self, text: str) -> Decision:
        fingerprint = self.fingerprinter.fingerprint(text)
        if fingerprint is None:
            return self.skip("too_short")
        return Decision(fingerprint=fingerprint)

    def check(self, key: str, fingerprint: int) -> Decision:
        """Check a page's fingerprint against the index and store it if it is new.

        A page stored by an earlier crawl under the same key is a duplicate of itself unless
        it changed by more than k bits (then its entry is replaced, if it is not a near
        duplicate of another page).
        """
        index = self.index
        self.stats.inc_value("simhash/checked")
        previous = index.get(key)
        if previous is not None and previous.record.get("run") != self.run:
            distance = hamming(previous.fingerprint, fingerprint)
            if distance <= index.max_distance:
                return self._duplicate(fingerprint, key, distance)
        match = index.check_and_insert(fingerprint, key, url=key, run=self.run)
        if match is not None:
            return self._duplicate(fingerprint, match.key, match.distance)
        self.stats.inc_value("simhash/unique")
        return Decision(fingerprint=fingerprint)

    def _duplicate(self, fingerprint: int, of: str, distance: int) -> Decision:
        self.stats.inc_value("simhash/duplicate")
        self.stats.inc_value(f"simhash/duplicate/distance/{distance}")
        return Decision(fingerprint=fingerprint, duplicate_of=of, distance=distance)

    def log_drop(self, url: str, decision: Decision, what: str) -> None:
        """One DEBUG line per dropped (or, in a dry run, kept) near duplicate."""
        logger.debug(
            "%(action)s near-duplicate %(what)s %(url)s: duplicate of %(of)s (distance %(d)d)",
            {
                "action": "Kept (dry run)" if self.config.dry_run else "Dropped",
                "what": what,
                "url": url,
                "of": decision.duplicate_of,
                "d": decision.distance,
            },
            extra={"spider": self.crawler.spider},
        )
