"""Race server benchmark: R rooms × P players of bot-like clients on loopback.

Two loads, as in issue #3:

* paced: every player plays one move a second (a fast human), 1,000 players by default
  (250 rooms × 4);
* flat out: every player sends its next move as soon as the last one is answered, 100
  connections by default (25 rooms × 4).

Each load runs against ``samedeal serve`` with the memory backend (one worker), with Redis
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
    python bench/race.py --configs memory --repeat 5    # the memory backend, both loads
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
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


async def _seat_rooms(url: str, rooms: int, players: int) -> list[Any]:
    """Connect ``rooms`` × ``players`` clients, seat them, start the races; returns the
    connections once every race has started."""
    import orjson
    from websockets.asyncio.client import connect

    async def hello() -> Any:
        ws = await connect(url, compression=None, max_queue=None, open_timeout=60)
        await ws.send(_frame({"type": "hello", "v": PROTOCOL_VERSION, "client": "bench"}))
        await _reply(ws)
        return ws

    async def room() -> tuple[list[Any], float]:
        host = await hello()
        create = {"type": "create", "id": 1, "game": "klondike", "deal": "random"}
        await host.send(_frame({**create, "max_players": players, "name": "bench"}))
        code = orjson.loads(await _reply(host))["room"]
        conns = [host]
        for _ in range(players - 1):
            ws = await hello()
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

    return [await connect(url, compression=None, max_queue=None) for _ in range(clients)]


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
    conns = await (_seat_rooms(url, count, players) if kind != "echo" else _echo_conns(url, count))
    pipe.send("ready")
    loop = asyncio.get_running_loop()
    paced, go_at, seconds, warmup = await loop.run_in_executor(None, pipe.recv)
    share = await _load(conns, paced, go_at, seconds, warmup)
    for ws in conns:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(ws.close(), 2)
    pipe.send(share)


def _client_main(pipe: Connection, kind: str, url: str, count: int, players: int) -> None:
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
) -> Result:
    """Run one load split over ``procs`` client processes (``count`` rooms, or echo
    connections); the results merged. The load starts once every process is ready."""
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
        go_at = time.time() + 0.3
        for _, pipe in children:
            pipe.send((paced, go_at, seconds, warmup))
        time.sleep(max(0.0, go_at - time.time()) + warmup)
        s0, r0 = cpu_seconds(server), cpu_seconds(redis)
        time.sleep(seconds - warmup)
        s1, r1 = cpu_seconds(server), cpu_seconds(redis)
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
    return Result(
        sum(p.answered for p in parts),
        sum(p.refused for p in parts),
        max(p.seconds for p in parts),
        [x for p in parts for x in p.latencies],
        sum(p.cpu for p in parts) / seconds,
        (s1 - s0) / span,
        (r1 - r0) / span,
    )


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


def _serve_argv(port: int, redis_url: str | None, workers: int, data: str | None) -> list[str]:
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
    if redis_url:
        argv += ["--redis", redis_url, "--workers", str(workers)]
    # no rate limit: the clients are not abusive, they are many
    argv += ["--rate", "1000000", "--burst", "1000000", "--countdown", "0.5"]
    # records (SQLite in ``data``) only when asked; no daily proofs ahead: a solver process
    # is a child, its CPU would count
    argv += ["--data", data] if data else ["--no-records"]
    argv.append("--no-daily-warm")
    return [*argv, "--log-level", "WARNING"]


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
        help="servers to run: memory (1 worker), redis (1 worker), redis2 (2 workers), "
        "records (memory, 1 worker, finished races recorded into SQLite)",
    )
    ap.add_argument("--loads", default="paced,flat", help="loads to run (paced,flat)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="flat-out rounds (each server once per round, echo runs between): the median "
        "ratio is printed, as runs on a shared machine differ",
    )
    args = ap.parse_args(argv)
    if args.quick:
        args.paced_seconds, args.flat_seconds = 6.0, 4.0
    warmup = 1.0

    with contextlib.ExitStack() as stack:
        redis_url, redis_pids = args.redis, []
        if redis_url is None:
            binary = shutil.which("redis-server") or "/usr/bin/redis-server"
            rport = free_port()
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            redis_argv = [binary, "--port", str(rport), "--bind", "127.0.0.1"]
            redis_argv += ["--save", "", "--appendonly", "no", "--dir", tmp]
            redis_pids = [stack.enter_context(process(redis_argv, rport)).pid]
            redis_url = f"redis://127.0.0.1:{rport}/0"
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
        flat_connections = args.flat_rooms * args.players
        paced_connections = args.paced_rooms * args.players
        shapes = {
            # load: (rooms, seconds, echo connections)
            "paced": (args.paced_rooms, args.paced_seconds, paced_connections),
            "flat": (args.flat_rooms, args.flat_seconds, flat_connections),
        }
        loads = [load for load in ("paced", "flat") if load in args.loads]

        def echo(load: str) -> Result:
            _, seconds, connections = shapes[load]
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
            for config in args.configs.split(","):
                workers = 2 if config == "redis2" else 1
                url_for_redis = redis_url if config.startswith("redis") else None
                label = {
                    "memory": "memory, 1 worker",
                    "redis": "redis, 1 worker",
                    "records": "memory + records, 1 worker",
                }.get(config, f"redis, {workers} workers")
                for load in loads:
                    rooms, seconds, _ = shapes[load]
                    port = free_port()
                    data = stack.enter_context(tempfile.TemporaryDirectory())
                    data_dir = data if config == "records" else None
                    argv = _serve_argv(port, url_for_redis, workers, data_dir)
                    with process(argv, port) as proc:
                        time.sleep(0.5)  # the workers of --workers N start after the port
                        result = drive(
                            "race",
                            f"ws://127.0.0.1:{port}",
                            rooms,
                            args.players,
                            args.client_procs,
                            paced=load == "paced",
                            seconds=seconds,
                            warmup=warmup,
                            server=server_pids(proc),
                            redis=redis_pids,
                        )
                    n = rooms * args.players
                    print(result.line(f"{label}, {load} ×{n}"), flush=True)
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
