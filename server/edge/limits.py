"""Token buckets per client address, for the HTTP routes that read the store.

A bucket per address holds up to ``burst`` tokens and gains ``rate`` a second; a request
takes one, or is refused with the seconds until one is there. The map is bounded: past
``capacity`` addresses the one unseen longest is forgotten (a full bucket again, which
costs an attacker nothing they could not get from a new address anyway). Each worker
counts alone. The address is the TCP peer's: behind a proxy that is the proxy's, so a
proxy in front must limit by the real client itself (``X-Forwarded-For`` can be forged and
is not read).
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable

__all__ = ["AddressBuckets"]


class AddressBuckets:
    """``take(address)``: 0.0 when the request may go, else the seconds to wait."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        capacity: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if rate <= 0 or burst < 1 or capacity < 1:
            raise ValueError("rate, burst and capacity must be positive")
        self.rate = rate
        self.burst = float(burst)
        self.capacity = capacity
        self._clock = clock
        #: address → (tokens, when they were counted); least recently seen first
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, address: str) -> float:
        """Take a token for ``address``: 0.0 if there was one, else the seconds until there
        is (nothing is taken then)."""
        now = self._clock()
        tokens, then = self._buckets.pop(address, (self.burst, now))
        tokens = min(self.burst, tokens + (now - then) * self.rate)
        wait = 0.0
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = (1.0 - tokens) / self.rate
        self._buckets[address] = (tokens, now)
        while len(self._buckets) > self.capacity:
            self._buckets.popitem(last=False)
        return wait

    @staticmethod
    def retry_after(wait: float) -> str:
        """A ``Retry-After`` value (whole seconds, at least 1) for a wait."""
        return str(max(1, math.ceil(wait)))
