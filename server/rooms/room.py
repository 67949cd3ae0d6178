"""Rooms and races as plain values: no sockets, no asyncio, no storage.

A room's state is two things, both JSON-able pydantic models the stores keep as they are:

* :class:`RoomState` — options, host, deal, phase, seats (with a hash of each seat's
  session token, never the token), the last results. Changed only inside a store's atomic
  update (``RoomStore.update``), so two workers never overwrite each other.
* one :class:`ProgressState` per seat of the current race — written by the worker the
  player is connected to, together with the move that changed it.

The functions here change those values and return the room events that tell everyone
about it (event bodies without ``seq``: the store numbers them). What the server does to a
room goes through the named updates of :mod:`server.updates`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, get_args

from pydantic import BaseModel, ConfigDict, TypeAdapter

from engine import DealCode, GameError
from protocol import DealKind, FinalStatus, Phase, RaceStatus, RoomOptions, SeatStatus, frames
from protocol.frames import EventBody, ProgressBody, ResultRowBody, SeatBody

from ..codes import clean_name, display_code
from .ranking import race_key, ranked

__all__ = [
    "FINAL_STATUSES",
    "Events",
    "ProgressState",
    "Refusal",
    "RematchOffer",
    "RoomEvent",
    "RoomOptions",
    "RoomState",
    "SeatState",
    "add_player",
    "begin_race",
    "check_race_end",
    "choose_deal",
    "key_fits",
    "logged_code",
    "logged_deal",
    "progress_event",
    "rank",
    "remove_seat",
    "seat_by_token",
    "seat_event",
    "set_connected",
    "spectators_event",
    "start_race",
]

FINAL_STATUSES: frozenset[FinalStatus] = frozenset(get_args(FinalStatus))
"""A racer's final status: ``left`` is a player who went away for good (the grace period
ended while they were still racing)."""

RoomEvent = EventBody
"""A room event as a change of the room tells it, before the store numbers it (no
``seq``): a closed union of typed events (``protocol.frames``: seat, spectators,
rematch_offered, race_starting, progress, player_finished, race_ended, race_recorded,
race_record_delayed), told apart by ``type``."""

Events = list[RoomEvent]
"""The events a change of a room tells, in order."""


class Refusal(Exception):
    """A request the server refuses: ``error_code`` is the ``error`` reply's ``code``,
    ``message`` the sentence that explains it. Raised inside a room update it aborts the
    update (nothing is stored)."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message


# --------------------------------------------------------------------- small values


def logged_code(deal: str) -> str:
    """A deal code as a log line may name it (logs are read by people who may play it): a
    numbered deal as it is (a person typed it), a sealed one by its prefix and a fingerprint
    (the first 8 hex digits of its SHA-256), which tells no card but matches the code once
    it is revealed."""
    try:
        deal_code = DealCode.parse(deal)
    except GameError:
        return "invalid"
    if not deal_code.sealed:
        return str(deal_code)
    return f"{deal_code.prefix}-sealed#{hashlib.sha256(str(deal_code).encode()).hexdigest()[:8]}"


def logged_deal(room: RoomState) -> str:
    """The room's deal as a log line may name it: the day's secret deal is ``daily:DAY``
    and a tournament round's ``tournament:ID`` while they are secret, any other deal as
    :func:`logged_code` names it."""
    if room.secret_until is not None:
        return f"tournament:{room.tournament}" if room.tournament else f"daily:{room.daily_day}"
    return logged_code(room.deal)


def choose_deal(game_name: str, kind: DealKind, deal_code: str | None, last: str | None) -> str:
    """The deal code for a race: ``deal_code`` (explicit), ``random`` or ``same`` (the deal of
    the day is the daily layer's: it resolves it to a code and passes kind ``deal_code``)."""
    if kind == "random":
        return str(DealCode.random(game_name))
    if kind == "daily":
        raise Refusal("bad_deal", "the deal of the day is chosen by the server's daily layer")
    if kind == "same":
        if last is None:
            raise Refusal("no_last_deal", "this room has no last race to repeat")
        return last
    if deal_code is None:
        raise Refusal("bad_deal", "deal 'code' needs a code")
    try:
        deal = DealCode.parse(deal_code)
    except GameError as exc:
        raise Refusal("bad_deal", str(exc)) from None
    if deal.game_name != game_name:
        raise Refusal("bad_deal", f"{deal} is a deal of {deal.game_name}, not {game_name}")
    return str(deal)


def key_fits(room: RoomState, key: str | None) -> bool:
    """Whether ``key`` lets its holder find ``room``: any key for a public room, the room's
    own for a private one (compared in constant time)."""
    if room.key is None:
        return True
    return key is not None and secrets.compare_digest(key.encode(), room.key.encode())


# --------------------------------------------------------------------- state


class _State(BaseModel):
    model_config = ConfigDict(extra="ignore")


class SeatState(_State):
    """A player's seat. ``conn`` is the connection that holds it (one at a time);
    ``epoch`` rises each time a new connection takes it (a resume): the store refuses a
    write of the seat that carries an older one (a fencing token)."""

    seat: int
    name: str
    token_hash: str
    connected: bool = True
    conn: str | None = None
    disconnected_at: int | None = None
    epoch: int = 1
    #: the identity of the player in the seat (records), None for a robot or a guest
    player_id: str | None = None
    #: played by the server (a bot or a ghost): it accepts every rematch unasked
    robot: bool = False
    #: in a rated room, the player's rating in its game as shown (whole points) and
    #: whether it is provisional (shown with "?"); None in a casual room
    rating: int | None = None
    provisional: bool = False


@dataclass(frozen=True, slots=True)
class ProgressState:
    """A seat's progress in race ``race`` — the one value of it: the room's state keeps one
    per seat (the store, as :meth:`to_json`), a racer's outbox holds the latest while it is
    coalesced (:mod:`.progress`), and the ``progress`` event is built from it
    (:func:`progress_body`). ``status`` is final once won, resigned, timeout or left, and
    ``elapsed_ms`` is then the finishing time (None while playing). A change is a new value
    (:func:`dataclasses.replace`)."""

    race: int
    seat: int
    name: str = ""
    status: RaceStatus = "playing"
    on_foundations: int = 0
    total: int = 0
    score: int = 0
    moves: int = 0
    elapsed_ms: int | None = None

    def to_json(self) -> bytes:
        """The stored form: compact JSON, ``race`` first (the store's script reads the race
        and the status from the text)."""
        return _PROGRESS_JSON.dump_json(self)

    @staticmethod
    def from_json(data: str | bytes) -> ProgressState:
        """A stored progress (unknown fields ignored; a bad status refused)."""
        return _PROGRESS_JSON.validate_json(data)


_PROGRESS_JSON: TypeAdapter[ProgressState] = TypeAdapter(ProgressState)


class RematchOffer(_State):
    """A rematch offered by seat ``by`` and waiting for answers: race ``race`` on ``deal``
    (chosen when offered; ``kind`` is what the players are told), starting once every seat
    in ``asked`` has answered, left or gone away, or at ``deadline`` (server ms), with a
    countdown of ``countdown_ms``. ``answers``: seat → accepted."""

    race: int
    kind: DealKind
    deal: str
    typed: bool = False
    daily: bool = False
    by: int
    deadline: int
    countdown_ms: int
    asked: list[int] = []
    answers: dict[int, bool] = {}
    # the day's secret deal: its day and end, and each racer's attempt as they accepted
    daily_day: str | None = None
    secret_until: int | None = None
    attempts: dict[str, str] = {}


class RoomState(_State):
    """Everything about a room except the per-seat race progress."""

    code: str
    game: str
    options: RoomOptions
    key: str | None = None
    host: int | None = None
    seats: list[SeatState] = []
    next_seat: int = 1
    phase: Phase = "lobby"
    race: int = 0
    deal: str
    start_at: int | None = None
    deadline: int | None = None
    participants: list[int] = []
    results: list[ResultRowBody] | None = None
    created_at: int = 0
    # the seat whose player typed the deal code (create or rematch with ``code``): the only
    # one shown it before the race ends (fair play)
    deal_typed_by: int | None = None
    # spectators connected (to any worker): counted on join and leave, per worker id in
    # ``watchers`` so that those of a worker that died can be taken off
    spectators: int = 0
    watchers: dict[str, int] = {}
    # the count last told in a ``spectators`` event, and when (ms): told at most once a
    # second, so a crowd coming in costs events in proportion to time, not to its size
    spectators_told: int = 0
    spectators_told_at: int = 0
    race_deals: list[str] = []  # the deal of each race so far (ghosts replay a race's run)
    # the racers' names as the race started: the results name a player who left meanwhile
    racer_names: dict[int, str] = {}
    # and their identities: the race goes on each racer's record
    racer_ids: dict[int, str | None] = {}
    # a room on the day's secret deal: the day (YYYY-MM-DD, UTC), and when it ends (ms):
    # until then nobody is told the deal code, and its races time out then at the latest
    # (a tournament round's room: its deadline, or the round's end if that comes first)
    daily_day: str | None = None
    secret_until: int | None = None
    # the deal is the deal of the day (chosen with ``daily``): the room is labelled so
    daily: bool = False
    # a rematch the host offered, while the players answer
    offer: RematchOffer | None = None
    # a tournament round's room: the tournament's id (its races are recorded when the
    # round ends, and its deal is told to nobody before: ``secret_until``)
    tournament: str | None = None
    # a quick-play pool's room: the pool's id, and when its race starts at the latest
    # (server ms) with whoever has taken their seat by then
    pool: str | None = None
    pool_start_by: int | None = None
    # a game in one tap (``create`` with ``solo``): its races start at once, with no
    # countdown while the host races alone; a player may join during a race and races from
    # the next one (the host's new deal or restart)
    solo: bool = False

    def seat(self, seat: int) -> SeatState | None:
        """The seat numbered ``seat``, if taken."""
        for s in self.seats:
            if s.seat == seat:
                return s
        return None


# --------------------------------------------------------------------- events


def seat_event(room: RoomState, seat: SeatState, *, left: bool = False) -> SeatBody:
    """The ``seat`` event for a seat's current state."""
    return frames.seat(
        room=display_code(room.code),
        seat=seat.seat,
        name=seat.name,
        connected=seat.connected and not left,
        left=left,
        host=room.host == seat.seat,
        rating=seat.rating,
        provisional=seat.provisional,
    )


def spectators_event(room: RoomState) -> frames.SpectatorsBody:
    """The ``spectators`` event: how many watch the room now."""
    return frames.spectators(room=display_code(room.code), count=room.spectators)


def shown_status(progress: ProgressState, seat: SeatState | None) -> SeatStatus:
    """The status shown to the room: a playing seat without a connection is
    ``disconnected``."""
    if progress.status == "playing" and (seat is None or not seat.connected):
        return "disconnected"
    return progress.status


def progress_event(
    room: RoomState, progress: ProgressState, now: int, seat: SeatState | None = None
) -> ProgressBody:
    """The ``progress`` event for a seat as the room sees it (``disconnected`` shown; the
    elapsed time is the final one, or the time since the start)."""
    if progress.elapsed_ms is not None:
        elapsed = progress.elapsed_ms
    else:
        elapsed = max(0, now - (room.start_at or now))
    shown = shown_status(progress, seat if seat is not None else room.seat(progress.seat))
    return progress_body(room.code, progress, shown, elapsed)


def progress_body(
    room_code: str, p: ProgressState, status: SeatStatus, elapsed: int
) -> ProgressBody:
    """The ``progress`` event of a seat's stored progress, shown with ``status``."""
    return frames.progress(
        room=display_code(room_code),
        race=p.race,
        seat=p.seat,
        on_foundations=p.on_foundations,
        total=p.total,
        score=p.score,
        moves=p.moves,
        status=status,
        elapsed_ms=elapsed,
    )


# --------------------------------------------------------------------- changes


def add_player(
    room: RoomState,
    name: str,
    token_hash: str,
    conn: str,
    now: int,
    player_id: str | None = None,
    rating: tuple[int, bool] | None = None,
) -> tuple[SeatState, Events]:
    """Seat a new player (``player_id``: their identity, when they gave one; ``rating``:
    their rating in the room's game as shown and whether it is provisional, kept in a rated
    room); refuses a full room, a running race — but for a solo game's, whose next race they
    join — and a player without an identity in a rated room."""
    if room.phase == "running" and not room.solo:
        raise Refusal("race_running", "a race is running: join as a spectator or wait")
    if len(room.seats) >= room.options.max_players:
        raise Refusal("room_full", f"the room is full ({room.options.max_players} players)")
    if room.options.rated and player_id is None:
        raise Refusal("rated_needs_identity", "a rated room seats players with an identity only")
    seat = SeatState(
        seat=room.next_seat,
        name=clean_name(name, f"Player {room.next_seat}"),
        token_hash=token_hash,
        conn=conn,
        player_id=player_id,
    )
    if room.options.rated and rating is not None:
        seat.rating, seat.provisional = rating
    room.next_seat += 1
    room.seats.append(seat)
    if room.host is None:
        room.host = seat.seat
    return seat, [seat_event(room, seat)]


def seat_by_token(room: RoomState, token_hash: str) -> SeatState | None:
    """The seat whose token hashes to ``token_hash``."""
    for s in room.seats:
        if secrets.compare_digest(s.token_hash, token_hash):
            return s
    return None


def set_connected(
    room: RoomState,
    progress: dict[int, ProgressState],
    seat: SeatState,
    conn: str | None,
    now: int,
) -> Events:
    """Mark a seat as held by ``conn`` (or disconnected when ``conn`` is None)."""
    was = seat.connected
    seat.conn = conn
    seat.connected = conn is not None
    seat.disconnected_at = None if conn is not None else now
    if was == seat.connected:
        return []
    events: Events = [seat_event(room, seat)]
    p = progress.get(seat.seat)
    if room.phase == "running" and p is not None and p.race == room.race:
        events.append(progress_event(room, p, now, seat))
    return events


def remove_seat(room: RoomState, seat: SeatState) -> Events:
    """Free a seat (outside a race); the host passes to the lowest remaining seat."""
    room.seats = [s for s in room.seats if s.seat != seat.seat]
    events: Events = [seat_event(room, seat, left=True)]
    if room.host == seat.seat:
        room.host = min((s.seat for s in room.seats), default=None)
        new_host = room.seat(room.host) if room.host is not None else None
        if new_host is not None:
            events.append(seat_event(room, new_host))
    return events


def start_race(
    room: RoomState,
    progress: dict[int, ProgressState],
    by: int,
    now: int,
    countdown_ms: int,
    total: int,
    deal: str | None = None,
    *,
    typed: bool = False,
    daily: bool | None = None,
    view: dict[str, Any] | None = None,
    attempts: dict[str, str] | None = None,
) -> Events:
    """The host starts a race with every connected player (a new ``deal`` after a race:
    ``typed`` when the host gave its code, ``daily`` when it is the day's).

    The stored ``race_starting`` event carries the deal code for the workers; it is removed
    on delivery to anyone who may not know it (see :func:`may_know_deal`). ``view`` is the
    starting board without the code, the same for every player.
    """
    if room.host != by:
        raise Refusal("not_host", "only the host can start the race")
    if room.phase == "running":
        raise Refusal("race_running", "the race is already running")
    if deal is None and room.phase == "ended":
        raise Refusal("race_over", "the race is over: ask for a rematch")
    if deal is not None and room.phase != "ended":
        raise Refusal("no_race_yet", "a rematch follows a finished race: use start")
    # a player who is away (within the grace period) sits this race out
    racers = sorted(s.seat for s in room.seats if s.connected)
    if not racers:
        raise Refusal("no_players", "nobody to race")
    if deal is not None:
        room.deal = deal
        room.deal_typed_by = by if typed else None
        if daily is not None:
            room.daily = daily
    return begin_race(room, progress, racers, now, countdown_ms, total, view, attempts)


def begin_race(
    room: RoomState,
    progress: dict[int, ProgressState],
    racers: list[int],
    now: int,
    countdown_ms: int,
    total: int,
    view: dict[str, Any] | None,
    attempts: dict[str, str] | None = None,
) -> Events:
    """Start the room's next race on its deal with the seats ``racers`` (checked by the
    caller: seated, connected, at least one)."""
    room.offer = None
    room.race += 1
    room.race_deals.append(room.deal)
    room.phase = "running"
    room.start_at = now + countdown_ms
    limit = room.options.time_limit
    room.deadline = room.start_at + limit * 1000 if limit else None
    if room.secret_until is not None:
        # the day's deal is played within its day: at its end the race times out
        room.deadline = min(room.deadline or room.secret_until, room.secret_until)
    room.participants = sorted(racers)
    room.racer_names = {s.seat: s.name for s in room.seats if s.seat in racers}
    room.racer_ids = {s.seat: s.player_id for s in room.seats if s.seat in racers}
    progress.clear()
    for s in room.seats:
        if s.seat in racers:
            progress[s.seat] = ProgressState(race=room.race, seat=s.seat, name=s.name, total=total)
    return [
        frames.race_starting(
            room=display_code(room.code),
            race=room.race,
            deal=room.deal,
            start_at=room.start_at,
            deadline=room.deadline,
            now=now,
            seats=room.participants,
            view=view,
            daily=room.daily,
            typed_by=room.deal_typed_by,  # for the workers; never delivered
            attempts=attempts if room.daily_day is not None else None,
            secret_until=room.secret_until,  # for the workers; never delivered
        )
    ]


def rank(rows: Iterable[ProgressState]) -> list[tuple[int, ProgressState]]:
    """The race's results best first, each with its place: the one ranking rule
    (:mod:`server.rooms.ranking`: equal results share a place); tied seats are listed in
    seat order."""
    return ranked(rows, race_key, then=lambda p: p.seat)


def check_race_end(room: RoomState, progress: dict[int, ProgressState], now: int) -> Events:
    """End the race when every participant has won, resigned or run out of time."""
    if room.phase != "running":
        return []
    mine = [progress[s] for s in room.participants if s in progress]
    if any(p.status not in FINAL_STATUSES for p in mine):
        return []
    room.phase = "ended"
    results: list[ResultRowBody] = []
    for place, p in rank(mine):
        seat = room.seat(p.seat)
        results.append(
            {
                "rank": place,
                "seat": p.seat,
                "name": (
                    seat.name
                    if seat
                    else room.racer_names.get(p.seat) or p.name or f"Player {p.seat}"
                ),
                "status": p.status,
                "on_foundations": p.on_foundations,
                "score": p.score,
                "moves": p.moves,
                "elapsed_ms": p.elapsed_ms,
            }
        )
    room.results = results
    return [
        frames.race_ended(
            room=display_code(room.code),
            race=room.race,
            deal=room.deal,
            results=results,
            secret_until=room.secret_until,  # for the workers; never delivered
        )
    ]
