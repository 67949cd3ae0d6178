"""Identities, replays and player pages in real headless Chromium (issue 14, the browser).

Two players race on a server that keeps records; the results link to the race's replay,
which is stepped through every way the page offers (keys, buttons, the slider, the move
list, playing), and at each step every racer's board on the page is checked against the
engine replaying the recorded moves. The identity the page makes silently survives a
reload, moves to another browser with its recovery code, and can be deleted. axe-core
checks the replay and player pages.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_fixtures import (
    ARTIFACTS,
    PHONE,
    Page,
    axe_violations,
    browser,
    contexts,
    expect,
    needs_chromium,
    new_page,
)
from server_fixtures import LiveServer, get_json, live_server

from engine import new_game

DEAL = "KL1-1-AAAAAAM"  # t3 shows an ace, t1-t2 is legal
_CODE = re.compile(r"^[0-9A-Z]{4}(-[0-9A-Z]{4}){5}$")  # a recovery code, as shown
EN: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent.parent / "clients/web/i18n/en.json").read_text("utf-8")
)

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts"]  # the shared fixtures, used by name


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    """A server that keeps records (SQLite in a temporary directory) and serves the page."""
    path = tmp_path_factory.mktemp("records") / "records.db"
    async with live_server(countdown=0.3, records_url=f"sqlite:///{path}") as live:
        yield live


async def api(server: LiveServer, path: str) -> tuple[int, Any]:
    return await get_json(server.port, path)


async def open_you(p: Page) -> None:
    await p.page.click("#you-button")
    await expect(p.page.locator("#you")).to_be_visible()
    await expect(p.page.locator("#you-status")).to_have_text(EN["you.intro"])


async def set_handle(p: Page, handle: str) -> None:
    await p.page.fill("#you-handle", handle)
    await p.page.click("#you-handle-form button[type=submit]")
    await expect(p.page.locator("#you-handle-note")).to_have_text(EN["you.saved"])


async def stored_player(p: Page) -> str | None:
    kept = await p.page.evaluate("localStorage.getItem('samedeal.identity')")
    return json.loads(kept)["player"] if kept else None


async def typed(p: Page, move: str, moves: int) -> None:
    await p.page.fill("#move-input", move)
    await p.page.press("#move-input", "Enter")
    await expect(p.page.locator("#moves")).to_have_text(str(moves))


# the page's board of one racer, read back from the DOM (face-up cards by name, backs
# counted): the same shape as the engine's player view, foundations by their top card
READ_BOARD = """(seat) => {
  const b = document.querySelector(`.board[data-seat="${seat}"]`);
  const ups = (n) => [...n.querySelectorAll(".card.up")].map((c) => c.dataset.card);
  const count = (n) => Number((n.querySelector(".count") || {}).textContent || 0);
  const stock = b.querySelector('[data-pile="s"]');
  const waste = b.querySelector('[data-pile="w"]');
  return {
    tableau: [...b.querySelectorAll(".pile.column")].map((n) => ({
      down: n.querySelectorAll(".card.back").length, up: ups(n) })),
    foundations: [...b.querySelectorAll(".pile.foundation")].map(ups),
    stock: count(stock),
    waste: {count: count(waste), top: ups(waste)},
    now: b.closest(".racer").querySelector(".now").textContent,
  };
}"""


def as_shown(view: dict[str, Any]) -> dict[str, Any]:
    """What the page draws of a board: foundations show their top card only."""
    return {
        "tableau": view["tableau"],
        "foundations": [pile[-1:] for pile in view["foundations"]],
        "stock": view["stock"],
        "waste": view["waste"],
    }


class Expected:
    """The replay's timeline, from the recorded game, each board by the engine."""

    def __init__(self, game: dict[str, Any]) -> None:
        self.deal = game["deal"]
        self.seats = [s["seat"] for s in game["seats"]]
        steps = []
        self.views: dict[int, list[dict[str, Any]]] = {}
        for order, seat in enumerate(game["seats"]):
            engine = new_game(self.deal)
            views = [engine.player_view()]
            for i, action in enumerate(seat["actions"]):
                engine.push(action)
                views.append(engine.player_view())
                steps.append((seat["action_times_ms"][i], order, i, seat["seat"]))
            self.views[seat["seat"]] = views
        steps.sort()
        self.steps = [s[3] for s in steps]

    def done(self, seat: int, k: int) -> int:
        return self.steps[:k].count(seat)

    def board(self, seat: int, k: int) -> dict[str, Any]:
        return self.views[seat][self.done(seat, k)]


async def check_step(p: Page, expected: Expected, k: int) -> None:
    await expect(p.page.locator("#replay")).to_have_attribute("data-step", str(k))
    for seat in expected.seats:
        shown = await p.page.evaluate(READ_BOARD, seat)
        view = expected.board(seat, k)
        # score, moves, then the racer's actions played so far, in the page's words
        numbers = [int(n) for n in re.findall(r"\d+", shown.pop("now"))]
        assert numbers[:3] == [view["score"], view["moves"], expected.done(seat, k)], (seat, k)
        assert shown == as_shown(view), (seat, k)


async def test_a_race_replays_step_by_step_as_the_engine_plays_it(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    host = await new_page(contexts, browser, "host")
    guest = await new_page(contexts, browser, "guest", viewport=PHONE)

    # the host's identity, made silently; a handle names their page
    await host.page.goto(server.http + "/")
    await host.page.fill("#name", "Ann")
    await open_you(host)
    await set_handle(host, "ann_race")
    await host.page.keyboard.press("Escape")
    await expect(host.page.locator("#you")).to_be_hidden()

    await host.page.check('input[name="game"][value="klondike"]')
    await host.page.check('input[name="deal"][value="code"]')
    await host.page.fill("#deal-code", DEAL)
    await host.page.click("#create")
    await expect(host.page.locator("#room-code")).to_have_text(re.compile(r"^\w{4}-\w{2}$"))
    room = await host.page.locator("#room-code").inner_text()
    await guest.page.goto(f"{server.http}/r/{room}")
    await guest.page.fill("#name", "Bob")
    await guest.page.click("#invite-join")
    await expect(host.page.locator("#players .player")).to_have_count(2)
    await host.page.click("#start")
    for p in (host, guest):
        await expect(p.top("t3")).to_have_attribute("data-card", "AD")
        await expect(p.page.locator("#countdown")).to_be_hidden()

    # an ace home, the stock, an undo, a card move; the two racers' moves interleaved
    await typed(host, "t3-f", 1)
    await typed(guest, "s", 1)
    await typed(host, "s", 2)
    await typed(guest, "t1-t2", 2)
    await typed(host, "u", 3)
    await typed(host, "t1-t2", 4)
    await typed(guest, "s", 3)
    for p in (host, guest):
        await p.page.click("#btn-resign")
        await p.page.click("#btn-resign")
    for p in (host, guest):
        await expect(p.page.locator("#results")).to_be_visible()
        # the server says where the race's replay is once the records have it
        await expect(p.page.locator("#replay-link")).to_be_visible()
    await host.page.screenshot(path=str(ARTIFACTS / "results-replay-link.png"))
    href = await host.page.locator("#replay-anchor").get_attribute("href")
    assert href is not None and href.startswith("/g/")
    game_id = href.removeprefix("/g/")
    assert await guest.page.locator("#replay-anchor").get_attribute("href") == href

    status, game = await api(server, f"/api/games/{game_id}")
    assert status == 200 and game["deal"] == DEAL
    expected = Expected(game)
    n = len(expected.steps)
    assert n == 7

    # ---- the replay: every step by key, each board as the engine has it
    await host.page.click("#replay-anchor")
    await expect(host.page.locator(".racer")).to_have_count(2)
    assert host.page.url.endswith(href)
    await expect(host.page.locator("#replay-pos")).to_have_text(f"Step 0 of {n} · 0:00.0")
    await check_step(host, expected, 0)
    await host.page.locator("body").focus()
    for k in range(1, n + 1):
        await host.page.keyboard.press("ArrowRight")
        await check_step(host, expected, k)
    await host.page.keyboard.press("ArrowRight")  # past the end: stays
    await check_step(host, expected, n)
    await host.page.screenshot(path=str(ARTIFACTS / "replay.png"))
    await host.page.keyboard.press("Home")
    await check_step(host, expected, 0)
    await host.page.keyboard.press("End")
    await check_step(host, expected, n)
    await host.page.keyboard.press("ArrowLeft")
    await check_step(host, expected, n - 1)

    # the buttons, the slider, the move list
    await host.page.click("#replay-first")
    await check_step(host, expected, 0)
    await expect(host.page.locator("#replay-back")).to_be_disabled()
    await host.page.click("#replay-forward")
    await check_step(host, expected, 1)
    await host.page.click("#replay-forward")
    await host.page.click("#replay-back")
    await check_step(host, expected, 1)
    await host.page.click("#replay-last")
    await check_step(host, expected, n)
    await expect(host.page.locator("#replay-forward")).to_be_disabled()
    await host.page.locator("#replay-slider").fill("4")
    await check_step(host, expected, 4)
    await host.page.locator('#replay-list button[data-step="2"]').click()
    await check_step(host, expected, 2)
    await expect(host.page.locator('#replay-list button[data-step="2"]')).to_have_attribute(
        "aria-current", "step"
    )
    # the mover of the step is marked, with the action as resolved
    mover = expected.steps[1]
    moved = host.page.locator(f'.racer[data-seat="{mover}"]')
    await expect(moved).to_have_class("panel racer moved")
    # … said in words, not notation (issue 31: "Played t2-t8"), as in the move list
    notation = re.compile(r"\b(?:w|[tf]\d+(?::\d+)?)-[tf]\d*\b")
    said = await moved.locator(".last-move").inner_text()
    assert said.startswith("Played ") and not notation.search(said), said
    for item in await host.page.locator("#replay-list button").all_inner_texts():
        assert not notation.search(item), item

    # play at the fastest speed, from here to the end
    await host.page.select_option("#replay-speed", label="×16")
    await host.page.click("#replay-play")
    await check_step(host, expected, n)
    await expect(host.page.locator("#replay-play")).to_have_attribute("aria-label", "Play")

    # ---- the player page lists the race and links to its replay
    await host.page.goto(f"{server.http}/p/ann_race")
    await expect(host.page.locator("#profile h1")).to_have_text("Ann")
    row = host.page.locator(f'#profile-recent tbody tr[data-id="{game_id}"]')
    await expect(row).to_have_count(1)
    stats = host.page.locator('#profile-stats tbody tr[data-game="klondike"] td')
    await expect(stats.nth(1)).to_have_text("1")  # played
    await expect(stats.nth(2)).to_have_text("0")  # won
    await host.page.screenshot(path=str(ARTIFACTS / "player-page.png"))
    await row.locator("a").click()
    await expect(host.page.locator(".racer")).to_have_count(2)
    assert host.page.url.endswith(href)

    # ---- accessibility of both pages
    checker = await new_page(contexts, browser, "axe", axe=True)
    for path in (href, "/p/ann_race", "/g/000000000000", "/p/nobody_here"):
        await checker.page.goto(server.http + path)
        await expect(checker.page.locator("#replay h1, #profile h1").first).to_be_visible()
        assert await axe_violations(checker.page) == [], path
    await checker.page.goto(server.http + href)
    await expect(checker.page.locator(".racer")).to_have_count(2)
    await checker.page.click("#you-button")
    await expect(checker.page.locator("#you-status")).to_have_text(EN["you.intro"])
    assert await axe_violations(checker.page) == [], "the You panel"
    # another language redraws the page where it stands
    await checker.page.keyboard.press("Escape")
    await checker.page.locator("#replay-list button[data-step='3']").click()
    await checker.page.click("#settings-button")
    await checker.page.select_option("#lang-select", "ru")
    await expect(checker.page.locator("#replay h1")).to_have_text("Повтор · Косынка, по одной")
    await check_step(checker, expected, 3)
    await expect(checker.page.locator("#replay-pos")).to_contain_text(f"Шаг 3 из {n}")
    assert not host.errors and not guest.errors and not checker.errors


async def test_a_bad_or_unknown_replay_or_player_says_so(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    p = await new_page(contexts, browser, "lost")
    for path, error in (
        ("/g/000000000000", "error.unknown_game"),
        ("/g/NOTANID", "error.bad_game_id"),
        ("/p/nobody_here", "error.unknown_player"),
    ):
        await p.page.goto(server.http + path)
        shown = p.page.locator("#replay:visible, #profile:visible")
        await expect(shown.locator(".error")).to_have_text(EN[error])
        await expect(shown.locator('a[href="/"]')).to_be_visible()
    assert not p.errors


async def test_the_identity_is_kept_across_a_reload(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    p = await new_page(contexts, browser, "keeper")
    await p.page.goto(server.http + "/")
    await open_you(p)
    # made silently: the recovery code is shown, once, until noted
    code = p.page.locator("#you-code-text")
    await expect(code).to_have_text(_CODE)
    await expect(p.page.locator("#you-button")).to_have_class("button-like small attention")
    await p.page.screenshot(path=str(ARTIFACTS / "you-panel.png"))
    player = await stored_player(p)
    assert player is not None
    secret = json.loads(await p.page.evaluate("localStorage.getItem('samedeal.identity')"))
    html = await p.page.content()
    assert secret["secret"] not in html and secret["secret"] not in p.page.url
    # a refused handle says why, from the catalogue
    await p.page.fill("#you-handle", "admin")
    await p.page.click("#you-handle-form button[type=submit]")
    await expect(p.page.locator("#you-handle-note")).to_have_text(EN["error.bad_handle"])
    await set_handle(p, "keeper_1")
    await expect(p.page.locator("#you-page-link")).to_have_attribute("href", "/p/keeper_1")
    await p.page.fill("#you-name", "Kim")
    await p.page.click("#you-name-form button[type=submit]")
    await expect(p.page.locator("#you-name-note")).to_have_text(EN["you.saved"])
    await p.page.click("#you-code-done")
    await expect(p.page.locator("#you-code")).to_be_hidden()

    await p.page.reload()
    await open_you(p)
    await expect(p.page.locator("#you-handle")).to_have_value("keeper_1")
    await expect(p.page.locator("#you-name")).to_have_value("Kim")
    await expect(p.page.locator("#you-code")).to_be_hidden()  # shown once
    assert await stored_player(p) == player
    status, page = await api(server, "/api/players/keeper_1")
    assert status == 200 and page["name"] == "Kim"
    assert not p.errors


async def test_a_recovery_code_moves_the_identity_to_another_browser(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    phone = await new_page(contexts, browser, "phone", viewport=PHONE)
    laptop = await new_page(contexts, browser, "laptop")
    await phone.page.goto(server.http + "/")
    await open_you(phone)
    await set_handle(phone, "mover_1")
    code = await phone.page.locator("#you-code-text").inner_text()
    moved = await stored_player(phone)

    await laptop.page.goto(server.http + "/")
    await open_you(laptop)
    before = await stored_player(laptop)
    await laptop.page.click("#you-recover summary")
    await laptop.page.fill("#you-recover-code", "0000-0000-0000-0000-0000-0000")
    await laptop.page.click("#you-recover-form button[type=submit]")
    await expect(laptop.page.locator("#you-recover-note")).to_have_text(
        EN["error.bad_recovery_code"]
    )
    await laptop.page.fill("#you-recover-code", code.lower())  # read by people: case ignored
    await laptop.page.click("#you-recover-form button[type=submit]")
    await expect(laptop.page.locator("#you-recover-note")).to_have_text(EN["you.recover_done"])
    await expect(laptop.page.locator("#you-handle")).to_have_value("mover_1")
    assert await stored_player(laptop) == moved != before
    # a new recovery code, shown once; the old one moves nothing any more
    new_code = laptop.page.locator("#you-code-text")
    await expect(new_code).to_have_text(_CODE)
    assert await new_code.inner_text() != code

    # the phone's secret is retired: its next connection gets a new, empty identity
    await phone.page.reload()
    await open_you(phone)
    await expect(phone.page.locator("#you-handle")).to_have_value("")
    assert await stored_player(phone) not in (None, moved)

    # deleting asks first, then forgets the player here and on the server
    await laptop.page.click("#you-delete")
    await expect(laptop.page.locator("#you-confirm")).to_be_visible()
    await laptop.page.click("#you-delete-no")
    await expect(laptop.page.locator("#you-confirm")).to_be_hidden()
    assert (await api(server, "/api/players/mover_1"))[0] == 200
    await laptop.page.click("#you-delete")
    await laptop.page.click("#you-delete-yes")
    await expect(laptop.page.locator("#you-status")).to_have_text(EN["you.deleted"])
    assert await stored_player(laptop) is None
    assert (await api(server, "/api/players/mover_1"))[0] == 404
    assert not phone.errors and not laptop.errors
