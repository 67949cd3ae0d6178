"""Worker beats, for liveness (:mod:`server.rooms.liveness`): each worker writes a beat that
the others see change; a worker whose beat stops changing is dead, and its seats are freed.
The judging is the liveness layer's; the store only keeps the beats."""

from __future__ import annotations

from typing import Protocol

__all__ = ["Beats"]


class Beats(Protocol):
    """Every worker's last beat. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable`."""

    async def beat(self) -> None:
        """Tell the other workers this one is alive (a new beat: see :meth:`latest`)."""
        ...

    async def latest(self) -> dict[str, str]:
        """The last beat of every worker kept: worker → beat. A worker is alive while its
        beat changes."""
        ...

    async def forget(self, worker: str) -> None:
        """Drop a dead worker's beat."""
        ...
