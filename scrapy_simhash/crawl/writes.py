"""A crawl's writes to its index: batched, committed, and never forgotten when they fail.

Writes are grouped in one transaction committed every ``SIMHASH_COMMIT_EVERY`` pages checked
or ``SIMHASH_COMMIT_INTERVAL`` seconds, whichever comes first; checks see the uncommitted
ones. The pages stored since the last commit are also kept in memory (the journal).

A write that fails (a full disk, an I/O error, a damaged index) is logged once at ERROR in
words a user can act on, counted (``simhash/index/errors``), and the journal is written again
into a new transaction, committed after the waits of :data:`RETRY_DELAYS`. If the last retry
fails too, the crawl stops with the close reason ``simhash_index_error``
(``SIMHASH_ON_INDEX_ERROR = "stop"``) or goes on with every later page let through unchecked
(``"skip"``); ``simhash/index/unsaved`` counts the pages kept but not written. A record that
cannot be decoded costs only the check that read it. No error of the index escapes into
Scrapy's timed calls.
"""

from __future__ import annotations

import errno
import logging
import shutil
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro

from ..index import STORAGE_ERRORS, DamagedIndexError, SimhashIndex
from ..text.signature import PageSignature
from .config import SimhashConfig

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.interfaces import IDelayedCall

logger = logging.getLogger(__name__)

#: Seconds waited before each new attempt at a failed index write; after the last one the
#: crawl stops, or lets pages through (``SIMHASH_ON_INDEX_ERROR``).
RETRY_DELAYS = (0.25, 1.0, 3.0)
#: The close reason of a crawl stopped because its index cannot be written.
INDEX_ERROR_REASON = "simhash_index_error"
#: Free bytes below which a failed write is put down to a full disk.
_LOW_SPACE = 1 << 20
#: A batch's size for the index: this class commits it itself.
_NEVER = 1 << 62


@dataclass(frozen=True)
class Written:
    """What a check wrote into the open batch, to be written again if the batch is lost: a
    page's entry, or (``of`` set) the record of its drop as a duplicate of ``of``."""

    signature: PageSignature
    key: str
    record: dict[str, Any]
    of: str | None = None
    distance: int = 0
    rule: str = "hamming"

    def write_to(self, index: SimhashIndex) -> None:
        if self.of is None:
            index.insert(self.signature, self.key, **self.record)
        else:
            index.record_drop(
                self.signature, self.key, self.of, self.distance, self.rule, **self.record
            )


class IndexWrites:
    """The write side of one crawl's index. ``index()`` opens it (or returns it open);
    ``closing()`` tells whether the crawl is closing already."""

    def __init__(
        self,
        crawler: Crawler,
        config: SimhashConfig,
        index: Callable[[], SimhashIndex],
        path: Callable[[], str],
        closing: Callable[[], bool],
    ) -> None:
        self.crawler = crawler
        self.config = config
        self.stats = crawler.stats
        self._index = index
        self._path = path
        self._closing = closing
        self._batch: AbstractContextManager[SimhashIndex] | None = None
        self._timer: IDelayedCall | None = None
        self._checks = 0  # pages checked in the open batch
        #: The pages stored since the last commit, written again after a failed write.
        self._journal: list[Written] = []
        self._failures = 0  # failed writes since the last commit that held
        self._retry_at = 0.0  # each page its own commit: a failure before this is the same
        self._unbegun = False  # the journal waits for a batch that could not begin
        self._damage_seen = False  # a damaged record was met (and said) in this crawl
        #: The index could not be written: pages pass unchecked.
        self.given_up = False

    @property
    def _log_extra(self) -> dict[str, Any]:
        return {"spider": self.crawler.spider}

    # -- the batch -------------------------------------------------------------------------

    def writable(self, delay: float | None = None) -> SimhashIndex:
        """The index, inside a batch of writes (begun if needed, to be committed after
        ``delay`` seconds, by default ``SIMHASH_COMMIT_INTERVAL``)."""
        index = self._index()
        if self._batch is None and self._batching:
            batch = index.batch(commit_every=_NEVER)
            batch.__enter__()
            self._batch = batch
            self._checks = 0
            if self._unbegun:  # the journal waited for a batch that could not begin
                self._unbegun = False
                self._write_journal(index)
            self._commit_in(self.config.commit_interval if delay is None else delay)
        return index

    @property
    def _batching(self) -> bool:
        return self.config.commit_every > 1 and self.config.commit_interval > 0

    def _commit_in(self, delay: float) -> None:
        from twisted.internet import reactor

        self._cancel_timer()
        self._timer = reactor.callLater(delay, self.commit)

    def _cancel_timer(self) -> None:
        timer, self._timer = self._timer, None
        if timer is not None and timer.active():
            timer.cancel()

    def checked(self, stored: Written | None) -> None:
        """One page checked (and what was ``stored`` of it, if anything: its entry or its
        drop record): remembered until the next commit, which is made now if the batch
        holds ``SIMHASH_COMMIT_EVERY`` pages."""
        if self._batch is None:  # written and committed at once
            if stored is not None:
                self._failures = 0
            return
        if stored is not None:
            self._journal.append(stored)
        self._checks += 1
        # While a failed write waits for its retry, the retry timer commits.
        if self._checks >= self.config.commit_every and not self._failures:
            self.commit()

    def commit(self) -> bool:
        """Commit the index writes made so far; False if that failed (then logged, counted,
        and retried later; see :meth:`failed`). Never raises an error of the index."""
        batch = self._take_batch()
        if batch is None and self._unbegun and not self.given_up:
            # the batch for the journal could not begin: begin it now, not after the wait (a
            # failure here is a new attempt, counted toward giving up)
            self._unbegun = False
            try:
                self._write_journal(self.writable(0))
            except STORAGE_ERRORS as exc:
                self.failed(exc)
                return False
            batch = self._take_batch()
        if batch is None:
            return True
        try:
            batch.__exit__(None, None, None)
        except STORAGE_ERRORS as exc:
            self.failed(exc)
            return False
        if self._failures:
            logger.info(
                "Simhash index %s: written after %d failed attempts",
                self._path(),
                self._failures,
                extra=self._log_extra,
            )
        self._journal.clear()
        self._failures = 0
        return True

    def _take_batch(self) -> AbstractContextManager[SimhashIndex] | None:
        """The open batch, which this no longer holds, with its commit's timer cancelled
        (None when no batch is open)."""
        batch, self._batch = self._batch, None
        self._cancel_timer()
        return batch

    def commit_at_close(self) -> None:
        """The last commit, retried here after the waits of :data:`RETRY_DELAYS` (the crawl
        is over: waiting blocks nothing else)."""
        for delay in (0.0, *RETRY_DELAYS):
            if self.given_up:
                return
            time.sleep(delay)
            if self.commit():
                return

    # -- failures --------------------------------------------------------------------------

    def failed(self, exc: BaseException) -> None:
        """A write of the index failed: count it, say it once, and write the pages stored
        since the last commit again, into a new transaction committed after a wait; after
        the last of :data:`RETRY_DELAYS`, give up. While the journal waits for a batch that
        could not begin, another failure (a check's, to begin one) is the same fault: counted,
        its page passes unchecked, and the wait goes on."""
        self.stats.inc_value("simhash/index/errors")
        if self._unbegun:
            return
        if not self._batching and time.monotonic() < self._retry_at:
            # each page its own commit: a page failing while the last failure's wait runs is
            # the same fault (its page passes unchecked, counted), not the next attempt
            return
        self._failures += 1
        if self._failures == 1:
            logger.error(_failure_message(self._path(), exc), extra=self._log_extra)
        if self._failures > len(RETRY_DELAYS):
            self._give_up()
            return
        delay = RETRY_DELAYS[self._failures - 1]
        if not self._batching:
            self._retry_at = time.monotonic() + delay
            logger.warning(
                "Simhash index %s: write failed (%s); pages whose write fails in the next %g s "
                "pass unchecked, then the next one is tried again (attempt %d of %d)",
                self._path(), exc, delay, self._failures, len(RETRY_DELAYS),
                extra=self._log_extra,
            )  # fmt: skip
            return
        logger.warning(
            "Simhash index %s: write failed (%s); %d pages stored since the last commit are "
            "written again, committed in %g s (attempt %d of %d)",
            self._path(),
            exc,
            self._pages_stored(),
            delay,
            self._failures,
            len(RETRY_DELAYS),
            extra=self._log_extra,
        )
        self._abort()
        self._rewrite(delay)

    def damaged(self, key: str, exc: DamagedIndexError) -> None:
        """A record read for ``key``'s check cannot be decoded: the page passes unchecked,
        counted; the open batch, rolled back, gets the pages kept since the last commit
        again. Said at ERROR once a crawl (a damaged index does not heal)."""
        self.stats.inc_value("simhash/index/errors")
        path = self._path()
        if not self._damage_seen:
            self._damage_seen = True
            logger.error(
                "Simhash index %s is damaged (%s): pages whose check reads the damage pass "
                "unchecked, counted as simhash/skipped/index_error. Check it with "
                "'scrapy-simhash verify %s'; SIMHASH_RESET=True starts a new index",
                path,
                exc,
                path,
                extra=self._log_extra,
            )
        logger.debug("Simhash index %s: damaged record met checking %s", path, key)
        self._rewrite(None)

    def _rewrite(self, delay: float | None) -> None:
        """Write the journal into the open batch (begun if needed). A batch that cannot even
        begin is tried again after the wait, as a commit would be."""
        try:
            index = self.writable(delay)
        except STORAGE_ERRORS as again:
            from twisted.internet import reactor

            self._cancel_timer()
            self._unbegun = True
            wait = RETRY_DELAYS[0] if delay is None else delay
            self._timer = reactor.callLater(wait, self._begin_failed, again)
            return
        try:
            self._write_journal(index)
        except STORAGE_ERRORS as again:
            self.failed(again)

    def _write_journal(self, index: SimhashIndex) -> None:
        """Write the pages stored since the last commit (and their drop records) again."""
        for written in self._journal:
            written.write_to(index)

    def _begin_failed(self, exc: BaseException) -> None:
        """The wait after a batch that could not begin is over: that was a failed write."""
        self._unbegun = False
        self.failed(exc)

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

    def _pages_stored(self) -> int:
        """The pages stored since the last commit (the journal also holds drop records)."""
        return sum(written.of is None for written in self._journal)

    def _give_up(self) -> None:
        """The index cannot be written: stop the crawl, or let later pages through."""
        self.given_up = True
        self._cancel_timer()
        self._abort()
        unsaved = self._pages_stored()
        self.stats.set_value("simhash/index/unsaved", unsaved)
        stop = self.config.on_index_error == "stop"
        logger.error(
            "Simhash index %s: still not written after %d attempts; %d pages kept since the "
            "last commit are not in the index. %s",
            self._path(),
            self._failures,
            unsaved,
            "Stopping the crawl (SIMHASH_ON_INDEX_ERROR = 'stop')."
            if stop
            else "Later pages pass unchecked, counted as simhash/skipped/index_error "
            "(SIMHASH_ON_INDEX_ERROR = 'skip').",
            extra=self._log_extra,
        )
        if not stop:
            return
        # A crawl closing already gets the reason from the service's close (Scrapy takes no
        # second close).
        engine = self.crawler.engine
        if not self._closing() and engine is not None and engine.spider is not None:
            deferred_from_coro(engine.close_spider_async(reason=INDEX_ERROR_REASON))


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
