"""Worker beats in Redis, for liveness (:mod:`server.rooms.liveness`): each worker writes a
counter that others see change, and reads every worker's at once. One hash for the
deployment (on a cluster, on the shard of its key's slot)::

    sd:beats    hash: worker id -> its last beat
"""

from __future__ import annotations

from .link import RedisLink

__all__ = ["RedisBeats"]


class RedisBeats:
    """:class:`~server.store.beats.Beats` in Redis, reached through ``link``."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._key = f"{link.prefix}:beats"
        self._beat = 0

    async def beat(self) -> None:
        """Write a new beat for this worker (a counter: others see it change)."""
        self._beat += 1
        key, worker, beat = self._key, self._link.worker_id, self._beat
        await self._link.run(key, lambda r: r.hset(key, worker, beat), key=True)

    async def latest(self) -> dict[str, str]:
        """The last beat of every worker kept (one HGETALL, whatever the rooms: every
        worker reads it on each look)."""
        key = self._key
        found = await self._link.run(key, lambda r: r.hgetall(key), key=True)
        return {
            (w.decode() if isinstance(w, bytes) else str(w)): (
                v.decode() if isinstance(v, bytes) else str(v)
            )
            for w, v in found.items()
        }

    async def forget(self, worker: str) -> None:
        """Drop a dead worker's beat (the liveness layer's, long after it died)."""
        key = self._key
        await self._link.run(key, lambda r: r.hdel(key, worker), key=True)
