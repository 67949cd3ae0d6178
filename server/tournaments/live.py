"""A tournament as the server keeps it: the pure state, and what only the server needs.

:class:`LiveTournament` wraps a :class:`~.state.TournamentState` with the server's own
facts — the secret its seat tokens are drawn from, the rooms each round is played in and
which seat each player has there — and a revision ``rev`` that rises with every write, so a
store can update it optimistically (compare-and-set on ``rev``, the first field of its
JSON). :class:`Summary` is the little that timers and the list of tournaments read without
loading the whole state. Pure: no I/O.

**Rounds are played in rooms of at most** :data:`ROOM_SIZE` **players.** Every participant
of a round gets the same deal at the same moment, each in a seat of one of the round's
rooms; a field of N players is split into ``ceil(N / 16)`` rooms of sizes differing by one
at most, in join order within each worker the players are connected to (a room's players
on one worker, as room affinity wants). A room of 16 keeps each race's own traffic (every
player's ``progress`` to every other) small whatever the field; the tournament's standings
tell everyone how the whole field stands.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from ._checks import entered
from .errors import TournamentError
from .state import Event, Phase, RoundResult, TournamentState, current_round

__all__ = [
    "ROOM_SIZE",
    "LiveSnapshot",
    "LiveTournament",
    "RoundRoom",
    "Summary",
    "TournamentUpdate",
    "UnknownTournament",
    "deal_digest",
    "new_live",
    "plan_rooms",
    "public_rooms",
    "refuse_unknown",
    "seat_of",
    "seat_token",
    "strip_moves",
    "summary_due",
    "summary_of",
    "wake_at",
]

#: the most players a round's room seats
ROOM_SIZE: Final = 16

T_co = TypeVar("T_co", covariant=True)


class UnknownTournament(KeyError):
    """No tournament has this id (it never existed, or it expired from the live store)."""


class RoundRoom(BaseModel):
    """One room of a round: its code, when it was made, and each player's seat."""

    model_config = ConfigDict(extra="forbid")

    code: str
    created_at: int
    seats: dict[str, int]


class LiveTournament(BaseModel):
    """The stored form of a live tournament (``rev`` first: the stores' compare-and-set
    reads it as text)."""

    model_config = ConfigDict(extra="forbid")

    rev: int = 0
    state: TournamentState
    #: hex of 32 random bytes: seat tokens are HMACs of it, so any worker can hand a
    #: participant their seat; never shown
    secret: str
    #: round number (as text, JSON's keys) → its rooms
    rooms: dict[str, list[RoundRoom]] = {}
    #: the state's version last written to the records store (-1: never), and the last
    #: round whose races and results were written with it
    recorded: int = -1
    recorded_round: int = 0

    def round_rooms(self, number: int) -> list[RoundRoom]:
        """The rooms of round ``number`` (none when it had no participant)."""
        return self.rooms.get(str(number), [])


@dataclass(slots=True)
class LiveSnapshot:
    """A read of a live tournament and the seq of its last event."""

    live: LiveTournament
    seq: int


class TournamentUpdate(Protocol[T_co]):
    """A change of a live tournament, applied by a store atomically: it changes ``live`` in
    place and returns the events to publish and its value; raising aborts it (nothing is
    stored). It may run more than once (the store retries on a conflict)."""

    def __call__(self, live: LiveTournament) -> tuple[list[Event], T_co]: ...


def new_live(state: TournamentState) -> LiveTournament:
    """A new tournament's stored form, with a fresh seat secret."""
    return LiveTournament(state=state, secret=secrets.token_hex(32))


def seat_token(live: LiveTournament, number: int, player: str) -> str:
    """The session token of ``player``'s seat in round ``number``: what ``resume`` takes.
    Derived, not stored, so every worker can give a participant theirs."""
    message = f"{live.state.id}|{number}|{player}".encode()
    digest = hmac.new(bytes.fromhex(live.secret), message, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode()


def seat_of(live: LiveTournament, number: int, player: str) -> tuple[RoundRoom, int] | None:
    """The room and seat of ``player`` in round ``number``, if they play it."""
    for room in live.round_rooms(number):
        seat = room.seats.get(player)
        if seat is not None:
            return room, seat
    return None


def plan_rooms(
    participants: Sequence[str],
    size: int = ROOM_SIZE,
    worker_of: Mapping[str, str] | None = None,
) -> list[list[str]]:
    """Split the participants (in join order) into rooms of at most ``size``, whose sizes
    differ by one at most. With ``worker_of`` (player → the worker their connection is
    on), the participants are first grouped by worker, in join order within each: a
    room's players then share a worker (room affinity), but for the rooms that straddle
    two groups, one at most per boundary."""
    if not participants:
        return []
    if worker_of:
        participants = sorted(participants, key=lambda p: worker_of.get(p, ""))
    count = -(-len(participants) // size)
    base, extra = divmod(len(participants), count)
    out, start = [], 0
    for i in range(count):
        n = base + (1 if i < extra else 0)
        out.append(list(participants[start : start + n]))
        start += n
    return out


def strip_moves(result: RoundResult) -> RoundResult:
    """A result as the live state keeps it: without its move list (kept apart, so that the
    state read on every act stays small)."""
    return result.model_copy(update={"move_list": []}) if result.move_list else result


class Summary(BaseModel):
    """What the timers and the list of tournaments read: small, written with the state."""

    model_config = ConfigDict(extra="forbid")

    id: str
    name: str
    game: str
    phase: Phase
    private: bool
    players: int
    max_players: int
    rounds: int
    round: int
    round_start: str
    created_at: int
    starts_at: int | None
    next_round_at: int | None
    #: the round being played: its deadline, participants and results so far
    deadline: int | None = None
    participants: int = 0
    results: int = 0
    version: int = 0
    recorded: bool = False
    recorded_round: int = 0
    #: the round being played: its deal's :func:`deal_digest` (a room cannot be made on
    #: it while it is secret; the code itself stays out of what the list reads)
    deal_digest: str | None = None


def deal_digest(deal_code: str) -> str:
    """SHA-256 (hex) of a canonical deal code: a round's deal compared without being kept."""
    return hashlib.sha256(deal_code.encode("ascii")).hexdigest()


def summary_of(live: LiveTournament) -> Summary:
    """The summary of a live tournament."""
    state = live.state
    settings = state.settings
    current = current_round(state)
    return Summary(
        id=state.id,
        name=settings.name,
        game=settings.game,
        phase=state.phase,
        private=settings.private,
        players=len(entered(state)),
        max_players=settings.max_players,
        rounds=settings.rounds,
        round=state.round,
        round_start=settings.round_start,
        created_at=state.created_at,
        starts_at=settings.starts_at,
        next_round_at=state.next_round_at,
        deadline=current.deadline if current is not None else None,
        participants=len(current.participants) if current is not None else 0,
        results=len(current.results) if current is not None else 0,
        version=state.version,
        recorded=live.recorded >= state.version,
        recorded_round=live.recorded_round,
        deal_digest=deal_digest(current.deal) if current is not None else None,
    )


def summary_due(summary: Summary, now: int) -> str | None:
    """What is due at ``now``, as :func:`~.state.due` tells it of the whole state."""
    if summary.phase == "created" and summary.starts_at is not None and now >= summary.starts_at:
        return "start"
    if summary.phase == "between" and summary.next_round_at is not None:
        return "start_round" if now >= summary.next_round_at else None
    ended = summary.deadline is not None and (
        now >= summary.deadline or summary.results >= summary.participants
    )
    return "end_round" if summary.phase == "round" and ended else None


def wake_at(summary: Summary) -> int | None:
    """When something may next be due (ms), if anything is scheduled."""
    if summary.phase == "created":
        return summary.starts_at
    if summary.phase == "between":
        return summary.next_round_at
    if summary.phase == "round":
        return summary.deadline
    return None


def refuse_unknown(tid: str) -> TournamentError:
    """The refusal for a tournament that cannot be found (or, private, not without its key)."""
    return TournamentError("unknown_tournament", f"no tournament {tid!r}")


def public_rooms(live: LiveTournament, number: int) -> list[dict[str, Any]]:
    """The rooms of round ``number`` as the page shows them (for watching a player)."""
    return [{"room": r.code, "seats": dict(r.seats)} for r in live.round_rooms(number)]
