"""The Redis backend: several workers share rooms, on one Redis or on a Redis Cluster.

Every part is given the worker's :class:`~.link.RedisLink` (the router, the keys' names, the
health watch, the durability) and keeps its own keys, each group of keys a script or
transaction touches under one hash tag: rooms and move logs (:mod:`.rooms`), the broker
(:mod:`.broker`), the live directory (:mod:`.directory`), pending writes (:mod:`.pending`),
beats (:mod:`.beats`), tournaments (:mod:`.tournaments`) and presence (:mod:`.presence`).

While Redis cannot be reached, every call raises
:class:`~server.store.errors.StoreUnavailable` (nothing was stored); a health watch pings
every primary, logs one line when Redis is lost and one when it is back, and tells the
server's layers (``health_hooks``).
"""

from __future__ import annotations

from ..backend import Backend
from ..broker import Listener
from ..health import Health
from .beats import RedisBeats
from .broker import RedisBroker
from .directory import RedisDirectory
from .link import RedisLink
from .pending import RedisPending
from .presence import RedisPresence
from .rooms import RedisRooms
from .shards import check_redis_url
from .tournaments import RedisTournaments

__all__ = ["RedisBackend", "check_redis_url"]


class RedisBackend(Backend):
    """Every part in Redis (one, or a cluster), events over its pub/sub."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        worker_id: str = "redis",
        prefix: str = "sd",
        event_cap: int = 500,
        active_ttl: float = 6 * 3600,
        finished_ttl: float = 3600,
        health_interval: float = 0.5,
        durability: str | None = None,
        durability_timeout: float = 1.0,
    ) -> None:
        super().__init__()
        self.worker_id = worker_id
        self.link = link = RedisLink(
            url,
            worker_id=worker_id,
            prefix=prefix,
            health_interval=health_interval,
            durability=durability,
            durability_timeout=durability_timeout,
            health_hooks=self.health_hooks,
        )
        self.rooms = RedisRooms(
            link, event_cap=event_cap, active_ttl=active_ttl, finished_ttl=finished_ttl
        )
        self.broker = RedisBroker(link, self.rooms.events_since)
        self.pending = RedisPending(link)
        self.beats = RedisBeats(link)
        self.directory = RedisDirectory(link)
        self.tournaments = RedisTournaments(link, event_cap)
        self.presence = RedisPresence(link)

    def health(self) -> Health:
        """Whether every primary answered the last health check."""
        return self.link.health()

    async def start(self, listener: Listener) -> None:
        """Find the shards, check they can give the durability asked for, start the health
        watch and the listener."""
        await self.link.open()
        await self.broker.listen(listener)

    async def close(self) -> None:
        """Stop the listeners, the health watch and the writers; close the connections."""
        await self.directory.close()
        await self.broker.close()
        await self.link.close()

    async def ping(self) -> float:
        """Round trip of a PING in seconds (on a cluster: of the slowest primary)."""
        return await self.link.ping()
