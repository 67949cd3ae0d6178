"""A tournament of 20 players over two worker processes on one Redis: a round seats each
worker's players together (room affinity), then the worker running the tournament's timers
is killed (SIGKILL) in the middle of the round. Its players resume on the other worker with
every acknowledged move, the other worker takes the timers over, the round ends at its
deadline, every result is kept, and the export verifies."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
import redis.asyncio as aioredis
from helpers import until_server_clock
from server_fixtures import WINS, as_text, free_port, http_get, worker_process

from clients.client import RaceClient
from engine import replay
from protocol import Ack, TournamentEvent, TournamentSeat
from server.tournaments import verify

KL_CODE, KL_LINE = WINS["klondike"]
KL_MOVES = KL_LINE.split()
PLAYERS = 20
WINNERS = 5  # players 0-4 win the deal; the others stop and run out of time
ARGS = (
    "--countdown", "0.1", "--grace", "30", "--rate", "1000", "--burst", "500",
    "--liveness", "1.5", "--tournament-lease", "1", "--tournament-countdown", "1",
    "--log-level", "WARNING", "--identity-limit", "100",
)  # fmt: skip


def assert_clean(stderr: bytes) -> None:
    text = stderr.decode()
    assert " ERROR " not in text and "Traceback" not in text, text


async def next_kind(client: RaceClient, kind: str, timeout: float = 90.0) -> TournamentEvent:
    async def wait() -> TournamentEvent:
        async for m in client.events():
            if isinstance(m, TournamentEvent) and m.kind == kind:
                return m
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), timeout)


async def next_seat(client: RaceClient, number: int) -> TournamentSeat:
    async def wait() -> TournamentSeat:
        async for m in client.events():
            if isinstance(m, TournamentSeat) and m.round == number:
                return m
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), 20)


async def at_start(client: RaceClient, seat: TournamentSeat) -> None:
    """Wait for the round's start, by the server's clock."""
    await until_server_clock(seat.start_at, await client.ping())


async def driver_of(redis_url: str, tid: str, workers: dict[int, subprocess.Popen[bytes]]) -> int:
    """The port of the worker that runs the tournament's timers: it holds the lease."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        holder = await client.get(f"sd:{{T:{tid.replace('-', '')}}}:lease")
    finally:
        await client.aclose()
    assert holder is not None, "nobody holds the lease"
    pid = int(as_text(holder).rsplit(":", 1)[1])
    return next(port for port, proc in workers.items() if proc.pid == pid)


@pytest.mark.slow
async def test_a_worker_killed_mid_round_loses_nothing(redis_url: str, tmp_path: Path) -> None:
    ports = [free_port(), free_port()]
    common = ("--redis", redis_url, "--data", str(tmp_path), *ARGS)
    with (
        worker_process(*common, port=ports[0]) as w1,
        worker_process(*common, port=ports[1]) as w2,
    ):
        workers = dict(zip(ports, (w1, w2), strict=True))
        urls = {p: f"ws://127.0.0.1:{p}" for p in ports}
        clients: list[RaceClient] = []
        secrets: list[str] = []
        for i in range(PLAYERS):
            c = await RaceClient.connect(urls[ports[i % 2]])
            made = await c.new_player(f"P{i}")
            assert made.secret is not None
            clients.append(c)
            secrets.append(made.secret)
        host = await RaceClient.connect(urls[ports[0]])
        host_made = await host.new_player("Host")
        host_id, host_secret = host_made.player, host_made.secret
        assert host_secret is not None
        tid = (
            await host.tournament_create(
                name="Kill cup",
                game="klondike",
                rounds=3,
                round_time_limit=60,
                round_start="manual",
                deals="list",
                deal_codes=[KL_CODE] * 3,
            )
        ).page.id
        for i, c in enumerate(clients):
            await c.tournament_join(tid, name=f"P{i}")
        watchers = {}
        for port in ports:
            watchers[port] = await RaceClient.connect(urls[port])
            await watchers[port].tournament_open(tid)

        await host.tournament_host(tid, "start")
        seats = await asyncio.gather(*(next_seat(c, 1) for c in clients))
        # the players joined from the two workers in turns; each room's are on one worker
        # (room affinity: a worker pays for a room's events once, not per worker)
        ports_of: dict[str, set[int]] = {}
        for i, s in enumerate(seats):
            ports_of.setdefault(s.room, set()).add(ports[i % 2])
        assert sorted(map(sorted, ports_of.values())) == sorted([[p] for p in ports])
        await asyncio.gather(*(c.take_seat(s) for c, s in zip(clients, seats, strict=True)))
        await at_start(clients[0], seats[0])

        # everyone plays a few moves, a different number each
        acked = [0] * PLAYERS

        async def play(i: int, client: RaceClient, upto: int) -> None:
            while acked[i] < upto:
                reply = await client.move(KL_MOVES[acked[i]])
                assert isinstance(reply, Ack), reply
                acked[i] += 1

        await asyncio.gather(*(play(i, c, 5 + i) for i, c in enumerate(clients)))

        # the worker running the timers dies
        doomed = await driver_of(redis_url, tid, workers)
        survivor = next(p for p in ports if p != doomed)
        os.kill(workers[doomed].pid, signal.SIGKILL)
        workers[doomed].wait()

        # its players come back on the other worker, each with every acknowledged move
        for i, c in enumerate(clients):
            if ports[i % 2] != doomed:
                continue
            again = await RaceClient.connect(urls[survivor])
            assert c.player_id is not None
            await again.identify(c.player_id, secrets[i])
            page = await again.tournament_open(tid)
            assert page.you.seat is not None and page.you.seat.round == 1
            joined = await again.take_seat(
                TournamentSeat.model_validate(page.you.seat.model_dump())
            )
            assert joined.view == replay(KL_CODE, KL_MOVES[: acked[i]]).player_view()
            clients[i] = again
        if doomed == ports[0]:
            host = await RaceClient.connect(urls[survivor])
            await host.identify(host_id, host_secret)
        watcher = watchers[survivor]

        # the winners finish, the others play five more moves and stop
        await asyncio.gather(
            *(
                play(i, c, len(KL_MOVES) if i < WINNERS else acked[i] + 5)
                for i, c in enumerate(clients)
            )
        )
        ended = await next_kind(watcher, "round_ended", timeout=90)
        ended_at = await watcher.ping()
        deadline = seats[0].deadline
        assert deadline <= ended_at <= deadline + 5000, ended_at - deadline
        assert len(ended.data["ranking"]) == PLAYERS

        _, _, body = await asyncio.to_thread(http_get, survivor, f"/api/tournaments/{tid}")
        page_data = json.loads(body)
        results = {r["player"]: r for r in page_data["rounds"][0]["results"]}
        for i, c in enumerate(clients):
            mine = results[c.player_id or ""]
            played = replay(KL_CODE, KL_MOVES[: acked[i]])  # every acknowledged action
            assert (mine["moves"], mine["score"]) == (played.moves, played.score), i
            assert mine["status"] == ("won" if i < WINNERS else "timeout"), i

        # rounds 2 and 3: started by the host, everyone resigns at the start
        for number in (2, 3):
            await host.tournament_host(tid, "start_round")
            round_seats = await asyncio.gather(*(next_seat(c, number) for c in clients))
            await asyncio.gather(
                *(c.take_seat(s) for c, s in zip(clients, round_seats, strict=True))
            )
            await at_start(clients[0], round_seats[0])
            await asyncio.gather(*(c.resign() for c in clients))
            await next_kind(watcher, "round_ended", timeout=20)
        await next_kind(watcher, "tournament_finished", timeout=20)

        _, _, text = await asyncio.to_thread(http_get, survivor, f"/api/tournaments/{tid}/export")
        export = orjson.loads(text)
        assert verify(export) == []
        assert len(export["standings"]) == PLAYERS
        for c in [*clients, host, *watchers.values()]:
            await c.close()
        survivor_proc = workers[survivor]
        survivor_proc.send_signal(signal.SIGTERM)
        assert survivor_proc.wait(15) == 0
        assert survivor_proc.stderr is not None
        assert_clean(survivor_proc.stderr.read())
