"""The token bucket, written once — pure: a bucket holds up to ``burst`` tokens and gains
``rate`` a second; a request takes one, or is told the seconds until one is there.

Every limit of the server counts with it: a connection's message credits and its
reaction credits (:class:`~server.edge.connection.Conn`), the per-address buckets of the
HTTP routes, ``identify`` and ``recover`` (:class:`~server.edge.limits.AddressBuckets`),
and, through :func:`refill` and :func:`wait_for_token`, the records store's bucket per
address that it keeps in its database (the identities made from an address).

>>> clock = iter([0.0, 0.0, 0.0, 0.0, 0.5]).__next__  # made, then three takes at once
>>> bucket = TokenBucket(2.0, 2, clock=clock)  # full: two tokens
>>> bucket.take(), bucket.take(), bucket.take()  # the third waits half a second
(0.0, 0.0, 0.5)
>>> bucket.take()  # half a second on: one token again
0.0
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Clock", "TokenBucket", "refill", "wait_for_token"]

Clock = Callable[[], float]
"""Seconds, rising (``time.monotonic``; a test passes its own)."""


def refill(tokens: float, elapsed: float, rate: float, burst: float) -> float:
    """The tokens of a bucket that held ``tokens`` ``elapsed`` seconds ago: ``rate`` more
    a second, never more than ``burst`` (a clock that stepped back adds none)."""
    return min(burst, tokens + max(0.0, elapsed) * rate)


def wait_for_token(tokens: float, rate: float) -> float:
    """Seconds until a bucket holding ``tokens`` has a whole one (0.0 if it has)."""
    return 0.0 if tokens >= 1.0 else (1.0 - tokens) / rate


class TokenBucket:
    """A bucket of ``burst`` tokens gaining ``rate`` a second by ``clock``, full at first.
    :meth:`take` takes a token: 0.0 if there was one, else the seconds to wait (nothing is
    taken then)."""

    __slots__ = ("_clock", "at", "burst", "rate", "tokens")

    def __init__(self, rate: float, burst: float, *, clock: Clock = time.monotonic) -> None:
        if not rate > 0 or not burst >= 1:
            raise ValueError(
                f"a bucket's rate must be positive and its burst at least 1: {rate}, {burst}"
            )
        self.rate = rate
        self.burst = float(burst)
        self._clock = clock
        #: the tokens held when last counted, and when that was (by ``clock``)
        self.tokens = self.burst
        self.at = clock()

    def take(self) -> float:
        """Take a token: 0.0 if there was one, else the seconds until there is."""
        now = self._clock()
        self.tokens = refill(self.tokens, now - self.at, self.rate, self.burst)
        self.at = now
        wait = wait_for_token(self.tokens, self.rate)
        if wait == 0.0:
            self.tokens -= 1.0
        return wait

    def __repr__(self) -> str:
        return f"TokenBucket(rate={self.rate}, burst={self.burst}, tokens={self.tokens:.2f})"
