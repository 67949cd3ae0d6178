"""The rooms this worker has connections in, and delivering their events.

Every room event reaches a worker from the backend's subscription (its own events too), in
``seq`` order, and is passed here to :meth:`Rooms.deliver`: it updates the worker's
:class:`LocalRoom` (the facts the race layer checks moves against), tells the layers that
watch events (race timers, followed boards), then sends the frame — encoded once — to every
connection of the room that may see it. What a connection may see is decided in one place,
the fair-play filter (:meth:`Rooms.may_see`, :meth:`Rooms.frame_for`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from websockets.asyncio.server import broadcast

from protocol.frames import event_seq

from .backend import Backend, Snapshot
from .config import Config, now_ms
from .connection import Conn, Player
from .metrics import Metrics
from .tasks import Tasks

__all__ = ["DEAL_EVENTS", "LocalRoom", "Rooms"]

logger = logging.getLogger("samedeal.server")

DEAL_EVENTS = frozenset({"race_starting", "player_finished", "race_ended"})
"""Events whose stored form may hold the deal code (and, for the workers, who typed it and
until when the day's deal is secret)."""
_INTERNAL = frozenset({"typed_by", "secret_until"})

Event = dict[str, Any]


@dataclass(slots=True)
class LocalRoom:
    """What this worker knows of a room it has connections (or robots) in."""

    room_code: str
    conns: set[Conn] = field(default_factory=set)
    #: seats played by robots on this worker (they keep the room here without a socket)
    robots: dict[int, Player] = field(default_factory=dict)
    phase: str = "lobby"
    race: int = 0
    deal_code: str = ""
    start_at: int | None = None
    deadline: int | None = None
    participants: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)
    typed_by: int | None = None
    #: the day's secret deal: nobody is told its code before this (ms); None otherwise
    secret_until: int | None = None
    delay: int = 0
    #: the race's time-out (armed by the race layer on every worker with the room)
    timer: asyncio.TimerHandle | None = None
    subscribed: asyncio.Event = field(default_factory=asyncio.Event)

    def learn(self, snap: Snapshot) -> None:
        """Take the race facts from a fresh snapshot."""
        room = snap.room
        if room.race != self.race:
            self.finished = set()
        self.phase, self.race, self.deal_code = room.phase, room.race, room.deal
        self.typed_by = room.deal_typed_by
        self.secret_until = room.secret_until
        self.start_at, self.deadline = room.start_at, room.deadline
        self.participants = set(room.participants)
        self.delay = room.options.spectator_delay
        self.finished |= {
            s for s, p in snap.progress.items() if p.race == room.race and p.status != "playing"
        }

    def learn_event(self, event: Event) -> None:
        """Take the race facts an event tells."""
        kind = event.get("type")
        if kind == "race_starting":
            self.phase, self.race, self.deal_code = "running", event["race"], event["deal"]
            self.typed_by = event.get("typed_by")
            self.secret_until = event.get("secret_until")
            self.start_at, self.deadline = event["start_at"], event["deadline"]
            self.participants, self.finished = set(event["seats"]), set()
        elif kind == "race_ended" and event.get("race") == self.race:
            self.phase = "ended"
        elif kind == "player_finished" and event.get("race") == self.race:
            self.finished.add(event["seat"])

    def may_see(self, conn: Conn, event: Event) -> bool:
        """Fair play: a player still racing never gets another player's move list/board."""
        if event.get("type") != "player_finished":
            return True
        return not (
            conn.role == "player"
            and event.get("race") == self.race
            and self.phase == "running"
            and conn.seat in self.participants
            and conn.seat not in self.finished
        )

    def frame_for(self, conn: Conn, event: Event, data: bytes) -> bytes:
        """Fair play: the frame of a stored event for ``conn``. The deal code of a race goes
        to the player who typed it, to a player in their own ``player_finished``, and to
        everyone once the race has ended — but the day's secret deal to nobody before its
        day is over; the rest get the event with ``deal: null``."""
        if event.get("type") not in DEAL_EVENTS:
            return data
        race = event.get("race", 0)
        seat = conn.seat if conn.role == "player" else None
        secret_until = event.get("secret_until")
        knows = not (secret_until is not None and now_ms() < secret_until) and (
            race < self.race
            or (race == self.race and self.phase == "ended")
            or (seat is not None and seat in (event.get("typed_by"), self.typed_by))
            or (
                seat is not None
                and event.get("type") == "player_finished"
                and seat == event.get("seat")
            )
        )
        if knows and not _INTERNAL & event.keys():
            return data
        shown = {
            k: (v if knows or k != "deal" else None) for k, v in event.items() if k not in _INTERNAL
        }
        return orjson.dumps(shown)


EventHook = Callable[[LocalRoom, Event], None]
DropHook = Callable[[LocalRoom], None]
DetachHook = Callable[[Conn], None]


class Rooms:
    """The local room registry: attach and detach connections, deliver room events."""

    def __init__(self, backend: Backend, config: Config, metrics: Metrics, tasks: Tasks) -> None:
        self.backend = backend
        self.config = config
        self.metrics = metrics
        self.tasks = tasks
        self.rooms: dict[str, LocalRoom] = {}
        #: every connection of this worker, by id (a ``kick`` names one)
        self.conns: dict[str, Conn] = {}
        #: called with each delivered event once the room has learnt it
        self.event_hooks: list[EventHook] = []
        #: called when a connection leaves its room, before it is taken out
        self.detach_hooks: list[DetachHook] = []
        #: called when a room is dropped (its last connection or robot left)
        self.drop_hooks: list[DropHook] = []

    def get(self, room_code: str) -> LocalRoom | None:
        """The local room, if this worker has it."""
        return self.rooms.get(room_code)

    def __getitem__(self, room_code: str) -> LocalRoom:
        return self.rooms[room_code]

    def __len__(self) -> int:
        return len(self.rooms)

    # ------------------------------------------------------------------ membership

    async def attach(self, conn: Conn, room_code: str) -> LocalRoom:
        """Register ``conn`` in its local room, subscribing to the room on first use; room
        events wait in ``conn.pending`` until :meth:`ready`."""
        lr = await self.ensure(room_code)
        conn.room_code = room_code
        conn.ready = False
        conn.pending = []
        conn.last_seq = 0  # a room's seq numbers are its own: a previous room's must not hide them
        lr.conns.add(conn)
        return lr

    async def ensure(self, room_code: str) -> LocalRoom:
        """The local room, subscribed."""
        lr = self.rooms.get(room_code)
        if lr is None:
            lr = LocalRoom(room_code)
            self.rooms[room_code] = lr
            self.metrics.rooms = len(self.rooms)
            try:
                await self.backend.subscribe(room_code)
            except BaseException:
                if not lr.conns and not lr.robots:
                    self.rooms.pop(room_code, None)
                raise
            lr.subscribed.set()
        else:
            await asyncio.wait_for(lr.subscribed.wait(), 10)
        return lr

    def ready(self, conn: Conn, seq: int) -> None:
        """Deliver the events that arrived while joining, after ``seq``; go live."""
        conn.last_seq = max(conn.last_seq, seq)
        pending, conn.pending = conn.pending, []
        conn.ready = True
        lr = self.rooms.get(conn.room_code or "")
        for data in pending:
            s = event_seq(data) or 0
            if s > conn.last_seq:
                conn.last_seq = s
                event = orjson.loads(data)
                if lr is not None and lr.may_see(conn, event):
                    with contextlib.suppress(Exception):
                        conn.push(lr.frame_for(conn, event, data))

    def detach(self, conn: Conn) -> None:
        """Remove ``conn`` from its local room."""
        room_code = conn.room_code
        if room_code is None:
            return
        for hook in self.detach_hooks:
            hook(conn)
        conn.room_code = None
        lr = self.rooms.get(room_code)
        if lr is not None:
            lr.conns.discard(conn)
            self.drop_if_empty(lr)

    def drop_if_empty(self, lr: LocalRoom) -> None:
        """Drop a room nobody (connection or robot) is in any more, and unsubscribe."""
        if lr.conns or lr.robots or self.rooms.get(lr.room_code) is not lr:
            return
        self.drop(lr)
        self.tasks.spawn(self._unsubscribe(lr.room_code), "unsubscribe")

    def drop(self, lr: LocalRoom) -> None:
        """Forget a room: its timers and the layers' state of it go."""
        if lr.timer is not None:
            lr.timer.cancel()
            lr.timer = None
        for hook in self.drop_hooks:
            hook(lr)
        if self.rooms.get(lr.room_code) is lr:
            del self.rooms[lr.room_code]
        self.metrics.rooms = len(self.rooms)

    async def _unsubscribe(self, room_code: str) -> None:
        if room_code not in self.rooms:  # nobody came back meanwhile
            await self.backend.unsubscribe(room_code)

    def close(self, conn: Conn, code: int, reason: str) -> None:
        """Start closing; the handler reads on (ignoring frames) so the handshake can end."""
        if not conn.closing:
            conn.closing = True
            self.tasks.spawn(conn.ws.close(code, reason), f"close {conn.id}")

    # ------------------------------------------------------------------ delivery

    def deliver(self, room_code: str, data: bytes) -> None:
        """Deliver one room message from the backend to this worker's connections."""
        lr = self.rooms.get(room_code)
        if lr is None:
            return
        try:
            event = orjson.loads(data)
            seq = event_seq(data)
            if seq is None:
                self._control(event)
                return
            lr.learn_event(event)
            for hook in self.event_hooks:
                hook(lr, event)
            deal_event = event.get("type") in DEAL_EVENTS
            targets = []
            for conn in lr.conns:
                if not conn.ready:
                    conn.pending.append(data)
                elif seq > conn.last_seq:
                    conn.last_seq = seq
                    if conn.closing or not lr.may_see(conn, event):
                        continue
                    if conn.backlog() > self.config.max_backlog:
                        # a client that does not read would make the buffer grow forever
                        logger.warning(
                            "closing slow connection room=%s conn=%s", room_code, conn.id
                        )
                        self.close(conn, 1013, "too slow: reconnect and resume")
                        continue
                    if deal_event:
                        conn.push(lr.frame_for(conn, event, data))
                        continue
                    targets.append(conn.ws)
            broadcast(targets, data, text=True)
        except Exception:
            logger.exception("could not deliver a message room=%s", room_code)

    def _control(self, message: Event) -> None:
        if message.get("ctl") == "kick":
            conn = self.conns.get(str(message.get("conn")))
            if conn is not None:
                conn.seat = None  # the seat now belongs to the new connection
                conn.role = None
                self.close(conn, 4000, "replaced by a new connection")
