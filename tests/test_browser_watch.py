"""Watching in real headless Chromium: the live directory (/watch) kept live, its orders and
its Watch link; the featured race (/tv) with its boards, moving on by itself when its race
ends; a spectator following several boards side by side; reactions beside a player; the
lobby's live races."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from browser_fixtures import (
    axe_violations,
    browser,
    contexts,
    expect,
    needs_chromium,
    new_page,
    server,
)
from helpers import until, until_race_starts
from server_fixtures import LiveServer, get_json

from clients.client import RaceClient
from protocol import Ack

DEAL = "KL1-1-AAAAAAM"  # column 3 shows an ace

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts", "server"]  # the shared fixtures, used by name


async def race(
    server: LiveServer,
    players: int = 2,
    spectators: int = 0,
    game: str = "klondike",
    **options: Any,
) -> tuple[str, list[RaceClient], list[RaceClient]]:
    """A room with a race under way (its countdown over), and spectators."""
    options.setdefault("deal", "code")
    options.setdefault("code", DEAL)
    host = await RaceClient.connect(server.url)
    joined = await host.create(game, name="Ann", **options)
    clients = [host]
    for i in range(1, players):
        c = await RaceClient.connect(server.url)
        await c.join(joined.room, name=f"Bob{i}", key=host.key)
        clients.append(c)
    watchers = []
    for _ in range(spectators):
        w = await RaceClient.connect(server.url)
        await w.join(joined.room, role="spectator", key=host.key)
        watchers.append(w)
    await host.start()
    await until_race_starts(host)
    return joined.room, clients, watchers


async def close_all(*groups: list[RaceClient]) -> None:
    for group in groups:
        for c in group:
            await c.close()


async def test_the_live_directory_page(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    quiet, quiet_players, _ = await race(server)
    busy, busy_players, fans = await race(server, spectators=2)
    secret, secret_players, _ = await race(server, private=True)
    p = await new_page(contexts, browser, "directory", axe=True)
    await p.page.goto(server.http + "/watch")
    rows = p.page.locator("#watch-list .live-room")
    await expect(p.page.locator(f'#watch-list [data-room="{busy}"]')).to_be_visible()
    await expect(p.page.locator(f'#watch-list [data-room="{quiet}"]')).to_be_visible()
    assert await p.page.locator(f'[data-room="{secret}"]').count() == 0
    await expect(p.page.locator(f'[data-room="{busy}"] .live-player')).to_have_count(2)

    # most watched: the busy room above the quiet one
    await p.page.click('#watch .sort-tabs [data-sort="watched"]')
    await expect(p.page.locator('#watch .sort-tabs [data-sort="watched"]')).to_have_attribute(
        "aria-pressed", "true"
    )

    async def order() -> list[str]:
        codes = await rows.evaluate_all("(els) => els.map((e) => e.dataset.room)")
        return [c for c in codes if c in (busy, quiet)]

    await expect(p.page.locator("#watch-list .live-room").first).to_be_visible()
    for _ in range(40):
        if await order() == [busy, quiet]:
            break
        await p.page.wait_for_timeout(100)
    assert await order() == [busy, quiet]
    assert "sort=watched" in p.page.url
    assert await axe_violations(p.page) == []

    # live: a race started now shows without a reload, progress too
    fresh, fresh_players, _ = await race(server)
    await expect(p.page.locator(f'#watch-list [data-room="{fresh}"]')).to_be_visible()
    assert isinstance(await fresh_players[0].move("t3-f"), Ack)
    await expect(p.page.locator(f'[data-room="{fresh}"] .live-player').first).to_contain_text(
        "1/52"
    )

    # Watch: straight into the room as a spectator
    await p.page.click(f'[data-room="{busy}"] .live-watch')
    await expect(p.page).to_have_url(re.compile(f"/r/{busy}$"))
    await expect(p.page.locator("#players .player")).to_have_count(2)
    await expect(p.page.locator("#players .watch").first).to_be_visible()
    await close_all(quiet_players, busy_players, fans, secret_players, fresh_players)


async def test_the_lobby_shows_live_races(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    room, players, fans = await race(server, spectators=3)
    p = await new_page(contexts, browser, "lobby")
    await p.page.goto(server.http + "/")
    await expect(p.page.locator(f'#lobby-live [data-room="{room}"]')).to_be_visible()
    await expect(p.page.locator('#live-panel a[href="/watch"]')).to_be_visible()
    await expect(p.page.locator('#topnav a[href="/watch"]')).to_be_visible()
    await close_all(players, fans)


async def test_the_featured_race_moves_on_by_itself(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    # klondike-3 here: the other tests' klondike races do not get in the way
    first, (ann, bob), fans = await race(
        server, spectators=3, game="klondike-3", code="KL1-3-AAAAAAD"
    )

    async def first_featured() -> bool:
        _, body = await get_json(server.port, "/api/live?game=klondike-3")
        return {"game": "klondike-3", "room": first} in body["featured"]

    # featured while it races alone (two races started at once would be told apart by
    # their spectator counts, which are told at most once a second: by the codes, maybe)
    await until(first_featured, timeout=5, every=0.1)
    second, others, fans2 = await race(
        server, spectators=1, game="klondike-3", code="KL1-3-AAAAAAD"
    )
    p = await new_page(contexts, browser, "tv", axe=True)
    await p.page.goto(server.http + "/tv/klondike-3")
    await expect(p.page.locator("#tv-status")).to_contain_text(first)
    boards = p.page.locator("#tv-boards .followed")
    await expect(boards).to_have_count(2)
    await expect(boards.first.locator(".pile.column")).to_have_count(7)
    await expect(p.page.locator("#tv-players .player")).to_have_count(2)
    assert isinstance(await ann.move("s"), Ack)
    await expect(p.page.locator("#tv-players .player").first).to_contain_text("1")
    # the race ends: the next one comes on by itself
    await ann.resign()
    await bob.resign()
    await expect(p.page.locator("#tv-status")).to_contain_text(second, timeout=8000)
    await expect(boards).to_have_count(2)
    assert await axe_violations(p.page) == []
    await close_all([ann, bob], fans, others, fans2)


async def test_a_spectator_watches_boards_side_by_side_and_reacts(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    room, players, _ = await race(server, players=3)
    fan = await new_page(contexts, browser, "fan")
    other = await new_page(contexts, browser, "other")
    for page in (fan, other):
        await page.page.goto(f"{server.http}/r/{room}?watch=1")
        await expect(page.page.locator("#players .player")).to_have_count(3)
    watch = fan.page.locator("#players .watch")
    await watch.nth(0).click()
    await expect(fan.page.locator("#board .pile.column")).to_have_count(7)  # one board
    await watch.nth(2).click()
    await expect(fan.page.locator("#board.multi .followed")).to_have_count(2)
    await expect(fan.page.locator("#board .followed").nth(1)).to_have_attribute("data-seat", "3")
    assert isinstance(await players[2].move("s"), Ack)
    stock = fan.page.locator('#board .followed[data-seat="3"] [data-pile="s"]')
    await expect(stock).to_have_attribute("aria-label", re.compile("23"))
    # a reaction shows beside the player, for everyone in the room
    await fan.page.click('#reaction-row [data-reaction="clap"]')
    await expect(
        other.page.locator('#players .player[data-seat="1"] .reaction-pop')
    ).to_be_visible()
    await expect(fan.page.locator('#players .player[data-seat="1"] .reaction-pop')).to_be_visible()
    await close_all(players)


async def test_a_race_showing_progress_only_is_listed_and_on_tv_without_boards(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    """A race whose boards the board rule hides (here the host's choice; the deal of the
    day and a tournament round are hidden the same way): the directory lists it saying so,
    and /tv shows its players' progress and why no board is there — then, once the race is
    over, asks for its boards again by itself and is sent them."""
    # easy-harp here: the other tests' races do not get in the way
    room, players, fans = await race(
        server, spectators=2, game="easy-harp", code="EH1-N-AAAAAAF", spectator_boards=False
    )
    p = await new_page(contexts, browser, "tv", axe=True)
    await p.page.goto(server.http + "/watch?game=easy-harp")
    row = p.page.locator(f'#watch-list [data-room="{room}"]')
    await expect(row).to_contain_text("progress only")
    frames: list[tuple[str, dict[str, Any]]] = []  # /tv's room socket: ("sent" | "got", frame)

    def on_socket(ws: Any) -> None:
        if "?room=" in ws.url:  # the second connection, the one watching the room
            ws.on("framesent", lambda data: frames.append(("sent", json.loads(data))))
            ws.on("framereceived", lambda data: frames.append(("got", json.loads(data))))

    p.page.on("websocket", on_socket)
    await p.page.goto(server.http + "/tv/easy-harp")
    await expect(p.page.locator("#tv-status")).to_contain_text(room)
    await expect(p.page.locator("#tv-players .player")).to_have_count(2)
    await expect(p.page.locator("#tv-boards")).to_contain_text("hidden")
    assert await p.page.locator("#tv-boards .followed").count() == 0
    assert isinstance(await players[0].move("s"), Ack)  # progress still shows
    await expect(p.page.locator("#tv-players .player").first).to_contain_text("1")
    assert await axe_violations(p.page) == []

    # the race ends, and the host's choice with it: /tv asks for the same boards once more,
    # without a click, and is sent them (the frames tell it: the page moves on to the next
    # featured race, or none, within a second)
    def follows() -> list[tuple[list[int], str]]:
        sent = [m for way, m in frames if way == "sent"]
        asked = {m["id"]: m["seats"] for m in sent if m["type"] == "follow"}
        return [
            (asked[m["id"]], m.get("code", m["type"]))
            for way, m in frames
            if way == "got" and m.get("id") in asked
        ]

    await until(lambda: [answer for _, answer in follows()] == ["boards_hidden"])
    for player in players:
        await player.resign()
    await until(lambda: len(follows()) == 2, timeout=5)
    (seats, refused), (again, answer) = follows()
    assert (refused, answer) == ("boards_hidden", "ok") and again == seats
    await until(lambda: any(way == "got" and m["type"] == "board" for way, m in frames))
    await close_all(players, fans)
