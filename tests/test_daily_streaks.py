"""The daily challenge on the player page (``GET /api/players/{handle}``: ``daily``): days
played and won, in a row and at most, and the best score, over two days of a real server
(its clock moved) — a resigned attempt, then a won one (the solver's line)."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
from helpers import until, until_race_starts
from server_fixtures import DAILY_TEST_KEY, ServerHandle, StartServer

from engine.fair import secret_daily
from protocol import RaceEnded
from protocol.api import PlayerPage


async def get(server: ServerHandle, path: str) -> tuple[int, Any]:
    def fetch() -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as r:
                return r.status, orjson.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, orjson.loads(exc.read())

    return await asyncio.to_thread(fetch)


async def daily_race(server: ServerHandle, me: Any, moves: tuple[str, ...] = ()) -> RaceEnded:
    """``me`` plays today's Klondike alone, on a connection of its own: ``moves``, then
    resigns unless they won."""
    client = await server.client()
    await client.identify(me.player, me.secret)
    await client.create("klondike", deal="daily", max_players=1)
    await client.start()
    await until_race_starts(client)
    for move in moves:
        await client.move(move)
    if not moves:
        await client.resign()
    ended = await client.next_event("race_ended", timeout=10)
    assert isinstance(ended, RaceEnded)
    return ended


async def until_recorded(server: ServerHandle, day: str, player: str) -> None:
    """Wait until the player's attempt of ``day`` is on its leaderboard, over."""

    async def recorded() -> bool:
        status, board = await get(server, f"/api/daily/{day}/klondike?player={player}")
        return status == 200 and bool(board["you"]) and board["you"]["status"] != "playing"

    await until(recorded, 10)


async def test_the_player_page_tells_the_daily_streaks_and_best_score(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    on_day("2026-04-15")
    server = await start_server("memory", records_url=f"sqlite:///{tmp_path / 'records.db'}")
    ann = await server.client()
    me = await ann.new_player("Ann")
    await ann.request({"type": "set_handle", "handle": "ann_daily"})
    status, page = await get(server, "/api/players/ann_daily")
    assert status == 200 and page["daily"] == []  # no daily played yet

    on_day("2026-04-16")
    await daily_race(server, me)
    await until_recorded(server, "2026-04-16", me.player)
    on_day("2026-04-17")
    line = secret_daily(DAILY_TEST_KEY, "klondike", "2026-04-17").solution
    assert line is not None
    ended = await daily_race(server, me, line)
    (won,) = ended.results
    assert won.status == "won"
    await until_recorded(server, "2026-04-17", me.player)

    status, page = await get(server, "/api/players/ann_daily")
    assert status == 200
    assert PlayerPage.model_validate(page).daily[0].game == "klondike"
    assert page["daily"] == [
        {
            "game": "klondike",
            "days_played": 2,
            "days_won": 1,
            "played_streak": 2,
            "won_streak": 1,
            "longest_played_streak": 2,
            "longest_won_streak": 1,
            "best_score": won.score,
        }
    ]
    # the day's board tells the player their figures in its game too (the race's results
    # and share text say the days in a row from it; issue 31)
    status, board = await get(server, f"/api/daily/2026-04-17/klondike?player={me.player}")
    assert status == 200 and board["streak"] == page["daily"][0]
    status, other = await get(server, f"/api/daily/2026-04-17/easy-harp?player={me.player}")
    assert status == 200 and other["streak"] is None  # none played
    # a day without playing: the runs that end today or yesterday still stand …
    on_day("2026-04-18")
    status, page = await get(server, "/api/players/ann_daily")
    assert page["daily"][0]["played_streak"] == 2 and page["daily"][0]["won_streak"] == 1
    # … and two days later they are broken; the longest runs stay
    on_day("2026-04-19")
    status, page = await get(server, "/api/players/ann_daily")
    daily = page["daily"][0]
    assert (daily["played_streak"], daily["won_streak"]) == (0, 0)
    assert (daily["longest_played_streak"], daily["longest_won_streak"]) == (2, 1)
