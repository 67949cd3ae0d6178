"""The in-memory backend: one process, no Redis. Same semantics as the Redis backend —
rooms expire, event lists are capped — so nothing grows without bound."""

from __future__ import annotations

import asyncio
import contextlib

from ..backend import Backend
from ..broker import Listener
from .beats import MemoryBeats
from .broker import MemoryBroker
from .directory import MemoryDirectory
from .pending import MemoryPending
from .presence import MemoryPresence
from .rooms import MemoryRooms
from .tournaments import MemoryTournaments

__all__ = ["MemoryBackend"]


class MemoryBackend(Backend):
    """Every part in this process's memory; publishing calls the listener directly."""

    rooms: MemoryRooms

    def __init__(
        self,
        *,
        worker_id: str = "memory",
        event_cap: int = 500,
        active_ttl: float = 6 * 3600,
        finished_ttl: float = 3600,
        sweep_interval: float = 30.0,
    ) -> None:
        super().__init__()
        self.worker_id = worker_id
        self._sweep_interval = sweep_interval
        self._sweeper: asyncio.Task[None] | None = None
        self.broker = broker = MemoryBroker()
        self.rooms = MemoryRooms(
            broker.publish, event_cap=event_cap, active_ttl=active_ttl, finished_ttl=finished_ttl
        )
        self.pending = MemoryPending()
        self.beats = MemoryBeats()
        self.directory = MemoryDirectory(worker_id)
        self.tournaments = MemoryTournaments(broker.publish, event_cap)
        self.presence = MemoryPresence(self.tournaments, worker_id)

    async def start(self, listener: Listener) -> None:
        """Remember the listener and start the expiry sweep."""
        await self.broker.listen(listener)
        self._sweeper = asyncio.create_task(self._sweep_loop())

    async def close(self) -> None:
        """Stop the sweep."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval)
            self.rooms.sweep()

    async def ping(self) -> float:
        """No store to reach."""
        return 0.0
