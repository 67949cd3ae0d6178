"""The websocket server: one handler coroutine per connection on top of a backend.

The handler reads ``hello``, then serves requests one at a time, and undoes every
registration (local room membership, the seat's connection) in ``finally:``. Room logic is
in :mod:`server.room`; storage and fan-out in the backend (:mod:`server.broker`). The
authoritative game of a seat lives on the worker its player is connected to: a move is
checked there with the engine, stored, and only then acknowledged.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import multiprocessing
import os
import secrets
import signal
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from http import HTTPStatus
from pathlib import Path
from typing import Any, ClassVar

import orjson
from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from engine import GameError, IllegalMoveError, card_name, new_game, replay
from engine.game import Game
from protocol import (
    PROTOCOL_VERSION,
    AddBot,
    AddGhost,
    Create,
    Follow,
    Hello,
    Join,
    Move,
    Ping,
    ProtocolError,
    Rematch,
    Resign,
    Resume,
    Start,
    decode_client,
)

from .bots import BotDriver, Driver, GhostDriver, ReplySocket, RobotSeat, run_robot
from .broker import Backend, LogConflict, Snapshot, event_seq
from .metrics import Metrics
from .room import (
    ProgressState,
    RoomError,
    RoomOptions,
    RoomState,
    add_player,
    check_race_end,
    choose_deal,
    daily_deal,
    display_code,
    hash_token,
    new_room_code,
    new_token,
    normalize_code,
    remove_seat,
    seat_by_token,
    set_connected,
    spectators_event,
    start_race,
)
from .room import snapshot as room_snapshot
from .static import StaticFiles

__all__ = ["Config", "RaceServer", "now_ms", "run"]

logger = logging.getLogger("samedeal.server")

# events whose stored form may hold the deal code, and the seat that typed it (fair play)
_DEAL_EVENTS = frozenset({"race_starting", "player_finished"})


_CLOSE_TIMEOUT = 3.0
"""Seconds shutdown waits for background tasks to stop after cancelling them."""


def now_ms() -> int:
    """The server clock: ms since the epoch."""
    return int(time.time() * 1000)


@dataclass(slots=True)
class Config:
    """Server settings; every duration in seconds."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_frame: int = 16 * 1024
    rate: float = 20.0
    burst: int = 40
    max_strikes: int = 40
    max_bad_messages: int = 20
    hello_timeout: float = 10.0
    countdown: float = 3.0
    grace: float = 30.0
    public_url: str | None = None
    reuse_port: bool = False
    liveness: float = 10.0
    max_backlog: int = 1 << 20
    # permessage-deflate costs CPU per connection and defeats sending one encoded frame to
    # many connections; messages are small, so it is off unless asked for
    compression: bool = False
    # a racing player's ``progress`` goes out at most this often (seconds; the latest state,
    # the first after a quiet spell at once); a status change always goes out at once
    progress_interval: float = 0.2
    # a directory of files served over HTTP on the websocket port (``samedeal serve``
    # gives the browser client's); None serves none
    static_dir: Path | None = None


class Conn:
    """One websocket connection and what it holds."""

    __slots__ = (
        "bad",
        "closing",
        "code",
        "credits",
        "following",
        "game",
        "game_race",
        "id",
        "last_seq",
        "last_strike",
        "outbox",
        "pending",
        "ready",
        "refilled",
        "role",
        "seat",
        "strikes",
        "ws",
    )

    def __init__(self, ws: ServerConnection, burst: int, worker: str) -> None:
        self.ws = ws
        # the worker id is part of the connection id: seats show where they are held
        self.id = f"{worker}/{secrets.token_hex(8)}"
        self.code: str | None = None
        self.role: str | None = None
        self.seat: int | None = None
        self.last_seq = 0
        self.ready = False
        self.pending: list[bytes] = []
        self.game: Game | None = None
        self.game_race = 0
        self.following: int | None = None
        self.credits = float(burst)
        self.refilled = time.monotonic()
        self.strikes = 0
        self.last_strike = 0.0
        self.bad = 0
        self.closing = False
        self.outbox = Outbox()


@dataclass(slots=True)
class Outbox:
    """A racing player's ``progress`` events, coalesced: each is the seat's full state, so
    only the latest matters. ``gate`` orders a held event's storage with the moves."""

    sent_at: float = float("-inf")
    #: the latest held state: room, race, seat, then the numbers of its progress
    held: tuple[str, int, int, int, int, int, int, int] | None = None
    timer: asyncio.TimerHandle | None = None
    gate: Gate = field(default_factory=lambda: Gate())


class Gate:
    """A lock for the few tasks of one connection, taken without a coroutine call when it
    is free (``async with asyncio.Lock()`` costs two on every move): check ``busy``, then
    set it or ``await wait()``; always ``release()``."""

    __slots__ = ("_free", "busy")

    def __init__(self) -> None:
        self.busy = False
        self._free: asyncio.Future[None] | None = None

    async def wait(self) -> None:
        """Wait until the gate is free, then take it."""
        while self.busy:
            if self._free is None:
                self._free = asyncio.get_running_loop().create_future()
            # shielded: a waiter cancelled must not cancel the future the others wait on
            await asyncio.shield(self._free)
        self.busy = True

    def release(self) -> None:
        """Free the gate and wake its waiters (the first to run takes it)."""
        self.busy = False
        free, self._free = self._free, None
        if free is not None and not free.done():
            free.set_result(None)


@dataclass(slots=True)
class Follower:
    """A worker's copy of one player's board, rebuilt from the move log, for spectators."""

    race: int
    game: Game
    applied: int = 0
    spectators: set[Conn] = field(default_factory=set)
    newcomers: set[Conn] = field(default_factory=set)
    dirty: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


@dataclass(slots=True)
class LocalRoom:
    """What this worker knows of a room it has connections in."""

    code: str
    conns: set[Conn] = field(default_factory=set)
    phase: str = "lobby"
    race: int = 0
    deal: str = ""
    start_at: int | None = None
    deadline: int | None = None
    participants: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)
    typed_by: int | None = None
    delay: int = 0
    timer: asyncio.TimerHandle | None = None
    followers: dict[int, Follower] = field(default_factory=dict)
    robots: dict[int, RobotSeat] = field(default_factory=dict)
    subscribed: asyncio.Event = field(default_factory=asyncio.Event)

    def learn(self, snap: Snapshot) -> None:
        """Take the race facts from a fresh snapshot."""
        room = snap.room
        if room.race != self.race:
            self.finished = set()
        self.phase, self.race, self.deal = room.phase, room.race, room.deal
        self.typed_by = room.deal_typed_by
        self.start_at, self.deadline = room.start_at, room.deadline
        self.participants = set(room.participants)
        self.delay = room.options.spectator_delay
        self.finished |= {
            s for s, p in snap.progress.items() if p.race == room.race and p.status != "playing"
        }


class Refusal(Exception):
    """Ends a request with an ``error`` reply."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class RaceServer:
    """The server's state on this worker: local rooms, connections, metrics."""

    def __init__(self, backend: Backend, config: Config | None = None) -> None:
        self.backend = backend
        self.config = config or Config()
        self.metrics = Metrics()
        self.rooms: dict[str, LocalRoom] = {}
        self.conns: dict[str, Conn] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._closed = False
        self._solver_executor: ProcessPoolExecutor | None = None
        self.port: int | None = None
        # files served on the websocket port (the browser client), read once
        self.static = StaticFiles(self.config.static_dir) if self.config.static_dir else None
        # each request type's handler, and whether an ``ok`` answers it when it returns
        self._handlers: dict[type[Any], Callable[[Conn, Any], Awaitable[bool | None]]] = {
            Move: self._move,
            Create: self._create,
            Join: self._join,
            Resume: self._resume,
            Ping: self._ping,
            Start: _ok(self._start),
            Resign: _ok(self._resign),
            Rematch: _ok(self._rematch),
            Follow: _ok(self._follow),
            AddBot: _ok(self._add_bot),
            AddGhost: _ok(self._add_ghost),
        }

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start the backend (its listener delivers room events to this server) and the
        liveness loop."""
        await self.backend.start(self.on_message)
        if self.config.liveness > 0:
            await self.backend.heartbeat(self.config.liveness)
            self.spawn(self._liveness_loop(), "liveness")

    async def _liveness_loop(self) -> None:
        """Keep this worker's heartbeat fresh, and free the seats held by connections of
        workers that died (killed, crashed): they are shown disconnected, and the grace
        period starts."""
        while True:
            await asyncio.sleep(self.config.liveness / 3)
            try:
                await self.backend.heartbeat(self.config.liveness)
                for code in list(self.rooms):
                    await self._reap_dead_workers(code)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("liveness check failed")

    async def _reap_dead_workers(self, code: str) -> None:
        snap = await self.backend.snapshot(code)
        if snap is None:
            return
        me = self.backend.worker_id
        # a grace period whose timer died with its worker is ended by whoever notices
        overdue = now_ms() - int((self.config.grace + self.config.liveness) * 1000)
        for s in snap.room.seats:
            if not s.connected and s.disconnected_at is not None and s.disconnected_at < overdue:
                logger.warning("grace period overdue room=%s seat=%s", code, s.seat)
                await self._grace_over(code, s.seat)
        held = {
            s.seat: s.conn.rsplit("/", 1)[0]
            for s in snap.room.seats
            if s.connected and s.conn and "/" in s.conn
        }
        watching = {w for w in snap.room.watchers if w != me}
        others = {w for w in held.values() if w != me} | watching
        if not others:
            return
        alive = await self.backend.alive(others)
        if watching - alive:
            logger.warning(
                "spectators of dead workers gone room=%s workers=%s",
                code,
                ",".join(sorted(watching - alive)),
            )
            await self.backend.update_room(code, _drop_watchers(watching - alive))
        for seat_no, worker in held.items():
            if worker == me or worker in alive:
                continue
            conn_id = snap.room.seat(seat_no).conn  # type: ignore[union-attr]
            at = now_ms()

            def gone(
                room: RoomState,
                progress: dict[int, ProgressState],
                seat_no: int = seat_no,
                conn_id: str | None = conn_id,
                at: int = at,
            ) -> list[dict[str, Any]]:
                seat = room.seat(seat_no)
                if seat is None or seat.conn != conn_id:
                    return []
                return set_connected(room, progress, seat, None, at)

            await self.backend.update_room(code, gone)
            logger.warning(
                "seat held by a dead worker room=%s seat=%s worker=%s", code, seat_no, worker
            )
            self.spawn(self._grace(code, seat_no), f"grace {code}:{seat_no}")

    async def close(self) -> None:
        """Cancel background tasks and close the backend."""
        self._closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            # A library await deep in a task may swallow one cancellation (seen with the
            # Redis client under load): never let shutdown wait on it forever.
            _, pending = await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT)
            for task in pending:
                logger.warning("background task did not stop: %s", task.get_name())
                task.cancel()
        for lr in self.rooms.values():
            self._drop_room_timers(lr)
        if self._solver_executor is not None:
            self._solver_executor.shutdown(wait=False, cancel_futures=True)
            self._solver_executor = None
        await self.backend.close()

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run a background task, logging its failure."""
        task = asyncio.create_task(coro, name=what)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                logger.error("background task failed: %s", what, exc_info=t.exception())

        task.add_done_callback(done)
        return task

    def link(self, code: str, key: str | None) -> str:
        """The join link of a room."""
        base = self.config.public_url or f"http://{self.config.host}:{self.port or 0}"
        return f"{base}/r/{display_code(code)}" + (f"?key={key}" if key else "")

    # ------------------------------------------------------------------ HTTP

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """Answer ``/healthz`` and ``/metrics`` on the websocket port."""
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return connection.respond(HTTPStatus.OK, "ok\n")
        if path == "/metrics":
            try:
                self.metrics.store_rtt_seconds = await asyncio.wait_for(self.backend.ping(), 2)
            except Exception:
                self.metrics.store_rtt_seconds = -1.0
            self.metrics.rooms = len(self.rooms)
            response = connection.respond(
                HTTPStatus.OK, self.metrics.render(self.backend.worker_id)
            )
            response.headers["Content-Type"] = "text/plain; version=0.0.4; charset=utf-8"
            return response
        if self.static is None:
            return None
        return self.static.serve(connection, request)

    # ------------------------------------------------------------------ connections

    async def handler(self, ws: ServerConnection) -> None:
        """Serve one connection from ``hello`` to close."""
        conn = Conn(ws, self.config.burst, self.backend.worker_id)
        self.conns[conn.id] = conn
        self.metrics.connections += 1
        self.metrics.connections_total += 1
        try:
            if not await self._hello(conn):
                return
            async for frame in ws:
                if conn.closing:
                    continue  # reading on lets the closing handshake through
                self.metrics.messages_total += 1
                if not self._take_credit(conn):
                    if conn.strikes > self.config.max_strikes:
                        self.metrics.abuse_closes_total += 1
                        logger.warning("closing flooding connection conn=%s", conn.id)
                        self._close(conn, 1008, "too many messages")
                        continue
                    await self._error(
                        conn, _request_id(frame), "rate_limited", "too many messages: slow down"
                    )
                    continue
                await self._serve_frame(conn, frame)
        except ConnectionClosed:
            pass
        finally:
            self.metrics.connections -= 1
            del self.conns[conn.id]
            await self._leave(conn)

    async def _hello(self, conn: Conn) -> bool:
        try:
            frame = await asyncio.wait_for(conn.ws.recv(), self.config.hello_timeout)
        except TimeoutError:
            await conn.ws.close(1008, "no hello")
            return False
        try:
            msg = decode_client(frame)
        except ProtocolError as exc:
            await self._error(conn, None, exc.code, exc.message)
            await conn.ws.close(1002, "expected hello")
            return False
        if not isinstance(msg, Hello):
            await self._error(conn, None, "hello_first", "the first message must be hello")
            await conn.ws.close(1002, "expected hello")
            return False
        if msg.v != PROTOCOL_VERSION:
            await self._error(
                conn,
                None,
                "unsupported_version",
                f"protocol version {msg.v} is not supported; this server speaks "
                f"version {PROTOCOL_VERSION}",
            )
            await conn.ws.close(1002, "unsupported protocol version")
            return False
        await self._send(
            conn,
            {
                "type": "welcome",
                "v": PROTOCOL_VERSION,
                "worker": self.backend.worker_id,
                "max_frame": self.config.max_frame,
                "rate": self.config.rate,
                "burst": self.config.burst,
                "bots": True,
            },
        )
        return True

    def _take_credit(self, conn: Conn) -> bool:
        now = time.monotonic()
        conn.credits = min(
            float(self.config.burst), conn.credits + (now - conn.refilled) * self.config.rate
        )
        conn.refilled = now
        if conn.credits < 1.0:
            # strikes count a flood: they are forgiven after a quiet spell
            if now - conn.last_strike > 10.0:
                conn.strikes = 0
            conn.last_strike = now
            conn.strikes += 1
            return False
        conn.credits -= 1.0
        return True

    def _close(self, conn: Conn, code: int, reason: str) -> None:
        """Start closing; the handler reads on (ignoring frames) so the handshake can end."""
        if not conn.closing:
            conn.closing = True
            self.spawn(conn.ws.close(code, reason), f"close {conn.id}")

    async def _send(self, conn: Conn, payload: dict[str, Any]) -> None:
        data = orjson.dumps(payload)
        transport = conn.ws.transport
        if transport is not None and not transport.get_write_buffer_size():
            # nothing is waiting to be written, so nothing to wait for: write the frame at
            # once as broadcast() does, without send()'s lock and drain (a third of a reply's
            # cost); a closed connection is skipped, as send() would raise ConnectionClosed
            broadcast([conn.ws], data, text=True)
            return
        with contextlib.suppress(ConnectionClosed):
            await conn.ws.send(data, text=True)

    async def _ping(self, conn: Conn, msg: Ping) -> bool:
        await self._send(conn, {"type": "pong", "id": msg.id, "now": now_ms()})
        return False

    async def _error(self, conn: Conn, rid: int | None, code: str, message: str) -> None:
        self.metrics.errors_total += 1
        await self._send(conn, {"type": "error", "id": rid, "code": code, "message": message})

    async def _serve_frame(self, conn: Conn, frame: str | bytes) -> None:
        try:
            msg = decode_client(frame)
        except ProtocolError as exc:
            conn.bad += 1
            await self._error(conn, None, exc.code, exc.message)
            if conn.bad > self.config.max_bad_messages:
                self.metrics.abuse_closes_total += 1
                logger.warning("closing abusive connection conn=%s", conn.id)
                self._close(conn, 1008, "too many bad messages")
            return
        rid = msg.id if not isinstance(msg, Hello) else None
        try:
            handle = self._handlers.get(type(msg))
            if handle is None:
                raise Refusal("hello_again", "hello is only the first message")
            reply = await handle(conn, msg)
            if reply:
                await self._send(conn, {"type": "ok", "id": rid})
        except (Refusal, RoomError) as exc:
            await self._error(conn, rid, exc.code, exc.message)
        except KeyError:
            await self._error(conn, rid, "unknown_room", "no such room (it may have expired)")
        except ConnectionClosed:
            raise
        except Exception:
            logger.exception(
                "request failed type=%s room=%s seat=%s conn=%s",
                msg.type,
                conn.code,
                conn.seat,
                conn.id,
            )
            await self._error(conn, rid, "server_error", "the server could not do that now")

    # ------------------------------------------------------------------ rooms

    def _require_no_room(self, conn: Conn) -> None:
        if conn.code is not None:
            raise Refusal("already_in_room", "this connection is already in a room")

    async def _attach(self, conn: Conn, code: str) -> LocalRoom:
        """Register ``conn`` in its local room (events buffered until it is ready)."""
        lr = self.rooms.get(code)
        if lr is None:
            lr = LocalRoom(code)
            self.rooms[code] = lr
            self.metrics.rooms = len(self.rooms)
            try:
                await self.backend.subscribe(code)
            except BaseException:
                if not lr.conns:
                    self.rooms.pop(code, None)
                raise
            lr.subscribed.set()
        else:
            await asyncio.wait_for(lr.subscribed.wait(), 10)
        conn.code = code
        conn.ready = False
        conn.pending = []
        lr.conns.add(conn)
        return lr

    def _ready(self, conn: Conn, seq: int) -> None:
        """Deliver the events that arrived while joining, after ``seq``; go live."""
        conn.last_seq = max(conn.last_seq, seq)
        pending, conn.pending = conn.pending, []
        conn.ready = True
        lr = self.rooms.get(conn.code or "")
        for data in pending:
            s = event_seq(data) or 0
            if s > conn.last_seq:
                conn.last_seq = s
                event = orjson.loads(data)
                if lr is not None and self._may_see(conn, lr, event):
                    with contextlib.suppress(Exception):
                        broadcast([conn.ws], self._payload(conn, lr, event, data), text=True)

    def _player_view(self, conn: Conn) -> dict[str, Any] | None:
        return conn.game.player_view() if conn.game is not None else None

    async def _create(self, conn: Conn, msg: Create) -> None:
        self._require_no_room(conn)
        if msg.deal == "same":
            raise Refusal("bad_deal", "a new room has no last race: use code, random or daily")
        if msg.deal == "daily":
            # the first request of a day runs the solver's proof: keep it off the event loop
            deal = await asyncio.to_thread(choose_deal, msg.game, msg.deal, msg.code, None)
        else:
            deal = choose_deal(msg.game, msg.deal, msg.code, None)
        options = RoomOptions(
            max_players=msg.max_players,
            time_limit=msg.time_limit,
            spectators=msg.spectators,
            private=msg.private,
            spectator_delay=msg.spectator_delay,
        )
        key = secrets.token_urlsafe(6) if msg.private else None
        for _ in range(10):
            room = RoomState(
                code=new_room_code(),
                game=msg.game,
                options=options,
                key=key,
                deal=deal,
                created_at=now_ms(),
                # the creator takes seat 1; a code they typed is no secret to them
                deal_typed_by=1 if msg.deal == "code" else None,
            )
            if await self.backend.create_room(room):
                break
        else:
            raise Refusal("busy", "could not find a free room code")
        self.metrics.rooms_created_total += 1
        logger.info("room created room=%s game=%s deal=%s", room.code, msg.game, deal)
        await self._take_new_seat(conn, room.code, msg.name, msg.id, key)

    async def _take_new_seat(
        self, conn: Conn, code: str, name: str, rid: int | None, key: str | None
    ) -> None:
        token = new_token()
        token_hash = hash_token(token)
        lr = await self._attach(conn, code)
        try:
            seat_no = 0

            def take(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
                nonlocal seat_no
                seat, events = add_player(room, name, token_hash, conn.id, now_ms())
                seat_no = seat.seat
                return events

            snap, _ = await self.backend.update_room(code, take)
        except BaseException:
            self._detach(conn)
            raise
        conn.role, conn.seat = "player", seat_no
        lr.learn(snap)
        logger.info("player joined room=%s seat=%s conn=%s", code, seat_no, conn.id)
        await self._send(
            conn,
            {
                "type": "joined",
                "id": rid,
                "room": display_code(code),
                "link": self.link(code, key),
                "role": "player",
                "seat": seat_no,
                "token": token,
                "key": key,
                "snapshot": room_snapshot(
                    snap.room,
                    snap.progress,
                    snap.seq,
                    now_ms(),
                    self.link(code, key),
                    viewer=seat_no,
                ),
                "view": None,
            },
        )
        self._ready(conn, snap.seq)
        self._arm_timer(lr)

    async def _find(self, text: str, key: str | None = None) -> Snapshot:
        code = normalize_code(text)
        snap = await self.backend.snapshot(code) if code else None
        if snap is None:
            raise Refusal("unknown_room", f"no room {text!r}")
        if snap.room.key is not None and not (
            key is not None and secrets.compare_digest(key, snap.room.key)
        ):
            raise Refusal("unknown_room", f"no room {text!r}")
        return snap

    async def _join(self, conn: Conn, msg: Join) -> None:
        self._require_no_room(conn)
        snap = await self._find(msg.room, msg.key)
        code = snap.room.code
        if msg.role == "player":
            await self._take_new_seat(conn, code, msg.name, msg.id, snap.room.key)
            return
        if not snap.room.options.spectators:
            raise Refusal("no_spectators", "this room does not allow spectators")
        lr = await self._attach(conn, code)
        try:
            snap, _ = await self.backend.update_room(
                code, _count_spectator(+1, self.backend.worker_id)
            )
        except BaseException:
            self._detach(conn)
            raise
        conn.role = "spectator"
        lr.learn(snap)
        logger.info("spectator joined room=%s conn=%s", code, conn.id)
        link = self.link(code, snap.room.key)
        await self._send(
            conn,
            {
                "type": "joined",
                "id": msg.id,
                "room": display_code(code),
                "link": link,
                "role": "spectator",
                "snapshot": room_snapshot(
                    snap.room,
                    snap.progress,
                    snap.seq,
                    now_ms(),
                    link,
                ),
            },
        )
        self._ready(conn, snap.seq)
        self._arm_timer(lr)

    async def _resume(self, conn: Conn, msg: Resume) -> None:
        self._require_no_room(conn)
        code = normalize_code(msg.room)
        snap = await self.backend.snapshot(code) if code else None
        if snap is None or code is None:
            raise Refusal("unknown_room", f"no room {msg.room!r}")
        token_hash = hash_token(msg.token)
        found = seat_by_token(snap.room, token_hash)
        if found is None:
            raise Refusal("bad_token", "this token holds no seat in this room")
        seat_no = found.seat
        lr = await self._attach(conn, code)
        old_conn: str | None = None
        try:

            def retake(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
                nonlocal old_conn
                seat = room.seat(seat_no)
                if seat is None or seat.token_hash != token_hash:
                    raise Refusal("bad_token", "this seat was given up")
                old_conn = seat.conn
                if seat.connected:
                    seat.conn = conn.id  # replaces the other connection, no presence change
                    return []
                return set_connected(room, progress, seat, conn.id, now_ms())

            snap, _ = await self.backend.update_room(code, retake)
            if old_conn is not None and old_conn != conn.id:
                await self.backend.publish_control(
                    code, orjson.dumps({"ctl": "kick", "conn": old_conn})
                )
            conn.role, conn.seat = "player", seat_no
            lr.learn(snap)
            conn.game = None
            if snap.room.phase != "lobby" and seat_no in snap.room.participants:
                await self._load_game(conn, snap.room.race, snap.room.deal)
            missed = (
                await self.backend.events_since(code, msg.last_seq)
                if msg.last_seq is not None
                else None
            )
        except BaseException:
            self._detach(conn)
            raise
        logger.info(
            "player resumed room=%s seat=%s conn=%s last_seq=%s",
            code,
            seat_no,
            conn.id,
            msg.last_seq,
        )
        link = self.link(code, snap.room.key)
        snapshot = room_snapshot(
            snap.room,
            snap.progress,
            snap.seq,
            now_ms(),
            link,
            viewer=seat_no,
        )
        await self._send(
            conn,
            {
                "type": "joined",
                "id": msg.id,
                "room": display_code(code),
                "link": link,
                "role": "player",
                "seat": seat_no,
                "snapshot": snapshot if msg.last_seq is None else None,
                "view": self._player_view(conn),
            },
        )
        if msg.last_seq is None:
            self._ready(conn, snap.seq)
        elif missed is None:
            await self._send(conn, {"type": "resync", "snapshot": snapshot})
            self._ready(conn, snap.seq)
        else:
            conn.last_seq = msg.last_seq
            conn.pending = missed + conn.pending
            self._ready(conn, msg.last_seq)
        self._arm_timer(lr)

    async def _load_game(self, conn: Conn, race: int, deal: str) -> Game:
        """Rebuild the seat's game from its stored move log."""
        assert conn.code is not None and conn.seat is not None
        moves = await self.backend.moves(conn.code, race, conn.seat)
        conn.game = replay(deal, moves)
        conn.game_race = race
        return conn.game

    def _detach(self, conn: Conn) -> None:
        """Remove ``conn`` from its local room; drop the room when it was the last."""
        code = conn.code
        if code is None:
            return
        lr = self.rooms.get(code)
        conn.code = None
        if lr is None:
            return
        lr.conns.discard(conn)
        if conn.following is not None:
            self._unfollow(lr, conn)
        if not lr.conns and not lr.robots:
            self._drop_room_timers(lr)
            del self.rooms[code]
            self.metrics.rooms = len(self.rooms)
            self.spawn(self._unsubscribe(code), "unsubscribe")

    async def _unsubscribe(self, code: str) -> None:
        if code not in self.rooms:  # nobody came back meanwhile
            await self.backend.unsubscribe(code)

    def _drop_room_timers(self, lr: LocalRoom) -> None:
        if lr.timer is not None:
            lr.timer.cancel()
            lr.timer = None
        for f in lr.followers.values():
            if f.task is not None:
                f.task.cancel()
        lr.followers.clear()

    async def _leave(self, conn: Conn) -> None:
        """Undo what the connection registered: local room, then the seat's presence."""
        code, seat_no, role = conn.code, conn.seat, conn.role
        outbox = conn.outbox
        if outbox.held is not None:
            # the last moves' progress, held back for coalescing, is stored before the
            # seat is shown disconnected (a held progress is not stored with its moves)
            if outbox.timer is not None:
                outbox.timer.cancel()
                outbox.timer = None
            with contextlib.suppress(Exception):
                await self._send_held_progress(conn)
        self._detach(conn)
        if code is not None and role == "spectator":
            with contextlib.suppress(KeyError):
                await self.backend.update_room(code, _count_spectator(-1, self.backend.worker_id))
            return
        if code is None or role != "player" or seat_no is None:
            return
        at = now_ms()

        def gone(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
            seat = room.seat(seat_no)
            if seat is None or seat.conn != conn.id:
                return []  # replaced by another connection meanwhile
            return set_connected(room, progress, seat, None, at)

        try:
            await self.backend.update_room(code, gone)
        except KeyError:
            return
        except Exception:
            logger.exception("could not mark seat disconnected room=%s seat=%s", code, seat_no)
            return
        logger.info("player disconnected room=%s seat=%s conn=%s", code, seat_no, conn.id)
        self.spawn(self._grace(code, seat_no), f"grace {code}:{seat_no}")

    async def _grace(self, code: str, seat_no: int) -> None:
        """After the grace period a still-disconnected player loses the seat: resigned in a
        running race, removed otherwise."""
        await asyncio.sleep(self.config.grace)
        await self._grace_over(code, seat_no)

    async def _grace_over(self, code: str, seat_no: int) -> None:
        snap = await self.backend.snapshot(code)
        if snap is None:
            return
        seat = snap.room.seat(seat_no)
        if seat is None or seat.connected:
            return
        room = snap.room
        p = snap.progress.get(seat_no)
        if (
            room.phase == "running"
            and p is not None
            and p.race == room.race
            and p.status == "playing"
        ):
            await self._finish_from_log(code, room, seat_no, "resigned", now_ms())
            await self._check_end(code)

        def drop(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
            s = room.seat(seat_no)
            if s is None or s.connected:
                return []
            p = progress.get(seat_no)
            if room.phase == "running" and p is not None and p.status == "playing":
                return []  # resigned first (above); a reconnect in between keeps the seat
            return remove_seat(room, s)

        await self.backend.update_room(code, drop)
        logger.info("seat released room=%s seat=%s", code, seat_no)

    # ------------------------------------------------------------------ races

    def _host_only(self, conn: Conn) -> tuple[str, int]:
        if conn.code is None:
            raise Refusal("not_in_room", "join a room first")
        if conn.role != "player" or conn.seat is None:
            raise Refusal("not_host", "only the host can do that")
        return conn.code, conn.seat

    async def _start(self, conn: Conn, msg: Start) -> None:
        code, seat = self._host_only(conn)
        countdown = int(self.config.countdown * 1000)

        def go(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
            first = new_game(room.deal)
            return start_race(
                room, progress, seat, now_ms(), countdown, first.total, view=first.player_view()
            )

        snap, _ = await self.backend.update_room(code, go)
        logger.info("race started room=%s race=%s deal=%s", code, snap.room.race, snap.room.deal)

    async def _rematch(self, conn: Conn, msg: Rematch) -> None:
        code, seat = self._host_only(conn)
        countdown = int(self.config.countdown * 1000)
        if msg.deal == "daily":
            snap = await self.backend.snapshot(code)
            if snap is not None:
                await asyncio.to_thread(daily_deal, snap.room.game)  # warm the day's cache

        def again(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
            if room.phase != "ended":
                raise RoomError("race_running", "a rematch follows a finished race")
            deal = choose_deal(room.game, msg.deal, msg.code, room.deal)
            first = new_game(deal)
            # whoever typed the code knows it, the same deal again included
            typed = msg.deal == "code" or (msg.deal == "same" and room.deal_typed_by == seat)
            return start_race(
                room,
                progress,
                seat,
                now_ms(),
                countdown,
                first.total,
                deal=deal,
                typed=typed,
                view=first.player_view(),
            )

        snap, _ = await self.backend.update_room(code, again)
        logger.info("rematch room=%s race=%s deal=%s", code, snap.room.race, snap.room.deal)

    # ------------------------------------------------------------------ robots

    def _solver_pool(self) -> ProcessPoolExecutor:
        """The process that plans solver bots' races, started on first use (spawned: a
        fork would copy the running event loop and its threads)."""
        if self._solver_executor is None:
            self._solver_executor = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn")
            )
        return self._solver_executor

    async def _add_bot(self, conn: Conn, msg: AddBot) -> None:
        executor = self._solver_pool() if msg.strength == "solver" else None
        driver = BotDriver(strength=msg.strength, pace=msg.pace, executor=executor)
        await self._seat_robot(conn, f"Bot ({msg.strength})", driver)

    async def _add_ghost(self, conn: Conn, msg: AddGhost) -> None:
        code, _ = self._host_only(conn)
        snap = await self.backend.snapshot(code)
        if snap is None:
            raise KeyError(code)
        room = snap.room
        if not 1 <= msg.race <= len(room.race_deals) or room.race_deals[msg.race - 1] != room.deal:
            raise Refusal("no_run", f"race {msg.race} is not a race of this room on its deal")
        moves = await self.backend.moves(code, msg.race, msg.seat)
        times = await self.backend.times(code, msg.race, msg.seat)
        if not moves or any(t is None for t in times):
            raise Refusal("no_run", f"no run of seat {msg.seat} in race {msg.race} is kept")
        known = [t for t in times if t is not None]
        rows = room.results if msg.race == room.race and room.results else []
        row = next((r for r in rows if r.get("seat") == msg.seat), None)
        elapsed = int(row["elapsed_ms"]) if row and row.get("elapsed_ms") else known[-1]
        seat = room.seat(msg.seat)
        who = seat.name if seat else row["name"] if row else f"Player {msg.seat}"
        driver = GhostDriver(room.deal, moves, known, max(elapsed, known[-1]))
        await self._seat_robot(conn, f"Ghost of {who}", driver)

    async def _seat_robot(self, conn: Conn, name: str, driver: Driver) -> RobotSeat:
        """Seat a robot for the host ``conn`` between races; it plays on this worker."""
        code, host = self._host_only(conn)
        lr = self.rooms[code]
        robot_conn = Conn(ReplySocket(), self.config.burst, self.backend.worker_id)  # type: ignore[arg-type]
        seat_no = 0

        def take(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
            nonlocal seat_no
            if room.host != host:
                raise RoomError("not_host", "only the host can seat a bot")
            if room.phase == "running":
                raise RoomError("race_running", "a race is running: add it before the next one")
            seat, events = add_player(room, name, hash_token(new_token()), robot_conn.id, now_ms())
            seat_no = seat.seat
            return events

        snap, _ = await self.backend.update_room(code, take)
        lr.learn(snap)
        robot_conn.code, robot_conn.role, robot_conn.seat = code, "player", seat_no
        robot_conn.ready = True
        robot = RobotSeat(robot_conn, robot_conn.ws, driver, name)  # type: ignore[arg-type]
        lr.robots[seat_no] = robot
        robot.task = self.spawn(run_robot(self, robot), f"robot {code}:{seat_no}")
        logger.info("robot seated room=%s seat=%s name=%s", code, seat_no, name)
        return robot

    async def robot_request(self, conn: Conn, msg: Move | Resign) -> None:
        """Serve a robot's action the way a person's is served (the reply goes to its
        socket)."""
        await self._serve_frame(conn, orjson.dumps(msg.model_dump()))

    def robot_left(self, robot: RobotSeat) -> None:
        """A robot stopped playing: free its seat like a disconnected one's."""
        conn = robot.conn
        lr = self.rooms.get(conn.code or "")
        if lr is not None and lr.robots.get(conn.seat or 0) is robot:
            del lr.robots[conn.seat or 0]
        if not self._closed:
            self.spawn(self._leave(conn), f"robot leaves {conn.code}:{conn.seat}")

    def _racing(self, conn: Conn, rid: int | None, text: str) -> tuple[str, int, LocalRoom] | str:
        """The room, seat and local room of a player allowed to act now, or the rule id that
        refuses the action."""
        if conn.code is None:
            raise Refusal("not_in_room", "join a room first")
        if conn.role != "player" or conn.seat is None:
            raise Refusal("spectator", "spectators cannot play")
        lr = self.rooms[conn.code]
        if lr.race == 0 or conn.seat not in lr.participants:
            return "no-race"
        if lr.phase != "running" or conn.seat in lr.finished:
            return "finished"
        now = now_ms()
        if lr.start_at is not None and now < lr.start_at:
            return "not-started"
        if lr.deadline is not None and now >= lr.deadline:
            self.spawn(self._expire(conn.code, lr.race), "expire")
            return "time-up"
        return conn.code, conn.seat, lr

    _REMINDERS: ClassVar[dict[str, str]] = {
        "no-race": "you are not racing: wait for the host to start the next race",
        "finished": "your race is over",
        "not-started": "the race has not started yet",
        "time-up": "the time limit has passed",
    }

    async def _reject(self, conn: Conn, rid: int | None, move: str, rule: str, text: str) -> None:
        self.metrics.moves_rejected_total += 1
        await self._send(
            conn, {"type": "rejected", "id": rid, "move": move, "rule": rule, "reminder": text}
        )

    async def _move(self, conn: Conn, msg: Move) -> None:
        racing = self._racing(conn, msg.id, msg.move)
        if isinstance(racing, str):
            await self._reject(conn, msg.id, msg.move, racing, self._REMINDERS[racing])
            return
        code, seat, lr = racing
        race = lr.race
        game = conn.game
        if game is None or conn.game_race != race:
            game = await self._load_game(conn, race, lr.deal)
        try:
            outcome = game.push(msg.move)
        except IllegalMoveError as exc:
            await self._reject(conn, msg.id, msg.move, exc.rule, exc.reminder)
            return
        except GameError as exc:
            await self._reject(conn, msg.id, msg.move, "notation", str(exc))
            return
        now = now_ms()
        start = lr.start_at or now
        elapsed = now - start
        outbox = conn.outbox
        clock = asyncio.get_running_loop().time()
        progress: ProgressState | None = None
        if game.won:
            progress = self._progress_state(race, seat, "won", game, elapsed)
            times = [*await self.backend.times(code, race, seat), elapsed]
            won = self._finished_body(code, race, seat, "won", elapsed, game, times)
            events = [self._progress_body(code, progress, elapsed), won]
        elif clock - outbox.sent_at >= self.config.progress_interval:
            # the first move after a quiet spell, or after the interval: shows at once, and
            # its state supersedes a held one (the outbox timer then has nothing to send)
            if outbox.timer is not None:
                outbox.timer.cancel()
                outbox.timer = None
            outbox.held = None
            progress = self._progress_state(race, seat, "playing", game, None)
            events = [self._progress_body(code, progress, elapsed)]
            outbox.sent_at = clock
        else:
            events = []  # held: the outbox timer sends the latest state
        gate = outbox.gate
        try:
            if gate.busy:
                await gate.wait()  # the outbox timer is storing a held progress
            else:
                gate.busy = True
            try:
                stored = await self.backend.append(
                    code,
                    race,
                    seat,
                    move=str(outcome.move),
                    # stored with its event: a held one goes with the outbox's
                    progress=progress,
                    events=events,
                    index=len(game.actions) - 1,
                    at=elapsed,
                )
                if stored is not None and not events:
                    self._hold_progress(
                        conn,
                        (
                            code,
                            race,
                            seat,
                            game.on_foundations,
                            game.total,
                            game.score,
                            game.moves,
                            elapsed,
                        ),
                    )
            finally:
                gate.release()
        except LogConflict:
            conn.game = None  # another connection of this seat moved: reload from the log
            await self._reject(
                conn, msg.id, msg.move, "stale", "your board changed elsewhere: look again"
            )
            return
        except Exception:
            conn.game = None  # the local game is ahead of the log: rebuild it
            logger.exception("could not store move room=%s seat=%s", code, seat)
            raise Refusal("storage", "the move could not be stored: try again") from None
        if stored is None:
            conn.game = None
            lr.finished.add(seat)
            await self._reject(conn, msg.id, msg.move, "finished", self._REMINDERS["finished"])
            return
        self.metrics.moves_accepted_total += 1
        await self._send(
            conn,
            {
                "type": "ack",
                "id": msg.id,
                "move": str(outcome.move),
                "revealed": [card_name(c) for c in outcome.revealed],
                "changes": game.view_changes(outcome.move),
            },
        )
        if game.won:
            logger.info("player won room=%s seat=%s moves=%s", code, seat, game.moves)
            await self._check_end(code)

    def _hold_progress(
        self, conn: Conn, held: tuple[str, int, int, int, int, int, int, int]
    ) -> None:
        """Keep the latest progress of a player (room, race, seat, cards home, total, score,
        moves, elapsed ms) for the outbox timer; its state and event are built only if it
        is sent."""
        outbox = conn.outbox
        outbox.held = held
        if outbox.timer is None:
            # a little after the interval: a player still moving then sends the progress
            # with that move; the timer is for one who stopped (one store call less, and no
            # move waiting at the gate behind a held progress)
            outbox.timer = asyncio.get_running_loop().call_at(
                outbox.sent_at + self.config.progress_interval * 1.25,
                lambda: self.spawn(self._send_held_progress(conn), "progress"),
            )

    async def _send_held_progress(self, conn: Conn) -> None:
        """Store and publish the latest held ``progress`` of a player (a move of theirs may
        be in flight: the gate lets it land first, so the event is its latest state). A
        status change meanwhile (won, resigned, disconnected) makes the store refuse it."""
        outbox = conn.outbox
        gate = outbox.gate
        if gate.busy:
            await gate.wait()
        else:
            gate.busy = True
        try:
            outbox.timer = None
            held, outbox.held = outbox.held, None
            if held is None or conn.closing or conn.code != held[0] or conn.seat != held[2]:
                return
            code, race, seat, on_foundations, total, score, moves, elapsed = held
            progress = ProgressState(
                race=race,
                seat=seat,
                status="playing",
                on_foundations=on_foundations,
                total=total,
                score=score,
                moves=moves,
            )
            outbox.sent_at = asyncio.get_running_loop().time()
            body = self._progress_body(code, progress, elapsed)
            try:
                await self.backend.append(
                    code, race, seat, move=None, progress=progress, events=[body]
                )
            except Exception:
                logger.warning("could not send progress room=%s seat=%s", code, seat, exc_info=True)
        finally:
            gate.release()

    @staticmethod
    def _progress_state(
        race: int, seat: int, status: str, game: Game, elapsed: int | None
    ) -> ProgressState:
        return ProgressState(
            race=race,
            seat=seat,
            status=status,
            on_foundations=game.on_foundations,
            total=game.total,
            score=game.score,
            moves=game.moves,
            elapsed_ms=elapsed,
        )

    def _progress_body(self, code: str, p: ProgressState, elapsed: int) -> dict[str, Any]:
        return {
            "type": "progress",
            "room": display_code(code),
            "race": p.race,
            "seat": p.seat,
            "on_foundations": p.on_foundations,
            "total": p.total,
            "score": p.score,
            "moves": p.moves,
            "status": p.status,
            "elapsed_ms": elapsed,
        }

    def _finished_body(
        self,
        code: str,
        race: int,
        seat: int,
        status: str,
        elapsed: int,
        game: Game,
        times: list[int | None] | None = None,
    ) -> dict[str, Any]:
        known = times is not None and len(times) == len(game.actions) and None not in times
        return {
            "type": "player_finished",
            "room": display_code(code),
            "race": race,
            "seat": seat,
            "status": status,
            "elapsed_ms": elapsed,
            "move_list": game.move_list(),
            "board": game.player_view(),
            "deal": str(game.code),  # delivered to the finished player only
            "times_ms": times if known else None,
        }

    async def _resign(self, conn: Conn, msg: Resign) -> None:
        racing = self._racing(conn, msg.id, "resign")
        if isinstance(racing, str):
            if racing == "not-started":
                racing = "no-race"
            raise Refusal(racing.replace("-", "_"), self._REMINDERS[racing])
        code, seat, lr = racing
        game = conn.game
        if game is None or conn.game_race != lr.race:
            game = await self._load_game(conn, lr.race, lr.deal)
        elapsed = now_ms() - (lr.start_at or 0)
        ok = await self._finish(code, lr.race, seat, "resigned", elapsed, game)
        if not ok:
            raise Refusal("finished", "your race is over")
        logger.info("player resigned room=%s seat=%s", code, seat)
        await self._check_end(code)

    async def _finish(
        self, code: str, race: int, seat: int, status: str, elapsed: int, game: Game
    ) -> bool:
        """Store a seat's final status with its last progress and ``player_finished``."""
        progress = self._progress_state(race, seat, status, game, elapsed)
        times = await self.backend.times(code, race, seat)
        events = [
            self._progress_body(code, progress, elapsed),
            self._finished_body(code, race, seat, status, elapsed, game, times),
        ]
        stored = await self.backend.append(
            code, race, seat, move=None, progress=progress, events=events
        )
        return stored is not None

    async def _finish_from_log(
        self, code: str, room: RoomState, seat: int, status: str, at: int
    ) -> bool:
        moves = await self.backend.moves(code, room.race, seat)
        game = replay(room.deal, moves)
        elapsed = max(0, min(at, room.deadline or at) - (room.start_at or at))
        return await self._finish(code, room.race, seat, status, elapsed, game)

    async def _check_end(self, code: str) -> None:
        at = now_ms()

        def end(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
            return check_race_end(room, progress, at)

        snap, events = await self.backend.update_room(code, end)
        if events:
            logger.info("race ended room=%s race=%s", code, snap.room.race)

    def _arm_timer(self, lr: LocalRoom) -> None:
        """Time the race out at its deadline (every worker with a connection in the room
        does; the store makes the outcome the same)."""
        if lr.timer is not None:
            lr.timer.cancel()
            lr.timer = None
        if lr.phase != "running" or lr.deadline is None:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, (lr.deadline - now_ms()) / 1000)
        code, race = lr.code, lr.race
        lr.timer = loop.call_later(
            delay + 0.01, lambda: self.spawn(self._expire(code, race), f"expire {code}")
        )

    async def _expire(self, code: str, race: int) -> None:
        snap = await self.backend.snapshot(code)
        if snap is None or snap.room.race != race or snap.room.phase != "running":
            return
        room = snap.room
        if room.deadline is None or now_ms() < room.deadline:
            return
        for seat, p in sorted(snap.progress.items()):
            if p.race == race and p.status == "playing":
                await self._finish_from_log(code, room, seat, "timeout", room.deadline)
        await self._check_end(code)

    # ------------------------------------------------------------------ spectators

    async def _follow(self, conn: Conn, msg: Follow) -> None:
        if conn.code is None:
            raise Refusal("not_in_room", "join a room first")
        if conn.role != "spectator":
            raise Refusal("not_spectator", "only spectators who are not racing can follow boards")
        lr = self.rooms[conn.code]
        if conn.following is not None:
            self._unfollow(lr, conn)
        if msg.seat is None:
            return
        if lr.race == 0 or msg.seat not in lr.participants:
            raise Refusal("unknown_seat", f"seat {msg.seat} is not racing")
        f = lr.followers.get(msg.seat)
        if f is None:
            f = Follower(lr.race, new_game(lr.deal))
            lr.followers[msg.seat] = f
            f.task = self.spawn(self._follow_loop(lr, msg.seat, f), "follow")
        f.spectators.add(conn)
        f.newcomers.add(conn)  # gets the board even if nothing changes
        conn.following = msg.seat
        f.dirty.set()

    def _unfollow(self, lr: LocalRoom, conn: Conn) -> None:
        seat, conn.following = conn.following, None
        f = lr.followers.get(seat) if seat is not None else None
        if f is None:
            return
        f.spectators.discard(conn)
        if not f.spectators:
            if f.task is not None:
                f.task.cancel()
            del lr.followers[seat]  # type: ignore[arg-type]

    async def _follow_loop(self, lr: LocalRoom, seat: int, f: Follower) -> None:
        while True:
            await f.dirty.wait()
            f.dirty.clear()
            if f.race != lr.race:
                f.race, f.game, f.applied = lr.race, new_game(lr.deal), 0
            new = await self.backend.moves(lr.code, f.race, seat, f.applied)
            if new:
                try:
                    f.game.push_all(new)
                    f.applied += len(new)
                except GameError:
                    logger.warning("follow: log does not replay room=%s seat=%s", lr.code, seat)
                    moves = await self.backend.moves(lr.code, f.race, seat)
                    f.game, f.applied = replay(lr.deal, moves), len(moves)
            to = set(f.spectators) if new else f.newcomers & f.spectators
            f.newcomers.clear()
            if to:
                self._send_board(lr, seat, f, to)

    def _send_board(self, lr: LocalRoom, seat: int, f: Follower, to: set[Conn]) -> None:
        data = orjson.dumps(
            {
                "type": "board",
                "room": display_code(lr.code),
                "seat": seat,
                "race": f.race,
                "view": f.game.player_view(),
            }
        )
        if lr.delay:
            asyncio.get_running_loop().call_later(
                lr.delay,
                lambda: broadcast([c.ws for c in to if c.code == lr.code], data, text=True),
            )
        else:
            broadcast([c.ws for c in to], data, text=True)

    # ------------------------------------------------------------------ fan-out

    def _may_see(self, conn: Conn, lr: LocalRoom, event: dict[str, Any]) -> bool:
        """Fair play: a player still racing never gets another player's move list/board."""
        if event.get("type") != "player_finished":
            return True
        return not (
            conn.role == "player"
            and event.get("race") == lr.race
            and lr.phase == "running"
            and conn.seat in lr.participants
            and conn.seat not in lr.finished
        )

    def _payload(self, conn: Conn, lr: LocalRoom, event: dict[str, Any], data: bytes) -> bytes:
        """Fair play: the frame of a stored event for ``conn``. The deal code of a race goes
        to the player who typed it, to a player in their own ``player_finished``, and to
        everyone once the race has ended; the rest get the event without it."""
        if event.get("type") not in _DEAL_EVENTS:
            return data
        race = event.get("race", 0)
        seat = conn.seat if conn.role == "player" else None
        knows = (
            race < lr.race
            or (race == lr.race and lr.phase == "ended")
            or (seat is not None and seat in (event.get("typed_by"), lr.typed_by))
            or (
                seat is not None
                and event.get("type") == "player_finished"
                and seat == event.get("seat")
            )
        )
        shown = {k: v for k, v in event.items() if k != "typed_by" and (knows or k != "deal")}
        return orjson.dumps(shown)

    def on_message(self, code: str, data: bytes) -> None:
        """Deliver one room message from the backend to this worker's connections."""
        lr = self.rooms.get(code)
        if lr is None:
            return
        try:
            event = orjson.loads(data)
            seq = event_seq(data)
            if seq is None:
                self._control(event)
                return
            self._learn_event(lr, event)
            kind = event.get("type")
            targets = []
            for conn in lr.conns:
                if not conn.ready:
                    conn.pending.append(data)
                elif seq > conn.last_seq:
                    conn.last_seq = seq
                    if conn.closing or not self._may_see(conn, lr, event):
                        continue
                    if self._write_backlog(conn) > self.config.max_backlog:
                        # a client that does not read would make the buffer grow forever
                        logger.warning("closing slow connection room=%s conn=%s", code, conn.id)
                        self._close(conn, 1013, "too slow: reconnect and resume")
                        continue
                    if kind in _DEAL_EVENTS:
                        broadcast([conn.ws], self._payload(conn, lr, event, data), text=True)
                        continue
                    targets.append(conn.ws)
            broadcast(targets, data, text=True)
        except Exception:
            logger.exception("could not deliver a message room=%s", code)

    @staticmethod
    def _write_backlog(conn: Conn) -> int:
        transport = conn.ws.transport
        return transport.get_write_buffer_size() if transport is not None else 0

    def _control(self, message: dict[str, Any]) -> None:
        if message.get("ctl") == "kick":
            conn = self.conns.get(str(message.get("conn")))
            if conn is not None:
                conn.seat = None  # the seat now belongs to the new connection
                conn.role = None
                self._close(conn, 4000, "replaced by a new connection")

    def _learn_event(self, lr: LocalRoom, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "race_starting":
            lr.phase, lr.race, lr.deal = "running", event["race"], event["deal"]
            lr.typed_by = event.get("typed_by")
            lr.start_at, lr.deadline = event["start_at"], event["deadline"]
            lr.participants, lr.finished = set(event["seats"]), set()
            self._arm_timer(lr)
            for f in lr.followers.values():
                f.dirty.set()
        elif kind == "race_ended" and event.get("race") == lr.race:
            lr.phase = "ended"
            if lr.timer is not None:
                lr.timer.cancel()
                lr.timer = None
        elif kind == "player_finished" and event.get("race") == lr.race:
            lr.finished.add(event["seat"])
        elif kind == "progress":
            follower = lr.followers.get(event.get("seat", -1))
            if follower is not None:
                follower.dirty.set()


def _ok(
    handle: Callable[[Conn, Any], Awaitable[None]],
) -> Callable[[Conn, Any], Awaitable[bool]]:
    """A request answered with ``ok`` once its handler returns."""

    async def run(conn: Conn, msg: Any) -> bool:
        await handle(conn, msg)
        return True

    return run


def _count_spectator(
    change: int, worker: str
) -> Callable[[RoomState, dict[int, ProgressState]], list[dict[str, Any]]]:
    """A room update: one spectator more (``+1``) or fewer (``-1``) on ``worker``, told to
    the room."""

    def count(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
        n = room.watchers.get(worker, 0) + change
        if n > 0:
            room.watchers[worker] = n
        else:
            room.watchers.pop(worker, None)
        room.spectators = sum(room.watchers.values())
        return [spectators_event(room)]

    return count


def _drop_watchers(
    workers: set[str],
) -> Callable[[RoomState, dict[int, ProgressState]], list[dict[str, Any]]]:
    """A room update: the spectators of workers that died are gone, told to the room."""

    def drop(room: RoomState, progress: dict[int, ProgressState]) -> list[dict[str, Any]]:
        if not workers & room.watchers.keys():
            return []
        for worker in workers:
            room.watchers.pop(worker, None)
        room.spectators = sum(room.watchers.values())
        return [spectators_event(room)]

    return drop


def _request_id(frame: str | bytes) -> int | None:
    """The ``id`` of a request, if the frame is one (for replies to refused frames)."""
    try:
        rid = getattr(decode_client(frame), "id", None)
    except ProtocolError:
        return None
    return rid if isinstance(rid, int) else None


# ---------------------------------------------------------------------- running


@contextlib.asynccontextmanager
async def running(
    backend: Backend, config: Config | None = None, *, sock: socket.socket | None = None
) -> AsyncIterator[tuple[RaceServer, WsServer]]:
    """Start a server (port 0 picks a free port: see ``RaceServer.port``) and stop it on
    exit: connections are closed with 1001 and the backend is closed."""
    config = config or Config()
    app = RaceServer(backend, config)
    await app.start()
    kwargs: dict[str, Any] = {}
    if sock is not None:
        kwargs["sock"] = sock
    else:
        kwargs.update(host=config.host, port=config.port, reuse_port=config.reuse_port or None)
    try:
        async with serve(
            app.handler,
            max_size=config.max_frame,
            compression="deflate" if config.compression else None,
            process_request=app.process_request,
            logger=logging.getLogger("samedeal.ws"),
            **kwargs,
        ) as ws_server:
            app.port = ws_server.sockets[0].getsockname()[1]
            yield app, ws_server
            ws_server.close()
            await ws_server.wait_closed()
    finally:
        await app.close()


async def run(backend_factory: Callable[[], Backend], config: Config) -> None:
    """Serve until SIGTERM or SIGINT, then drain: stop accepting, close every connection
    with 1001 (clients resume elsewhere), release the backend."""
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()

    def on_signal() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    async with running(backend_factory(), config) as (app, _):
        # Everything made so far (modules, the message models' validators, the app) lives as
        # long as the process: moved out of the collector's reach, a full collection no
        # longer walks it. 1,000 paced players: p99 6-27 ms before (the collections), 2-3 ms
        # after (bench/race.py, memory backend).
        gc.collect()
        gc.freeze()
        logger.info(
            "serving host=%s port=%s worker=%s pid=%s",
            config.host,
            app.port,
            app.backend.worker_id,
            os.getpid(),
        )
        await stop
        logger.info("draining worker=%s connections=%s", app.backend.worker_id, len(app.conns))
    logger.info("stopped")
