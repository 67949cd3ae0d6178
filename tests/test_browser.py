"""The browser client in real headless Chromium (Playwright): two players race on one deal
while a third page spectates.

The test plays real moves with clicks, double clicks, drags and keys, mirrors every accepted
action in an engine game, and checks what each page shows against it. Every websocket frame
each page receives is recorded: none may carry a face-down card (every board in a frame must
be a view the engine gives for a position the player really had).
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from browser_fixtures import (
    ARTIFACTS,
    PHONE,
    Mirror,
    browser,
    check_frames,
    contexts,
    drag,
    expect,
    needs_chromium,
    new_page,
    server,
    wait_moves,
)
from server_fixtures import LiveServer

from engine import IllegalMoveError

DEAL = "KL1-1-AAAAAAM"  # t3 shows an ace, t1-t2 and t6-t5 are legal at once
EVIL_NAME = '<img src=x onerror="window.pwned=1">Bob'

# one server and one browser for the whole module: every test opens its own contexts
pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts", "server"]  # the shared fixtures, used by name


async def test_two_players_race_while_a_spectator_watches(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    host = await new_page(contexts, browser, "host")
    guest = await new_page(contexts, browser, "guest", viewport=PHONE)  # a phone
    watcher = await new_page(contexts, browser, "spectator")

    # ---- lobby: the host creates a Klondike room on a chosen deal
    await host.page.goto(server.http + "/")
    await host.page.fill("#name", "Ann")
    await host.page.check('input[name="game"][value="klondike"]')
    await host.page.check('input[name="deal"][value="code"]')
    await host.page.fill("#deal-code", DEAL)
    await host.page.screenshot(path=str(ARTIFACTS / "lobby.png"))
    await host.page.click("#create")
    code_el = host.page.locator("#room-code")
    await expect(code_el).to_have_text(re.compile(r"^\w{4}-\w{2}$"))
    room = await code_el.inner_text()
    assert host.page.url.endswith(f"/r/{room}")

    # ---- the guest opens the room link, the spectator too
    await guest.page.goto(f"{server.http}/r/{room}")
    await expect(guest.page.locator("#invite-title")).to_contain_text(room)
    await guest.page.fill("#name", EVIL_NAME)
    await guest.page.click("#invite-join")
    await watcher.page.goto(f"{server.http}/r/{room}")
    await watcher.page.click("#invite-watch")

    players = host.page.locator("#players .player")
    await expect(players).to_have_count(2)
    # a name is text, never markup
    await expect(players.nth(1).locator(".name")).to_have_text(EVIL_NAME[:24])
    assert await host.page.locator("#players img").count() == 0
    await expect(watcher.page.locator("#players .player")).to_have_count(2)
    await expect(guest.page.locator("#start")).to_be_hidden()
    await host.page.screenshot(path=str(ARTIFACTS / "waiting-room.png"))

    # ---- the host starts; both boards appear after the countdown
    await host.page.click("#start")
    ann, bob = Mirror(DEAL), Mirror(DEAL)
    for p in (host, guest):
        await expect(p.top("t3")).to_have_attribute("data-card", "AD")
        await expect(p.page.locator("#countdown")).to_be_hidden()
    await watcher.page.locator('#players .player[data-seat="1"] button.watch').click()
    await expect(watcher.top("t3")).to_have_attribute("data-card", "AD")

    # a refused move: drag the ten of clubs onto the four of hearts
    await drag(host, "t4", "t7")
    reminder = host.page.locator("#board .reminder")
    await expect(reminder).to_be_visible()
    with pytest.raises(IllegalMoveError) as refusal:
        ann.game.push("t4-t7")
    await expect(reminder.locator(".text")).to_have_text(refusal.value.reminder)
    await host.page.screenshot(path=str(ARTIFACTS / "refused.png"))
    assert ann.game.moves == 0

    # a single click sends the ace to a foundation ("tap")
    await host.top("t3").click()
    assert ann.push("t3-f") == "t3-f1"
    await wait_moves(host, ann)
    await expect(host.top("f1")).to_have_attribute("data-card", "AD")

    # drag and drop: 7S onto 8H
    await drag(host, "t1", "t2")
    ann.push("t1-t2")
    await wait_moves(host, ann)
    await expect(host.top("t2")).to_have_attribute("data-card", "7S")

    # double click: the 6D goes to the table destination of the rule book
    await host.top("t6").dblclick()
    resolved = ann.push("t6-t")
    await wait_moves(host, ann)
    await expect(host.top(resolved.split("-")[1])).to_have_attribute("data-card", "6D")

    # click the stock, then click-then-click the waste card somewhere (or undo the draw)
    await host.pile("s").click()
    ann.push("s")
    await wait_moves(host, ann)
    await host.page.click("#btn-undo")
    ann.push("u")
    await wait_moves(host, ann)
    await expect(host.page.locator("#score")).to_have_text(str(ann.game.score))

    # the opponent sees the host's progress bar move, the spectator sees the board
    bar = guest.page.locator('#players .player[data-seat="1"]')
    await expect(bar).to_have_attribute("data-on-foundations", "1")
    await expect(watcher.top("f1")).to_have_attribute("data-card", "AD")
    await expect(watcher.top("t2")).to_have_attribute("data-card", "7S")

    # the guest plays with the keyboard and click-then-click
    await guest.page.keyboard.press("s")
    bob.push("s")
    await wait_moves(guest, bob)
    bob_move = next(
        str(m) for m in bob.game.legal_moves if str(m).startswith("t") and "-t" in str(m)
    )
    src, dst = bob_move.split("-")
    await guest.top(src).click()  # no foundation takes it: it stays in hand
    await expect(guest.page.locator("#board .card.selected")).to_have_count(1)
    await guest.pile(dst).click()
    bob.push(bob_move)
    await wait_moves(guest, bob)
    await expect(host.page.locator('#players .player[data-seat="2"]')).to_have_attribute(
        "data-status", "playing"
    )
    # a reload takes the seat back, board and all
    await guest.page.reload()
    await expect(guest.page.locator("#moves")).to_have_text(str(bob.game.moves))
    await expect(guest.page.locator("#room-code")).to_have_text(room)
    await expect(guest.page.locator("#players .player.me")).to_have_count(1)

    # with interactive rules off a refused move says nothing
    await guest.page.click("#settings-button")
    await guest.page.uncheck("#opt-rules")
    await guest.page.click("#settings-button")
    bad = next(
        (i, j)
        for i in range(1, 8)
        for j in range(1, 8)
        if i != j
        and bob.game.columns[i - 1]
        and bob.game.columns[j - 1]
        and not bob.game.is_legal(f"t{i}-t{j}")
    )
    await drag(guest, f"t{bad[0]}", f"t{bad[1]}")
    await guest.page.wait_for_timeout(300)
    await expect(guest.page.locator("#board .reminder")).to_have_count(0)
    await expect(guest.page.locator("#moves")).to_have_text(str(bob.game.moves))

    await host.page.screenshot(path=str(ARTIFACTS / "race.png"))
    await guest.page.screenshot(path=str(ARTIFACTS / "race-phone.png"))
    await watcher.page.screenshot(path=str(ARTIFACTS / "spectator.png"))

    # ---- both give up; everyone sees the results
    for p in (guest, host):
        await p.page.click("#btn-resign")
        await p.page.click("#btn-resign")
    for p in (host, guest, watcher):
        await expect(p.page.locator("#results")).to_be_visible()
        await expect(p.page.locator("#results tbody tr")).to_have_count(2)
    first = host.page.locator("#results tbody tr").first
    await expect(first.locator("td").nth(1)).to_have_text("Ann")  # one card home beats none
    share = await host.page.locator("#share-text").input_value()
    assert DEAL in share and "1st of 2" in share
    assert f"{server.http}/d/{DEAL}" in share  # the link leads to the deal
    assert "t3" not in share and "AD" not in share  # no spoilers
    await expect(host.page.locator("#rematch-same")).to_be_visible()
    await expect(guest.page.locator("#rematch-same")).to_be_hidden()
    await host.page.screenshot(path=str(ARTIFACTS / "results.png"))

    # ---- a rematch on the same deal: everyone is back on the first layout
    # ---- the host seats a ghost of Ann's run (it replays it in the rematch)
    await expect(guest.page.locator("#add-ghost")).to_be_hidden()
    await host.page.select_option("#ghost-seat", "1")
    await host.page.click("#add-ghost-button")
    for p in (host, guest, watcher):
        await expect(p.page.locator("#players")).to_contain_text("Ghost of Ann")
    await host.page.click("#rematch-same")
    # the guest is asked (the ghost and the host race unasked)
    await expect(guest.page.locator("#rematch-offer-text")).to_have_text(
        "Ann offers a rematch on the same deal. Race again?"
    )
    await guest.page.click("#rematch-accept")
    for p in (host, guest):
        await expect(p.page.locator("#results")).to_be_hidden()
        await expect(p.page.locator("#moves")).to_have_text("0")
        await expect(p.top("t1")).to_have_attribute("data-card", "7S")

    # ---- fair play: a racing player never got another player's finished run
    for p, me in ((host, 1), (guest, 2)):
        done = False
        for frame in p.frames:
            if frame.get("seat") == me and frame.get("status") not in (None, "playing"):
                done = True
            if frame.get("type") == "player_finished" and frame["seat"] != me:
                assert done, f"{p.name} saw seat {frame['seat']}'s run while racing"

    # ---- fair play: the deal code (it tells every face-down card) reached the guest only
    # in their own player_finished, the spectator with the end of the race; the host typed it
    for p, seat in ((guest, 2), (watcher, None)):
        before_end = []
        for frame in p.frames:
            kind = frame.get("type")
            if kind == "race_ended" or (kind == "player_finished" and frame["seat"] == seat):
                assert frame.get("deal") == DEAL, p.name
                break
            before_end.append(frame)
        assert before_end and not [f for f in before_end if DEAL in json.dumps(f)], p.name

    # ---- no page ever received a face-down card
    legit = ann.views | bob.views
    assert check_frames(host, legit) >= 5
    assert check_frames(guest, legit) >= 2
    assert check_frames(watcher, legit) >= 2
    for p in (host, guest, watcher):
        assert not p.errors, p.errors
        assert await p.page.evaluate("window.pwned === undefined")


async def test_easy_harp_board_on_a_phone(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    deal = "EH1-N-AAAAAAT"  # AH on t3, AC on t7, 7S (t2) fits on 8H (t4)
    p = await new_page(contexts, browser, "solo", viewport=PHONE, has_touch=True)
    await p.page.goto(server.http + "/")
    await p.page.fill("#name", "Solo")
    await p.page.check('input[name="deal"][value="code"]')
    await p.page.fill("#deal-code", deal)
    await p.page.click("#create")
    await p.page.click("#start")
    mirror = Mirror(deal)
    await expect(p.top("t3")).to_have_attribute("data-card", "AH")
    await expect(p.page.locator("#countdown")).to_be_hidden()

    # eight suit-reserved foundation slots, each showing its suit while empty
    marks = await p.page.locator("#board .foundation .slot-mark").all_inner_texts()
    assert marks == ["♠", "♥", "♣", "♦", "♠", "♥", "♣", "♦"]
    assert await p.page.locator("#board .column .card.back").count() == 36
    assert await p.page.locator("#board .column").count() == 9
    await expect(p.pile("s").locator(".count")).to_have_text("59")

    # the ace of hearts goes to the hearts slot; the ace of clubs refuses a spade slot
    await p.top("t3").click()
    assert mirror.push("t3-f") == "t3-f2"
    await wait_moves(p, mirror)
    await expect(p.top("f2")).to_have_attribute("data-card", "AH")
    # dropped on a spade slot, the ace of clubs finds its own suit's slot (the app's way)
    await drag(p, "t7", "f1")
    assert mirror.push("t7-f") == "t7-f3"
    await wait_moves(p, mirror)
    await expect(p.top("f3")).to_have_attribute("data-card", "AC")
    await p.top("t2").dblclick()
    assert mirror.push("t2-t") == "t2-t4"
    await wait_moves(p, mirror)
    await expect(p.top("t4")).to_have_attribute("data-card", "7S")
    await p.page.keyboard.press("u")
    mirror.push("u")
    await expect(p.top("t2")).to_have_attribute("data-card", "7S")
    await expect(p.page.locator("#score")).to_have_text(str(mirror.game.score))
    await p.page.screenshot(path=str(ARTIFACTS / "easy-harp-phone.png"), full_page=True)
    assert check_frames(p, mirror.views) >= 4
    assert not p.errors


async def test_private_room_needs_its_link(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    host = await new_page(contexts, browser, "host")
    await host.page.goto(server.http + "/")
    await host.page.fill("#name", "Ann")
    await host.page.click("summary")
    await host.page.check("#private-room")
    await host.page.fill("#time-limit", "5")
    await host.page.click("#create")
    await expect(host.page.locator("#room-options")).to_contain_text("private")
    await expect(host.page.locator("#room-options")).to_contain_text("time limit 5:00")
    link = await host.page.locator("#room-link").input_value()
    assert "?key=" in link
    room = await host.page.locator("#room-code").inner_text()

    stranger = await new_page(contexts, browser, "stranger")
    await stranger.page.goto(f"{server.http}/r/{room}")  # no key: as no such room
    await expect(stranger.page.locator("#invite-title")).to_have_text(f"No room {room}")
    await expect(stranger.page.locator("#invite-join")).to_be_hidden()
    # joining by the code alone (the lobby's form) is refused as for an unknown room
    await stranger.page.goto(server.http + "/")
    await stranger.page.fill("#join-code", room)
    await stranger.page.click("#join-player")
    await expect(stranger.page.locator("#join-error")).to_contain_text("no such room")

    friend = await new_page(contexts, browser, "friend")
    await friend.page.goto(link)
    await friend.page.fill("#name", "Bob")
    await friend.page.click("#invite-join")
    await expect(host.page.locator("#players .player")).to_have_count(2)
    await expect(friend.page.locator("#room-code")).to_have_text(room)


async def test_race_a_bot(server: LiveServer, browser: Any, contexts: list[Any]) -> None:
    """The host seats a bot from the waiting room; the server plays it: its progress shows."""
    p = await new_page(contexts, browser, "host")
    await p.page.goto(server.http + "/")
    await p.page.fill("#name", "Ann")
    await p.page.click("#create")
    await expect(p.page.locator("#add-bot")).to_be_visible()
    await p.page.select_option("#bot-strength", "greedy")
    await p.page.fill("#bot-pace", "10")
    await p.page.click("#add-bot-button")
    bot = p.page.locator('#players [data-seat="2"]')
    await expect(bot).to_contain_text("Bot (greedy)")
    await p.page.click("#start")
    await expect(bot).to_contain_text("moves", timeout=8000)
    await expect(bot).not_to_contain_text(" 0 moves", timeout=8000)
    # the game's name, not the deal code (a random deal: nobody is told it while racing)
    await expect(p.page.locator("#game-title")).to_have_text(re.compile(r"^[^0-9]+$"))
    assert not p.errors
