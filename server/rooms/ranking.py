"""The race ranking as a pure key, for anything that ranks races (rooms, tournament rounds).

:func:`race_key` orders results exactly as :func:`server.room.rank` does, without its final
tie-break by seat: a race is ranked winners first by finishing time (ties: fewer moves), then
everyone else by cards on the foundations, then score, then fewer moves. Two results with the
same key are tied in the race; a room breaks that tie by seat number (``rank``), a tournament
round lets the players share the place. ``tests/test_tournament_scoring.py`` checks that
``sorted(rows, key=lambda p: (*race_key(p), p.seat))`` is ``room.rank(rows)``, so the two
cannot drift apart; ``room.rank`` can be written on top of this key when ``room.py`` is next
changed.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["RaceProgress", "race_key"]


class RaceProgress(Protocol):
    """What the ranking reads of a result (``ProgressState`` and ``RoundResult`` have it)."""

    @property
    def status(self) -> str:
        """``won``, ``resigned``, ``timeout`` (or ``playing`` in a live race)."""

    @property
    def elapsed_ms(self) -> int | None:
        """Finishing time of a won race, ms from the race's start."""

    @property
    def moves(self) -> int:
        """The move counter."""

    @property
    def on_foundations(self) -> int:
        """Cards home."""

    @property
    def score(self) -> int:
        """The game's own score."""


def race_key(p: RaceProgress) -> tuple[int, int, int, int]:
    """The sort key of a result in its race: lower is better, equal keys are tied."""
    if p.status == "won":
        return (0, p.elapsed_ms or 0, p.moves, 0)
    return (1, -p.on_foundations, -p.score, p.moves)
