"""Tournaments in one process: so every write is atomic by itself (no
await between reading and writing). The same semantics as Redis: events numbered and
published on the channel ``T:<id>``, a finished tournament forgotten a day after its last
change (its record is in the records store)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from ...tournaments.live import (
    LiveSnapshot,
    LiveTournament,
    Summary,
    TournamentUpdate,
    UnknownTournament,
    summary_of,
)
from ..tournaments import TOURNAMENT_CHANNEL
from .events import EventLog

__all__ = ["FINISHED_TOURNAMENT_TTL", "TOURNAMENT_TTL", "MemoryTournaments"]

T = TypeVar("T")

#: seconds a tournament is kept after its last change (finished: after the end)
TOURNAMENT_TTL = 7 * 86_400
FINISHED_TOURNAMENT_TTL = 86_400


@dataclass(slots=True)
class KeptTournament:
    """What is kept of one tournament."""

    live: str  # LiveTournament JSON: a stored copy, never aliased
    summary: Summary
    events: EventLog
    moves: dict[tuple[int, str], str] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)
    expires_at: float = 0.0


class MemoryTournaments:
    """:class:`~server.store.tournaments.TournamentStore` in dicts; events go out through
    ``publish`` (the broker's: room code, message), the last ``event_cap`` kept."""

    def __init__(self, publish: Callable[[str, bytes], None], event_cap: int) -> None:
        self._publish = publish
        self.event_cap = event_cap
        self._tournaments: dict[str, KeptTournament] = {}
        #: the tournaments not retired: id → listed (public)
        self._active: dict[str, bool] = {}

    def kept(self, tid: str) -> KeptTournament | None:
        """The kept tournament ``tid`` (its presence marks live with it); None if unknown."""
        try:
            return self._tournament(tid)
        except UnknownTournament:
            return None

    def _tournament(self, tid: str) -> KeptTournament:
        entry = self._tournaments.get(tid)
        if entry is None or entry.expires_at <= time.monotonic():
            self._tournaments.pop(tid, None)
            raise UnknownTournament(tid)
        return entry

    def _keep(
        self, entry: KeptTournament, live: LiveTournament, events: list[dict[str, object]]
    ) -> int:
        entry.live = live.model_dump_json()
        entry.summary = summary_of(live)
        finished = live.state.phase == "finished"
        entry.expires_at = time.monotonic() + (
            FINISHED_TOURNAMENT_TTL if finished else TOURNAMENT_TTL
        )
        for data in entry.events.stamp(events):
            self._publish(TOURNAMENT_CHANNEL + live.state.id, data)
        return entry.events.seq

    async def create(self, live: LiveTournament, events: list[dict[str, object]]) -> bool:
        """Store a new tournament unless its id is taken."""
        tid = live.state.id
        try:
            self._tournament(tid)
            return False
        except UnknownTournament:
            pass
        entry = KeptTournament(live="", summary=summary_of(live), events=EventLog(self.event_cap))
        self._tournaments[tid] = entry
        self._active[tid] = not live.state.settings.private
        self._keep(entry, live, events)
        return True

    async def load(self, tid: str) -> LiveSnapshot | None:
        """A copy of the tournament."""
        try:
            entry = self._tournament(tid)
        except UnknownTournament:
            return None
        return LiveSnapshot(LiveTournament.model_validate_json(entry.live), entry.events.seq)

    async def update(self, tid: str, update: TournamentUpdate[T]) -> tuple[LiveSnapshot, T]:
        """Apply ``update`` to a copy; keep it only if it returns."""
        entry = self._tournament(tid)
        live = LiveTournament.model_validate_json(entry.live)
        events, value = update(live)
        live.rev += 1
        seq = self._keep(entry, live, events)
        return LiveSnapshot(live, seq), value

    async def summaries(self, ids: list[str]) -> list[Summary]:
        """The summaries of the tournaments still kept."""
        out = []
        for tid in ids:
            try:
                out.append(self._tournament(tid).summary.model_copy())
            except UnknownTournament:
                continue
        return out

    async def active(self, *, public: bool = False) -> list[str]:
        """Tournaments not retired, oldest first."""
        active = self._active
        found = []
        for tid in list(active):
            try:
                entry = self._tournament(tid)
            except UnknownTournament:
                del active[tid]
                continue
            if not public or not entry.summary.private:
                found.append((entry.summary.created_at, tid))
        return [tid for _, tid in sorted(found)]

    async def retire(self, tid: str) -> None:
        """Off the active lists."""
        self._active.pop(tid, None)

    async def keep_round_moves(self, tid: str, number: int, moves: dict[str, str]) -> None:
        """Keep move lists of a round."""
        entry = self._tournament(tid)
        for player, text in moves.items():
            entry.moves[(number, player)] = text

    async def round_moves(self, tid: str) -> dict[tuple[int, str], str]:
        """Every kept move list."""
        try:
            return dict(self._tournament(tid).moves)
        except UnknownTournament:
            return {}

    async def hold_lease(self, tid: str, lease_ms: int) -> bool:
        """One process holds every lease."""
        return True
