"""A room's invitation, its rematch invitation, leaving it and the daily label, in real
headless Chromium (issue 18, items 10, 13 and 17)."""

from __future__ import annotations

import re
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
from helpers import until_race_starts
from server_fixtures import LiveServer

from clients.client import RaceClient
from protocol import RaceStarting, RematchOffered

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts", "server"]  # the shared fixtures, used by name

DEAL = "KL1-1-AAAAAAM"


async def create(p: Page, server: LiveServer, name: str, deal: str = DEAL, **form: Any) -> str:
    """Create a Klondike room from the lobby; its code."""
    await p.page.goto(server.http + "/")
    await p.page.fill("#name", name)
    await p.page.check('input[name="game"][value="klondike"]')
    if deal == "daily":
        await p.page.check('input[name="deal"][value="daily"]')
    else:
        await p.page.check('input[name="deal"][value="code"]')
        await p.page.fill("#deal-code", deal)
    if form.get("private"):
        await p.page.click("#create-form summary")  # the room options
        await p.page.check("#private-room")
    await p.page.click("#create")
    await expect(p.page.locator("#room-code")).to_have_text(re.compile(r"^\w{4}-\w{2}$"))
    return str(await p.page.locator("#room-code").inner_text())


async def join(p: Page, server: LiveServer, room: str, name: str) -> None:
    await p.page.goto(f"{server.http}/r/{room}")
    await p.page.fill("#name", name)
    await p.page.click("#invite-join")
    await expect(p.page.locator("#room-code")).to_have_text(room)


async def both_resign(*pages: Page) -> None:
    for p in pages:
        await expect(p.page.locator("#countdown")).to_be_hidden()
        await p.page.click("#btn-resign")
        await p.page.click("#btn-resign")  # it asks first
        await expect(p.page.locator("#btn-resign")).to_be_disabled()
    for p in pages:
        await expect(p.page.locator("#results")).to_be_visible()


async def test_an_invitation_shows_the_room_before_joining(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host = await new_page(contexts, browser, "host", viewport=DESKTOP)
    room = await create(host, server, "Ann")
    guest = await new_page(contexts, browser, "guest", viewport=PHONE, has_touch=True, axe=True)
    await guest.page.goto(f"{server.http}/r/{room}")
    details = guest.page.locator("#invite-details")
    await expect(details).to_have_text("Klondike, draw one · host Ann · waiting for the start")
    await expect(guest.page.locator("#invite-players li")).to_have_text(["Ann"])
    await expect(guest.page.locator("#invite-join")).to_be_visible()
    await expect(guest.page.locator("#create-panel")).to_be_hidden()
    assert await axe_violations(guest.page) == []
    # once the race runs, the invitation offers watching only
    await host.page.click("#start")
    await guest.page.reload()
    await expect(details).to_contain_text("race on")
    await expect(guest.page.locator("#invite-join")).to_be_hidden()
    await expect(guest.page.locator("#invite-watch")).to_be_visible()
    await guest.page.click("#invite-watch")
    await expect(guest.page.locator("#players .player")).to_have_count(1)
    assert not guest.errors and not host.errors


async def test_a_private_room_shows_nothing_without_its_key(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host = await new_page(contexts, browser, "host", viewport=DESKTOP)
    room = await create(host, server, "Ann", private=True)
    link = await host.page.locator("#room-link").input_value()
    assert "?key=" in link
    stranger = await new_page(contexts, browser, "stranger", viewport=DESKTOP)
    await stranger.page.goto(f"{server.http}/r/{room}")  # the code without the key
    # the server answers as for a code that names no room, and the page says just that
    # (issue 31: no Join that can only fail), with a word on private rooms' links
    await expect(stranger.page.locator("#invite-title")).to_have_text(f"No room {room}")
    await expect(stranger.page.locator("#invite-details")).to_contain_text("whole link")
    await expect(stranger.page.locator("#invite-join")).to_be_hidden()
    await expect(stranger.page.locator("#invite-players li")).to_have_count(0)
    friend = await new_page(contexts, browser, "friend", viewport=DESKTOP)
    await friend.page.goto(link)
    await expect(friend.page.locator("#invite-details")).to_contain_text("host Ann")


async def test_a_rematch_is_an_invitation_and_a_player_may_leave(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host = await new_page(contexts, browser, "host", viewport=DESKTOP, axe=True)
    guest = await new_page(contexts, browser, "guest", viewport=DESKTOP, axe=True)
    room = await create(host, server, "Ann")
    await join(guest, server, room, "Bob")
    await host.page.click("#start")
    await both_resign(host, guest)

    # the host offers; the guest is asked, and sits this one out
    await host.page.click("#rematch-new")
    offer = guest.page.locator("#rematch-offer")
    await expect(offer).to_be_visible()
    await expect(guest.page.locator("#rematch-offer-text")).to_have_text(
        "Ann offers a rematch on a new deal. Race again?"
    )
    await expect(guest.page.locator("#rematch-offer-time")).to_have_text(
        re.compile(r"^\d+ s to answer$")
    )
    await expect(host.page.locator("#rematch-offer")).to_be_hidden()  # the host is not asked
    await expect(host.page.locator("#rematch-status")).to_have_text(
        "Rematch offered: waiting for the players' answers…"
    )
    await expect(host.page.locator("#rematch-same")).to_be_hidden()  # one offer at a time
    for p in (guest, host):
        assert await axe_violations(p.page) == [], p.name
    await guest.page.click("#rematch-sit-out")
    await expect(offer).to_be_hidden()
    await expect(host.page.locator("#controls")).to_be_visible()  # the host races alone
    await expect(host.page.locator("#results")).to_be_hidden()
    await expect(guest.page.locator("#controls")).to_be_hidden()
    await expect(guest.page.locator("#players .player")).to_have_count(2)  # still seated
    await both_resign(host)

    # asked again, the guest races
    await host.page.click("#rematch-same")
    await guest.page.click("#rematch-accept")
    for p in (host, guest):
        await expect(p.page.locator("#controls")).to_be_visible()
        await expect(p.page.locator("#moves")).to_have_text("0")

    # the guest leaves mid-race: resigned, the seat freed at once, back to the lobby
    await expect(guest.page.locator("#countdown")).to_be_hidden()
    await guest.page.click("#leave")
    await guest.page.wait_for_url(f"{server.http}/")
    await expect(guest.page.locator("#create-panel")).to_be_visible()
    await expect(host.page.locator("#players .player")).to_have_count(1)
    await host.page.click("#btn-resign")
    await host.page.click("#btn-resign")
    await expect(host.page.locator("#results tbody tr")).to_have_count(2)
    await expect(host.page.locator("#results tbody tr").nth(1)).to_contain_text("Bob")
    # a reload does not take a seat that was given up
    await guest.page.goto(f"{server.http}/r/{room}")
    await expect(guest.page.locator("#invite-panel")).to_be_visible()
    await expect(guest.page.locator("#invite-players li")).to_have_text(["Ann"])
    assert not guest.errors and not host.errors


async def test_leave_from_the_rematch_offer_and_the_deal_of_the_day_label(
    server: LiveServer, browser: Any, contexts: list[Any], on_day: Any
) -> None:
    on_day("2026-04-16")  # a known day: its proof's cost the same every run
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", name="Ann", deal="daily")
    guest = await new_page(contexts, browser, "guest", viewport=PHONE, has_touch=True)
    await guest.page.goto(f"{server.http}/r/{joined.room}")
    await expect(guest.page.locator("#invite-details")).to_contain_text("Deal of the day")
    await guest.page.fill("#name", "Bob")
    await guest.page.click("#invite-join")
    await expect(guest.page.locator("#daily-badge")).to_be_visible()
    await host.start()
    await until_race_starts(host)
    await host.resign()
    await expect(guest.page.locator("#controls")).to_be_visible()
    await guest.page.click("#btn-resign")
    await guest.page.click("#btn-resign")
    await expect(guest.page.locator("#results")).to_be_visible()
    share = await guest.page.locator("#share-text").input_value()
    assert "deal of the day" in share
    await host.rematch("daily")
    offered = await host.next_event("rematch_offered")
    assert isinstance(offered, RematchOffered) and offered.deal == "daily"
    await expect(guest.page.locator("#rematch-offer-text")).to_contain_text("the deal of the day")
    await guest.page.click("#rematch-decline")  # Leave
    await guest.page.wait_for_url(f"{server.http}/")
    # leaving was the last answer awaited: the host's race starts at once
    start = await host.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.seats == [1] and start.daily
    await host.close()
    assert not guest.errors
