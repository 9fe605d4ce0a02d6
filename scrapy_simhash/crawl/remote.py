"""A crawl's checks against an index on a Redis server, off the reactor thread.

Every check is decided on the server when it is made (another machine must see it at once),
so the LMDB index's batches and commits (``SIMHASH_COMMIT_EVERY``, ``SIMHASH_COMMIT_INTERVAL``,
``SIMHASH_FSYNC``) do not apply. The pages reach :meth:`RemoteChecks.check` in arrival order
(the service's turns); a thread of its own sends all the pages queued meanwhile as one
pipeline of check-and-insert scripts, which the server runs in that order. So several checks
are in flight while the reactor thread never waits on the network.

A call that fails (the connection lost, the server restarting or out of memory) is made
again, the whole batch, after each wait of :data:`RETRY_DELAYS`, each failure said at WARNING;
making a batch again is safe: a page already admitted by a lost answer is its own entry (no
match with itself) and is admitted again, a duplicate is found again. When the last retry
fails, the batch's pages pass unchecked, counted ``simhash/skipped/index_error``, and the crawl
stops with the close reason ``simhash_index_error`` (``SIMHASH_ON_INDEX_ERROR = "stop"``) or
goes on (``"skip"``: the next batch tries once, and all goes on as before when it succeeds).
Any other error in a batch (not the server's) is logged with its traceback and handled as the
last retry failing, without retries: the thread never ends with pages waiting for an answer.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro
from twisted.internet.defer import Deferred

from ..index import DamagedIndexError, IndexMismatchError
from ..index.redis_client import EvictingServerError, RedisUrlError, redact, redis_errors
from ..index.redis_index import RedisIndex
from ..text.fingerprint import hamming
from ..text.signature import PageSignature
from .config import REDIS_PARAMS, SimhashConfig
from .writes import INDEX_ERROR_REASON

if TYPE_CHECKING:
    from .service import DedupService

logger = logging.getLogger(__name__)

#: Seconds waited before each new attempt at a failed batch (about 30 s in all: a server
#: restarting, a failover).
RETRY_DELAYS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
#: Most pages sent in one pipeline.
BATCH = 200
#: Seconds between two looks at the server's ``maxmemory-policy`` during a crawl: a policy that
#: may evict the index's keys (``allkeys-*``), set after the crawl started, stops the checks
#: as at the start, rather than letting pages pass against an index losing its keys.
POLICY_EVERY = 60.0


@dataclass(frozen=True)
class Outcome:
    """A page's check: unique (stored), a duplicate of ``of`` at ``distance``, or failed."""

    duplicate_of: str | None = None
    distance: int | None = None
    error: BaseException | None = None
    rule: str = "hamming"


class RemoteChecks:
    """The thread that checks pages against a :class:`RedisIndex`. ``run`` marks this crawl's
    entries; ``report(event, *args)`` is called in the reactor thread with ``"failed"``
    (exception, attempt, next delay or None), ``"recovered"`` (failed attempts),
    ``"gave_up"`` (exception) and ``"damaged"`` (exception, pages that pass unchecked for it:
    a damaged record costs its pages a check, not the crawl)."""

    def __init__(
        self,
        index: RedisIndex,
        run: str,
        report: Callable[..., None],
        reopen: Callable[[], RedisIndex] | None = None,
    ) -> None:
        from twisted.internet import reactor

        self.index = index
        #: Opens the crawl's index again, after it was reset, replaced or lost in a restart
        #: (``SIMHASH_ON_INDEX_ERROR = "skip"``); None: the crawl stops instead.
        self._reopen = reopen
        self._run_id = run
        self._report = report
        self._call = reactor.callFromThread
        self._queue: deque[tuple[str, PageSignature, dict[str, Any], Deferred[Outcome]]] = deque()
        self._wake = threading.Condition()
        self._closing = False
        self._pending = 0  # pages checked and not answered yet (reactor thread)
        self._idle: list[Deferred[None]] = []
        self._down = False  # the last batch failed: the next one tries once
        self._policy_seen = time.monotonic()  # (the policy was checked at open)
        #: The crawl stops after a failure (``SIMHASH_ON_INDEX_ERROR = "stop"``): later pages
        #: pass unchecked (set in the reactor thread).
        self.gave_up = False
        #: A damaged record was met (and said at ERROR) in this crawl (reactor thread).
        self.damage_seen = False
        #: The index's failure was said at ERROR, and it has not answered since (reactor
        #: thread).
        self.down_said = False
        self._thread = threading.Thread(target=self._loop, name="simhash-redis", daemon=True)
        self._thread.start()

    def check(
        self, key: str, signature: PageSignature, record: dict[str, Any]
    ) -> Deferred[Outcome]:
        """Queue a page's check (in the reactor thread, in arrival order)."""
        d: Deferred[Outcome] = Deferred()
        self._pending += 1
        with self._wake:
            self._queue.append((key, signature, record, d))
            self._wake.notify()
        return d

    def idle(self) -> Deferred[None]:
        """Fires when every page checked so far has its answer."""
        d: Deferred[None] = Deferred()
        if self._pending:
            self._idle.append(d)
        else:
            d.callback(None)
        return d

    def close(self) -> None:
        """Stop the thread (after the pages queued) and close the index."""
        with self._wake:
            self._closing = True
            self._wake.notify()
        self._thread.join(timeout=sum(RETRY_DELAYS) + 60)
        self.index.close()

    # -- the thread ------------------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._queue and not self._closing:
                    self._wake.wait()
                if not self._queue:
                    return
                batch = [self._queue.popleft() for _ in range(min(BATCH, len(self._queue)))]
            outcomes = self._attempts([(key, fp, record) for key, fp, record, _ in batch])
            self._call(self._answer, [d for *_, d in batch], outcomes)

    def _attempts(self, items: list[tuple[str, PageSignature, dict[str, Any]]]) -> list[Outcome]:
        delays = () if self._down else RETRY_DELAYS
        failed = 0
        while True:
            try:
                self._check_policy()
                outcomes = self._decide(items)
            except IndexMismatchError as exc:  # reset, replaced, or lost in a restart
                self._call(self._report, "failed", exc, failed + 1, None)  # (counted)
                if self._reopened(exc):
                    continue  # this batch, checked on the index opened again
                return self._gave_up(exc, items)
            except DamagedIndexError as exc:
                # a script met a damaged page signature (the items before it were decided
                # and written): this batch passes unchecked, the next one is tried as ever
                self._call(self._report, "damaged", exc, len(items))
                return [Outcome(error=exc)] * len(items)
            except redis_errors() as exc:
                failed += 1
                delay = delays[failed - 1] if failed <= len(delays) else None
                self._call(self._report, "failed", exc, failed, delay)
                if delay is None:
                    return self._gave_up(exc, items)
                time.sleep(delay)
                continue
            except EvictingServerError as exc:  # set since the crawl started
                return self._gave_up(exc, items)
            except Exception as exc:  # not the server's: never retried, never the thread's end
                logger.exception("Simhash index %s: unexpected error in a check", self.index.path)
                return self._gave_up(exc, items)
            if failed or self._down:
                self._call(self._report, "recovered", failed)
            self._down = False
            return outcomes

    def _check_policy(self) -> None:
        """Look at the server's eviction policy again, every :data:`POLICY_EVERY` seconds."""
        if time.monotonic() - self._policy_seen < POLICY_EVERY:
            return
        self.index.check_eviction()
        self._policy_seen = time.monotonic()

    def _reopened(self, exc: IndexMismatchError) -> bool:
        """Open the crawl's index again after it changed under the crawl (``"skip"``): a
        server restarted without persistence, another crawl's ``SIMHASH_RESET``. The pages
        checked before are no longer in it; an index made again with other parameters, or
        a server that does not answer, is refused as at the start (False)."""
        if self._reopen is None:
            return False
        try:
            index = self._reopen()
        except Exception as refused:  # ValueError naming the setting, as at the start
            logger.debug("Simhash index %s: not opened again (%s)", self.index.path, refused)
            return False
        old, self.index = self.index, index
        self._down = False
        self._call(self._report, "reopened", exc, old)
        return True

    def _gave_up(self, exc: BaseException, items: list[Any]) -> list[Outcome]:
        self._down = True
        self._call(self._report, "gave_up", exc)
        return [Outcome(error=exc)] * len(items)

    def _decide(self, items: list[tuple[str, PageSignature, dict[str, Any]]]) -> list[Outcome]:
        """One batch: a page stored by an earlier crawl under the same key is a duplicate of
        itself unless it changed by more than k bits; the others are checked and inserted,
        pipelined."""
        index = self.index
        outcomes: list[Outcome | None] = [None] * len(items)
        checks = []
        for i, (previous, (key, signature, _)) in enumerate(
            zip(self._previous([key for key, _, _ in items]), items, strict=True)
        ):
            if isinstance(previous, DamagedIndexError):
                outcomes[i] = Outcome(error=previous)
                continue
            if previous is not None and previous.record.get("run") != self._run_id:
                distance = hamming(previous.fingerprint, signature.fingerprint)
                if distance <= index.max_distance:
                    outcomes[i] = Outcome(key, distance)
                    continue
            checks.append(i)
        matches = index.check_and_insert_many(
            [(items[i][1], items[i][0], items[i][2]) for i in checks]
        )
        for i, match in zip(checks, matches, strict=True):
            if match is not None:
                outcomes[i] = Outcome(match.key, match.distance, rule=match.rule)
            else:
                outcomes[i] = Outcome()
        return [o if o is not None else Outcome() for o in outcomes]

    def _previous(self, keys: list[str]) -> list[Any]:
        """The entries stored under ``keys`` (one round trip); where one cannot be decoded,
        each key is read alone, and a damaged entry is its DamagedIndexError (reported)."""
        try:
            return self.index.get_many(keys)
        except DamagedIndexError:
            pass
        found: list[Any] = []
        for key in keys:
            try:
                found.append(self.index.get(key))
            except DamagedIndexError as exc:
                self._call(self._report, "damaged", exc, 1)
                found.append(exc)
        return found

    # -- back in the reactor thread -------------------------------------------------------

    def _answer(self, deferreds: list[Deferred[Outcome]], outcomes: list[Outcome]) -> None:
        self._pending -= len(deferreds)
        for d, outcome in zip(deferreds, outcomes, strict=True):
            d.callback(outcome)
        if not self._pending:
            idle, self._idle = self._idle, []
            for d in idle:
                d.callback(None)


def open_redis_index(config: SimhashConfig, spider: str) -> RedisIndex:
    """The crawl's index on the server of ``SIMHASH_REDIS_URL``, under ``SIMHASH_REDIS_KEY``
    for ``spider``; a ValueError naming the setting when it cannot be used."""
    assert config.redis_url is not None
    url = redact(config.redis_url)
    key = config.redis_key % {"spider": spider}
    if config.reset_key is not None and config.reset_key != key:
        raise ValueError(
            f"SIMHASH_RESET names the index {config.reset_key!r}, but this crawl's index is "
            f"{key!r}: nothing was reset. Set SIMHASH_RESET = {key!r} to empty it"
        )
    try:
        from redis.exceptions import RedisClusterException
    except ImportError:
        raise ValueError(
            "SIMHASH_REDIS_URL needs redis-py: pip install 'scrapy-simhash[redis]'"
        ) from None
    index: RedisIndex | None = None
    problem = None
    given = config.redis_params != REDIS_PARAMS  # options besides the defaults
    try:
        index = RedisIndex(
            config.redis_url,
            key,
            config.max_distance,
            config.expected_size,
            reset=config.reset_key is not None,
            cluster=config.redis_cluster,
            options=config.redis_params,
            numbers=config.numbers,
            drop_records=config.drop_records_max if config.drop_records else 0,
        )
        index.check_eviction()
    except IndexMismatchError as exc:
        problem = (
            f"{exc}. Set SIMHASH_MAX_DISTANCE (and SIMHASH_NUMBERS) to the index's value, or "
            f"another SIMHASH_REDIS_KEY "
            f"(or SIMHASH_RESET = {key!r}) to start a new index"
        )
    except DamagedIndexError as exc:  # its meta lost: the error says what to do
        problem = str(exc)
    except (RedisUrlError, EvictingServerError) as exc:
        problem = f"SIMHASH_REDIS_URL: {exc}"
    except RedisClusterException as exc:  # not a cluster, or none of its nodes answers
        said = "SIMHASH_REDIS_CLUSTER is true" if config.redis_cluster else "detected"
        problem = f"SIMHASH_REDIS_URL: cannot use {url} as a Redis Cluster ({said}): {exc}"
    except redis_errors() as exc:
        # (a database option of SIMHASH_REDIS_PARAMS is the server's to refuse too)
        named = "SIMHASH_REDIS_URL" + (" or SIMHASH_REDIS_PARAMS" if given else "")
        problem = f"{named}: cannot use the Redis server at {url}: {exc}"
    except (TypeError, ValueError) as exc:  # an option redis-py does not take, or its value
        problem = f"SIMHASH_REDIS_PARAMS: redis-py refused them: {exc}"
    if problem is not None:
        if index is not None:
            index.close()
        raise ValueError(problem)
    return index


def _slot_moving(exc: BaseException) -> str:
    """What a cluster's ASK or TRYAGAIN means, said in the log: the index's slot is moving to
    another master (a reshard), and no script runs until it has moved."""
    from redis.exceptions import AskError, TryAgainError

    if isinstance(exc, AskError | TryAgainError):
        return ", as the index's slot moves to another master of the cluster"
    return ""


def report_remote(service_ref: weakref.ref[DedupService], event: str, *args: Any) -> None:
    """Log and count what the checks' thread tells, and stop the crawl when it gives up and
    ``SIMHASH_ON_INDEX_ERROR`` is ``"stop"`` (in the reactor thread; nothing once the service
    is gone)."""
    service = service_ref()
    if service is None:
        return
    remote = service.remote
    assert remote is not None
    where = remote.index.path  # the URL without its password, and the key
    extra = {"spider": service.crawler.spider}
    if event == "failed":
        exc, attempt, delay = args
        service.stats.inc_value("simhash/index/errors")
        if delay is not None:
            logger.warning(
                "Simhash index %s: a call failed (%s: %s)%s; the pages waiting are checked "
                "again in %g s (attempt %d of %d)",
                where, type(exc).__name__, exc, _slot_moving(exc), delay, attempt,
                len(RETRY_DELAYS) + 1,
                extra=extra,
            )  # fmt: skip
    elif event == "damaged":
        exc, pages = args
        service.stats.inc_value("simhash/index/errors")
        if not remote.damage_seen:
            remote.damage_seen = True
            logger.error(
                "Simhash index %s is damaged (%s): pages whose check reads the damage pass "
                "unchecked, counted as simhash/skipped/index_error. Check it with "
                "'scrapy-simhash verify %s --key %s'",
                where, exc, remote.index.url, remote.index.key,
                extra=extra,
            )  # fmt: skip
        logger.debug("Simhash index %s: damage met, %d pages unchecked", where, pages)
    elif event == "reopened":
        exc, old = args
        service.stats.inc_value("simhash/index/reopened")
        if service._index is old:
            service._index = remote.index
        remote.down_said = False
        try:
            old.close()
        except Exception:  # its connection is of no more use either way
            logger.debug("Simhash index %s: closing its old connection failed", where)
        logger.warning(
            "Simhash index %s changed since the crawl opened it (%s); opened again, the "
            "pages waiting checked against it: the pages it held before are gone "
            "(SIMHASH_ON_INDEX_ERROR = 'skip')",
            where, exc,
            extra=extra,
        )  # fmt: skip
    elif event == "recovered":
        remote.down_said = False
        logger.info(
            "Simhash index %s: the server answers again (after %d failed attempts); the pages "
            "waiting were checked",
            where,
            args[0],
            extra=extra,
        )
    elif event == "gave_up":
        (exc,) = args
        stop = service.config.on_index_error == "stop"
        # said once while the index stays unusable ("skip": each batch tried once), then
        # at DEBUG: a line a batch would bury the log
        level = logging.DEBUG if remote.down_said else logging.ERROR
        remote.down_said = True
        logger.log(
            level,
            "Simhash index %s cannot be used (%s: %s); the pages waiting pass unchecked, "
            "counted as simhash/skipped/index_error. %s",
            where,
            type(exc).__name__,
            exc,
            "Stopping the crawl (SIMHASH_ON_INDEX_ERROR = 'stop')."
            if stop
            else "Later pages are checked again, each batch tried once until the server "
            "answers (SIMHASH_ON_INDEX_ERROR = 'skip').",
            extra=extra,
        )
        if stop and not remote.gave_up:
            remote.gave_up = True
            engine = service.crawler.engine
            if engine is not None and engine.spider is not None and not service._is_closed():
                deferred_from_coro(engine.close_spider_async(reason=INDEX_ERROR_REASON))
            else:
                service.stats.set_value("finish_reason", INDEX_ERROR_REASON)
