"""Frames are written without waiting for the reader (server/edge/connection.py's FrameWriter):
a client that asks and asks but reads none of its replies is closed (1013) once its unread
bytes pass ``max_backlog``, and its neighbours in the room go on; frames keep their order."""

from __future__ import annotations

import asyncio
import socket

import orjson
from helpers import until
from server_fixtures import StartServer
from watch_helpers import race_room
from websockets.asyncio.client import connect

from protocol import PROTOCOL_VERSION, Ack, Progress, decode_server


async def test_a_client_that_reads_no_replies_is_closed_and_the_room_goes_on(
    start_server: StartServer,
) -> None:
    server = await start_server("memory", max_backlog=32 * 1024, rate=100_000.0, burst=20_000)
    _, (ann,), _ = await race_room([server], players=1, watchers=[])
    app = server.app
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.port))
    lazy = await connect(server.url, sock=sock, max_queue=1)
    await lazy.send(orjson.dumps({"type": "hello", "v": PROTOCOL_VERSION}).decode())
    await until(lambda: len(app.ctx.rooms.conns) == 2)
    slow = next(c for c in app.ctx.rooms.conns.values() if c.room_code is None)
    server_side = (
        slow.websocket.transport.get_extra_info("socket") if slow.websocket.transport else None
    )
    assert server_side is not None
    server_side.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    # pings, each answered by a pong nobody reads: at most 8,000 (~400 KB of replies)
    for i in range(8000):
        await lazy.send(orjson.dumps({"type": "ping", "id": i}).decode())
        if i % 100 == 99:
            await asyncio.sleep(0)  # the server reads them as they come
            if slow.closing:
                break
    await until(lambda: slow.closing)
    assert app.ctx.metrics.slow_closes_total == 1
    for _ in range(20):  # the room goes on
        assert isinstance(await ann.move("s"), Ack)
    lazy.transport.abort()


async def test_frames_of_one_loop_turn_arrive_in_order(start_server: StartServer) -> None:
    """Moves sent all at once (served in a few loop turns, each move's frames to every
    member) reach a spectator in seq order, each once, and every move is acknowledged."""
    server = await start_server("memory", progress_interval=0.0, rate=100_000.0, burst=5000)
    room, (ann,), _ = await race_room([server], players=1, watchers=[])
    async with connect(server.url) as raw:
        await raw.send(orjson.dumps({"type": "hello", "v": PROTOCOL_VERSION}).decode())
        join = {"type": "join", "id": 1, "room": room, "role": "spectator", "key": ann.key}
        await raw.send(orjson.dumps(join).decode())
        for _ in range(20):  # the welcome, then the joined reply
            if decode_server(await asyncio.wait_for(raw.recv(), 10)).type == "joined":
                break
        sent = 200
        replies = await asyncio.gather(*(ann.move("s") for _ in range(sent)))
        assert all(isinstance(r, Ack) for r in replies)
        seqs: list[int] = []
        while len(seqs) < sent:
            message = decode_server(await asyncio.wait_for(raw.recv(), 10))
            if isinstance(message, Progress):
                seqs.append(message.seq)
        assert seqs == sorted(set(seqs))  # in order, none twice
