#!/usr/bin/env python3
"""The room channels' reader alone: a worker's CPU per room event read from Redis pub/sub.

Two readers, each in its own process (uvloop, as the server), subscribed to the channels
of ``--rooms`` rooms on a redis-server started on a free port (127.0.0.1, no persistence):

- ``redis-py``: the loop of the reader before issue 21 (``RoomChannels`` at ``ac48e09``):
  redis-py's ``PubSub.get_message(timeout=None)``, each message's dict dispatched by type
  and its channel decoded to the room;
- ``resp``: ``server.store.redis.pubsub.RoomChannels`` (its own RESP2 subscriber).

Both pass each event to ``InOrder`` and a listener that only counts. This process
publishes ``--messages`` stamped events (about 100 bytes, as a progress event) round-robin
over the rooms, paced (``--rate`` a second, a few per tick) or flat out (pipelines of 100),
and the reader reports its process CPU from the first message to the last. The readers
alternate over ``--rounds``; the figure is µs of reader CPU per message (median).

    python3 bench/pubsub.py                      # paced 1,000/s and flat out, 3 rounds
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import Pipe, Process
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

__all__ = ["main"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def channel(i: int) -> str:
    """Room ``i``'s channel, as the Redis store names it."""
    return f"sd:{{R{i:05d}}}:ch"


def event(seq: int) -> bytes:
    """A stamped event of about a progress event's size."""
    return b'{"seq":%d,"type":"progress","seat":2,"score":17,"moves":42,"found":3,"t":123456}' % seq


async def _old_reader(url: str, rooms: int, listener: Any) -> Any:
    """The loop of RoomChannels before issue 21 (redis-py's PubSub), as it was."""
    import redis.asyncio as aioredis

    from server.store.redis.pubsub import InOrder, room_of_channel

    async def fetch(code: str, after: int) -> list[bytes] | None:
        return []

    order = InOrder(fetch)
    order.listener = listener
    client = aioredis.Redis.from_url(url)
    pubsub = client.pubsub()
    await pubsub.subscribe(*(channel(i) for i in range(rooms)))

    def dispatch(message: dict[str, Any]) -> None:
        kind = message.get("type")
        name = message["channel"]
        if isinstance(name, bytes):
            name = name.decode()
        if kind == "message" and order.listener is not None:
            order.deliver(room_of_channel(name), message["data"])

    async def listen() -> None:
        while True:
            message = await pubsub.get_message(timeout=None)
            if message is not None:
                dispatch(message)

    return asyncio.create_task(listen())


async def _new_reader(url: str, rooms: int, listener: Any) -> Any:
    import redis.asyncio as aioredis

    from server.store.redis.pubsub import RoomChannels

    async def fetch(code: str, after: int) -> list[bytes] | None:
        return []

    channels = RoomChannels(
        aioredis.Redis.from_url(url),
        "sd:worker:bench",
        lambda code: f"sd:{{{code}}}:ch",
        fetch,
        lambda: None,
    )
    await channels.start(listener)
    for i in range(rooms):
        await channels.subscribe(f"R{i:05d}")
    return channels


async def _read(pipe: Connection, kind: str, url: str, rooms: int, messages: int) -> None:
    done = asyncio.get_running_loop().create_future()
    count = 0
    started = 0.0

    def listener(code: str, data: bytes) -> None:
        nonlocal count, started
        if count == 0:
            started = time.process_time()
        count += 1
        if count == messages and not done.done():
            done.set_result(time.process_time())

    reader = await (_old_reader if kind == "redis-py" else _new_reader)(url, rooms, listener)
    pipe.send("ready")
    ended = await asyncio.wait_for(done, 120)
    pipe.send((ended - started) / max(messages - 1, 1))
    if kind == "redis-py":
        reader.cancel()
    else:
        await reader.close()


def _reader_main(pipe: Connection, kind: str, url: str, rooms: int, messages: int) -> None:
    try:
        import uvloop

        uvloop.run(_read(pipe, kind, url, rooms, messages))
    except ImportError:
        asyncio.run(_read(pipe, kind, url, rooms, messages))


def _publish(url: str, rooms: int, messages: int, rate: float) -> None:
    import redis

    r = redis.Redis.from_url(url)
    seqs = [0] * rooms
    per_tick = 100 if rate <= 0 else max(1, int(rate / 500))  # a tick of 2 ms when paced
    start = time.monotonic()
    sent = 0
    while sent < messages:
        pipe = r.pipeline(transaction=False)
        for _ in range(min(per_tick, messages - sent)):
            room = sent % rooms
            seqs[room] += 1
            pipe.publish(channel(room), event(seqs[room]))
            sent += 1
        pipe.execute()
        if rate > 0:
            delay = start + sent / rate - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    r.close()


def run_one(kind: str, url: str, rooms: int, messages: int, rate: float) -> float:
    """One reader, one load: its CPU µs per message."""
    mine, theirs = Pipe()
    proc = Process(target=_reader_main, args=(theirs, kind, url, rooms, messages))
    proc.start()
    try:
        if not mine.poll(60):
            raise RuntimeError(f"the {kind} reader did not start")
        assert mine.recv() == "ready"
        _publish(url, rooms, messages, rate)
        if not mine.poll(120):
            raise RuntimeError(f"the {kind} reader did not read every message")
        return float(mine.recv()) * 1e6
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()


def main(argv: list[str] | None = None) -> int:
    """Run the rounds and print µs of reader CPU per message."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=250)
    parser.add_argument("--messages", type=int, default=15_000, help="per run (15,000)")
    parser.add_argument("--rate", type=float, default=1000.0, help="paced messages/s (1,000)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--loads", default="paced,flat")
    args = parser.parse_args(argv)
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = free_port()
    with tempfile.TemporaryDirectory() as workdir:
        redis_proc = subprocess.Popen(
            [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", workdir],
            stdout=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 10
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            url = f"redis://127.0.0.1:{port}/0"
            print(
                f"{os.cpu_count()} CPUs; {args.rooms} rooms, {args.messages} messages a run, "
                f"paced {args.rate:.0f}/s; reader CPU µs per message"
            )
            for load in args.loads.split(","):
                rate = args.rate if load == "paced" else 0.0
                results: dict[str, list[float]] = {"redis-py": [], "resp": []}
                for _ in range(args.rounds):
                    for kind in results:
                        us = run_one(kind, url, args.rooms, args.messages, rate)
                        results[kind].append(us)
                        print(f"  {load:5} {kind:8} {us:6.2f} µs/message", flush=True)
                old = statistics.median(results["redis-py"])
                new = statistics.median(results["resp"])
                print(
                    f"{load}: redis-py {old:.2f} µs/message, resp {new:.2f} "
                    f"(medians of {args.rounds}; resp ÷ redis-py {new / old:.2f})"
                )
        finally:
            redis_proc.kill()
            redis_proc.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
