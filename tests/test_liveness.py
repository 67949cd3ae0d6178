"""Liveness on real servers sharing a real Redis: a worker reads its rooms when a worker is
found dead (and a room once when it takes it), not on every beat; a dead worker's seats
are still freed and their grace periods ended. Killed worker processes are
``tests/test_multiworker.py``'s."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from helpers import until
from server_fixtures import ServerHandle, StartServer
from watch_helpers import race_room

from protocol import Progress
from server.codes import normalize_code

LIVENESS = 0.6  # a look every 0.2 s


def count_reads(server: ServerHandle, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The rooms ``server``'s liveness layer reads from now on (the real reads, counted)."""
    reads: list[str] = []
    liveness = server.app.liveness
    real = liveness.reap

    async def reap(room_code: str, *args: Any) -> bool:
        reads.append(room_code)
        return await real(room_code, *args)

    monkeypatch.setattr(liveness, "reap", reap)
    return reads


def count_looks(server: ServerHandle, monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """When (monotonic) each look of ``server``'s liveness layer from now on began, told as
    it ends."""
    looks: list[float] = []
    liveness = server.app.liveness
    real = liveness.look

    async def look() -> None:
        began = time.monotonic()
        await real()
        looks.append(began)

    monkeypatch.setattr(liveness, "look", look)
    return looks


async def settled(looks: list[float]) -> None:
    """Until the worker of ``looks`` has judged every worker it knows (those of earlier tests
    on the same Redis, dead, included): a look begun a whole liveness period after the first
    counted has ended (a beat that has not changed for a period is dead)."""
    first = (await until(lambda: looks))[0]
    await until(lambda: looks[-1] >= first + LIVENESS)


async def more_looks(looks: list[float], count: int) -> None:
    """Until ``count`` more looks have ended."""
    done = len(looks)
    await until(lambda: len(looks) >= done + count)


async def test_rooms_are_read_when_a_worker_dies_not_on_every_beat(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    w0 = await start_server("redis", liveness=LIVENESS, grace=0.5)
    w1 = await start_server("redis", liveness=LIVENESS, grace=0.5)
    rooms = [await race_room([w0, w1]) for _ in range(3)]
    codes = {normalize_code(room) for room, _, _ in rooms}
    looks = count_looks(w0, monkeypatch)
    await settled(looks)

    # every worker beats: five looks read no room
    reads = count_reads(w0, monkeypatch)
    await more_looks(looks, 5)
    assert reads == []

    # worker 1 stops beating (hung, or dead): worker 0 reads each of its rooms, shows
    # worker 1's seats disconnected, and ends their grace periods (the race goes on)
    for task in asyncio.all_tasks():
        if task.get_name() == "beats" and task in w1.app.ctx.tasks._tasks:
            task.cancel()
    watchers = [players[0] for _, players, _ in rooms]  # on worker 0

    async def left(client: Any) -> bool:
        while True:
            m = await client.next_event("progress", timeout=5)
            if isinstance(m, Progress) and m.seat == 2 and m.status == "left":
                return True

    await asyncio.wait_for(asyncio.gather(*(left(c) for c in watchers)), 10)
    assert codes <= set(reads)

    # once the seats are freed, the looks read nothing again
    await until(lambda: not w0.app.liveness._watched, 5)
    reads.clear()
    await more_looks(looks, 5)
    assert reads == []


async def test_a_room_taken_later_is_read_once(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    w0 = await start_server("redis", liveness=LIVENESS)
    looks = count_looks(w0, monkeypatch)
    await settled(looks)
    reads = count_reads(w0, monkeypatch)
    room, _, _ = await race_room([w0])
    code = normalize_code(room)
    assert code is not None
    await until(lambda: code in reads, 2)
    await more_looks(looks, 5)
    assert reads.count(code) == 1
