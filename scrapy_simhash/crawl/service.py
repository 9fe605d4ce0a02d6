"""The dedup service shared by the middleware and the pipeline: one per crawler.

It holds the config, the index (one LMDB environment), the worker pool (or the work done
inline) and the stats, and remembers what it decided for each page in this crawl, so that an
item from a page the middleware admitted is not checked again (and found to duplicate itself),
and so that no page is extracted twice. Every check against the index happens here, in the
reactor thread, one at a time: two near-duplicates whose work finishes together still keep
exactly one. Index writes are grouped in transactions of ``SIMHASH_COMMIT_EVERY`` decisions or
``SIMHASH_COMMIT_INTERVAL`` seconds, whichever comes first; checks see the uncommitted ones.

A write that fails (a full disk, an I/O error, a damaged index) is never forgotten: it is
logged once at ERROR in words a user can act on, counted (``simhash/index/errors``), and the
pages stored since the last commit, kept in memory, are written again into a new transaction
and committed after a short wait, a few times. If that still fails the crawl stops with the
close reason ``simhash_index_error`` (``SIMHASH_ON_INDEX_ERROR = "stop"``), or goes on with
every later page let through unchecked and counted as ``simhash/skipped/index_error``
(``"skip"``). No error of the index escapes into Scrapy's timed calls or downloads.
"""

from __future__ import annotations

import errno
import hashlib
import logging
import os
import shutil
import time
import uuid
from collections import OrderedDict
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import deferred_from_coro, maybe_deferred_to_future
from scrapy.utils.project import data_path
from twisted.internet.defer import Deferred

from ..index import STORAGE_ERRORS, DamagedIndexError, IndexMismatchError, SimhashIndex
from ..text.fingerprint import hamming
from .config import SimhashConfig
from .pages import PageOptions, PageWork, Result, describe
from .turns import Turns
from .workers import BROKEN, WorkerError, WorkerPool

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IDelayedCall

logger = logging.getLogger(__name__)

#: How many page decisions are remembered (by URL and by body) for the items of a page.
DECISION_MEMORY = 50_000
#: Seconds waited before each new attempt at a failed index write; after the last one the
#: crawl stops, or lets pages through (``SIMHASH_ON_INDEX_ERROR``).
RETRY_DELAYS = (0.25, 1.0, 3.0)
#: The close reason of a crawl stopped because its index cannot be written.
INDEX_ERROR_REASON = "simhash_index_error"
#: Free bytes below which a failed write is put down to a full disk.
_LOW_SPACE = 1 << 20
#: A batch's size for the index: the service commits it itself.
_NEVER = 1 << 62

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


class _Underway:
    """The pages waiting for the decision of a page whose work is under way."""

    def __init__(self) -> None:
        self.waiters: list[Deferred[Decision]] = []

    def wait(self) -> Deferred[Decision]:
        d: Deferred[Decision] = Deferred()
        self.waiters.append(d)
        return d

    def done(self, decision: Decision) -> None:
        for d in self.waiters:
            d.callback(decision)


def digest(data: str | bytes) -> str:
    """A stable hash of a page body (bytes) or its decoded HTML (str): the index key of an
    item without URL."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def memo_key(data: str | bytes) -> str:
    """A key for a page body (bytes) or its decoded HTML (str) in this crawl's memory of
    decisions, to link items to pages: Python's own hash (SipHash, cached on the object; ten
    times cheaper than a digest of a 100 KB page), valid in this process only."""
    return f"#{'s' if isinstance(data, str) else 'b'}{len(data)}:{hash(data):x}"


class DedupService:
    """Config, index, fingerprinter and stats of one crawl. Get it with :meth:`from_crawler`."""

    def __init__(self, crawler: Crawler, config: SimhashConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        options = PageOptions(config.min_text_length, config.fast)
        #: The work on a page done in this process (no workers, or none could start).
        self.work = PageWork(options)
        #: Stored with every entry this crawl writes, to tell them from earlier crawls' entries.
        self.run = uuid.uuid4().hex
        self._index: SimhashIndex | None = None
        self._pool = (
            WorkerPool(config.workers, options, timeout=config.timeout) if config.workers else None
        )
        self._batch: AbstractContextManager[SimhashIndex] | None = None
        self._batch_checks = 0  # pages checked in the open batch
        self._batch_timer: IDelayedCall | None = None
        self._decided: OrderedDict[str, Decision] = OrderedDict()
        #: The pages stored since the last commit, written again after a failed write.
        self._journal: list[tuple[int, str, dict[str, Any]]] = []
        self._failures = 0  # failed writes since the last commit that held
        self._given_up = False  # the index could not be written: pages pass unchecked
        self._damage_seen = False  # a damaged record was met (and said) in this crawl
        self._underway: dict[str, _Underway] = {}
        self._turns = Turns()
        self._closed = False
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
                sync=config.fsync,
            )
        except IndexMismatchError as exc:
            raise ValueError(
                f"{exc}. Set SIMHASH_MAX_DISTANCE to the index's value, or SIMHASH_RESET=True "
                f"(or another SIMHASH_DIR) to start a new index"
            ) from None
        except STORAGE_ERRORS as exc:
            raise ValueError(
                f"SIMHASH_DIR: the index {self.path} cannot be opened ({exc}). Check it with "
                f"'scrapy-simhash verify {self.path}'; SIMHASH_RESET=True (or another "
                f"SIMHASH_DIR) starts a new index"
            ) from None
        except OSError as exc:
            raise ValueError(
                f"SIMHASH_DIR: cannot keep the index in {self.path}: "
                f"{exc.strerror or exc} ({type(exc).__name__})"
            ) from None
        self._index = index
        if self._pool is not None:
            self._pool.start()
        logger.info(
            "Simhash index %(path)s: %(entries)d entries, max distance %(k)d, %(layout)s; "
            "%(workers)s%(dry)s",
            {
                "path": index.path,
                "entries": len(index),
                "k": index.max_distance,
                "layout": index.layout,
                "workers": f"{config.workers} worker process{'es' * (config.workers > 1)}"
                if config.workers
                else "pages processed in the crawl process",
                "dry": " (dry run: near-duplicates are counted, not dropped)"
                if config.dry_run
                else "",
            },
            extra={"spider": self.crawler.spider},
        )
        return index

    def _write(self, delay: float | None = None) -> SimhashIndex:
        """The index, inside a batch of writes (begun if needed, to be committed after
        ``delay`` seconds, by default ``SIMHASH_COMMIT_INTERVAL``)."""
        index = self.index
        if self._batch is None and self._batching:
            # Committed by this service (commit()), which then forgets the pages kept since.
            self._batch = index.batch(commit_every=_NEVER)
            self._batch.__enter__()
            self._batch_checks = 0
            self._commit_in(self.config.commit_interval if delay is None else delay)
        return index

    @property
    def _batching(self) -> bool:
        return self.config.commit_every > 1 and self.config.commit_interval > 0

    def _commit_in(self, delay: float) -> None:
        from twisted.internet import reactor

        if self._batch_timer is not None and self._batch_timer.active():
            self._batch_timer.cancel()
        self._batch_timer = reactor.callLater(delay, self.commit)

    def commit(self) -> bool:
        """Commit the index writes made so far; False if that failed (then logged, counted,
        and retried later; see :meth:`_failed`). Never raises an error of the index."""
        batch, self._batch = self._batch, None
        timer, self._batch_timer = self._batch_timer, None
        if timer is not None and timer.active():
            timer.cancel()
        if batch is None:
            return True
        try:
            batch.__exit__(None, None, None)
        except STORAGE_ERRORS as exc:
            self._failed(exc)
            return False
        if self._failures:
            logger.info(
                "Simhash index %s: written after %d failed attempts",
                self.path,
                self._failures,
                extra={"spider": self.crawler.spider},
            )
        self._journal.clear()
        self._failures = 0
        return True

    def _failed(self, exc: BaseException) -> None:
        """A write of the index failed: count it, say it once, and write the pages stored
        since the last commit again, into a new transaction committed after a wait; after
        the last of :data:`RETRY_DELAYS`, give up."""
        self.stats.inc_value("simhash/index/errors")
        self._failures += 1
        if self._failures == 1:
            logger.error(_failure_message(self.path, exc), extra={"spider": self.crawler.spider})
        if self._failures > len(RETRY_DELAYS):
            self._give_up()
            return
        delay = RETRY_DELAYS[self._failures - 1]
        logger.warning(
            "Simhash index %s: write failed (%s); %d pages stored since the last commit are "
            "written again, committed in %g s (attempt %d of %d)",
            self.path,
            exc,
            len(self._journal),
            delay,
            self._failures,
            len(RETRY_DELAYS),
            extra={"spider": self.crawler.spider},
        )
        self._abort()
        try:
            index = self._write(delay)
            for fingerprint, key, record in self._journal:
                index.insert(fingerprint, key, **record)
        except STORAGE_ERRORS as again:
            self._failed(again)

    def _damaged(self, key: str, exc: DamagedIndexError) -> None:
        """A record read for ``key``'s check cannot be decoded: the page passes unchecked,
        counted; the open batch, rolled back, gets the pages kept since the last commit
        again. Said at ERROR once a crawl (a damaged index does not heal)."""
        self.stats.inc_value("simhash/index/errors")
        if not self._damage_seen:
            self._damage_seen = True
            logger.error(
                "Simhash index %s is damaged (%s): pages whose check reads the damage pass "
                "unchecked, counted as simhash/skipped/index_error. Check it with "
                "'scrapy-simhash verify %s'; SIMHASH_RESET=True starts a new index",
                self.path,
                exc,
                self.path,
                extra={"spider": self.crawler.spider},
            )
        logger.debug("Simhash index %s: damaged record met checking %s", self.path, key)
        try:
            index = self._write()
            for fingerprint, stored_key, record in self._journal:
                index.insert(fingerprint, stored_key, **record)
        except STORAGE_ERRORS as again:
            self._failed(again)

    def _abort(self) -> None:
        """Roll back the open batch, if any, without raising."""
        batch, self._batch = self._batch, None
        if batch is None:
            return
        # A storage error thrown into the batch block rolls it back (any other commits it).
        rollback = STORAGE_ERRORS[0]("rolled back after a failed write")
        try:
            batch.__exit__(type(rollback), rollback, None)
        except STORAGE_ERRORS:
            logger.debug("rolling back the index batch failed", exc_info=True)

    def _give_up(self) -> None:
        """The index cannot be written: stop the crawl, or let later pages through."""
        self._given_up = True
        timer, self._batch_timer = self._batch_timer, None
        if timer is not None and timer.active():
            timer.cancel()
        self._abort()
        unsaved = len(self._journal)
        self.stats.set_value("simhash/index/unsaved", unsaved)
        stop = self.config.on_index_error == "stop"
        logger.error(
            "Simhash index %s: still not written after %d attempts; %d pages kept since the "
            "last commit are not in the index. %s",
            self.path,
            self._failures,
            unsaved,
            "Stopping the crawl (SIMHASH_ON_INDEX_ERROR = 'stop')."
            if stop
            else "Later pages pass unchecked, counted as simhash/skipped/index_error "
            "(SIMHASH_ON_INDEX_ERROR = 'skip').",
            extra={"spider": self.crawler.spider},
        )
        engine = self.crawler.engine
        if stop and not self._closed and engine is not None and engine.spider is not None:
            deferred_from_coro(engine.close_spider_async(reason=INDEX_ERROR_REASON))
        elif stop and self._closed:
            # The crawl was closing already: its reason says the index was not written.
            self.stats.set_value("finish_reason", INDEX_ERROR_REASON)

    async def close(self) -> None:
        """At spider_closed: let the work under way finish, commit, record
        ``simhash/index/size``, release the index, stop the workers."""
        self._closed = True  # a page arriving from now on passes unchecked
        await maybe_deferred_to_future(self._turns.settled())
        pool, self._pool = self._pool, None
        if pool is not None and pool.restarts:
            self.stats.set_value("simhash/workers/restarted", pool.restarts)
        try:
            self._commit_at_close()
            index, self._index = self._index, None
            if index is not None:
                try:
                    self.stats.set_value("simhash/index/size", len(index))
                except STORAGE_ERRORS as exc:
                    logger.error("Simhash index %s: cannot count its entries (%s)", self.path, exc)
                finally:
                    index.close()
        finally:
            if pool is not None:
                pool.close()

    def _commit_at_close(self) -> None:
        """The last commit, retried here after the waits of :data:`RETRY_DELAYS` (the crawl
        is over: waiting blocks nothing else)."""
        for delay in (0.0, *RETRY_DELAYS):
            if self._given_up:
                return
            time.sleep(delay)
            if self.commit():
                return

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

    def link_content(self, keys: list[str], decision: Decision) -> None:
        """Remember a page's decision under its :func:`memo_key`s, unless a page decided before
        in this crawl had the same content: that first page keeps the link.

        Pages with identical content (a page at a second URL) share one fingerprint: once the
        first is stored, the later ones are its duplicates, dropped before they yield items.
        The items of the first page may reach the pipeline only after such a copy was decided;
        given the copy's decision, they would be dropped as duplicates of their own page.
        """
        self.remember([key for key in keys if key not in self._decided], decision)

    def recall(self, *keys: str) -> Decision | None:
        """The decision taken in this crawl for a page URL or :func:`memo_key`, if any."""
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

    # -- the work on a page -----------------------------------------------------------------

    async def decide_html(
        self, key: str, html: str | bytes, url: str | None, encoding: str | None = None
    ) -> Decision:
        """Extract, fingerprint and check a page: skipped, unique (stored) or a duplicate.

        Extraction and fingerprinting run in a worker process when there are workers; the
        check runs here, in the reactor thread, one page at a time. A second call for a ``key``
        whose work is under way waits for the first one's decision instead of doing it again.
        """
        if self.config.max_body_size and len(html) > self.config.max_body_size:
            return self.skip("too_large")  # not worth copying to a worker
        return await self._decide(key, "html", html, url, encoding)

    async def decide_text(self, key: str, text: str) -> Decision:
        """Fingerprint and check an already extracted text."""
        return await self._decide(key, "text", text)

    async def _decide(self, key: str, kind: str, *args: Any) -> Decision:
        if self._closed:
            return Decision(skipped="closed")
        waiting = self._underway.get(key)
        if waiting is not None:
            return await maybe_deferred_to_future(waiting.wait())
        underway = self._underway[key] = _Underway()
        ticket = self._turns.take()
        decision = Decision(skipped="error")
        try:
            result = await self._work(kind, *args)
            await maybe_deferred_to_future(self._turns.wait(ticket))
            decision = self.check(key, result) if isinstance(result, int) else self.skip(result)
        finally:
            self._turns.release(ticket)
            del self._underway[key]
            underway.done(decision)
        return decision

    async def _work(self, kind: str, *args: Any) -> Result:
        pool = self._pool
        if pool is not None and not pool.broken:
            try:
                result = await maybe_deferred_to_future(pool.submit(kind, *args))
            except WorkerError as exc:
                logger.error("Simhash worker failed on %s:\n%s", describe(kind, args), exc)
                return "error"
            if result != BROKEN:
                return result
        try:
            return getattr(self.work, kind)(*args)
        except Exception:
            logger.exception("Simhash failed on %s", describe(kind, args))
            return "error"

    def check(self, key: str, fingerprint: int) -> Decision:
        """Check a page's fingerprint against the index and store it if it is new.

        A page stored by an earlier crawl under the same key is a duplicate of itself unless
        it changed by more than k bits (then its entry is replaced, if it is not a near
        duplicate of another page).
        """
        if self._given_up:
            return self.skip("index_error")
        self.stats.inc_value("simhash/checked")
        record = {"url": key, "run": self.run}
        try:
            index = self._write()
            previous = index.get(key)
            if previous is not None and previous.record.get("run") != self.run:
                distance = hamming(previous.fingerprint, fingerprint)
                if distance <= index.max_distance:
                    return self._duplicate(fingerprint, key, distance)
            match = index.check_and_insert(fingerprint, key, **record)
        except DamagedIndexError as exc:
            self._damaged(key, exc)
            return self.skip("index_error")
        except STORAGE_ERRORS as exc:
            # The open batch was rolled back: its pages are written again.
            self._failed(exc)
            return self.skip("index_error")
        if match is None:
            if self._batch is not None:
                self._journal.append((fingerprint, key, record))
            else:  # written and committed at once
                self._failures = 0
            self.stats.inc_value("simhash/unique")
        decision = (
            Decision(fingerprint=fingerprint)
            if match is None
            else self._duplicate(fingerprint, match.key, match.distance)
        )
        if self._batch is not None:
            self._batch_checks += 1
            # While a failed write waits for its retry, the retry timer commits.
            if self._batch_checks >= self.config.commit_every and not self._failures:
                self.commit()
        return decision

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


def _failure_message(path: str, exc: BaseException) -> str:
    """What failed, where, why (a full disk told from other I/O errors by the free space,
    which LMDB does not report), and what to do."""
    try:
        free: int | None = shutil.disk_usage(path).free
    except OSError:
        free = None
    full = getattr(exc, "errno", None) == errno.ENOSPC or (free is not None and free < _LOW_SPACE)
    if full:
        why = f"no space left on the disk holding it ({free} bytes free)"
        hint = "Free some space, or set SIMHASH_DIR to a disk with room."
    else:
        why = str(exc)
        hint = (
            f"Check the disk, and the index with 'scrapy-simhash verify {path}'; "
            "SIMHASH_RESET=True (or another SIMHASH_DIR) starts a new index."
        )
    return (
        f"Simhash index {path}: writing failed: {why}. The pages stored since the last commit "
        f"are kept in memory and written again. {hint}"
    )
