"""Room affinity in the browser client, real headless Chromium: the page's sockets for a
known room say so in their address (``?room=CODE``, a routing hint for the balancer), and
a room's creator moves to such a socket and keeps its seat, and a spectator who types a
room's code in the lobby watches on one (docs/scaling.md, "Room affinity")."""

from __future__ import annotations

import re
from typing import Any

import pytest
from browser_fixtures import Page, browser, contexts, expect, needs_chromium, new_page, server
from helpers import until
from server_fixtures import LiveServer, paths_in_room

from clients.client import RaceClient
from clients.links import room_hint

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts", "server"]  # the shared fixtures, used by name

DEAL = "KL1-1-AAAAAAM"


async def watched(contexts: list[Any], browser: Any, name: str) -> tuple[Page, list[str]]:
    """A page, and the addresses of the websockets it opens, in order."""
    p = await new_page(contexts, browser, name)
    opened: list[str] = []
    p.page.on("websocket", lambda ws: opened.append(ws.url))
    return p, opened


async def test_the_creator_moves_to_its_room_and_a_guest_comes_with_it(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host, host_sockets = await watched(contexts, browser, "host")
    await host.page.goto(server.http + "/")
    await host.page.fill("#name", "Ann")
    await host.page.check('input[name="game"][value="klondike"]')
    await host.page.check('input[name="deal"][value="code"]')
    await host.page.fill("#deal-code", DEAL)
    await host.page.click("#create")
    await expect(host.page.locator("#room-code")).to_have_text(re.compile(r"^\w{4}-\w{2}$"))
    room = await host.page.locator("#room-code").inner_text()
    hint = f"/?room={room_hint(room)}"
    # the lobby's socket had no room; the seat moved to one that names it
    assert host_sockets[0] == f"ws://127.0.0.1:{server.port}/"
    assert host_sockets[-1].endswith(hint)

    guest, guest_sockets = await watched(contexts, browser, "guest")
    await guest.page.goto(f"{server.http}/r/{room}")
    await guest.page.fill("#name", "Bob")
    await guest.page.click("#invite-join")
    await expect(guest.page.locator("#room-code")).to_have_text(room)
    # a guest by link connects for its room from the start: one socket, no move
    assert [url.endswith(hint) for url in guest_sockets] == [True]
    await expect(guest.page.locator("#players li")).to_have_count(2)
    assert paths_in_room(server.app, room) == [hint, hint]

    # the host is still the host, on its moved seat: it starts, both race
    await expect(host.page.locator("#players li")).to_have_count(2)
    await host.page.click("#start")
    for p in (host, guest):
        await expect(p.page.locator("#countdown")).to_be_hidden()
        await expect(p.page.locator("#btn-resign")).to_be_enabled()
    assert not host.errors and not guest.errors


async def test_a_spectator_who_types_a_code_watches_on_a_socket_for_its_room(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", name="Ann", deal="code", code=DEAL)
    room = joined.room
    hint = f"/?room={room_hint(room)}"
    p = await new_page(contexts, browser, "fan")
    sockets: list[Any] = []
    p.page.on("websocket", lambda ws: sockets.append(ws))
    await p.page.goto(server.http + "/")
    await expect(p.page.locator("#join-spectator")).to_be_enabled()

    # a code that names no room: refused, and the socket opened for it is closed again
    await p.page.fill("#join-code", "ZZZZ-99")
    await p.page.click("#join-spectator")
    await expect(p.page.locator("#join-error")).not_to_be_empty()
    assert sockets[-1].url.endswith("/?room=ZZZZ99")
    await until(lambda: sockets[-1].is_closed())
    assert not sockets[0].is_closed()  # the lobby keeps its own

    await p.page.fill("#join-code", room)
    await p.page.click("#join-spectator")
    await expect(p.page.locator("#room-code")).to_have_text(room)
    await expect(p.page.locator("#players li")).to_have_count(1)
    # watched on a socket that names the room; the lobby's socket (no room) is closed
    assert sockets[0].url == f"ws://127.0.0.1:{server.port}/"
    assert sockets[-1].url.endswith(hint) and not sockets[-1].is_closed()
    await until(lambda: sockets[0].is_closed())
    assert hint in paths_in_room(server.app, room)

    # the room's events reach the spectator on its new socket
    await host.start()
    await expect(p.page.locator("#countdown")).to_be_visible()
    assert not p.errors
    await host.close()
