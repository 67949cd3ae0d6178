"""Pending writes in Redis: finished races waiting for the records store.

A worker keeps a race's record here before handing it to the records writer, and drops it
once the database has it; any worker writes again what stayed too long (its worker died).
One hash of the data and one sorted set of the times, for the whole deployment, under one
hash tag (a transaction writes both: on a Redis Cluster they are on one shard)::

    sd:{pending}        hash: key -> the kept write
    sd:{pending}:due    sorted set: key -> when it was kept (or last claimed), Unix seconds
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis

from .link import RedisLink

__all__ = ["RedisPending"]

T = TypeVar("T")


class RedisPending:
    """:class:`~server.store.pending.PendingWrites` in Redis, reached through ``link``."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        #: the hash of the writes and the sorted set of their times
        self._writes = f"{link.prefix}:{{pending}}"
        self._due = f"{link.prefix}:{{pending}}:due"

    async def _run(self, command: Callable[[aioredis.Redis], Awaitable[T]]) -> T:
        return await self._link.run(self._writes, command, key=True)

    async def keep(self, key: str, data: bytes) -> None:
        """HSET the write and ZADD its time (``sd:{pending}``, ``sd:{pending}:due``)."""
        writes, due = self._writes, self._due

        async def keep(redis: aioredis.Redis) -> None:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.hset(writes, key, data)
                pipe.zadd(due, {key: time.time()})
                await pipe.execute()

        await self._run(keep)

    async def due(self, older_than: float, limit: int = 100) -> list[tuple[str, bytes]]:
        """The kept writes older than ``older_than`` seconds, claimed (their time is
        renewed)."""
        writes, due = self._writes, self._due
        now = time.time()

        async def claim(redis: aioredis.Redis) -> tuple[list[bytes], list[Any]]:
            keys: list[bytes] = await redis.zrangebyscore(  # type: ignore[assignment]
                due, "-inf", now - older_than, start=0, num=limit
            )
            if not keys:
                return [], []
            async with redis.pipeline(transaction=True) as pipe:
                pipe.zadd(due, dict.fromkeys(keys, now), xx=True)
                pipe.hmget(writes, keys)
                _, found = await pipe.execute()
            return keys, found

        keys, found = await self._run(claim)
        return [
            (k.decode() if isinstance(k, bytes) else str(k), d)
            for k, d in zip(keys, found, strict=True)
            if d is not None
        ]

    async def drop(self, key: str) -> None:
        """HDEL and ZREM the write."""
        writes, due = self._writes, self._due

        async def drop(redis: aioredis.Redis) -> None:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.hdel(writes, key)
                pipe.zrem(due, key)
                await pipe.execute()

        await self._run(drop)

    async def count(self) -> int:
        """HLEN of the kept writes."""
        writes = self._writes
        return int(await self._run(lambda r: r.hlen(writes)))
