"""A game in one tap (issue 31, item 14), on a phone with touch, in real headless Chromium:
"New deal" in the lobby starts a game at once — no waiting room, no Start, no countdown —
played on the server like any race; "Same deal" restarts it mid-game; its link brings a
friend in while it runs, who races from the host's next deal. And a room of winnable deals
only, from the create form (item 16).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from browser_fixtures import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    Page,
    browser,
    contexts,
    expect,
    needs_chromium,
    new_page,
    race_on,
    resign,
)
from server_fixtures import LiveServer, live_server

from engine.fair import TOURNAMENT_NODES
from engine.solver import solve

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts"]  # the shared fixtures, used by name


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.5) as live:
        yield live


def phone() -> dict[str, Any]:
    return {"viewport": PHONE, "has_touch": True, "is_mobile": True}


async def tops(p: Page) -> list[str | None]:
    """The top card of each column, left to right."""
    found: list[str | None] = await p.page.evaluate(
        """() => [...document.querySelectorAll('#board .column')].map((c) => {
             const up = c.querySelectorAll('.card.up');
             return up.length ? up[up.length - 1].dataset.card : null; })"""
    )
    return found


async def test_new_deal_same_deal_and_a_friend_by_link(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    ann = await new_page(contexts, browser, "ann", **phone())
    await ann.page.goto(server.http + "/")
    await ann.page.evaluate(
        """() => { window.shown = [];
             for (const id of ["waiting", "countdown"]) new MutationObserver(() => {
               if (!document.getElementById(id).hidden) shown.push(id);
             }).observe(document.getElementById(id), {attributes: true}); }"""
    )
    await ann.page.locator("#play-new").tap()  # Easy Harp, chosen by default
    await expect(ann.page.locator("#board .column")).to_have_count(9)
    await expect(ann.page.locator("#controls")).to_be_visible()
    for hidden in ("#waiting", "#start", "#countdown"):
        await expect(ann.page.locator(hidden)).to_be_hidden()
    await expect(ann.page.locator("#moves")).to_have_text("0")
    assert await ann.page.evaluate("window.shown") == []  # no waiting room, no countdown, no "Go!"
    first = await tops(ann)
    await ann.pile("s").tap()  # the server checks it and answers: a move like any race's
    await expect(ann.page.locator("#moves")).to_have_text("1")
    await ann.page.screenshot(path=str(ARTIFACTS / "one-tap-game-phone.png"))

    await ann.page.locator("#new-game-button").tap()
    await expect(ann.page.locator("#new-game")).to_be_visible()
    await ann.page.locator("#new-game-same").tap()  # a restart of the same deal, mid-game
    await expect(ann.page.locator("#moves")).to_have_text("0")
    assert await tops(ann) == first
    await race_on(ann)
    await expect(ann.page.locator("#controls")).to_be_visible()

    # the link of the game: a friend joins it while it runs, and races from the next deal
    await ann.page.locator("#new-game-button").tap()
    link = await ann.page.locator("#new-game-link").input_value()
    assert re.fullmatch(rf"{re.escape(server.http)}/r/\w{{4}}-\w{{2}}", link)
    bob = await new_page(contexts, browser, "bob", **phone())
    await bob.page.goto(link)
    await bob.page.fill("#name", "Bob")
    await expect(bob.page.locator("#invite-join")).to_be_visible()
    await bob.page.locator("#invite-join").tap()
    await expect(bob.page.locator("#solo-wait")).to_be_visible()
    await expect(bob.page.locator("#controls")).to_be_hidden()
    bob_row = ann.page.locator('#players [data-seat="2"]')
    await expect(bob_row).to_contain_text("races from the next deal")
    await expect(ann.page.locator("#new-game-note")).to_contain_text("Bob")

    await ann.page.locator("#new-game-new").tap()  # a new deal: Bob is asked to race it
    await expect(bob.page.locator("#rematch-offer")).to_be_visible()
    await bob.page.locator("#rematch-accept").tap()
    for p in (ann, bob):
        await expect(p.page.locator("#players .player")).to_have_count(2)
        await expect(p.page.locator("#controls")).to_be_visible()
        await expect(p.page.locator("#board .column")).to_have_count(9)
    await expect(bob.page.locator("#solo-wait")).to_be_hidden()
    assert not ann.errors and not bob.errors


async def test_a_room_of_winnable_deals_from_the_create_form(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    """Item 16: "Winnable deals only" in the create form; the page says it is finding one
    while the server proves it; the waiting room's options say so; the deal, told at the
    race's end, is one the solver proves winnable."""
    p = await new_page(contexts, browser, "winnable", viewport=DESKTOP)
    await p.page.goto(server.http + "/")
    await p.page.check('#create-form input[name="game"][value="klondike-3"]')
    await p.page.check('input[name="deal"][value="code"]')
    await expect(p.page.locator("#winnable")).to_be_disabled()  # a code needs no proof
    await p.page.check('input[name="deal"][value="random"]')
    await p.page.check("#winnable")
    await p.page.evaluate(
        """() => { window.said = [];
             new MutationObserver(() => said.push(document.getElementById("create").textContent))
               .observe(document.getElementById("create"), {childList: true, subtree: true}); }"""
    )
    await p.page.click("#create")
    await expect(p.page.locator("#room-options")).to_contain_text("winnable deals only")
    assert "Finding a winnable deal…" in await p.page.evaluate("window.said")
    await p.page.click("#start")
    await race_on(p)
    await resign(p)
    share = await p.page.locator("#share-text").input_value()
    found = re.search(r"KL1-3-[A-Z]{26}\b", share)  # a sealed deal
    assert found is not None
    assert solve(found.group(0), nodes=TOURNAMENT_NODES["klondike-3"]).verdict == "winnable"
    assert not p.errors


# Every face-up card's index — rank and suit — in full view: inside its card, and what the
# page shows at its middle is that card (not the card laid over it).
INDICES = """() => [...document.querySelectorAll('#board .card.up')].map((card) => {
  const parts = [...card.querySelectorAll('.corner .r, .corner .s')].map((e) => {
    const r = e.getBoundingClientRect();
    const c = card.getBoundingClientRect();
    // (a text's box rises a little above its capitals: the font's ascent)
    const inside = r.left >= c.left - 0.5 && r.right <= c.right + 0.5
      && r.top >= c.top - 0.2 * r.height && r.bottom <= c.bottom + 0.5;
    const seen = [[0.2, 0.2], [0.8, 0.2], [0.5, 0.5], [0.2, 0.8], [0.8, 0.8]].every(([fx, fy]) => {
      const hit = document.elementFromPoint(r.left + r.width * fx, r.top + r.height * fy);
      return hit !== null && card.contains(hit);
    });
    return {inside, seen};
  });
  const font = parseFloat(getComputedStyle(card.querySelector('.corner')).fontSize);
  return {card: card.dataset.card, font, parts};
})"""


@pytest.mark.parametrize("game", ["easy-harp", "klondike"])
async def test_cards_a_phone_can_read(
    server: LiveServer, browser: Any, contexts: list[Any], game: str
) -> None:
    """Item 15: on a 390 px phone each card size shows every face-up card's rank and suit in
    full, larger at each step, the largest with indices of 18 px or more; the board never
    gets wider than the screen. The four-colour deck inks diamonds and clubs apart from the
    hearts and spades, and the high-contrast deck's inks are 7:1 or more on its cards."""
    p = await new_page(contexts, browser, game, **phone())
    await p.page.goto(server.http + "/")
    await p.page.check(f'input[name="play-game"][value="{game}"]')
    await p.page.locator("#play-new").tap()
    await expect(p.page.locator("#board .column")).not_to_have_count(0)
    fonts = []
    for size in ("normal", "large", "largest"):
        await p.page.locator("#settings-button").tap()
        await p.page.select_option("#opt-card-size", size)
        await p.page.locator("#settings-button").tap()
        cards = await p.page.evaluate(INDICES)
        assert cards, size
        for c in cards:
            assert all(part["inside"] and part["seen"] for part in c["parts"]), (size, c)
        fonts.append(min(c["font"] for c in cards))
        width = await p.page.evaluate("document.documentElement.clientWidth")
        assert await p.page.evaluate("document.documentElement.scrollWidth") <= width, size
        await p.page.screenshot(path=str(ARTIFACTS / f"cards-{size}-{game}-phone.png"))
    assert fonts[0] < fonts[1] < fonts[2] and fonts[2] >= 18, fonts

    inks = """() => Object.fromEntries([...document.querySelectorAll('#board .card.up')].map(
      (c) => [c.dataset.suit, [getComputedStyle(c).color, getComputedStyle(c).backgroundColor]]))"""
    await p.page.locator("#settings-button").tap()
    await p.page.select_option("#opt-deck", "four")
    four = await p.page.evaluate(inks)
    reds = {four[s][0] for s in "HD" if s in four}
    blacks = {four[s][0] for s in "SC" if s in four}
    assert len(reds) == len([s for s in "HD" if s in four])  # diamonds not the hearts' red
    assert len(blacks) == len([s for s in "SC" if s in four])  # clubs not the spades' black
    await p.page.select_option("#opt-deck", "contrast")
    await p.page.locator("#settings-button").tap()
    contrast = await p.page.evaluate(inks)
    for suit, (ink, paper) in contrast.items():
        assert ratio(ink, paper) >= 7, (suit, ink, paper)
    await p.page.screenshot(path=str(ARTIFACTS / f"cards-contrast-{game}-phone.png"))
    assert not p.errors


def ratio(ink: str, paper: str) -> float:
    """WCAG's contrast ratio of two CSS rgb() colours."""

    def lum(colour: str) -> float:
        channels = [float(v) / 255 for v in re.findall(r"[\d.]+", colour)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    a, b = sorted((lum(ink), lum(paper)), reverse=True)
    return (a + 0.05) / (b + 0.05)
