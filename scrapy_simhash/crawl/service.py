"""The dedup service shared by the middleware and the pipeline: one per crawler.

It holds the config, the index (one LMDB environment), the worker pool (or the work done
inline) and the stats, and remembers what it decided for each page in this crawl, so that an
item from a page the middleware admitted is not checked again (and found to duplicate itself),
and so that no page is extracted twice. Every check against an LMDB index happens here, in
the reactor thread, one at a time: two near-duplicates whose work finishes together still keep
exactly one. Writes are batched, committed and retried by :mod:`.writes`; a page whose check
meets an index error passes, counted as ``simhash/skipped/index_error``, and never becomes a
download error. A Redis index is never called from the reactor thread: its checks go, in
arrival order, to the thread of :mod:`.remote`, and a page's entry is read in Scrapy's thread
pool.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import uuid
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.project import data_path
from twisted.internet.defer import Deferred, succeed
from twisted.internet.threads import deferToThread

from ..index import STORAGE_ERRORS, DamagedIndexError, IndexMismatchError, SimhashIndex
from ..index.redis_client import redis_errors
from ..text.fingerprint import hamming
from ..text.headings import page_title
from ..text.signature import PageSignature
from .config import SimhashConfig, simhash_enabled
from .pages import PageOptions, PageWork, Result, describe
from .remote import Outcome, RemoteChecks, open_redis_index, report_remote
from .turns import Turns
from .workers import BROKEN, WorkerError, WorkerPool
from .writes import INDEX_ERROR_REASON, IndexWrites, Written

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from ..index.redis_index import RedisIndex

logger = logging.getLogger(__name__)

#: How many page decisions are remembered (by URL and by body) for the items of a page.
DECISION_MEMORY = 50_000
_ATTRIBUTE = "_simhash_service"


@dataclass(frozen=True)
class Decision:
    """What was decided for one page: skipped (``skipped`` names why), unique, or a near
    duplicate of the page ``duplicate_of`` at ``distance`` bits, found by ``rule``
    (``"hamming"`` or ``"sentences"``)."""

    fingerprint: int | None = None
    duplicate_of: str | None = None
    distance: int | None = None
    skipped: str | None = None
    rule: str | None = None

    @property
    def is_duplicate(self) -> bool:
        return self.duplicate_of is not None

    def as_meta(self) -> dict[str, Any]:
        """The form put in ``response.meta["simhash"]``."""
        return {
            "fingerprint": self.fingerprint,
            "duplicate_of": self.duplicate_of,
            "distance": self.distance,
            "rule": self.rule,
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


def index_path(simhash_dir: str, spider_name: str | None) -> str:
    """``<SIMHASH_DIR>/<spider name>``, a relative SIMHASH_DIR being inside the project's
    ``.scrapy`` data directory (Scrapy's ``data_path``, like ``HTTPCACHE_DIR``).

    The one place that says where a spider's index lives: the crawl opens it here, and
    ``scrapy simhash COMMAND SPIDER`` finds it here.
    """
    return os.path.join(data_path(simhash_dir), spider_name or "default")


def _release(index: Any, remote: RemoteChecks | None, pool: WorkerPool | None) -> None:
    """Close an index, its Redis checks' thread and the worker threads."""
    try:
        if remote is not None:
            remote.close()  # its thread, then the index
        else:
            index.close()
    finally:
        if pool is not None:
            pool.close(timeout=0)


def _release_unclosed(index: Any, remote: RemoteChecks | None, pool: WorkerPool | None) -> None:
    """:func:`_release`, for a service collected without ``spider_closed`` (its crawl never
    started): a failure is logged, as any of the crawl's errors, not printed to stderr as
    an error in a finalizer."""
    try:
        _release(index, remote, pool)
    except Exception:
        logger.exception("Closing the simhash index of a crawl that never started failed")


#: The crawl of this process that opened each LMDB index (by its real path), while it lives.
_LMDB_CRAWLS: weakref.WeakValueDictionary[str, DedupService] = weakref.WeakValueDictionary()


class DedupService:
    """Config, index, fingerprinter and stats of one crawl. Get it with :meth:`from_crawler`."""

    def __init__(self, crawler: Crawler, config: SimhashConfig) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        options = PageOptions(
            config.min_text_length, config.fast, config.numbers, config.skip_listings
        )
        #: The work on a page done in this process (no workers, or none could start).
        self.work = PageWork(options)
        #: Stored with every entry this crawl writes, to tell them from earlier crawls' entries.
        self.run = uuid.uuid4().hex
        self._index: SimhashIndex | RedisIndex | None = None
        #: The checks against an index on a Redis server (SIMHASH_REDIS_URL), else None.
        self.remote: RemoteChecks | None = None
        self._pool = (
            WorkerPool(config.workers, options, timeout=config.timeout) if config.workers else None
        )
        self.writes = IndexWrites(
            crawler, config, self._lmdb_index, lambda: self.path, self._is_closed
        )
        self._decided: OrderedDict[str, Decision] = OrderedDict()
        self._underway: dict[str, _Underway] = {}
        self._turns = Turns()
        self._closed = False
        self._unexpected_said = False  # an unexpected error of the index was logged
        crawler.signals.connect(self.close, signal=signals.spider_closed)
        if crawler.spider is not None:
            self._open()

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> DedupService:
        """The crawler's service, created by the first component that asks for it.

        Raises ``NotConfigured`` when ``SIMHASH_ENABLED`` is false (whatever the other settings
        hold), ``ValueError`` naming the setting when a ``SIMHASH_*`` setting is invalid or the
        index cannot be used.
        """
        service: DedupService | None = getattr(crawler, _ATTRIBUTE, None)
        if service is None:
            if not simhash_enabled(crawler.settings):  # the other settings are not read
                raise NotConfigured
            service = cls(crawler, SimhashConfig.from_settings(crawler.settings))
            setattr(crawler, _ATTRIBUTE, service)
        return service

    # -- index -----------------------------------------------------------------------------

    @property
    def path(self) -> str:
        """This crawl's index directory (see :func:`index_path`)."""
        spider = self.crawler.spider
        return index_path(self.config.dir, spider.name if spider is not None else None)

    def _lmdb_index(self) -> SimhashIndex:
        """The LMDB index, for :mod:`.writes` (which a crawl on Redis never asks)."""
        index = self.index
        assert isinstance(index, SimhashIndex)
        return index

    @property
    def index(self) -> SimhashIndex | RedisIndex:
        return self._open() if self._index is None else self._index

    def _open(self) -> SimhashIndex | RedisIndex:
        config = self.config
        if config.redis_url is not None:
            return self._open_redis()
        where = os.path.realpath(self.path)
        other = _LMDB_CRAWLS.get(where)
        if other is not None and not other._closed and other.crawler.crawling:
            raise ValueError(
                f"SIMHASH_DIR: the index {self.path} is in use by another crawl running in this "
                f"process; two crawls of one process cannot share an index (each holds its "
                f"batch of writes open, and LMDB allows one a thread). Give each crawl its own "
                f"SIMHASH_DIR, or run them in separate processes, which can share it"
            )
        try:
            index = SimhashIndex(
                self.path,
                config.max_distance,
                config.expected_size,
                reset=config.reset,
                sync=config.fsync,
                drop_records=config.drop_records_max if config.drop_records else 0,
                numbers=config.numbers,
            )
        except IndexMismatchError as exc:
            raise ValueError(
                f"{exc}. Set SIMHASH_MAX_DISTANCE (and SIMHASH_NUMBERS) to the index's value, or "
                f"SIMHASH_RESET=True (or another SIMHASH_DIR) to start a new index"
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
        _LMDB_CRAWLS[where] = self
        self._opened(index)
        return index

    def _open_redis(self) -> RedisIndex:
        """The index on the Redis server of ``SIMHASH_REDIS_URL`` (see :mod:`.remote`)."""
        spider = self.crawler.spider
        name = spider.name if spider else "default"
        self._index = index = open_redis_index(self.config, name)
        # "skip": an index reset, replaced or lost in a restart is opened again (never reset
        # again by SIMHASH_RESET); "stop": the crawl stops
        reopen = None
        if self.config.on_index_error == "skip":
            reopen = partial(
                open_redis_index, dataclasses.replace(self.config, reset_key=None), name
            )
        # the checks' thread reports through a weak reference: holding the service, it would
        # keep a crawl that never started (and the thread itself) from being collected
        self.remote = RemoteChecks(
            index, self.run, partial(report_remote, weakref.ref(self)), reopen
        )
        self._opened(index)
        return index

    def _opened(self, index: Any) -> None:
        config = self.config
        if self._pool is not None:
            self._pool.start()
        # A crawl whose start fails after this (a later component raising in from_crawler)
        # never sends spider_closed: what the service holds is released when it is collected
        # (a no-op after close).
        weakref.finalize(self, _release_unclosed, index, self.remote, self._pool).atexit = False
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

    def _is_closed(self) -> bool:
        return self._closed

    def commit(self) -> bool:
        """Commit the index writes made so far (see :meth:`.IndexWrites.commit`)."""
        return self.writes.commit()

    # Not mutated by mutmut: its wrapper (*args, **kwargs) hides from Scrapy which arguments
    # this signal handler takes, and every crawl would fail with it in place.
    async def close(self) -> None:  # pragma: no mutate block
        """At spider_closed: let the work under way finish, commit, record
        ``simhash/index/size``, release the index, stop the workers."""
        self._closed = True  # a page arriving from now on passes unchecked, counted
        await maybe_deferred_to_future(self._turns.settled())
        if self.remote is not None:
            await maybe_deferred_to_future(self.remote.idle())
        pool, self._pool = self._pool, None
        if pool is not None and pool.restarts:
            self.stats.set_value("simhash/workers/restarted", pool.restarts)
        try:
            self.writes.commit_at_close()
            index, self._index = self._index, None
            if index is not None:
                # a Redis server may be down at the close: its errors are said, not raised
                failed = (
                    STORAGE_ERRORS if self.remote is None else (*STORAGE_ERRORS, *redis_errors())
                )
                try:
                    if self.remote is None:
                        size = len(index)
                    else:  # a call to the server: off the reactor thread, as every other
                        size = await maybe_deferred_to_future(deferToThread(len, index))
                    self.stats.set_value("simhash/index/size", size)
                except failed as exc:
                    where = self.path if self.remote is None else index.path
                    logger.error("Simhash index %s: cannot count its entries (%s)", where, exc)
                finally:
                    _release(index, self.remote, None)  # the workers are closed below
        finally:
            if pool is not None:
                pool.close()
            self._say_index_error()

    def _say_index_error(self) -> None:
        """With ``SIMHASH_ON_INDEX_ERROR = "stop"``, an index that gave up makes the crawl's
        finish reason ``simhash_index_error``, even when the crawl was closing already for a
        reason of its own (Scrapy then takes no second reason)."""
        gave_up = self.writes.given_up or (self.remote is not None and self.remote.gave_up)
        if gave_up and self.config.on_index_error == "stop":
            self.stats.set_value("finish_reason", INDEX_ERROR_REASON)

    def _after_close(self) -> Decision:
        """A page that comes after spider_closed (from a component that outlives the
        crawl's close): passed on unchecked, counted, and said once."""
        if not self.stats.get_value("simhash/skipped/closed"):
            logger.warning(
                "A page came after the spider closed: passed on unchecked "
                "(simhash/skipped/closed), as any later ones",
                extra={"spider": self.crawler.spider},
            )
        return self.skip("closed")

    # -- stats -----------------------------------------------------------------------------

    def skip(self, reason: str) -> Decision:
        self.stats.inc_value(f"simhash/skipped/{reason}")
        return Decision(skipped=reason)

    # -- decisions ---------------------------------------------------------------------------

    def skips_url(self, url: str) -> bool:
        """Whether ``url`` is one that ``SIMHASH_SKIP_URLS`` lets through unchecked."""
        return any(pattern.search(url) for pattern in self.config.skip_urls)

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

    async def recall_page(self, url: str) -> Decision | None:
        """The decision for the page at ``url`` in this crawl: remembered, or (once forgotten)
        an index entry this crawl stored. A Redis index is read off the reactor thread."""
        decision = self.recall(url)
        index = self._index
        if decision is not None or index is None:
            return decision
        # an index error: the page is decided again, where errors are handled
        if self.remote is None:
            if self.writes.given_up:
                return None
            try:
                stored = index.get(url)
            except STORAGE_ERRORS:
                return None
        else:
            if self.remote.gave_up:
                return None
            try:
                stored = await maybe_deferred_to_future(deferToThread(index.get, url))
            except (*redis_errors(), DamagedIndexError):  # (as STORAGE_ERRORS on LMDB)
                return None
        if stored is not None and stored.record.get("run") == self.run:
            return Decision(fingerprint=stored.fingerprint)
        return None

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
        title = page_title(html, encoding)
        return await self._decide(key, title, "html", html, url, encoding)

    async def decide_text(self, key: str, text: str, title: str | None = None) -> Decision:
        """Fingerprint and check an already extracted text."""
        return await self._decide(key, title, "text", text)

    async def _decide(self, key: str, title: str | None, kind: str, *args: Any) -> Decision:
        if self._closed:
            return self._after_close()
        if self._index is None:
            # opened (its workers started) at the first page where the spider came after the
            # components (``scrapy shell``): a page sent to workers not started waited forever
            self._open()
        waiting = self._underway.get(key)
        if waiting is not None:
            return await maybe_deferred_to_future(waiting.wait())
        underway = self._underway[key] = _Underway()
        ticket: int | None = self._turns.take()
        decision = Decision(skipped="error")
        try:
            result = await self._work(kind, *args)
            await maybe_deferred_to_future(self._turns.wait(ticket))
            signed = isinstance(result, PageSignature)
            if signed and self.remote is not None and self._index is not None:
                checked = self._check_remote(key, result, title)  # queued in arrival order
                self._turns.release(ticket)
                ticket = None
                decision = await maybe_deferred_to_future(checked)
            elif signed:
                decision = self.check(key, result, title)
            else:
                if result == "listing":
                    logger.debug(
                        "Simhash let %s through unchecked and unstored: it shows several "
                        "posts whole (a listing, SIMHASH_SKIP_LISTINGS)",
                        key,
                    )
                decision = self.skip(result)
        finally:
            if ticket is not None:
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

    def check(self, key: str, signature: PageSignature, title: str | None = None) -> Decision:
        """Check a page's signature against the index and store it if it is new, or record
        its drop (with ``SIMHASH_DROP_RECORDS``).

        A page stored by an earlier crawl under the same key is a duplicate of itself unless
        it changed by more than k bits (then its entry is replaced, if it is not a near
        duplicate of another page); its entry says so, and no drop is recorded.
        """
        writes = self.writes
        if writes.given_up:
            return self.skip("index_error")
        fingerprint = signature.fingerprint
        self.stats.inc_value("simhash/checked")
        record = self._record(key, title)
        try:
            index = writes.writable()
            previous = index.get(key)
            if previous is not None and previous.record.get("run") != self.run:
                distance = hamming(previous.fingerprint, fingerprint)
                if distance <= index.max_distance:
                    writes.checked(None)
                    return self._duplicate(fingerprint, key, distance, "hamming")
            match = index.check_and_insert(signature, key, **record)
        except DamagedIndexError as exc:
            writes.damaged(key, exc)
            return self.skip("index_error")
        except STORAGE_ERRORS as exc:
            # The open batch was rolled back: its pages are written again.
            writes.failed(exc)
            return self.skip("index_error")
        except Exception as exc:
            # Neither the storage's error nor damage a check foresaw (a bug, or a stored value
            # no check reads: never a page lost as a download error): handled as damage, the
            # batch's pages written again, the traceback said once.
            if not self._unexpected_said:
                self._unexpected_said = True
                logger.error(
                    "Simhash index %s: unexpected error checking %s", self.path, key, exc_info=True
                )
            writes.damaged(key, DamagedIndexError(f"{type(exc).__name__}: {exc}"))
            return self.skip("index_error")
        if match is not None:
            dropped = None
            if index.drop_records:
                dropped = Written(signature, key, record, match.key, match.distance, match.rule)
            writes.checked(dropped)
            return self._duplicate(fingerprint, match.key, match.distance, match.rule)
        self.stats.inc_value("simhash/unique")
        writes.checked(Written(signature, key, record))
        return Decision(fingerprint=fingerprint)

    def _record(self, key: str, title: str | None) -> dict[str, Any]:
        """What the index keeps of a page, stored or dropped: its URL, the crawl's id, its
        title, and whether it was checked in a dry run."""
        record: dict[str, Any] = {"url": key, "run": self.run}
        if title:
            record["title"] = title
        if self.config.dry_run:
            record["dry_run"] = True
        return record

    def _check_remote(
        self, key: str, signature: PageSignature, title: str | None
    ) -> Deferred[Decision]:
        """:meth:`check` against a Redis index: queued, decided off the reactor thread."""
        assert self.remote is not None
        if self.remote.gave_up:
            return succeed(self.skip("index_error"))
        self.stats.inc_value("simhash/checked")
        fingerprint = signature.fingerprint

        def decided(outcome: Outcome) -> Decision:
            if outcome.error is not None:
                return self.skip("index_error")
            if outcome.duplicate_of is not None:
                return self._duplicate(
                    fingerprint, outcome.duplicate_of, outcome.distance or 0, outcome.rule
                )
            self.stats.inc_value("simhash/unique")
            return Decision(fingerprint=fingerprint)

        return self.remote.check(key, signature, self._record(key, title)).addCallback(decided)

    def _duplicate(self, fingerprint: int, of: str, distance: int, rule: str) -> Decision:
        self.stats.inc_value("simhash/duplicate")
        self.stats.inc_value(f"simhash/duplicate/distance/{distance}")
        self.stats.inc_value(f"simhash/duplicate/by/{rule}")
        return Decision(fingerprint=fingerprint, duplicate_of=of, distance=distance, rule=rule)

    def log_drop(self, url: str, decision: Decision, what: str) -> None:
        """One DEBUG line per dropped (or, in a dry run, kept) near duplicate."""
        logger.debug(
            "%(action)s near-duplicate %(what)s %(url)s: duplicate of %(of)s"
            " (distance %(d)d, by %(rule)s)",
            {
                "action": "Kept (dry run)" if self.config.dry_run else "Dropped",
                "what": what,
                "url": url,
                "of": decision.duplicate_of,
                "d": decision.distance,
                "rule": decision.rule,
            },
            extra={"spider": self.crawler.spider},
        )
