"""One worker's link to Redis (one server, or a Redis Cluster), which every part of the
Redis store is given: the router (the shard of a room or a key, the cluster followed), the
keys' names, Redis's failures turned into :class:`~server.store.errors.StoreUnavailable`,
the health watch, the durability asked for and the barrier that confirms it.

The parts (rooms, the broker, the live directory, pending writes, beats, tournaments,
presence) each keep their own keys and scripts, and reach Redis only through
:meth:`RedisLink.run`, so a room's keys are found on its shard whatever the cluster does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ...tasks import gather_all
from ..errors import StoreUnavailable
from ..health import Health, HealthWatch
from .durability import DURABILITY, apply_durability, settle
from .scripts import Scripts, scripts
from .shards import Router, check_redis_url, make_router, not_run, open_router

__all__ = ["RedisLink"]

T = TypeVar("T")

logger = logging.getLogger("samedeal.redis")

_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)


class RedisLink:
    """Redis as one worker reaches it. Keys are ``<prefix>:{<tag>}:<what>``: every key of a
    room (or of a tournament, ``T:<id>``) shares its hash tag, so it lives on one shard."""

    def __init__(
        self,
        url: str,
        *,
        worker_id: str,
        prefix: str = "sd",
        health_interval: float = 0.5,
        durability: str | None = None,
        durability_timeout: float = 1.0,
    ) -> None:
        check_redis_url(url)
        if durability is not None and durability not in DURABILITY:
            raise ValueError(f"not a durability level: {durability!r}")
        self.worker_id = worker_id
        self.prefix = prefix
        self._url = url
        #: asked for (None: the default, memory on one Redis, replica on a cluster)
        self._asked_durability = durability
        self.durability = durability or "memory"
        self.durability_timeout = durability_timeout
        self.router: Router = make_router(url, {"reply_timeout": 10.0})
        #: the scripts' source, publishing as the deployment does (known once open)
        self.scripts: Scripts = scripts()
        self.watch = HealthWatch("redis", [])
        self._health_interval = health_interval
        self._health_task: asyncio.Task[None] | None = None
        self._check_now = asyncio.Event()

    @property
    def cluster(self) -> bool:
        """Whether the keys are on a Redis Cluster."""
        return self.router.cluster

    @property
    def write_timeout(self) -> float:
        """Seconds a move may wait for Redis to answer before its connection is dropped
        (the move is then sent again on a new connection, until Redis says whether it
        was stored, for as long again at most)."""
        return float(self.router.pipe_options["reply_timeout"])

    @write_timeout.setter
    def write_timeout(self, seconds: float) -> None:
        self.router.set_pipe_option("reply_timeout", seconds)

    # ------------------------------------------------------------------ keys

    def key(self, tag: str, what: str) -> str:
        """The key ``what`` of room (or tournament channel) ``tag``."""
        return f"{self.prefix}:{{{tag}}}:{what}"

    def channel(self, tag: str) -> str:
        """The pub/sub channel of room (or tournament channel) ``tag``."""
        return self.key(tag, "ch")

    # ------------------------------------------------------------------ reaching Redis

    @contextlib.contextmanager
    def reaching(self) -> Iterator[None]:
        """Turn Redis's connection failures, and the error replies of a cluster that cannot
        run a command now, into :class:`StoreUnavailable`."""
        try:
            yield
        except StoreUnavailable:
            raise  # told already (an OSError too: not to be wrapped again)
        except _UNREACHABLE as exc:
            self.check_health()
            raise StoreUnavailable(f"Redis cannot be reached: {exc}") from exc
        except ResponseError as exc:
            if not not_run(exc):
                raise
            self.check_health()
            raise StoreUnavailable(f"Redis did not run it: {exc}") from exc

    async def run(
        self, where: str, command: Callable[[aioredis.Redis], Awaitable[T]], *, key: bool = False
    ) -> T:
        """Run ``command`` on the shard of room ``where`` (of the key ``where`` with ``key``),
        following the cluster (:meth:`Router.run`); failures as :class:`StoreUnavailable`."""
        with self.reaching():
            return await self.router.run(where, command, key=key)

    def subscriber(self, key: str) -> aioredis.Redis:
        """The client of the shard of ``key``, to listen on (on a cluster, PUBLISH reaches
        every node, so any would do)."""
        try:
            return self.router.shard_of_key(key).redis
        except Exception:
            self.check_health()
            raise

    async def settle(self, room_code: str, key: str, ttl: int) -> None:
        """Return once room ``room_code``'s writes so far are as durable as asked (a no-op for
        ``memory``), else :class:`~server.store.errors.NotDurable` (see :func:`settle`)."""
        await settle(self.router, room_code, key, ttl, self.durability)

    # ------------------------------------------------------------------ health

    def health(self) -> Health:
        """Whether every primary answered the last health check."""
        return self.watch.state

    def check_health(self) -> None:
        """Something failed to reach Redis: check it now rather than at the next tick (and,
        on a cluster, read the slot map again: it may be a failover)."""
        self._check_now.set()
        self.router.changed()

    async def _health_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._check_now.wait(), self._health_interval)
            self._check_now.clear()
            try:
                await gather_all(*(s.probe.ping() for s in self.router.primaries()))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.watch.down(str(exc) or type(exc).__name__)
                self.router.changed()
            else:
                self.watch.up()

    async def ping(self) -> float:
        """Round trip of a PING in seconds (on a cluster: of the slowest primary)."""
        started = time.perf_counter()
        with self.reaching():
            await gather_all(*(s.redis.ping() for s in self.router.primaries()))
        return time.perf_counter() - started

    # ------------------------------------------------------------------ lifecycle

    async def open(self) -> None:
        """Find the shards, check they can give the durability asked for, and start the
        health watch."""
        with self.reaching():
            self.router = await open_router(self.router, self._url)
            self.durability = await apply_durability(
                self.router, self._asked_durability, self.durability_timeout
            )
            self.scripts = scripts("SPUBLISH" if self.cluster else "PUBLISH")
        logger.info(
            "redis: %s, durability %s",
            f"cluster of {len(self.router.primaries())} primaries"
            if self.cluster
            else "one server",
            self.durability,
        )
        self._health_task = asyncio.create_task(self._health_loop())

    async def close(self) -> None:
        """Stop the health watch and close every connection."""
        if self._health_task is not None:
            self._health_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._health_task
        await self.router.close()
