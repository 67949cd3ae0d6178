"""The HTTP JSON API of finished games and players: response models (no I/O).

* ``GET /api/games/{id}`` → :class:`GameReplay`: a finished race, every racer's full move
  list with the server time of each move.
* ``GET /api/games/{id}/seats/{seat}/moves`` → ``text/plain``: one racer's move list as
  :func:`moves_text` writes it; ``samedeal replay DEAL -`` reads it back.
* ``GET /api/players/{handle}`` → :class:`PlayerPage`: recent races and per-game stats.
* ``GET /api/live`` → :class:`LiveDirectory`: the public races being played now and those
  about to start, and the featured race of each game (the wire's ``live_rooms`` models).
* Any error → :class:`ApiError` with the HTTP status (400 malformed, 404 unknown).

``protocol/openapi.json`` (written by ``python -m protocol.openapi``) documents them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .messages import FeaturedRace, LiveRoom, LiveSort

__all__ = [
    "API_MODELS",
    "PLAYER_ID_PATTERN",
    "RACE_ID_PATTERN",
    "ApiError",
    "GameReplay",
    "GameStats",
    "LiveDirectory",
    "PlayerPage",
    "PlayerRef",
    "RaceLine",
    "SeatReplay",
    "moves_text",
]

GameName = Literal["easy-harp", "klondike", "klondike-3"]
FinalStatus = Literal["won", "resigned", "timeout", "left"]
RACE_ID_PATTERN = r"^[0-9a-hjkmnp-tv-z]{12}$"
PLAYER_ID_PATTERN = r"^[0-9a-hjkmnp-tv-z]{16}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ApiError(_Model):
    """An error reply: a stable ``error`` key and a sentence for people."""

    error: str = Field(examples=["unknown_game"])
    message: str = Field(examples=["no finished game has this id"])


class PlayerRef(_Model):
    """Who sat in a seat, when they had an identity. ``handle`` names their player page;
    ``deleted``: the identity was deleted (the seat's name is then "deleted player")."""

    id: str = Field(pattern=PLAYER_ID_PATTERN)
    handle: str | None = None
    deleted: bool = False


class SeatReplay(_Model):
    """One racer of a finished race: the result and the whole game.

    ``actions`` is the move list in move notation (``docs/spec/moves.md``), undo and
    auto-finish included; ``action_times_ms[i]`` is the server time of ``actions[i]`` in ms
    after the race started. ``moves`` is the game's move counter, as in ``race_ended``
    (Klondike counts an undo as a move). ``elapsed_ms`` is the finishing time (null: did not
    finish).
    """

    seat: int
    name: str
    player: PlayerRef | None
    status: FinalStatus
    rank: int = Field(ge=1)
    score: int
    moves: int
    on_foundations: int
    elapsed_ms: int | None
    actions: list[str]
    action_times_ms: list[int]


class GameReplay(_Model):
    """``GET /api/games/{id}``: a finished race. Only finished races are stored, so a
    replay never shows a race still being played."""

    id: str = Field(pattern=RACE_ID_PATTERN)
    game: GameName
    deal: str = Field(description="the deal code: `samedeal deal CODE` shows the layout")
    race: int = Field(description="the race's number in its room")
    started_at: int = Field(description="server time the race started, ms since the epoch")
    ended_at: int = Field(description="server time the race ended, ms since the epoch")
    seats: list[SeatReplay]


class RaceLine(_Model):
    """One race of a player's history and how they did in it."""

    id: str = Field(pattern=RACE_ID_PATTERN)
    game: GameName
    deal: str
    ended_at: int
    racers: int
    seat: int
    status: FinalStatus
    rank: int
    score: int
    moves: int
    on_foundations: int
    elapsed_ms: int | None


class GameStats(_Model):
    """A player's figures in one game. Won: the deal solved; a streak counts races won in
    a row, in the order they ended. ``best_time_ms``: the fastest win (null: no win)."""

    game: GameName
    played: int
    won: int
    win_pct: float = Field(description="won per hundred played, one decimal")
    best_time_ms: int | None
    best_score: int
    current_streak: int
    longest_streak: int


class PlayerPage(_Model):
    """``GET /api/players/{handle}``: a player's recent races (latest first, with the ids
    of their replays) and stats per game."""

    handle: str
    name: str
    since: int = Field(description="when the identity was made, ms since the epoch")
    stats: list[GameStats]
    recent: list[RaceLine]


class LiveDirectory(_Model):
    """``GET /api/live``: the first ``rooms`` in ``sort`` order (of ``game`` only, when
    asked) out of ``total`` public races listed, as their spectators see them (after each
    room's spectator delay), and the featured race of each game. Private rooms and rooms
    closed to spectators are never listed. ``now``: the server clock, ms since the epoch.

    Orders: ``closest`` — races of two or more racers first, smallest ``gap`` first;
    ``watched`` — most spectators first; ``newest`` — latest start (or creation, for a
    room waiting to start) first. Ties: the room code."""

    sort: LiveSort
    game: GameName | None = None
    total: int
    now: int
    rooms: list[LiveRoom]
    featured: list[FeaturedRace]


API_MODELS: tuple[type[BaseModel], ...] = (ApiError, GameReplay, PlayerPage, LiveDirectory)
"""The response models the OpenAPI document lists."""


def moves_text(moves: Sequence[str], width: int = 78) -> str:
    """A move list as plain text: the actions in move notation separated by spaces, lines
    kept under ``width`` characters, a final newline. ``samedeal replay DEAL -`` reads it
    back to the same position."""
    lines: list[str] = []
    line = ""
    for move in moves:
        if line and len(line) + 1 + len(move) > width:
            lines.append(line)
            line = move
        else:
            line = f"{line} {move}" if line else move
    if line:
        lines.append(line)
    return "".join(f"{line}\n" for line in lines)
