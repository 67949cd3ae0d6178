"""The rooms this worker has connections in, and delivering their events.

Every room event reaches a worker from the broker's subscription (its own events too), in
``seq`` order, and is passed here to :meth:`Rooms.deliver`: it updates the worker's
:class:`LocalRoom` (the facts the race layer checks moves against), tells the layers that
watch events (race timers), then sends the frame — encoded once — to every connection of
the room that may see it. What a connection may see is decided in one place, the fair-play
filter of :mod:`.local` (:meth:`LocalRoom.may_see`, :meth:`LocalRoom.frame_for`).

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

import orjson

from protocol.frames import boards_open, event_seq

from ..codes import display_code
from ..config import Config
from ..edge.connection import Conn, Player
from ..metrics import Metrics
from ..store import Store
from ..store.errors import StoreUnavailable
from ..store.rooms import recent_events
from ..tasks import Tasks
from .feed import EndedEarly, Feed
from .local import DEAL_EVENTS, Event, LocalRoom, spectator_frame

__all__ = ["Event", "LocalRoom", "Rooms"]

logger = logging.getLogger("samedeal.server")

EventHook = Callable[[LocalRoom, Event], None]
DropHook = Callable[[LocalRoom], None]
DetachHook = Callable[[Conn], None]
ControlHook = Callable[[LocalRoom, Event], None]


class Rooms:
    """The local room registry: attach and detach connections, deliver room events."""

    def __init__(self, store: Store, config: Config, metrics: Metrics, tasks: Tasks) -> None:
        self.store = store
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
        local = await self.ensure(room_code)
        conn.room_code = room_code
        conn.ready = False
        conn.pending = []
        conn.last_seq = 0  # a room's seq numbers are its own: a previous room's must not hide them
        local.conns.add(conn)
        return local

    async def ensure(self, room_code: str) -> LocalRoom:
        """The local room, subscribed."""
        local = self.rooms.get(room_code)
        if local is None:
            local = LocalRoom(room_code)
            local.feed = Feed(room_code, self._released)
            self.rooms[room_code] = local
            self.metrics.rooms = len(self.rooms)
            try:
                await self.store.broker.subscribe(room_code)
            except BaseException:
                if not local.conns and not local.robots:
                    self.rooms.pop(room_code, None)
                    local.feed.close()
                raise
            local.subscribed.set()
            self.tasks.spawn(self._load_feed(local.feed), f"feed {room_code}")
        else:
            await asyncio.wait_for(local.subscribed.wait(), 10)
        return local

    async def _load_feed(self, feed: Feed) -> None:
        """Load a room's feed once subscribed (events taken meanwhile wait in it); tried
        again while the store cannot be reached."""
        pause = 0.2
        while not feed.closed:
            try:
                await feed.load(self.store.rooms)
                return
            except StoreUnavailable:
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)

    def ready(self, conn: Conn, seq: int) -> None:
        """Deliver the events that arrived while joining, after ``seq``; go live. A
        spectator of a delayed room gets what the room's feed released meanwhile instead
        (``seq`` is then its snapshot's, from the feed)."""
        conn.last_seq = max(conn.last_seq, seq)
        local = self.rooms.get(conn.room_code or "")
        delayed = local is not None and local.delay > 0 and conn.role == "spectator"
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
                if local is not None and local.may_see(conn, event):
                    with contextlib.suppress(Exception):
                        self.send([conn], local.frame_for(conn, event, data))
                        if (
                            event.get("type") == "player_finished"
                            and event.get("race") == local.race
                            and event.get("seat") == conn.seat
                            and conn.role == "player"
                        ):
                            # finished while away: what was withheld before it went away
                            self.send_finishes(local, conn, upto=seq)

    def detach(self, conn: Conn) -> None:
        """Remove ``conn`` from its local room."""
        room_code = conn.room_code
        if room_code is None:
            return
        for hook in self.detach_hooks:
            hook(conn)
        conn.room_code = None
        local = self.rooms.get(room_code)
        if local is not None:
            local.conns.discard(conn)
            self.drop_if_empty(local)

    def drop_if_empty(self, local: LocalRoom) -> None:
        """Drop a room nobody (connection or robot) is in any more, and unsubscribe."""
        if local.conns or local.robots or self.rooms.get(local.room_code) is not local:
            return
        self.drop(local)
        self.tasks.spawn(self._unsubscribe(local.room_code), "unsubscribe")

    def drop(self, local: LocalRoom) -> None:
        """Forget a room: its timers, its feed and the layers' state of it go."""
        if local.timer is not None:
            local.timer.cancel()
            local.timer = None
        if local.feed is not None:
            local.feed.close()
        for hook in self.drop_hooks:
            hook(local)
        if self.rooms.get(local.room_code) is local:
            del self.rooms[local.room_code]
        self.metrics.rooms = len(self.rooms)

    async def _unsubscribe(self, room_code: str) -> None:
        if room_code not in self.rooms:  # nobody came back meanwhile
            await self.store.broker.unsubscribe(room_code)

    def close(self, conn: Conn, close_code: int, reason: str) -> None:
        """Start closing; the handler reads on (ignoring frames) so the handshake can end."""
        if not conn.closing:
            conn.closing = True
            self.tasks.spawn(conn.websocket.close(close_code, reason), f"close {conn.id}")

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

    def to_room(self, local: LocalRoom, data: bytes) -> None:
        """A frame that is not a room event, for every connection in the room: the
        spectators of a room with a spectator delay get it from the room's feed, that late
        (as everything they see); the others now."""
        delayed = local.delay and local.feed is not None
        self.send(
            (c for c in local.conns if c.ready and not (delayed and c.role == "spectator")), data
        )
        if delayed and local.feed is not None:
            local.feed.push(data)

    def end_secret(self, local: LocalRoom, ended: EndedEarly) -> None:
        """The round ``local``'s room plays ended (``ended``: its race, the end of its
        secret): its secret ends on this worker (:meth:`LocalRoom.end_secret`, the room's
        feed too), and every connection in the room is told ``boards_open`` — on the
        ``secret_ends`` message, or when a ``follow`` finds in the store the end of a round
        whose message this worker missed (:meth:`LocalRoom.missed_end`)."""
        local.end_secret(ended)
        # told by the worker ending the round before it tells anyone the round ended,
        # so a connection told it here asks for the boards once they are open
        self.to_room(local, boards_open(room=display_code(local.room_code)))

    # ------------------------------------------------------------------ delivery

    def deliver(self, room_code: str, data: bytes) -> None:
        """Deliver one room message from the broker to this worker's connections."""
        local = self.rooms.get(room_code)
        if local is None:
            return
        try:
            event = orjson.loads(data)
            seq = event_seq(data)
            if seq is None:
                self._control(local, event)
                return
            local.learn_event(event)
            for hook in self.event_hooks:
                hook(local, event)
            kind = event.get("type")
            deal_event = kind in DEAL_EVENTS
            finished = -1
            if kind == "race_starting":
                local.finishes.clear()
            elif kind == "player_finished" and event.get("race") == local.race:
                finished = event["seat"]
                local.finishes[finished] = (seq, event, data)
            delayed = local.delay > 0
            for conn in local.conns:
                if not conn.ready:
                    conn.pending.append(data)
                elif delayed and conn.role == "spectator":
                    continue  # the feed sends it, after the delay
                elif seq > conn.last_seq:
                    conn.last_seq = seq
                    if conn.closing or not local.may_see(conn, event):
                        continue
                    if not self.writable(conn):
                        continue
                    if deal_event:
                        conn.push(local.frame_for(conn, event, data))
                        if conn.seat == finished and conn.role == "player":
                            self.send_finishes(local, conn, upto=seq - 1)
                        continue
                    conn.push(data)
            if local.feed is not None:
                local.feed.take(seq, event, data)
        except Exception:
            logger.exception("could not deliver a message room=%s", room_code)

    def send_finishes(self, local: LocalRoom, conn: Conn, upto: int) -> None:
        """A racer has finished: the other racers' ``player_finished`` events of this race
        up to seq ``upto``, in ``seq`` order — withheld from them while they raced (sent
        right after their own), or, on a resume, withheld before they went away or not
        shown by a snapshot."""
        for seq, event, data in sorted(local.finishes.values(), key=lambda f: f[0]):
            if seq <= upto and event.get("seat") != conn.seat:
                self.send([conn], local.frame_for(conn, event, data))

    async def recall_finishes(self, local: LocalRoom, newest: int) -> None:
        """Learn the ``player_finished`` events of the room's race that this worker did not
        deliver (it took the room after them) from the events the store keeps as of seq
        ``newest``: a racer who finished while away is sent them on resuming. Those no
        longer kept (a long race: the room keeps its last events) are not sent."""
        for data in await recent_events(self.store.rooms, local.room_code, newest):
            event = orjson.loads(data)
            if event.get("type") == "player_finished" and event.get("race") == local.race:
                local.finishes.setdefault(event["seat"], (event_seq(data) or 0, event, data))

    def _released(self, feed: Feed, event: Event | None, data: bytes) -> None:
        """What a room's feed releases: sent to its spectators when the room has a delay
        (without one they had it from :meth:`deliver`), and told to the release hooks."""
        local = self.rooms.get(feed.room_code)
        if local is None or local.feed is not feed:
            return
        if data and feed.delay:
            seq = event_seq(data) if event is not None else None
            phase = feed.body["phase"] if feed.body is not None else None
            frames: dict[bool, bytes] = {}  # with boards, without: made once each

            def frame(conn: Conn) -> bytes:
                if event is None:
                    return data
                boards = not local.hides_boards(conn, event, phase)
                if boards not in frames:
                    frames[boards] = spectator_frame(feed, event, data, boards=boards)
                return frames[boards]

            for conn in local.conns:
                if conn.role == "spectator" or not conn.ready:
                    if not conn.ready:
                        if seq is not None:
                            conn.later.append(frame(conn))
                    elif seq is None or seq > conn.last_seq:
                        conn.last_seq = seq if seq is not None else conn.last_seq
                        self.send([conn], frame(conn))
        if event is not None:
            for hook in self.release_hooks:
                hook(local, event)

    def _control(self, local: LocalRoom, message: Event) -> None:
        ctl = message.get("ctl")
        if ctl == "kick":
            conn = self.conns.get(str(message.get("conn")))
            if conn is not None:
                conn.seat = None  # the seat now belongs to the new connection
                conn.role = None
                self.close(conn, 4000, "replaced by a new connection")
            return
        if ctl == "secret_ends":  # the round ended: its secret ends (fair play's)
            self.end_secret(local, (int(message["race"]), int(message["at"])))
            return
        hook = self.control_hooks.get(str(ctl))
        if hook is not None:
            hook(local, message)
