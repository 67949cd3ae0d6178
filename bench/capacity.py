"""Capacity of one worker: 10,000 connected clients, and one room watched by 1,000.

One ``samedeal serve`` worker (memory store, or ``--redis``: a redis-server started on a
free port) on 127.0.0.1, and clients in other processes:

1. 1,000 players (250 rooms × 4) are seated and their races started;
2. 9,000 idle connections join: 450 lobby rooms of a host and 19 spectators, which then
   send nothing and receive nothing;
3. the players play one move a second each (``s``, the stock) for ``--seconds``; meanwhile
   one more room — a host and 1,000 spectators, 11,001 connections in all — gets a move
   every 0.25 s from its host, and each spectator notes when each ``progress`` arrives.

Printed: the worker's memory (RSS) per idle connection (the growth from step 1 to step 2,
over 9,000; goal ≤ 30 KiB), the players' move round trip p50 / p99 (goal p99 ≤ 25 ms),
the worker's CPU, and for the watched room the time from the host's move to the first and
to the last spectator's ``progress``, and the spread last − first (goal ≤ 100 ms).

Every phase is bounded in connections and time; everything listens on 127.0.0.1.

    python bench/capacity.py                 # about 1.5 minutes
    python bench/capacity.py --redis         # the same on Redis
    python bench/capacity.py --players 200 --idle 1000 --watchers 200 --seconds 8  # quick
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing as mp
import random
import statistics
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import race  # bench/race.py: processes, clients, the paced load

from protocol.messages import PROTOCOL_VERSION

__all__ = ["main"]

IDLE_PER_ROOM = 20  # a host and 19 spectators


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def _connect(url: str) -> Any:
    from websockets.asyncio.client import connect

    ws = await connect(url, compression=None, max_queue=None, open_timeout=60, ping_interval=None)
    await ws.send(race._frame({"type": "hello", "v": PROTOCOL_VERSION, "client": "bench"}))
    await race._reply(ws)
    return ws


async def _room_of(url: str, host_name: str) -> tuple[Any, str]:
    import orjson

    host = await _connect(url)
    await host.send(race._frame({"type": "create", "id": 1, "game": "klondike", "name": host_name}))
    return host, orjson.loads(await race._reply(host))["room"]


async def _spectate(url: str, code: str) -> Any:
    ws = await _connect(url)
    await ws.send(race._frame({"type": "join", "id": 1, "room": code, "role": "spectator"}))
    await race._reply(ws)
    return ws


# --------------------------------------------------------------------- client roles


async def _players(pipe: Connection, url: str, rooms: int) -> None:
    """Each player one move a second from ``go_at`` (wall clock), starting at a random
    offset in the first second; round trips of the moves sent after ``warmup`` seconds,
    each with the time it was sent (seconds from the start)."""
    conns = await race._seat_rooms([url], rooms, 4, affine=False)
    pipe.send("ready")
    go_at, seconds, warmup = await asyncio.get_running_loop().run_in_executor(None, pipe.recv)
    await asyncio.sleep(max(0.0, go_at - time.time()))
    t0 = time.perf_counter()
    rng = random.Random(1)
    trips: list[tuple[float, float]] = []
    refused = 0

    async def player(ws: Any) -> None:
        nonlocal refused
        offset = rng.random()
        for i in range(int(seconds)):
            await asyncio.sleep(t0 + offset + i - time.perf_counter())
            sent = time.perf_counter()
            await ws.send(f'{{"type":"move","id":{i},"move":"s"}}')
            data = await race._reply(ws)
            if sent - t0 >= warmup:
                trips.append((sent - t0, time.perf_counter() - sent))
                refused += not data.startswith(b'{"type":"ack"')

    await asyncio.wait_for(asyncio.gather(*(player(ws) for ws in conns)), seconds + 60)
    pipe.send((trips, refused, time.perf_counter() - t0 - warmup))
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # close


async def _idle(pipe: Connection, url: str, rooms: int) -> None:
    limit = asyncio.Semaphore(20)
    conns: list[Any] = []

    async def room() -> None:
        async with limit:
            host, code = await _room_of(url, "idle")
            conns.append(host)
            for _ in range(IDLE_PER_ROOM - 1):
                conns.append(await _spectate(url, code))

    await asyncio.wait_for(asyncio.gather(*(room() for _ in range(rooms))), 600)
    pipe.send("ready")
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # close


async def _watchers(pipe: Connection, url: str, code: str, count: int) -> None:
    arrivals: dict[int, list[float]] = {}
    limit = asyncio.Semaphore(50)

    async def join() -> Any:
        async with limit:
            return await _spectate(url, code)

    conns = await asyncio.wait_for(asyncio.gather(*(join() for _ in range(count))), 600)

    async def watch(ws: Any) -> None:
        while True:  # until cancelled: no timer per message
            data: bytes = await ws.recv(decode=False)
            if b'"type":"progress"' in data:
                seq = int(data[7 : data.index(b",")])  # {"seq":N,…
                arrivals.setdefault(seq, []).append(time.perf_counter())

    tasks = [asyncio.create_task(watch(ws)) for ws in conns]
    pipe.send("ready")
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # stop
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    pipe.send({seq: (min(t), max(t), len(t)) for seq, t in arrivals.items()})
    await asyncio.get_running_loop().run_in_executor(None, pipe.recv)  # close


def _child(role: str, pipe: Connection, *args: Any) -> None:
    roles: dict[str, Any] = {"players": _players, "idle": _idle, "watchers": _watchers}
    run = roles[role]
    race.quiet_collector()
    try:
        import uvloop

        uvloop.run(run(pipe, *args))
    except ImportError:
        asyncio.run(run(pipe, *args))


class Children:
    """Client processes and their pipes."""

    def __init__(self) -> None:
        self.ctx = mp.get_context("spawn")
        self.procs: list[tuple[Any, Connection, str]] = []

    def start(self, role: str, *args: Any) -> Connection:
        mine, theirs = self.ctx.Pipe()
        proc = self.ctx.Process(target=_child, args=(role, theirs, *args))
        proc.start()
        self.procs.append((proc, mine, role))
        return mine

    @staticmethod
    def expect(pipe: Connection, timeout: float) -> Any:
        if not pipe.poll(timeout):
            raise RuntimeError("a client process did not answer in time")
        return pipe.recv()

    def close(self) -> None:
        for _, pipe, _ in self.procs:
            with contextlib.suppress(Exception):
                pipe.send("close")
        for proc, _, _ in self.procs:
            proc.join(20)
            if proc.is_alive():
                proc.kill()


# --------------------------------------------------------------------- main


async def _host_moves(
    url: str,
    code_out: list[str],
    ready: asyncio.Event,
    go: asyncio.Event,
    moves: int,
    sent: dict[int, float],
) -> None:
    """The watched room's host: starts its race, then one move every 0.25 s; notes when
    each move was sent, by the seq of its progress (read back from its own stream)."""
    import orjson

    host, code = await _room_of(url, "watched")
    code_out.append(code)
    ready.set()
    await go.wait()
    await host.send(race._frame({"type": "start", "id": 2}))
    while True:
        data = await host.recv(decode=False)
        if b'"race_starting"' in data:
            event = orjson.loads(data)
            await asyncio.sleep((event["start_at"] - event["now"]) / 1000 + 0.05)
            break
    for i in range(moves):
        t = time.perf_counter()
        await host.send(f'{{"type":"move","id":{100 + i},"move":"s"}}')
        while True:
            data = await asyncio.wait_for(host.recv(decode=False), 10)
            if data.startswith(b'{"seq":') and b'"type":"progress"' in data:
                sent[int(data[7 : data.index(b",")])] = t
                break
        await asyncio.sleep(0.25)
    await host.close()


def main(argv: list[str] | None = None) -> int:
    """Run the capacity scenario; print its figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--players", type=int, default=1000, help="racing players (1000)")
    ap.add_argument("--idle", type=int, default=9000, help="idle connections (9000)")
    ap.add_argument("--watchers", type=int, default=1000, help="spectators of one room (1000)")
    ap.add_argument("--seconds", type=float, default=30.0, help="paced load (30 s)")
    ap.add_argument("--redis", action="store_true", help="the worker on a local redis-server")
    args = ap.parse_args(argv)
    warmup = 2.0

    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        redis_url = race.start_redis(stack, tmp).url if args.redis else None
        port = race.free_port()
        proc = stack.enter_context(race.process(race._serve_argv(port, redis_url, 1), port))
        url = f"ws://127.0.0.1:{port}"
        children = Children()
        stack.callback(children.close)
        time.sleep(0.5)
        base = rss_kib(proc.pid)

        player_pipe = children.start("players", url, args.players // 4)
        children.expect(player_pipe, 300)
        seated = rss_kib(proc.pid)

        idle_rooms = args.idle // IDLE_PER_ROOM
        idle_pipes = [
            children.start("idle", url, n) for n in (idle_rooms // 2, idle_rooms - idle_rooms // 2)
        ]
        t0 = time.monotonic()
        for pipe in idle_pipes:
            children.expect(pipe, 900)
        connect_s = time.monotonic() - t0
        time.sleep(1.0)
        idle = rss_kib(proc.pid)
        per_idle = (idle - seated) / max(1, idle_rooms * IDLE_PER_ROOM)
        print(
            f"worker RSS: {base / 1024:.0f} MiB at start, {seated / 1024:.0f} MiB with "
            f"{args.players} players seated, {idle / 1024:.0f} MiB with "
            f"{idle_rooms * IDLE_PER_ROOM} idle connections more (made in {connect_s:.0f} s): "
            f"{per_idle:.1f} KiB per idle connection"
        )

        async def scenario() -> tuple[Any, dict[int, float], list[dict[int, Any]], float]:
            code: list[str] = []
            ready, go = asyncio.Event(), asyncio.Event()
            sent: dict[int, float] = {}
            host = asyncio.create_task(_host_moves(url, code, ready, go, 40, sent))
            await ready.wait()
            loop = asyncio.get_running_loop()
            halves = (args.watchers // 2, args.watchers - args.watchers // 2)
            watcher_pipes = [children.start("watchers", url, code[0], n) for n in halves]
            for pipe in watcher_pipes:
                await loop.run_in_executor(None, children.expect, pipe, 900)
            go_at = time.time() + 0.5
            player_pipe.send((go_at, args.seconds, warmup))
            cpu0 = race.cpu_seconds([proc.pid])
            await asyncio.sleep(0.5 + warmup)
            go.set()
            await host
            share = await loop.run_in_executor(
                None, children.expect, player_pipe, args.seconds + 120
            )
            cpu = (race.cpu_seconds([proc.pid]) - cpu0) / (args.seconds + warmup)
            # the spectators report once the players are done: their report is a burst of
            # CPU on this machine, which would show in the players' round trips
            for pipe in watcher_pipes:
                pipe.send("stop")
            seen = [await loop.run_in_executor(None, children.expect, p, 60) for p in watcher_pipes]
            return share, sent, seen, cpu

        (trips, refused, span), sent, seen, cpu = asyncio.run(scenario())
        times = sorted(t for _, t in trips)

        def pct(q: float) -> float:
            return times[min(len(times) - 1, int(len(times) * q))] * 1000 if times else 0.0

        slow = sorted(trips, key=lambda x: -x[1])[:5]
        print(
            f"{args.players} players at 1 move/s beside {idle_rooms * IDLE_PER_ROOM} idle and "
            f"{args.watchers} watching: {len(trips) / span:.0f} moves/s ({refused} refused), "
            f"round trip p50 {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, p99.9 "
            f"{pct(0.999):.1f} ms; worker CPU {cpu:.2f} cores; the slowest sent at "
            + ", ".join(f"{at:.1f} s ({t * 1000:.0f} ms)" for at, t in slow)
        )
        first, last, spread, counts = [], [], [], []
        for seq, at in sorted(sent.items()):
            parts = [s[seq] for s in seen if seq in s]
            if not parts:
                continue
            lo, hi = min(p[0] for p in parts), max(p[1] for p in parts)
            first.append((lo - at) * 1000)
            last.append((hi - at) * 1000)
            spread.append((hi - lo) * 1000)
            counts.append(sum(p[2] for p in parts))
        if spread:
            print(
                f"one room, {args.watchers} spectators, {len(spread)} moves: every progress "
                f"reached {min(counts)}–{max(counts)} of them; host's move → first spectator "
                f"p50 {statistics.median(first):.1f} ms, → last p50 "
                f"{statistics.median(last):.1f} ms, max {max(last):.1f} ms; last − first "
                f"p50 {statistics.median(spread):.1f} ms, max {max(spread):.1f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
