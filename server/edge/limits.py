"""Limits per client address — pure: token buckets for requests, and the connections an
address may hold.

:class:`AddressBuckets`: a bucket per address (:class:`~server.bucket.TokenBucket`) holds
up to ``burst`` tokens and gains ``rate`` a second; a request takes one, or is refused with
the seconds until one is there (the HTTP routes that read the store, ``identify`` and
``recover`` attempts). The map is bounded: past ``capacity`` addresses the one unseen
longest is forgotten (a full bucket again, which costs an attacker nothing they could not
get from a new address anyway).

:class:`ConnectionLimits`: the connections open, per address and in all, against the
descriptors the process may hold (:func:`descriptor_budget`). An address may hold
``per_address`` connections; once the worker holds ``capacity`` in all, the rest of its
descriptors are a reserve that only addresses holding fewer than ``reserve_share`` may
take — so one address, or a crowd of them, cannot keep ``/healthz`` or a new player out —
and past ``ceiling`` nothing is taken (the process keeps descriptors for its stores, its
files and its solver).

Each worker counts alone. The address is the client's (:mod:`.address`: behind a trusted
proxy, the one it names), counted by :func:`~.address.address_key`.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal

from ..bucket import Clock, TokenBucket
from .address import address_key

__all__ = ["AddressBuckets", "ConnectionLimits", "Refused", "descriptor_budget"]

Refused = Literal["address", "reserve", "full"]
"""Why a connection is refused: its address holds as many as it may (``address``), the
worker is in its reserve and this address holds its share of it (``reserve``), or the
worker holds all it may (``full``)."""


class AddressBuckets:
    """``take(address)``: 0.0 when the request may go, else the seconds to wait."""

    def __init__(
        self,
        rate: float,
        burst: int,
        *,
        capacity: int = 10_000,
        clock: Clock = time.monotonic,
    ) -> None:
        if not rate > 0 or burst < 1 or capacity < 1:
            raise ValueError("rate, burst and capacity must be positive")
        self.rate = rate
        self.burst = float(burst)
        self.capacity = capacity
        self._clock = clock
        #: address → its bucket; least recently seen first
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def take(self, address: str) -> float:
        """Take a token for ``address`` (counted by :func:`~.address.address_key`): 0.0 if
        there was one, else the seconds until there is (nothing is taken then)."""
        address = address_key(address)
        bucket = self._buckets.pop(address, None)
        if bucket is None:
            bucket = TokenBucket(self.rate, self.burst, clock=self._clock)
        self._buckets[address] = bucket
        while len(self._buckets) > self.capacity:
            self._buckets.popitem(last=False)
        return bucket.take()

    @staticmethod
    def retry_after(wait: float) -> str:
        """A ``Retry-After`` value (whole seconds, at least 1) for a wait."""
        return str(max(1, math.ceil(wait)))


def descriptor_budget(limit: int, in_use: int) -> tuple[int, int]:
    """(capacity, ceiling) of the connections a process may hold with ``limit`` file
    descriptors (its ``RLIMIT_NOFILE``) of which ``in_use`` are taken before it serves:
    the ceiling keeps 64 more than those for the stores' and the solver's own; the reserve
    between capacity and ceiling is a tenth of the limit (at least 64)."""
    ceiling = max(1, limit - in_use - 64)
    reserve = max(64, limit // 10)
    return max(1, ceiling - reserve), ceiling


@dataclass(slots=True)
class ConnectionLimits:
    """Connections open per address key and in all (see the module): :meth:`open` and
    :meth:`close` every connection, :meth:`admit` and :meth:`release` it once its address
    is known."""

    per_address: int
    capacity: int
    ceiling: int
    reserve_share: int = 4
    #: connections open (their address known or not)
    total: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    def open(self) -> Refused | None:
        """A connection opened: ``full`` past the ceiling (it is counted either way, until
        :meth:`close`)."""
        self.total += 1
        return "full" if self.total > self.ceiling else None

    def close(self) -> None:
        """A connection opened closed."""
        self.total -= 1

    def admit(self, key: str) -> Refused | None:
        """Count a connection of ``key`` (None), or say why it may not be (not counted)."""
        held = self.counts.get(key, 0)
        if self.total > self.ceiling:
            return "full"
        if self.total > self.capacity and held >= self.reserve_share:
            return "reserve"
        if held >= self.per_address:
            return "address"
        self.counts[key] = held + 1
        return None

    def release(self, key: str) -> None:
        """An admitted connection of ``key`` closed."""
        held = self.counts.get(key, 0) - 1
        if held > 0:
            self.counts[key] = held
        else:
            self.counts.pop(key, None)
