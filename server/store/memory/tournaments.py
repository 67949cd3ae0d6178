"""The memory backend's tournaments: one process, so every write is atomic by itself (no
await between reading and writing). The same semantics as Redis: events numbered and
published on the channel ``T:<id>``, a finished tournament forgotten a day after its last
change (its record is in the records store)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import TypeVar

import orjson

from ...tournaments.live import (
    LiveSnapshot,
    LiveTournament,
    Summary,
    TournamentUpdate,
    UnknownTournament,
    summary_of,
)
from ..backend import TOURNAMENT_CHANNEL, stamp_event

__all__ = ["FINISHED_TOURNAMENT_TTL", "TOURNAMENT_TTL", "MemoryTournaments"]

T = TypeVar("T")

#: seconds a tournament is kept after its last change (finished: after the end)
TOURNAMENT_TTL = 7 * 86_400
FINISHED_TOURNAMENT_TTL = 86_400


@dataclass(slots=True)
class _Tournament:
    live: str  # LiveTournament JSON: a stored copy, never aliased
    summary: Summary
    seq: int = 0
    events: deque[bytes] = field(default_factory=deque)
    moves: dict[tuple[int, str], str] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)
    expires_at: float = 0.0


class MemoryTournaments:
    """``Backend``'s tournament methods for :class:`~server.memory.MemoryBackend` (which
    gives ``_publish`` and ``event_cap``)."""

    event_cap: int
    worker_id: str

    def __init__(self) -> None:
        super().__init__()
        self._tournaments: dict[str, _Tournament] = {}
        #: the tournaments not retired: id → listed (public)
        self._active_tournaments: dict[str, bool] = {}

    def _publish(self, code: str, data: bytes) -> None:  # pragma: no cover - the backend's
        raise NotImplementedError

    def _tournament(self, tid: str) -> _Tournament:
        entry = self._tournaments.get(tid)
        if entry is None or entry.expires_at <= time.monotonic():
            self._tournaments.pop(tid, None)
            raise UnknownTournament(tid)
        return entry

    def _keep(
        self, entry: _Tournament, live: LiveTournament, events: list[dict[str, object]]
    ) -> int:
        entry.live = live.model_dump_json()
        entry.summary = summary_of(live)
        finished = live.state.phase == "finished"
        entry.expires_at = time.monotonic() + (
            FINISHED_TOURNAMENT_TTL if finished else TOURNAMENT_TTL
        )
        for body in events:
            entry.seq += 1
            data = stamp_event(entry.seq, orjson.dumps(body))
            entry.events.append(data)
            if len(entry.events) > self.event_cap:
                entry.events.popleft()
            self._publish(TOURNAMENT_CHANNEL + live.state.id, data)
        return entry.seq

    async def create_tournament(
        self, live: LiveTournament, events: list[dict[str, object]]
    ) -> bool:
        """Store a new tournament unless its id is taken."""
        tid = live.state.id
        try:
            self._tournament(tid)
            return False
        except UnknownTournament:
            pass
        entry = _Tournament(live="", summary=summary_of(live))
        self._tournaments[tid] = entry
        self._active_tournaments[tid] = not live.state.settings.private
        self._keep(entry, live, events)
        return True

    async def load_tournament(self, tid: str) -> LiveSnapshot | None:
        """A copy of the tournament."""
        try:
            entry = self._tournament(tid)
        except UnknownTournament:
            return None
        return LiveSnapshot(LiveTournament.model_validate_json(entry.live), entry.seq)

    async def update_tournament(
        self, tid: str, update: TournamentUpdate[T]
    ) -> tuple[LiveSnapshot, T]:
        """Apply ``update`` to a copy; keep it only if it returns."""
        entry = self._tournament(tid)
        live = LiveTournament.model_validate_json(entry.live)
        events, value = update(live)
        live.rev += 1
        seq = self._keep(entry, live, events)
        return LiveSnapshot(live, seq), value

    async def tournament_summaries(self, ids: list[str]) -> list[Summary]:
        """The summaries of the tournaments still kept."""
        out = []
        for tid in ids:
            try:
                out.append(self._tournament(tid).summary.model_copy())
            except UnknownTournament:
                continue
        return out

    async def active_tournaments(self, *, public: bool = False) -> list[str]:
        """Tournaments not retired, oldest first."""
        active = self._active_tournaments
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

    async def retire_tournament(self, tid: str) -> None:
        """Off the active lists."""
        self._active_tournaments.pop(tid, None)

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

    async def mark_present(self, tid: str, players: list[str], now: int) -> None:
        """One process: present is present."""
        try:
            entry = self._tournament(tid)
        except UnknownTournament:
            return
        for player in players:
            entry.present[player] = now

    async def drop_present(self, tid: str, players: list[str]) -> None:
        """No longer present."""
        try:
            entry = self._tournament(tid)
        except UnknownTournament:
            return
        for player in players:
            entry.present.pop(player, None)

    async def present(self, tid: str, since: int) -> dict[str, str]:
        """The players marked present since ``since`` (all on this one worker)."""
        try:
            entry = self._tournament(tid)
        except UnknownTournament:
            return {}
        return {p: self.worker_id for p, at in entry.present.items() if at >= since}

    async def hold_lease(self, tid: str, ms: int) -> bool:
        """One process holds every lease."""
        return True
