"""The room store: rooms and their move logs, the one part of the store every move goes
through.

Per room it keeps the :class:`~server.rooms.room.RoomState`, one
:class:`~server.rooms.room.ProgressState` per seat of the current race, each seat's move log
(entries :func:`log_entry`), each seat's epoch, the room's event counter and a capped list
of recent events. Every change stores and publishes its events in the same atomic step, on
the room's channel (:mod:`server.store.broker`). Events are stored and published as the
exact bytes sent to clients: the body given by the caller with ``"seq"`` put in front
(``{"seq":12,"type":"progress",…}``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from protocol.frames import EventBody, event_seq

from ..rooms.room import ProgressState, RoomState
from ..rooms.updates import Update

__all__ = [
    "Fenced",
    "LogConflict",
    "RoomStore",
    "Snapshot",
    "UnknownRoom",
    "entry_move",
    "entry_time",
    "events_after",
    "kept_for",
    "log_entry",
    "recent_events",
]

T = TypeVar("T")


class UnknownRoom(KeyError):
    """No room has this code (it never existed, or it expired)."""


class LogConflict(Exception):
    """The move log is not as long as the caller's game thinks: another connection for the
    seat stored a move meanwhile. Nothing was stored; reload the game from the log."""


class Fenced(Exception):
    """A write for a seat carried an older epoch than the store's: a newer connection took
    the seat (a resume). Nothing was changed, and nothing of the old connection will be."""


@dataclass(slots=True)
class Snapshot:
    """A consistent read of a room: state, progress of the current race, last event seq."""

    room: RoomState
    progress: dict[int, ProgressState]
    seq: int


class RoomStore(Protocol):
    """Where rooms live. All methods are coroutines safe to call concurrently; ``update``
    and ``append`` are atomic. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable` (nothing changed)."""

    #: how many of a room's latest events are kept
    event_cap: int

    async def create(self, room: RoomState) -> bool:
        """Store a new room; False if its code is taken."""
        ...

    async def snapshot(self, room_code: str) -> Snapshot | None:
        """The room's state, progress and last seq, read together; None if unknown."""
        ...

    async def update(self, room_code: str, update: Update[T]) -> tuple[Snapshot, T]:
        """Apply ``update`` atomically (retrying on conflicts), store and publish its events.

        Returns the new snapshot and the update's value. Raises whatever ``update`` raises
        (nothing is changed then) and :class:`UnknownRoom` for an unknown room.
        """
        ...

    async def append(
        self,
        room_code: str,
        race: int,
        seat: int,
        *,
        move: str | None,
        progress: ProgressState | None,
        events: list[EventBody],
        index: int | None = None,
        at: int | None = None,
        epoch: int | None = None,
    ) -> list[bytes] | None:
        """Atomically: check the seat is still ``playing`` in ``race``, append ``move`` to its
        log (with ``at``, the server time in ms since the race's start: the log entry is
        :func:`log_entry`), store ``progress`` unless it is None, store and publish
        ``events``. None if the check failed (nothing changed). With ``index``, the move
        must land at that position of the log, else :class:`LogConflict`. With ``epoch``
        (the writer's hold on the seat), the seat's epoch in the store must be the same,
        else :class:`Fenced`: checked in the same atomic step, so a connection replaced by
        a resume can never store anything again. Returns only once everything is stored;
        raises :class:`~server.store.errors.StoreUnavailable` when it was certainly not
        stored and :class:`~server.store.errors.OutcomeUnknown` when that cannot be known.
        ``progress`` may be kept as given (no copy: this is every move's path), so the
        caller must not change it afterwards.

        The server stores a seat's progress together with its ``progress`` event: a move
        whose event is held back (coalesced) is stored without it, and the stored progress
        is then behind the log by the moves of at most one progress interval, as the
        room's view is; what needs the exact state (results, resuming) replays the log."""
        ...

    async def moves(self, room_code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """A seat's move log for a race, from index ``start`` (the moves, without times)."""
        ...

    async def times(self, room_code: str, race: int, seat: int) -> list[int | None]:
        """The server time (ms since the race's start) of each move of a seat's log;
        ``None`` for a move stored without one."""
        ...

    async def log(self, room_code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """A seat's move log for a race from index ``start``, as stored: each entry the move
        and its time (:func:`log_entry`)."""
        ...

    async def events_since(self, room_code: str, after: int) -> list[bytes] | None:
        """The stored events with seq > ``after``, or None when some are no longer kept."""
        ...


def kept_for(room: RoomState, active_ttl: float, finished_ttl: float) -> float:
    """How long a room is kept after its last change: ``finished_ttl`` once its race has
    ended, else ``active_ttl`` (seconds)."""
    return finished_ttl if room.phase == "ended" else active_ttl


def events_after(kept: Iterable[bytes], last_seq: int, after: int) -> list[bytes] | None:
    """The events of ``kept`` (a room's stored events, oldest first, the newest numbered
    ``last_seq``) with seq > ``after``; None when some of them are no longer kept."""
    if after >= last_seq:
        return []
    events = list(kept)
    if not events or (event_seq(events[0]) or 0) > after + 1:
        return None
    return [e for e in events if (event_seq(e) or 0) > after]


async def recent_events(rooms: RoomStore, room_code: str, newest: int) -> list[bytes]:
    """A room's kept events as of ``newest`` (a snapshot's seq), oldest first: all the store
    keeps of them but the oldest tenth (at most 50), which events stamped since the snapshot
    may have pushed out (none, when even those are gone)."""
    margin = min(50, rooms.event_cap // 10)
    return await rooms.events_since(room_code, max(0, newest - rooms.event_cap + margin)) or []


def log_entry(move: str, at: int | None) -> str:
    """A move log entry: the move, and ``@`` with its time in ms since the race's start
    when known (``t2-f1@5230``)."""
    return move if at is None else f"{move}@{at}"


def entry_move(entry: str) -> str:
    """The move of a log entry."""
    return entry.split("@", 1)[0]


def entry_time(entry: str) -> int | None:
    """The time of a log entry (ms since the race's start), if stored."""
    _, sep, at = entry.partition("@")
    return int(at) if sep else None
