"""The room updates of a pool's room, pure: its seekers take the seats made for them, and
its race begins once they all have — or, at the room's ``pool_start_by``, with those who
have (a seat nobody took is freed first: its seeker's connection or worker went away).

A pool's room has no host: nobody starts it or offers a rematch; after the race, players
seek again.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..rooms.room import (
    Events,
    ProgressState,
    Refusal,
    RoomState,
    begin_race,
    remove_seat,
    seat_event,
)
from ..rooms.updates import first_board

__all__ = ["StartPoolRace", "TakePoolSeat"]


@dataclass(frozen=True, slots=True)
class TakePoolSeat:
    """A seeker's connection ``conn`` takes the seat ``seat`` made for them (they hold its
    token, whose hash is ``token_hash``); value: the seat. Refused once the race has
    begun without them."""

    seat: int
    token_hash: str
    conn: str
    now: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, int]:
        found = room.seat(self.seat)
        if found is None or found.token_hash != self.token_hash or room.race:
            raise Refusal("pool_room_gone", "the race began without you: seek again")
        was = found.connected
        found.conn, found.connected = self.conn, True
        return ([] if was else [seat_event(room, found)]), found.seat


@dataclass(frozen=True, slots=True)
class StartPoolRace:
    """Begin the race of a pool's room if every seat is taken, or (``force``: its
    ``pool_start_by`` has passed) with the seats taken, the others freed; value: whether
    it began now. Once only: a second finds it begun."""

    now: int
    countdown_ms: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        if room.race or room.pool is None:
            return [], False
        due = room.pool_start_by is not None and self.now >= room.pool_start_by
        absent = [s for s in room.seats if not s.connected]
        if absent and not due:
            return [], False
        events: Events = []
        for seat in absent:
            events += remove_seat(room, seat)
        racers = [s.seat for s in room.seats]
        if not racers:
            return events, False
        total, view = first_board(room.deal)
        events += begin_race(room, progress, racers, self.now, self.countdown_ms, total, view)
        return events, True
