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
  never overtaken by the next one (which would leave the last followers without any);
* the state a push reads is a parsed copy the worker keeps (:class:`LiveCopy`), to which
  the results recorded in the round are added from their ``round_result`` events: a
  change costs what changed — reading and parsing the whole state (170 KB with 1,000
  players, 4–5 ms a turn, on every worker after every change) only after other changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

import orjson
from pydantic import ValidationError

from ..store.errors import StoreUnavailable
from ..store.tournaments import TournamentStore
from . import RoundResult, TournamentState, standings, standings_key
from .live import LiveSnapshot, LiveTournament
from .state import current_round
from .updates import PLAYER_ROWS

__all__ = [
    "SLICE",
    "SLICE_PAUSE",
    "SPREAD",
    "WATCHER_ROWS",
    "LiveCopy",
    "Table",
    "add_result",
    "pause_between",
    "slices",
]

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


#: the fields of a ``round_result`` event that are the result (the rest: seq, type, …)
_RESULT_FIELDS: Final = frozenset(RoundResult.model_fields) - {
    "move_list",
    "disqualified",
    "disqualify_reason",
}


def add_result(state: TournamentState, event: dict[str, Any]) -> bool:
    """Apply a stored ``round_result`` event to ``state`` as the act that made it did
    (:func:`~server.tournaments.round_result`: the result, without its move list, in the
    round being played; ``version`` one up); False — ``state`` unchanged — if it is not
    that event or does not fit ``state`` (then it is not the state the event follows)."""
    current = current_round(state)
    if event.get("type") != "round_result" or current is None:
        return False
    if event.get("round") != current.number:
        return False
    try:
        result = RoundResult.model_validate({k: v for k, v in event.items() if k in _RESULT_FIELDS})
    except ValidationError:
        return False
    if result.player not in current.participants or result.player in current.results:
        return False
    current.results[result.player] = result
    state.version += 1
    return True


@dataclass(slots=True)
class LiveCopy:
    """A worker's parsed copy of a tournament, for its standings pushes: read whole from the
    store, then kept current by the tournament's events as they are delivered (in ``seq``
    order) where an event tells the whole change — a result recorded in the round — and
    dropped at any other event, or a gap, so that the next push reads the store again.

    Read only, and only for what the standings show: ``live.rev`` and what is not the state
    (rooms, records) are as read."""

    live: LiveTournament | None = None
    #: the last event the copy includes
    seq: int = 0
    #: the last event delivered here
    seen: int = 0

    async def current(self, tournaments: TournamentStore, tid: str) -> LiveTournament | None:
        """The copy — read from the store first if there is none (None: the tournament is
        gone, or the store cannot be reached)."""
        if self.live is not None:
            return self.live
        try:
            snap = await tournaments.load(tid)
        except StoreUnavailable:
            return None
        if snap is None:
            return None
        self.take(snap)
        return snap.live

    def take(self, snap: LiveSnapshot) -> None:
        """A fresh read of the store: kept unless an event after it was delivered already
        (it would be missing from the copy)."""
        if snap.seq >= self.seen:
            self.live, self.seq, self.seen = snap.live, snap.seq, snap.seq
        else:
            self.live = None

    def delivered(self, event: dict[str, Any]) -> None:
        """An event of the tournament, delivered here in ``seq`` order."""
        seq = int(event["seq"])
        if seq <= self.seen:
            return  # in the copy already
        self.seen = seq
        live = self.live
        if live is None:
            return
        if seq != self.seq + 1 or not add_result(live.state, event):
            self.live = None
            return
        self.seq = seq
