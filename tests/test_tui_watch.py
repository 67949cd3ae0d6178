"""Watching from the terminal: ``samedeal watch`` (the live list, to pick from, and
``--list``), a spectator switching between the boards it follows, and a tournament round's
boards, refused while it runs, followed again when the room says they are open."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from helpers import until, until_race_starts
from server_fixtures import ROOT, LiveServer, get_json, live_server
from textual.widgets import Static

from clients.client import RaceClient
from clients.links import parse_link
from clients.tui import RaceApp, WatchApp
from protocol import Ack, TournamentSeat

DEAL = "KL1-1-AAAAAAM"


async def race(server: LiveServer, players: int, **options: Any) -> tuple[str, list[RaceClient]]:
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", name="Ann", deal="code", code=DEAL, **options)
    clients = [host]
    for i in range(1, players):
        c = await RaceClient.connect(server.url)
        await c.join(joined.room, name=f"Racer{i + 1}", key=host.key)
        clients.append(c)
    await host.start()
    await until_race_starts(host)
    return joined.room, clients


async def samedeal(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        *args,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_samedeal_watch_lists_the_live_races() -> None:
    async with live_server(countdown=0.1) as server:
        room, players = await race(server, 2)
        secret, others = await race(server, 1, private=True)

        async def listed() -> bool:  # the directory is written, then told
            _, body = await get_json(server.port, "/api/live")
            return any(r["room"] == room for r in body["rooms"])

        await until(listed)
        status, out, err = await samedeal("watch", server.http, "--list", "--lang", "en")
        assert status == 0, err
        (line,) = [x for x in out.splitlines() if room in x]
        assert "Klondike, draw one" in line and "Ann 0/52" in line and "Racer2 0/52" in line
        assert secret not in out
        status, out, err = await samedeal("watch", server.http, "--sort", "best")
        assert status == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
        for c in players + others:
            await c.close()


async def test_pick_a_race_from_the_list() -> None:
    async with live_server(countdown=0.1) as server:
        room, players = await race(server, 2)
        app = WatchApp(server.url, lang="sv")
        async with app.run_test(size=(120, 30)) as pilot:
            await until(lambda: room in app.rooms)
            await pilot.press("o")  # another order, the same race
            await until(lambda: app.sort == "watched" and room in app.rooms)
            await pilot.press("enter")
            await until(lambda: app.return_value is not None)
        assert app.return_value == room
        for c in players:
            await c.close()


async def test_a_spectator_switches_between_four_boards_at_once() -> None:
    async with live_server(countdown=0.1) as server:
        room, players = await race(server, 5)
        app = RaceApp(parse_link(f"{server.http}/r/{room}"), role="spectator", lang="en")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: len(app.participants) == 5)
            await pilot.press("n")  # follows four racers, shows the first
            await until(lambda: len(app.boards) == 4)
            assert app.follows == [1, 2, 3, 4] and app.following == 1
            assert isinstance(await players[2].move("s"), Ack)
            await until(lambda: app.boards[3]["moves"] == 1)
            await pilot.press("3")  # seat 3's board at once: no request, no wait
            assert app.following == 3 and app.view is not None and app.view["moves"] == 1
            await pilot.press("n", "n")  # seat 4, then the next four racers
            await until(lambda: app.follows == [5, 1, 2, 3] and app.following == 5)
            await until(lambda: app.view is not None)
            await pilot.press("c")  # applause, beside the board shown
            await until(lambda: (5 in app.reactions) and app.reactions[5] == {"clap": 1})
            assert "Applause" in str(app.query_one("#side", Static).content)
        for c in players:
            await c.close()


async def test_a_spectator_follows_a_rounds_boards_again_once_they_are_open(
    tmp_path: Path,
) -> None:
    async with live_server(
        countdown=0.05,
        records_url=f"sqlite:///{tmp_path / 'records.db'}",
        tournament_countdown=0.2,
        tournament_lease=1.0,
    ) as server:
        host, ann = await RaceClient.connect(server.url), await RaceClient.connect(server.url)
        await host.new_player("Host")
        await ann.new_player("Ann")
        made = await host.tournament_create(
            name="Cup", game="klondike", rounds=1, round_start="manual", deals="any"
        )
        await ann.tournament_join(made.page.id, name="Ann")
        await host.tournament_host(made.page.id, "start")
        seat = await ann.next_event("tournament_seat", timeout=10)
        assert isinstance(seat, TournamentSeat)
        await ann.take_seat(seat)
        # by the room's link: the terminal never opened the tournament
        app = RaceApp(parse_link(f"{server.http}/r/{seat.room}"), role="spectator", lang="en")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.participants == [seat.seat])
            await pilot.press("n")  # refused while the round runs
            await until(lambda: app.refused == [seat.seat])
            assert not app.boards and app.follows == []

            async def moved() -> bool:  # refused during the countdown
                return isinstance(await ann.move("s"), Ack)

            await until(moved)
            await ann.resign()  # everyone is done: the round is over, its boards open
            await until(lambda: seat.seat in app.boards, timeout=10)
            assert app.follows == [seat.seat] and app.refused == []
        for c in (host, ann):
            await c.close()
