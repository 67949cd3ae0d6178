"""Every page a player meets (issue 31), on a desktop and on a phone, in English, Russian
and Swedish, in real headless Chromium: axe-core finds no serious or critical violation; no
text of a Russian or Swedish page comes from the English catalogue (nor any key shows); a
screenshot of each page in each language and size goes to ``test-artifacts/<lang>/``.

The pages: the lobby, a shared deal, an invitation and a room code that names none, the
waiting room, a race, its results, a game of one's own with its "New game" window, the
rules, the deal of the day (today's and a day that is over), a player's page, a replay, the
live races, TV, a tournament and its form, and an unknown address.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from browser_fixtures import (
    ARTIFACTS,
    DESKTOP,
    PHONE,
    Page,
    axe_violations,
    browser,
    contexts,
    expect,
    needs_chromium,
    new_page,
    race_on,
    records_config,
    resign,
)
from server_fixtures import LiveServer, live_server

from clients.client import RaceClient
from protocol import RaceRecorded

in_module = pytest.mark.asyncio(loop_scope="module")
__all__ = ["browser", "contexts"]  # the shared fixtures, used by name

CATALOGUES = Path(__file__).resolve().parent.parent / "clients" / "web" / "i18n"
DAY, YESTERDAY = "2026-04-16", "2026-04-15"  # the test key proves 04-16's deals at once
DEAL = "KL1-1-AAAAAAM"


def catalogue(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((CATALOGUES / f"{lang}.json").read_text("utf-8"))
    return data


def texts(entry: Any) -> list[str]:
    """An entry's texts: a string, or each form of a plural."""
    return list(entry.values()) if isinstance(entry, dict) else [str(entry)]


def english_fragments(lang: str) -> dict[str, str]:
    """What of the English catalogue must not show on a page in ``lang``: each English
    text's words between its placeholders (three letters or more), unless the language's
    own text of that key has them too (a name, "Easy Harp", "samedeal"). Fragment → key."""
    english, other = catalogue("en"), catalogue(lang)
    theirs = " ".join(t for entry in other.values() for t in texts(entry))
    found: dict[str, str] = {}
    for key, entry in english.items():
        own = " ".join(texts(other.get(key, "")))
        for text in texts(entry):
            for piece in re.split(r"\{\w+\}", text):
                piece = piece.strip(" ·:;,.()–—-\n")
                if len(re.findall(r"[A-Za-z]", piece)) < 3 or piece in own or piece in theirs:
                    continue
                found.setdefault(piece, key)
    return found


@dataclass
class World:
    """What the pages show: a finished race of a player with a handle (their page and its
    replay), a room waiting for its start, a race under way (the live list and TV), a
    tournament."""

    handle: str
    game_id: str
    waiting_room: str
    tournament: str


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    path = tmp_path_factory.mktemp("records") / "records.db"
    async with live_server(**records_config(path)) as live:
        yield live


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(server: LiveServer) -> AsyncIterator[World]:
    async with (
        await RaceClient.connect(server.url) as ann,
        await RaceClient.connect(server.url) as host,
        await RaceClient.connect(server.url) as racer,
    ):
        await ann.new_player("Ann")
        await ann.set_handle("axe_ann")
        await ann.create("klondike", name="Ann", deal="code", code=DEAL, solo=True)
        await ann.next_event("race_starting")
        await ann.resign()
        recorded = await ann.next_event("race_recorded", timeout=10)
        assert isinstance(recorded, RaceRecorded)
        game_id = recorded.game_id
        await ann.leave()
        waiting = await ann.create("easy-harp", name="Ann")
        await host.new_player("Host")
        made = await host.tournament_create(name="Axe cup", game="klondike", rounds=2)
        await racer.create("klondike", name="Racer", deal="code", code=DEAL)
        await racer.start()
        await racer.next_event("race_starting")
        yield World("axe_ann", game_id, waiting.room, made.page.id)


async def visit(p: Page, url: str, ready: str) -> None:
    await p.page.goto(url)
    await expect(p.page.locator(ready).first).to_be_visible()


SIZES = {"desktop": DESKTOP, "phone": PHONE}


@needs_chromium
@in_module
@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("lang", ["en", "ru", "sv"])
async def test_every_page(
    server: LiveServer,
    world: World,
    browser: Any,
    contexts: list[Any],
    on_day: Any,
    lang: str,
    size: str,
) -> None:
    on_day(DAY)
    viewport = SIZES[size]
    touch = {"has_touch": True, "is_mobile": True} if size == "phone" else {}
    p = await new_page(contexts, browser, lang, viewport=viewport, locale=lang, axe=True, **touch)
    words = catalogue(lang)
    english = english_fragments(lang) if lang != "en" else {}
    shots = ARTIFACTS / lang
    shots.mkdir(parents=True, exist_ok=True)

    async def check(name: str) -> None:
        await p.page.wait_for_load_state("networkidle")
        text = await p.page.evaluate("document.body.innerText")
        keys = [k for k in words if re.search(rf"(?<![\w/.-]){re.escape(k)}(?![\w-])", text)]
        assert not keys, (name, keys)
        leaked = {
            piece: key
            for piece, key in english.items()
            if re.search(rf"(?<!\w){re.escape(piece)}(?!\w)", text)
        }
        assert not leaked, (lang, name, leaked)
        assert await axe_violations(p.page) == [], (lang, size, name)
        await p.page.screenshot(path=str(shots / f"{size}-{name}.png"), full_page=True)

    http = server.http
    await visit(p, f"{http}/", "#lobby h1")
    await expect(p.page.locator("#daily-lobby-title")).to_be_visible()
    await check("lobby")
    await visit(p, f"{http}/d/{DEAL}", "#deal-panel")
    await check("shared-deal")
    await visit(p, f"{http}/r/{world.waiting_room}", "#invite-panel")
    await expect(p.page.locator("#invite-details")).not_to_have_text(words["invite.unknown"])
    await check("invitation")
    await visit(p, f"{http}/r/ZZZZ-ZZ", "#invite-panel")
    await expect(p.page.locator("#invite-title")).to_contain_text("ZZZZ-ZZ")
    await check("no-such-room")
    await visit(p, f"{http}/rules/klondike", "#rules-body h2")
    await check("rules")

    # a room from the form: waiting room, race, results
    await visit(p, f"{http}/", "#create")
    await p.page.check('#create-form input[name="deal"][value="code"]')
    await p.page.check('#create-form input[name="game"][value="klondike"]')
    await p.page.fill("#deal-code", DEAL)
    await p.page.click("#create")
    await expect(p.page.locator("#waiting")).to_be_visible()
    await check("waiting-room")
    await p.page.click("#start")
    await race_on(p)
    await expect(p.page.locator("#controls")).to_be_visible()
    await check("race")
    await resign(p)
    await check("results")

    # a game of one's own, its "New game" window open
    await visit(p, f"{http}/", "#play-new")
    await p.page.click("#play-new")
    await expect(p.page.locator("#controls")).to_be_visible()
    await p.page.click("#new-game-button")
    await expect(p.page.locator("#new-game")).to_be_visible()
    await check("one-tap-game")

    await visit(p, f"{http}/daily", ".daily-game-page")
    await expect(p.page.locator("#daily-countdown")).to_be_visible()
    await check("daily-today")
    await visit(p, f"{http}/daily/{YESTERDAY}", ".daily-check")
    await check("daily-over")
    await visit(p, f"{http}/p/{world.handle}", "#profile-badges")
    await check("player")
    await visit(p, f"{http}/g/{world.game_id}", ".racer")
    await check("replay")
    await visit(p, f"{http}/watch", "#watch-list .live-room")
    await check("live-races")
    await visit(p, f"{http}/tv", "#tv-boards .followed")
    await check("tv")
    await visit(p, f"{http}/t/{world.tournament}", "#t-head h1")
    await check("tournament")
    await visit(p, f"{http}/t/new", "#t-create-form")
    await check("tournament-form")
    await visit(p, f"{http}/no-such-page", "#notfound h1")
    await check("not-found")
    assert not p.errors, p.errors


def test_the_english_check_finds_english() -> None:
    """The check itself: an English sentence of the catalogue is a fragment it looks for in
    a Swedish page, and a text Swedish shares with English (a game's name) is not."""
    fragments = english_fragments("sv")
    assert catalogue("en")["lobby.title"] in fragments
    assert "Easy Harp" not in fragments
