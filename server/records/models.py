"""What goes into the records store and what comes out: small frozen values and errors.

Times are integers, milliseconds since the Unix epoch (server clock); durations are
milliseconds. Secrets live only in :class:`Identity`, and neither its ``repr`` nor its
``str`` shows them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import get_args

from engine import GAME_NAMES
from protocol.api import AttemptStatus
from protocol.live import FinalStatus

__all__ = [
    "STATUSES",
    "BadDatabase",
    "BadHandle",
    "BadRecord",
    "DailyEntry",
    "DailyStats",
    "FinalStatus",
    "HandleTaken",
    "Identity",
    "Player",
    "PlayerStats",
    "Profile",
    "RaceRecord",
    "RaceSummary",
    "RateLimited",
    "RecordsError",
    "RecordsUnavailable",
    "SeatRecord",
    "StaleIdentity",
    "StoredRace",
    "UnknownPlayer",
]

STATUSES: frozenset[str] = frozenset(get_args(FinalStatus))


# --------------------------------------------------------------------- errors


class RecordsError(ValueError):
    """A request the records store refuses. ``error_code`` is a stable key (for error replies
    and message catalogues); the message is a sentence fit to show a person."""

    error_code = "records_error"


class BadHandle(RecordsError):
    """A handle outside the rules: length, alphabet, or a reserved word."""

    error_code = "bad_handle"


class HandleTaken(RecordsError):
    """A handle that another player holds (or one that folds to the same form)."""

    error_code = "handle_taken"


class RateLimited(RecordsError):
    """Too many identities created from one address; ``retry_after`` seconds to wait."""

    error_code = "rate_limited"

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class UnknownPlayer(RecordsError):
    """No such player (or a deleted one)."""

    error_code = "unknown_player"


class StaleIdentity(RecordsError):
    """A change asked for with a secret that is no longer the player's: the identity was
    recovered (on another device: a new secret) or deleted since the connection said who
    it is. Nothing was changed."""

    error_code = "bad_identity"


class BadRecord(RecordsError):
    """A race record that does not hold together (the server's mistake, not a player's)."""

    error_code = "bad_record"


class RecordsUnavailable(RecordsError):
    """The database cannot be reached now (refused, reset, a name that does not resolve, a
    timeout, an administrator's shutdown, read-only): nothing was done, the same call may
    succeed later. ``reason`` says why, for the operator (it may name hosts: a player is
    sent :attr:`for_players`)."""

    error_code = "records_unavailable"
    for_players = "the records database cannot be reached now: try again in a moment"

    def __init__(self, reason: str) -> None:
        super().__init__(f"cannot reach the records database ({reason})")
        self.reason = reason


class BadDatabase(RecordsError):
    """A database URL or data directory that cannot be used."""

    error_code = "bad_database"


# --------------------------------------------------------------------- identities


@dataclass(frozen=True, slots=True)
class Identity:
    """A new identity or a recovered one: what the client keeps. Returned once; the
    store keeps only hashes of ``secret`` and ``recovery_code``."""

    player_id: str
    secret: str = field(repr=False)
    recovery_code: str = field(repr=False)

    def __str__(self) -> str:
        return self.player_id


@dataclass(frozen=True, slots=True)
class Player:
    """A player as others see them. ``deleted``: the identity was deleted (its name is
    then :data:`server.records.identity.DELETED_NAME` and it has no handle)."""

    player_id: str
    name: str
    handle: str | None
    created_at: int
    deleted: bool = False


# --------------------------------------------------------------------- races


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """One racer's finished race.

    ``actions`` is the full move list in move notation (undo ``u`` and auto-finish ``a``
    included) and ``action_times`` the server time of each, in ms since the race started.
    ``elapsed_ms`` is the finishing time (``None`` when the racer did not finish). ``player_id``
    is the racer's public player id, ``None`` for a racer without an identity; an id the
    store does not know is recorded as ``None``. ``handle`` and ``player_deleted`` (the
    identity was deleted since) are filled on reads.
    """

    seat: int
    name: str
    status: FinalStatus
    rank: int
    score: int
    moves: int
    on_foundations: int
    elapsed_ms: int | None
    actions: tuple[str, ...] = ()
    action_times: tuple[int, ...] = ()
    player_id: str | None = None
    handle: str | None = None
    player_deleted: bool = False
    #: Klondike's passes through the stock after the first (0 in Easy Harp)
    deck_turns: int = 0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise BadRecord(f"seat {self.seat}: unknown status {self.status!r}")
        if len(self.actions) != len(self.action_times):
            raise BadRecord(
                f"seat {self.seat}: {len(self.actions)} actions but "
                f"{len(self.action_times)} action times"
            )
        if any(not a or " " in a for a in self.actions):
            raise BadRecord(f"seat {self.seat}: an action is empty or holds a space")


@dataclass(frozen=True, slots=True)
class RaceRecord:
    """A finished race with all its seats, as the server writes it.

    ``(room, room_created_at, race)`` names the race for good: writing the same race again
    changes nothing. ``casual`` races are purged after the retention period; the others
    (daily, tournament, rated) are kept. A ``rated`` race changes its racers' ratings as it
    is written (:mod:`server.records.ratings`).
    """

    room: str
    room_created_at: int
    race: int
    game: str
    deal: str
    started_at: int
    ended_at: int
    seats: tuple[SeatRecord, ...]
    casual: bool = True
    #: the UTC day (``YYYY-MM-DD``) whose secret deal this race played: its deal and replay
    #: are shown only once that day is over, and it ends its racers' attempts of the day
    daily_day: str | None = None
    rated: bool = False

    def __post_init__(self) -> None:
        if not self.seats:
            raise BadRecord(f"race {self.room}/{self.race} has no seats")
        if self.game not in GAME_NAMES:
            raise BadRecord(f"race {self.room[:8]}/{self.race}: unknown game {self.game!r}")
        if len(self.room) > 8 or len(self.deal) > 32:
            raise BadRecord(f"race {self.room[:8]}/{self.race}: room, game or deal too long")
        numbers = [s.seat for s in self.seats]
        if len(set(numbers)) != len(numbers):
            raise BadRecord(f"race {self.room}/{self.race}: a seat appears twice")

    @property
    def key(self) -> tuple[str, int, int]:
        """The natural key: (room, room_created_at, race)."""
        return (self.room, self.room_created_at, self.race)


@dataclass(frozen=True, slots=True)
class StoredRace:
    """A race as read back: its public id and the record (seats in seat order, with the
    racers' handles)."""

    race_id: str
    record: RaceRecord


@dataclass(frozen=True, slots=True)
class DailyEntry:
    """One attempt of a day's leaderboard (``rank`` 1 first: the order is score, then fewer
    moves, then the shorter time; equal attempts share a rank, listed by who began first)."""

    rank: int
    player_id: str
    name: str
    handle: str | None
    ranked: bool
    status: AttemptStatus
    score: int
    moves: int
    on_foundations: int
    deck_turns: int
    elapsed_ms: int | None
    race_id: str | None


@dataclass(frozen=True, slots=True)
class DailyStats:
    """A player's daily figures in one game: days played and won in a row (ending today
    or yesterday), the longest such runs, and the best score."""

    game: str
    days_played: int
    days_won: int
    played_streak: int
    won_streak: int
    longest_played_streak: int
    longest_won_streak: int
    best_score: int | None


@dataclass(frozen=True, slots=True)
class RaceSummary:
    """One line of a player's history: a race and how that player did in it."""

    race_id: str
    game: str
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
    #: the UTC day of the secret deal this race played, if it was the day's deal
    daily_day: str | None = None


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """A player's figures in one game. A race counts as won when the player solved the
    deal (status ``won``); a streak is races won in a row, in the order they ended."""

    game: str
    played: int
    won: int
    best_time_ms: int | None
    best_score: int
    current_streak: int
    longest_streak: int

    @property
    def win_pct(self) -> float:
        """Races won per hundred played (0 when none played), one decimal."""
        return round(100 * self.won / self.played, 1) if self.played else 0.0


@dataclass(frozen=True, slots=True)
class Profile:
    """A player page: the player, their stats per game, a page of their recent races."""

    player: Player
    stats: tuple[PlayerStats, ...]
    recent: tuple[RaceSummary, ...]
