"""The memory store's link: nothing to connect to, so always healthy; what it keeps running
is the sweep that drops expired rooms."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from ..health import HealthWatch

__all__ = ["MemoryLink"]


class MemoryLink:
    """:class:`~server.store.Link` of one process: ``sweep`` (the rooms') called every
    ``interval`` seconds while open."""

    def __init__(self, sweep: Callable[[], object], interval: float = 30.0) -> None:
        self.watch = HealthWatch("memory", [])
        self._sweep = sweep
        self._interval = interval
        self._sweeper: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Start the expiry sweep."""
        self._sweeper = asyncio.create_task(self._sweep_loop())

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            self._sweep()

    async def ping(self) -> float:
        """No store to reach."""
        return 0.0

    async def close(self) -> None:
        """Stop the sweep."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
