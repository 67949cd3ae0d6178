"""Tournaments' live state as the store keeps it: each tournament's stored form
(:class:`~server.tournaments.live.LiveTournament`) changed by atomic updates, its summary,
its events, the lists of active and public tournaments, the move lists of its rounds and
the lease of the worker that runs its timers."""

from __future__ import annotations

from typing import Protocol, TypeVar

from ..tournaments.live import LiveSnapshot, LiveTournament, Summary, TournamentUpdate

__all__ = ["TOURNAMENT_CHANNEL", "TournamentStore"]

T = TypeVar("T")

TOURNAMENT_CHANNEL = "T:"
"""A tournament's events travel on the room channel of code ``T:<id>`` (its keys share the
hash tag ``{T:<id>}``): subscribing, ordering and gap repair are the rooms' own."""


class TournamentStore(Protocol):
    """Where live tournaments are kept. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable` (nothing changed)."""

    async def create(self, live: LiveTournament, events: list[dict[str, object]]) -> bool:
        """Store a new tournament (and its summary, in the list of active ones, and of
        public ones unless private) and publish ``events``; False if its id is taken."""
        ...

    async def load(self, tid: str) -> LiveSnapshot | None:
        """The tournament's stored form and its last event seq; None if unknown."""
        ...

    async def update(self, tid: str, update: TournamentUpdate[T]) -> tuple[LiveSnapshot, T]:
        """Apply ``update`` atomically — optimistically: read, apply, write only if nobody
        wrote meanwhile (``rev``), else again — store the summary, and store and publish
        its events on the tournament's channel. Raises what ``update`` raises (nothing
        changed) and :class:`~server.tournaments.live.UnknownTournament`."""
        ...

    async def summaries(self, ids: list[str]) -> list[Summary]:
        """The summaries of the tournaments ``ids`` still stored, in that order."""
        ...

    async def active(self, *, public: bool = False) -> list[str]:
        """The ids of the tournaments not retired (``public``: only those listed), oldest
        first."""
        ...

    async def retire(self, tid: str) -> None:
        """Take a finished tournament, written to the records, off the active lists (its
        state stays until it expires)."""
        ...

    async def keep_round_moves(self, tid: str, number: int, moves: dict[str, str]) -> None:
        """Keep the move lists (text, actions separated by spaces) of players' races in
        round ``number``."""
        ...

    async def round_moves(self, tid: str) -> dict[tuple[int, str], str]:
        """Every kept move list: (round, player) → text."""
        ...

    async def hold_lease(self, tid: str, lease_ms: int) -> bool:
        """Take the tournament's lease for ``lease_ms``, or renew it if this worker holds it;
        whether this worker holds it now. The holder runs the tournament's timers."""
        ...
