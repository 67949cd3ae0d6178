"""``--durability memory|aof|replica`` (issue 20): what Redis must confirm before a write is
acknowledged, checked against real redis-servers — a primary with a replica that can be
paused (SIGSTOP), and one without.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis
from helpers import until_race_starts
from server_fixtures import REDIS_SERVER, free_port, wait_port
from websockets.exceptions import ConnectionClosed

from clients.client import RaceClient, RequestError
from protocol import Ack
from server.app import Config, RaceServer, running
from server.codes import normalize_code
from server.store.errors import StoreUnsuitable
from server.store.redis import redis_store
from server.store.redis.durability import barrier
from server.store.redis.link import RedisLink

CONFIG: dict[str, Any] = {"port": 0, "countdown": 0.05, "grace": 5.0, "rate": 1000.0, "burst": 500}


def _redis(workdir: Path, port: int, *args: str) -> subprocess.Popen[bytes]:
    workdir.mkdir(parents=True, exist_ok=True)
    argv = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    argv += ["--dir", str(workdir), *args]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    return proc


@dataclass
class Pair:
    """A primary and its replica."""

    primary: subprocess.Popen[bytes]
    replica: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Pair]:
    port, replica_port = free_port(), free_port()
    primary = _redis(tmp_path / "primary", port, "--repl-diskless-sync-delay", "0")
    replica = _redis(tmp_path / "replica", replica_port, "--replicaof", "127.0.0.1", str(port))
    procs = [primary, replica]
    try:
        r = redis.Redis(port=port)
        for _ in range(100):  # until the replica acknowledges writes (not just "online")
            r.set("ready", "1")
            if int(r.execute_command("WAIT", 1, 100)) >= 1:  # type: ignore[no-untyped-call]
                break
        r.close()
        yield Pair(primary, replica, port)
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()


@pytest.fixture
def lone(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    proc = _redis(tmp_path / "lone", port)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.kill()
        proc.wait()


async def _refused(url: str, durability: str) -> str:
    store = redis_store(url, worker_id="d", durability=durability)
    try:
        with pytest.raises(StoreUnsuitable) as info:
            await store.start(lambda code, data: None)
    finally:
        await store.close()
    return str(info.value)


async def test_aof_needs_appendfsync_always(lone: str, tmp_path: Path) -> None:
    assert "appendfsync always" in await _refused(lone, "aof")
    port = free_port()
    proc = _redis(tmp_path / "aof", port, "--appendonly", "yes", "--appendfsync", "always")
    store = redis_store(f"redis://127.0.0.1:{port}/0", worker_id="d", durability="aof")
    try:
        await store.start(lambda code, data: None)
        assert isinstance(store.link, RedisLink) and store.link.durability == "aof"
    finally:
        await store.close()
        proc.kill()
        proc.wait()


async def test_replica_durability_needs_a_replica(lone: str) -> None:
    assert "no replica" in await _refused(lone, "replica")


def test_the_barrier_of_each_level() -> None:
    assert barrier("memory", (7, 0, 15), 1.0).command is None
    assert barrier("aof", (7, 0, 15), 1.0).command is None  # appendfsync always suffices
    waitaof = barrier("aof", (7, 2, 0), 0.25)
    assert waitaof.command == b"*4\r\n$7\r\nWAITAOF\r\n$1\r\n1\r\n$1\r\n0\r\n$3\r\n250\r\n"
    assert waitaof.settled is not None
    assert waitaof.settled([1, 0]) and not waitaof.settled([0, 0])
    wait = barrier("replica", (7, 0, 15), 1.0)
    assert wait.command == b"*3\r\n$4\r\nWAIT\r\n$1\r\n1\r\n$4\r\n1000\r\n"
    assert wait.settled is not None
    assert wait.settled(1) and not wait.settled(0)


@pytest_asyncio.fixture
async def app(pair: Pair, no_error_logs: Any) -> AsyncIterator[RaceServer]:
    store = redis_store(pair.url, worker_id="d", durability="replica", durability_timeout=0.3)
    async with running(store, Config(**CONFIG)) as (app, _):
        yield app


async def test_a_move_no_replica_confirmed_is_never_acknowledged(
    app: RaceServer, pair: Pair
) -> None:
    url = f"ws://127.0.0.1:{app.port}"
    ann = await RaceClient.connect(url)
    joined = await ann.create("klondike", deal="code", code="KL1-1-AAAAAAK")
    await ann.start()
    await until_race_starts(ann)
    for _ in range(3):
        assert isinstance(await ann.move("s"), Ack)
    pair.replica.send_signal(signal.SIGSTOP)  # the replica stops acknowledging
    reply: Any = None
    with contextlib.suppress(RequestError, ConnectionClosed):
        reply = await ann.move("s")
    assert not isinstance(reply, Ack)
    await asyncio.wait_for(ann.websocket.wait_closed(), 5)
    assert ann.websocket.close_code == 1011  # the outcome is unknown: resume to see the board
    # a room change is not acknowledged either
    other = await RaceClient.connect(url)
    with pytest.raises(RequestError) as refused:
        await other.join(joined.room, role="spectator")
    assert refused.value.code == "storage"
    pair.replica.send_signal(signal.SIGCONT)
    back = await ann.reconnect(url)
    code = normalize_code(joined.room) or ""
    log = await app.store.rooms.moves(code, 1, 1)
    assert log[:3] == ["s", "s", "s"] and len(log) in (3, 4)  # the 4th ran on the primary
    assert isinstance(await back.move("s"), Ack)
    assert len(await app.store.rooms.moves(code, 1, 1)) == len(log) + 1
    await back.close()
    await other.close()
