"""The Redis backend's worker beats, for liveness (:mod:`server.liveness`): each worker
writes a counter that others see change, and reads every worker's at once; a worker whose
beat stops changing is dead, and its seats are reaped. One hash for the deployment (on a
cluster, on the shard of its key's slot)::

    sd:beats    hash: worker id -> its last beat
"""

from __future__ import annotations

from typing import TypeVar

from .part import RedisPart

__all__ = ["RedisBeats"]

T = TypeVar("T")


class RedisBeats(RedisPart):
    """``Backend.beat``, ``beats`` and ``forget_worker``, for
    :class:`~server.redis_backend.RedisBackend` (which gives ``prefix``, ``worker_id``,
    ``_beat`` and ``_at``)."""

    worker_id: str
    _beat: int

    @property
    def _beats_key(self) -> str:
        return f"{self.prefix}:beats"

    async def beat(self) -> None:
        """Write a new beat for this worker (a counter: others see it change)."""
        self._beat += 1
        beat = self._beat
        await self._at(
            self._beats_key, lambda r: r.hset(self._beats_key, self.worker_id, beat), key=True
        )

    async def beats(self) -> dict[str, str]:
        """The last beat of every worker kept (one HGETALL, whatever the rooms: every
        worker reads it on each look)."""
        found = await self._at(self._beats_key, lambda r: r.hgetall(self._beats_key), key=True)
        return {
            (w.decode() if isinstance(w, bytes) else str(w)): (
                v.decode() if isinstance(v, bytes) else str(v)
            )
            for w, v in found.items()
        }

    async def forget_worker(self, worker: str) -> None:
        """Drop a dead worker's beat (the liveness layer's, long after it died)."""
        await self._at(self._beats_key, lambda r: r.hdel(self._beats_key, worker), key=True)
