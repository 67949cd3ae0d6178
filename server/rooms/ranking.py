"""The one ranking rule, pure: how a race's results are ordered, and how places are given.

**Order.** :func:`race_key` ranks a race's results: winners first by finishing time (ties:
fewer moves), then everyone else by cards on the foundations, then score, then fewer moves.
A room's results, a tournament round's ranking (:mod:`server.tournaments.scoring`) and the
ratings all order by it.

**Places.** :func:`places` gives the places of results listed in their ranking order:
equal keys share a place, and the next result's place counts everyone ahead of it — 1, 2,
2, 4 ("standard competition ranking"). Every ranking a player reads uses it, whatever its
key: a room's results and their share text, the daily leaderboard (by its own key: score,
moves, time), a tournament round and the tournament's standings. Results that share a
place are listed in a stable order (a room's by seat, a tournament's by join order); the
order says nothing about who was better.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, TypeVar

from protocol import RaceStatus

__all__ = ["RaceProgress", "places", "race_key", "ranked"]

T = TypeVar("T")


class RaceProgress(Protocol):
    """What the ranking reads of a result (``ProgressState`` and ``RoundResult`` have it)."""

    @property
    def status(self) -> RaceStatus:
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


def places(keys: Sequence[object]) -> list[int]:
    """The place of each of ``keys``, given in ranking order (best first): a key equal to
    the one before shares its place; any other is placed after everyone ahead of it
    (``[a, b, b, c]`` → ``[1, 2, 2, 4]``)."""
    out: list[int] = []
    for i, key in enumerate(keys):
        out.append(out[-1] if i and key == keys[i - 1] else i + 1)
    return out


def ranked(
    rows: Iterable[T], key: Callable[[T], Any], then: Callable[[T], Any] | None = None
) -> list[tuple[int, T]]:
    """``rows`` best first by ``key`` (ties listed by ``then``, else as given), each with
    its place (:func:`places`)."""
    keyed = [(key(r), then(r) if then is not None else 0, i, r) for i, r in enumerate(rows)]
    keyed.sort(key=lambda k: k[:3])
    return list(zip(places([k[0] for k in keyed]), (k[3] for k in keyed), strict=True))
