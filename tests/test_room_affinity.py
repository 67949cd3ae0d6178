"""Room affinity: a connection made for a known room says so in its address
(``?room=CODE``), a hint for the load balancer to send all of a room's connections to one
worker; a seat taken on a connection without it (the room's creator) moves to one with it
and keeps the seat. The server neither needs nor trusts the hint (docs/scaling.md, "Room
affinity"). Real servers, real websockets, memory and one Redis."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from helpers import until, until_server_clock
from server_fixtures import StartServer, paths_in_room
from websockets.asyncio.client import connect

from clients.client import RaceClient, RequestError
from clients.links import room_hint, routed_url
from protocol import PROTOCOL_VERSION, Ack, RaceStarting

DEAL = "KL1-1-AAAAAAM"


def test_the_hint_is_one_form_for_every_spelling() -> None:
    assert room_hint("k7qf-2m") == room_hint("K7QF2M") == room_hint(" K7QF 2M ") == "K7QF2M"
    assert room_hint("") is None and room_hint("--") is None and room_hint(None) is None
    assert routed_url("ws://h:1", "k7qf-2m") == "ws://h:1/?room=K7QF2M"
    # a hint already in the address is replaced, other query parameters kept
    assert routed_url("ws://h:1/?room=AAAAAA&x=1", "BBBBBB") == "ws://h:1/?x=1&room=BBBBBB"
    assert routed_url("ws://h:1/?room=AAAAAA", None) == "ws://h:1/"


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_player_joining_by_code_connects_with_the_room(
    kind: str, start_server: StartServer
) -> None:
    server = await start_server(kind)
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", deal="code", code=DEAL, name="Ann")
    guest = await RaceClient.connect(server.url, room=joined.room.lower())
    try:
        assert guest.websocket.request is not None
        assert guest.websocket.request.path == f"/?room={room_hint(joined.room)}"
        await guest.join(joined.room, name="Bob")
        # the server saw the hint on the guest's connection, none on the host's
        assert paths_in_room(server.app, joined.room) == ["/", f"/?room={room_hint(joined.room)}"]
    finally:
        await guest.close()
        await host.close()


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_the_creator_moves_to_its_rooms_address_and_keeps_its_seat(
    kind: str, start_server: StartServer
) -> None:
    server = await start_server(kind)
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", deal="code", code=DEAL, name="Ann")
    guest = await RaceClient.connect(server.url, room=joined.room)
    seat = (await guest.join(joined.room, name="Bob")).seat
    moved = await host.settle()
    try:
        assert moved is not host and host.closed
        assert moved.websocket.request is not None
        assert moved.websocket.request.path == f"/?room={room_hint(joined.room)}"
        assert (moved.room, moved.seat, moved.token) == (joined.room, joined.seat, joined.token)
        # once routed, settling again is nothing
        assert await moved.settle() is moved
        # the seat is held by the new connection only, and it is still the host's
        hint = f"/?room={room_hint(joined.room)}"
        both_routed = [hint, hint]
        await until(lambda: paths_in_room(server.app, joined.room) == both_routed)
        snap = await server.app.store.rooms.snapshot(room_hint(joined.room) or "")
        assert snap is not None
        assert [(s.seat, s.connected) for s in snap.room.seats] == [
            (joined.seat, True),
            (seat, True),
        ]
        await moved.start()  # only the host may
        starting = await moved.next_event("race_starting")
        assert isinstance(starting, RaceStarting) and joined.seat in starting.seats
        await guest.next_event("race_starting")
        await until_server_clock(starting.start_at, starting.now)
        assert isinstance(await moved.move("s"), Ack)
        # the old token still names the seat (a later reconnect resumes it)
        again = await moved.reconnect()
        assert again.seat == joined.seat
        await again.close()
    finally:
        await moved.close()
        await guest.close()


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_forged_room_hint_changes_nothing(kind: str, start_server: StartServer) -> None:
    server = await start_server(kind)
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", deal="code", code=DEAL, name="Ann")
    code = room_hint(joined.room)
    forged = [
        f"{server.url}/?room={code}",  # a real room: no seat, no events, no view of it
        f"{server.url}/?room=ZZZZZZ",  # no such room
        f"{server.url}/?room=%00%FF%3Cscript%3E&room={code}&room=",  # garbage, repeated
        f"{server.url}/ws?room={'A' * 5000}",  # long, on another path
    ]
    try:
        for url in forged:
            async with connect(url, open_timeout=5) as websocket:
                await websocket.send(
                    orjson.dumps({"type": "hello", "v": PROTOCOL_VERSION}).decode()
                )
                assert orjson.loads(await websocket.recv())["type"] == "welcome"
                # a plain connection: in no room, whatever its address says
                await websocket.send(orjson.dumps({"type": "move", "id": 1, "move": "s"}).decode())
                reply = orjson.loads(await websocket.recv())
                assert (reply["type"], reply["code"]) == ("error", "not_in_room")
                await websocket.send(orjson.dumps({"type": "start", "id": 2}).decode())
                reply = orjson.loads(await websocket.recv())
                assert (reply["type"], reply["code"]) == ("error", "not_in_room")
                # the room's events (a player coming and going) do not reach it
                peer = await RaceClient.connect(server.url)
                await peer.join(joined.room, name="Cy")
                await peer.leave()
                await peer.close()
                while not getattr(await host.next_event("seat"), "left", False):
                    pass
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(websocket.recv(), 0.3)
        snap = await server.app.store.rooms.snapshot(code or "")
        assert snap is not None
        assert [s.seat for s in snap.room.seats] == [joined.seat] and snap.room.spectators == 0
        # and a hint naming one room does not stop its connection joining another
        other = await RaceClient.connect(server.url, room="ZZZZZZ")
        try:
            assert (await other.join(joined.room, name="Bob")).seat not in (None, joined.seat)
        finally:
            await other.close()
        with pytest.raises(RequestError):  # nor does it let anyone resume without a token
            probe = await RaceClient.connect(server.url, room=joined.room)
            try:
                await probe.resume(joined.room, "forged-token")
            finally:
                await probe.close()
    finally:
        await host.close()
