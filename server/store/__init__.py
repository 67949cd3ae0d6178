"""The shared store of rooms, move logs, events, the live directory and tournaments' live
state: a handful of small interfaces a :class:`Store` holds, each in memory (one process:
:mod:`.memory`), on Redis and on a Redis Cluster (:mod:`.redis`, :mod:`.cluster`).

* ``rooms`` (:class:`~.rooms.RoomStore`): rooms and move logs, changed atomically with
  their events;
* ``broker`` (:class:`~.broker.Broker`): room channels, for events and control messages;
* ``directory`` (:class:`~.directory.Directory`): the live directory, the featured races;
* ``pending`` (:class:`~.pending.PendingWrites`): records writes not confirmed yet;
* ``beats`` (:class:`~.beats.Beats`): every worker's beat, for liveness;
* ``tournaments`` (:class:`~.tournaments.TournamentStore`): tournaments' live state, leases;
* ``presence`` (:class:`~.presence.PresenceMarks`): who has a tournament open, and where.

The parts share a :class:`Link` (how the worker reaches the store: its health, opening and
closing). :func:`open_store` builds the memory or the Redis set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .beats import Beats
from .broker import Broker, Listener
from .directory import Directory
from .health import Health, HealthHook, HealthWatch
from .pending import PendingWrites
from .presence import PresenceMarks
from .rooms import RoomStore
from .tournaments import TournamentStore

__all__ = ["Link", "Store", "open_store"]


class Link(Protocol):
    """How a worker reaches the store, which its parts share: the health watch, opening,
    a round trip, closing."""

    #: the store's health as last seen, and the hooks told of each change
    watch: HealthWatch

    async def open(self) -> None:
        """Connect (and start whatever keeps the link: the health watch, the expiry)."""
        ...

    async def ping(self) -> float:
        """Round trip to the store in seconds (0 in memory)."""
        ...

    async def close(self) -> None:
        """Stop and release the connections."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Store:
    """The store a worker runs on: its parts, and the link they share. Built by
    :func:`open_store` (or :func:`~.memory.memory_store`, :func:`~.redis.redis_store`)."""

    #: this worker's id, as the other workers know it
    worker_id: str
    #: several workers share the store (so some of them may die while others run)
    shared: bool
    link: Link
    rooms: RoomStore
    broker: Broker
    directory: Directory
    pending: PendingWrites
    beats: Beats
    tournaments: TournamentStore
    presence: PresenceMarks

    @property
    def health_hooks(self) -> list[HealthHook]:
        """Called when the store's health changes (lost, or back)."""
        return self.link.watch.hooks

    def health(self) -> Health:
        """Whether the store can be reached now."""
        return self.link.watch.state

    async def start(self, listener: Listener) -> None:
        """Connect, and deliver the messages of subscribed rooms to ``listener`` from now
        on."""
        await self.link.open()
        await self.broker.listen(listener)

    async def close(self) -> None:
        """Stop listening and release the connections."""
        await self.directory.close()
        await self.broker.close()
        await self.link.close()

    async def ping(self) -> float:
        """Round trip to the store in seconds (0 in memory)."""
        return await self.link.ping()


def open_store(
    redis_url: str | None = None,
    *,
    worker_id: str,
    event_cap: int = 500,
    active_ttl: float = 6 * 3600,
    finished_ttl: float = 3600,
    durability: str | None = None,
) -> Store:
    """The store of one worker: in Redis at ``redis_url`` (one server, or a cluster:
    ``redis+cluster://``) with the ``durability`` asked for, or in this process's memory
    when there is no URL. Rooms are kept ``active_ttl`` seconds after their last change
    (``finished_ttl`` once their race has ended), with their last ``event_cap`` events."""
    if redis_url is None:
        if durability is not None:
            raise ValueError("a durability needs Redis")
        from .memory import memory_store

        return memory_store(
            worker_id=worker_id,
            event_cap=event_cap,
            active_ttl=active_ttl,
            finished_ttl=finished_ttl,
        )
    from .redis import redis_store

    return redis_store(
        redis_url,
        worker_id=worker_id,
        event_cap=event_cap,
        active_ttl=active_ttl,
        finished_ttl=finished_ttl,
        durability=durability,
    )
