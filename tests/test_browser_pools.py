"""Play now and ratings in real headless Chromium (issue 32): two players press Play now in
two browser contexts and are racing each other within seconds; a player left waiting is
offered a bot and races it; a rated race's room shows each racer's rating and its results
the change; the leaderboard lists settled ratings with links to the players' pages, and a
player's page draws the rating history as a chart. Accessibility checked with axe-core."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from browser_fixtures import (
    DESKTOP,
    PHONE,
    Page,
    axe_violations,
    browser,
    contexts,
    expect,
    needs_chromium,
    new_page,
    server,
)
from helpers import until
from server_fixtures import LiveServer, live_server
from sqlalchemy import Connection, insert, select

from clients.client import RaceClient
from server.records.store import SqlRecordsStore
from server.records.tables import players, ratings

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts", "server"]  # the shared fixtures, used by name


async def warmed(live: LiveServer, game: str) -> None:
    """The server's proven deals of ``game`` ready (the solver's first proof is not part of
    what a player waits for on a running server)."""
    deals = live.app.proving.deals
    deals.warm([game])
    await until(lambda: deals.ready(game), 60)


async def play_now(
    p: Page, live: LiveServer, name: str, *, players: int = 2, limit: int = 300, wait: int = 20
) -> None:
    """From the lobby: Klondike draw one, ``players``, ``limit`` seconds, Play now."""
    await p.page.goto(live.http + "/")
    await p.page.fill("#name", name)
    await p.page.check('input[name="quick-game"][value="klondike"]')
    await p.page.check(f'input[name="quick-players"][value="{players}"]')
    await p.page.check(f'input[name="quick-limit"][value="{limit}"]')
    await p.page.select_option("#quick-wait", str(wait))
    await p.page.click("#quick-play")


async def test_two_players_press_play_now_and_race_within_seconds(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    await warmed(server, "klondike")
    ann = await new_page(contexts, browser, "ann", viewport=DESKTOP, axe=True)
    bob = await new_page(contexts, browser, "bob", viewport=PHONE, has_touch=True)
    await ann.page.goto(server.http + "/")
    await expect(ann.page.locator("#play-now-panel h2")).to_have_text("Play now")
    assert await axe_violations(ann.page) == []
    await expect(ann.page.locator("#quick-kind")).to_contain_text("Casual")  # a guest here
    pressed = time.monotonic()
    await play_now(ann, server, "Ann")
    status = ann.page.locator("#quick-status")
    await expect(status).to_contain_text("Looking for players: Klondike, draw one · 2 players")
    await expect(status).to_contain_text("5 min · casual")
    assert await axe_violations(ann.page) == []
    # Bob's lobby counts Ann, waiting in the pool he is about to choose
    await bob.page.goto(server.http + "/")
    await bob.page.check('input[name="quick-game"][value="klondike"]')
    count = bob.page.locator('input[name="quick-players"][value="2"] ~ .count')
    await expect(count).to_have_text("1 seeking")
    await play_now(bob, server, "Bob")
    for p in (ann, bob):
        await expect(p.page.locator("#room-code")).to_have_text(re.compile(r"^\w{4}-\w{2}$"))
    assert (
        await ann.page.locator("#room-code").inner_text()
        == await bob.page.locator("#room-code").inner_text()
    )
    for p in (ann, bob):
        await expect(p.page.locator("#countdown")).to_be_hidden()
        await expect(p.page.locator("#btn-stock")).to_be_enabled()
        await expect(p.page.locator("#players .name")).to_have_text(["Ann", "Bob"])
    assert time.monotonic() - pressed < 15  # pressed, paired, racing: seconds
    await ann.page.click("#btn-stock")
    await expect(bob.page.locator('#players li[data-seat="1"]')).to_have_attribute(
        "data-moves", "1"
    )
    # after the race, Play again looks for the next one (a pool's room has no rematch)
    for p in (ann, bob):
        await p.page.click("#btn-resign")
        await p.page.click("#btn-resign")
    await expect(ann.page.locator("#quick-again")).to_be_visible()
    await expect(ann.page.locator("#rematch-same")).to_be_hidden()
    await ann.page.click("#quick-again")
    await expect(ann.page.locator("#quick-status")).to_contain_text("Looking for players")
    await ann.page.click("#quick-cancel")
    await expect(ann.page.locator("#quick-play")).to_be_visible()
    assert not ann.errors and not bob.errors


async def test_a_player_left_waiting_races_the_bot_offered(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    await warmed(server, "klondike")
    cid = await new_page(contexts, browser, "cid", viewport=DESKTOP, axe=True)
    await play_now(cid, server, "Cid", players=4, limit=0, wait=10)
    offers = cid.page.locator("#quick-offers button")
    await expect(offers).to_have_text(["Race a bot (casual)", "Take a room of 2"], timeout=20_000)
    assert await axe_violations(cid.page) == []
    await cid.page.click('#quick-offers button[data-offer="bot"]')
    await expect(cid.page.locator("#players .name")).to_have_text(["Cid", "Bot (greedy)"])
    await expect(cid.page.locator("#btn-stock")).to_be_enabled()
    assert not cid.errors


# --------------------------------------------------------------------- ratings


def _settled(conn: Connection) -> None:
    """Two players with settled Klondike ratings, one of them with a handle."""
    now = int(time.time() * 1000)
    conn.execute(
        insert(players),
        [
            {
                "public_id": "aaaaaaaaaaaaaaaa",
                "name": "Dee",
                "handle": "dee",
                "handle_key": "dee",
                "created_at": 0,
                "secret_hash": None,
                "recovery_hash": None,
                "deleted_at": None,
            },
            {
                "public_id": "bbbbbbbbbbbbbbbb",
                "name": "Eve",
                "handle": None,
                "handle_key": None,
                "created_at": 0,
                "secret_hash": None,
                "recovery_hash": None,
                "deleted_at": None,
            },
        ],
    )
    pks = dict(conn.execute(select(players.c.public_id, players.c.id)).all())
    conn.execute(
        insert(ratings),
        [
            {
                "player_id": pks[pid],
                "game": "klondike",
                "rating": r,
                "rd": 70.0,
                "volatility": 0.06,
                "races": 30,
                "won": 20,
                "drawn": 1,
                "lost": 9,
                "abandoned": 0,
                "last_race_at": now,
            }
            for pid, r in (("aaaaaaaaaaaaaaaa", 1712.4), ("bbbbbbbbbbbbbbbb", 1650.0))
        ],
    )


async def test_ratings_show_in_the_room_the_results_the_leaderboard_and_a_players_page(
    browser: Any, contexts: list[Any], tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    store = await SqlRecordsStore.open(url)
    await store.db.write(_settled)
    await store.close()
    async with live_server(countdown=0.3, records_url=url) as live:
        await warmed(live, "klondike")
        ann = await new_page(contexts, browser, "ann", viewport=DESKTOP, axe=True)
        bob = await new_page(contexts, browser, "bob", viewport=DESKTOP)
        for p, name in ((ann, "Ann"), (bob, "Bob")):
            await play_now(p, live, name)
            # an identity (made silently): the timed pool is rated
            await expect(p.page.locator("#quick-status")).to_contain_text("5 min · rated")
            await expect(p.page.locator("#quick-status")).to_contain_text("your rating 1500?")
        for p in (ann, bob):
            await expect(p.page.locator("#players .rating")).to_have_text(["1500?", "1500?"])
        await expect(ann.page.locator("#countdown")).to_be_hidden()
        await ann.page.click("#btn-stock")
        for p in (bob, ann):  # Bob resigns first with no move: he is ahead
            await p.page.click("#btn-resign")
            await p.page.click("#btn-resign")
        changes = ann.page.locator("#results-table td.name .rating")
        await expect(changes).to_have_count(2, timeout=15_000)
        shown = await changes.all_inner_texts()
        assert re.fullmatch(r"1\d{3}\? \(\+\d+\)", shown[0]), shown  # Bob, first
        assert re.fullmatch(r"1\d{3}\? \(\u2212\d+\)", shown[1]), shown
        assert await axe_violations(ann.page) == []

        # the leaderboard: settled ratings only, a name with a handle links its page
        board = await new_page(contexts, browser, "board", viewport=PHONE, axe=True)
        await board.page.goto(live.http + "/leaderboard/klondike")
        rows = board.page.locator("#leaderboard-table tbody tr")
        await expect(rows).to_have_count(2)
        await expect(rows.nth(0)).to_contain_text("Dee")
        await expect(rows.nth(0)).to_contain_text("1712")
        await expect(rows.nth(0).locator("a")).to_have_attribute("href", "/p/dee")
        await expect(rows.nth(1).locator("a")).to_have_count(0)  # Eve has no page
        await expect(board.page.locator("#how h2")).to_have_text("How ratings work")
        assert await axe_violations(board.page) == []

        # a player's page: the rating per game and its chart, a point per rated race
        ann_id = await ann.page.evaluate("JSON.parse(localStorage['samedeal.identity']).player")
        client = await RaceClient.connect(live.url)
        secret = await ann.page.evaluate("JSON.parse(localStorage['samedeal.identity']).secret")
        await client.identify(ann_id, secret)
        await client.set_handle("ann")
        await client.close()
        page = await new_page(contexts, browser, "page", viewport=DESKTOP, axe=True)
        await page.page.goto(live.http + "/p/ann")
        row = page.page.locator("#profile-ratings tbody tr")
        await expect(row).to_have_attribute("data-game", "klondike")
        await expect(row.locator("td").nth(2)).to_have_text("1")  # one rated race
        chart = page.page.locator('figure.rating-chart[data-game="klondike"] svg')
        await expect(chart).to_be_visible()
        await expect(chart.locator("circle")).to_have_count(1)
        assert await axe_violations(page.page) == []
        assert not any(p.errors for p in (ann, bob, board, page))
