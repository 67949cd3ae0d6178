"""Bad input never crashes a worker or changes state; abuse closes the connection (1008)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

import orjson
import pytest
from helpers import until
from server_fixtures import (
    ROOT,
    ServerHandle,
    free_port,
    http_get,
    wait_port,
)
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from clients.client import RaceClient, RequestError
from protocol import PROTOCOL_VERSION, decode_server


async def raw(server: ServerHandle, hello: bool = True) -> ClientConnection:
    ws = await connect(server.url, max_size=None)
    if hello:
        await ws.send(orjson.dumps({"type": "hello", "v": PROTOCOL_VERSION}).decode())
        assert orjson.loads(await ws.recv())["type"] == "welcome"
    return ws


async def reply(ws: ClientConnection, frame: str | bytes) -> dict[str, object]:
    await ws.send(frame)
    message = orjson.loads(await asyncio.wait_for(ws.recv(), 5))
    decode_server(orjson.dumps(message))  # every reply is a valid server message
    assert isinstance(message, dict)
    return message


@pytest.mark.parametrize(
    ("frame", "code", "words"),
    [
        ("{nope", "malformed_json", "JSON"),
        (b"\xff\xfe{", "invalid_message", "text frames"),
        (b'{"type": "ping", "id": 3}', "invalid_message", "text frames"),
        ("[1, 2]", "invalid_message", "object"),
        ('{"type": "teleport"}', "unknown_type", "type"),
        ('{"v": 1}', "unknown_type", "type"),
        ('{"type": "move", "move": 5}', "invalid_message", "move"),
        ('{"type": "move", "move": "s", "id": "x"}', "invalid_message", "id"),
        ('{"type": "join", "room": "AAAA-AA", "bogus": 1}', "invalid_message", "bogus"),
        ('{"type": "create", "game": "chess"}', "invalid_message", "game"),
        ('{"type": "create", "game": "klondike", "max_players": 1000}', "invalid_message", "max"),
        ('{"type": "join", "room": "ZZZZ-ZZ"}', "unknown_room", "ZZZZ-ZZ"),
        ('{"type": "join", "room": "not a code"}', "unknown_room", "not a code"),
        ('{"type": "hello", "v": 1}', "hello_again", "first"),
        ('{"type": "start"}', "not_in_room", "join"),
        ('{"type": "follow", "seat": 1}', "not_in_room", "join"),
        ('{"type": "resume", "room": "ZZZZ-ZZ", "token": "x"}', "unknown_room", "ZZZZ-ZZ"),
    ],
)
async def test_bad_frames_get_a_named_error(
    server: ServerHandle, frame: str | bytes, code: str, words: str
) -> None:
    ws = await raw(server)
    message = await reply(ws, frame)
    assert message["type"] == "error" and message["code"] == code
    assert words.lower() in str(message["message"]).lower()
    # the connection is still usable
    pong = await reply(ws, '{"type": "ping", "id": 7}')
    assert pong["type"] == "pong" and pong["id"] == 7
    await ws.close()


@pytest.mark.parametrize(
    "frame",
    [
        '{"type": "move", "move": 5, "id": 41}',
        '{"type": "teleport", "id": 41}',
        '{"type": "create", "game": "chess", "id": 41}',
        b'{"type": "ping", "id": 41}',
    ],
)
async def test_the_reply_to_a_refused_frame_carries_its_id(
    server: ServerHandle, frame: str | bytes
) -> None:
    ws = await raw(server)
    message = await reply(ws, frame)
    assert message["type"] == "error" and message["id"] == 41
    await ws.close()


@pytest.mark.parametrize("rid", [2**53 + 1, 2**63 + 5, 2**64 + 1, 10**60, -1])
async def test_the_reply_to_a_refused_frame_says_why_it_carries_no_id(
    server: ServerHandle, rid: int
) -> None:
    ws = await raw(server)
    message = await reply(ws, f'{{"type": "teleport", "id": {rid}}}')
    assert message["type"] == "error" and message["code"] == "unknown_type"
    text = str(message["message"])
    assert message["id"] is None and "is not an integer from 0 to 2^53" in text
    assert str(rid)[:30] in text
    await ws.close()


async def test_hello_may_carry_an_id(server: ServerHandle) -> None:
    ws = await raw(server, hello=False)
    await ws.send(orjson.dumps({"type": "hello", "v": PROTOCOL_VERSION, "id": 5}).decode())
    welcome = orjson.loads(await ws.recv())
    assert welcome["type"] == "welcome" and welcome["id"] == 5
    await ws.close()


async def test_bad_input_changes_no_state(server: ServerHandle) -> None:
    host = await server.client()
    joined = await host.create("klondike", name="Ann")
    assert joined.snapshot is not None
    seq = joined.snapshot.seq
    ws = await raw(server)
    for frame in (
        "{",
        '{"type":"move","move":"s"}',
        '{"type":"start"}',
        '{"type":"resign"}',
        f'{{"type":"resume","room":"{joined.room}","token":"forged-token"}}',
    ):
        message = await reply(ws, frame)
        assert message["type"] in ("error", "rejected")
    message = await reply(ws, f'{{"type":"resume","room":"{joined.room}","token":"forged"}}')
    assert message["code"] == "bad_token"
    watcher = await server.client()
    again = await watcher.join(joined.room, role="spectator")
    # the one event since: the spectator's own arrival (the spectator count)
    assert again.snapshot is not None and again.snapshot.seq == seq + 1
    assert again.snapshot.spectators == 1
    assert [s.name for s in again.snapshot.seats] == ["Ann"]


async def test_unknown_version_is_refused(server: ServerHandle) -> None:
    with pytest.raises(RequestError) as info:
        await RaceClient.connect(server.url, version=99)
    message = info.value.message
    assert info.value.code == "unsupported_version" and f"version {PROTOCOL_VERSION}" in message
    ws = await raw(server, hello=False)
    await ws.send('{"type":"hello","v":1}')  # the version before acks carried changes only
    assert orjson.loads(await ws.recv())["code"] == "unsupported_version"
    with pytest.raises(ConnectionClosed):
        await ws.recv()
    assert ws.close_code == 1002


async def test_first_message_must_be_hello(server: ServerHandle) -> None:
    ws = await raw(server, hello=False)
    await ws.send('{"type":"ping"}')
    assert orjson.loads(await ws.recv())["code"] == "hello_first"
    with pytest.raises(ConnectionClosed):
        await ws.recv()


async def test_oversized_frame_closes_1009(server: ServerHandle) -> None:
    ws = await raw(server)
    await ws.send('{"type":"ping","pad":"' + "x" * 20_000 + '"}')
    with pytest.raises(ConnectionClosed):
        await ws.recv()
    assert ws.close_code == 1009
    # the worker is fine
    client = await server.client()
    assert (await client.create("klondike")).seat == 1


async def test_silent_connection_is_closed(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server("memory", hello_timeout=0.2)
    ws = await raw(server, hello=False)
    with pytest.raises(ConnectionClosed):
        await asyncio.wait_for(ws.recv(), 3)
    assert ws.close_code == 1008


async def test_flood_is_rate_limited_then_closed(start_server) -> None:  # type: ignore[no-untyped-def]
    server = await start_server("memory", rate=5.0, burst=5, max_strikes=10)
    ws = await raw(server)
    for _ in range(5):
        await ws.send('{"type":"ping"}')
    errors = []
    for _ in range(30):
        try:
            await ws.send('{"type":"ping","id":1}')
        except ConnectionClosed:
            break
    with pytest.raises(ConnectionClosed):
        while True:
            message = orjson.loads(await asyncio.wait_for(ws.recv(), 5))
            if message["type"] == "error":
                errors.append(message)
    assert errors and errors[0]["code"] == "rate_limited" and errors[0]["id"] == 1
    assert ws.close_code == 1008


async def test_persistent_garbage_is_closed(server: ServerHandle) -> None:
    ws = await raw(server)
    with pytest.raises(ConnectionClosed):
        for _ in range(100):
            await ws.send("garbage")
            await asyncio.wait_for(ws.recv(), 5)
    assert ws.close_code == 1008
    client = await server.client()
    assert (await client.create("klondike")).seat == 1


async def test_forged_token_gets_nothing(server: ServerHandle) -> None:
    host = await server.client()
    joined = await host.create("klondike")
    thief = await server.client()
    with pytest.raises(RequestError) as info:
        await thief.resume(joined.room, (joined.token or "")[:-2] + "AA")
    assert info.value.code == "bad_token"
    with pytest.raises(RequestError) as info:
        await thief.start()
    assert info.value.code == "not_in_room"


async def test_healthz_and_metrics(server: ServerHandle) -> None:
    client = await server.client()
    await client.create("klondike")
    status, _, body = await asyncio.to_thread(http_get, server.port, "/healthz")
    assert status == 200 and body == "ok\n"
    status, ctype, body = await asyncio.to_thread(http_get, server.port, "/metrics")
    assert status == 200 and ctype.startswith("text/plain")
    for name in (
        "samedeal_connections",
        "samedeal_rooms",
        "samedeal_moves_accepted_total",
        "samedeal_moves_rejected_total",
        "samedeal_store_rtt_seconds",
    ):
        assert f"# TYPE {name} " in body
    assert 'samedeal_connections{worker="test-0"} 1' in body
    assert 'samedeal_rooms{worker="test-0"} 1' in body


@pytest.mark.slow
def test_sigterm_drains(tmp_path: object) -> None:
    """``samedeal serve`` closes connections with 1001 on SIGTERM and exits 0."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "--no-records", "--port", str(port)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    try:
        wait_port(port)

        async def scenario() -> int | None:
            client = await RaceClient.connect(f"ws://127.0.0.1:{port}")
            await client.create("klondike")
            os.kill(proc.pid, signal.SIGTERM)
            await until(lambda: client.closed, timeout=10)
            return client.websocket.close_code

        assert asyncio.run(scenario()) == 1001
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.stderr is not None
    log = proc.stderr.read().decode()
    assert " ERROR " not in log, log
    assert "room created room=" in log and "draining" in log


@pytest.mark.slow
def test_workers_without_redis_is_an_error() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clients.cli", "serve", "--workers", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert "--redis" in result.stderr


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--redis", "foo://127.0.0.1:6379"], "not a Redis URL"),
        (["--redis", "redis://127.0.0.1:notaport"], "not a Redis URL"),
        (["--port", "99999"], "out of range"),
        (["--port", "x"], "not a number"),
        (["--grace", "-1"], "out of range"),
        (["--liveness", "0"], "out of range"),
        (["--rate", "nan"], "out of range"),
        (["--workers", "0"], "out of range"),
    ],
)
def test_a_bad_serve_value_is_one_line_and_exit_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from clients.cli import main

    with pytest.raises(SystemExit) as info:
        main(["serve", *args])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err, err


@pytest.mark.slow
def test_a_bad_serve_value_prints_one_line_without_a_traceback() -> None:
    for args in (["--redis", "foo://x"], ["--port", "99999"]):
        result = subprocess.run(
            [sys.executable, "-m", "clients.cli", "serve", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 2
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
        assert "Traceback" not in result.stderr


@pytest.mark.slow
def test_an_unreachable_redis_at_start_is_one_line_and_exit_1() -> None:
    port = free_port()  # nothing listens there
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "clients.cli",
            "serve",
            "--no-records",
            "--port",
            "0",
            "--redis",
            f"redis://127.0.0.1:{port}/0",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    lines = [line for line in result.stderr.splitlines() if "samedeal serve:" in line]
    assert lines and "Redis cannot be reached" in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.integration  # a subprocess
@pytest.mark.parametrize("workers", [[], ["--workers", "2", "--redis", "redis://127.0.0.1:1/0"]])
def test_an_unreachable_records_database_at_start_is_one_line_and_exit_1(
    workers: list[str],
) -> None:
    """Not "cannot listen on 127.0.0.1:PORT" (the name's lookup failing is an OSError too),
    and with --workers no traceback from the migration the supervisor runs first."""
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(free_port())]
    result = subprocess.run(
        [*argv, "--database", "postgresql://bad", "--no-daily-warm", *workers],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    lines = [line for line in result.stderr.splitlines() if "samedeal serve:" in line]
    assert "cannot reach the records database postgresql+asyncpg://bad" in lines[-1]
    assert "cannot listen" not in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow
def test_json_logs_carry_room_and_player_ids() -> None:
    import logging

    from clients.cmd_serve import JsonFormatter

    record = logging.LogRecord(
        "samedeal.server", logging.INFO, __file__, 1, "player joined room=%s seat=%s conn=%s",
        ("K7QF2M", 2, "w1/abc"), None,
    )  # fmt: skip
    entry = orjson.loads(JsonFormatter().format(record))
    assert entry["room"] == "K7QF2M" and entry["seat"] == "2" and entry["conn"] == "w1/abc"
    assert entry["level"] == "INFO" and entry["message"].startswith("player joined")
