"""The models the wire and the HTTP API share (no I/O): the games' names, a room's phase, a
connection's role, a seat's and a race's statuses, the live directory's entries
(``live_rooms`` on the websocket, ``GET /api/live``) and a racer's rating change
(``race_recorded``, ``GET /api/games/{id}``). Both :mod:`protocol.messages` and
:mod:`protocol.api` import them from here, so neither imports the other for them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = [
    "FeaturedRace",
    "FinalStatus",
    "GameName",
    "LivePlayer",
    "LiveRoom",
    "LiveSort",
    "Phase",
    "RaceStatus",
    "RatingChange",
    "Role",
    "SeatStatus",
]

GameName = Literal["easy-harp", "klondike", "klondike-3"]
Phase = Literal["lobby", "running", "ended"]
"""A room's phase: between races (``lobby``), racing, or after a race (``ended``)."""
Role = Literal["player", "spectator"]
"""What a connection is in its room: a player (a seat) or a spectator."""
FinalStatus = Literal["won", "resigned", "timeout", "left"]
"""How a racer's race ended (``left``: abandoned a rated race)."""
RaceStatus = Literal["playing", "won", "resigned", "timeout", "left"]
"""A racer's status in a race: ``playing``, then a :data:`FinalStatus`."""
SeatStatus = Literal["waiting", "playing", "won", "resigned", "timeout", "left", "disconnected"]
"""A seat's status as the room is shown it: a :data:`RaceStatus`, ``waiting`` (not in the
race) or ``disconnected`` (playing, without a connection)."""
LiveSort = Literal["closest", "watched", "newest"]
"""Orders of the live directory (docs/protocol.md, "The live directory")."""


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class LivePlayer(_Message):
    """A player of a live race, as its spectators see it (``elapsed_ms``: the finishing
    time, null while playing)."""

    seat: int
    name: str
    connected: bool
    status: SeatStatus
    on_foundations: int = 0
    total: int = 0
    score: int = 0
    moves: int = 0
    elapsed_ms: int | None = None


class LiveRoom(_Message):
    """A public race in the live directory, as its spectators see it (after the room's
    spectator delay). ``phase``: ``lobby`` (about to start: waiting for the host) or
    ``running`` (from the countdown on). ``gap``: the share of the cards between the
    leader and the runner-up (0: level; null: fewer than two racers). ``boards``: what a
    spectator who is not racing is shown of the racers' boards — ``live``, ``delayed`` (by
    the spectator delay) or ``progress`` (no board while the race runs: a room that shows
    progress only, the day's deal, a tournament round); ``follow`` is refused then."""

    room: str
    game: GameName
    phase: Literal["lobby", "running"]
    race: int
    start_at: int | None
    deadline: int | None
    created_at: int
    spectators: int
    spectator_delay: int
    players: list[LivePlayer]
    gap: float | None = None
    boards: Literal["live", "delayed", "progress"] = "live"


class FeaturedRace(_Message):
    """The featured race of a game (``GET /tv``), or null when none is running."""

    game: GameName
    room: str | None


class RatingChange(_Message):
    """What a rated race did to one racer's rating, as results show it: ``rating``
    (``change``), e.g. "1520 (+12)", with a "?" after the rating while it is
    ``provisional``. Whole points: ``change`` is the new rating less the old one as each
    was shown. ``abandoned``: the racer left or stopped moving, and lost to everyone who
    did not (docs/ratings.md)."""

    seat: int
    player: str
    rating: int
    change: int
    rd: int
    provisional: bool
    abandoned: bool = False
