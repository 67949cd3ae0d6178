"""Tournament benchmark: one round with N bot players (1,000 by default) at one move a second,
over two workers on one Redis (issue 16).

Two loads on the same two workers, same players and pace — a plain race, the tournament
round, the plain race again (the tournament's CPU is compared with the mean of both):

* a plain race: the players in rooms of 16 (the rooms a tournament round uses), each room
  created and started by one of its players (``bench/race.py``'s paced load);
* a tournament round: every player identified, entered, seated by the tournament in the
  round's rooms, playing one move a second; every two seconds one of them resigns, which
  changes the round's results (a "change"), and every player's ``tournament_standings``
  must show it.

Both loads are paced alike — each player moves at a random point of every second, drawn
per client process — and the round's players send their moves as leanly as the plain
race's (the load generator's own work is part of every round trip it measures).

Printed: move round trip (send → ``ack``) p50 / p99 for each load, the server CPU per move
(all workers, µs of one core) and the tournament's ratio to the plain race's, and how long
after a change each player's standings showed it (p50 / p99 / max over every player and
change: from the resign being sent to the first push counting its result), the round
trips of the moves sent within a second after a change apart from the others (whether the
round's tail comes with its changes), and the load generator's own CPU and loop lag in the
round (how late its processes woke from 10 ms sleeps: a round trip it measures includes
its own delays, such as reading 500 standings frames at once).

Everything listens on 127.0.0.1; every phase is bounded in time. A redis-server on a free
port is started unless ``--redis URL`` is given; the records go to a temporary directory.

    python3 bench/tournament.py                 # 1,000 players, 20 s of each load
    python3 bench/tournament.py --quick         # 200 players, 10 s
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import os
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import race as race_bench  # noqa: E402  (bench/race.py: processes, CPU, the plain race)

from protocol.messages import PROTOCOL_VERSION  # noqa: E402

__all__ = ["main"]

MOVE = "s"  # the stock: legal in every position of Klondike
ROOM = 16  # a round's room size (server.tournaments.live.ROOM_SIZE)
SETTLE = 8.0  # seconds between loads: the last one's players leave, their seats are freed
#: a standings push's count of the round's results: the first "finished" after "live"
#: (the push is not parsed whole: the load generator reads 500 at once)
_FINISHED = re.compile(rb'"finished":(\d+)')


# --------------------------------------------------------------------- a bot


class Bot:
    """One player's connection: replies matched by id, seats and standings noted."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.ids = iter(range(1, 1 << 30))
        loop = asyncio.get_running_loop()
        self.seat: asyncio.Future[dict[str, Any]] = loop.create_future()
        #: the round's start as the host hears it (``round_starting``)
        self.round_starting: asyncio.Future[dict[str, Any]] = loop.create_future()
        #: (wall time, results counted in the round) of every standings push
        self.pushes: list[tuple[float, int]] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        import orjson

        with contextlib.suppress(Exception):
            while True:
                data: bytes = await self.ws.recv(decode=False)
                if data.startswith(b'{"seq":'):
                    continue  # the room's events: not measured here
                if data.startswith(b'{"type":"tournament_standings"'):
                    at = data.find(b'"live":{')
                    found = _FINISHED.search(data, at) if at >= 0 else None
                    self.pushes.append((time.time(), int(found.group(1)) if found else 0))
                    continue
                msg = orjson.loads(data)
                if msg.get("type") == "tournament_seat":
                    if not self.seat.done():
                        self.seat.set_result(msg)
                    continue
                if msg.get("kind") == "round_starting" and not self.round_starting.done():
                    self.round_starting.set_result(msg["data"])
                    continue
                future = self.waiting.pop(msg.get("id", -1), None)
                if future is not None and not future.done():
                    # when the reply was read: the asking task resumes a turn of this busy
                    # loop later
                    msg["_read_at"] = time.perf_counter()
                    future.set_result(msg)

    async def request(self, payload: dict[str, Any]) -> dict[str, Any]:
        import orjson

        rid = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = future
        await self.ws.send(orjson.dumps({**payload, "id": rid}).decode())
        reply = await asyncio.wait_for(future, 60)
        return reply

    async def move(self) -> dict[str, Any]:
        """A move, as lean as bench/race.py's players send theirs (the frame written as
        text, the reply awaited without a timer of its own: the load is bounded as a
        whole)."""
        rid = next(self.ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[rid] = future
        await self.ws.send(f'{{"type":"move","id":{rid},"move":"{MOVE}"}}')
        return await future


async def connect(url: str) -> Bot:
    """A connection past ``hello``."""
    from websockets.asyncio.client import connect as ws_connect

    ws = await ws_connect(
        url, compression=None, max_queue=None, open_timeout=60, max_size=None, ping_interval=None
    )
    await ws.send(f'{{"type":"hello","v":{PROTOCOL_VERSION},"client":"bench"}}')
    await ws.recv()
    return Bot(ws)


async def player(url: str, tid: str, name: str) -> Bot:
    """An identified player entered in the tournament (which is open on its connection)."""
    bot = await connect(url)
    made = await bot.request({"type": "new_player", "name": name})
    if made.get("type") != "identity":
        raise RuntimeError(f"no identity: {made}")
    joined = await bot.request({"type": "tournament_join", "tournament": tid, "name": name})
    if joined.get("type") != "tournament":
        raise RuntimeError(f"not joined: {joined}")
    return bot


@dataclass
class Share:
    """What one client process measured."""

    latencies: list[float] = field(default_factory=list)
    answered: int = 0
    refused: int = 0
    #: every bot's standings pushes, and the wall times of the changes this process made
    pushes: list[list[tuple[float, int]]] = field(default_factory=list)
    changes: dict[int, float] = field(default_factory=dict)
    #: how late this process's event loop woke from 10 ms sleeps in the counted span (s):
    #: a round trip measured here includes whatever the load generator itself was doing
    lags: list[float] = field(default_factory=list)
    #: the same round trips as ``latencies``, ending when the reader task read the reply
    read: list[float] = field(default_factory=list)
    #: this process's CPU over the counted span (cores)
    cpu: float = 0.0
    #: the wall time each of ``latencies`` was sent at (to tell the moves just after a
    #: change from the others)
    sent_at: list[float] = field(default_factory=list)


async def _client(pipe: Connection, url: str, tid: str, first: int, count: int) -> None:
    limit = asyncio.Semaphore(50)  # not thousands of handshakes at once

    async def one(i: int) -> Bot:
        async with limit:
            return await player(url, tid, f"P{i}")

    bots = await asyncio.gather(*(one(first + i) for i in range(count)))
    pipe.send("ready")
    loop = asyncio.get_running_loop()
    seconds, warmup, resigners = await loop.run_in_executor(None, pipe.recv)
    share = Share()
    # each bot's moves at its own random point of every second, drawn per process as
    # bench/race.py's paced load draws them: offsets taken from the bot's index, the same
    # in every process, would send the processes' moves in simultaneous pairs
    rng = random.Random(os.getpid())
    offsets = [rng.random() for _ in bots]

    async def lag(begin: float, end: float) -> None:
        """The loop's own lateness, sampled every 10 ms from ``begin`` to ``end``."""
        await asyncio.sleep(max(0.0, begin - time.time()))
        cpu0, wall0 = _cpu(), time.perf_counter()
        while time.time() < end:
            asked = time.perf_counter()
            await asyncio.sleep(0.01)
            share.lags.append(time.perf_counter() - asked - 0.01)
        share.cpu = (_cpu() - cpu0) / (time.perf_counter() - wall0)

    async def play(index: int, bot: Bot) -> None:
        seat = await asyncio.wait_for(bot.seat, 120)
        joined = await bot.request(
            {"type": "resume", "room": seat["room"], "token": seat["token"], "last_seq": None}
        )
        if joined.get("type") != "joined":
            raise RuntimeError(f"seat not taken: {joined}")
        start = time.time() + (seat["start_at"] - seat["now"]) / 1000 + 0.05
        stop, count_from = start + seconds, start + warmup
        if index == 0:
            sampler.append(asyncio.create_task(lag(count_from, stop)))
        resign_at = resigners.get(first + index)
        offset = offsets[index]
        for i in range(1_000_000):
            at = start + offset + i
            if resign_at is not None and at >= start + resign_at:
                await asyncio.sleep(max(0.0, start + resign_at - time.time()))
                # the change counts from the resign's sending: its result cannot exist
                # before, so the delay measured includes the request's own way
                sent_at = time.time()
                reply = await bot.request({"type": "resign"})
                if reply.get("type") == "ok":
                    share.changes[first + index] = sent_at
                return
            if at >= stop:
                return
            await asyncio.sleep(max(0.0, at - time.time()))
            sent = time.perf_counter()
            reply = await bot.move()
            done = time.perf_counter()
            if time.time() >= count_from:
                share.latencies.append(done - sent)
                share.sent_at.append(time.time() - (done - sent))
                share.read.append(float(reply.get("_read_at", done)) - sent)
                if reply.get("type") == "ack":
                    share.answered += 1
                else:
                    share.refused += 1

    sampler: list[asyncio.Task[None]] = []
    await asyncio.wait_for(asyncio.gather(*(play(i, b) for i, b in enumerate(bots))), seconds + 180)
    for task in sampler:
        await task
    await asyncio.sleep(3)  # the last pushes
    share.pushes = [b.pushes for b in bots]
    for b in bots:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(b.ws.close(), 2)
    pipe.send(share)


def _cpu() -> float:
    """This process's CPU time so far (s)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _client_main(pipe: Connection, url: str, tid: str, first: int, count: int) -> None:
    race_bench.quiet_collector()
    try:
        import uvloop

        uvloop.run(_client(pipe, url, tid, first, count))
    except ImportError:
        asyncio.run(_client(pipe, url, tid, first, count))


# --------------------------------------------------------------------- the tournament run


@dataclass
class TournamentRun:
    """The merged figures of the tournament round."""

    answered: int
    refused: int
    latencies: list[float]
    server_cpu: float  # cores, over the counted span
    span: float
    standings_delays: list[float]
    changes: int
    client_lags: list[float]
    read_latencies: list[float]
    client_cpu: float
    #: the round trips of the moves sent within a second after a change, and of the others
    after_change: list[float] = field(default_factory=list)
    elsewhere: list[float] = field(default_factory=list)

    def percentile(self, values: list[float], q: float) -> float:
        s = sorted(values) or [0.0]
        return s[min(len(s) - 1, int(len(s) * q))]

    @property
    def server_us(self) -> float:
        rate = self.answered / self.span if self.span else 0.0
        return self.server_cpu / rate * 1e6 if rate else 0.0


def run_tournament(
    url: str, players: int, procs: int, seconds: float, warmup: float, server: list[int]
) -> TournamentRun:
    """Create the tournament, enter the players (in ``procs`` processes), start its round
    and measure it."""

    async def host_create() -> tuple[str, str, str]:
        """The host (who does not play) creates the tournament: its id, their identity."""
        host = await connect(url)
        me = await host.request({"type": "new_player", "name": "Host"})
        made = await host.request(
            {
                "type": "tournament_create",
                "settings": {
                    "name": "Bench cup",
                    "game": "klondike",
                    "rounds": 1,
                    "round_time_limit": 600,
                    "round_start": "manual",
                    "max_players": max(2, players),
                    "deals": "any",
                },
            }
        )
        await host.ws.close()
        if made.get("type") != "tournament":
            raise RuntimeError(f"not created: {made}")
        return made["page"]["id"], me["player"], me["secret"]

    async def host_start(tid: str, player: str, secret: str) -> float:
        """The host starts it; the wall time the round starts (its ``round_starting``)."""
        host = await connect(url)
        try:
            await host.request({"type": "identify", "player": player, "secret": secret})
            await host.request({"type": "tournament_open", "tournament": tid})
            started = await host.request(
                {"type": "tournament_host", "tournament": tid, "act": "start"}
            )
            if started.get("type") != "ok":
                raise RuntimeError(f"not started: {started}")
            event = await asyncio.wait_for(host.round_starting, 120)
            return float(time.time() + (event["start_at"] - event["now"]) / 1000)
        finally:
            await host.ws.close()

    tid, host_id, host_secret = asyncio.run(host_create())
    changes = max(1, int((seconds - warmup - 2) // 2))
    # player i resigns at 2 s, 4 s … after the start: one change every two seconds
    resigners = {i * (players // changes): 2.0 + 2 * i for i in range(changes)}
    ctx = mp.get_context("spawn")
    shares = [players // procs + (i < players % procs) for i in range(procs)]
    children = []
    first = 0
    for count in filter(None, shares):
        mine, theirs = ctx.Pipe()
        child = ctx.Process(target=_client_main, args=(theirs, url, tid, first, count))
        child.start()
        children.append((child, mine))
        first += count
    try:
        for _, pipe in children:
            if not pipe.poll(600) or pipe.recv() != "ready":
                raise RuntimeError("a client process did not get ready")
        for _, pipe in children:
            pipe.send((seconds, warmup, resigners))
        # the round starts after the tournament countdown: its start, by the host's event
        start = asyncio.run(host_start(tid, host_id, host_secret))
        time.sleep(max(0.0, start + warmup - time.time()))
        c0 = race_bench.cpu_seconds(server)
        time.sleep(max(0.0, start + seconds - time.time()))
        c1 = race_bench.cpu_seconds(server)
        parts: list[Share] = []
        for _, pipe in children:
            if not pipe.poll(seconds + 240):
                raise RuntimeError("a client process did not finish")
            parts.append(pipe.recv())
    finally:
        for child, _ in children:
            child.join(10)
            if child.is_alive():
                child.kill()
    made = {i: t for p in parts for i, t in p.changes.items()}
    order = sorted(made.values())  # the k-th change is the k-th result counted
    delays = []
    for p in parts:
        for pushes in p.pushes:
            for k, at in enumerate(order, 1):
                seen = next((t for t, finished in pushes if finished >= k and t >= at), None)
                if seen is not None:
                    delays.append(max(0.0, seen - at))
    span = seconds - warmup
    after_change: list[float] = []
    elsewhere: list[float] = []
    for p in parts:
        for sent_at, latency in zip(p.sent_at, p.latencies, strict=True):
            near = any(0.0 <= sent_at - at < 1.0 for at in order)
            (after_change if near else elsewhere).append(latency)
    return TournamentRun(
        sum(p.answered for p in parts),
        sum(p.refused for p in parts),
        [x for p in parts for x in p.latencies],
        (c1 - c0) / span,
        span,
        delays,
        len(order),
        [x for p in parts for x in p.lags],
        [x for p in parts for x in p.read],
        sum(p.cpu for p in parts),
        after_change,
        elsewhere,
    )


# --------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run both loads; print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1000, help="players (1000)")
    ap.add_argument("--seconds", type=float, default=20.0, help="seconds of each load (20)")
    ap.add_argument("--client-procs", type=int, default=2, help="load generator processes (2)")
    ap.add_argument("--quick", action="store_true", help="200 players, 10 s")
    ap.add_argument("--redis", help="use this Redis instead of starting one")
    args = ap.parse_args(argv)
    if args.quick:
        args.players, args.seconds = 200, 10.0
    warmup = 2.0
    players = args.players

    with contextlib.ExitStack() as stack:
        redis_url, redis_pids = args.redis, []
        if redis_url is None:
            binary = shutil.which("redis-server") or "/usr/bin/redis-server"
            rport = race_bench.free_port()
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            redis_argv = [binary, "--port", str(rport), "--bind", "127.0.0.1"]
            redis_argv += ["--save", "", "--appendonly", "no", "--dir", tmp]
            redis_pids = [stack.enter_context(race_bench.process(redis_argv, rport)).pid]
            redis_url = f"redis://127.0.0.1:{rport}/0"
        data = stack.enter_context(tempfile.TemporaryDirectory())
        port = race_bench.free_port()
        serve = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
        serve += ["--redis", redis_url, "--workers", "2", "--data", data]
        serve += ["--rate", "1000000", "--burst", "1000000", "--countdown", "0.5"]
        serve += ["--identity-limit", "1000000", "--tournament-countdown", "15"]
        # the players of a load leave when it ends: their seats are freed a second later,
        # not thirty (the grace period), so that work is over before the next load starts
        serve += ["--grace", "1"]
        # no deals of the day proved ahead: each worker's solver process would take a core
        # beside the load
        serve += ["--no-daily-warm", "--log-level", "WARNING"]
        proc = stack.enter_context(race_bench.process(serve, port))
        time.sleep(1.0)  # the workers start after the port opens
        pids = race_bench.server_pids(proc)
        url = f"ws://127.0.0.1:{port}"
        print(
            f"{os.cpu_count()} CPUs, 2 workers on Redis, {args.client_procs} client processes; "
            f"{players} players at 1 move/s, {args.seconds:g} s a load, first {warmup:g} s "
            f"not counted"
        )

        def plain_race(label: str) -> race_bench.Result:
            result = race_bench.drive(
                "race",
                url,
                players // ROOM,
                ROOM,
                args.client_procs,
                paced=True,
                seconds=args.seconds,
                warmup=warmup,
                server=pids,
                redis=redis_pids,
            )
            print(result.line(f"{label}, rooms of {ROOM} ×{players // ROOM * ROOM}"))
            time.sleep(SETTLE)
            return result

        # the tournament between two plain races: its ratio is to their mean (the machine's
        # pace drifts between runs)
        before = plain_race("plain race (before)")
        run = run_tournament(url, players, args.client_procs, args.seconds, warmup, pids)
        time.sleep(SETTLE)
        rate = run.answered / run.span if run.span else 0.0
        print(
            f"{'tournament round ×' + str(players):<32} {rate:8.0f}/s  "
            f"p50 {run.percentile(run.latencies, 0.5) * 1000:6.2f} ms  "
            f"p99 {run.percentile(run.latencies, 0.99) * 1000:6.2f} ms   "
            f"CPU server {run.server_cpu:4.2f} clients {run.client_cpu:4.2f}  "
            f"server µs/move {run.server_us:3.0f}"
            + (f"  ({run.refused} refused)" if run.refused else "")
        )
        if run.read_latencies:
            r = run.read_latencies
            print(
                f"the same round trips ended when the client's reader read the ack: "
                f"p50 {run.percentile(r, 0.5) * 1000:.2f} ms, "
                f"p99 {run.percentile(r, 0.99) * 1000:.2f} ms"
            )
        if run.after_change and run.elsewhere:
            a, e = run.after_change, run.elsewhere
            print(
                f"moves sent within 1 s after a change ({len(a)}): "
                f"p50 {run.percentile(a, 0.5) * 1000:.2f} ms, "
                f"p99 {run.percentile(a, 0.99) * 1000:.2f} ms; the others ({len(e)}): "
                f"p50 {run.percentile(e, 0.5) * 1000:.2f} ms, "
                f"p99 {run.percentile(e, 0.99) * 1000:.2f} ms"
            )
        if run.client_lags:
            lags = run.client_lags
            print(
                f"load generator's own loop lag in the round (10 ms sleeps, "
                f"{len(lags)} samples): p50 {statistics.median(lags) * 1000:.1f} ms, "
                f"p99 {run.percentile(lags, 0.99) * 1000:.1f} ms, max {max(lags) * 1000:.1f} ms"
            )
        after = plain_race("plain race (after)")
        baseline = (before.server_us + after.server_us) / 2
        ratio = run.server_us / baseline if baseline else float("nan")
        print(f"server CPU per move, tournament / plain race (mean of both): {ratio:.2f}")
        if run.standings_delays:
            d = run.standings_delays
            print(
                f"standings after a change ({run.changes} changes × {players} players, "
                f"{len(d)} seen): p50 {statistics.median(d) * 1000:.0f} ms, "
                f"p99 {run.percentile(d, 0.99) * 1000:.0f} ms, max {max(d) * 1000:.0f} ms"
            )
        else:
            print("standings after a change: none seen")
    return 0


if __name__ == "__main__":
    sys.exit(main())
