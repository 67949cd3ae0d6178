"""Liveness on real servers sharing a real Redis: a worker reads its rooms when a worker is
found dead (and a room once when it takes it), not on every beat; a dead worker's seats
are still freed and their grace periods ended. Killed worker processes are
``tests/test_multiworker.py``'s."""

from __future__ import annotations

import asyncio
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


async def settled(server: ServerHandle) -> None:
    """Until ``server`` has judged every worker it knows (those of earlier tests on the same
    Redis, dead, included): a whole liveness period and a look after."""
    await asyncio.sleep(LIVENESS * 2.5)


async def test_rooms_are_read_when_a_worker_dies_not_on_every_beat(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    w0 = await start_server("redis", liveness=LIVENESS, grace=0.5)
    w1 = await start_server("redis", liveness=LIVENESS, grace=0.5)
    rooms = [await race_room([w0, w1]) for _ in range(3)]
    codes = {normalize_code(room) for room, _, _ in rooms}
    await settled(w0)

    # every worker beats: a second of looks (five) reads no room
    reads = count_reads(w0, monkeypatch)
    await asyncio.sleep(1.0)
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
    await asyncio.sleep(1.0)
    assert reads == []


async def test_a_room_taken_later_is_read_once(
    start_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    w0 = await start_server("redis", liveness=LIVENESS)
    await settled(w0)
    reads = count_reads(w0, monkeypatch)
    room, _, _ = await race_room([w0])
    code = normalize_code(room)
    assert code is not None
    await until(lambda: code in reads, 2)
    await asyncio.sleep(1.0)
    assert reads.count(code) == 1
