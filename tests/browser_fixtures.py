"""Shared parts of the browser tests: one server and one headless Chromium per test module
(every test opens its own contexts), pages that record their websocket frames, an engine
mirror of a player's game, and axe-core (from the npm registry, installed by ``.ci/run``
into the git-ignored ``.ci/npm``) injected into a page to check accessibility."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from server_fixtures import LiveServer, live_server

from engine import Game, new_game
from protocol import merge_view

playwright_api = pytest.importorskip("playwright.async_api")
pytest_asyncio = pytest.importorskip("pytest_asyncio")
expect = playwright_api.expect

__all__ = [
    "ARTIFACTS",
    "DESKTOP",
    "PHONE",
    "TYPE_MOVES",
    "Mirror",
    "Page",
    "axe_violations",
    "browser",
    "check_frames",
    "contexts",
    "drag",
    "expect",
    "needs_chromium",
    "new_page",
    "race_on",
    "records_config",
    "resign",
    "server",
    "wait_moves",
]

CHROMIUM = os.environ.get("SAMEDEAL_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
AXE = Path(os.environ.get("SAMEDEAL_AXE", ROOT / ".ci/npm/node_modules/axe-core/axe.min.js"))
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 720}

needs_chromium = pytest.mark.skipif(
    shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists(), reason="no Chromium"
)


class Page:
    """A browser page and every websocket frame it received."""

    def __init__(self, page: Any, name: str) -> None:
        self.page = page
        self.name = name
        self.frames: list[dict[str, Any]] = []
        page.on("websocket", self._socket)
        page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.errors: list[str] = []

    def _socket(self, ws: Any) -> None:
        def received(payload: str | bytes) -> None:
            self.frames.append(json.loads(payload))

        ws.on("framereceived", received)

    def pile(self, pile: str) -> Any:
        return self.page.locator(f'#board [data-pile="{pile}"]')

    def top(self, pile: str) -> Any:
        return self.pile(pile).locator(".card.up").last


@pytest_asyncio.fixture(scope="module", loop_scope="module")  # type: ignore[untyped-decorator]
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.3) as live:
        yield live


@pytest_asyncio.fixture(scope="module", loop_scope="module")  # type: ignore[untyped-decorator]
async def browser() -> AsyncIterator[Any]:
    async with playwright_api.async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield b
        finally:
            await b.close()


@pytest_asyncio.fixture(loop_scope="module")  # type: ignore[untyped-decorator]
async def contexts(browser: Any) -> AsyncIterator[list[Any]]:
    """The browser contexts a test opened, closed after it."""
    opened: list[Any] = []
    yield opened
    for ctx in opened:
        await ctx.close()


async def new_page(
    contexts: list[Any], browser: Any, name: str, *, axe: bool = False, **context: Any
) -> Page:
    """A page in a new context (closed after the test); ``axe``: with axe-core loaded in
    every document (as an init script: the page's CSP allows no injected script tag)."""
    context.setdefault("viewport", {"width": 1100, "height": 820})
    context.setdefault("locale", "en-GB")
    ctx = await browser.new_context(**context)
    contexts.append(ctx)
    if axe:
        if not AXE.exists():
            if os.environ.get("CI"):
                pytest.fail(f"axe-core is missing: {AXE} (.ci/run installs it)")
            pytest.skip("axe-core not installed: npm install --prefix .ci/npm axe-core")
        await ctx.add_init_script(path=str(AXE))
    page = await ctx.new_page()
    page.set_default_timeout(8000)
    return Page(page, name)


# Types the moves in the page's move field, one after the other, each once the last is
# answered (the field empties on an ack; a refusal stops the run): the page's own path.
TYPE_MOVES = """async (moves) => {
  const input = document.getElementById("move-input");
  const form = document.getElementById("move-form");
  const error = document.getElementById("move-error");
  for (const [i, move] of moves.entries()) {
    input.value = move;
    form.requestSubmit();
    const deadline = Date.now() + 5000;
    while (input.value !== "" && !error.textContent && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 2));
    }
    if (input.value !== "") return `move ${i} ${move}: ${error.textContent || "no answer"}`;
  }
  return "";
}"""


def records_config(path: Path, **more: Any) -> dict[str, Any]:
    """A page server's settings when it keeps records (SQLite at ``path``): every page is a
    new player from one address, and its message credits let a page type a whole line."""
    return {
        "countdown": 0.3,
        "records_url": f"sqlite:///{path}",
        "rate": 1000.0,
        "burst": 500,
        "identity_limit": 1000,
        **more,
    }


async def race_on(p: Page) -> None:
    """Wait until the page's race has started by the server's clock: its countdown over
    (a move before it is not even sent). Looking for the countdown to be hidden is not
    enough: it is hidden too before the race's start has arrived. (The store is read
    through a global set first: a predicate that returns a promise counts as true at once.)"""
    await p.page.evaluate("import('/store.js').then((store) => { window.raceStore = store; })")
    await p.page.wait_for_function(
        """() => raceStore.state.phase === "running"
                 && raceStore.serverNow() >= raceStore.state.startAt""",
        polling=50,
    )


async def resign(p: Page) -> None:
    """Resign the page's race (the button asks first), and wait for the results."""
    await p.page.click("#btn-resign")
    await p.page.click("#btn-resign")
    await expect(p.page.locator("#results")).to_be_visible()


def canonical(view: dict[str, Any]) -> str:
    return json.dumps(view, sort_keys=True)


class Mirror:
    """An engine game following a player's accepted actions; remembers every view the player
    was entitled to see."""

    def __init__(self, deal: str) -> None:
        self.game: Game = new_game(deal)
        self.views = {canonical(self.game.player_view())}

    def push(self, move: str) -> str:
        outcome = self.game.push(move)
        self.views.add(canonical(self.game.player_view()))
        return str(outcome.move)


async def wait_moves(p: Page, mirror: Mirror) -> None:
    await expect(p.page.locator("#moves")).to_have_text(str(mirror.game.moves))


async def drag(p: Page, src: str, dst: str) -> None:
    box = await p.top(src).bounding_box()
    target = p.pile(dst)
    tops = target.locator(".card")
    tbox = await (tops.last if await tops.count() else target).bounding_box()
    assert box is not None and tbox is not None
    mouse = p.page.mouse
    await mouse.move(box["x"] + box["width"] / 2, box["y"] + 12)
    await mouse.down()
    await mouse.move(box["x"] + box["width"] / 2 + 10, box["y"] + 20, steps=3)
    await mouse.move(tbox["x"] + tbox["width"] / 2, tbox["y"] + tbox["height"] / 2, steps=8)
    await mouse.up()


def check_frames(p: Page, legit_views: set[str]) -> int:
    """No frame carries a face-down card: every board is one of the legitimate views, and
    no frame has a full position."""
    boards = 0
    mine: dict[str, Any] | None = None  # the page's own board: acks carry changes to it
    for frame in p.frames:
        text = json.dumps(frame)
        assert '"position"' not in text
        seen = [frame.get(key) for key in ("view", "board")]
        if frame.get("type") in ("joined", "race_starting") and isinstance(frame.get("view"), dict):
            mine = frame["view"]
        elif frame.get("type") == "ack":
            mine = merge_view(mine, frame["changes"])
            seen.append(mine)
        for view in seen:
            if isinstance(view, dict):
                boards += 1
                assert isinstance(view["stock"], int)
                assert all(isinstance(c["down"], int) for c in view["tableau"])
                assert canonical(view) in legit_views, (p.name, frame["type"])
    return boards


async def axe_violations(page: Any) -> list[str]:
    """The serious and critical accessibility violations axe-core finds on ``page`` (the
    page must come from a context made with ``axe=True``)."""
    result = await page.evaluate(
        """async () => {
          const r = await axe.run(document, {
            runOnly: {
              type: "tag",
              values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"],
            },
          });
          return r.violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.id}: ${v.help}: ` + v.nodes.map((n) => n.target.join(" ")).join(", "));
        }"""
    )
    return list(result)
