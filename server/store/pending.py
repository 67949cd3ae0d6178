"""Pending writes: records writes the records store has not confirmed yet (a finished race),
kept in the shared store so that another worker makes them if this one dies first."""

from __future__ import annotations

from typing import Protocol

__all__ = ["PendingWrites"]


class PendingWrites(Protocol):
    """The kept writes of the whole deployment. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable` (nothing changed)."""

    async def keep(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key`` until :meth:`drop`; keeping the same key again
        replaces it."""
        ...

    async def due(self, older_than: float, limit: int = 100) -> list[tuple[str, bytes]]:
        """Up to ``limit`` kept writes older than ``older_than`` seconds; each is claimed
        (its age starts again), so workers asking at once rarely take the same one (and a
        write made twice is harmless)."""
        ...

    async def drop(self, key: str) -> None:
        """The write kept under ``key`` is done."""
        ...

    async def count(self) -> int:
        """How many writes are kept, not yet confirmed."""
        ...
