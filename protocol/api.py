"""The HTTP JSON API of rooms, finished games and players: response models (no I/O).

* ``GET /api/rooms/{code}[?key=KEY]`` → :class:`RoomSummary`: what an invitation link shows
  before joining. A private room without its key is answered like an unknown room (404).

* ``GET /api/games/{id}`` → :class:`GameReplay`: a finished race, every racer's full move
  list with the server time of each move.
* ``GET /api/games/{id}/seats/{seat}/moves`` → ``text/plain``: one racer's move list as
  :func:`moves_text` writes it; ``samedeal replay DEAL -`` reads it back.
* ``GET /api/games/{id}/seats/{seat}/boards`` → :class:`SeatBoards`: one racer's starting
  board and what each of their actions changed on it, computed by the engine (the browser
  has no engine: it merges them as it merges a live ``ack``).
* ``GET /api/players/{handle}`` → :class:`PlayerPage`: recent races, per-game stats and the
  daily challenge's streaks and best scores (:class:`DailyStats`), the rating per game
  (:class:`GameRating`).
* ``GET /api/players/{handle}/ratings/{game}`` → :class:`RatingHistory`: the rating after
  each rated race, for a chart.
* ``GET /api/leaderboard/{game}`` → :class:`Leaderboard`: the rated players active lately
  whose rating is not provisional, best first.
* ``GET /api/live`` → :class:`LiveDirectory`: the public races being played now and those
  about to start, and the featured race of each game (the wire's ``live_rooms`` models).
* ``GET /api/tournaments`` → :class:`TournamentList`: public tournaments, upcoming and running.
* ``GET /api/tournaments/{id}[?key=KEY]`` → :class:`TournamentPage`: what the tournament page
  shows (the websocket's ``tournament`` reply carries the same).
* ``GET /api/tournaments/{id}/results?format=json|ndjson|csv`` → :class:`TournamentResults`
  (NDJSON: one :class:`StandingRow` a line; CSV: one row a player).
* ``GET /api/tournaments/{id}/export`` → the full export (``samedeal tournament verify``).
* Any error → :class:`ApiError` with the HTTP status (400 malformed, 404 unknown).

``protocol/openapi.json`` (written by ``python -m protocol.openapi``) documents them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .live import (
    FeaturedRace,
    FinalStatus,
    GameName,
    LiveRoom,
    LiveSort,
    Phase,
    RaceStatus,
    RatingChange,
)

__all__ = [
    "API_MODELS",
    "PLAYER_ID_PATTERN",
    "RACE_ID_PATTERN",
    "ApiError",
    "AttemptStatus",
    "DailyBoard",
    "DailyDay",
    "DailyEntry",
    "DailyGame",
    "DailyStats",
    "DailyToday",
    "EntrantStatus",
    "GameRating",
    "GameReplay",
    "GameStats",
    "Leaderboard",
    "LeaderboardEntry",
    "LiveDirectory",
    "PlayerPage",
    "PlayerRef",
    "RaceLine",
    "RatingChange",
    "RatingHistory",
    "RatingPoint",
    "ResultStatus",
    "RoomSummary",
    "RoundStatus",
    "SeatBoards",
    "SeatReplay",
    "StandingRound",
    "StandingRow",
    "TiebreakRule",
    "TournamentAudit",
    "TournamentDraw",
    "TournamentList",
    "TournamentPage",
    "TournamentPhase",
    "TournamentPlayer",
    "TournamentResult",
    "TournamentResults",
    "TournamentRoom",
    "TournamentRound",
    "TournamentScoring",
    "TournamentSettingsView",
    "TournamentSummary",
    "moves_text",
]

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
    rating: RatingChange | None = Field(
        default=None, description="a rated race: the racer's new rating and its change"
    )


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
    rated: bool = Field(default=False, description="the race changed its racers' ratings")


class SeatBoards(_Model):
    """``GET /api/games/{id}/seats/{seat}/boards``: every board of one racer's game, as the
    racer saw it (the engine's player view: face-up cards only).

    ``start`` is the board before the first action. ``changes[i]`` is what ``moves[i]``
    changed on it, in the shape of a live ``ack``'s ``changes`` (``docs/protocol.md``):
    merging ``changes[0]`` … ``changes[i]`` into ``start`` in turn gives the board after
    action ``i``. ``moves[i]`` is the action as the engine resolved it (``t3-f`` → ``t3-f1``).
    """

    id: str = Field(pattern=RACE_ID_PATTERN)
    game: GameName
    seat: int
    start: dict[str, Any] = Field(description="the board before the first action")
    moves: list[str]
    changes: list[dict[str, Any]]


class RaceLine(_Model):
    """One race of a player's history and how they did in it (``deal`` null: a race on a
    day's secret deal, until that day is over)."""

    id: str = Field(pattern=RACE_ID_PATTERN)
    game: GameName
    deal: str | None
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


class DailyStats(_Model):
    """A player's figures in one daily game (each day's first attempt only: practice does
    not count). The streaks run up to today, or yesterday while today's is not played."""

    game: Literal["klondike", "easy-harp"]
    days_played: int
    days_won: int
    played_streak: int = Field(description="days played in a row, up to today or yesterday")
    won_streak: int = Field(description="days won in a row, up to today or yesterday")
    longest_played_streak: int
    longest_won_streak: int
    best_score: int | None = Field(description="the best score of an attempt that is over")


class GameRating(_Model):
    """A player's rating in one game (Glicko-2, whole points: docs/ratings.md), shown with a
    "?" while ``provisional``, and their rated record: a race of n racers counts as its
    pairwise results, so ``won`` + ``drawn`` + ``lost`` is the opponents met."""

    game: GameName
    rating: int
    rd: int = Field(description="the rating deviation: the rating is ± twice this, 95% sure")
    provisional: bool = Field(description="RD still too high: shown `1500?`, not on leaderboards")
    races: int = Field(description="rated races played")
    won: int = Field(description="opponents finished ahead of")
    drawn: int = Field(description="opponents finished level with")
    lost: int = Field(description="opponents finished behind")
    abandoned: int = Field(description="rated races left, or run out of time without moving")
    last_race_at: int = Field(description="when the last rated race ended, ms since the epoch")


class PlayerPage(_Model):
    """``GET /api/players/{handle}``: a player's recent races (latest first, with the ids
    of their replays), stats per game, their daily challenge (``daily``: per daily game
    they have played) and their rating in each game they have played rated races of."""

    handle: str
    name: str
    since: int = Field(description="when the identity was made, ms since the epoch")
    stats: list[GameStats]
    recent: list[RaceLine]
    daily: list[DailyStats] = Field(default_factory=list)
    ratings: list[GameRating] = Field(default_factory=list)


class RatingPoint(_Model):
    """The rating after one rated race."""

    game_id: str = Field(pattern=RACE_ID_PATTERN, description="the race (its replay)")
    at: int = Field(description="when the race ended, ms since the epoch")
    rating: int
    rd: int
    change: int
    provisional: bool


class RatingHistory(_Model):
    """``GET /api/players/{handle}/ratings/{game}``: the player's rating in one game now
    (null: no rated race of it yet) and after each rated race, oldest first (the latest
    ``limit`` races): the points of a chart."""

    handle: str
    game: GameName
    current: GameRating | None
    points: list[RatingPoint]


class LeaderboardEntry(_Model):
    """A player on a game's leaderboard."""

    rank: int = Field(ge=1)
    player: str = Field(pattern=PLAYER_ID_PATTERN)
    name: str
    handle: str | None = Field(description="names the player page `/p/HANDLE` (null: none)")
    rating: int
    rd: int
    races: int
    last_race_at: int


class Leaderboard(_Model):
    """``GET /api/leaderboard/{game}``: every player with a rated race of the game in the
    last ``active_days`` days whose rating is no longer provisional (RD below
    ``provisional_rd``), best rating first."""

    game: GameName
    active_days: int
    provisional_rd: int
    entries: list[LeaderboardEntry]


class DailyGame(_Model):
    """One daily game's deal of a day: the commitment from 00:00 UTC; once the day is over,
    the code and the salt that open it (``samedeal daily verify``), and whether the solver
    proved it winnable (it always tries; a day where no candidate was proven plays the
    first, unproven)."""

    game: Literal["klondike", "easy-harp"]
    commitment: str | None = Field(
        description="hex SHA-256 of `CODE|hex(salt)` (null for the seconds the day's proof runs)"
    )
    code: str | None = Field(description="the deal code, once the day is over")
    salt: str | None = Field(description="hex of the 32-byte salt, once the day is over")
    proven: bool | None = Field(description="proved winnable (once the day is over)")


class DailyDay(_Model):
    """A day of the daily challenge."""

    day: str = Field(description="YYYY-MM-DD, UTC")
    number: int = Field(description="the day's number: 1 on 2026-01-01")
    over: bool
    ends_at: int = Field(description="00:00 UTC after the day, ms since the epoch")
    games: list[DailyGame]


class DailyToday(_Model):
    """``GET /api/daily``: today (commitments) and yesterday (revealed)."""

    today: DailyDay
    yesterday: DailyDay


AttemptStatus = Literal[RaceStatus, "watched", "unfinished"]
"""A daily attempt's status: ``playing`` (its race runs) or ``watched`` (only watched: it
never ends), then its race's :data:`FinalStatus`, or ``unfinished`` (still open when its day
was over: it ranks last of the day, with no score)."""


class DailyEntry(_Model):
    """One attempt on a day's leaderboard — or, ``ranked`` false, on its newcomers' board
    (a player made that day: they rank from their next day), ``rank`` then being their place
    among the day's newcomers. ``rank`` 0: it has no place (not over, or only watched).
    ``game_id``: the replay, once the day is over."""

    rank: int
    player: str
    name: str
    handle: str | None
    ranked: bool
    status: AttemptStatus
    won: bool
    score: int
    moves: int
    on_foundations: int
    deck_turns: int = Field(description="Klondike: passes through the stock after the first")
    elapsed_ms: int | None
    game_id: str | None


class DailyBoard(_Model):
    """``GET /api/daily/{day}/{game}``: the leaderboard (by score, then fewer moves, then the
    shorter time), the newcomers' board, the player's own place and the players they have
    raced with (``?player=ID``)."""

    day: str
    number: int
    game: Literal["klondike", "easy-harp"]
    over: bool
    deal: DailyGame
    entries: list[DailyEntry]
    newcomers: list[DailyEntry] = Field(
        description="the first attempts of players made that day, best first, placed among "
        "themselves (they rank on the leaderboard from their next day); with the first page "
        "only (offset 0)"
    )
    you: DailyEntry | None
    raced_with: list[DailyEntry]
    streak: DailyStats | None = Field(
        default=None,
        description="with ?player=ID: their figures in this daily game as of today — days "
        "played and won in a row (up to today, or yesterday while today's is not played), "
        "at most, and in all (null: none played)",
    )


class RoomSummary(_Model):
    """``GET /api/rooms/{code}``: a room as its invitation shows it, before joining. Never
    the deal code (fair play) nor anything a seat holds (tokens, connections)."""

    room: str = Field(description="the room code as people read it", examples=["K7QF-2M"])
    game: GameName
    phase: Phase = Field(
        description="lobby: waiting for the start; running: a race is on (watch only); "
        "ended: between races (a player may join for the next one)"
    )
    host_name: str | None = Field(description="the host's name (null: nobody seated)")
    players: list[str] = Field(description="the seated players' names, in seat order")
    max_players: int
    spectators: bool = Field(description="whether the room may be watched")
    daily: bool = Field(description="the room plays the deal of the day")
    solo: bool = Field(
        default=False,
        description="a game in one tap: a player may join while its race runs, and races "
        "from the next deal",
    )
    rated: bool = Field(
        default=False, description="the room's races are rated: only players with an identity"
    )


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


# --------------------------------------------------------------------- tournaments

TournamentPhase = Literal["created", "round", "between", "paused", "finished"]
"""Where a tournament is (see :class:`TournamentPage`): not started, a round being played,
between rounds, paused by the host, or over."""
EntrantStatus = Literal["entered", "withdrawn", "kicked", "banned"]
"""An entrant's standing in a tournament (see :class:`TournamentPlayer`)."""
ResultStatus = Literal["won", "resigned", "timeout"]
"""How a player's race in a round ended (a tournament race cannot be left: ``left`` is a
rated room's)."""
RoundStatus = Literal[ResultStatus, "absent", "missed", "disqualified"]
"""A player's line for a round: their race's end, or ``absent``, ``missed`` (not entered
then) or ``disqualified`` (their result struck)."""


class TournamentSettingsView(_Model):
    """A tournament's settings as chosen by its host (``deal_codes``: a host's list of
    deals, shown once the tournament has finished; ``late_join_round``: the last round a
    late joiner can still play)."""

    name: str
    game: GameName
    rounds: int
    round_time_limit: int = Field(description="seconds")
    round_start: Literal["auto", "manual"]
    pause: int = Field(description="seconds between rounds (round_start auto)")
    starts_at: int | None = Field(description="scheduled start, ms since the epoch")
    max_players: int
    private: bool
    late_join_until: int | None
    late_join_round: int
    scoring: Literal["points", "time"]
    deals: Literal["winnable", "any", "list"]
    deal_codes: list[str] | None
    spectator_delay: int = Field(description="seconds")
    absences_to_withdraw: int
    co_hosts: list[str]


class TournamentDraw(_Model):
    """How the rounds' deals are drawn: SHA-256 of the seed from creation, the seed once
    finished (``samedeal tournament verify`` recomputes every round's deal from it), the
    deal rule and the solver's bounds."""

    commitment: str
    seed: str | None
    deals: Literal["winnable", "any", "list"]
    node_budget: int
    max_candidates: int


class TournamentPlayer(_Model):
    """An entrant: ``status`` entered, withdrawn (``withdrawn_by`` self or absences),
    kicked or banned (``reason``: the host's, shown to them)."""

    id: str
    name: str
    status: EntrantStatus
    withdrawn_by: Literal["self", "absences"] | None
    reason: str | None
    joined_at: int
    joined_round: int
    absences: int


class TournamentResult(_Model):
    """A player's race in a round; ``place`` and ``points`` once the round has ended
    (null for a struck result); ``game_id`` its replay, once the round has ended and the
    race is written."""

    player: str
    status: ResultStatus
    on_foundations: int
    total: int
    score: int
    moves: int
    elapsed_ms: int | None
    disqualified: bool
    disqualify_reason: str | None
    place: int | None = None
    points: int | None = None
    room: str | None = None
    seat: int | None = None
    game_id: str | None = None


class TournamentRoom(_Model):
    """A room a round is played in: its code and each player's seat (to watch a player,
    join it as a spectator and follow the seat)."""

    room: str
    seats: dict[str, int]


class TournamentRound(_Model):
    """A round: ``deal`` null while it is played; ``candidate`` the fair-deal candidate
    played (null: the host's listed deal); ``proven`` the solver proved it winnable;
    ``stopped_early``: the host ended the tournament during it — its ``timeout`` results are
    races stopped then, not run out of time."""

    number: int
    deal: str | None
    candidate: int | None
    proven: bool
    skipped: list[int]
    start_at: int
    deadline: int
    ended_at: int | None
    stopped_early: bool = False
    participants: list[str]
    absent: list[str]
    results: list[TournamentResult]
    rooms: list[TournamentRoom]


class StandingRound(_Model):
    """A player's line for one round: ``status`` the race's, or absent, missed (not
    entered then) or disqualified."""

    round: int
    status: RoundStatus
    place: int | None
    points: int
    time_ms: int
    score: int
    moves: int
    on_foundations: int
    elapsed_ms: int | None


class StandingRow(_Model):
    """A row of the standings: ``rank`` shared by ties; ``status`` the player's standing in
    the tournament; both modes' totals; the tie-break values in the order of
    ``scoring.tiebreaks``."""

    rank: int
    player: str
    name: str
    status: EntrantStatus
    points: int
    time_ms: int
    rounds: list[StandingRound]
    tiebreaks: dict[str, int]


class TiebreakRule(_Model):
    """One tie-break: the key of its value on each row, and whether more or less wins."""

    key: str
    better: Literal["more", "less"]


class TournamentScoring(_Model):
    """The scoring rule the page explains (docs/tournaments.md)."""

    mode: Literal["points", "time"]
    win_bonus: int
    card_penalty_ms: int
    tiebreaks: list[TiebreakRule]


class TournamentAudit(_Model):
    """A host act, as the audit log shows it."""

    at: int
    actor: str
    act: str
    player: str | None
    round: int | None
    reason: str | None
    detail: dict[str, Any]


class TournamentPage(_Model):
    """``GET /api/tournaments/{id}``: everything the tournament page shows. Never the link
    key, the seed before the end, nor anything of a round's deal while it is played."""

    id: str = Field(description="the tournament code as people read it", examples=["K7QF-2M"])
    link: str
    host: str
    phase: TournamentPhase
    round: int = Field(description="rounds started")
    version: int
    created_at: int
    started_at: int | None
    finished_at: int | None
    next_round_at: int | None
    settings: TournamentSettingsView
    fair: Literal[1, 2] = Field(
        description="the version of fair-deals.md the rounds are drawn by: 2 sealed deals, "
        "1 numbered deals (a tournament created before sealed deals)"
    )
    draw: TournamentDraw
    players: list[TournamentPlayer]
    rounds: list[TournamentRound]
    scoring: TournamentScoring
    standings: list[StandingRow]
    audit: list[TournamentAudit]


class TournamentResults(_Model):
    """``GET /api/tournaments/{id}/results``: the standings with the scoring rule."""

    tournament: str
    name: str
    scoring: TournamentScoring
    standings: list[StandingRow]


class TournamentSummary(_Model):
    """A tournament in the lobby's list."""

    id: str
    link: str
    name: str
    game: GameName
    phase: TournamentPhase
    players: int
    max_players: int
    rounds: int
    round: int
    starts_at: int | None
    created_at: int


class TournamentList(_Model):
    """``GET /api/tournaments``: public tournaments not finished, oldest first."""

    tournaments: list[TournamentSummary]


API_MODELS: tuple[type[BaseModel], ...] = (
    ApiError,
    GameReplay,
    PlayerPage,
    RoomSummary,
    DailyToday,
    DailyDay,
    DailyBoard,
    SeatBoards,
    LiveDirectory,
    TournamentList,
    TournamentPage,
    TournamentResults,
    RatingHistory,
    Leaderboard,
)
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
