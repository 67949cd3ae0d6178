"""The quick-play pools as the store keeps them: who seeks in each pool, which worker holds
them (a lease per worker and pool: a worker that dies stops renewing, and its seekers are
dropped), the seats of those a pairing took, and the one claim per identity that keeps a
player in one pool at a time. The pairing itself is :mod:`server.quickplay`'s.

A pool's channel, ``P:<pool id>`` (:data:`POOL_CHANNEL`), goes through the broker like a
room's: :meth:`PoolStore.take` tells on it, in the same atomic step, which seekers were
taken into which room (``{"ctl": "paired", "room": ROOM, "seats": {KEY: SEAT, …}}``), so
their workers seat them at once; :meth:`PoolStore.renew` tells it again to a worker that
missed the message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

import orjson

from ..quickplay.pairing import Seeker

__all__ = ["POOL_CHANNEL", "TAKEN_KEPT_MS", "PoolStore", "Taken", "paired_message"]

POOL_CHANNEL: Final = "P:"
"""The prefix of a pool's channel (and of its keys' tag in Redis): ``P:<pool id>``."""

TAKEN_KEPT_MS: Final = 60_000
"""How long a taken seeker's seat is kept for their worker to ask (:meth:`PoolStore.renew`)."""


@dataclass(frozen=True, slots=True)
class Taken:
    """A seeker a pairing took: their seat in the room it made."""

    room: str
    seat: int

    def __str__(self) -> str:
        return f"{self.room} {self.seat}"

    @classmethod
    def parse(cls, text: str) -> Taken:
        """A seat as :meth:`__str__` writes it."""
        room, seat = text.split(" ")
        return cls(room, int(seat))


def paired_message(room: str, seats: dict[str, int]) -> bytes:
    """What :meth:`PoolStore.take` tells on the pool's channel: seekers (key → seat) were
    taken into ``room``."""
    return orjson.dumps({"ctl": "paired", "room": room, "seats": seats})


class PoolStore(Protocol):
    """The pools' seekers. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable` (nothing changed)."""

    async def claim(self, player: str, holder: str, lease_ms: int) -> str | None:
        """Hold the one seek of identity ``player`` for ``holder`` (a connection) for
        ``lease_ms`` (again: renewed); None when held now, else who holds it."""
        ...

    async def hold_claims(self, claims: list[tuple[str, str]], lease_ms: int) -> None:
        """Renew the claims (player, holder) held (a worker's seekers, every second): the
        batch in a few round trips, not one a seeker."""
        ...

    async def unclaim(self, player: str, holder: str) -> None:
        """Let go of ``player``'s claim if ``holder`` holds it."""
        ...

    async def add(self, pool: str, seeker: Seeker, lease_ms: int, now: int) -> bool:
        """Put ``seeker`` in ``pool`` and hold their worker's lease there until ``now +
        lease_ms``; False (nothing done) if their key is in the pool already."""
        ...

    async def remove(self, pool: str, key: str, conn: str) -> bool:
        """Take seeker ``key`` out of ``pool`` if connection ``conn`` holds them; False if
        they are not there (taken, dropped, or held by another connection)."""
        ...

    async def seekers(self, pool: str, now: int) -> list[Seeker]:
        """Everyone seeking in ``pool`` whose worker's lease holds at ``now``; the seekers of
        a worker whose lease ran out are dropped."""
        ...

    async def take(self, pool: str, seats: dict[str, int], room: str, now: int) -> bool:
        """Atomically, if every seeker of ``seats`` (key → seat) is in ``pool`` with a live
        lease: take them out, keep each one's :class:`Taken` for :data:`TAKEN_KEPT_MS`, and
        tell it on the pool's channel. False (nothing done) otherwise."""
        ...

    async def renew(
        self, pool: str, keys: list[str], lease_ms: int, now: int
    ) -> dict[str, Taken | None]:
        """This worker still holds the seekers ``keys`` of ``pool``: its lease there holds
        until ``now + lease_ms``. Returns those no longer seeking: the :class:`Taken` of one
        a pairing took, None for one that is gone (dropped while this worker's lease had run
        out)."""
        ...

    async def counts(self, pools: list[str], now: int) -> dict[str, int]:
        """How many seek in each of ``pools`` (live leases only)."""
        ...
