"""Decisions in arrival order: the pages' work finishes in any order, their checks do not.

Which page of a near-duplicate group is kept depends on the order of the checks. Taking them
in the order the pages reached the plugin (not the order their work in the worker processes
finished) makes a crawl keep the same pages with workers as inline.
"""

from __future__ import annotations

from twisted.internet.defer import Deferred


class Turns:
    """Tickets handed out in order; :meth:`wait` until every earlier ticket is released.

    Every ticket taken must be released once (in a ``finally``), whether or not its holder
    waited for its turn, or the later ones would wait forever.
    """

    def __init__(self) -> None:
        self._issued = 0
        self._current = 0  # the lowest ticket not released
        self._released: set[int] = set()
        self._waiting: dict[int, Deferred[None]] = {}
        self._idle: list[Deferred[None]] = []
        self._releasing = False  # in release()'s loop

    def take(self) -> int:
        ticket = self._issued
        self._issued += 1
        return ticket

    def wait(self, ticket: int) -> Deferred[None]:
        """Fires when every ticket before ``ticket`` is released."""
        d: Deferred[None] = Deferred()
        if ticket == self._current:
            d.callback(None)
        else:
            self._waiting[ticket] = d
        return d

    def release(self, ticket: int) -> None:
        self._released.add(ticket)
        if self._releasing:
            # called by a waiter resumed in the loop below (under a reactor other than
            # asyncio, a coroutine resumes inside the callback): that loop takes this ticket
            # up, instead of one loop inside another per page waiting, past the recursion limit
            return
        self._releasing = True
        try:
            while self._current in self._released:
                self._released.discard(self._current)
                self._current += 1
                waiter = self._waiting.pop(self._current, None)
                if waiter is not None:
                    waiter.callback(None)
        finally:
            self._releasing = False
        if self._current == self._issued:
            idle, self._idle = self._idle, []
            for d in idle:
                d.callback(None)

    def settled(self) -> Deferred[None]:
        """Fires when every ticket taken so far is released."""
        d: Deferred[None] = Deferred()
        if self._current == self._issued:
            d.callback(None)
        else:
            self._idle.append(d)
        return d
