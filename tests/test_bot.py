"""Bots race each other to the end through a real server on 127.0.0.1, on each game."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from helpers import until_race_starts
from server_fixtures import live_server

from clients.bot import GreedyPlayer, greedy_line, run_bot, run_bot_client
from clients.client import RaceClient
from clients.links import parse_link
from engine import DealCode, Game, new_game, replay
from protocol import RaceEnded

GREEDY_WINS = "KL1-1-AAAAAAB"  # greedy alone clears this one
GAMES = ["easy-harp", "klondike", "klondike-3"]


def _layout(game: Game) -> str:
    """The cards where they lie, without the counters (score, moves)."""
    position = game.position()
    piles = [position[k] for k in ("tableau", "stock", "waste", "foundations")]
    return orjson.dumps(piles).decode()


@pytest.mark.parametrize("game_name", GAMES)
@pytest.mark.parametrize("n", [1, 2, 3])
def test_greedy_never_repeats_a_position_and_stops(game_name: str, n: int) -> None:
    """Every action but the stock's leads to a layout not seen before on the line (the
    stock cycles by nature); the line ends by the policy giving up, not by the limit."""
    code = str(DealCode.for_game(game_name, n))
    line = greedy_line(code)
    assert len(line) < 5000
    game = new_game(code)
    seen = {_layout(game)}
    for move in line:
        game.push(move)  # every action is legal
        if move != "s":
            layout = _layout(game)
            assert layout not in seen, f"{move} returns to a layout seen before"
            seen.add(layout)


def test_greedy_alone_wins_its_deal() -> None:
    assert replay(GREEDY_WINS, greedy_line(GREEDY_WINS)).won


def test_greedy_chooses_by_sight_only() -> None:
    # Two games that differ only in a face-down card get the same first choices.
    a = new_game("KL1-1-AAAAAAB")
    b = new_game("KL1-1-AAAAAAB")
    b.columns[6][0], b.columns[5][0] = b.columns[5][0], b.columns[6][0]  # both face down
    assert GreedyPlayer(a).choose() == GreedyPlayer(b).choose()


def test_links() -> None:
    link = parse_link("https://cards.example/r/K7QF-2M?key=s3cret")
    assert (link.url, link.room, link.key) == ("wss://cards.example", "K7QF-2M", "s3cret")
    link = parse_link("http://127.0.0.1:8765/#/room/K7QF-2M?key=k")
    assert (link.url, link.room, link.key) == ("ws://127.0.0.1:8765", "K7QF-2M", "k")
    assert parse_link("ws://h:1", room="AB").room == "AB"
    with pytest.raises(ValueError):
        parse_link("K7QF-2M")


@pytest.mark.parametrize(
    ("game", "deal"),
    [("easy-harp", None), ("klondike", GREEDY_WINS), ("klondike-3", None)],
)
async def test_bots_race_to_the_end(game: str, deal: str | None) -> None:
    async with live_server(countdown=0.1, rate=100_000.0, burst=100_000) as server:
        host = await RaceClient.connect(server.url)
        options = {"deal": "code", "code": deal} if deal else {"deal": "random"}
        joined = await host.create(game, name="Host bot", **options)
        guest = asyncio.create_task(
            run_bot(
                server.url, joined.room, name="Guest bot", pace=0, start_timeout=10, wait_results=10
            )
        )
        await host.next_event("seat")  # the guest bot took its seat
        await host.start()
        mine = await run_bot_client(host, pace=0, start_timeout=10, wait_results=10)
        (theirs,) = await asyncio.wait_for(guest, 60)
        await host.close()

    assert mine.deal is not None and mine.deal == theirs.deal
    for result in (mine, theirs):
        final = replay(mine.deal, result.moves)
        assert final.won == result.won
        assert result.status in ("won", "resigned")
        assert result.results is not None and len(result.results) == 2
    if deal == GREEDY_WINS:
        assert mine.won and theirs.won
    ranking = {row["seat"]: row for row in mine.results or []}
    assert ranking[mine.seat]["moves"] == replay(mine.deal, mine.moves).moves


def _solvable_deal() -> str:
    """A Klondike deal the solver wins quickly and the greedy player alone does not."""
    from engine.solver import solve

    for n in range(2, 30):
        code = str(DealCode.for_game("klondike", n))
        if replay(code, greedy_line(code)).won:
            continue
        if solve(code, nodes=20_000).verdict == "winnable":
            return code
    pytest.skip("the solver found no quick line")


async def test_solver_bot_wins_at_its_pace() -> None:
    deal = _solvable_deal()
    async with live_server(countdown=0.1, rate=100_000.0, burst=100_000) as server:
        # the solver needs the deal code: only the player who typed it is told it (the bot
        # hosts); a guest is not, and plays greedy
        bot_client = await RaceClient.connect(server.url)
        joined = await bot_client.create("klondike", name="Solver", deal="code", code=deal)
        guest = await RaceClient.connect(server.url)
        await guest.join(joined.room, name="Guest")
        bot = asyncio.create_task(
            run_bot_client(
                bot_client, strength="solver", pace=100, start_timeout=10, wait_results=10
            )
        )
        await bot_client.start()
        await until_race_starts(guest)
        await guest.resign()
        ended = await guest.next_event("race_ended", timeout=30)
        result = await asyncio.wait_for(bot, 30)
        await guest.close()
        await bot_client.close()
    assert isinstance(ended, RaceEnded)
    assert result.won and result.status == "won"
    winner = ended.results[0]
    assert winner.seat == result.seat and winner.status == "won"
    assert winner.elapsed_ms is not None
    assert winner.elapsed_ms >= (len(result.moves) - 1) * 10 * 0.9  # 100 moves a second


async def test_bot_command_plays_a_race() -> None:
    from clients.cli import main

    async with live_server(countdown=0.1, rate=100_000.0, burst=100_000) as server:
        host = await RaceClient.connect(server.url)
        joined = await host.create("klondike", name="Host", deal="code", code=GREEDY_WINS)
        link = f"{server.http}/r/{joined.room}"
        command = asyncio.create_task(asyncio.to_thread(main, ["bot", link, "--pace", "0"]))
        await host.next_event("seat")
        await host.start()
        await until_race_starts(host)
        await host.resign()
        ended = await host.next_event("race_ended", timeout=20)
        assert await asyncio.wait_for(command, 20) == 0
        await host.close()
    assert isinstance(ended, RaceEnded)
    assert [r.status for r in ended.results] == ["won", "resigned"]
    assert ended.results[0].name == "Bot"
