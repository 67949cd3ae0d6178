"""``samedeal play --quick``: the terminal client seeks a race, is seated with a stranger
and races; a player left waiting is offered a bot and takes it with a key; after a race,
Ctrl+G looks for the next one. Headless with Textual's pilot, against a real server."""

from __future__ import annotations

from helpers import until
from server_fixtures import LiveServer, live_server
from textual.widgets import Static

from clients.client import RaceClient
from clients.tui_quick import QuickApp
from protocol import Joined, RaceStarting


async def warmed(server: LiveServer, game: str) -> None:
    """The server's deals of ``game`` proven before Textual takes the test's stderr (the
    solver's process cannot start under it; a real server runs apart from its clients)."""
    deals = server.app.proving.deals
    deals.warm([game])
    await until(lambda: deals.ready(game), 60)


def title(app: QuickApp) -> str:
    return str(app.query_one("#title", Static).content)


def keys(app: QuickApp) -> str:
    return str(app.query_one("#keys", Static).content)


async def test_play_now_in_the_terminal_races_a_stranger() -> None:
    async with live_server(countdown=0.2) as server:
        await warmed(server, "klondike-3")
        app = QuickApp(server.url, "klondike-3", time_limit=300, name="Tim", lang="en")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.seeking is not None)
            assert app.seeking is not None and app.seeking.pool == "klondike-3:2:300:casual"
            assert "Looking for players: Klondike" in title(app) and "casual" in title(app)
            assert "stop looking" in keys(app)
            bob = await RaceClient.connect(server.url)
            await bob.seek("klondike-3", 2, 300, name="Bob")
            seat = await bob.next_event("joined", timeout=60)
            assert isinstance(seat, Joined)
            await until(lambda: app.seeking is None and app.room == seat.room, 60)
            await until(lambda: app.phase == "running" and app.view is not None)
            assert sorted(s["name"] for s in app.seats.values()) == ["Bob", "Tim"]
            # "Found!" was said at the seat and cleared at the countdown, as every race
            # start clears the message line (clients/tui.py)
            await bob.resign()
            await pilot.press("ctrl+r", "ctrl+r")  # resigns: the race ends
            await until(lambda: app.phase == "ended")
            assert "play again" in keys(app)
            await pilot.press("ctrl+g")  # the next race: back in the pool
            await until(lambda: app.seeking is not None and app.room is None)
            await bob.close()


async def test_a_terminal_player_left_waiting_takes_the_bot_offered() -> None:
    async with live_server(countdown=0.2) as server:
        await warmed(server, "klondike")
        app = QuickApp(server.url, "klondike", players=4, time_limit=None, wait=5, lang="en")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.offers == ["bot", "smaller"], 30)
            assert "1: Race a bot (casual)" in app.message and "2: Take a room of 2" in app.message
            await pilot.press("2")  # a room of 2: still waiting, the bot still offered
            await until(lambda: app.seeking is not None and app.seeking.players == 2)
            assert app.offers == ["bot"]
            await pilot.press("1")
            await until(lambda: app.seeking is None and app.phase == "running", 30)
            assert "Bot (greedy)" in [s["name"] for s in app.seats.values()]
            assert app.client is not None
            started = [m for m in app.client.history if isinstance(m, RaceStarting)]
            assert started and sorted(started[-1].seats) == [1, 2]
