"""What the live directory costs the store, on two real workers sharing a real Redis (one,
or a Redis Cluster): a room's entry written by one worker, at most once a second however
often it moves, not again while it shows nothing new; another worker with the room takes
over once its writer has left it."""

from __future__ import annotations

import asyncio
import itertools
from functools import partial
from typing import Any

import pytest
from helpers import until
from server_fixtures import ServerHandle, get_json
from test_watching import two_workers  # noqa: F401 - the fixture
from watch_helpers import race_room

from protocol import Ack
from server.codes import normalize_code
from server.watching.directory import REFRESH_EVERY, ROOM_EVERY

Writes = list[tuple[float, ServerHandle]]


def count_writes(servers: list[ServerHandle], code: str, monkeypatch: pytest.MonkeyPatch) -> Writes:
    """When, and by which of ``servers``, the entry of room ``code`` is written from now on
    (the real writes, counted)."""
    writes: Writes = []
    for server in servers:
        directory = server.app.store.directory
        real = directory.write

        async def write(
            puts: list[tuple[str, int, bytes]],
            drops: list[tuple[str, int]],
            server: ServerHandle = server,
            real: Any = real,
        ) -> None:
            if any(c == code for c, *_ in puts):
                writes.append((asyncio.get_running_loop().time(), server))
            await real(puts, drops)

        monkeypatch.setattr(directory, "write", write)
    return writes


async def shown_moves(server: ServerHandle, room: str) -> list[int]:
    """Each player's moves as ``server``'s directory shows them."""
    _, body = await get_json(server.port, "/api/live?sort=newest&limit=50")
    for entry in body["rooms"]:
        if entry["room"] == room:
            return [p["moves"] for p in entry["players"]]
    return []


async def test_a_room_is_written_by_one_worker_at_most_every_room_every(
    two_workers: list[ServerHandle],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    w0, w1 = two_workers
    room, players, _ = await race_room([w0, w1])  # both workers have the room
    code = normalize_code(room)
    assert code is not None

    def one_writer() -> bool:  # the first entries written: both workers know the writer
        kept = [w.app.watching.mirror.get(code) for w in (w0, w1)]
        writers = {k.by if k is not None else "" for k in kept}
        return len(writers) == 1 and "" not in writers

    await until(one_writer)
    writes = count_writes([w0, w1], code, monkeypatch)

    # both players turn the stock ten times a second for 3 s: 60 changes
    for _ in range(30):
        for p in players:
            assert isinstance(await p.move("s"), Ack)
        await asyncio.sleep(0.1)  # the scenario: changes ten times a second
    for w in (w0, w1):
        await until(partial(_shows_moves, w, room, [30, 30]), 3)

    assert len({server.port for _, server in writes}) == 1  # one writer
    times = [t for t, _ in writes]
    assert 2 <= len(times) <= 3 / ROOM_EVERY + 2
    assert all(b - a >= ROOM_EVERY * 0.99 for a, b in itertools.pairwise(times))

    # nothing new to show: not written again until it is refreshed
    written = len(writes)
    await asyncio.sleep(REFRESH_EVERY * 0.6)  # the scenario: a window with no write
    assert len(writes) == written


async def test_another_worker_writes_a_room_its_writer_has_left(
    two_workers: list[ServerHandle],  # noqa: F811
) -> None:
    w0, w1 = two_workers
    room, (host, guest), _ = await race_room([w0, w1])  # the host's worker writes it first
    await host.close()  # worker 0 has nobody in the room any more
    for _ in range(5):
        assert isinstance(await guest.move("s"), Ack)
    for w in (w0, w1):  # the host's seat is gone by then (its grace period is short)
        await until(partial(_guest_moves, w, room, 5), 5)


async def _shows_moves(server: ServerHandle, room: str, moves: list[int]) -> bool:
    return await shown_moves(server, room) == moves


async def _guest_moves(server: ServerHandle, room: str, moves: int) -> bool:
    return (await shown_moves(server, room))[-1:] == [moves]
