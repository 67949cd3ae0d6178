"""The Redis backend's kept writes: finished races waiting for the records store.

A worker keeps a race's record here before handing it to the records writer, and drops it
once the database has it; any worker writes again what stayed too long (its worker died).
One hash of the data and one sorted set of the times, for the whole deployment::

    sd:pending        hash: key -> the kept write
    sd:pending:due    sorted set: key -> when it was kept (or last claimed), Unix seconds
"""

from __future__ import annotations

import contextlib
import time

import redis.asyncio as aioredis

__all__ = ["RedisPendingWrites"]


class RedisPendingWrites:
    """``Backend.keep_pending`` and the rest, for :class:`~server.redis_backend.RedisBackend`
    (which gives ``redis``, ``prefix`` and ``_reaching``)."""

    redis: aioredis.Redis
    prefix: str

    def _reaching(self) -> contextlib.AbstractContextManager[None]:  # pragma: no cover
        raise NotImplementedError

    async def keep_pending(self, key: str, data: bytes) -> None:
        """HSET the write and ZADD its time (``sd:pending``, ``sd:pending:due``)."""
        with self._reaching():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hset(f"{self.prefix}:pending", key, data)
                pipe.zadd(f"{self.prefix}:pending:due", {key: time.time()})
                await pipe.execute()

    async def pending_due(self, older_than: float, limit: int = 100) -> list[tuple[str, bytes]]:
        """The kept writes older than ``older_than`` seconds, claimed (their time is
        renewed)."""
        now = time.time()
        with self._reaching():
            keys: list[bytes] = await self.redis.zrangebyscore(  # type: ignore[assignment]
                f"{self.prefix}:pending:due", "-inf", now - older_than, start=0, num=limit
            )
            if not keys:
                return []
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zadd(f"{self.prefix}:pending:due", dict.fromkeys(keys, now), xx=True)
                pipe.hmget(f"{self.prefix}:pending", keys)
                _, found = await pipe.execute()
        return [
            (k.decode() if isinstance(k, bytes) else str(k), d)
            for k, d in zip(keys, found, strict=True)
            if d is not None
        ]

    async def drop_pending(self, key: str) -> None:
        """HDEL and ZREM the write."""
        with self._reaching():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hdel(f"{self.prefix}:pending", key)
                pipe.zrem(f"{self.prefix}:pending:due", key)
                await pipe.execute()

    async def pending_count(self) -> int:
        """HLEN of the kept writes."""
        with self._reaching():
            return int(await self.redis.hlen(f"{self.prefix}:pending"))
