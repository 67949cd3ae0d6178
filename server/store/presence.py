"""Presence marks: which identified players have a connection to a tournament, on which
worker, as of when. Each worker marks its own players and renews the marks
(:mod:`server.tournaments.presence`); a dead worker's marks age, and a round seats only the
players marked since its start less a while."""

from __future__ import annotations

from typing import Protocol

__all__ = ["PresenceMarks"]


class PresenceMarks(Protocol):
    """The presence marks of every tournament. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable`."""

    async def mark(self, tid: str, players: list[str], now: int) -> None:
        """This worker has connections of ``players`` on the tournament at ``now`` (ms)."""
        ...

    async def drop(self, tid: str, players: list[str]) -> None:
        """This worker no longer has a connection of ``players`` on the tournament."""
        ...

    async def present(self, tid: str, since: int) -> dict[str, str]:
        """The players some worker marked present at ``since`` or later, each with the
        worker that marked them last (its connection is where the player's seat of a round
        will be played)."""
        ...
