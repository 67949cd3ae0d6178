"""The Redis backend's worker beats, for liveness (:mod:`server.liveness`): each worker
writes a counter that others see change; a worker whose beat stops changing is dead, and
its seats are reaped. One hash for the deployment (on a cluster, on the shard of its
key's slot)::

    sd:beats    hash: worker id -> its last beat
"""

from __future__ import annotations

from typing import TypeVar

from .redis_part import RedisPart

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

    async def beats(self, workers: set[str]) -> dict[str, str | None]:
        """The last beat of each worker (None when none is kept)."""
        order = sorted(workers)
        if not order:
            return {}
        found = await self._at(self._beats_key, lambda r: r.hmget(self._beats_key, order), key=True)
        return {
            w: (v.decode() if isinstance(v, bytes) else v)
            for w, v in zip(order, found, strict=True)
        }

    async def forget_worker(self, worker: str) -> None:
        """Drop a dead worker's beat."""
        await self._at(self._beats_key, lambda r: r.hdel(self._beats_key, worker), key=True)
