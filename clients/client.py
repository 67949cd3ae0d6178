"""An async client for the samedeal race server — used by tests, bots and other clients.

>>> async def demo() -> None:
...     async with await RaceClient.connect("ws://127.0.0.1:8765") as client:
...         joined = await client.create("klondike", name="Ann")
...         await client.start()
...         await client.next_event("race_starting")
...         reply = await client.move("s")
...         async for event in client.events():
...             print(event.type)

Every request gets exactly one direct reply (``joined``, ``ack``, ``rejected``, ``ok``,
``pong`` or ``error``), matched by the ``id`` the client puts in. Everything else — room
events, ``board``, ``resync``, unsolicited errors — goes to the event queue, read with
:meth:`RaceClient.events` or :meth:`RaceClient.next_event`. The client tracks the last room
event ``seq`` it saw, so :meth:`RaceClient.reconnect` can resume a seat.

A connection made for a known room carries it in its address (``?room=CODE``), so that a
load balancer puts all of a room's connections on one worker; a seat taken on a connection
made without it (a room just created) moves to one with it, :meth:`RaceClient.settle`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import deque
from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Any

import orjson
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from protocol import (
    PROTOCOL_VERSION,
    Ack,
    Error,
    IdentityReply,
    Joined,
    ProtocolError,
    RaceStarting,
    Rejected,
    Role,
    Seeking,
    ServerMessage,
    TournamentReply,
    TournamentSeat,
    Welcome,
    decode_server,
    merge_view,
)

from .identity import IdentityFile, SavedIdentity
from .links import room_hint, routed_url

__all__ = ["RaceClient", "RequestError", "ensure_identity"]


class RequestError(Exception):
    """The server answered a request with ``error``."""

    def __init__(self, error: Error) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.message = error.message


class RaceClient:
    """One connection to the server, after ``hello``/``welcome``."""

    def __init__(
        self, websocket: ClientConnection, welcome: Welcome, url: str, history: int = 2000
    ) -> None:
        self.websocket = websocket
        self.welcome = welcome
        self.url = url
        self.room: str | None = None
        self.seat: int | None = None
        self.token: str | None = None
        self.key: str | None = None
        self.role: Role | None = None
        self.game: str | None = None  # the room's game name, from its snapshot
        self.frames: list[str | bytes] | None = None  # set to a list to record raw frames
        self.last_seq: int | None = None
        self.view: dict[str, Any] | None = None
        #: where this client's identity is kept (None: a guest), and who the server says
        #: the player is (``recovery_code`` set when the identity was made just now)
        self.identity_file: IdentityFile | None = None
        self.player: IdentityReply | None = None
        #: the room this connection was routed by (its ``?room=`` hint), None if none
        self.routed_room: str | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[ServerMessage]] = {}
        self._events: asyncio.Queue[ServerMessage | None] = asyncio.Queue()
        self.history: deque[ServerMessage] = deque(maxlen=history)
        """The last unsolicited messages received, read or not (for tests and tools)."""
        self._reader = asyncio.create_task(self._read())

    # ------------------------------------------------------------------ connecting

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        version: int = PROTOCOL_VERSION,
        identity: IdentityFile | None = None,
        name: str = "",
        room: str | None = None,
    ) -> RaceClient:
        """Open a connection and say ``hello``; raises :class:`RequestError` if refused.

        ``room``: the room this connection is for, when known (joining by code or link,
        resuming, watching): the address gets ``?room=CODE``, a hint for the load balancer
        to send it to the worker that has the room's other connections. The server
        neither needs nor trusts it.

        With ``identity``, the connection then says who its player is, right after
        ``hello``: the identity kept in that file, or a new one (named ``name``) kept there
        (:func:`ensure_identity`); :attr:`player` holds the reply."""
        websocket = await connect(
            routed_url(url, room) if room else url, max_size=None, open_timeout=5
        )
        await websocket.send(orjson.dumps({"type": "hello", "v": version}).decode())
        first = decode_server(await asyncio.wait_for(websocket.recv(), 5))
        if isinstance(first, Error):
            await websocket.close()
            raise RequestError(first)
        if not isinstance(first, Welcome):
            await websocket.close()
            raise ProtocolError("unexpected", f"expected welcome, got {first.type}")
        client = cls(websocket, first, url)
        client.routed_room = room_hint(room)
        if identity is not None:
            client.identity_file = identity
            try:
                client.player = await ensure_identity(client, identity, name)
            except BaseException:
                await client.close()
                raise
        return client

    async def reconnect(self, url: str | None = None) -> RaceClient:
        """A new connection resuming this client's seat with the last seq seen (and saying
        who its player is first, as this one did)."""
        if self.room is None or self.token is None:
            raise ValueError("no seat to resume")
        other = await RaceClient.connect(
            url or self.url, identity=self.identity_file, room=self.room
        )
        other.last_seq = self.last_seq
        other.token = self.token
        await other.resume(self.room, self.token, self.last_seq)
        return other

    async def settle(self) -> RaceClient:
        """The client to go on with: this one, or — when this connection holds a seat but
        was not routed by its room (made before the room was known: its creator, or a
        player who typed the code after connecting) — a new connection routed by the room
        (``?room=CODE``) that has resumed the seat, this one closed. The messages this one
        had received and not yet handed out come first on the new one; the seat, host
        role and token stay.

        Call it right after ``create`` or ``join``: best before the race starts (a seat
        resumed mid-race is sound, but costs the player a round trip). Behind a balancer
        that hashes ``?room=``, every connection of a room then reaches one worker, which
        alone pays the room's events and feed (docs/scaling.md, "Room affinity")."""
        if (
            self.role != "player"
            or self.room is None
            or self.token is None
            or room_hint(self.room) == self.routed_room
        ):
            return self
        seen, room, token = self.last_seq, self.room, self.token
        try:
            other = await RaceClient.connect(self.url, identity=self.identity_file, room=room)
        except (OSError, TimeoutError, ConnectionError, RequestError):
            return self  # a hint only: the seat plays on where it is
        other.last_seq, other.token = seen, token
        try:
            await other.resume(room, token, seen)
        except (TimeoutError, ConnectionError, RequestError):
            await other.close()
            return self
        other.key, other.game = self.key, other.game or self.game
        self.history.extend(other.history)
        other.frames, other.history = self.frames, self.history

        # the old connection's unread messages, but not events it got after the resume
        # (the new connection has those too)
        def before_resume(message: ServerMessage) -> bool:
            seq: int | None = getattr(message, "seq", None)
            return seq is None or (seen is not None and seq <= seen)

        unread = [message for message in self.drain() if before_resume(message)]
        for message in unread + other.drain():
            other._events.put_nowait(message)
        await self.close()
        return other

    async def close(self) -> None:
        """Close the connection and stop reading."""
        await self.websocket.close()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def __aenter__(self) -> RaceClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    @property
    def closed(self) -> bool:
        """True once the connection is closed."""
        return self._reader.done()

    # ------------------------------------------------------------------ reading

    async def _read(self) -> None:
        try:
            async for frame in self.websocket:
                if self.frames is not None:
                    self.frames.append(frame)
                message = decode_server(frame)
                seq = getattr(message, "seq", None)
                if seq is not None:
                    self.last_seq = max(seq, self.last_seq or 0)
                if isinstance(message, Joined):
                    # here, before any later frame: a race_starting read right after it
                    # must already know the seat (the board it carries is this seat's)
                    self._took(message)
                rid = getattr(message, "id", None)
                future = self._waiting.pop(rid, None) if rid is not None else None
                if future is not None and not future.done():
                    future.set_result(message)
                else:
                    if (
                        isinstance(message, RaceStarting)
                        and message.view is not None
                        and self.seat in message.seats
                    ):
                        self.view = message.view  # the new race's board: acks merge into it
                    self.history.append(message)
                    self._events.put_nowait(message)
        except ConnectionClosed:
            pass
        finally:
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(ConnectionError("connection closed"))
            self._events.put_nowait(None)

    async def events(self) -> AsyncIterator[ServerMessage]:
        """Room events and other unsolicited messages, until the connection closes."""
        while True:
            message = await self._events.get()
            if message is None:
                self._events.put_nowait(None)
                return
            yield message

    async def next_event(self, *types: str, timeout: float = 5.0) -> ServerMessage:
        """The next unsolicited message of one of ``types`` (any, if none given); others
        before it are dropped."""

        async def wait() -> ServerMessage:
            async for message in self.events():
                if not types or message.type in types:
                    return message
            raise ConnectionError("connection closed")

        return await asyncio.wait_for(wait(), timeout)

    def drain(self) -> list[ServerMessage]:
        """Every message already queued, without waiting."""
        out = []
        while not self._events.empty():
            message = self._events.get_nowait()
            if message is None:
                self._events.put_nowait(None)
                break
            out.append(message)
        return out

    # ------------------------------------------------------------------ requests

    async def send_raw(self, data: str | bytes) -> None:
        """Send a frame as it is (for tests of bad input)."""
        await self.websocket.send(data)

    async def request(self, payload: dict[str, Any], timeout: float = 10.0) -> ServerMessage:
        """Send a request with a fresh ``id`` and return its direct reply; raises
        :class:`RequestError` for an ``error`` reply."""
        rid = next(self._ids)
        future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        await self.websocket.send(orjson.dumps({**payload, "id": rid}).decode())
        try:
            reply = await asyncio.wait_for(future, timeout)
        finally:
            self._waiting.pop(rid, None)
        if isinstance(reply, Error):
            raise RequestError(reply)
        return reply

    def _took(self, joined: Joined) -> None:
        self.room, self.role = joined.room, joined.role
        self.seat = joined.seat
        self.token = joined.token or self.token
        self.key = joined.key or self.key
        if joined.snapshot is not None:
            self.last_seq = joined.snapshot.seq
            self.game = joined.snapshot.game
        self.view = joined.view

    @staticmethod
    def _joined(reply: ServerMessage) -> Joined:
        assert isinstance(reply, Joined)  # the reader has taken its seat (_took)
        return reply

    async def create(self, game: str, *, name: str = "", **options: Any) -> Joined:
        """Create a room (``deal=``, ``code=``, ``max_players=``, ``time_limit=``,
        ``spectators=``, ``private=``, ``spectator_delay=``) and take its first seat."""
        return self._joined(
            await self.request({"type": "create", "game": game, "name": name, **options})
        )

    async def join(
        self, room: str, *, name: str = "", role: Role = "player", key: str | None = None
    ) -> Joined:
        """Join a room as a player or a spectator."""
        payload: dict[str, Any] = {"type": "join", "room": room, "name": name, "role": role}
        if key is not None:
            payload["key"] = key
        return self._joined(await self.request(payload))

    async def resume(self, room: str, token: str, last_seq: int | None = None) -> Joined:
        """Take a seat back with its token; missed events (or a ``resync``) follow."""
        return self._joined(
            await self.request(
                {"type": "resume", "room": room, "token": token, "last_seq": last_seq}
            )
        )

    async def start(self) -> None:
        """Host: start the race."""
        await self.request({"type": "start"})

    async def rematch(self, deal: str = "same", deal_code: str | None = None) -> None:
        """Host, after a race: offer a new race on the same or a new deal (the players
        answer ``rematch_offered`` with :meth:`rematch_reply`)."""
        await self.request({"type": "rematch", "deal": deal, "code": deal_code})

    async def rematch_reply(self, race: int, accept: bool = True) -> None:
        """Answer the rematch offered for race ``race``: race it, or sit it out."""
        await self.request({"type": "rematch_reply", "race": race, "accept": accept})

    async def leave(self) -> None:
        """Leave the room at once (a running race is resigned first); the connection may
        then create or join another room."""
        await self.request({"type": "leave"})
        self.room = self.seat = self.token = self.role = None
        self.view = None

    async def resign(self) -> None:
        """Give up the current race."""
        await self.request({"type": "resign"})

    async def follow(self, seat: int | Sequence[int] | None) -> None:
        """Spectator: follow a player's board, or up to four (a list; ``None`` or ``[]``
        stops)."""
        if seat is None or isinstance(seat, int):
            await self.request({"type": "follow", "seat": seat})
        else:
            await self.request({"type": "follow", "seats": list(seat)})

    async def live(self, sort: str = "closest", game: str | None = None, limit: int = 20) -> None:
        """Subscribe to the live directory (``live_rooms`` messages; ``limit=0`` stops)."""
        await self.request({"type": "live", "sort": sort, "game": game, "limit": limit})

    async def react(self, reaction: str, seat: int | None = None) -> None:
        """Send a reaction (``clap``, ``wow``, ``fire``, ``gg``) beside the player at
        ``seat``."""
        await self.request({"type": "react", "reaction": reaction, "seat": seat})

    # ------------------------------------------------------------------ identity

    async def new_player(self, name: str = "") -> IdentityReply:
        """A new identity (its ``secret`` and ``recovery_code`` come this once)."""
        return self._identity(await self.request({"type": "new_player", "name": name}))

    async def identify(self, player: str, secret: str) -> IdentityReply:
        """Say who this connection's player is."""
        return self._identity(
            await self.request({"type": "identify", "player": player, "secret": secret})
        )

    async def recover(self, recovery_code: str) -> IdentityReply:
        """Move an identity here with its recovery code (a new secret and code come back)."""
        return self._identity(await self.request({"type": "recover", "code": recovery_code}))

    async def rename(self, name: str) -> IdentityReply:
        """The identified player's display name."""
        return self._identity(await self.request({"type": "rename", "name": name}))

    async def set_handle(self, handle: str | None) -> IdentityReply:
        """The identified player's handle (None: none)."""
        return self._identity(await self.request({"type": "set_handle", "handle": handle}))

    async def forget_me(self) -> None:
        """Delete the identified player's identity."""
        await self.request({"type": "forget_me"})
        self.player = None

    def _identity(self, reply: ServerMessage) -> IdentityReply:
        assert isinstance(reply, IdentityReply)
        self.player = reply
        return reply

    @property
    def player_id(self) -> str | None:
        """The id of the player this connection speaks for (None: a guest)."""
        return None if self.player is None else self.player.player

    # ------------------------------------------------------------------ tournaments

    @staticmethod
    def _tournament(reply: ServerMessage) -> TournamentReply:
        assert isinstance(reply, TournamentReply)
        return reply

    async def tournament_create(self, **settings: Any) -> TournamentReply:
        """Create a tournament hosted by this (identified) player, and open it."""
        return self._tournament(
            await self.request({"type": "tournament_create", "settings": settings})
        )

    async def tournament_open(self, tournament: str, key: str | None = None) -> TournamentReply:
        """Follow a tournament: its page now, then its events and standings."""
        payload: dict[str, Any] = {"type": "tournament_open", "tournament": tournament}
        if key is not None:
            payload["key"] = key
        return self._tournament(await self.request(payload))

    async def tournament_join(
        self, tournament: str, *, name: str = "", key: str | None = None
    ) -> TournamentReply:
        """Enter a tournament as a player (and open it)."""
        payload: dict[str, Any] = {
            "type": "tournament_join",
            "tournament": tournament,
            "name": name,
        }
        if key is not None:
            payload["key"] = key
        return self._tournament(await self.request(payload))

    async def tournament_withdraw(self, tournament: str) -> None:
        """Leave the tournament (past results stay)."""
        await self.request({"type": "tournament_withdraw", "tournament": tournament})

    async def tournament_rejoin(self, tournament: str) -> None:
        """Enter again after withdrawing."""
        await self.request({"type": "tournament_rejoin", "tournament": tournament})

    async def tournament_host(self, tournament: str, act: str, **fields: Any) -> None:
        """A host's act (``start``, ``start_round``, ``kick`` with ``player`` and ``reason``
        …)."""
        await self.request(
            {"type": "tournament_host", "tournament": tournament, "act": act, **fields}
        )

    async def tournament_close(self) -> None:
        """Stop following the open tournament."""
        await self.request({"type": "tournament_close"})

    async def take_seat(self, seat: TournamentSeat) -> Joined:
        """Take a round's seat (``tournament_seat``): leave the last round's room first."""
        if self.room is not None:
            with contextlib.suppress(RequestError):
                await self.leave()
        self.token = seat.token
        return await self.resume(seat.room, seat.token)

    async def seek(
        self,
        game: str,
        players: int = 2,
        time_limit: int | None = None,
        *,
        rated: bool | None = None,
        wait: int = 20,
        name: str = "",
    ) -> Seeking:
        """Play now: wait in a quick-play pool (``seeking``); the seat comes as ``joined``
        (an event: read it with :meth:`next_event`), then the room's events."""
        payload: dict[str, Any] = {
            "type": "seek",
            "game": game,
            "players": players,
            "time_limit": time_limit,
            "rated": rated,
            "wait": wait,
            "name": name,
        }
        reply = await self.request(payload)
        assert isinstance(reply, Seeking)
        return reply

    async def cancel_seek(self) -> None:
        """Leave the pool."""
        await self.request({"type": "cancel_seek"})

    async def take_offer(self, offer: str) -> Joined | Seeking:
        """Race what ``seek_offer`` offered: ``bot`` or ``ghost`` (``joined``), ``smaller``
        (``seeking``)."""
        reply = await self.request({"type": "take_offer", "offer": offer})
        assert isinstance(reply, Joined | Seeking)
        return reply

    async def watch_pools(self, watch: bool = True) -> None:
        """Receive how many seek each pool (``pool_counts``), or stop."""
        await self.request({"type": "pools", "watch": watch})

    async def ping(self) -> int:
        """The server clock in ms."""
        reply = await self.request({"type": "ping"})
        return int(getattr(reply, "now", 0))

    async def move(self, text: str) -> Ack | Rejected:
        """Play an action; the ``ack`` or ``rejected``. On an ``ack`` its ``changes`` are
        merged into :attr:`view`, the player's board."""
        reply = await self.request({"type": "move", "move": text})
        assert isinstance(reply, Ack | Rejected)
        if isinstance(reply, Ack):
            self.view = merge_view(self.view, reply.changes)
        return reply


# refusals that leave the client a guest: no records kept, too many new identities for now
_GUEST = frozenset({"no_records", "rate_limited"})


async def ensure_identity(
    client: RaceClient, store: IdentityFile, name: str = "", *, strict: bool = False
) -> IdentityReply | None:
    """Say who this connection's player is: the kept identity (``identify``), or a new one
    (``new_player`` with ``name``) when none is kept or the server no longer knows it
    (``bad_identity``). The reply, whose ``recovery_code`` is set (this once) when the
    identity is new.

    ``None`` when the server keeps no players or refuses a new one now: the client plays
    as a guest. Nothing here blocks play: any other refusal leaves the client a guest too,
    unless ``strict`` (then it raises :class:`~clients.client.RequestError`)."""
    saved = store.load()
    try:
        if saved is not None:
            try:
                return await client.identify(saved.player, saved.secret)
            except RequestError as exc:
                if exc.code != "bad_identity":
                    raise
                store.forget()  # the server does not know it (any more): a new one
        made = await client.new_player(name)
    except RequestError as exc:
        if strict and exc.code not in _GUEST:
            raise
        return None
    if made.secret is not None:
        store.save(SavedIdentity(made.player, made.secret))
    return made


async def identified(url: str, name: str = "") -> RaceClient:
    """A connection speaking for this device's identity on the server at ``url`` (made,
    named ``name``, and kept on first use: :class:`~clients.identity.IdentityFile`).
    Raises :class:`RequestError` when the server cannot give it one (tournaments and the
    records need an identity; racing does not)."""
    client = await RaceClient.connect(url, identity=IdentityFile(url), name=name)
    if client.player is None:
        await client.close()
        raise RequestError(Error(code="no_identity", message="this server gives no identity now"))
    return client
