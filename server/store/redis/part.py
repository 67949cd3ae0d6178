"""What the Redis backend's mixins (live directory, kept writes, tournaments, beats) are
given by :class:`~server.redis_backend.RedisBackend`: the key prefix and ``_at``, which runs
an operation on the shard that holds a key."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis.asyncio as aioredis

__all__ = ["RedisPart"]

T = TypeVar("T")


class RedisPart:
    """The base of a mixin of :class:`~server.redis_backend.RedisBackend`."""

    prefix: str

    async def _at(
        self, where: str, op: Callable[[aioredis.Redis], Awaitable[T]], *, key: bool = False
    ) -> T:  # pragma: no cover - the backend's: op run on the shard of where
        raise NotImplementedError
