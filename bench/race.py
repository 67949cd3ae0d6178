"""Race server benchmark: R rooms × P players on loopback.

Runs ``samedeal serve`` with Redis and one, then two workers, and drives it with real
websocket clients (spread over a few client processes):

* paced: every player plays one move a second for ``--paced-seconds``;
* flat out: every player plays ``--moves`` moves back to back (next move after the ack).

Prints accepted moves per second and move round-trip latency (send → ack) p50/p99; then
runs the same flat-out load against a bare websockets echo server and prints the ratio.
Every phase is bounded in count and time. A redis-server on a free port is started unless
``--redis URL`` is given.

    python bench/race.py --rooms 10 --players 4 --moves 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

__all__ = ["main"]


@dataclass
class Result:
    """What one load run measured."""

    moves: int
    seconds: float
    latencies: list[float]

    def line(self, label: str) -> str:
        lat = sorted(self.latencies) or [0.0]
        p50 = lat[len(lat) // 2] * 1000
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000
        rate = self.moves / self.seconds if self.seconds else 0.0
        return (
            f"{label:<34} {self.moves:>7} moves {self.seconds:6.2f}s "
            f"{rate:9.0f} moves/s   p50 {p50:6.2f} ms   p99 {p99:6.2f} ms"
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_port(port: int, timeout: float = 15.0) -> None:
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
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        wait_port(port)
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# --------------------------------------------------------------------- client side


async def _race_rooms(
    url: str, rooms: int, players: int, mode: str, moves: int, seconds: float
) -> Result:
    from clients.client import RaceClient
    from protocol import Ack

    clients: list[list[RaceClient]] = []
    for _ in range(rooms):
        host = await RaceClient.connect(url)
        joined = await host.create("klondike", deal="random", max_players=players)
        room = [host]
        for _ in range(players - 1):
            c = await RaceClient.connect(url)
            await c.join(joined.room)
            room.append(c)
        clients.append(room)
    starts = []
    for room in clients:
        await room[0].start()
        starts.append(await room[0].next_event("race_starting"))
    wait = max((s.start_at - s.now) / 1000 for s in starts)  # type: ignore[union-attr]
    await asyncio.sleep(wait + 0.05)

    latencies: list[float] = []
    accepted = 0
    deadline = time.perf_counter() + (seconds + 1.5 if mode == "paced" else 60.0)

    async def player(c: RaceClient, offset: float) -> None:
        nonlocal accepted
        if mode == "paced":
            await asyncio.sleep(offset)  # players are not in lockstep
        for i in range(moves):
            if time.perf_counter() > deadline:
                return
            t0 = time.perf_counter()
            reply = await c.move("s")
            latencies.append(time.perf_counter() - t0)
            if isinstance(reply, Ack):
                accepted += 1
            if mode == "paced":
                await asyncio.sleep(max(0.0, offset + i + 1 - (time.perf_counter() - t_start)))

    t_start = time.perf_counter()
    rng = random.Random(1)
    await asyncio.gather(*(player(c, rng.random()) for room in clients for c in room))
    elapsed = time.perf_counter() - t_start
    for room in clients:
        for c in room:
            await c.close()
    return Result(accepted, elapsed, latencies)


async def _echo_load(url: str, clients: int, moves: int) -> Result:
    from websockets.asyncio.client import connect

    conns = [await connect(url) for _ in range(clients)]
    latencies: list[float] = []
    frame = '{"type":"move","id":1,"move":"s"}'

    async def one(ws: object) -> None:
        for _ in range(moves):
            t0 = time.perf_counter()
            await ws.send(frame)  # type: ignore[attr-defined]
            await ws.recv()  # type: ignore[attr-defined]
            latencies.append(time.perf_counter() - t0)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(ws) for ws in conns))
    elapsed = time.perf_counter() - t0
    for ws in conns:
        await ws.close()
    return Result(len(latencies), elapsed, latencies)


def _run(coro_name: str, *args: object) -> Result:
    """Run one client share in this (child) process."""
    try:
        import uvloop

        runner = uvloop.run
    except ImportError:
        runner = asyncio.run
    coro = _race_rooms(*args) if coro_name == "race" else _echo_load(*args)  # type: ignore[arg-type]
    result: Result = runner(coro)
    return result


def drive(procs: int, kind: str, *args: object) -> Result:
    """The same load split over ``procs`` client processes; the results merged."""
    rooms_or_clients = int(args[1])  # type: ignore[call-overload]
    shares = [rooms_or_clients // procs + (i < rooms_or_clients % procs) for i in range(procs)]
    shares = [s for s in shares if s]
    with ProcessPoolExecutor(len(shares)) as pool:
        futures = [pool.submit(_run, kind, args[0], share, *args[2:]) for share in shares]
        results = [f.result(timeout=180) for f in futures]
    return Result(
        sum(r.moves for r in results),
        max(r.seconds for r in results),
        [x for r in results for x in r.latencies],
    )


# --------------------------------------------------------------------- echo server


async def _echo_server(port: int) -> None:
    from websockets.asyncio.server import serve

    async def echo(ws: object) -> None:
        async for message in ws:  # type: ignore[attr-defined]
            await ws.send(message)  # type: ignore[attr-defined]

    stop = asyncio.get_running_loop().create_future()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set_result, None)
    async with serve(echo, "127.0.0.1", port, compression=None):  # as the race server
        await stop


# --------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print one line per run."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rooms", type=int, default=10)
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--moves", type=int, default=200, help="moves per player, flat out")
    ap.add_argument("--paced-seconds", type=float, default=5.0)
    ap.add_argument("--client-procs", type=int, default=min(4, os.cpu_count() or 1))
    ap.add_argument("--redis", help="use this Redis instead of starting one")
    ap.add_argument("--workers", default="1,2", help="worker counts to run (1,2)")
    ap.add_argument("--echo-server", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.echo_server:
        asyncio.run(_echo_server(args.echo_server))
        return 0

    with contextlib.ExitStack() as stack:
        redis_url = args.redis
        if redis_url is None:
            binary = shutil.which("redis-server") or "/usr/bin/redis-server"
            rport = free_port()
            tmp = stack.enter_context(tempfile.TemporaryDirectory())
            stack.enter_context(
                process(
                    [
                        binary,
                        "--port",
                        str(rport),
                        "--bind",
                        "127.0.0.1",
                        "--save",
                        "",
                        "--appendonly",
                        "no",
                        "--dir",
                        tmp,
                    ],
                    rport,
                )
            )
            redis_url = f"redis://127.0.0.1:{rport}/0"
        print(
            f"{args.rooms} rooms × {args.players} players, {args.client_procs} client "
            f"processes, Redis {redis_url}, {os.cpu_count()} CPUs"
        )
        best_flat = 0.0
        for workers in [int(w) for w in args.workers.split(",")]:
            port = free_port()
            argv = [
                sys.executable,
                "-m",
                "clients.cli",
                "serve",
                "--port",
                str(port),
                "--redis",
                redis_url,
                "--workers",
                str(workers),
                "--rate",
                "1000000",
                "--burst",
                "1000000",
                "--countdown",
                "0.3",
                "--log-level",
                "WARNING",
            ]
            with process(argv, port):
                url = f"ws://127.0.0.1:{port}"
                paced = drive(
                    args.client_procs,
                    "race",
                    url,
                    args.rooms,
                    args.players,
                    "paced",
                    int(args.paced_seconds),
                    args.paced_seconds,
                )
                print(paced.line(f"redis, {workers} worker(s), paced 1/s"))
                flat = drive(
                    args.client_procs,
                    "race",
                    url,
                    args.rooms,
                    args.players,
                    "flat",
                    args.moves,
                    0.0,
                )
                print(flat.line(f"redis, {workers} worker(s), flat out"))
                best_flat = max(best_flat, flat.moves / flat.seconds)
        port = free_port()
        with process([sys.executable, __file__, "--echo-server", str(port)], port):
            echo = drive(
                args.client_procs,
                "echo",
                f"ws://127.0.0.1:{port}",
                args.rooms * args.players,
                args.moves,
            )
        print(echo.line("bare websockets echo, flat out"))
        ratio = best_flat / (echo.moves / echo.seconds)
        print(f"best flat-out race server / echo server: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
