"""Presence marks in Redis: one hash per tournament, on the shard of its tag, a field per
player and worker that marked them (a dead worker's marks age rather than being wiped)::

    sd:{T:K7QF2M}:present   hash: "<player> <worker>" → when that worker last saw them (ms)
"""

from __future__ import annotations

import redis.asyncio as aioredis

from ..tournaments import TOURNAMENT_CHANNEL
from .link import RedisLink
from .tournaments import TOURNAMENT_TTL

__all__ = ["RedisPresence"]


class RedisPresence:
    """:class:`~server.store.presence.PresenceMarks` in Redis, reached through ``link``."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link

    def _key(self, tid: str) -> str:
        return self._link.key(TOURNAMENT_CHANNEL + tid, "present")

    async def mark(self, tid: str, players: list[str], now: int) -> None:
        """HSET "<player> <worker>" → now."""
        if not players:
            return
        key, worker = self._key(tid), self._link.worker_id

        async def mark(redis: aioredis.Redis) -> None:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={f"{p} {worker}": now for p in players})
                pipe.expire(key, TOURNAMENT_TTL)
                await pipe.execute()

        await self._link.run(TOURNAMENT_CHANNEL + tid, mark)

    async def drop(self, tid: str, players: list[str]) -> None:
        """HDEL this worker's fields of ``players``."""
        if not players:
            return
        key = self._key(tid)
        fields = [f"{p} {self._link.worker_id}" for p in players]
        await self._link.run(TOURNAMENT_CHANNEL + tid, lambda r: r.hdel(key, *fields))

    async def present(self, tid: str, since: int) -> dict[str, str]:
        """The players some worker saw at ``since`` or later (a dead worker's marks age),
        each with the worker that marked them last."""
        key = self._key(tid)
        raw = await self._link.run(TOURNAMENT_CHANNEL + tid, lambda r: r.hgetall(key))
        latest: dict[str, tuple[int, str]] = {}  # player → (at, worker)
        for field, value in raw.items():
            at = int(value)
            text = field.decode() if isinstance(field, bytes) else str(field)
            player, worker = text.rsplit(" ", 1)
            if at >= since and at >= latest.get(player, (-1, ""))[0]:
                latest[player] = (at, worker)
        return {player: worker for player, (_, worker) in latest.items()}
