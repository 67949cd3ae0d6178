"""The store on Redis: several workers share rooms, on one Redis or on a Redis Cluster.

Every part is given the worker's :class:`~.link.RedisLink` (the router, the keys' names, the
health watch, the durability) and keeps its own keys, each group of keys a script or
transaction touches under one hash tag: rooms and move logs (:mod:`.rooms`), the broker
(:mod:`.broker`), the live directory (:mod:`.directory`), pending writes (:mod:`.pending`),
beats (:mod:`.beats`), tournaments (:mod:`.tournaments`) and presence (:mod:`.presence`).

While Redis cannot be reached, every call raises
:class:`~server.store.errors.StoreUnavailable` (nothing was stored); the link's health watch
pings every primary, logs one line when Redis is lost and one when it is back, and tells
the server's layers (``Store.health_hooks``).
"""

from __future__ import annotations

from .. import Store
from .beats import RedisBeats
from .broker import RedisBroker
from .directory import RedisDirectory
from .link import RedisLink
from .pending import RedisPending
from .presence import RedisPresence
from .rooms import RedisRooms
from .tournaments import RedisTournaments

__all__ = ["redis_store"]


def redis_store(
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
) -> Store:
    """A store on the Redis at ``url`` (see :func:`~server.store.open_store`): keys under
    ``prefix``, the health checked every ``health_interval`` seconds, a write's
    ``durability`` waited for ``durability_timeout`` seconds at most."""
    link = RedisLink(
        url,
        worker_id=worker_id,
        prefix=prefix,
        health_interval=health_interval,
        durability=durability,
        durability_timeout=durability_timeout,
    )
    rooms = RedisRooms(link, event_cap=event_cap, active_ttl=active_ttl, finished_ttl=finished_ttl)
    return Store(
        worker_id=worker_id,
        shared=True,
        link=link,
        rooms=rooms,
        broker=RedisBroker(link, rooms.events_since),
        directory=RedisDirectory(link),
        pending=RedisPending(link),
        beats=RedisBeats(link),
        tournaments=RedisTournaments(link, event_cap),
        presence=RedisPresence(link),
    )
