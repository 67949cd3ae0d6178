"""Rooms in one process: a dict, with the Redis store's semantics — rooms expire, event
lists are capped — so nothing grows without bound. Each change is whole before the next
``await``, so it is atomic by itself."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from protocol.frames import EventBody

from ...rooms.room import ProgressState, RoomState
from ...rooms.updates import Update
from ..rooms import (
    Fenced,
    LogConflict,
    Snapshot,
    UnknownRoom,
    entry_move,
    entry_time,
    events_after,
    kept_for,
    log_entry,
)
from .events import EventLog

__all__ = ["MemoryRooms"]

T = TypeVar("T")


@dataclass(slots=True)
class _Entry:
    room: str  # RoomState JSON: a stored copy, never aliased
    events: EventLog
    progress: dict[int, ProgressState] = field(default_factory=dict)
    moves: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    #: each seat's epoch, as the room says (the fencing token checked by append)
    epochs: dict[int, int] = field(default_factory=dict)
    expires_at: float = 0.0


class MemoryRooms:
    """:class:`~server.store.rooms.RoomStore` in a dict; events go out through ``publish``
    (the broker's), the last ``event_cap`` of each room kept."""

    def __init__(
        self,
        publish: Callable[[str, bytes], None],
        *,
        event_cap: int = 500,
        active_ttl: float = 6 * 3600,
        finished_ttl: float = 3600,
    ) -> None:
        self._publish = publish
        self.event_cap = event_cap
        self.active_ttl = active_ttl
        self.finished_ttl = finished_ttl
        self._rooms: dict[str, _Entry] = {}

    @property
    def room_count(self) -> int:
        """Rooms currently stored (for tests and metrics)."""
        return len(self._rooms)

    def sweep(self, now: float | None = None) -> int:
        """Drop expired rooms; returns how many."""
        now = time.monotonic() if now is None else now
        dead = [room_code for room_code, e in self._rooms.items() if e.expires_at <= now]
        for room_code in dead:
            del self._rooms[room_code]
        return len(dead)

    def _get(self, room_code: str) -> _Entry | None:
        entry = self._rooms.get(room_code)
        if entry is not None and entry.expires_at <= time.monotonic():
            del self._rooms[room_code]
            return None
        return entry

    def _touch(self, entry: _Entry, room: RoomState) -> None:
        entry.expires_at = time.monotonic() + kept_for(room, self.active_ttl, self.finished_ttl)

    async def create(self, room: RoomState) -> bool:
        """Store a new room unless the code is taken."""
        if self._get(room.code) is not None:
            return False
        entry = _Entry(room=room.model_dump_json(), events=EventLog(self.event_cap))
        self._touch(entry, room)
        self._rooms[room.code] = entry
        return True

    async def snapshot(self, room_code: str) -> Snapshot | None:
        """A copy of the room's state and progress."""
        entry = self._get(room_code)
        if entry is None:
            return None
        return Snapshot(
            RoomState.model_validate_json(entry.room),
            dict(entry.progress),
            entry.events.seq,
        )

    async def update(self, room_code: str, update: Update[T]) -> tuple[Snapshot, T]:
        """Apply ``update`` to copies; store them only if it returns (no await in between,
        so nothing else runs in the middle)."""
        snap = await self.snapshot(room_code)
        entry = self._get(room_code)
        if snap is None or entry is None:
            raise UnknownRoom(room_code)
        events, value = update(snap.room, snap.progress)
        entry.room = snap.room.model_dump_json()
        entry.progress = dict(snap.progress)
        entry.epochs = {s.seat: s.epoch for s in snap.room.seats}
        if snap.room.phase == "running":
            # older races' move logs are never read again
            for key in [k for k in entry.moves if k[0] < snap.room.race]:
                del entry.moves[key]
        data = entry.events.stamp(events)
        self._touch(entry, snap.room)
        snap.seq = entry.events.seq
        for item in data:
            self._publish(room_code, item)
        return snap, value

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
        """Store a move, the seat's progress and its events, if the seat is still racing
        (and held with ``epoch``)."""
        entry = self._get(room_code)
        if entry is None:
            return None
        if epoch is not None and entry.epochs.get(seat, 1) != epoch:
            raise Fenced(f"seat {seat} is held with epoch {entry.epochs.get(seat)}, not {epoch}")
        current = entry.progress.get(seat)
        if current is None or current.race != race or current.status != "playing":
            return None
        if move is not None:
            log = entry.moves.setdefault((race, seat), [])
            if index is not None and len(log) != index:
                raise LogConflict(f"log has {len(log)} moves, not {index}")
            log.append(log_entry(move, at))
        if progress is not None:
            entry.progress[seat] = progress  # a frozen value: kept as given
        data = entry.events.stamp(events)
        for item in data:
            self._publish(room_code, item)
        return data

    async def moves(self, room_code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """A copy of the move log from ``start``."""
        entry = self._get(room_code)
        if entry is None:
            return []
        return [entry_move(e) for e in entry.moves.get((race, seat), [])[start:]]

    async def times(self, room_code: str, race: int, seat: int) -> list[int | None]:
        """The time of each move of the log."""
        entry = self._get(room_code)
        if entry is None:
            return []
        return [entry_time(e) for e in entry.moves.get((race, seat), [])]

    async def log(self, room_code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """A copy of the move log's entries from ``start``, with their times."""
        entry = self._get(room_code)
        if entry is None:
            return []
        return list(entry.moves.get((race, seat), [])[start:])

    async def events_since(self, room_code: str, after: int) -> list[bytes] | None:
        """Kept events after ``after``; None if the first missed one was dropped."""
        entry = self._get(room_code)
        if entry is None:
            return None
        return events_after(entry.events.kept, entry.events.seq, after)
