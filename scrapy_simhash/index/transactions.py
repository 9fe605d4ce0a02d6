"""The index's transactions: one short transaction per call, or a batch's long one.

Inside :meth:`Transactions.batch`, writes share one write transaction committed every
``commit_every`` operations, and the table entries of fingerprints new to the index are held
back (:class:`~.bulk.Pending`) until the transaction commits, then written sorted, a bucket at
a time: random single inserts would otherwise rewrite a bucket per table each.

A batch belongs to the thread that opened it (LMDB's write transactions do): other threads
read the committed index, and their writes wait for the batch's commits, as another
process's would.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

import numpy as np

from .bulk import Pending
from .storage import Storage, Txn

#: Held-back table entries written before a batch commits.
PENDING_MAX = 4096


class Transactions:
    """Read and write transactions on ``storage`` for one index object; ``flush`` writes
    held-back fingerprints into the tables."""

    def __init__(self, storage: Storage, flush: Callable[[Txn, np.ndarray], None]) -> None:
        self.storage = storage
        self.pending = Pending()
        self.batch: Txn | None = None  # the open batch transaction
        self.owner: int | None = None  # the thread that opened it
        self._flush_into = flush
        self._ops = 0
        self._size = 0
        self._busy = 0  # operations under way in the batch transaction

    def forget(self) -> None:
        """Drop the batch without touching the storage (after a fork, or at close)."""
        self.batch = None
        self.owner = None
        self.pending.take()

    def batching(self) -> bool:
        """Whether this thread has the batch open (its writes held back, its reads in it)."""
        return self.batch is not None and self.owner == threading.get_ident()

    def read(self) -> AbstractContextManager[Txn]:
        """A read transaction for a ``with`` block: the batch's own in the batch's thread."""
        if self.batching():
            assert self.batch is not None
            return nullcontext(self.batch)
        return self.storage.read()

    @contextmanager
    def write(self, single: bool = False) -> Iterator[Txn]:
        """A write transaction for one operation. Inside a batch, the operation runs in a
        nested transaction (one that fails leaves the batch untouched), or, when ``single``
        (an operation that checked its input and cannot fail before it writes), in the batch
        transaction itself: nesting costs more than the operation once the batch holds
        thousands of pages. Such an operation interrupted midway rolls back the whole
        uncommitted batch."""
        storage = self.storage
        if not self.batching():
            with storage.write() as txn:
                yield txn
            return
        assert self.batch is not None
        self._busy += 1
        try:
            if single:
                try:
                    yield self.batch
                except BaseException:
                    self._restart()
                    raise
            else:
                self.pending.begin()
                try:
                    with storage.write(parent=self.batch) as txn:
                        yield txn
                except BaseException:
                    self.pending.rollback()
                    raise
                self.pending.keep()
        finally:
            self._busy -= 1
        self._ops += 1
        if self._ops >= self._size:
            self._commit(restart=True)
        elif len(self.pending) >= PENDING_MAX:
            self.flush()

    def _restart(self) -> None:
        """Roll back the uncommitted batch and begin it afresh (unless a ``close()`` in the
        middle of the operation, from a signal handler, has ended it already)."""
        batch, self.batch = self.batch, None  # never left naming an ended transaction
        self.pending.take()
        if batch is None:
            return
        self.storage.abort(batch)
        self._ops = 0
        self.batch = self.storage.begin()

    def flush(self) -> None:
        """Write the pending table entries into the batch transaction. An error or an
        interrupt there (KeyboardInterrupt) rolls back the whole uncommitted batch: its
        documents lack some of their entries, and must never be committed so."""
        if not self.batching() or not len(self.pending):
            return  # (another thread's call: the batch is its thread's to write)
        self._busy += 1
        try:
            self._flush_into(self.batch, self.pending.take())
        except BaseException:
            self._restart()
            raise
        finally:
            self._busy -= 1

    def _commit(self, restart: bool) -> None:
        """Flush and commit the batch transaction; begin the next one if ``restart``.

        ``batch`` is None from the commit on, which ends the transaction whether it succeeds
        or fails: an interrupt (KeyboardInterrupt, a signal's exception) handled as soon as
        the commit returns, before the next transaction begins, must not have the batch's
        end commit it a second time (LMDB refuses a finished transaction)."""
        assert self.batch is not None
        self.flush()
        batch, self.batch = self.batch, None
        self._ops = 0
        self.storage.commit(batch)
        if restart:
            self.batch = self.storage.begin()

    def end_at_close(self) -> None:
        """The batch left open by a ``close()`` inside its block: committed when closed
        between two operations, as the block's end would; rolled back when closed in the
        middle of one (from a signal handler), which must never be committed half done."""
        if self.batch is None or self.storage.stale:
            return
        if not self.batching():
            raise RuntimeError(
                "cannot close the index while another thread has a batch of writes open on it"
            )
        if self._busy:
            batch, self.batch = self.batch, None
            self.storage.abort(batch)
            return
        try:
            self._commit(restart=False)
        finally:
            if self.batch is not None:  # the flush failed and began the batch again
                batch, self.batch = self.batch, None
                self.storage.abort(batch)

    @contextmanager
    def batched(self, commit_every: int) -> Iterator[None]:
        """Writes in the block grouped into transactions of ``commit_every`` operations (see
        :meth:`~.index.SimhashIndex.batch`)."""
        if self.batch is not None:
            if self.batching():
                raise RuntimeError("batch() blocks do not nest")
            raise RuntimeError(
                "this index object has a batch open in another thread; give each thread "
                "that writes in batches an index object of its own"
            )
        storage = self.storage
        self.batch = storage.begin()
        self.owner = threading.get_ident()
        self._ops = 0
        self._size = commit_every
        try:
            yield
        except storage.errors:
            if self.batch is not None:
                storage.abort(self.batch)
            raise
        except BaseException:
            if self.batch is not None:
                self._commit(restart=False)
            raise
        else:
            if self.batch is not None:
                self._commit(restart=False)
        finally:
            if self.batch is not None:  # left open only by an LMDB error at the end
                self.storage.abort(self.batch)
            self.forget()
