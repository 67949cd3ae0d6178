"""The rooms this worker has connections in, and delivering their events.

Every room event reaches a worker from the backend's subscription (its own events too), in
``seq`` order, and is passed here to :meth:`Rooms.deliver`: it updates the worker's
:class:`LocalRoom` (the facts the race layer checks moves against), tells the layers that
watch events (race timers), then sends the frame — encoded once — to every connection of
the room that may see it. What a connection may see is decided in one place, the fair-play
filter (:meth:`LocalRoom.may_see`, :meth:`LocalRoom.frame_for`).

Spectators see the room through its :class:`~server.feed.Feed`: with a spectator delay
they get each event from the feed, that many seconds late (players are never delayed).
The layers that serve spectators (followed boards, the live directory) watch what the feed
releases (``release_hooks``). A player who finishes is sent the ``player_finished`` events
withheld from them while they raced.

Every frame a connection is sent goes through :meth:`Rooms.send`: a connection with more
than ``max_backlog`` bytes waiting to be written is closed (1013) instead, so a client that
stops reading never holds anything up and never makes the server's memory grow.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from protocol.frames import event_seq

from ..config import Config, now_ms
from ..edge.connection import Conn, Player
from ..metrics import Metrics
from ..store.backend import Backend, Snapshot, StoreUnavailable, recent_events
from ..tasks import Tasks
from .feed import Feed

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
    #: the room's races are rated: a racer leaving abandons (``left``) rather than resigns
    rated: bool = False
    #: the race's time-out (armed by the race layer on every worker with the room)
    timer: asyncio.TimerHandle | None = None
    subscribed: asyncio.Event = field(default_factory=asyncio.Event)
    #: what the room's spectators see (set by :meth:`Rooms.ensure`)
    feed: Feed | None = None
    #: this race's ``player_finished`` events by seat (seq, event, bytes): sent to a racer
    #: once they finish, who could not see them while racing
    finishes: dict[int, tuple[int, Event, bytes]] = field(default_factory=dict)

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
        self.rated = room.options.rated
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
ControlHook = Callable[[LocalRoom, Event], None]


def spectator_frame(feed: Feed, event: Event, data: bytes) -> bytes:
    """Fair play for spectators of a delayed room: the deal code once the race they are
    shown has ended (by the feed's clock, not the room's) — the day's secret deal not before
    its day is over — and never the workers' own fields (``typed_by``, ``secret_until``)."""
    if event.get("type") not in DEAL_EVENTS:
        return data
    body = feed.body
    race = event.get("race", 0)
    secret_until = event.get("secret_until")
    knows = (
        body is not None
        and not (secret_until is not None and now_ms() < secret_until)
        and (race < body["race"] or (race == body["race"] and body["phase"] == "ended"))
    )
    shown = {
        k: (v if knows or k != "deal" else None) for k, v in event.items() if k not in _INTERNAL
    }
    return orjson.dumps(shown)


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
        #: called with each event a room's feed releases to its spectators (after the
        #: spectator delay), and with ``feed.LOADED`` once the feed has loaded
        self.release_hooks: list[EventHook] = []
        #: control messages (``{"ctl": NAME, …}`` on a room's channel) by name
        self.control_hooks: dict[str, ControlHook] = {}

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
            lr.feed = Feed(room_code, self._released)
            self.rooms[room_code] = lr
            self.metrics.rooms = len(self.rooms)
            try:
                await self.backend.subscribe(room_code)
            except BaseException:
                if not lr.conns and not lr.robots:
                    self.rooms.pop(room_code, None)
                    lr.feed.close()
                raise
            lr.subscribed.set()
            self.tasks.spawn(self._load_feed(lr.feed), f"feed {room_code}")
        else:
            await asyncio.wait_for(lr.subscribed.wait(), 10)
        return lr

    async def _load_feed(self, feed: Feed) -> None:
        """Load a room's feed once subscribed (events taken meanwhile wait in it); tried
        again while the store cannot be reached."""
        pause = 0.2
        while not feed.closed:
            try:
                await feed.load(self.backend)
                return
            except StoreUnavailable:
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    def ready(self, conn: Conn, seq: int) -> None:
        """Deliver the events that arrived while joining, after ``seq``; go live. A
        spectator of a delayed room gets what the room's feed released meanwhile instead
        (``seq`` is then its snapshot's, from the feed)."""
        conn.last_seq = max(conn.last_seq, seq)
        lr = self.rooms.get(conn.room_code or "")
        delayed = lr is not None and lr.delay > 0 and conn.role == "spectator"
        pending, conn.pending = conn.pending, []
        later, conn.later = conn.later, []
        conn.ready = True
        if delayed:
            for data in later:
                s = event_seq(data) or 0
                if s > conn.last_seq:
                    conn.last_seq = s
                    self.send([conn], data)
            return
        for data in pending:
            s = event_seq(data) or 0
            if s > conn.last_seq:
                conn.last_seq = s
                event = orjson.loads(data)
                if lr is not None and lr.may_see(conn, event):
                    with contextlib.suppress(Exception):
                        self.send([conn], lr.frame_for(conn, event, data))
                        if (
                            event.get("type") == "player_finished"
                            and event.get("race") == lr.race
                            and event.get("seat") == conn.seat
                            and conn.role == "player"
                        ):
                            # finished while away: what was withheld before it went away
                            self.send_finishes(lr, conn, upto=seq)

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
        """Forget a room: its timers, its feed and the layers' state of it go."""
        if lr.timer is not None:
            lr.timer.cancel()
            lr.timer = None
        if lr.feed is not None:
            lr.feed.close()
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

    def replaced(self, player: Player) -> None:
        """The store refused ``player``'s write: a resume gave the seat a newer epoch. The
        old holder is done (closed with 4000, as a ``kick`` would have done)."""
        logger.info(
            "write of a replaced connection refused room=%s seat=%s conn=%s",
            player.room_code,
            player.seat,
            player.id,
        )
        player.game = None
        player.seat = None
        player.role = None
        if isinstance(player, Conn):
            self.close(player, 4000, "replaced by a new connection")

    # ------------------------------------------------------------------ sending

    def writable(self, conn: Conn) -> bool:
        """Whether a frame may be written to ``conn`` now: not closing, and not more than
        ``max_backlog`` bytes behind — a connection that is gets closed (1013) instead, so
        no buffer grows without bound and nobody waits for a reader that stopped."""
        if conn.closing:
            return False
        if conn.backlog() > self.config.max_backlog:
            logger.warning("closing slow connection room=%s conn=%s", conn.room_code, conn.id)
            self.metrics.slow_closes_total += 1
            self.close(conn, 1013, "too slow: reconnect and resume")
            return False
        return True

    def send(self, conns: Iterable[Conn], data: bytes) -> None:
        """Send one encoded frame to every connection of ``conns`` that is :meth:`writable`
        (encoded once, written with each connection's other frames of this loop turn)."""
        for conn in conns:
            if self.writable(conn):
                conn.push(data)

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
                self._control(lr, event)
                return
            lr.learn_event(event)
            for hook in self.event_hooks:
                hook(lr, event)
            kind = event.get("type")
            deal_event = kind in DEAL_EVENTS
            finished = -1
            if kind == "race_starting":
                lr.finishes.clear()
            elif kind == "player_finished" and event.get("race") == lr.race:
                finished = event["seat"]
                lr.finishes[finished] = (seq, event, data)
            delayed = lr.delay > 0
            for conn in lr.conns:
                if not conn.ready:
                    conn.pending.append(data)
                elif delayed and conn.role == "spectator":
                    continue  # the feed sends it, after the delay
                elif seq > conn.last_seq:
                    conn.last_seq = seq
                    if conn.closing or not lr.may_see(conn, event):
                        continue
                    if not self.writable(conn):
                        continue
                    if deal_event:
                        conn.push(lr.frame_for(conn, event, data))
                        if conn.seat == finished and conn.role == "player":
                            self.send_finishes(lr, conn, upto=seq - 1)
                        continue
                    conn.push(data)
            if lr.feed is not None:
                lr.feed.take(seq, event, data)
        except Exception:
            logger.exception("could not deliver a message room=%s", room_code)

    def send_finishes(self, lr: LocalRoom, conn: Conn, upto: int) -> None:
        """A racer has finished: the other racers' ``player_finished`` events of this race
        up to seq ``upto``, in ``seq`` order — withheld from them while they raced (sent
        right after their own), or, on a resume, withheld before they went away or not
        shown by a snapshot."""
        for seq, event, data in sorted(lr.finishes.values(), key=lambda f: f[0]):
            if seq <= upto and event.get("seat") != conn.seat:
                self.send([conn], lr.frame_for(conn, event, data))

    async def recall_finishes(self, lr: LocalRoom, newest: int) -> None:
        """Learn the ``player_finished`` events of the room's race that this worker did not
        deliver (it took the room after them) from the events the store keeps as of seq
        ``newest``: a racer who finished while away is sent them on resuming. Those no
        longer kept (a long race: the room keeps its last events) are not sent."""
        for data in await recent_events(self.backend, lr.room_code, newest):
            event = orjson.loads(data)
            if event.get("type") == "player_finished" and event.get("race") == lr.race:
                lr.finishes.setdefault(event["seat"], (event_seq(data) or 0, event, data))

    def _released(self, feed: Feed, event: Event | None, data: bytes) -> None:
        """What a room's feed releases: sent to its spectators when the room has a delay
        (without one they had it from :meth:`deliver`), and told to the release hooks."""
        lr = self.rooms.get(feed.room_code)
        if lr is None or lr.feed is not feed:
            return
        if data and feed.delay:
            seq = event_seq(data) if event is not None else None
            frame = spectator_frame(feed, event, data) if event is not None else data
            targets = []
            for conn in lr.conns:
                if conn.role == "spectator" or not conn.ready:
                    if not conn.ready:
                        if seq is not None:
                            conn.later.append(frame)
                    elif seq is None or seq > conn.last_seq:
                        conn.last_seq = seq if seq is not None else conn.last_seq
                        targets.append(conn)
            self.send(targets, frame)
        if event is not None:
            for hook in self.release_hooks:
                hook(lr, event)

    def _control(self, lr: LocalRoom, message: Event) -> None:
        ctl = message.get("ctl")
        if ctl == "kick":
            conn = self.conns.get(str(message.get("conn")))
            if conn is not None:
                conn.seat = None  # the seat now belongs to the new connection
                conn.role = None
                self.close(conn, 4000, "replaced by a new connection")
            return
        hook = self.control_hooks.get(str(ctl))
        if hook is not None:
            hook(lr, message)
