"""The terminal client, headless with Textual's pilot, against a real server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers import until
from server_fixtures import live_server
from textual.widgets import Static

from clients.api import fetch_game, parse_game_link
from clients.client import RaceClient
from clients.i18n import Catalogue
from clients.links import parse_link
from clients.tui import RaceApp, render_board
from engine import IllegalMoveError, new_game
from protocol import RaceRecordDelayed, RaceRecorded

DEAL = "KL1-1-AAAAAAM"  # t3 shows an ace, t1-t2 is legal


def side_text(app: RaceApp) -> str:
    return str(app.query_one("#side", Static).content)


def keys_fit(app: RaceApp) -> bool:
    """The key line shows all of its text: no line wider than the screen, none cut."""
    keys = app.query_one("#keys", Static)
    region = keys.region
    lines = keys.render_lines(region.reset_offset)  # what is drawn, line by line
    drawn = "".join(strip.text for strip in lines)
    words = str(keys.content).split()
    return region.right <= app.size.width and all(w in drawn for w in words)


def test_render_board_shows_face_up_cards_only() -> None:
    view = new_game("EH1-N-AAAAAAF").player_view()
    text = render_board(view, cursor="t9")
    plain = text.plain
    assert plain.count("░░░") == 36 + 1  # 36 face-down cards and the stock, drawn as backs
    for column in view["tableau"]:
        (top,) = column["up"]
        suit = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[top[1]]
        shown = ("10" if top[0] == "T" else top[0]) + suit
        assert shown in plain
    assert "♠" in plain.splitlines()[1]  # empty Easy Harp slots show their suit


async def test_play_a_race_in_the_terminal() -> None:
    async with live_server(countdown=0.2) as server:
        host = await RaceClient.connect(server.url)
        joined = await host.create("klondike", name="Ann", deal="code", code=DEAL)
        link = parse_link(f"{server.http}/r/{joined.room}")
        app = RaceApp(link, role="player", name="Tim [bold]x[/]", lang="en")
        watcher = RaceApp(link, role="spectator", lang="sv")
        async with app.run_test(size=(120, 40)) as pilot, watcher.run_test(size=(120, 40)) as wp:
            await until(lambda: len(app.seats) == 2)
            assert "Tim [bold]x[/]" in side_text(app)  # a name is text, not markup
            await until(lambda: app.spectators == 1)  # the watcher
            await host.start()
            await until(lambda: app.view is not None and app._now() >= (app.start_at or 0))
            assert app.deal == "" and watcher.deal == ""  # not told while racing
            mirror = new_game(DEAL)

            # the stock, by key
            await pilot.press("s")
            mirror.push("s")
            await until(lambda: app.view is not None and app.view["moves"] == 1)

            # a typed move
            await pilot.press("colon")
            await pilot.press(*"t3-f", "enter")
            mirror.push("t3-f")
            await until(lambda: app.view is not None and app.view["moves"] == 2)
            assert app.view is not None and app.view["foundations"][0] == ["AD"]

            # a refused move with the cursor: t4 onto t7
            await pilot.press("escape")
            assert app.cursor == "t1"
            await pilot.press(*["right"] * 3, "enter", *["right"] * 3, "enter")
            with pytest.raises(IllegalMoveError) as refusal:
                mirror.copy().push("t4-t7")
            await until(lambda: refusal.value.reminder in app.message)

            # a good one with the digit keys: 7S from column 1 onto column 2
            await pilot.press("1", "2")
            mirror.push("t1-t2")
            await until(lambda: app.view == mirror.player_view())
            assert keys_fit(app)

            # the opponent's progress shows up, counted in words that agree with the number
            await host.move("s")
            await until(lambda: app.seats[1]["moves"] == 1)
            assert "1 move ·" in side_text(app) and "1 moves" not in side_text(app)
            # the spectator (in Swedish) follows the player's board
            await wp.press("n")
            await until(lambda: watcher.view is not None)
            assert watcher.following == 1
            await wp.press("n")
            await until(lambda: watcher.following == 2 and watcher.view == mirror.player_view())

            assert "Spelare" in side_text(watcher)

            # Ctrl+R asks first; any other key keeps the race going
            await pilot.press("ctrl+r")
            await until(lambda: "Ctrl+R" in app.message)
            assert app.phase == "running" and app.seats[2]["status"] == "playing"
            await pilot.press("escape", "ctrl+r")  # any other key keeps it going: asked again
            await until(lambda: "Ctrl+R" in app.message)
            assert app.seats[2]["status"] == "playing"
            # both give up: the results, with a share text that leads to the deal
            await pilot.press("ctrl+r")
            await host.resign()
            await until(lambda: app.results is not None)
            results = str(app.query_one("#results", Static).content)
            assert app.results is not None and app.results[0]["name"] == "Tim [bold]x[/]"
            share = app.share_text()
            assert f"{server.http}/d/{DEAL}" in share and "1st of 2" in share
            assert "t3" not in share and "AD" not in share  # no spoilers
            assert keys_fit(app)
            del results
            await until(lambda: watcher.results is not None)
            # fair play: the deal code shows only once the race is over
            assert app.deal == DEAL and watcher.deal == DEAL
        await host.close()


async def test_host_creates_starts_and_resigns_in_the_terminal() -> None:
    async with live_server(countdown=0.1) as server:
        link = parse_link(server.url)
        app = RaceApp(
            link,
            role="player",
            name="Solo",
            create="easy-harp",
            create_options={"deal": "code", "code": "EH1-N-AAAAAAT"},
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.room is not None and app.host == app.seat)
            await pilot.press("ctrl+g")
            await until(lambda: app.view is not None and app._now() >= (app.start_at or 0))
            assert app.view is not None and len(app.view["foundations"]) == 8
            await pilot.press(*["right"] * 2)  # from t1 to t3, the ace of hearts
            assert app.cursor == "t3"
            await pilot.press("f")
            await until(lambda: app.view is not None and app.view["moves"] == 1)
            assert app.view is not None and app.view["foundations"][1] == ["AH"]
            await pilot.press("ctrl+r", "ctrl+r")
            await until(lambda: app.phase == "ended" and app.results is not None)
            assert app.results is not None and app.results[0]["status"] == "resigned"
            await pilot.press("ctrl+g")  # a rematch on the same deal
            await until(lambda: app.phase == "running" and app.race == 2)


def results_text(app: RaceApp) -> str:
    """What the results panel draws, its lines joined and its spaces collapsed."""
    panel = app.query_one("#results", Static)
    lines = panel.render_lines(panel.region.reset_offset)
    return " ".join(" ".join(strip.text for strip in lines).split())


def solo_app(server_url: str, lang: str) -> RaceApp:
    """A terminal that hosts a room of its own on ``DEAL``."""
    return RaceApp(
        parse_link(server_url),
        role="player",
        name="Solo",
        create="klondike",
        create_options={"deal": "code", "code": DEAL},
        lang=lang,
    )


async def race_and_resign(app: RaceApp, pilot: Any) -> None:
    """Start the room's race with Ctrl+G and resign it (Ctrl+R twice)."""
    await until(lambda: app.room is not None and app.host == app.seat)
    await pilot.press("ctrl+g")
    await until(lambda: app.phase == "running" and app._now() >= (app.start_at or 0))
    await pilot.press("ctrl+r", "ctrl+r")


async def test_the_results_link_the_replay_once_the_race_is_recorded(tmp_path: Any) -> None:
    records = f"sqlite:///{tmp_path / 'records.db'}"
    async with live_server(countdown=0.1, records_url=records) as server:
        app = solo_app(server.url, "sv")
        async with app.run_test(size=(120, 40)) as pilot:
            await race_and_resign(app, pilot)
            await until(lambda: app.record is not None)
            record = app.record
            assert record is not None and record.startswith(f"{server.http}/g/")
            # in the player's language
            await until(lambda: f"Se reprisen: {record}" in results_text(app))
            replay = await asyncio.to_thread(fetch_game, parse_game_link(record))
            assert (replay.deal, replay.race) == (DEAL, 1)  # the race just played
            await pilot.press("ctrl+g")  # a rematch: the last race's link goes with its results
            await until(lambda: app.phase == "running" and app.race == 2)
            assert app.record is None


async def test_the_results_say_when_the_record_waits_for_the_database() -> None:
    async with live_server(countdown=0.1) as server:  # no records: only what the test tells
        app = solo_app(server.url, "en")
        async with app.run_test(size=(120, 40)) as pilot:
            await race_and_resign(app, pilot)
            await until(lambda: app.phase == "ended" and app.results is not None)
            assert app.room is not None
            note = " ".join(Catalogue("en").t("results.record_delayed").split())
            app.apply_event(RaceRecordDelayed(room=app.room, seq=0, race=app.race - 1))
            app.refresh_all()
            assert app.record is None  # an earlier race's record is not this one's
            app.apply_event(RaceRecordDelayed(room=app.room, seq=0, race=app.race))
            app.refresh_all()
            await until(lambda: note in results_text(app))
            app.apply_event(RaceRecorded(room=app.room, seq=0, race=app.race, game_id="g1"))
            app.refresh_all()
            await until(lambda: f"Watch the replay: {server.http}/g/g1" in results_text(app))
            assert note not in results_text(app)


async def test_the_terminal_speaks_russian_rule_reminders_included() -> None:
    ru = Catalogue("ru")
    async with live_server(countdown=0.1) as server:
        app = RaceApp(
            parse_link(server.url),
            role="player",
            name="Соло",
            create="klondike",
            create_options={"deal": "code", "code": DEAL},
            lang="ru",
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.room is not None and app.host == app.seat)
            assert keys_fit(app)
            await pilot.press("ctrl+g")
            await until(lambda: app.view is not None and app._now() >= (app.start_at or 0))
            await until(lambda: ru.t("race.on") in str(app.query_one("#title", Static).content))
            await pilot.press("4", "7")  # 10C onto 4H: refused, reminded in Russian
            with pytest.raises(IllegalMoveError) as refusal:
                new_game(DEAL).push("t4-t7")
            await until(lambda: ru.t(f"rule.{refusal.value.rule}") in app.message)
            assert keys_fit(app)
            await pilot.press("ctrl+l")  # the switch: Swedish next
            assert app.cat.lang == "sv"
            assert "Spelare" in side_text(app)


async def test_a_rematch_is_answered_and_the_room_left_in_the_terminal(on_day: Any) -> None:
    """Issue 18, items 13 and 17 in the terminal: a daily room says so; the host's rematch
    is answered with n (sit out) or y (race); Ctrl+X asks while racing, then leaves."""
    on_day("2026-04-16")  # a known day: its proof's cost the same every run
    async with live_server(countdown=0.1) as server:
        host = await RaceClient.connect(server.url)
        joined = await host.create("easy-harp", name="Ann", deal="daily")
        app = RaceApp(parse_link(f"{server.http}/r/{joined.room}"), name="Tim", lang="en")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: len(app.seats) == 2)
            assert app.daily and "Deal of the day" in str(app.query_one("#title", Static).content)

            async def race_over() -> None:
                await host.resign()
                if app.racing():
                    await pilot.press("ctrl+r", "ctrl+r")
                await until(lambda: app.phase == "ended")

            await host.start()
            await until(lambda: app.racing() and app._now() >= (app.start_at or 0))
            await race_over()
            assert "deal of the day" in app.share_text()
            await host.rematch("same")
            await until(lambda: app.offer_asked())
            assert "Ann offers a rematch on the same deal" in app.message
            assert "Race again" in str(app.query_one("#keys", Static).content)
            assert keys_fit(app)
            await pilot.press("n")  # sit it out: the race starts without Tim
            await until(lambda: app.phase == "running" and app.race == 2)
            assert app.participants == [1] and not app.racing()
            await pilot.press("s")  # not racing: nothing is sent
            await race_over()
            await host.rematch("random")
            await until(lambda: app.offer_asked())
            await pilot.press("y")
            await until(lambda: app.race == 3 and app.racing())
            assert app.participants == [1, 2]
            await pilot.press("ctrl+x")  # racing: it asks first
            await until(lambda: "Ctrl+X" in app.message)
            assert app.racing()
            await pilot.press("ctrl+x")
            await until(lambda: app.room is None)
            left = await host.next_event("seat")
            while not getattr(left, "left", False):
                left = await host.next_event("seat")
            assert getattr(left, "seat", None) == 2
            assert "^X" not in str(app.query_one("#keys", Static).content)
        await host.close()


async def test_the_host_sees_the_link_and_a_refusal_does_not_linger(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 31, item 12: the terminal host is shown the room's link to share (the waiting
    room and between races), and a refused move's reminder goes after a few seconds, as
    the browser's does (it stayed at the bottom, read as a new refusal)."""
    monkeypatch.setattr("clients.tui.REFUSAL_SECONDS", 0.3)
    async with live_server(countdown=0.1) as server:
        app = RaceApp(
            parse_link(server.url),
            name="Host",
            create="klondike",
            create_options={"deal": "code", "code": DEAL},
            lang="en",
        )
        async with app.run_test(size=(120, 40)) as pilot:
            await until(lambda: app.room is not None and app.host == app.seat)
            await until(lambda: f"/r/{app.room}" in side_text(app))
            assert "Room link" in side_text(app)
            await pilot.press("ctrl+g")
            await until(lambda: app.view is not None and app._now() >= (app.start_at or 0))
            assert f"/r/{app.room}" not in side_text(app)  # the race has the screen
            await pilot.press("colon")
            await pilot.press(*"t4-t7", "enter")
            await until(lambda: app.message.startswith("t4-t7: "))
            await until(lambda: app.message == "")
