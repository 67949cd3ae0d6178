"""Several worker processes sharing rooms through a real Redis.

The players and the spectator of one room sit on different workers; one worker is killed
with SIGKILL mid-race and its players resume on the other with no acknowledged move lost.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys

from helpers import until_race_starts
from server_fixtures import (
    ROOT,
    WINS,
    free_port,
    http_get,
    wait_port,
    worker_process,
)

from clients.client import RaceClient
from engine import new_game, replay
from protocol import Ack, Progress, RaceEnded, SeatEvent, Spectators

WORKER_ARGS = (
    "--countdown", "0.1", "--grace", "10", "--rate", "1000", "--burst", "500",
    "--liveness", "1.5",
)  # fmt: skip


def assert_clean(stderr: bytes) -> None:
    text = stderr.decode()
    assert " ERROR " not in text and "Traceback" not in text, text


async def test_worker_killed_mid_race(redis_url: str) -> None:
    code, solution = WINS["klondike-3"]
    moves = solution.split()
    p1, p2 = free_port(), free_port()
    with (
        worker_process("--redis", redis_url, *WORKER_ARGS, port=p1) as w1,
        worker_process("--redis", redis_url, *WORKER_ARGS, port=p2) as w2,
    ):
        url1, url2 = f"ws://127.0.0.1:{p1}", f"ws://127.0.0.1:{p2}"
        ann = await RaceClient.connect(url1)
        bob = await RaceClient.connect(url1)
        watcher = await RaceClient.connect(url2)
        assert ann.welcome.worker != watcher.welcome.worker
        joined = await ann.create("klondike-3", deal="code", code=code, name="Ann")
        await bob.join(joined.room, name="Bob")
        await watcher.join(joined.room, role="spectator")
        doomed = await RaceClient.connect(url1)  # a spectator on the worker that dies
        await doomed.join(joined.room, role="spectator")
        await ann.start()
        await watcher.next_event("race_starting")
        await until_race_starts(bob)

        # play half the winning line on worker 1; the spectator on worker 2 follows
        acked: list[str] = []
        for text in moves[: len(moves) // 2]:
            reply = await ann.move(text)
            assert isinstance(reply, Ack)
            acked.append(reply.move)
        bob_game = new_game(code)
        bob_acked: list[str] = []
        for text in ("s", "s", "s", "s"):
            reply = await bob.move(text)
            assert isinstance(reply, Ack)
            bob_game.push(reply.move)
            bob_acked.append(reply.move)

        async def saw_progress() -> None:
            while True:
                m = await watcher.next_event("progress")
                if isinstance(m, Progress) and m.seat == 1 and m.moves == len(acked):
                    return

        await asyncio.wait_for(saw_progress(), 5)

        os.kill(w1.pid, signal.SIGKILL)
        w1.wait()

        # worker 2 notices the dead worker: its players are shown disconnected, and its
        # spectator is no longer counted
        async def saw_disconnected() -> None:
            away: set[int] = set()
            spectators = 2
            while away != {1, 2} or spectators != 1:
                m = await watcher.next_event("progress", "spectators")
                if isinstance(m, Progress) and m.status == "disconnected":
                    away.add(m.seat)
                elif isinstance(m, Spectators):
                    spectators = m.count

        await asyncio.wait_for(saw_disconnected(), 6)

        # both players resume on worker 2 with their tokens and last seen seq
        ann2 = await ann.reconnect(url2)
        bob2 = await bob.reconnect(url2)
        assert ann2.welcome.worker == watcher.welcome.worker
        assert ann2.view == replay(code, acked).player_view()  # nothing acknowledged lost
        assert bob2.view == bob_game.player_view()

        for text in moves[len(moves) // 2 :]:
            reply = await ann2.move(text)
            assert isinstance(reply, Ack), reply
        assert ann2.view is not None and ann2.view["won"]
        await bob2.resign()
        end = await watcher.next_event("race_ended", timeout=10)
        assert isinstance(end, RaceEnded)
        assert [(r.seat, r.status) for r in end.results] == [(1, "won"), (2, "resigned")]
        assert end.results[1].moves == len(bob_acked)
        for c in (ann, bob, ann2, bob2, watcher, doomed):
            await c.close()
        w2.send_signal(signal.SIGTERM)
        assert w2.wait(10) == 0
        assert w2.stderr is not None
        assert_clean(w2.stderr.read())


def test_workers_share_one_port(redis_url: str) -> None:
    """``--workers 2`` starts two processes on one port (SO_REUSEPORT); rooms made through
    one connection are joinable through any other; SIGTERM stops them all."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clients.cli",
            "serve",
            "--no-records",
            "--redis",
            redis_url,
            "--workers",
            "2",
            "--port",
            str(port),
            "--countdown",
            "0.1",
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
    )
    try:
        wait_port(port)

        async def scenario() -> set[str]:
            host = await RaceClient.connect(f"ws://127.0.0.1:{port}")
            joined = await host.create("easy-harp")
            workers = {host.welcome.worker}
            guests = []
            for _ in range(8):
                guest = await RaceClient.connect(f"ws://127.0.0.1:{port}")
                await guest.join(joined.room, role="spectator")
                workers.add(guest.welcome.worker)
                guests.append(guest)
            await host.start()
            for guest in guests:
                await guest.next_event("race_starting")
                await guest.close()
            await host.close()
            return workers

        workers = asyncio.run(scenario())
        assert 1 <= len(workers) <= 2
        assert http_get(port, "/healthz")[0] == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    assert proc.stderr is not None
    assert_clean(proc.stderr.read())


async def test_grace_period_survives_its_worker(redis_url: str) -> None:
    """A player left worker 1, which then died before the grace period ended: worker 2
    notices the overdue seat and resigns it, so the race still ends."""
    p1, p2 = free_port(), free_port()
    args = ("--countdown", "0.1", "--grace", "0.5", "--liveness", "0.6")
    with worker_process("--redis", redis_url, *args, port=p1) as w1, \
            worker_process("--redis", redis_url, *args, port=p2) as w2:  # fmt: skip
        ann = await RaceClient.connect(f"ws://127.0.0.1:{p2}")
        bob = await RaceClient.connect(f"ws://127.0.0.1:{p1}")
        joined = await ann.create("klondike")
        await bob.join(joined.room)
        await ann.start()
        await ann.next_event("race_starting")
        await bob.close()
        away = await ann.next_event("seat")  # worker 1 marks the seat disconnected
        while not (isinstance(away, SeatEvent) and away.seat == 2 and not away.connected):
            away = await ann.next_event("seat")
        os.kill(w1.pid, signal.SIGKILL)
        w1.wait()
        finished = await ann.next_event("progress", timeout=5)
        while not (isinstance(finished, Progress) and finished.status == "left"):
            finished = await ann.next_event("progress", timeout=5)
        assert finished.seat == 2
        await ann.resign()
        end = await ann.next_event("race_ended", timeout=5)
        assert isinstance(end, RaceEnded) and len(end.results) == 2
        await ann.close()
        w2.send_signal(signal.SIGTERM)
        assert w2.wait(10) == 0
        assert w2.stderr is not None
        text = w2.stderr.read().decode()
        assert " ERROR " not in text and "grace period overdue" in text, text
