"""Watching benchmark (issue 17): the live directory under load, and one crowded room.

Two ``samedeal serve`` workers share a redis-server (each on its own port, so the load is
split between them on purpose); the load comes from ``--client-procs`` processes of raw
websockets connections for the players and ``--watcher-procs`` more for the subscribers and
spectators (uvloop when installed), so what a crowd's frames cost the load generator is not
counted in the players' moves. Everything listens on 127.0.0.1; every phase is bounded in
time.

1. **Directory.** ``--rooms`` public rooms (2,000) of two players, rooms alternating
   between the workers, every player turning the stock (``s``) ``--pace`` times a second.

   * *baseline*: the moves alone — move round trip (send → ``ack``) p50 / p99;
   * *with subscribers*: the same, with ``--subscribers`` (500) connections, half on each
     worker, subscribed to the directory (``live``, most watched, 20 rooms), and a probe
     room (on the second worker, made the most watched by 40 spectators) whose host turns
     the stock once a second. Directory latency: from the probe's ``ack`` to the moment
     each subscriber is sent a directory showing that move (p50 / p99 / max over every
     subscriber and move); the move round trips of everybody meanwhile, as a ratio to the
     baseline's. A subscriber that stops reading (a tiny receive buffer, ``live`` with 50
     rooms) is among them: the workers' ``slow_closes_total`` tells whether it was closed
     (1013) during the run.

2. **One room, 1,000 spectators.** A room of two players on the first worker; the
   directory load goes on. ``--spectators`` (1,000) join it, half on each worker: the
   ``spectators`` count events each receives meanwhile are counted (told at most once a
   second, not once per newcomer). Then both players turn the stock 5 times a second: for
   every ``progress`` event, the spread between its arrival at the first and at the last
   spectator (p50 / p99 / max); the players' move round trips, as a ratio to theirs before
   the spectators came. One more spectator follows both boards and reads nothing.

Run: ``python3 bench/watch.py`` (about 3 minutes); ``--quick`` for a short run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import multiprocessing as mp
import os
import random
import shutil
import socket
import statistics
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from race import cpu_seconds, free_port, process, quiet_collector  # noqa: E402  (bench/race.py)

from protocol.messages import PROTOCOL_VERSION  # noqa: E402

__all__ = ["main"]


# --------------------------------------------------------------------- processes


def metric(port: int, name: str) -> float:
    """One counter of a worker's ``/metrics``."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(f"samedeal_{name}{{"):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


# --------------------------------------------------------------------- client side


def _frame(payload: dict[str, Any]) -> str:
    import orjson

    return orjson.dumps(payload).decode()


async def _hello(url: str, **options: Any) -> Any:
    from websockets.asyncio.client import connect

    ws = await connect(
        url, compression=None, max_queue=None, open_timeout=60, ping_interval=None, **options
    )
    await ws.send(_frame({"type": "hello", "v": PROTOCOL_VERSION, "client": "bench"}))
    await ws.recv(decode=False)
    return ws


class Player:
    """A seated player: its connection and a queue of its direct replies (a reader task
    takes everything the connection receives)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.replies: asyncio.Queue[bytes] = asyncio.Queue()
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for data in self.ws:
                if isinstance(data, str):
                    data = data.encode()
                # the replies only: not room events, boards or directories
                if not data.startswith((b'{"seq":', b'{"type":"board"', b'{"type":"live_rooms"')):
                    self.replies.put_nowait(data)

    async def request(self, payload: dict[str, Any]) -> bytes:
        await self.ws.send(_frame(payload))
        return await asyncio.wait_for(self.replies.get(), 30)


async def _room(urls: list[str], which: int, players: int = 2) -> tuple[str, list[Player]]:
    """A started race in a room on worker ``which``."""
    import orjson

    host = Player(await _hello(urls[which]))
    reply = await host.request(
        {"type": "create", "id": 1, "game": "klondike", "deal": "random", "name": "bench"}
    )
    code = orjson.loads(reply)["room"]
    seated = [host]
    for _ in range(players - 1):
        p = Player(await _hello(urls[which]))
        await p.request({"type": "join", "id": 1, "room": code, "name": "bench"})
        seated.append(p)
    await host.request({"type": "start", "id": 2})
    return code, seated


@dataclass
class Share:
    """What one client process measured in a phase."""

    latencies: list[float] = field(default_factory=list)  # move round trips, s
    big: list[float] = field(default_factory=list)  # those of the crowded room's players
    probe: dict[int, float] = field(default_factory=dict)  # probe moves → ack wall time
    seen: list[dict[int, float]] = field(default_factory=list)  # per subscriber: moves → t
    arrivals: dict[int, list[float]] = field(default_factory=dict)  # seq → wall times
    counts: list[int] = field(default_factory=list)  # spectators events per spectator
    frames: int = 0
    cpu: float = 0.0


class Client:
    """One client process: its rooms, subscribers and spectators, driven by commands."""

    def __init__(self, urls: list[str], index: int, procs: int) -> None:
        self.urls = urls
        self.index = index
        self.procs = procs
        self.players: list[Player] = []
        self.subscribers: list[Any] = []
        self.sub_tasks: list[asyncio.Task[None]] = []
        self.probe: list[Player] = []
        self.probe_code = ""
        self.big: list[Player] = []
        self.big_code = ""
        self.stalled: list[Any] = []
        self.share = Share()

    async def seat(self, first: int, count: int) -> None:
        limit = asyncio.Semaphore(25)

        async def one(i: int) -> list[Player]:
            async with limit:
                return (await _room(self.urls, i % 2))[1]

        for group in await asyncio.gather(*(one(first + i) for i in range(count))):
            self.players.extend(group)

    async def moves(
        self, players: list[Player], go_at: float, seconds: float, pace: float, into: str
    ) -> None:
        """Every player of ``players`` turns the stock ``pace`` times a second; the round
        trips go to the share's list ``into``."""
        await asyncio.sleep(max(0.0, go_at - time.time()))
        t0 = time.perf_counter()
        stop = t0 + seconds
        rng = random.Random(os.getpid())

        async def play(p: Player) -> None:
            at = t0 + rng.random() / pace
            i = 0
            while at < stop:
                await asyncio.sleep(max(0.0, at - time.perf_counter()))
                sent = time.perf_counter()
                await p.request({"type": "move", "id": 100 + i, "move": "s"})
                getattr(self.share, into).append(time.perf_counter() - sent)
                i += 1
                at += 1 / pace

        await asyncio.gather(*(play(p) for p in players))

    async def subscribe(self, count: int, first: int) -> None:
        """``count`` directory subscribers, alternating workers; each notes when it first
        saw the probe's host with each number of moves."""
        # the probe's entry is found in the frame's bytes, not by decoding 20 rooms of every
        # frame: 250 subscribers of a process get their frames at once, and decoding them
        # all held up that process's players (its reads, hence their measured moves)
        key = b'"room":"' + self.probe_code.encode() + b'"'

        async def read(ws: Any, seen: dict[int, float]) -> None:
            with contextlib.suppress(Exception):
                while True:
                    data = await ws.recv(decode=False)
                    now = time.time()
                    self.share.frames += 1
                    at = data.find(key)
                    if at < 0:
                        continue
                    # the entry's players in seat order: the first "moves" is the host's
                    start = data.index(b'"moves":', at) + 8
                    end = start
                    while data[end : end + 1].isdigit():
                        end += 1
                    seen.setdefault(int(data[start:end]), now)

        for i in range(count):
            ws = await _hello(self.urls[(first + i) % 2])
            await ws.send(_frame({"type": "live", "id": 1, "sort": "watched", "limit": 20}))
            seen: dict[int, float] = {}
            self.share.seen.append(seen)
            self.subscribers.append(ws)
            self.sub_tasks.append(asyncio.create_task(read(ws, seen)))

    async def stall(self, which: int, payloads: list[dict[str, Any]]) -> None:
        """A connection with a tiny receive buffer that sends ``payloads`` and never reads."""
        from websockets.asyncio.client import connect

        port = int(self.urls[which].rsplit(":", 1)[1])
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
        ws = await connect(
            self.urls[which], sock=sock, max_queue=1, compression=None, ping_interval=None
        )
        for payload in [{"type": "hello", "v": PROTOCOL_VERSION}, *payloads]:
            await ws.send(_frame(payload))
        self.stalled.append(ws)

    async def make_probe(self, spectators: int) -> str:
        self.probe_code, self.probe = await _room(self.urls, 1)
        for _ in range(spectators):
            ws = Player(await _hello(self.urls[0]))
            await ws.request(
                {"type": "join", "id": 1, "room": self.probe_code, "role": "spectator"}
            )
            self.probe.append(ws)
        return self.probe_code

    async def run_probe(self, go_at: float, seconds: float) -> None:
        """The probe's host turns the stock once a second; its acks are timed."""
        import orjson

        await asyncio.sleep(max(0.0, go_at - time.time()) + 1.0)
        host = self.probe[0]
        moves = 0
        stop = time.time() + seconds - 2.0
        while time.time() < stop:
            reply = orjson.loads(await host.request({"type": "move", "id": 7, "move": "s"}))
            if reply.get("type") == "ack":
                moves += 1
                self.share.probe[moves] = time.time()
            await asyncio.sleep(1.0)

    async def make_big(self) -> str:
        self.big_code, self.big = await _room(self.urls, 0)
        return self.big_code

    async def crowd(self, code: str, count: int, first: int) -> None:
        """``count`` spectators of the big room, alternating workers; each counts its
        ``spectators`` events and times each ``progress`` event."""
        import orjson

        limit = asyncio.Semaphore(50)
        counts = [0] * count
        self.share.counts = counts

        async def read(i: int, ws: Any) -> None:
            with contextlib.suppress(Exception):
                while True:
                    data = await ws.recv(decode=False)
                    now = time.time()
                    if b'"type":"spectators"' in data[:40]:
                        counts[i] += 1
                    elif b'"type":"progress"' in data[:40]:
                        seq = orjson.loads(data)["seq"]
                        self.share.arrivals.setdefault(seq, []).append(now)

        async def one(i: int) -> None:
            async with limit:
                ws = await _hello(self.urls[(first + i) % 2])
                await ws.send(_frame({"type": "join", "id": 1, "room": code, "role": "spectator"}))
                while b'"type":"joined"' not in (await ws.recv(decode=False))[:20]:
                    pass  # events of the room may come first
            self.sub_tasks.append(asyncio.create_task(read(i, ws)))

        await asyncio.gather(*(one(i) for i in range(count)))

    def take(self) -> Share:
        share, self.share = self.share, Share()
        share.counts = list(share.counts)
        return share


async def _client(pipe: Connection, urls: list[str], index: int, procs: int) -> None:
    import resource

    client = Client(urls, index, procs)
    loop = asyncio.get_running_loop()
    while True:
        command, *args = await loop.run_in_executor(None, pipe.recv)
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        result: Any = None
        if command == "seat":
            await client.seat(*args)
            # thousands of connections live to the end: out of the collector's way (its full
            # collections would stall this load generator, not the servers measured)
            gc.collect()
            gc.freeze()
        elif command == "moves":
            go_at, seconds, pace = args
            await client.moves(client.players, go_at, seconds, pace, "latencies")
        elif command == "subscribe":
            await client.subscribe(*args)
        elif command == "stall":
            await client.stall(*args)
        elif command == "probe":
            result = await client.make_probe(*args)
        elif command == "probe_code":
            client.probe_code = args[0]
        elif command == "directory":
            go_at, seconds, pace, probing = args
            jobs = [client.moves(client.players, go_at, seconds, pace, "latencies")]
            if probing:
                jobs.append(client.run_probe(go_at, seconds))
            await asyncio.gather(*jobs)
        elif command == "big":
            result = await client.make_big()
        elif command == "crowd":
            await client.crowd(*args)
        elif command == "big_moves":
            go_at, seconds, pace, load_pace = args
            jobs = [client.moves(client.players, go_at, seconds, load_pace, "latencies")]
            if client.big:
                jobs.append(client.moves(client.big, go_at, seconds, pace, "big"))
            await asyncio.gather(*jobs)
        elif command == "take":
            result = client.take()
        elif command == "stop":
            pipe.send(None)
            return
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        if isinstance(result, Share):
            result.cpu = cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime
        pipe.send(result)


def _client_main(pipe: Connection, urls: list[str], index: int, procs: int) -> None:
    quiet_collector()
    try:
        import uvloop

        uvloop.run(_client(pipe, urls, index, procs))
    except ImportError:
        asyncio.run(_client(pipe, urls, index, procs))


# --------------------------------------------------------------------- figures


def quantiles(values: list[float]) -> str:
    if not values:
        return "no samples"
    ordered = sorted(values)

    def q(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(len(ordered) * p))] * 1000

    return f"p50 {q(0.5):7.1f} ms  p99 {q(0.99):7.1f} ms  max {ordered[-1] * 1000:7.1f} ms"


def p99(values: list[float]) -> float:
    ordered = sorted(values) or [0.0]
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


# --------------------------------------------------------------------- main


class Clients:
    """The client processes, commanded together."""

    def __init__(self, urls: list[str], procs: int) -> None:
        ctx = mp.get_context("spawn")
        self.pipes: list[Connection] = []
        self.children = []
        for i in range(procs):
            mine, theirs = ctx.Pipe()
            child = ctx.Process(target=_client_main, args=(theirs, urls, i, procs))
            child.start()
            self.pipes.append(mine)
            self.children.append(child)

    def all(self, *commands: tuple[Any, ...], timeout: float = 300) -> list[Any]:
        """Send ``commands[i]`` (or the one command) to every process; their answers."""
        for i, pipe in enumerate(self.pipes):
            pipe.send(commands[i] if len(commands) > 1 else commands[0])
        out = []
        for pipe in self.pipes:
            if not pipe.poll(timeout):
                raise RuntimeError("a client process did not answer")
            out.append(pipe.recv())
        return out

    def one(self, command: tuple[Any, ...], timeout: float = 300) -> Any:
        self.pipes[0].send(command)
        if not self.pipes[0].poll(timeout):
            raise RuntimeError("the first client process did not answer")
        return self.pipes[0].recv()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.all(("stop",), timeout=20)
        for child in self.children:
            child.join(10)
            if child.is_alive():
                child.kill()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print its figures."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--rooms", type=int, default=2000, help="live rooms of 2 players (2000)")
    ap.add_argument("--subscribers", type=int, default=500, help="directory subscribers (500)")
    ap.add_argument("--spectators", type=int, default=1000, help="spectators of one room (1000)")
    ap.add_argument("--pace", type=float, default=0.25, help="moves a second per player (0.25)")
    ap.add_argument("--seconds", type=float, default=30.0, help="length of each phase (30)")
    ap.add_argument("--client-procs", type=int, default=2, help="players' load processes (2)")
    ap.add_argument(
        "--watcher-procs",
        type=int,
        default=2,
        help="load processes of the subscribers and spectators (2)",
    )
    ap.add_argument("--quick", action="store_true", help="200 rooms, 100 subscribers, 10 s")
    args = ap.parse_args(argv)
    if args.quick:
        args.rooms, args.subscribers, args.spectators, args.seconds = 200, 100, 200, 10.0
    procs = args.client_procs

    with contextlib.ExitStack() as stack:
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
        rport = free_port()
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        redis_argv = [binary, "--port", str(rport), "--bind", "127.0.0.1"]
        redis_argv += ["--save", "", "--appendonly", "no", "--dir", tmp]
        redis_pid = stack.enter_context(process(redis_argv, rport)).pid
        redis_url = f"redis://127.0.0.1:{rport}/0"
        ports = [free_port(), free_port()]
        workers = []
        for port in ports:
            argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
            argv += ["--redis", redis_url, "--rate", "1000000", "--burst", "1000000"]
            # a beat each 20 s: a worker's liveness loop reads every room it has after each
            # beat, and thousands of rooms make that take longer than the default 10 s
            argv += ["--countdown", "0.5", "--liveness", "60", "--log-level", "WARNING"]
            # no records (nothing here reads them) and no deals of the day proved ahead: each
            # worker's solver process would take a core for minutes beside the load
            argv += ["--no-records", "--no-daily-warm"]
            workers.append(stack.enter_context(process(argv, port)).pid)
        urls = [f"ws://127.0.0.1:{p}" for p in ports]
        # the players apart from those who watch: 250 directory frames reaching a process
        # at once held up the players' reads in the same process, and the moves measured
        # were the load generator's as much as the servers'
        clients = Clients(urls, procs)
        stack.callback(clients.close)
        wprocs = args.watcher_procs
        watchers = Clients(urls, wprocs)
        stack.callback(watchers.close)
        children = clients.children + watchers.children

        def cpu() -> tuple[float, float, float]:
            return (
                cpu_seconds(workers),
                cpu_seconds([redis_pid]),
                cpu_seconds([c.pid for c in children if c.pid is not None]),
            )

        def used(c0: tuple[float, ...], c1: tuple[float, ...], span: float) -> str:
            w, r, c = ((b - a) / span for a, b in zip(c0, c1, strict=True))
            return f"CPU workers {w:.2f} redis {r:.2f} clients {c:.2f}"

        try:
            import uvloop  # noqa: F401

            loop_name = "uvloop"
        except ImportError:
            loop_name = "asyncio"
        print(
            f"{os.cpu_count()} CPUs, {loop_name}, {procs} + {wprocs} client processes, 2 "
            f"workers on one Redis; {args.rooms} rooms × 2 players at {args.pace:g} moves/s each, "
            f"{args.subscribers} subscribers, {args.spectators} spectators, "
            f"{args.seconds:g} s a phase; load average {os.getloadavg()[0]:.1f}"
        )
        t0 = time.time()
        shares = [args.rooms // procs + (i < args.rooms % procs) for i in range(procs)]
        firsts = [sum(shares[:i]) for i in range(procs)]
        clients.all(*[("seat", firsts[i], shares[i]) for i in range(procs)], timeout=600)
        print(f"seated {args.rooms} rooms in {time.time() - t0:.1f} s")

        # ---- 1. the directory
        go = time.time() + 1.0
        c0 = cpu()
        clients.all(("moves", go, args.seconds, args.pace))
        c1 = cpu()
        base = [x for s in clients.all(("take",)) for x in s.latencies]
        span = args.seconds
        print(
            f"baseline, moves only:        {len(base) / span:6.0f} moves/s  {quantiles(base)}  "
            f"{used(c0, c1, span)}"
        )
        probe = clients.one(("probe", 40))
        watchers.all(("probe_code", probe))
        subs = [args.subscribers // wprocs + (i < args.subscribers % wprocs) for i in range(wprocs)]
        watchers.all(*[("subscribe", subs[i], i) for i in range(wprocs)])
        watchers.one(("stall", 0, [{"type": "live", "id": 1, "sort": "newest", "limit": 50}]))
        time.sleep(2.0)
        slow0 = sum(metric(p, "slow_closes_total") for p in ports)
        go = time.time() + 1.0
        c0 = cpu()
        clients.all(*[("directory", go, args.seconds, args.pace, i == 0) for i in range(procs)])
        c1 = cpu()
        time.sleep(1.5)  # the last directory pushes
        parts = clients.all(("take",))
        moves = [x for s in parts for x in s.latencies]
        acks = parts[0].probe
        parts = watchers.all(("take",))
        lags = []
        for share in parts:
            for seen in share.seen:
                for k, acked in acks.items():
                    shown = [t for m, t in seen.items() if m >= k]
                    if shown:
                        lags.append(min(shown) - acked)
        missed = sum(1 for s in parts for seen in s.seen for k in acks if max(seen, default=0) < k)
        frames = sum(s.frames for s in parts)
        slow1 = sum(metric(p, "slow_closes_total") for p in ports)
        print(
            f"with {args.subscribers} subscribers:       {len(moves) / span:6.0f} moves/s  "
            f"{quantiles(moves)}  {used(c0, c1, span)}"
        )
        print(f"move p99 with subscribers / baseline: {p99(moves) / max(p99(base), 1e-9):.2f}")
        print(
            f"directory update → subscribers (probe {probe}, {len(acks)} moves × "
            f"{args.subscribers} subscribers): {quantiles(lags)}; not seen: {missed}; "
            f"{frames / span:.0f} directory frames/s sent"
        )
        print(f"subscriber that stopped reading closed (1013): {int(slow1 - slow0)}")

        # ---- 2. one room, a crowd of spectators
        big = clients.one(("big",))
        time.sleep(1.0)
        go = time.time() + 0.5
        clients.all(("big_moves", go, 8.0, 5.0, args.pace))
        alone = [x for s in clients.all(("take",)) for x in s.big]
        crowd = [args.spectators // wprocs + (i < args.spectators % wprocs) for i in range(wprocs)]
        t_join = time.time()
        watchers.all(*[("crowd", big, crowd[i], i) for i in range(wprocs)])
        joined = time.time() - t_join
        watchers.one(("stall", 0, [{"type": "join", "id": 1, "room": big, "role": "spectator"},
                                  {"type": "follow", "id": 2, "seats": [1, 2]}]))  # fmt: skip
        time.sleep(2.0)  # the last count is told
        slow0 = sum(metric(p, "slow_closes_total") for p in ports)
        go = time.time() + 0.5
        c0 = cpu()
        clients.all(("big_moves", go, args.seconds, 5.0, args.pace))
        c1 = cpu()
        time.sleep(1.0)
        crowded = [x for s in clients.all(("take",)) for x in s.big]
        parts = watchers.all(("take",))
        spread = []
        arrivals: dict[int, list[float]] = {}
        for share in parts:
            for seq, times in share.arrivals.items():
                arrivals.setdefault(seq, []).extend(times)
        complete = [t for t in arrivals.values() if len(t) == args.spectators]
        spread = [max(t) - min(t) for t in complete]
        counts = [c for s in parts for c in s.counts]
        slow1 = sum(metric(p, "slow_closes_total") for p in ports)
        print(
            f"{args.spectators} spectators joined in {joined:.1f} s: `spectators` events each, "
            f"mean {statistics.mean(counts or [0]):.1f} max {max(counts or [0])} "
            f"(one per newcomer would be ~{args.spectators / 2:.0f})"
        )
        print(
            f"progress → first and last of {args.spectators} spectators "
            f"({len(complete)} of {len(arrivals)} events reached all): {quantiles(spread)}"
        )
        print(
            f"the room's players, before:         {quantiles(alone)}\n"
            f"the room's players, with the crowd: {quantiles(crowded)}  "
            f"(p99 ratio {p99(crowded) / max(p99(alone), 1e-9):.2f}; the directory load "
            f"runs on meanwhile; {used(c0, c1, args.seconds)})"
        )
        print(f"spectator that stopped reading closed (1013) meanwhile: {int(slow1 - slow0)}")
        print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
