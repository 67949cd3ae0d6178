"""The fixtures of every test that needs a server: a real Redis, a real Redis Cluster, a
real server on port 0, clients.

``server`` is parametrized over the three stores (memory, redis: one Redis, cluster: a
local Redis Cluster of 3 primaries and 3 replicas, shared by the session); ``store_kind``
gives a test the store's name to start its own with ``start_server`` (other settings).
Every test using them fails on any ERROR log line. ``live_server`` runs a memory-backed
server that serves the browser client's files too, as ``samedeal serve`` does (browser,
terminal and bot tests). :class:`LocalCluster` starts a cluster of one's own (a test that
kills its nodes).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis
import redis.asyncio as aioredis
from helpers import until
from redis.crc import key_slot

from clients.client import RaceClient
from clients.cmd_serve import WEB_DIR
from server.app import Config, RaceServer, running
from server.codes import normalize_code
from server.store import open_store
from server.store.errors import StoreUnavailable
from server.store.memory import memory_store

__all__ = [
    "DAILY_TEST_KEY",
    "WINS",
    "LiveServer",
    "LocalCluster",
    "ServerHandle",
    "as_text",
    "connect_from",
    "fetch",
    "free_port",
    "http_get",
    "live_server",
    "on_day",
    "own_redis",
    "paths_in_room",
    "port_of",
    "redis_cluster",
    "redis_url",
    "server",
    "start_server",
    "store_kind",
    "until_redis_busy",
    "wait_port",
    "worker_process",
]

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"
ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def free_cluster_port() -> int:
    """A port free on 127.0.0.1 for a Redis Cluster node, whose cluster bus port (the port +
    10000) is free too: both below the range the system picks connections' ports from."""
    for _ in range(200):
        port = random.randrange(20000, 22700)
        try:
            for candidate in (port, port + 10000):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", candidate))
        except OSError:
            continue
        return port
    raise RuntimeError("no free port pair for a Redis Cluster node")


def wait_port(port: int, timeout: float = 30.0) -> None:
    """Wait until something accepts connections on ``port``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)  # a poll's interval (sync: helpers.until is async)


def http_get(port: int, path: str) -> tuple[int, str, str]:
    """(status, content type, body) of a GET on the server's port."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
        return r.status, r.headers.get("Content-Type", ""), r.read().decode()


async def fetch(port: int, path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET on the server's port, error statuses
    included, without blocking the event loop."""

    def get() -> tuple[int, str, bytes]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, r.headers.get("Content-Type", ""), r.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.headers.get("Content-Type", ""), exc.read()

    return await asyncio.to_thread(get)


async def get_json(port: int, path: str) -> tuple[int, Any]:
    """(status, decoded body) of a GET of a JSON endpoint on the server's port, error
    statuses included, without blocking the event loop."""

    def fetch() -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    return await asyncio.to_thread(fetch)


@contextlib.contextmanager
def own_redis(workdir: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A throw-away redis-server on a free port (no persistence): its process (a test may
    pause it) and URL; killed (and let go on, if paused) at the end."""
    if not os.path.exists(REDIS_SERVER):
        pytest.skip("redis-server is not installed")
    port = free_port()
    argv = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    proc = subprocess.Popen(
        [*argv, "--appendonly", "no", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port)
        yield proc, f"redis://127.0.0.1:{port}/0"
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGCONT)
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A throw-away redis-server on a free port (no persistence), killed at the end."""
    with own_redis(tmp_path_factory.mktemp("redis")) as (_, url):
        yield url


class LocalCluster:
    """A Redis Cluster on 127.0.0.1: ``primaries`` primaries with one replica each, on free
    ports, in ``workdir`` (each node's config and files in its own directory). A node can
    be killed (SIGKILL) and started again on the same port and directory, where it rejoins
    the cluster (a replica, once another node took its slots over)."""

    def __init__(
        self, workdir: Path, *, primaries: int = 3, node_timeout_ms: int = 2000, **config: str
    ) -> None:
        self.workdir = workdir
        self.ports: list[int] = []
        while len(self.ports) < primaries * 2:
            port = free_cluster_port()
            if port not in self.ports:
                self.ports.append(port)
        self.node_timeout_ms = node_timeout_ms
        self.config = config
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    @property
    def url(self) -> str:
        """The cluster's URL for ``samedeal serve --redis`` (two seed nodes)."""
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports[:2])

    def start_node(self, port: int) -> None:
        """Start (or start again) the node of ``port``."""
        home = self.workdir / str(port)
        home.mkdir(exist_ok=True)
        argv = [REDIS_SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(home)]
        argv += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        argv += ["--cluster-node-timeout", str(self.node_timeout_ms)]
        argv += ["--save", "", "--appendonly", "no", "--logfile", "redis.log"]
        # a replica's first sync at once, not after the default 5 s wait for others
        argv += ["--repl-diskless-sync-delay", "0"]
        for name, value in self.config.items():
            argv += [f"--{name.replace('_', '-')}", value]
        self.procs[port] = subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_port(port)

    def start(self) -> None:
        """Start every node, join them (``redis-cli --cluster create``), wait until every
        node sees every slot served."""
        for port in self.ports:
            self.start_node(port)
        subprocess.run(
            [REDIS_CLI, "--cluster", "create"]
            + [f"127.0.0.1:{p}" for p in self.ports]
            + ["--cluster-replicas", "1", "--cluster-yes"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=60,
        )
        self.wait_healthy()

    def cli(self, port: int, *args: str) -> str:
        """A ``redis-cli`` command on one node; its output."""
        done = subprocess.run(
            [REDIS_CLI, "-p", str(port), *args], capture_output=True, timeout=10, check=False
        )
        return done.stdout.decode()

    def nodes(self, port: int | None = None) -> list[list[str]]:
        """``CLUSTER NODES`` as seen by a live node: one row of fields per node."""
        ask = port or next(p for p, proc in self.procs.items() if proc.poll() is None)
        return [line.split() for line in self.cli(ask, "cluster", "nodes").splitlines() if line]

    def primary_ports(self) -> list[int]:
        """The ports of the nodes serving slots (failed ones left out)."""
        return sorted(
            int(row[1].split("@")[0].rsplit(":", 1)[1])
            for row in self.nodes()
            if "master" in row[2] and "fail" not in row[2] and len(row) > 8
        )

    def port_of_slot(self, slot: int) -> int:
        """The port of the primary serving ``slot``."""
        for row in self.nodes():
            if "master" not in row[2] or "fail" in row[2]:
                continue
            for part in row[8:]:
                low, _, high = part.partition("-")
                if low.isdigit() and int(low) <= slot <= int(high or low):
                    return int(row[1].split("@")[0].rsplit(":", 1)[1])
        raise LookupError(f"no primary serves slot {slot}")

    def wait_healthy(self, timeout: float = 30.0) -> None:
        """Wait until every live node says the cluster is ok and sees 3 live primaries
        that serve every slot, each with a live replica in sync."""
        deadline = time.monotonic() + timeout
        while True:
            live = [p for p, proc in self.procs.items() if proc.poll() is None]
            states = [self.cli(p, "cluster", "info") for p in live]
            if all("cluster_state:ok" in s for s in states) and self._replicated():
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster is not healthy: {states}")
            time.sleep(0.1)  # a poll's interval (sync: helpers.until is async)

    def _replicated(self) -> bool:
        """Every primary's writes reach a replica: a write of ours, then ``WAIT 1`` (a
        replica is taken as ready once it answers, not when it says it is online: for a
        moment after its first sync it does not acknowledge yet)."""
        primaries = self.primary_ports()
        if len(primaries) * 2 != len(self.ports):
            return False
        for port in primaries:
            key = self._key_on(port)
            r = redis.Redis(port=port, socket_timeout=5)
            try:
                r.set(key, "1")
                if int(r.execute_command("WAIT", 1, 200)) < 1:  # type: ignore[no-untyped-call]
                    return False
            except redis.RedisError:
                return False
            finally:
                r.close()
        return True

    def _key_on(self, port: int) -> str:
        """A key of a slot the primary on ``port`` serves."""
        for n in range(100_000):
            key = f"ready:{{{n}}}"
            with contextlib.suppress(LookupError):
                if self.port_of_slot(key_slot(key.encode())) == port:
                    return key
        raise LookupError(f"no slot on {port}")

    def serving(self, slot: int) -> int | None:
        """The port of the primary serving ``slot``; None while none does (a failover)."""
        try:
            return self.port_of_slot(slot)
        except LookupError:
            return None

    async def fail_over(self, slot: int, within: float = 30.0) -> int:
        """SIGKILL the primary serving ``slot``, wait for a replica to take the slot over,
        then start the killed node again (it comes back as the new primary's replica);
        the killed node's port."""
        victim = self.port_of_slot(slot)
        self.kill(victim)
        await until(lambda: self.serving(slot) not in (victim, None), within, every=0.2)
        self.start_node(victim)
        return victim

    def kill(self, port: int) -> None:
        """SIGKILL the node of ``port``."""
        proc = self.procs[port]
        proc.kill()
        proc.wait()

    def stop(self) -> None:
        """Kill every node."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="session")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A throw-away Redis Cluster (3 primaries, 3 replicas) for the session."""
    if not (os.path.exists(REDIS_SERVER) and os.path.exists(REDIS_CLI)):
        pytest.skip("redis-server or redis-cli is not installed")
    cluster = LocalCluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@contextlib.contextmanager
def breakable_cluster(path: Path) -> Iterator[LocalCluster]:
    """A cluster a test may break (a slot migrated, a primary killed), set up as
    docs/operations.md advises: a primary without a replica refuses writes (NOREPLICAS);
    a short node timeout, so a failover takes a few seconds."""
    cluster = LocalCluster(
        path, node_timeout_ms=1000, min_replicas_to_write="1", min_replicas_max_lag="10"
    )
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def as_text(value: bytes | str) -> str:
    """A Redis reply as text (redis-py's types allow either)."""
    return value.decode() if isinstance(value, bytes) else value


def port_of(app: RaceServer) -> int:
    """The port a running server listens on."""
    assert app.port is not None
    return app.port


async def until_redis_busy(probe: aioredis.Redis) -> None:
    """Wait until Redis leaves ``probe``'s PING unanswered for 0.1 s: a script sent on
    another connection runs (Redis runs one command at a time). ``probe`` is connected
    beforehand (connecting takes time of its own) and is of no use after."""

    async def busy() -> bool:
        try:
            await asyncio.wait_for(probe.ping(), 0.1)
        except TimeoutError:
            return True
        return False

    await until(busy, every=0.01)


async def store_retry(call: Any, *args: Any, timeout: float = 40.0) -> Any:
    """A store call tried again while the cluster cannot answer it (a failover)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return await call(*args)
        except StoreUnavailable:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)  # the next try's back-off: the cluster is failing over


class _ErrorRecords(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.contextmanager
def _failing_on_errors(logger: str = "") -> Iterator[_ErrorRecords]:
    catcher = _ErrorRecords()
    root = logging.getLogger(logger)
    root.addHandler(catcher)
    try:
        yield catcher
    finally:
        root.removeHandler(catcher)
    lines = [f"{r.name}: {r.getMessage()}" for r in catcher.records]
    assert not lines, "ERROR log lines: " + "; ".join(lines)


@pytest.fixture
def no_error_logs() -> Iterator[_ErrorRecords]:
    """Fail the test if anything logs at ERROR or above (records cleared by the test are
    forgiven)."""
    with _failing_on_errors() as catcher:
        yield catcher


@dataclass
class ServerHandle:
    """A running server: its app, store kind and URL."""

    app: RaceServer
    kind: str

    @property
    def port(self) -> int:
        assert self.app.port is not None
        return self.app.port

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    async def client(self) -> RaceClient:
        """A connected client (closed at teardown)."""
        client = await RaceClient.connect(self.url)
        self._clients.append(client)
        return client

    def __post_init__(self) -> None:
        self._clients: list[RaceClient] = []

    async def deal(self, room: str) -> str:
        """The room's deal code as the server knows it (players are not told it while
        racing: fair play)."""
        code = normalize_code(room)
        snap = await self.app.store.rooms.snapshot(code) if code else None
        assert snap is not None, f"no room {room}"
        return snap.room.deal

    async def close_clients(self) -> None:
        for c in self._clients:
            with contextlib.suppress(Exception):
                await c.close()


TEST_CONFIG: dict[str, Any] = {
    "port": 0,
    "countdown": 0.05,
    "grace": 0.4,
    "rate": 1000.0,
    "burst": 500,
    # with on_day, a day's deal of the day (and its proof's cost) is the same every run
    "daily_key": bytes(range(32)),
}

StartServer = Callable[..., Awaitable[ServerHandle]]


@pytest_asyncio.fixture
async def start_server(
    request: pytest.FixtureRequest, no_error_logs: _ErrorRecords
) -> AsyncIterator[StartServer]:
    """Start servers: ``await start_server("redis", rate=5.0, event_cap=10)`` — Config fields
    and store options (``event_cap``, ``active_ttl``, ``finished_ttl``) as keywords; kinds
    ``memory``, ``redis`` (one Redis) and ``cluster`` (the session's Redis Cluster)."""
    stack = contextlib.AsyncExitStack()
    handles: list[ServerHandle] = []

    async def start(kind: str = "memory", **options: Any) -> ServerHandle:
        store_options = {
            k: options.pop(k) for k in ("event_cap", "active_ttl", "finished_ttl") if k in options
        }
        url: str | None = None
        if kind == "redis":
            url = request.getfixturevalue("redis_url")
        elif kind == "cluster":
            cluster: LocalCluster = request.getfixturevalue("redis_cluster")
            url = cluster.url
        store = open_store(url, worker_id=f"test-{len(handles)}", **store_options)
        config = Config(**{**TEST_CONFIG, **options})
        app, _ = await stack.enter_async_context(running(store, config))
        handle = ServerHandle(app, kind)
        handles.append(handle)
        return handle

    async with stack:
        yield start
        for h in handles:
            await h.close_clients()


DAILY_TEST_KEY = bytes(range(32))
"""The fair-deals test key (00 01 … 1f): with :func:`on_day`, a day's deal and its proof's
cost are the same every run."""


@pytest.fixture
def on_day() -> Iterator[Callable[..., None]]:
    """``on_day("2026-03-03")`` moves the server clock of this process to that day (12:00
    UTC, or ``at="23:59:58"``); it goes on at the real pace, and is put back at the end."""
    import datetime as dt

    from server.config import set_clock_offset

    def move(day: str, at: str = "12:00:00") -> None:
        when = dt.datetime.fromisoformat(f"{day}T{at}+00:00").timestamp()
        set_clock_offset(when - time.time())

    try:
        yield move
    finally:
        set_clock_offset(0)


@pytest.fixture(params=["memory", "redis", "cluster"])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Each store's name in turn (memory, redis, cluster), for ``start_server``."""
    kind: str = request.param
    return kind


@pytest_asyncio.fixture
async def server(store_kind: str, start_server: StartServer) -> ServerHandle:
    """A server with default test settings, once per store."""
    return await start_server(store_kind)


def paths_in_room(app: RaceServer, room: str) -> list[str]:
    """The request paths (with their query: the room hint) of ``app``'s connections in
    ``room``, as the server saw them, sorted."""
    code = normalize_code(room)
    return sorted(
        conn.websocket.request.path
        for conn in app.ctx.rooms.conns.values()
        if conn.room_code == code and conn.websocket.request is not None
    )


@dataclass(slots=True)
class LiveServer:
    """A running server that serves the browser client: ``url`` for websockets, ``http``
    for the browser."""

    app: RaceServer
    port: int

    @property
    def url(self) -> str:
        """The websocket URL."""
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http(self) -> str:
        """The page's URL."""
        return f"http://127.0.0.1:{self.port}"


@contextlib.asynccontextmanager
async def live_server(**config: Any) -> AsyncIterator[LiveServer]:
    """Run a memory-backed server (which serves the web client too) on a free port of
    127.0.0.1; fail if the server or a client logged an ERROR meanwhile."""
    config.setdefault("daily_key", DAILY_TEST_KEY)
    cfg = Config(host="127.0.0.1", port=0, static_dir=WEB_DIR, **config)
    with _failing_on_errors("samedeal"):
        async with running(memory_store(), cfg) as (app, _):
            assert app.port is not None
            yield LiveServer(app, app.port)


def _no_litter(args: tuple[str, ...] | list[str]) -> list[str]:
    """``serve`` arguments that keep no records unless the test gives a place for them (a
    test must not leave ./samedeal-data behind)."""
    if any(a in ("--data", "--database", "--no-records") for a in args):
        return list(args)
    return [*args, "--no-records"]


@contextlib.contextmanager
def worker_process(
    *args: str,
    port: int,
    env: dict[str, str] | None = None,
    descriptors: int | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """``samedeal serve ARGS --port PORT`` as a subprocess; killed at exit. Its stderr is
    checked for ERROR lines by the caller (``proc.stderr``). ``descriptors``: the process
    may open no more files than that (its ``RLIMIT_NOFILE``, soft and hard)."""

    def limit() -> None:
        import resource

        assert descriptors is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (descriptors, descriptors))

    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", "serve", "--port", str(port), *_no_litter(args)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        preexec_fn=limit if descriptors is not None else None,
    )
    try:
        wait_port(port)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


async def connect_from(url: str, source: str) -> RaceClient:
    """A client connected from the local address ``source`` (another loopback address:
    ``127.0.0.2`` … — another client as far as per-address limits go), after ``hello``."""
    from websockets.asyncio.client import connect

    from protocol import PROTOCOL_VERSION, Welcome, decode_server

    ws = await connect(url, max_size=None, open_timeout=10, local_addr=(source, 0))
    await ws.send(json.dumps({"type": "hello", "v": PROTOCOL_VERSION}))
    welcome = decode_server(await asyncio.wait_for(ws.recv(), 10))
    assert isinstance(welcome, Welcome), welcome
    return RaceClient(ws, welcome, url)


WINS: dict[str, tuple[str, str]] = {
    "klondike": (
        "KL1-1-AAAAAAK",
        "t5-t3 s s s w-t1 s w-t2 t3:2-t2 s s s s w-t3 s w-t2 s s s s s s s s s w-f1 t7-f1 s s "
        "s w-t5 s s w-t6 t4-t6 t5:2-t4 t5-t6 s s s s s w-t2 t4:3-t2 t4-f2 t7-f2 s s s s s s s "
        "s w-t2 s w-t6 s w-t2 s s s w-f2 t3-f2 s s s w-t6 s s s s s s w-t6 s w-t3 s w-t6 "
        "t3:2-t6 t7-t3 t7-t5 t7-f3 t4-f3 t7-f1 t6:10-t4 t6-t3 s s s s s s w-t5 s s w-t3 s s "
        "w-t5 s w-t3 s w-t5 t6-t5 t6-f4 t1-f4 t1-f3 t2-f4 t2-f1 t2-f2 t4-f4 t4-f1 t4-f2 t5-f3 "
        "t5-f4 t5-f1 t3-f1 t5-f2 t3-f2 t7-f4 t2:8-t1 t2-f3 t1-f3 t1-f4 t1-f1 t1-f2 t4-f3 "
        "t4-f4 t4-f1 t1-f1 t4-f2 t4-f1 w-f1 w-f2 t4-f2 t4-f1 t5-f3 t3-f3 t5-f4 t3-f4 t1-f4 "
        "t6-f4 w-f4 a",
    ),
    "klondike-3": (
        "KL1-3-AAAAAAD",
        "t2-t6 t5-t4 t5-f1 t7-f1 t4:2-t7 t4-f2 t4-t2 t6:2-t4 s w-f3 s w-t6 s w-f4 s w-t5 w-f2 "
        "t3-t5 s s s w-t1 w-f3 w-f2 s s s s s w-f4 t6-f4 t5-f4 t6-f2 t3-t5 t7:3-t3 t7-f3 "
        "t5-f3 t5-f2 t1-f2 t7-t1 t7-f1 w-f1 t7-f4 t5-f4 s s s w-f2 s s s s w-t3 s s w-t3 s s "
        "s w-t3 s s s s w-t3 w-f3 t3-f3 t2-f3 t2-f2 t5-t2 t5-f1 t1-f1 t1-f4 t3-f1 w-f1 t3-f4 "
        "t3-f2 t4-f4 t4-f2 t7-f2 s w-f4 w-f1 w-f3 t6-f3 t3-f3 t4-f3 t6-t2 t6-f1 t3-f1 t2-f1 "
        "t3-f3 t2-f3 s w-f2 w-f1 w-f4 t3-f2 t6-f4 s w-f4",
    ),
    "easy-harp": (
        "EH1-N-AAAAAAH",
        "t9-f4 t2-t5 t2-t9 t3-t9 t3-t2 t6-t1 t3-t6 t2-t3 s t3-t2 w-t3 s w-t2 s s s w-f4 s s "
        "w-t7 s s w-t1 s s w-t1 t4-t1 s w-t1 s s w-t2 s w-t6 t4-t6 t8-t4 t8-f1 t8-t7 w-t8 s "
        "w-t5 s s s s s w-t3 s s s w-f1 t6-f1 s w-t9 s s w-t4 s w-t3 s s s w-t3 s s s s s "
        "w-f8 t9-f8 s s s s s w-t3 s s w-t9 s s s w-f2 t9-f2 t7-f2 t6-f2 s w-t4 s s s w-f4 s "
        "w-f5 s w-t2 s s s w-f3 t5-f3 s w-t9 s w-f7 s w-t1 s s s s w-f3 t7-f3 t4-f3 t7-f2 "
        "t4-f2 s s s s w-f1 t6-f1 t8-f1 t4-f1 s w-t2 t4-t2 s s s s s s s s w-f3 s s w-t7 s "
        "w-f2 s w-t3 t8-t3 s s s w-t7 s s w-t3 t4-t3 t7:3-t4 t7-f5 t7-t2 t7-f6 t9-f6 t5-f6 "
        "t9-f5 t5-f5 t5-f4 t1-f4 t6-f4 t6-f8 t9-f6 t9-f5 t1-f5 t2-f5 t5-t4 t6-t4 t5-t4 t6-t8 "
        "t7-t3 s s s w-t8 s w-t6 s s w-t8 s s w-f4 t2-f4 s s s w-f2 s s s s w-t2 s w-t6 t9-t6 "
        "t9-f6 t9-f2 t6-f2 t9-f8 t9-f3 t4-f3 t9-f3 t8-f3 t6-f3 t9-f7 t7-f7 t3-f7 t3-f8 t5-f7 "
        "t3-f7 t8:3-t5 t8-f1 s s w-f8 t3-f8 t2-f8 t2-f1 w-t2 t8-t2 t8-f7 t3-f7 t3-f4 t3-f1 s "
        "w-t6 s w-t7 t7-t8 t8-t9 w-t9 w-t7 t7-t8 w-t8 w-f4 t3-f4 t3-f3 t9-f4 t3-f4 t9-t3 "
        "t3-t7 w-t3 t3-t9 t7-t3 t9-t7 t3-t9 t7-t3 s w-f6 t1-f6 t1-f5 t1-f8 t2-f6 t2-f7 t2-f8 "
        "t2-f1 t4-f6 t4-f7 t4-f2 t4-f1 t5-f8 t2-f8 t2-f3 t6-f7 t6-f2 t3-f2 t9-f1 t4-t2 t2-t3 "
        "t3-t7 t6-t2 t2-t3 t3-t4 t4-t9 t7-t2 t2-t3 t3-t4 t4-t6 t9-t2 t2-t3 t3-t4 t4-t7 t6-t2 "
        "t2-t3 t3-t4 t4-t9 t7-t2 t2-t3 t3-t4 t4-t6 s w-f5 t1-f5 t1-t5 t6-t1 t1-t2 t2-t3 t3-t4 "
        "t4-t7 t9-t1 t1-t2 t2-t3 t3-t4 t4-t6 t7-t1 t1-t2 t2-t3 t3-t4 t4-t9 t6-t1 t1-t2 t2-t3 "
        "t3-t4 t4-t7 t9-t1 t1-t2 t2-t3 t3-t4 t4-t6 t7-t1 t1-t2 t2-t3 t3-t4 t6-t1 t1-t2 t2-t3 "
        "t4-t1 t1-t2 t3-t1 t1-t4 t2-t1 t1-t3 t4-t1 t1-t2 t3-t1 s w-f5 t1-t3 t2-t1 t1-t4 t3-t1 "
        "t1-t2 t2-t6 t4-t1 t1-t2 t2-t3 t3-t7 t6-t1 t1-t2 t2-t3 t3-t4 t4-t9 t7-t1 t1-t2 t2-t3 "
        "t3-t4 t4-t6 t9-t1 t1-t2 t2-t3 t3-t4 t4-t7 t6-t1 t1-t2 t2-t3 t3-t4 t4-t9 t7-t1 t1-t2 "
        "t2-t3 t3-t4 t4-t6 s w-f7 t9-f7 t6-t1 t1-t2 t2-t3 t3-t4 t4-t7 t7-t9 s w-f6 t5-f6 "
        "t5-f5 t5-f8 t8-f6 t8-f5 t9-f6",
    ),
}
