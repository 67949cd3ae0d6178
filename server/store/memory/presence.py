"""Presence marks in one process: kept with each tournament (they expire with it), and every
player present is present on this one worker."""

from __future__ import annotations

from .tournaments import MemoryTournaments

__all__ = ["MemoryPresence"]


class MemoryPresence:
    """:class:`~server.store.presence.PresenceMarks` kept in ``tournaments``' entries."""

    def __init__(self, tournaments: MemoryTournaments, worker_id: str) -> None:
        self._tournaments = tournaments
        self.worker_id = worker_id

    async def mark(self, tid: str, players: list[str], now: int) -> None:
        """One process: present is present."""
        entry = self._tournaments.kept(tid)
        if entry is None:
            return
        for player in players:
            entry.present[player] = now

    async def drop(self, tid: str, players: list[str]) -> None:
        """No longer present."""
        entry = self._tournaments.kept(tid)
        if entry is None:
            return
        for player in players:
            entry.present.pop(player, None)

    async def present(self, tid: str, since: int) -> dict[str, str]:
        """The players marked present since ``since`` (all on this one worker)."""
        entry = self._tournaments.kept(tid)
        if entry is None:
            return {}
        return {p: self.worker_id for p, at in entry.present.items() if at >= since}
