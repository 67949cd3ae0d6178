"""The store + broker interface the server runs on, with two implementations chosen at
start-up: :class:`server.memory.MemoryBackend` (one process) and
:class:`server.redis_backend.RedisBackend` (several workers sharing rooms).

A backend keeps, per room: the :class:`~server.room.RoomState`, one
:class:`~server.room.ProgressState` per seat of the current race, each seat's move log, the
room's event counter and a capped list of recent events; and it delivers every room event
(and control messages between workers) to every subscribed worker, own worker included.

Events are stored and published as the exact bytes sent to clients: the body given by the
caller with ``"seq"`` put in front (``{"seq":12,"type":"progress",…}``).
"""

from __future__ import annotations

import abc
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from protocol.frames import EventBody, event_seq, stamp_event

from ..rooms.room import (
    ProgressState,
    RoomState,
)
from ..rooms.updates import (
    Update,
)
from .beats import Beats
from .directory import Directory
from .pending import PendingWrites
from .presence import PresenceMarks
from .tournaments import TournamentStore

__all__ = [
    "Backend",
    "Fenced",
    "Health",
    "HealthHook",
    "HealthWatch",
    "Listener",
    "LogConflict",
    "NotDurable",
    "OutcomeUnknown",
    "Snapshot",
    "StoreUnavailable",
    "StoreUnsuitable",
    "UnknownRoom",
    "entry_move",
    "entry_time",
    "event_seq",
    "events_after",
    "log_entry",
    "recent_events",
    "stamp_event",
]

Listener = Callable[[str, bytes], None]
"""Called with (room code, message bytes) for every message on a subscribed room."""

T = TypeVar("T")

logger = logging.getLogger("samedeal.store")


class UnknownRoom(KeyError):
    """No room has this code (it never existed, or it expired)."""


class StoreUnavailable(ConnectionError):
    """The store cannot be reached now. Nothing was changed: the request may be sent
    again."""


class OutcomeUnknown(StoreUnavailable):
    """A write reached the store, which then stopped answering, and did not answer again
    before the time allowed: it may or may not have been done. Only a fresh read (after a
    reconnect) tells."""


class NotDurable(OutcomeUnknown):
    """The store did the write but could not confirm, in the time allowed, that it is kept
    as durably as asked (no replica acknowledged it, the file was not synced): it may be
    lost if the store fails now. Never an acknowledgement."""


class StoreUnsuitable(StoreUnavailable):
    """The store answers but is not set up for what was asked of it (a durability it does
    not provide): the server does not start on it."""


class Fenced(Exception):
    """A write for a seat carried an older epoch than the store's: a newer connection took
    the seat (a resume). Nothing was changed, and nothing of the old connection will be."""


@dataclass(frozen=True, slots=True)
class Health:
    """Whether the store can be reached, why not, and since when (monotonic seconds)."""

    ok: bool
    reason: str = ""
    since: float = 0.0


HealthHook = Callable[[Health], None]
"""Called when the store's health changes (lost, or back)."""


class HealthWatch:
    """A store's health as last seen, with one log line per change ("unreachable", "back
    after 5.2 s") instead of one per failed call, and the hooks told of each change."""

    def __init__(self, name: str, hooks: list[HealthHook]) -> None:
        self.name = name
        self.hooks = hooks
        self.state = Health(True, since=time.monotonic())

    def down(self, reason: str) -> None:
        """The store could not be reached."""
        if not self.state.ok:
            return
        self.state = Health(False, reason, time.monotonic())
        logger.warning("%s unreachable: %s", self.name, reason)
        self._tell()

    def up(self) -> None:
        """The store answered."""
        if self.state.ok:
            return
        now = time.monotonic()
        logger.warning("%s back after %.1f s", self.name, now - self.state.since)
        self.state = Health(True, since=now)
        self._tell()

    def _tell(self) -> None:
        for hook in list(self.hooks):
            try:
                hook(self.state)
            except Exception:
                logger.exception("a health hook failed")


class LogConflict(Exception):
    """The move log is not as long as the caller's game thinks: another connection for the
    seat stored a move meanwhile. Nothing was stored; reload the game from the log."""


@dataclass(slots=True)
class Snapshot:
    """A consistent read of a room: state, progress of the current race, last event seq."""

    room: RoomState
    progress: dict[int, ProgressState]
    seq: int


def events_after(kept: Iterable[bytes], last_seq: int, after: int) -> list[bytes] | None:
    """The events of ``kept`` (a room's stored events, oldest first, the newest numbered
    ``last_seq``) with seq > ``after``; None when some of them are no longer kept."""
    if after >= last_seq:
        return []
    events = list(kept)
    if not events or (event_seq(events[0]) or 0) > after + 1:
        return None
    return [e for e in events if (event_seq(e) or 0) > after]


async def recent_events(backend: Backend, code: str, newest: int) -> list[bytes]:
    """A room's kept events as of ``newest`` (a snapshot's seq), oldest first: all the store
    keeps of them but the oldest tenth (at most 50), which events stamped since the snapshot
    may have pushed out (none, when even those are gone)."""
    margin = min(50, backend.event_cap // 10)
    return await backend.events_since(code, max(0, newest - backend.event_cap + margin)) or []


class Backend(abc.ABC):
    """Where rooms live and how their events travel. All methods are coroutines safe to
    call concurrently; ``update_room`` and ``append`` are atomic. A method that cannot reach
    the store raises :class:`StoreUnavailable` (nothing changed)."""

    worker_id: str
    event_cap: int
    active_ttl: float
    finished_ttl: float
    #: several workers share the store (so some of them may die while others run)
    shared: bool = False
    #: records writes not confirmed yet
    pending: PendingWrites
    #: every worker's beat, for liveness
    beats: Beats
    #: the live directory
    directory: Directory
    #: tournaments' live state
    tournaments: TournamentStore
    #: who is present in each tournament
    presence: PresenceMarks

    def __init__(self) -> None:
        self.health_hooks: list[HealthHook] = []

    def health(self) -> Health:
        """Whether the store can be reached now."""
        return Health(True)

    @abc.abstractmethod
    async def start(self, listener: Listener) -> None:
        """Connect, and deliver messages of subscribed rooms to ``listener`` from now on."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop listening and release connections."""

    @abc.abstractmethod
    async def subscribe(self, code: str) -> None:
        """Receive the events of room ``code``; returns once the subscription is live."""

    @abc.abstractmethod
    async def unsubscribe(self, code: str) -> None:
        """Stop receiving the events of room ``code``."""

    @abc.abstractmethod
    async def publish_control(self, code: str, data: bytes) -> None:
        """Send a control message (not a room event, not stored) to every subscribed worker."""

    @abc.abstractmethod
    async def create_room(self, room: RoomState) -> bool:
        """Store a new room; False if its code is taken."""

    @abc.abstractmethod
    async def snapshot(self, code: str) -> Snapshot | None:
        """The room's state, progress and last seq, read together; None if unknown."""

    @abc.abstractmethod
    async def update_room(self, code: str, update: Update[T]) -> tuple[Snapshot, T]:
        """Apply ``update`` atomically (retrying on conflicts), store and publish its events.

        Returns the new snapshot and the update's value. Raises whatever ``update`` raises
        (nothing is changed then) and :class:`UnknownRoom` for an unknown room.
        """

    @abc.abstractmethod
    async def append(
        self,
        code: str,
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
        raises :class:`StoreUnavailable` when it was certainly not stored and
        :class:`OutcomeUnknown` when that cannot be known. ``progress`` may be kept as
        given (no copy: this is every move's path), so the caller must not change it
        afterwards.

        The server stores a seat's progress together with its ``progress`` event: a move
        whose event is held back (coalesced) is stored without it, and the stored progress
        is then behind the log by the moves of at most one progress interval, as the
        room's view is; what needs the exact state (results, resuming) replays the log."""

    @abc.abstractmethod
    async def moves(self, code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """A seat's move log for a race, from index ``start`` (the moves, without times)."""

    @abc.abstractmethod
    async def times(self, code: str, race: int, seat: int) -> list[int | None]:
        """The server time (ms since the race's start) of each move of a seat's log;
        ``None`` for a move stored without one."""

    @abc.abstractmethod
    async def log(self, code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """A seat's move log for a race from index ``start``, as stored: each entry the move
        and its time (:func:`log_entry`)."""

    @abc.abstractmethod
    async def events_since(self, code: str, after: int) -> list[bytes] | None:
        """The stored events with seq > ``after``, or None when some are no longer kept."""

    @abc.abstractmethod
    async def ping(self) -> float:
        """Round trip to the store in seconds (0 for memory)."""

    def ttl_for(self, room: RoomState) -> float:
        """How long a room is kept after its last change."""
        return self.finished_ttl if room.phase == "ended" else self.active_ttl


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
