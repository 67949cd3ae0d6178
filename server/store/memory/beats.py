"""Beats in one process: there is no other worker to tell, or to find dead."""

from __future__ import annotations

__all__ = ["MemoryBeats"]


class MemoryBeats:
    """:class:`~server.store.beats.Beats` of a store no other worker shares: none kept."""

    async def beat(self) -> None:
        """Nobody to tell."""

    async def latest(self) -> dict[str, str]:
        """No worker's beat is kept."""
        return {}

    async def forget(self, worker: str) -> None:
        """Nothing kept to drop."""
