"""Ghost races: a finished run replayed in a later race, in real time."""

from __future__ import annotations

import asyncio

import pytest
from helpers import until_race_starts
from server_fixtures import live_server

from clients.bot import run_bot
from clients.client import RaceClient
from clients.ghost import GhostRun, run_ghost
from protocol import PlayerFinished, RaceEnded

DEAL = "KL1-1-AAAAAAB"  # the greedy bot clears it


def test_schedule_spreads_moves_evenly_without_times() -> None:
    run = GhostRun(DEAL, ("s", "s", "s", "s"), elapsed_ms=2000)
    assert run.schedule() == [500, 1000, 1500, 2000]
    timed = GhostRun(DEAL, ("s", "s"), elapsed_ms=900, times_ms=(100, 850))
    assert timed.schedule() == [100, 850]
    with pytest.raises(ValueError):
        GhostRun(DEAL, ("s",), elapsed_ms=1, times_ms=(1, 2))


async def test_ghost_replays_a_finished_run_in_real_time() -> None:
    async with live_server(countdown=0.1, rate=100_000.0, burst=100_000, grace=0.2) as server:
        host = await RaceClient.connect(server.url)
        watcher = await RaceClient.connect(server.url)
        joined = await host.create("klondike", name="Host", deal="code", code=DEAL)
        await watcher.join(joined.room, role="spectator")

        # race 1: a bot clears the deal at 150 actions a second; the host gives up
        bot = asyncio.create_task(
            run_bot(
                server.url, joined.room, name="Ann", pace=150, start_timeout=10, wait_results=10
            )
        )
        await host.next_event("seat")
        await host.start()
        await until_race_starts(host)
        await host.resign()
        finished = await watcher.next_event("player_finished", timeout=20)
        while not (isinstance(finished, PlayerFinished) and finished.status == "won"):
            finished = await watcher.next_event("player_finished", timeout=20)
        (original,) = await asyncio.wait_for(bot, 20)
        assert finished.move_list is not None and finished.move_list.split() == original.moves
        gone = await host.next_event("seat", timeout=10)  # the bot left: its seat is freed
        while not getattr(gone, "left", False):
            gone = await host.next_event("seat", timeout=10)

        # race 2, same deal: the ghost of Ann races the host again
        run = GhostRun.from_finished(finished, DEAL, name="Ghost of Ann")
        assert run.times_ms is not None and list(run.times_ms) == finished.times_ms
        assert run.schedule() == finished.times_ms  # the real per-move times
        ghost = asyncio.create_task(run_ghost(server.url, joined.room, run, start_timeout=10))
        seat = await host.next_event("seat")
        while getattr(seat, "name", "") != "Ghost of Ann":
            seat = await host.next_event("seat")
        await host.rematch("same")
        await until_race_starts(host)
        await host.resign()
        ended = await host.next_event("race_ended", timeout=20)
        result = await asyncio.wait_for(ghost, 20)
        await host.close()
        await watcher.close()

    assert isinstance(ended, RaceEnded)
    assert result.won and result.moves == original.moves
    first = ended.results[0]
    assert first.name == "Ghost of Ann" and first.status == "won"
    assert first.elapsed_ms is not None
    assert abs(first.elapsed_ms - finished.elapsed_ms) < 300  # in real time


def test_run_from_json() -> None:
    run = GhostRun.from_json(
        {
            "type": "player_finished",
            "deal": DEAL,
            "move_list": "s t3-f1",
            "elapsed_ms": 800,
            "status": "won",
            "seat": 2,
        }
    )
    assert run.moves == ("s", "t3-f1") and run.elapsed_ms == 800 and run.name == "Ghost"
    timed = GhostRun.from_json({"deal": DEAL, "moves": ["s"], "elapsed_ms": 5, "times_ms": [4]})
    assert timed.schedule() == [4]
