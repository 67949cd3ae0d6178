"""Named room updates: what the server does to a room, as small frozen values.

A store applies an update atomically (``RoomStore.update``): the update changes the
room and the race progress in place and returns its events and its value — the seat taken,
the connection replaced — instead of setting a variable of its caller. Pure: no sockets,
no asyncio, no storage.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from engine import new_game
from protocol import DealKind

from .offers import offer_rematch, offer_waiting, settle
from .room import (
    Events,
    ProgressState,
    Refusal,
    RoomEvent,
    RoomState,
    add_player,
    check_race_end,
    choose_deal,
    remove_seat,
    set_connected,
    spectators_event,
    start_race,
)

__all__ = [
    "SPECTATORS_EVERY_MS",
    "AnswerRematch",
    "CountSpectator",
    "Disconnect",
    "DropWatchers",
    "EndIfDone",
    "LeaveSeat",
    "OfferDeadline",
    "Reassert",
    "ReleaseSeat",
    "Rematch",
    "Retake",
    "RoomEvent",
    "SeatRobot",
    "StartRace",
    "TakeSeat",
    "TellSpectators",
    "Update",
    "first_board",
]

T_co = TypeVar("T_co", covariant=True)


class Update(Protocol[T_co]):
    """A change of a room, applied by a store atomically: it changes ``room`` in place and
    sets a seat's ``progress`` to a new value, and returns the events to append (each a
    :data:`RoomEvent`, a closed union) and its value; raising (a :class:`Refusal`) aborts
    it and nothing is stored. It may run more than once (a store retries on a conflict), so
    it reads everything from its arguments and its fields."""

    def __call__(
        self, room: RoomState, progress: dict[int, ProgressState]
    ) -> tuple[list[RoomEvent], T_co]: ...


@dataclass(frozen=True, slots=True)
class TakeSeat:
    """A player takes a new seat (the first one becomes the host; ``rating``: their rating
    as shown and whether it is provisional, kept in a rated room); value: the seat."""

    name: str
    token_hash: str
    conn: str
    now: int
    player_id: str | None = None
    rating: tuple[int, bool] | None = None

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, int]:
        seat, events = add_player(
            room, self.name, self.token_hash, self.conn, self.now, self.player_id, self.rating
        )
        return events, seat.seat


@dataclass(frozen=True, slots=True)
class SeatRobot:
    """The host ``by`` seats a robot between races; value: its seat."""

    by: int
    name: str
    token_hash: str
    conn: str
    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, int]:
        if room.host != self.by:
            raise Refusal("not_host", "only the host can seat a bot")
        if room.phase == "running":
            raise Refusal("race_running", "a race is running: add it before the next one")
        if room.options.rated:
            raise Refusal("rated_no_robots", "a rated room races people only: no bots or ghosts")
        seat, events = add_player(room, self.name, self.token_hash, self.conn, self.now)
        seat.robot = True
        return events, seat.seat


@dataclass(frozen=True, slots=True)
class Retake:
    """A resuming connection takes its seat back, with a new epoch (the old connection's
    writes are refused from now on); value: the connection that held it, and the epoch."""

    seat: int
    token_hash: str
    conn: str
    now: int

    def __call__(
        self, room: RoomState, progress: dict[int, ProgressState]
    ) -> tuple[Events, tuple[str | None, int]]:
        seat = room.seat(self.seat)
        if seat is None or seat.token_hash != self.token_hash:
            raise Refusal("bad_token", "this seat was given up")
        old = seat.conn
        seat.epoch += 1
        if seat.connected:
            seat.conn = self.conn  # replaces the other connection, no presence change
            return [], (old, seat.epoch)
        return set_connected(room, progress, seat, self.conn, self.now), (old, seat.epoch)


@dataclass(frozen=True, slots=True)
class Reassert:
    """After an outage of the store, a connection that holds ``seat`` with ``epoch`` says
    it is still there (another worker may have taken it for gone meanwhile); value: whether
    it still holds the seat (False: it was taken by a resume, or given up)."""

    seat: int
    conn: str
    epoch: int
    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        seat = room.seat(self.seat)
        if seat is None or seat.conn != self.conn or seat.epoch != self.epoch:
            return [], False
        if seat.connected:
            return [], True
        return set_connected(room, progress, seat, self.conn, self.now), True


@dataclass(frozen=True, slots=True)
class Disconnect:
    """Connection ``conn`` no longer holds ``seat`` (closed, or its worker died); value:
    whether it still held it (a newer connection may have taken it meanwhile)."""

    seat: int
    conn: str | None
    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        seat = room.seat(self.seat)
        if seat is None or seat.conn != self.conn:
            return [], False
        events = set_connected(room, progress, seat, None, self.now)
        # a rematch offer waits for nobody who went away
        return events + settle(room, progress, self.now), True


SPECTATORS_EVERY_MS = 1000
"""A room's ``spectators`` event goes out at most this often (ms)."""


def _tell_spectators(room: RoomState, now: int) -> tuple[Events, int | None]:
    """The ``spectators`` event if the count changed since it was last told and the last
    one is a second old; else no event, and when to try again (None: nothing to tell)."""
    if room.spectators == room.spectators_told:
        return [], None
    due = room.spectators_told_at + SPECTATORS_EVERY_MS
    if now < due:
        return [], due
    room.spectators_told, room.spectators_told_at = room.spectators, now
    return [spectators_event(room)], None


@dataclass(frozen=True, slots=True)
class CountSpectator:
    """One spectator more (``change=+1``) or fewer (``-1``) on ``worker``. The count is
    told at once when no ``spectators`` event went out in the last second; value: None, or
    the server time (ms) at which :class:`TellSpectators` should tell it."""

    worker: str
    change: int
    now: int = 0

    def __call__(
        self, room: RoomState, progress: dict[int, ProgressState]
    ) -> tuple[Events, int | None]:
        n = room.watchers.get(self.worker, 0) + self.change
        if n > 0:
            room.watchers[self.worker] = n
        else:
            room.watchers.pop(self.worker, None)
        room.spectators = sum(room.watchers.values())
        return _tell_spectators(room, self.now)


@dataclass(frozen=True, slots=True)
class TellSpectators:
    """Tell the spectator count if it changed since it was last told (at most once a
    second); value: as :class:`CountSpectator`'s."""

    now: int

    def __call__(
        self, room: RoomState, progress: dict[int, ProgressState]
    ) -> tuple[Events, int | None]:
        return _tell_spectators(room, self.now)


@dataclass(frozen=True, slots=True)
class DropWatchers:
    """The spectators of workers that died are gone (told at once: a worker's death is
    rare, and nobody else would tell it)."""

    workers: frozenset[str]

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, None]:
        if not self.workers & room.watchers.keys():
            return [], None
        for worker in self.workers:
            room.watchers.pop(worker, None)
        room.spectators = sum(room.watchers.values())
        room.spectators_told = room.spectators
        return [spectators_event(room)], None


@dataclass(frozen=True, slots=True)
class ReleaseSeat:
    """A player who stayed away past the grace period loses the seat — unless they came
    back, or are still racing (they are resigned first)."""

    seat: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, None]:
        s = room.seat(self.seat)
        if s is None or s.connected:
            return [], None
        p = progress.get(self.seat)
        if room.phase == "running" and p is not None and p.status == "playing":
            return [], None
        return remove_seat(room, s), None


def _start(
    room: RoomState,
    progress: dict[int, ProgressState],
    by: int,
    now: int,
    countdown_ms: int,
    deal: str | None = None,
    typed: bool = False,
    attempts: dict[str, str] | None = None,
) -> Events:
    """Start a race on ``deal`` (the room's own when None), with its first board. A room
    on a day's secret deal whose day is over plays it as any other deal from now on."""
    if room.secret_until is not None and now >= room.secret_until:
        room.daily = False  # the day is over: an ordinary deal from now on
        room.daily_day = room.secret_until = None
    total, view = first_board(deal or room.deal)
    return start_race(
        room,
        progress,
        by,
        now,
        countdown_ms,
        total,
        deal=deal,
        typed=typed,
        view=view,
        attempts=attempts,
    )


@functools.lru_cache(maxsize=64)
def first_board(deal: str) -> tuple[int, dict[str, Any]]:
    """The card total and the first board of ``deal``, made once for the many rooms that
    start one deal (the day's, a shared one: a thousand players starting the day's deal
    would lay it out a thousand times). The board is encoded into ``race_starting``, never
    changed."""
    first = new_game(deal)
    return first.total, first.player_view()


@dataclass(frozen=True, slots=True)
class StartRace:
    """The host ``by`` starts the first race of the room (``attempts``: on the day's deal,
    what the race is for each racer)."""

    by: int
    now: int
    countdown_ms: int
    attempts: dict[str, str] | None = None

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, None]:
        events = _start(
            room, progress, self.by, self.now, self.countdown_ms, attempts=self.attempts
        )
        return events, None


@dataclass(frozen=True, slots=True)
class Rematch:
    """The host ``by`` offers the next race after one ended: on the ``same`` deal, a
    ``random`` or ``daily`` one, or the one of ``deal_code`` (kind ``code``; kind ``daily``
    with the day's secret deal as ``deal_code`` and ``daily``, its day and end; kind
    ``random`` with ``deal_code``: a random deal drawn already, proven winnable). The players
    have ``wait_ms`` to answer (:class:`AnswerRematch`); with nobody to ask (the host alone,
    or with robots) the race starts at once. ``attempts``: on the day's deal, the host's
    attempt. Value: whether it started."""

    by: int
    kind: DealKind
    deal_code: str | None
    now: int
    countdown_ms: int
    wait_ms: int
    daily: tuple[str, int] | None = None
    attempts: dict[str, str] | None = None

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        if room.host == self.by and room.phase == "ended" and room.offer is None:
            if self.kind == "daily":
                if self.daily is None or self.deal_code is None:
                    raise Refusal("bad_deal", "the deal of the day was not given")
                deal = self.deal_code
            elif self.kind == "random" and self.deal_code is not None:
                deal = self.deal_code  # drawn (and proven) before the update
            else:
                deal = choose_deal(room.game, self.kind, self.deal_code, room.deal)
        else:
            deal = room.deal  # refused below, with the reason
        # whoever typed the code knows it, the same deal again included
        typed = self.kind == "code" or (self.kind == "same" and room.deal_typed_by == self.by)
        # the day's secret deal: a daily rematch, or the same one again within its day
        secret: tuple[str | None, int | None] = (None, None)
        if self.kind == "daily" and self.daily is not None:
            secret = self.daily
        elif self.kind == "same" and room.secret_until is not None and self.now < room.secret_until:
            secret = (room.daily_day, room.secret_until)
        offered = offer_rematch(
            room,
            self.by,
            self.kind,
            deal,
            self.now,
            self.wait_ms,
            self.countdown_ms,
            typed=typed,
            daily=secret[0] is not None,
            secret=secret,
            attempts=self.attempts,
        )
        if not offer_waiting(room):
            # nobody to ask: no offer to show, the race starts as a start would
            return settle(room, progress, self.now), True
        return offered, False


@dataclass(frozen=True, slots=True)
class AnswerRematch:
    """Seat ``seat`` (held by ``conn``) answers the offer of race ``race``; the race starts
    once nobody is waited for. Value: whether it started."""

    seat: int
    conn: str
    race: int
    accept: bool
    now: int
    #: on the day's deal: the player's attempt, made as they accepted
    attempt: str | None = None

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        seat = room.seat(self.seat)
        if seat is None or seat.conn != self.conn:
            raise Refusal("replaced", "this seat is held by another connection")
        offer = room.offer
        if offer is None or offer.race != self.race:
            raise Refusal("no_offer", f"no rematch is offered for race {self.race}")
        offer.answers[self.seat] = self.accept
        if self.attempt is not None:
            offer.attempts[str(self.seat)] = self.attempt
        events = settle(room, progress, self.now)
        return events, bool(events)


@dataclass(frozen=True, slots=True)
class OfferDeadline:
    """The time to answer the offer of race ``race`` is up (a timer on each worker with the
    room says so; the first to come starts it, the others find nothing to do): the race
    starts with those who accepted. Value: whether it started."""

    race: int
    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        offer = room.offer
        if offer is None or offer.race != self.race or self.now < offer.deadline:
            return [], False
        events = settle(room, progress, self.now, force=True)
        return events, bool(events)


@dataclass(frozen=True, slots=True)
class LeaveSeat:
    """The player of ``seat`` (held by ``conn``) leaves the room: the seat is freed at once
    and the host passes on. Value: False when the seat still races (nothing changed:
    resign it first)."""

    seat: int
    conn: str
    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        seat = room.seat(self.seat)
        if seat is None or seat.conn != self.conn:
            raise Refusal("replaced", "this seat is held by another connection")
        p = progress.get(self.seat)
        if room.phase == "running" and p is not None and p.status == "playing":
            return [], False
        events = remove_seat(room, seat)
        # the offer waits for one answer fewer
        return events + settle(room, progress, self.now), True


@dataclass(frozen=True, slots=True)
class EndIfDone:
    """End the race when every participant has finished; value: whether it ended now."""

    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        events = check_race_end(room, progress, self.now)
        return events, bool(events)
