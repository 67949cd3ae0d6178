"""Race server benchmark: R rooms × P players of bot-like clients on loopback.

Two loads, as in issue #3:

* paced: every player plays one move a second (a fast human), 1,000 players by default
  (250 rooms × 4);
* flat out: every player sends its next move as soon as the last one is answered, 100
  connections by default (25 rooms × 4).

Each load runs against ``samedeal serve`` with the memory store (one worker), with Redis
(one worker) and with Redis and two workers, and against a bare websockets echo server
(same event loop as the server: uvloop when installed) with as many connections, each
sending one message at the same pace, before and after each race server: the same-run
baseline. Printed per run: answered moves per second, move round trip (send → ``ack``)
p50 / p99, and the CPU used by the server processes, Redis and the load generator (in
cores: 1.00 = one core busy). The headline figure: the server's CPU per move divided by the
echo server's CPU per message (the mean of the echo runs before and after), per load —
fairer than moves per second, since the load generator shares the cores.

The clients are raw websockets connections (no message models), many per process, spread
over ``--client-procs`` processes running uvloop. Every phase is bounded in moves and time;
everything listens on 127.0.0.1 only. A redis-server on a free port is started unless
``--redis URL`` is given.

    python bench/race.py            # full run, about 3 minutes
    python bench/race.py --quick    # short run, about 1 minute
    python bench/race.py --loads flat --repeat 3    # flat out three rounds: the medians
    python bench/race.py --configs memory,records --repeat 5    # the records' cost
    python bench/race.py --loads paced --configs memory,proving --repeat 3   # proving's cost

``records`` is the memory server with the records store on (SQLite in a temporary
directory). ``proving`` is the memory server with its pool of proven deals filling the whole
run (``--pools-warm --proven-deals 1000``: the solver process, niced, busy proving every
game's deals); its server CPU is the worker's alone, the solver process's apart.

More servers (``--configs``): ``redisN`` is N workers on one Redis, ``clusterS`` and
``clusterSxN`` a Redis Cluster of S primaries (``--cluster-replicas`` replicas each, 0 by
default) with 1 or N workers, started on free ports for the run (the slots split evenly).
``redisNa`` is N workers on one Redis as
``redisN``, but each on its own port with the load generator routing every connection of a
room to the worker chosen by a hash of the room's code (what ``deploy/nginx.conf``'s
``hash $arg_room consistent`` does for clients that connect with ``?room=CODE``): a room's
creator connects to the next worker in turn (as ``least_conn`` spreads connections without
a room), creates the room, then moves to its room's worker and resumes its seat there (as
the clients do), so all of a room's players are on one worker. ``redisN`` leaves the spread
to the kernel (``SO_REUSEPORT``): a room's players land on up to 4 different workers.
A Redis config ending in ``-aof`` or ``-replica`` gets Redis of its own set up for that
durability (append-only file synced on every write; a replica per primary), and its
workers run with ``--durability aof`` or ``replica``.
For them a second line gives the cost per move: the workers' CPU, the Redis primaries' CPU
(and each shard's, per script call it ran), the replicas' CPU, and the bytes Redis moved
per move (to and from the workers, to its replicas, over the cluster bus). ``--durability``
is passed to the workers.

    python bench/race.py --loads paced --configs redis,redis2,redis4,cluster1,cluster2,cluster3
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import multiprocessing as mp
import os
import random
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from protocol.messages import PROTOCOL_VERSION  # noqa: E402

__all__ = ["main"]

MOVE = "s"  # the stock: legal in every position of Klondike, one engine action
MAX_MOVES = 1_000_000  # per player: the time bound ends a run long before


# --------------------------------------------------------------------- processes


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_port(port: int, timeout: float = 15.0) -> None:
    """Wait until something accepts connections on ``port``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextlib.contextmanager
def process(argv: list[str], port: int) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` until the block ends (SIGTERM, then kill)."""
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            print(f"warning: {argv[0]} {argv[1:4]} did not stop on SIGTERM; killed")
            proc.kill()
            proc.wait()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds used so far by ``pids`` (Linux ``/proc``)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total / tick


def server_pids(proc: subprocess.Popen[bytes]) -> list[int]:
    """The process and its children (the workers of ``serve --workers N``)."""
    with contextlib.suppress(OSError):
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        return [proc.pid, *map(int, children)]
    return [proc.pid]


# --------------------------------------------------------------------- client side


@dataclass
class Share:
    """What one client process measured."""

    answered: int = 0
    refused: int = 0
    seconds: float = 0.0
    cpu: float = 0.0
    latencies: list[float] = field(default_factory=list)


def _frame(payload: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(payload).decode()


async def _reply(ws: Any) -> bytes:
    """The next direct reply, skipping room events (they start with ``{"seq":``)."""
    while True:
        data: bytes = await ws.recv(decode=False)
        if not data.startswith(b'{"seq":'):
            return data


def room_worker(code: str, workers: int) -> int:
    """The worker a room's connections go to, by a hash of its code (the stored form:
    upper case, no dash), as a balancer hashing ``$arg_room`` picks one."""
    return zlib.crc32(code.replace("-", "").upper().encode()) % workers


async def _seat_rooms(urls: list[str], rooms: int, players: int, affine: bool) -> list[Any]:
    """Connect ``rooms`` × ``players`` clients, seat them, start the races; returns the
    connections once every race has started. One URL: every connection goes there (the
    kernel spreads them over the workers sharing its port). Several (``affine``): one per
    worker; a room's creator goes to the next in turn, creates the room, then reconnects
    to the room's worker (:func:`room_worker`) with ``?room=CODE`` and resumes its seat;
    the other players connect there at once."""
    import orjson
    from websockets.asyncio.client import connect

    turn = itertools.count()

    async def hello(url: str) -> Any:
        ws = await connect(
            url, compression=None, max_queue=None, open_timeout=60, ping_interval=None
        )
        await ws.send(_frame({"type": "hello", "v": PROTOCOL_VERSION, "client": "bench"}))
        await _reply(ws)
        return ws

    async def room() -> tuple[list[Any], float]:
        host = await hello(urls[next(turn) % len(urls)])
        create = {"type": "create", "id": 1, "game": "klondike", "deal": "random"}
        await host.send(_frame({**create, "max_players": players, "name": "bench"}))
        joined = orjson.loads(await _reply(host))
        code = joined["room"]
        url = urls[0]
        if affine:
            url = f"{urls[room_worker(code, len(urls))]}/?room={code.replace('-', '')}"
            moved = await hello(url)
            resume = {"type": "resume", "id": 1, "room": code, "token": joined["token"]}
            await moved.send(_frame(resume))
            reply = await _reply(moved)
            if not reply.startswith(b'{"type":"joined"'):
                raise RuntimeError(f"resume refused: {reply!r}")
            await host.close()
            host = moved
        conns = [host]
        for _ in range(players - 1):
            ws = await hello(url)
            await ws.send(_frame({"type": "join", "id": 1, "room": code, "name": "bench"}))
            await _reply(ws)
            conns.append(ws)
        await host.send(_frame({"type": "start", "id": 2}))
        # the host reads both the race_starting event and the ok reply to start (in either
        # order): a reply left unread would be taken for the host's first ack, leaving it
        # one reply behind, with two moves in flight, for the whole run
        starts_at: float | None = None
        answered = False
        while starts_at is None or not answered:
            data = await host.recv(decode=False)
            if b'"race_starting"' in data:
                event = orjson.loads(data)
                starts_at = time.monotonic() + (event["start_at"] - event["now"]) / 1000
            elif data.startswith(b'{"type":"ok","id":2'):
                answered = True
            elif data.startswith(b'{"type":"error"'):
                raise RuntimeError(f"start refused: {data!r}")
        return conns, starts_at

    # a few rooms at a time: thousands of simultaneous handshakes only measure the backlog
    limit = asyncio.Semaphore(25)

    async def bounded() -> tuple[list[Any], float]:
        async with limit:
            return await room()

    seated = await asyncio.gather(*(bounded() for _ in range(rooms)))
    await asyncio.sleep(max(0.0, max(t for _, t in seated) - time.monotonic()) + 0.05)
    return [ws for conns, _ in seated for ws in conns]


async def _echo_conns(url: str, clients: int) -> list[Any]:
    from websockets.asyncio.client import connect

    return [
        await connect(url, compression=None, max_queue=None, ping_interval=None)
        for _ in range(clients)
    ]


async def _load(
    conns: list[Any], paced: bool, go_at: float, seconds: float, warmup: float
) -> Share:
    """Play until ``seconds`` after ``go_at`` (wall clock); round trips finishing in the
    first ``warmup`` seconds are not counted."""
    share = Share()
    loop = asyncio.get_running_loop()
    await asyncio.sleep(max(0.0, go_at - time.time()))
    t0 = time.perf_counter()
    count_from, stop_at = t0 + warmup, t0 + seconds
    rng = random.Random(os.getpid())

    async def player(ws: Any) -> None:
        offset = rng.random() if paced else 0.0
        for i in range(MAX_MOVES):
            if paced:
                at = t0 + offset + i
                if at >= stop_at:
                    return
                await asyncio.sleep(at - time.perf_counter())
            sent = time.perf_counter()
            if sent >= stop_at:
                return
            await ws.send(f'{{"type":"move","id":{i},"move":"{MOVE}"}}')
            data = await _reply(ws)
            done = time.perf_counter()
            if done >= count_from and done < stop_at:
                share.latencies.append(done - sent)
                if data.startswith(b'{"type":"rejected"') or data.startswith(b'{"type":"error"'):
                    share.refused += 1
                else:
                    share.answered += 1

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    await asyncio.wait_for(asyncio.gather(*(player(ws) for ws in conns)), seconds + 30)
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    share.seconds = min(time.perf_counter(), stop_at) - count_from
    share.cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    del loop
    return share


async def _client(pipe: Connection, kind: str, url: str, count: int, players: int) -> None:
    urls = url.split()
    if kind == "echo":
        conns = await _echo_conns(url, count)
    else:
        conns = await _seat_rooms(urls, count, players, kind == "race-affine")
    pipe.send("ready")
    loop = asyncio.get_running_loop()
    paced, go_at, seconds, warmup = await loop.run_in_executor(None, pipe.recv)
    share = await _load(conns, paced, go_at, seconds, warmup)
    for ws in conns:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(), 2)
    pipe.send(share)


def quiet_collector() -> None:
    """A load process's own collector kept out of the figures: its full collections walked
    every one of its thousands of connections (150–500 ms pauses in bench/capacity.py's
    player process, every move it had in flight counted that much slower). The server's
    tuning (``server.collector``) does for it what it does for a worker."""
    from server.collector import Collector

    Collector().install()


def _client_main(pipe: Connection, kind: str, url: str, count: int, players: int) -> None:
    quiet_collector()
    try:
        import uvloop

        uvloop.run(_client(pipe, kind, url, count, players))
    except ImportError:
        asyncio.run(_client(pipe, kind, url, count, players))


@dataclass
class Result:
    """A merged run."""

    answered: int
    refused: int
    seconds: float
    latencies: list[float]
    client_cpu: float
    server_cpu: float
    redis_cpu: float
    #: per second of the counted span: Redis's counters (see RedisNodes.counters)
    redis_rates: dict[str, float] = field(default_factory=dict)
    #: per primary: (CPU in cores, script calls per second)
    shards: list[tuple[float, float]] = field(default_factory=list)
    replica_cpu: float = 0.0
    #: CPU (cores) of the workers and of each primary with every client connected and no
    #: move made: the part of their CPU that is not the moves' (beats, health checks, pings)
    idle_server: float = 0.0
    idle_shards: list[float] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.answered / self.seconds if self.seconds else 0.0

    def percentile(self, q: float) -> float:
        lat = sorted(self.latencies) or [0.0]
        return lat[min(len(lat) - 1, int(len(lat) * q))] * 1000

    def line(self, label: str) -> str:
        refused = f"  ({self.refused} refused)" if self.refused else ""
        return (
            f"{label:<32} {self.rate:8.0f}/s  p50 {self.percentile(0.5):6.2f} ms  "
            f"p99 {self.percentile(0.99):6.2f} ms   CPU server {self.server_cpu:4.2f} "
            f"redis {self.redis_cpu:4.2f} clients {self.client_cpu:4.2f}  "
            f"server µs/move {self.server_us:3.0f}{refused}"
        )

    @property
    def server_us(self) -> float:
        """Server CPU per answered move (all workers), in µs of one core."""
        return self.server_cpu / self.rate * 1e6 if self.rate else 0.0

    def per_move(self) -> str:
        """The cost of a move in Redis: primaries' CPU (and each shard's, per script call
        it ran), the replicas', and bytes through Redis."""
        if not self.rate or not self.redis_rates:
            return ""
        primaries = sum(cpu for cpu, _ in self.shards)
        shards = ", ".join(
            f"{cpu / calls * 1e6:.1f}" if calls else "-" for cpu, calls in self.shards
        )
        r = {k: v / self.rate for k, v in self.redis_rates.items()}
        # above idle: the CPU the moves cost, without what the processes spend anyway
        worker_moves = (self.server_cpu - self.idle_server) / self.rate * 1e6
        shard_moves = ", ".join(
            f"{(cpu - idle) / calls * 1e6:.1f}" if calls else "-"
            for (cpu, calls), idle in zip(self.shards, self.idle_shards, strict=False)
        )
        return (
            f"{'':<32} per move: workers {self.server_us:.0f} µs ({worker_moves:.0f} above "
            f"idle), redis primaries {primaries / self.rate * 1e6:.1f} µs (per shard and "
            f"script call: {shards}; above idle: {shard_moves}), replicas "
            f"{self.replica_cpu / self.rate * 1e6:.1f} µs; bytes: from workers {r['in']:.0f}, "
            f"to workers {r['out']:.0f}, to replicas {r['repl']:.0f}, other writes (cluster "
            f"bus, AOF) {r['bus']:.0f}"
        )


def drive(
    kind: str,
    url: str,
    count: int,
    players: int,
    procs: int,
    *,
    paced: bool,
    seconds: float,
    warmup: float,
    server: list[int],
    redis: list[int],
    nodes: RedisNodes | None = None,
) -> Result:
    """Run one load split over ``procs`` client processes (``count`` rooms, or echo
    connections); the results merged. The load starts once every process is ready. With
    ``nodes``, Redis's own counters are read over the counted span too."""
    ctx = mp.get_context("spawn")
    shares = [count // procs + (i < count % procs) for i in range(procs)]
    children = []
    for share in filter(None, shares):
        mine, theirs = ctx.Pipe()
        child = ctx.Process(target=_client_main, args=(theirs, kind, url, share, players))
        child.start()
        children.append((child, mine))
    try:
        for _, pipe in children:
            if not pipe.poll(120) or pipe.recv() != "ready":
                raise RuntimeError("a client process did not get ready")
        idle: tuple[float, list[float]] | None = None
        if nodes is not None:  # every client connected, no move yet: the idle CPU
            time.sleep(1.0)
            i0, n0 = cpu_seconds(server), nodes.counters()
            time.sleep(3.0)
            i1, n1 = cpu_seconds(server), nodes.counters()
            idle = (
                (i1 - i0) / 3.0,
                [(n1[f"cpu{i}"] - n0[f"cpu{i}"]) / 3.0 for i in range(nodes.primaries)],
            )
        go_at = time.time() + 0.3
        for _, pipe in children:
            pipe.send((paced, go_at, seconds, warmup))
        time.sleep(max(0.0, go_at - time.time()) + warmup)
        s0, r0 = cpu_seconds(server), cpu_seconds(redis)
        c0 = nodes.counters() if nodes else None
        time.sleep(seconds - warmup)
        s1, r1 = cpu_seconds(server), cpu_seconds(redis)
        c1 = nodes.counters() if nodes else None
        parts: list[Share] = []
        for _, pipe in children:
            if not pipe.poll(seconds + 60):
                raise RuntimeError("a client process did not finish")
            parts.append(pipe.recv())
    finally:
        for child, _ in children:
            child.join(10)
            if child.is_alive():
                child.kill()
    span = seconds - warmup
    result = Result(
        sum(p.answered for p in parts),
        sum(p.refused for p in parts),
        max(p.seconds for p in parts),
        [x for p in parts for x in p.latencies],
        sum(p.cpu for p in parts) / seconds,
        (s1 - s0) / span,
        (r1 - r0) / span,
    )
    if nodes is not None and c0 is not None and c1 is not None:
        result.redis_rates = {k: (c1[k] - c0[k]) / span for k in ("in", "out", "repl", "bus")}
        result.shards = [
            ((c1[f"cpu{i}"] - c0[f"cpu{i}"]) / span, (c1[f"calls{i}"] - c0[f"calls{i}"]) / span)
            for i in range(nodes.primaries)
        ]
        result.replica_cpu = (c1["replica_cpu"] - c0["replica_cpu"]) / span
    if idle is not None:
        result.idle_server, result.idle_shards = idle
    return result


# --------------------------------------------------------------------- redis


@dataclass
class RedisNodes:
    """The redis-servers of a run: the primaries first, then the replicas."""

    url: str
    ports: list[int]
    pids: list[int]
    primaries: int

    def counters(self) -> dict[str, float]:
        """Redis's own counters now: bytes from and to clients (the workers), to replicas,
        and the rest each process wrote (the cluster bus); each primary's CPU and script
        calls; the replicas' CPU."""
        import redis

        found: dict[str, float] = {"in": 0, "out": 0, "repl": 0, "bus": 0, "replica_cpu": 0}
        for i, (port, pid) in enumerate(zip(self.ports, self.pids, strict=True)):
            r = redis.Redis(port=port)
            try:
                stats = r.info("stats")
                calls = r.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)
            finally:
                r.close()
            written = 0
            with contextlib.suppress(OSError):
                for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                    if line.startswith("wchar:"):
                        written = int(line.split()[1])
            out, repl = stats["total_net_output_bytes"], stats.get("total_net_repl_output_bytes", 0)
            found["in"] += stats["total_net_input_bytes"]
            found["out"] += out
            found["repl"] += repl
            found["bus"] += max(0, written - out - repl)
            if i < self.primaries:
                found[f"cpu{i}"] = cpu_seconds([pid])
                found[f"calls{i}"] = calls
            else:
                found["replica_cpu"] += cpu_seconds([pid])
        return found


def _cmd(client: Any, *args: Any) -> Any:
    """A Redis command on a redis-py client (its ``execute_command`` is untyped)."""
    return client.execute_command(*args)


def _redis_argv(port: int, workdir: str, *extra: str) -> list[str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    home = Path(workdir) / str(port)
    home.mkdir(parents=True, exist_ok=True)
    argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    return [*argv, "--appendonly", "no", "--dir", str(home), *extra]


_AOF = ("--appendonly", "yes", "--appendfsync", "always")


def start_redis(stack: contextlib.ExitStack, workdir: str, level: str = "") -> RedisNodes:
    """One redis-server on a free port: without persistence; with ``level`` ``aof`` its
    append-only file synced on every write, with ``replica`` a replica beside it."""
    import redis

    port = free_port()
    extra = _AOF if level == "aof" else ("--repl-diskless-sync-delay", "0")
    pids = [stack.enter_context(process(_redis_argv(port, workdir, *extra), port)).pid]
    ports = [port]
    if level == "replica":
        rport = free_port()
        argv = _redis_argv(rport, workdir, "--replicaof", "127.0.0.1", str(port))
        pids.append(stack.enter_context(process(argv, rport)).pid)
        ports.append(rport)
        r = redis.Redis(port=port)
        try:
            deadline = time.monotonic() + 30
            while True:  # until the replica acknowledges writes (not just says it is online)
                r.set("bench:ready", "1")
                if int(_cmd(r, "WAIT", 1, 100)) >= 1:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError("the replica does not sync")
        finally:
            r.close()
    return RedisNodes(f"redis://127.0.0.1:{port}/0", ports, pids, 1)


def start_cluster(
    stack: contextlib.ExitStack, workdir: str, shards: int, replicas: int, aof: bool = False
) -> RedisNodes:
    """A Redis Cluster of ``shards`` primaries (the slots split evenly) with ``replicas``
    replicas each (``aof``: append-only files synced on every write), made by hand:
    ``redis-cli --cluster create`` wants 3 primaries at least."""
    import redis

    sys.path.insert(0, str(ROOT / "tests"))
    from server_fixtures import free_cluster_port  # the tests' own: a node and its bus port

    ports: list[int] = []
    while len(ports) < shards * (1 + replicas):
        port = free_cluster_port()
        if port not in ports:
            ports.append(port)
    pids = []
    for port in ports:
        argv = _redis_argv(port, workdir, "--cluster-enabled", "yes")
        argv += ["--cluster-config-file", "nodes.conf", "--repl-diskless-sync-delay", "0"]
        argv += _AOF if aof else []
        pids.append(stack.enter_context(process(argv, port)).pid)
    clients = [redis.Redis(port=p) for p in ports]
    try:
        ids = [_cmd(c, "CLUSTER", "MYID").decode() for c in clients]
        for i in range(shards):
            low, high = 16384 * i // shards, 16384 * (i + 1) // shards - 1
            _cmd(clients[i], "CLUSTER", "ADDSLOTSRANGE", low, high)
        for c in clients[1:]:
            _cmd(c, "CLUSTER", "MEET", "127.0.0.1", ports[0])
        deadline = time.monotonic() + 30
        while any(len(_cmd(c, "CLUSTER", "NODES").splitlines()) < len(ports) for c in clients):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster's nodes do not meet")
            time.sleep(0.1)
        for j, c in enumerate(clients[shards:]):
            _cmd(c, "CLUSTER", "REPLICATE", ids[j % shards])
        while not all(b"cluster_state:ok" in _cmd(c, "CLUSTER", "INFO") for c in clients):
            if time.monotonic() > deadline:
                raise RuntimeError("the cluster does not come up")
            time.sleep(0.1)
        while replicas and not all(
            c.info("replication").get("connected_slaves", 0) == replicas for c in clients[:shards]
        ):
            if time.monotonic() > deadline:
                raise RuntimeError("the replicas do not sync")
            time.sleep(0.1)
        time.sleep(2.0 if replicas else 0)  # a replica acknowledges a moment after its sync
    finally:
        for c in clients:
            c.close()
    seeds = ",".join(f"127.0.0.1:{p}" for p in ports[:shards])
    return RedisNodes(f"redis+cluster://{seeds}", ports, pids, shards)


# --------------------------------------------------------------------- echo server


async def _echo_server(port: int) -> None:
    from websockets.asyncio.server import serve

    async def echo(ws: Any) -> None:
        async for message in ws:
            await ws.send(message)

    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    async with serve(echo, "127.0.0.1", port, compression=None):  # as the race server
        await stop


def _echo_main(port: int) -> None:
    try:
        import uvloop  # as the race server

        uvloop.run(_echo_server(port))
    except ImportError:
        asyncio.run(_echo_server(port))


# --------------------------------------------------------------------- main


def _serve_argv(
    port: int,
    redis_url: str | None,
    workers: int,
    durability: str | None = None,
    data: str | None = None,
    proving: bool = False,
) -> list[str]:
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
    if proving:
        # the pool of proven deals kept filling for the whole run
        argv += ["--pools-warm", "--proven-deals", "1000"]
    if redis_url:
        argv += ["--redis", redis_url, "--workers", str(workers)]
        if durability:
            argv += ["--durability", durability]
    # no rate limit: the clients are not abusive, they are many
    argv += ["--rate", "1000000", "--burst", "1000000", "--countdown", "0.5"]
    # records (SQLite in ``data``) only when asked; no daily proofs ahead: a solver process
    # is a child, its CPU would count
    argv += ["--data", data] if data else ["--no-records"]
    return [*argv, "--no-daily-warm", "--log-level", "WARNING"]


def parse_config(name: str) -> tuple[str, int, int, str]:
    """``(store, workers, shards, durability)`` of a ``--configs`` name: ``memory``,
    ``records`` (memory, the records store on), ``redis[N]``, ``cluster<S>[x<N>]``; a
    Redis config may end in ``-aof`` or ``-replica`` (its own Redis set up for that
    durability, and the workers asking it)."""
    if name in ("records", "proving"):
        return name, 1, 0, ""
    base, _, level = name.partition("-")
    if level not in ("", "aof", "replica") or (level and base == "memory"):
        raise ValueError(f"not a server config: {name!r}")
    if base == "memory":
        return "memory", 1, 0, ""
    if base.startswith("redis") and (base[5:].removesuffix("a") or "1").isdigit():
        return "redis", int(base[5:].removesuffix("a") or 1), 1, level
    shards, _, workers = base.removeprefix("cluster").partition("x")
    if base.startswith("cluster") and shards.isdigit() and (workers or "1").isdigit():
        return "cluster", int(workers or 1), int(shards), level
    raise ValueError(f"not a server config: {name!r}")


def by_room(name: str) -> bool:
    """Whether a config routes a room's connections to one worker (``redisNa``)."""
    base = name.partition("-")[0]
    return base.startswith("redis") and base.endswith("a") and parse_config(name)[1] > 1


def config_label(name: str) -> str:
    """How a config is shown."""
    store, workers, shards, level = parse_config(name)
    plural = "s" if workers > 1 else ""
    shown = {
        "cluster": f"cluster {shards}",
        "records": "memory + records",
        "proving": "memory + proving",
    }.get(store, store)
    routed = " by room" if by_room(name) else ""
    return f"{shown}{f' {level}' if level else ''}, {workers} worker{plural}{routed}"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print one line per run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short runs (paced 6 s, flat 4 s)")
    ap.add_argument("--players", type=int, default=4, help="players per room (4)")
    ap.add_argument("--paced-rooms", type=int, default=250, help="rooms, paced load (250)")
    ap.add_argument("--flat-rooms", type=int, default=25, help="rooms, flat-out load (25)")
    ap.add_argument("--paced-seconds", type=float, default=15.0)
    ap.add_argument("--flat-seconds", type=float, default=8.0)
    ap.add_argument("--client-procs", type=int, default=2, help="load generator processes (2)")
    ap.add_argument("--redis", help="use this Redis instead of starting one")
    ap.add_argument(
        "--configs",
        default="memory,redis,redis2",
        help="servers to run: memory (1 worker), records (memory, the records store on), "
        "proving (memory, the pool of proven deals filling all the run), "
        "redisN (N workers on one Redis), redisNa (the same, a room's players on one "
        "worker), clusterS or clusterSxN (a Redis Cluster of S "
        "primaries, 1 or N workers)",
    )
    ap.add_argument(
        "--cluster-replicas", type=int, default=0, help="replicas per primary of a cluster (0)"
    )
    ap.add_argument("--durability", help="the workers' --durability (their default if unset)")
    ap.add_argument(
        "--scale-load",
        action="store_true",
        help="paced rooms per worker and per shard: a config of N workers or S shards gets "
        "max(N, S) times --paced-rooms (each process keeps the same load)",
    )
    ap.add_argument("--loads", default="paced,flat", help="loads to run (paced,flat)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="rounds (each server once per round, echo runs between): the median ratios "
        "are printed, as runs on a shared machine differ",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.paced_seconds, args.flat_seconds = 6.0, 4.0
    warmup = 1.0

    configs = args.configs.split(",")
    for name in configs:
        parse_config(name)  # a bad name stops the run before anything starts
    with contextlib.ExitStack() as stack:
        redis_url, redis_pids = args.redis, []
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        single: RedisNodes | None = None
        if redis_url is None:
            single = start_redis(stack, tmp)
            redis_pids, redis_url = single.pids, single.url
        try:
            import uvloop  # noqa: F401

            loop_name = "uvloop"
        except ImportError:
            loop_name = "asyncio"
        print(
            f"{os.cpu_count()} CPUs, {loop_name}, {args.client_procs} client processes; "
            f"paced: {args.paced_rooms} rooms × {args.players} players, 1 move/s each, "
            f"{args.paced_seconds:g} s; flat out: {args.flat_rooms} rooms × {args.players} "
            f"players, {args.flat_seconds:g} s; first {warmup:g} s not counted"
        )
        shapes = {
            # load: (rooms, seconds)
            "paced": (args.paced_rooms, args.paced_seconds),
            "flat": (args.flat_rooms, args.flat_seconds),
        }
        loads = [load for load in ("paced", "flat") if load in args.loads]

        def echo(load: str) -> Result:
            rooms, seconds = shapes[load]
            connections = rooms * args.players
            port = free_port()
            argv = [sys.executable, __file__, "--echo-server", str(port)]
            with process(argv, port) as proc:
                result = drive(
                    "echo",
                    f"ws://127.0.0.1:{port}",
                    connections,
                    1,
                    args.client_procs,
                    paced=load == "paced",
                    seconds=seconds,
                    warmup=warmup,
                    server=[proc.pid],
                    redis=[],
                )
            print(result.line(f"echo, {load} ×{connections}"), flush=True)
            return result

        # the echo runs are interleaved: each race server's figure is compared with the echo
        # runs of the same load just before and just after it
        last_echo = {load: echo(load) for load in loads}
        # (config label, load) -> per round: server µs/move ÷ echo µs/message, rate ratio
        ratios: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _round in range(max(1, args.repeat)):
            for config in configs:
                store, workers, shards, level = parse_config(config)
                port = free_port()
                label = config_label(config)
                run = contextlib.ExitStack()
                nodes, replicas = single, 0
                if store == "cluster":
                    replicas = max(args.cluster_replicas, 1 if level == "replica" else 0)
                    nodes = start_cluster(run, tmp, shards, replicas, aof=level == "aof")
                elif store == "redis" and level:
                    nodes = start_redis(run, tmp, level)
                url_for_redis: str | None = None
                if store == "redis" and not level:
                    url_for_redis = redis_url
                elif store == "cluster" or (store == "redis" and nodes is not None):
                    url_for_redis = nodes.url if nodes is not None else None
                durability = level or args.durability
                if store == "cluster" and not replicas and not durability:
                    durability = "memory"  # no replica to wait for
                data = run.enter_context(tempfile.TemporaryDirectory())
                affine = by_room(config)
                # by room: one single-worker server per port, the load generator choosing
                ports = [free_port() for _ in range(workers)] if affine else [port]
                serves = [
                    _serve_argv(
                        p,
                        url_for_redis,
                        1 if affine else workers,
                        durability,
                        data if store == "records" else None,
                        store == "proving",
                    )
                    for p in ports
                ]
                results: dict[str, Result] = {}
                with run:
                    procs = [
                        run.enter_context(process(a, p)) for a, p in zip(serves, ports, strict=True)
                    ]
                    time.sleep(0.5 + 0.3 * workers)  # the workers start after the port opens
                    backed = store in ("redis", "cluster")
                    # proving: the worker alone (its solver process is a child)
                    pids = [
                        pid
                        for proc in procs
                        for pid in ([proc.pid] if store == "proving" else server_pids(proc))
                    ]
                    common = {
                        "server": pids,
                        "redis": (nodes.pids if nodes is not single and nodes else redis_pids)
                        if backed
                        else [],
                        "warmup": warmup,
                        "nodes": nodes if backed else None,
                    }
                    for load in loads:
                        rooms, seconds = shapes[load]
                        if load == "paced" and args.scale_load:
                            rooms *= max(workers, shards)
                        result = drive(
                            "race-affine" if affine else "race",
                            " ".join(f"ws://127.0.0.1:{p}" for p in ports),
                            rooms,
                            args.players,
                            args.client_procs,
                            paced=load == "paced",
                            seconds=seconds,
                            **common,  # type: ignore[arg-type]
                        )
                        print(result.line(f"{label}, {load} ×{rooms * args.players}"), flush=True)
                        if result.per_move():
                            print(result.per_move())
                        results[load] = result
                for load, result in results.items():
                    before, after = last_echo[load], echo(load)
                    last_echo[load] = after
                    echo_us = (before.server_us + after.server_us) / 2
                    echo_rate = (before.rate + after.rate) / 2
                    cost = result.server_us / echo_us if echo_us else 0.0
                    speed = result.rate / echo_rate if echo_rate else 0.0
                    ratios.setdefault((label, load), []).append((cost, speed))
                    print(
                        f"  {label}, {load}: server µs/move ÷ echo µs/message {cost:.2f} "
                        f"({result.server_us:.0f} ÷ {echo_us:.0f}); moves/s ÷ echo {speed:.2f}; "
                        f"p99 {result.percentile(0.99):.1f} ms",
                        flush=True,
                    )
        print("medians over the rounds (server µs per move ÷ echo's; higher is costlier):")
        for (label, load), values in ratios.items():
            costs = [c for c, _ in values]
            speeds = [v for _, v in values]
            shown = ", ".join(f"{c:.2f}" for c in costs)
            print(
                f"  {label}, {load}: {statistics.median(costs):.2f} ({shown}); "
                f"moves/s ÷ echo {statistics.median(speeds):.2f}"
            )
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--echo-server":
        _echo_main(int(sys.argv[2]))
        sys.exit(0)
    sys.exit(main())
