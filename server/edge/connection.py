"""One connection: what it holds, its outbox of coalesced progress, its gate, sending.

A :class:`Player` is whatever holds a player seat and moves for it — a websocket
connection (:class:`Conn`) or a robot the server plays (:mod:`server.robots`). The race
layer takes either through the same door.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING

from websockets.asyncio.server import ServerConnection
from websockets.protocol import OPEN

from engine.game import Game
from protocol import Role

from ..bucket import TokenBucket
from .admission import client_address

if TYPE_CHECKING:
    # the rooms layer sits above the edge: the outbox only holds its value
    from ..rooms.room import ProgressState

__all__ = ["Conn", "FrameWriter", "Gate", "Outbox", "Player", "new_conn_id"]


class FrameWriter:
    """Frames for the network, one write per connection per turn of the event loop.

    A move sends its ack and, on every connection of the room, a ``progress``; several
    moves of one loop turn send several frames to one connection. Each
    ``transport.write`` of a frame is a system call (uvloop writes at once when the socket
    can take it): here the frames of a turn are encoded into the connection's websocket
    protocol (sans-I/O, as ``websockets.broadcast`` does) and written together at the end
    of the turn, in order, with one call per connection. Nothing is awaited: a connection
    whose unsent bytes grow is closed by the room's slow-reader check.
    """

    __slots__ = ("_armed", "_crowd", "_players")

    #: connections other than players' written per turn: a crowd's frames (a thousand
    #: spectators of one room, 20–30 ms of writes here) go out over a few turns with the
    #: network read between them, so moves are not held behind a broadcast; players'
    #: frames (acks, their rooms' progress) go out first, every turn
    CROWD_SLICE = 200

    def __init__(self) -> None:
        self._players: list[Conn] = []
        self._crowd: list[Conn] = []
        self._armed = False

    def write(self, conn: Conn, data: bytes) -> None:
        """Queue one text frame for ``conn`` (skipped unless the connection is open)."""
        protocol = conn.websocket.protocol
        if protocol.state is not OPEN:
            return
        protocol.send_text(data)
        if not conn.corked:
            conn.corked = True
            (self._players if conn.role == "player" else self._crowd).append(conn)
            self._arm()

    def _arm(self) -> None:
        if not self._armed:
            self._armed = True
            asyncio.get_running_loop().call_soon(self.flush)

    def flush(self) -> None:
        """Write what each connection has queued, one write each: every player's, and up to
        ``CROWD_SLICE`` others' (the rest at the next turn, in order)."""
        self._armed = False
        players, self._players = self._players, []
        crowd = self._crowd
        if len(crowd) > self.CROWD_SLICE:
            crowd, self._crowd = crowd[: self.CROWD_SLICE], crowd[self.CROWD_SLICE :]
            self._arm()
        else:
            self._crowd = []
        for conn in players:
            self._send(conn)
        for conn in crowd:
            self._send(conn)

    @staticmethod
    def _send(conn: Conn) -> None:
        conn.corked = False
        websocket = conn.websocket
        chunks = websocket.protocol.data_to_send()
        if not chunks:
            return
        transport = websocket.transport
        if transport is None or transport.is_closing():
            return
        if b"" in chunks:
            # the end of the stream is among them (a close): each as websockets does
            for data in chunks:
                if data:
                    transport.write(data)
                elif transport.can_write_eof():
                    transport.write_eof()
                else:
                    transport.close()
            return
        transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))


class Gate:
    """A lock for the few tasks of one connection (its moves and its held progress), used
    as ``async with gate:``. Taking it when it is free costs no coroutine and no wait:
    ``__aenter__`` hands back an already finished future (``async with asyncio.Lock()``
    costs two coroutine calls on every move). Waiters go in arrival order."""

    __slots__ = ("_done", "_free", "busy")

    def __init__(self) -> None:
        self.busy = False
        self._free: asyncio.Future[None] | None = None
        self._done: asyncio.Future[None] | None = None

    def _finished(self) -> asyncio.Future[None]:
        done = self._done
        if done is None:
            done = self._done = asyncio.get_running_loop().create_future()
            done.set_result(None)
        return done

    def __aenter__(self) -> Awaitable[None]:
        if not self.busy:
            self.busy = True
            return self._finished()
        return self.wait()

    def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> asyncio.Future[None]:
        self.release()
        return self._finished()

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
class Outbox:
    """A racing player's ``progress`` events, coalesced: each is the seat's full state, so
    only the latest matters. Only :mod:`server.rooms.progress` reads and writes it; ``gate``
    orders a held event's storage with the moves."""

    sent_at: float = float("-inf")
    #: the latest progress held back (its event is built only if it is sent): the value,
    #: the room it is of and the race's time when it was reached (ms)
    held: ProgressState | None = None
    held_room: str = ""
    held_elapsed: int = 0
    timer: asyncio.TimerHandle | None = None
    gate: Gate = field(default_factory=Gate)


class Player:
    """What holds a player seat: the room and seat, the authoritative game of the current
    race (rebuilt from the move log when missing) and the outbox of its progress."""

    __slots__ = (
        "closing",
        "epoch",
        "game",
        "game_race",
        "id",
        "outbox",
        "role",
        "room_code",
        "seat",
    )

    def __init__(self, conn_id: str) -> None:
        #: the worker id is part of the id: seats show where they are held
        self.id = conn_id
        self.room_code: str | None = None
        self.role: Role | None = None
        self.seat: int | None = None
        #: the seat's epoch when this holder took it: every write of the seat carries it
        self.epoch = 1
        self.game: Game | None = None
        self.game_race = 0
        self.closing = False
        self.outbox = Outbox()


def new_conn_id(worker: str) -> str:
    """A connection id on ``worker``: ``worker/16 hex digits``."""
    return f"{worker}/{secrets.token_hex(8)}"


class Conn(Player):
    """One websocket connection and what it holds."""

    __slots__ = (
        "attempt_done",
        "bad",
        "corked",
        "credits",
        "entered",
        "following",
        "frames",
        "last_seq",
        "last_strike",
        "later",
        "live",
        "pending",
        "player_id",
        "player_name",
        "player_proof",
        "reaction_credits",
        "ready",
        "strikes",
        "websocket",
    )

    def __init__(
        self,
        websocket: ServerConnection,
        credits: TokenBucket,
        worker: str,
        frames: FrameWriter | None = None,
    ) -> None:
        super().__init__(new_conn_id(worker))
        self.websocket = websocket
        #: where this connection's frames go out (one write per loop turn)
        self.frames = frames if frames is not None else FrameWriter()
        #: frames queued in the writer this turn
        self.corked = False
        #: the last room event delivered (or skipped as not for this connection)
        self.last_seq = 0
        #: False while joining: room events wait in ``pending`` until the reply is sent
        self.ready = False
        self.pending: list[bytes] = []
        #: while joining: what the room's feed released for its spectators (delayed)
        self.later: list[bytes] = []
        #: the seats whose boards a spectator follows
        self.following: tuple[int, ...] = ()
        #: the live directory view subscribed to (``live``), if any
        self.live: tuple[str, str | None, int] | None = None
        #: message credits: a frame takes one (the gateway's limit)
        self.credits = credits
        #: reaction credits, a second bucket (made by the reactions' limit on first use)
        self.reaction_credits: TokenBucket | None = None
        self.strikes = 0
        self.last_strike = 0.0
        self.bad = 0
        #: the identity this connection said it is (``identify``), and its display name
        self.player_id: str | None = None
        self.player_name: str | None = None
        #: the hash of the secret it proved that with: a change of the identity is made
        #: only while that is still the player's (a recovery elsewhere replaces it)
        self.player_proof: str | None = None
        #: what the board rule reads of this identity in its room (``rooms.view``), looked
        #: up as it comes in and again as it follows boards: entered in the room's
        #: tournament; has finished its own attempt at the room's daily game today
        self.entered = False
        self.attempt_done = False

    @property
    def address(self) -> str:
        """The client's address (as admitted: behind a trusted proxy, the one it named),
        for limits per client."""
        return client_address(self.websocket)

    def backlog(self) -> int:
        """Bytes waiting to be written to the socket."""
        transport = self.websocket.transport
        return transport.get_write_buffer_size() if transport is not None else 0

    async def send(self, data: bytes) -> None:
        """Send one encoded frame, a reply (a closed connection is skipped). It goes out
        with the connection's other frames of this loop turn, in order."""
        self.frames.write(self, data)

    def push(self, data: bytes) -> None:
        """Send one encoded frame, a room event or a board: as :meth:`send`, from code
        that does not await."""
        self.frames.write(self, data)
