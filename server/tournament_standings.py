"""The live standings a worker pushes to the connections following a tournament.

A push (at most every ``STANDINGS_INTERVAL`` per tournament and worker, after a change) used
to rank the whole field and write a frame to every follower in one turn of the event loop:
with 1,000 players that turn held every move behind it (and the load generator's process,
reading 500 frames at once, held its acks too). Now:

* the standings are ranked again only when what they count changed
  (:func:`~server.tournaments.scoring.standings_key`: in a round, recording results changes
  the round's live ranking, not the standings of the ended rounds), and their shared rows
  are encoded once per ranking (:class:`Table`);
* the frames are written :data:`SLICE` followers at a time with a pause between slices
  (:func:`pause_between`: :data:`SLICE_PAUSE`, shorter when there are so many slices that
  the pauses would add up to more than :data:`SPREAD`), so moves are answered between them
  — a push to 500 followers takes about a tenth of a second, well inside the second the
  standings have, and always less than the interval between two pushes, so a push is
  never overtaken by the next one (which would leave the last followers without any).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import orjson

from .tournament_updates import PLAYER_ROWS
from .tournaments import TournamentState, standings, standings_key

__all__ = ["SLICE", "SLICE_PAUSE", "SPREAD", "WATCHER_ROWS", "Table", "pause_between", "slices"]

T = TypeVar("T")

#: rows of the standings hosts and spectators are sent (players: PLAYER_ROWS)
WATCHER_ROWS: Final = 200
#: followers written to in one turn of the loop, and the pause between turns (seconds)
SLICE: Final = 50
SLICE_PAUSE: Final = 0.01
#: the pauses of one push add up to at most this (seconds; pushes come 0.5 s apart at most)
SPREAD: Final = 0.2


@dataclass(slots=True)
class Table:
    """A tournament's standings as a worker last ranked them: the rows' count, the top rows
    encoded once (players', watchers'), and each player's own row."""

    key: tuple[Any, ...] | None = None
    count: int = 0
    top_players: bytes = b"[]"
    top_watchers: bytes = b"[]"
    by_player: dict[str, dict[str, Any]] = field(default_factory=dict)

    def update(self, state: TournamentState) -> bool:
        """Rank ``state``'s standings unless they count what they counted last time;
        whether they were ranked again."""
        key = standings_key(state)
        if key == self.key:
            return False
        rows = [row.as_json() for row in standings(state)]
        self.key = key
        self.count = len(rows)
        self.top_players = orjson.dumps(rows[:PLAYER_ROWS])
        self.top_watchers = orjson.dumps(rows[:WATCHER_ROWS])
        self.by_player = {row["player"]: row for row in rows}
        return True


def slices(items: Sequence[T], size: int = SLICE) -> Iterator[Sequence[T]]:
    """``items`` in consecutive slices of at most ``size`` (``size`` ≥ 1)."""
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + size]


def pause_between(followers: int, size: int = SLICE) -> float:
    """The pause between two slices of a push to ``followers`` (seconds)."""
    gaps = max(1, -(-followers // max(1, size)) - 1)
    return min(SLICE_PAUSE, SPREAD / gaps)
