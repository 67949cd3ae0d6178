"""A tournament in real headless Chromium: a host who does not play creates it from the
form, two players join from its link and race a round with the standings beside the board,
a spectator watches a player's progress (a round shows no board before it is over, then
their board without a click once it is — from the tournament's page, and from the room's
link, told by the room), and everyone sees the standings and the revealed
seed at the end."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_fixtures import Page, browser, contexts, expect, needs_chromium, new_page
from server_fixtures import LiveServer, live_server

EN: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent.parent / "clients/web/i18n/en.json").read_text("utf-8")
)

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts"]  # the shared fixtures, used by name


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def tserver(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    """A server keeping records (tournaments need identities)."""
    path: Path = tmp_path_factory.mktemp("records") / "records.db"
    async with live_server(
        countdown=0.3,
        records_url=f"sqlite:///{path}",
        identity_limit=100,
        tournament_countdown=1.5,
        tournament_lease=1.0,
    ) as live:
        yield live


async def join(p: Page, link: str, name: str) -> None:
    await p.page.goto(link)
    await p.page.fill("#t-join-name", name)
    await p.page.click("#t-join")
    await expect(p.page.locator("#t-you")).to_contain_text("You are in the tournament")


async def resign(p: Page) -> None:
    await expect(p.page.locator("#countdown")).to_be_hidden(timeout=10_000)
    await p.page.click("#btn-resign")
    await p.page.click("#btn-resign")  # it asks first


async def test_a_host_two_players_and_a_spectator(
    tserver: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host = await new_page(contexts, browser, "host")
    await host.page.goto(tserver.http + "/")
    await expect(host.page.locator("#tournaments-panel")).to_be_visible()
    await host.page.click("#t-create-link")
    await host.page.fill("#t-create-name", "Browser cup")
    await host.page.select_option("#t-create-game", "klondike")
    await host.page.fill("#t-create-rounds", "1")
    await host.page.select_option("#t-create-deals", "any")
    await host.page.click("#t-create-submit")
    await expect(host.page.locator("#t-head h1")).to_have_text("Browser cup")
    await expect(host.page.locator("#t-host")).to_be_visible()  # the host's panel
    await expect(host.page.locator("#t-fair")).to_contain_text("SHA-256")
    link = await host.page.locator("#t-link").input_value()
    assert re.search(r"/t/\w{4}-\w{2}$", link)

    # the lobby lists it
    ann = await new_page(contexts, browser, "ann")
    await ann.page.goto(tserver.http + "/")
    await expect(ann.page.locator("#tournament-list")).to_contain_text("Browser cup")
    await join(ann, link, "Ann")
    bob = await new_page(contexts, browser, "bob")
    await join(bob, link, "Bob")
    watcher = await new_page(contexts, browser, "watcher")
    await watcher.page.goto(link)
    await expect(watcher.page.locator("#t-join")).to_be_visible()  # a guest may join, or watch

    # the host (not playing) starts: the players get the race view, standings beside it
    await host.page.click("#t-start")
    for p in (ann, bob):
        await expect(p.page.locator("#board .pile").first).to_be_visible(timeout=10_000)
        await expect(p.page.locator("#t-side")).to_be_visible()
        await expect(p.page.locator("#t-side")).to_contain_text("Browser cup")
    await expect(host.page.locator("#t-live")).to_contain_text("Round 1")

    # the spectator watches Ann: her progress and the standings, no board — a round's boards
    # are shown once it is over (the host set no delay), and the page says so
    await expect(watcher.page.locator("#t-live")).to_be_visible()
    await watcher.page.locator("#t-live li", has_text="Ann").get_by_role("button").click()
    await expect(watcher.page.locator("#toast")).to_have_text(EN["error.boards_hidden"])
    await expect(watcher.page.locator("#players .player")).to_have_count(2)
    await expect(watcher.page.locator("#t-side")).to_be_visible()
    assert await watcher.page.locator("#board .pile").count() == 0

    # a visitor comes by the room's link (not the tournament's page: no round_ended) and
    # watches Ann there: refused too while the round runs
    code = link.rsplit("/", 1)[1]
    page = await (await host.page.request.get(f"{tserver.http}/api/tournaments/{code}")).json()
    (room,) = page["rounds"][0]["rooms"]
    visitor = await new_page(contexts, browser, "visitor")
    await visitor.page.goto(f"{tserver.http}/r/{room['room']}")
    await visitor.page.click("#invite-watch")
    ann_row = visitor.page.locator("#players .player", has_text="Ann")
    await ann_row.locator("button.watch").click()
    await expect(visitor.page.locator("#toast")).to_have_text(EN["error.boards_hidden"])
    assert await visitor.page.locator("#board .pile").count() == 0

    await resign(ann)
    # Ann's results so far show Bob racing, with no Watch: a round's boards are never shown
    # to its own players
    racing = ann.page.locator("#results tbody tr.racing")
    await expect(racing).to_contain_text("Bob")
    await expect(racing.locator("button.watch")).to_have_count(0)
    await resign(bob)
    # everyone is done, so the round ends before its deadline and its boards open: the
    # spectator refused Ann's board while it ran is shown it without a click
    await expect(watcher.page.locator("#board .pile").first).to_be_visible(timeout=15_000)
    await expect(watcher.page.locator("#players .player.followed")).to_contain_text("Ann")
    # and so is the visitor, told by the room (boards_open)
    await expect(visitor.page.locator("#board .pile").first).to_be_visible(timeout=15_000)
    await expect(visitor.page.locator("#players .player.followed")).to_contain_text("Ann")
    # the round (the only one) ends: the seed is revealed, the standings have both
    await host.page.reload()
    await expect(host.page.locator("#t-fair")).to_contain_text("seed is revealed", timeout=15_000)
    table = host.page.locator("#t-standings table")
    await expect(table).to_contain_text("Ann")
    await expect(table).to_contain_text("Bob")
    await expect(host.page.locator("#t-audit")).to_contain_text("started the tournament")
    await expect(host.page.locator("#t-rounds")).to_contain_text("Round 1 · KL1-1-")
    await ann.page.click("#t-back")
    await expect(ann.page.locator("#t-standings")).to_be_visible()
    for p in (host, ann, bob, watcher, visitor):
        assert p.errors == [], (p.name, p.errors)
