"""Bot seats the server plays itself ("race a bot"): seated by the host between races,
moving through the same checked and stored path as a person."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import Executor
from typing import Any

import pytest
from helpers import until_race_starts, until_server_clock
from server_fixtures import ServerHandle
from watch_helpers import LoopLag

from clients.client import RequestError
from engine import replay
from engine.strategy import greedy_line
from protocol import (
    PlayerFinished,
    ProtocolError,
    RaceEnded,
    RaceStarting,
    SeatEvent,
    decode_client,
)
from server.rooms import robots as server_bots
from server.rooms.robots import BotDriver, Strength

GREEDY_WINS = "KL1-1-AAAAAAB"  # greedy alone clears this one


def fast_bot(*, strength: Strength, pace: float, executor: Executor | None = None) -> BotDriver:
    """A bot at 30 times its pace: the protocol allows at most 10 actions a second."""
    return BotDriver(strength=strength, pace=pace * 30, executor=executor)


async def test_a_person_races_a_bot_to_the_end(
    server: ServerHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_bots, "BotDriver", fast_bot)
    ann = await server.client()
    assert ann.welcome.bots
    joined = await ann.create("klondike", name="Ann", deal="code", code=GREEDY_WINS)
    await ann.request({"type": "add_bot", "strength": "greedy", "pace": 10})
    seat = await ann.next_event("seat")
    assert isinstance(seat, SeatEvent) and seat.seat == 2 and seat.name == "Bot (greedy)"
    await ann.start()
    await until_race_starts(ann)
    await ann.move("s")
    await ann.resign()
    ended = await ann.next_event("race_ended", timeout=60)
    assert isinstance(ended, RaceEnded)
    bot_row = next(r for r in ended.results if r.seat == 2)
    assert bot_row.status == "won" and bot_row.rank == 1
    finished = [m for m in ann.history if isinstance(m, PlayerFinished) and m.seat == 2]
    assert finished, "the bot's run is told to the finished player"
    assert finished[0].move_list is not None
    moves = finished[0].move_list.split()
    assert moves == greedy_line(GREEDY_WINS)
    # the moves are in the store's log and replay to a win
    code = joined.room.replace("-", "")
    assert await server.app.store.rooms.moves(code, 1, 2) == moves
    assert replay(GREEDY_WINS, moves).won
    assert bot_row.moves == replay(GREEDY_WINS, moves).moves
    # the bot plays the rematch too
    await ann.rematch("same")
    await until_race_starts(ann)
    await ann.resign()
    again = await ann.next_event("race_ended", timeout=60)
    assert isinstance(again, RaceEnded) and again.results[0].seat == 2


async def test_add_bot_refusals(server: ServerHandle) -> None:
    ann = await server.client()
    joined = await ann.create("klondike", name="Ann", max_players=2)
    bob = await server.client()
    await bob.join(joined.room, name="Bob")
    with pytest.raises(RequestError) as info:
        await bob.request({"type": "add_bot"})
    assert info.value.code == "not_host"
    with pytest.raises(ProtocolError):
        decode_client('{"type": "add_bot", "pace": 50}')  # 0.2 to 10 actions a second
    with pytest.raises(RequestError) as info:
        await ann.request({"type": "add_bot"})
    assert info.value.code == "room_full"
    watcher = await server.client()
    await watcher.join(joined.room, role="spectator")
    with pytest.raises(RequestError) as info:
        await watcher.request({"type": "add_bot"})
    assert info.value.code == "not_host"
    await ann.start()
    starting = await ann.next_event("race_starting")
    assert isinstance(starting, RaceStarting)
    with pytest.raises(RequestError) as info:
        await ann.request({"type": "add_bot"})
    assert info.value.code == "race_running"
    await until_server_clock(starting.start_at, starting.now)
    await ann.resign()
    await bob.resign()
    await ann.next_event("race_ended")


async def test_move_times_and_a_ghost_of_a_run(server: ServerHandle) -> None:
    """Each accepted move's server time is stored and told in ``player_finished``; a ghost
    seated by the host replays that run at those times in a rematch on the same deal."""
    ann = await server.client()
    joined = await ann.create("klondike", name="Ann", deal="code", code=GREEDY_WINS)
    bob = await server.client()
    await bob.join(joined.room, name="Bob")
    await ann.start()
    await until_race_starts(ann)
    line = greedy_line(GREEDY_WINS)[:6]
    for text in line:
        await ann.move(text)
        await asyncio.sleep(0.05)  # the scenario: a move every 50 ms at least, told after
    await ann.resign()
    await bob.resign()
    run = await ann.next_event("player_finished")
    assert isinstance(run, PlayerFinished) and run.seat == 1 and run.times_ms is not None
    assert run.move_list is not None and run.move_list.split() == line
    assert len(run.times_ms) == len(line)
    assert run.times_ms == sorted(run.times_ms) and run.times_ms[-1] >= 5 * 50
    await ann.next_event("race_ended")
    with pytest.raises(RequestError) as info:
        await ann.request({"type": "add_ghost", "race": 2, "seat": 1})
    assert info.value.code == "no_run"
    with pytest.raises(RequestError) as info:
        await bob.request({"type": "add_ghost", "race": 1, "seat": 1})
    assert info.value.code == "not_host"
    await ann.request({"type": "add_ghost", "race": 1, "seat": 1})
    seat = await ann.next_event("seat")
    assert isinstance(seat, SeatEvent) and seat.name == "Ghost of Ann" and seat.seat == 3
    await ann.rematch("same")
    await bob.rematch_reply(2)  # the ghost accepts unasked
    lag = LoopLag()  # the ghost's timers run on this loop: how late it ran them, at worst
    await until_race_starts(ann)
    await ann.resign()
    await bob.resign()
    ghost = None
    while ghost is None:
        event = await ann.next_event("player_finished", timeout=10)
        if isinstance(event, PlayerFinished) and event.seat == 3:
            ghost = event
    assert ghost.move_list == run.move_list and ghost.status == "resigned"
    assert ghost.times_ms is not None
    lag.stop()
    late = 250 + lag.worst * 1000  # a loaded machine runs a timer late: no earlier, ever
    for original, replayed in zip(run.times_ms, ghost.times_ms, strict=True):
        assert original <= replayed <= original + late
    assert ghost.elapsed_ms >= run.elapsed_ms
    await ann.next_event("race_ended")


async def test_a_solver_bot_plans_in_another_process(
    server: ServerHandle, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A solver bot's plan is searched in the server's solver process, not on the event
    loop's core: the bot wins a deal the greedy player alone loses, and the server answers
    pings at once while the plan is made."""
    from engine import DealCode
    from engine.solver import solve

    deal = next(
        code
        for code in (str(DealCode.for_game("klondike", n)) for n in range(2, 30))
        if not replay(code, greedy_line(code)).won
        and solve(code, nodes=20_000).verdict == "winnable"
    )
    planners: list[BotDriver] = []

    def recorded_bot(**options: Any) -> BotDriver:
        planners.append(fast_bot(**options))
        return planners[-1]

    monkeypatch.setattr(server_bots, "BotDriver", recorded_bot)
    ann = await server.client()
    await ann.create("klondike", name="Ann", deal="code", code=deal)
    await ann.request({"type": "add_bot", "strength": "solver", "pace": 10})
    await ann.next_event("seat")
    await ann.start()
    await ann.next_event("race_starting")
    slowest = 0.0
    for _ in range(20):  # while the bot's plan is searched
        t0 = asyncio.get_running_loop().time()
        await ann.ping()
        slowest = max(slowest, asyncio.get_running_loop().time() - t0)
        await asyncio.sleep(0.02)  # the scenario: pings spread over the plan's search
    assert slowest < 0.25
    await ann.resign()
    ended = await ann.next_event("race_ended", timeout=60)
    assert isinstance(ended, RaceEnded)
    bot_row = next(r for r in ended.results if r.seat == 2)
    assert bot_row.status == "won"
    assert planners and all(d.planned_in not in (None, os.getpid()) for d in planners)
