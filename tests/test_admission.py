"""What comes in on the port (issue 30, items 3–5): connections per client address, a
reserve of descriptors for everyone else, the client's address named by a trusted proxy
only, and an HTTP answer to every request — through real servers, real sockets from
several loopback addresses, and real processes."""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import signal
import socket
import time
from collections import Counter
from typing import Any

import orjson
import pytest
from helpers import until, until_server_clock
from server_fixtures import (
    WINS,
    StartServer,
    connect_from,
    free_port,
    worker_process,
)
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from protocol import RaceEnded, RaceStarting

UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: samedeal\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


def client_frame(payload: bytes, opcode: int = 0x1) -> bytes:
    """A masked client frame (a short one: text by default)."""
    mask = os.urandom(4)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes([0x80 | opcode, 0x80 | len(payload)]) + mask + masked


HELLO = client_frame(b'{"type": "hello", "v": 2}')


async def read_frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """A server frame: its opcode and payload."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        size = int.from_bytes(await reader.readexactly(2), "big")
    elif size == 127:
        size = int.from_bytes(await reader.readexactly(8), "big")
    return first & 0x0F, await reader.readexactly(size)


async def answer_pings(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Keep a raw connection alive as a browser does: a pong to every ping."""
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while True:
            opcode, payload = await read_frame(reader)
            if opcode == 0x9:
                writer.write(client_frame(payload, 0xA))


async def exchange(port: int, data: bytes, source: str = "127.0.0.1") -> bytes:
    """Send ``data`` on a new connection from ``source``; all the server answers until it
    closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


def status_of(answer: bytes) -> int:
    """The status code of an HTTP answer."""
    return int(answer.split(b" ", 2)[1])


def body_of(answer: bytes) -> Any:
    """The decoded JSON body of an HTTP answer."""
    return orjson.loads(answer.split(b"\r\n\r\n", 1)[1])


async def play_a_race(url: str, source: str) -> RaceEnded:
    """A race of one from ``source``: create, start, two moves, resign."""
    player = await connect_from(url, source)
    try:
        await player.create("klondike", name="Ann", deal="code", code=WINS["klondike"][0])
        await player.start()
        starting = await player.next_event("race_starting", timeout=20)
        assert isinstance(starting, RaceStarting)
        await until_server_clock(starting.start_at, starting.now)
        await player.move("s")
        await player.move("s")
        await player.resign()
        ended = await player.next_event("race_ended", timeout=20)
        assert isinstance(ended, RaceEnded)
        return ended
    finally:
        await player.close()


# --------------------------------------------------------------------- HTTP answers


@pytest.mark.parametrize(
    ("request_", "status", "error"),
    [
        (b"POST /api/games HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 405, "method_not_allowed"),
        (b"POST /healthz HTTP/1.1\r\n\r\n", 405, "method_not_allowed"),
        (b"GET /nothing here HTTP/1.1\r\n\r\n", 400, "bad_request"),
        (b"HELLO\r\n\r\n", 400, "bad_request"),
        (b"GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc", 400, "bad_request"),
        (b"GET /api/nothing HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"),
        (b"GET /api/games/ HTTP/1.1\r\nHost: x\r\n\r\n", 404, "not_found"),
    ],
)
async def test_every_request_gets_an_http_answer(
    start_server: StartServer, request_: bytes, status: int, error: str
) -> None:
    server = await start_server("memory", static_dir=None)
    answer = await exchange(server.port, request_)
    assert status_of(answer) == status, answer
    assert b"Content-Type: application/json" in answer
    assert body_of(answer)["error"] == error
    if status == 405:
        assert b"Allow: GET" in answer


async def test_unknown_api_addresses_answer_json_where_the_page_is_served(
    start_server: StartServer,
) -> None:
    from clients.cmd_serve import WEB_DIR

    server = await start_server("memory", static_dir=WEB_DIR)
    answer = await exchange(server.port, b"GET /api/nope HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(answer) == 404 and body_of(answer)["error"] == "not_found"
    page = await exchange(server.port, b"GET /r/K7QF-2M HTTP/1.1\r\nHost: x\r\n\r\n")
    assert status_of(page) == 200 and b"text/html" in page


# --------------------------------------------------------------------- per address


async def test_an_address_holds_its_share_and_others_play_on(start_server: StartServer) -> None:
    server = await start_server("memory", max_per_address=5)
    held = [await connect_from(server.url, "127.0.0.1") for _ in range(5)]
    with pytest.raises(InvalidStatus) as info:
        await connect_from(server.url, "127.0.0.1")
    assert info.value.response.status_code == 429
    assert orjson.loads(info.value.response.body)["error"] == "too_many_connections"
    assert info.value.response.headers["Retry-After"]
    await play_a_race(server.url, "127.0.0.2")
    await held.pop().close()  # a connection given back is one more for its address
    await eventually_connects(server.url, "127.0.0.1")
    for client in held:
        await client.close()
    metrics = await exchange(server.port, b"GET /metrics HTTP/1.1\r\n\r\n", "127.0.0.3")
    assert b'samedeal_address_refusals_total{worker="test-0"} 1' in metrics


async def eventually_connects(url: str, source: str) -> None:
    """A connection from ``source`` is admitted, once the server has counted a close."""

    async def admitted() -> bool:
        try:
            await (await connect_from(url, source)).close()
        except InvalidStatus:
            return False
        return True

    await until(admitted, 10)


async def behind(
    port: int,
    *,
    source: str = "127.0.0.1",
    proxy_header: bytes | None = None,
    forwarded_for: str | None = None,
) -> Any:
    """A websocket from ``source`` that opens with ``proxy_header`` or carries
    ``forwarded_for`` in X-Forwarded-For, after ``hello`` (close it)."""
    sock = socket.create_connection(("127.0.0.1", port), source_address=(source, 0))
    if proxy_header is not None:
        sock.sendall(proxy_header)
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else None
    ws = await connect(
        f"ws://127.0.0.1:{port}", sock=sock, additional_headers=headers, open_timeout=10
    )
    await ws.send(orjson.dumps({"type": "hello", "v": 2}).decode())
    await ws.recv()
    return ws


async def sign_up(port: int, **how: Any) -> str:
    """``new_player`` on a connection made as :func:`behind` says: "ok", or the error."""
    ws = await behind(port, **how)
    try:
        await ws.send(orjson.dumps({"type": "new_player", "id": 1, "name": "P"}).decode())
        reply = orjson.loads(await ws.recv())
        return "ok" if reply["type"] == "identity" else str(reply["code"])
    finally:
        await ws.close()


def proxy_v1(client: str, port: int) -> bytes:
    """A PROXY protocol v1 header naming ``client``."""
    return f"PROXY TCP4 {client} 127.0.0.1 40000 {port}\r\n".encode()


async def test_a_trusted_proxy_names_the_client_and_nobody_else_does(
    start_server: StartServer, tmp_path: Any
) -> None:
    server = await start_server(
        "memory",
        records_url=f"sqlite:///{tmp_path / 'r.db'}",
        identity_limit=1,
        max_per_address=3,
        trusted_proxies=("127.0.0.1/32",),
    )
    port = server.port
    # the PROXY protocol (HAProxy, a cloud balancer)
    assert await sign_up(port, proxy_header=proxy_v1("203.0.113.7", port)) == "ok"
    assert await sign_up(port, proxy_header=proxy_v1("203.0.113.7", port)) == "rate_limited"
    assert await sign_up(port, proxy_header=proxy_v1("203.0.113.8", port)) == "ok"
    # X-Forwarded-For (nginx): the rightmost address that is no trusted proxy
    assert await sign_up(port, forwarded_for="198.51.100.1") == "ok"
    assert await sign_up(port, forwarded_for="6.6.6.6, 198.51.100.1") == "rate_limited"
    # from an address that is not a trusted proxy, the header names nobody
    assert await sign_up(port, source="127.0.0.2", forwarded_for="198.51.100.2") == "ok"
    assert await sign_up(port, source="127.0.0.2", forwarded_for="198.51.100.3") != "ok"
    # the proxy's own health check (PROXY UNKNOWN) is answered
    answer = await exchange(port, b"PROXY UNKNOWN\r\nGET /healthz HTTP/1.1\r\n\r\n")
    assert status_of(answer) == 200
    # connections count by the client named, not by the proxy
    held = [await behind(port, forwarded_for="192.0.2.50") for _ in range(3)]
    with pytest.raises(InvalidStatus) as info:
        await behind(port, forwarded_for="192.0.2.50")
    assert info.value.response.status_code == 429
    held.append(await behind(port, proxy_header=proxy_v1("192.0.2.51", port)))
    for ws in held:
        await ws.close()


# --------------------------------------------------------------------- floods, real processes


async def flood(port: int, attempts: int, concurrency: int = 200) -> tuple[list[Any], Counter[Any]]:
    """``attempts`` websocket connections from 127.0.0.1, ``concurrency`` at a time, each
    saying hello when let in and then staying open: those held, and how each attempt ended
    (a status, or the error that ended it)."""
    held: list[Any] = []
    answering: list[asyncio.Task[None]] = []
    outcomes: Counter[Any] = Counter()
    gate = asyncio.Semaphore(concurrency)

    async def attempt() -> None:
        async with gate:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(UPGRADE)
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 60)
                status = status_of(head)
                if status == 101:
                    writer.write(HELLO)
                    await asyncio.wait_for(read_frame(reader), 60)  # the welcome
                    held.append(writer)
                    answering.append(asyncio.create_task(answer_pings(reader, writer)))
                else:
                    writer.close()
                outcomes[status] += 1
            except (OSError, asyncio.IncompleteReadError) as exc:
                outcomes[type(exc).__name__] += 1

    await asyncio.gather(*(attempt() for _ in range(attempts)))
    return held, outcomes


def raise_own_descriptor_limit() -> None:
    """This test process holds a few hundred connections at once."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


async def metric(port: int, name: str) -> float:
    answer = await exchange(port, b"GET /metrics HTTP/1.1\r\n\r\n", "127.0.0.3")
    for line in answer.decode().splitlines():
        if line.startswith(f"samedeal_{name}{{"):
            return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no metric {name}")


def assert_quiet(proc: Any) -> str:
    log: str = proc.stderr.read().decode() if proc.stderr else ""
    assert " ERROR " not in log and "Traceback" not in log, log[-3000:]
    assert "Too many open files" not in log and "out of system resource" not in log
    return log


async def test_twenty_thousand_connections_from_one_address_are_refused_past_its_share() -> None:
    raise_own_descriptor_limit()
    port = free_port()
    with worker_process("--max-per-address", "200", "--countdown", "0.05", port=port) as proc:
        started = time.monotonic()
        flooding = asyncio.create_task(flood(port, 20_000))
        # while it floods, another address plays a race and the health check answers
        ended = await play_a_race(f"ws://127.0.0.1:{port}", "127.0.0.2")
        assert [r.status for r in ended.results] == ["resigned"]
        health = await exchange(port, b"GET /healthz HTTP/1.1\r\n\r\n", "127.0.0.3")
        assert status_of(health) == 200
        assert not flooding.done()  # all of that happened during the flood
        held, outcomes = await flooding
        took = time.monotonic() - started
        assert outcomes == Counter({101: 200, 429: 19_800}), outcomes
        assert await metric(port, "address_refusals_total") == 19_800
        assert await metric(port, "connections") == 200
        for writer in held:
            writer.close()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 30) == 0
    log = assert_quiet(proc)
    # told, not once per connection: once a minute for the address
    told = log.count("connections refused address=127.0.0.1 why=address")
    assert 1 <= told <= 1 + took // 60, told
    assert took < 240, took


async def test_the_reserve_of_descriptors_serves_health_checks_and_new_addresses() -> None:
    raise_own_descriptor_limit()
    port = free_port()
    # no per-address cap to speak of: only the reserve stands between one address and
    # the worker's last descriptors
    args = ("--max-per-address", "100000", "--countdown", "0.05")
    with worker_process(*args, port=port, descriptors=512) as proc:
        capacity = await metric(port, "connection_capacity")
        assert 100 < capacity < 512
        held, outcomes = await flood(port, 800)
        # the address took all it could, never the reserve, never the last descriptors
        assert capacity <= outcomes[101] <= capacity + 4, outcomes
        dropped = sum(n for what, n in outcomes.items() if not isinstance(what, int))
        assert dropped == 800 - outcomes[101], outcomes
        # the reserve: a health check, and a player from another address
        health = await exchange(port, b"GET /healthz HTTP/1.1\r\n\r\n", "127.0.0.3")
        assert status_of(health) == 200
        ended = await play_a_race(f"ws://127.0.0.1:{port}", "127.0.0.2")
        assert [r.status for r in ended.results] == ["resigned"]
        assert await metric(port, "reserve_refusals_total") == dropped
        for writer in held:
            writer.close()
        proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(proc.wait, 30) == 0
    assert_quiet(proc)
