"""Pending writes in one process (a dict): nobody else could make them, but the server keeps
them the same way on every store."""

from __future__ import annotations

import time

__all__ = ["MemoryPending"]


class MemoryPending:
    """:class:`~server.store.pending.PendingWrites` in a dict: key → (data, when kept)."""

    def __init__(self) -> None:
        self._kept: dict[str, tuple[bytes, float]] = {}

    async def keep(self, key: str, data: bytes) -> None:
        """Keep a write to confirm."""
        self._kept[key] = (data, time.monotonic())

    async def due(self, older_than: float, limit: int = 100) -> list[tuple[str, bytes]]:
        """The kept writes older than ``older_than`` seconds, claimed."""
        now = time.monotonic()
        due = [(k, d) for k, (d, at) in self._kept.items() if now - at >= older_than][:limit]
        for key, data in due:
            self._kept[key] = (data, now)
        return due

    async def drop(self, key: str) -> None:
        """The write is done."""
        self._kept.pop(key, None)

    async def count(self) -> int:
        """How many writes are kept."""
        return len(self._kept)
