"""The daily challenge in real headless Chromium (issue 15, the browser side).

On a server that keeps records, with its clock moved to 2026-04-16 (the fair-deals test key
proves that day's deals in about a second): a player made the day before plays "Today's
Klondike" from the lobby in one tap — their ranked attempt, said before and during the race
— wins it with the solver's line, and shares the result. The share text tells the day's
number, won, score, moves, deck turns and time, and links the day's page; it carries no deal
code (checked with the day's real code), no card and no ``/d/`` link, and nothing the page
received or shows names the code. Back in the lobby, the card shows the result and offers
practice. The day's pages show today's commitments and countdown, yesterday's reveal (which
verifies, in the page and with ``engine.fair.verify_daily``), and — once the clock has moved
past the day — the revealed deal, the leaderboard with the player's place and replay; the
player page shows the streaks. axe-core checks the pages. The browser's share-text builder
and deck-turn counter are compared with the terminal's (``clients/daily_share.py``).
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
    TYPE_MOVES,
    Page,
    axe_violations,
    browser,
    contexts,
    expect,
    needs_chromium,
    new_page,
)
from helpers import until
from server_fixtures import DAILY_TEST_KEY, LiveServer, get_json, live_server

from clients.client import RaceClient
from clients.daily_share import (
    DailyResult,
    daily_share_text,
    deck_turn_step,
    format_time,
    foundation_line,
)
from clients.i18n import LANGUAGES, Catalogue
from engine import DealCode, new_game
from engine.fair import secret_daily, verify_daily
from protocol import RaceStarting

DAY = "2026-04-16"
NEXT = "2026-04-17"
BEFORE = "2026-04-15"
NUMBER = 106  # 2026-04-16 is day 106
EN: dict[str, Any] = json.loads(
    (Path(__file__).resolve().parent.parent / "clients/web/i18n/en.json").read_text("utf-8")
)
DEAL_CODE = re.compile(r"\b(?:EH|KL)\d-[A-Z0-9]-(?:[A-Z]{26}|[A-Z]{7})\b")
CARD = re.compile(
    r"(?i)\b(?:ace|king|queen|jack|spades|hearts|diamonds|clubs)\b|[♠♥♦♣]"
    r"|\b(?:[2-9TJQKA]|10)[SHDC]\b"
)

ANN: dict[str, str] = {}  # the first test's player ({player, secret}), for the later ones

pytestmark = [needs_chromium, pytest.mark.asyncio(loop_scope="module")]
__all__ = ["browser", "contexts"]  # the shared fixtures, used by name


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[LiveServer]:
    """A server that keeps records (SQLite in a temporary directory), draws the deal of the
    day from the test key and serves the page; its message credits let a page type a
    whole winning line at once."""
    path = tmp_path_factory.mktemp("records") / "records.db"
    config = {"countdown": 0.3, "records_url": f"sqlite:///{path}", "rate": 1000.0, "burst": 500}
    async with live_server(**config) as live:
        yield live


async def api(server: LiveServer, path: str) -> tuple[int, Any]:
    return await get_json(server.port, path)


async def until_api(server: LiveServer, path: str, check: Any, timeout: float = 30.0) -> Any:
    """The API's answer at ``path`` once ``check(answer)`` holds."""

    async def answered() -> Any:
        status, body = await api(server, path)
        return body if status == 200 and check(body) else None

    return await until(answered, timeout)


def frames_text(p: Page) -> str:
    return json.dumps(p.frames)


async def start_solo(p: Page, game: str) -> None:
    await p.page.click(f"#daily-play-{game}")
    await expect(p.page.locator("#room-code")).to_have_text(re.compile(r"^\w{4}-\w{2}$"))
    await expect(p.page.locator("#board .column")).not_to_have_count(0)
    await expect(p.page.locator("#countdown")).to_be_hidden()


async def test_playing_the_daily_from_the_lobby_and_sharing_it(
    server: LiveServer, browser: Any, contexts: list[Any], on_day: Any
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    secret = secret_daily(DAILY_TEST_KEY, "klondike", DAY)
    code = str(secret.code)
    assert secret.solution is not None
    p = await new_page(contexts, browser, "ann", permissions=["clipboard-read", "clipboard-write"])

    # the player is made the day before (only players made before a day began rank), on a
    # page that asks nothing of the day
    on_day(BEFORE)
    await p.page.goto(server.http + "/rules")
    await p.page.click("#you-button")
    await expect(p.page.locator("#you-status")).to_have_text(EN["you.intro"])
    await p.page.fill("#you-handle", "daily_ann")
    await p.page.click("#you-handle-form button[type=submit]")
    await expect(p.page.locator("#you-handle-note")).to_have_text(EN["you.saved"])

    on_day(DAY)
    await p.page.goto(server.http + "/")
    await p.page.fill("#name", "Ann")
    lobby = p.page.locator("#daily-lobby")
    await expect(lobby).to_be_visible()
    # first among the things to do: before joining or creating a room
    first = await p.page.evaluate(
        "document.getElementById('daily-lobby').compareDocumentPosition("
        "document.getElementById('join-panel')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert first
    await expect(p.page.locator("#daily-lobby-title")).to_have_text(f"Deal of the day · #{NUMBER}")
    await expect(p.page.locator("#daily-title-klondike")).to_have_text("Today's Klondike")
    await expect(p.page.locator("#daily-title-easy-harp")).to_have_text("Today's Easy Harp")
    await expect(p.page.locator("#daily-result-klondike")).to_have_text(EN["daily.not_played"])
    await expect(p.page.locator("#daily-play-klondike")).to_have_text(EN["daily.play"])

    # "Race friends on it": a waiting room that says what the race will be, before it starts
    await p.page.click("#daily-race-klondike")
    await expect(p.page.locator("#waiting")).to_be_visible()
    await expect(p.page.locator("#daily-note")).to_have_text(EN["attempt.next.ranked"])
    await expect(p.page.locator("#daily-badge")).to_be_visible()
    await p.page.click("#leave")  # leaving before the start uses up nothing
    await p.page.wait_for_url(server.http + "/")

    # one tap: a room of one's own, started at once; the ranked attempt, said clearly
    await p.page.fill("#name", "Ann")
    await start_solo(p, "klondike")
    ranked = EN["attempt.this_race"].replace("{kind}", EN["attempt.ranked"])
    await expect(p.page.locator("#attempt-badge")).to_have_text(ranked)
    await expect(p.page.locator("#daily-badge")).to_be_visible()
    assert EN["room.daily"] in await p.page.title()
    title = await p.page.locator("#game-title").inner_text()
    assert title == "Klondike, draw one"  # never a code, never "null"
    await p.page.screenshot(path=str(ARTIFACTS / "daily-race.png"))

    # win it with the solver's line, typed in the page's move field
    assert await p.page.evaluate(TYPE_MOVES, list(secret.solution)) == ""
    mirror = new_game(code)
    for move in secret.solution:
        mirror.push(move)
    assert mirror.won
    await expect(p.page.locator("#results")).to_be_visible()
    await expect(p.page.locator("#moves")).to_have_text(str(mirror.moves))
    await expect(p.page.locator("#attempt-badge")).to_have_text(ranked)  # still said after

    ended = next(f for f in p.frames if f.get("type") == "race_ended")
    (row,) = ended["results"]
    assert row["status"] == "won" and row["score"] == mirror.score
    share = await p.page.locator("#share-text").input_value()
    expected = daily_share_text(
        Catalogue("en"),
        DailyResult(
            number=NUMBER,
            game="klondike",
            attempt="ranked",
            won=True,
            on_foundations=52,
            total=52,
            score=mirror.score,
            moves=mirror.moves,
            deck_turns=mirror.deck_turns,
            elapsed_ms=row["elapsed_ms"],
            foundations=(13, 13, 13, 13),
            url=f"{server.http}/daily/{DAY}",
        ),
    )
    assert share == expected
    lines = share.split("\n")
    assert lines[0] == f"samedeal · deal of the day #{NUMBER} · Klondike, draw one"
    assert lines[1] == (
        f"Won · score {mirror.score} · {mirror.moves} moves · {mirror.deck_turns} deck turns"
        f" · time {format_time(row['elapsed_ms'])}"
    )
    assert lines[2] == foundation_line([13] * 4)
    assert lines[3] == f"The day's results: {server.http}/daily/{DAY}"
    # spoiler-free: the day's real code, its salt, a card, a /d/ link — none of them
    assert code not in share and secret.salt.hex() not in share
    assert not DEAL_CODE.search(share) and not CARD.search(share)
    assert "/d/" not in share and "null" not in share
    # nor anywhere the page got or shows while the day lasts
    assert code not in frames_text(p) and code not in await p.page.content()
    assert code not in p.page.url

    # the clipboard where the browser has no share sheet (headless Chromium on Linux) …
    await expect(p.page.locator("#copy-share")).to_have_text(EN["results.copy"])
    await p.page.click("#copy-share")
    await expect(p.page.locator("#toast")).to_have_text(EN["toast.copied"])
    assert await p.page.evaluate("navigator.clipboard.readText()") == share
    # … and the Web Share API where it has one (as on a phone)
    await p.page.evaluate(
        "() => { navigator.share = async (d) => { window.sharedText = d.text; }; }"
    )
    await p.page.click("#copy-share")
    assert await p.page.evaluate("window.sharedText") == share
    await p.page.screenshot(path=str(ARTIFACTS / "daily-results.png"))

    # back in the lobby: the result, and a second play is practice, said so
    you = await until_api(
        server,
        f"/api/daily/{DAY}/klondike?player={await player_id(p)}",
        lambda b: b["you"] is not None and b["you"]["status"] == "won",
    )
    assert you["you"]["rank"] == 1 and you["you"]["ranked"]
    ANN.update(json.loads(await p.page.evaluate("localStorage.getItem('samedeal.identity')")))
    await p.page.click("#leave")
    await p.page.wait_for_url(server.http + "/")
    result = p.page.locator("#daily-result-klondike")
    await expect(result).to_contain_text(f"won in {format_time(row['elapsed_ms'])}")
    await expect(result).to_contain_text(f"{mirror.moves} moves")
    await expect(result).to_contain_text("rank 1")
    await expect(p.page.locator("#daily-play-klondike")).to_have_text(EN["daily.play_again"])
    await expect(p.page.locator("#daily-result-easy-harp")).to_have_text(EN["daily.not_played"])
    await p.page.screenshot(path=str(ARTIFACTS / "daily-lobby-played.png"), full_page=True)
    await p.page.fill("#name", "Ann")
    await start_solo(p, "klondike")
    practice = EN["attempt.this_race"].replace("{kind}", EN["attempt.practice"])
    await expect(p.page.locator("#attempt-badge")).to_have_text(practice)
    await p.page.fill("#move-input", "s")
    await p.page.press("#move-input", "Enter")
    await expect(p.page.locator("#moves")).to_have_text("1")
    await p.page.click("#btn-resign")
    await p.page.click("#btn-resign")
    await expect(p.page.locator("#results")).to_be_visible()
    share = await p.page.locator("#share-text").input_value()
    assert share.split("\n")[0].endswith(f" · {EN['attempt.practice']}")
    assert share.split("\n")[1].startswith("Not won: 0/52 cards home · score 0 · 1 move ·")
    assert code not in share and not CARD.search(share) and "/d/" not in share
    assert code not in frames_text(p)
    assert not p.errors


async def as_ann(p: Page, server: LiveServer) -> None:
    """Make ``p``'s browser the first test's player's device (its kept identity)."""
    assert ANN, "the first test makes the player"
    await p.page.goto(server.http + "/rules")
    await p.page.evaluate("(v) => localStorage.setItem('samedeal.identity', v)", json.dumps(ANN))


async def player_id(p: Page) -> str:
    kept = await p.page.evaluate("localStorage.getItem('samedeal.identity')")
    return str(json.loads(kept)["player"])


async def test_the_days_pages_before_and_after_the_day(
    server: LiveServer, browser: Any, contexts: list[Any], on_day: Any
) -> None:
    on_day(DAY)
    today = {g: secret_daily(DAILY_TEST_KEY, g, DAY) for g in ("klondike", "easy-harp")}
    before = {g: secret_daily(DAILY_TEST_KEY, g, BEFORE) for g in ("klondike", "easy-harp")}
    # yesterday's proofs run in the server's background: wait for both reveals
    await until_api(server, "/api/daily", lambda b: all(g["code"] for g in b["yesterday"]["games"]))
    p = await new_page(contexts, browser, "reader", axe=True)
    await as_ann(p, server)
    await p.page.goto(server.http + "/daily")
    await expect(p.page.locator("#daily h1")).to_contain_text(f"#{NUMBER}")
    await expect(p.page.locator("#daily-countdown")).to_have_text(
        re.compile(r"^Ends in \d{1,2}:\d\d:\d\d \(00:00 UTC\)$")
    )
    for game, deal in today.items():
        part = p.page.locator(f'.daily-game-page[data-game="{game}"]')
        await expect(part.locator("code.commitment")).to_have_text(deal.commitment)
        await expect(part.locator("code.deal-code")).to_have_count(0)  # secret today
    page_text = await p.page.content()
    for deal in today.values():
        assert str(deal.code) not in page_text and deal.salt.hex() not in page_text
    # yesterday's reveal, and how to check it
    for game, deal in before.items():
        part = p.page.locator(f'.daily-reveal[data-game="{game}"]')
        shown = {
            k: await part.locator(f"code.{k}").inner_text()
            for k in ("deal-code", "salt", "commitment")
        }
        assert shown["deal-code"] == str(deal.code)
        assert verify_daily(shown["deal-code"], shown["salt"], shown["commitment"])
        await part.locator(".daily-check button").click()
        await expect(part.locator(".daily-check-result")).to_have_text(EN["daily.check_ok"])
        command = await part.locator(".daily-command").inner_text()
        assert f"--code {deal.code}" in command and f"--date {BEFORE}" in command
    await p.page.screenshot(path=str(ARTIFACTS / "daily-today.png"), full_page=True)
    assert await axe_violations(p.page) == [], "/daily"

    # the day is over: its deal revealed, the leaderboard with replays
    on_day(NEXT)
    await p.page.goto(f"{server.http}/daily/{DAY}")
    await expect(p.page.locator("#daily h1")).to_contain_text(f"#{NUMBER}")
    for game, deal in today.items():
        part = p.page.locator(f'.daily-game-page[data-game="{game}"]')
        code = await part.locator("code.deal-code").inner_text()
        salt = await part.locator("code.salt").inner_text()
        commitment = await part.locator("code.commitment").inner_text()
        assert code == str(deal.code) and commitment == deal.commitment
        assert verify_daily(code, salt, commitment)
        await part.locator(".daily-check button").click()
        await expect(part.locator(".daily-check-result")).to_have_text(EN["daily.check_ok"])
    # the player's own place, then the leaderboard
    klondike = p.page.locator('.daily-game-page[data-game="klondike"]')
    await expect(klondike.locator(".daily-you")).to_have_text("rank 1")
    await expect(p.page.locator("#daily-you-klondike tbody tr.me td").first).to_have_text("1")
    board = p.page.locator("#daily-board-klondike tbody tr")
    await expect(board).to_have_count(1)
    await expect(board.first).to_have_class("me")
    cells = board.first.locator("td")
    await expect(cells.nth(0)).to_have_text("1")
    await expect(cells.nth(1).locator("a")).to_have_attribute("href", "/p/daily_ann")
    await expect(cells.nth(2)).to_contain_text("won in")
    replay = cells.last.locator("a")
    href = await replay.get_attribute("href")
    assert href is not None and href.startswith("/g/")
    status, game = await api(server, f"/api/games/{href.removeprefix('/g/')}")
    assert status == 200 and game["deal"] == str(today["klondike"].code)
    await expect(p.page.locator("#daily-board-easy-harp")).to_have_count(0)  # nobody played
    await p.page.screenshot(path=str(ARTIFACTS / "daily-past.png"), full_page=True)
    assert await axe_violations(p.page) == [], f"/daily/{DAY}"
    await replay.click()
    await expect(p.page.locator(".racer")).to_have_count(1)

    # the player's page: the day's streaks and best score
    await p.page.goto(f"{server.http}/p/daily_ann")
    row = p.page.locator('#profile-daily tbody tr[data-game="klondike"] td')
    await expect(row.nth(1)).to_have_text("1")  # days played
    await expect(row.nth(2)).to_have_text("1")  # days won
    await expect(row.nth(3)).to_have_text("1")  # played in a row
    await expect(row.nth(4)).to_have_text("1")  # won in a row
    best = int(await row.nth(7).inner_text())
    status, page = await api(server, "/api/players/daily_ann")
    assert status == 200 and page["daily"][0]["best_score"] == best > 0
    assert await axe_violations(p.page) == [], "/p/daily_ann"

    # days that are not (yet) days of the challenge say so
    for path, error in (
        ("/daily/2099-01-01", "error.future_day"),
        ("/daily/2025-06-01", "error.before_day_one"),  # not "this game has none" (issue 31)
    ):
        await p.page.goto(server.http + path)
        await expect(p.page.locator("#daily .error")).to_have_text(EN[error])
    assert not p.errors


async def test_a_newcomer_races_a_friend_on_the_daily(
    server: LiveServer, browser: Any, contexts: list[Any], on_day: Any
) -> None:
    """A player made today races the first test's player on today's Easy Harp: the lobby and
    the waiting room say first that it goes on the newcomers' board (it ranks from
    tomorrow), the race says so; for the friend (made before the day, who has played only
    today's Klondike) it is their ranked Easy Harp attempt. The day's page then lists the
    friend among the players raced with, and the player's place among the newcomers. On a
    phone, the page fits the width."""
    on_day(DAY)
    p = await new_page(contexts, browser, "newcomer", viewport=PHONE, has_touch=True)
    await p.page.goto(server.http + "/")
    await expect(p.page.locator("#daily-result-easy-harp")).to_have_text(EN["daily.not_played_new"])
    await p.page.fill("#name", "Nell")
    await p.page.click("#daily-race-easy-harp")
    await expect(p.page.locator("#daily-note")).to_have_text(EN["attempt.next.unranked"])
    room = await p.page.locator("#room-code").inner_text()
    friend = await RaceClient.connect(server.url)
    try:
        await friend.identify(ANN["player"], ANN["secret"])
        await friend.join(room, name="Ann")
        await expect(p.page.locator("#players .player")).to_have_count(2)
        await p.page.click("#start")
        start = await friend.next_event("race_starting")
        assert isinstance(start, RaceStarting) and start.deal is None
        assert start.attempts == {"1": "unranked", "2": "ranked"}
        unranked = EN["attempt.this_race"].replace("{kind}", EN["attempt.unranked"])
        await expect(p.page.locator("#attempt-badge")).to_have_text(unranked)
        await expect(p.page.locator("#countdown")).to_be_hidden()
        await friend.resign()
        await p.page.click("#btn-resign")
        await p.page.click("#btn-resign")
        await expect(p.page.locator("#results")).to_be_visible()
        share = await p.page.locator("#share-text").input_value()
        assert share.split("\n")[0].endswith(EN["attempt.unranked"])
        assert "/daily/2026-04-16" in share and "/d/" not in share
    finally:
        await friend.close()
    me = await player_id(p)
    await until_api(
        server,
        f"/api/daily/{DAY}/klondike?player={me}",
        lambda b: [e["name"] for e in b["raced_with"]] == ["Ann"],
    )
    await p.page.goto(server.http + "/daily")
    friends = p.page.locator("#daily-friends-klondike tbody tr")
    await expect(friends).to_have_count(1)
    await expect(friends.first.locator("td").first).to_have_text("1")
    await expect(friends.first.locator("td").nth(1)).to_have_text("Ann")
    harp = p.page.locator('.daily-game-page[data-game="easy-harp"]')
    newcomer = re.escape(EN["daily.you_newcomer"]).replace(re.escape("{rank}"), r"\d+")
    await expect(harp.locator(".daily-you")).to_have_text(re.compile(newcomer))
    await expect(harp.locator("#daily-newcomers-easy-harp tr.me")).to_contain_text("Nell")
    width = await p.page.evaluate("document.documentElement.clientWidth")
    assert await p.page.evaluate("document.documentElement.scrollWidth") <= width
    await p.page.screenshot(path=str(ARTIFACTS / "daily-phone.png"), full_page=True)
    assert not p.errors


async def test_a_guest_becomes_a_player_in_the_tap_that_plays_the_daily(
    server: LiveServer, browser: Any, contexts: list[Any], on_day: Any
) -> None:
    """Today's deal is played by players only. A page without a player (its player deleted
    in this visit: no new one is made by itself) taps Play on today's Klondike: that tap
    makes the player — no form — and the race is their attempt (unranked: a player made
    today)."""
    on_day(DAY)
    p = await new_page(contexts, browser, "guest")
    await p.page.goto(server.http + "/")
    await p.page.click("#you-button")
    await p.page.click("#you-delete")
    await p.page.click("#you-delete-yes")
    await expect(p.page.locator("#you-status")).to_have_text(EN["you.deleted"])
    await p.page.click("#you-button")
    assert await p.page.evaluate("localStorage.getItem('samedeal.identity')") is None
    await start_solo(p, "klondike")
    unranked = EN["attempt.this_race"].replace("{kind}", EN["attempt.unranked"])
    await expect(p.page.locator("#attempt-badge")).to_have_text(unranked)
    me = await player_id(p)
    await p.page.click("#btn-resign")
    await p.page.click("#btn-resign")
    await expect(p.page.locator("#results")).to_be_visible()
    mine = await until_api(
        server, f"/api/daily/{DAY}/klondike?player={me}", lambda b: b["you"] is not None
    )
    assert mine["you"]["ranked"] is False
    assert not p.errors


SHARE_CASES = [
    DailyResult(106, "klondike", "ranked", True, 52, 52, 1187, 143, 2, 312_400, (13,) * 4, "u"),
    DailyResult(
        106,
        "easy-harp",
        "practice",
        False,
        37,
        104,
        415,
        88,
        5,
        3_723_000,
        (7, 3, 0, 13, 9, 1, 4, 0),
        "http://h/daily/2026-04-16",
    ),
    DailyResult(7, "klondike", "unranked", False, 1, 52, 5, 1, 1, None, None, "x", streak=1),
    DailyResult(366, "klondike", "guest", False, 21, 52, 90, 22, 0, 61_000, (5, 9, 4, 3), "y"),
    DailyResult(40, "easy-harp", "ranked", True, 104, 104, 1220, 300, 0, 900_000, None, "z", 12),
]


async def test_the_browser_and_the_terminal_write_the_same_share_text(
    server: LiveServer, browser: Any, contexts: list[Any]
) -> None:
    p = await new_page(contexts, browser, "parity")
    await p.page.goto(server.http + "/rules")
    await expect(p.page.locator("#rules-title")).to_be_visible()
    for lang in LANGUAGES:
        for case in SHARE_CASES:
            facts = {
                "number": case.number,
                "game": case.game,
                "attempt": case.attempt,
                "won": case.won,
                "onFoundations": case.on_foundations,
                "total": case.total,
                "score": case.score,
                "moves": case.moves,
                "deckTurns": case.deck_turns,
                "elapsedMs": case.elapsed_ms,
                "foundations": list(case.foundations) if case.foundations else None,
                "url": case.url,
                "streak": case.streak,
            }
            text = await p.page.evaluate(
                """async ([lang, facts]) => {
                  await (await import("/i18n.js")).setLang(lang);
                  return (await import("/share.js")).dailyShareText(facts);
                }""",
                [lang, facts],
            )
            assert text == daily_share_text(Catalogue(lang), case), (lang, case)
    # the deck turns: the same count from the same boards (a game leaning on the stock)
    game = new_game(DealCode.for_game("klondike", 4242))
    steps: list[tuple[dict[str, Any], dict[str, Any], str]] = []
    for i in range(120):
        move = "u" if game.can_undo and i % 7 == 6 else "s"
        before = game.player_view()
        outcome = game.push(move)
        steps.append((before, game.player_view(), str(outcome.move)))
    counted = await p.page.evaluate(
        """async (steps) => {
          const { deckTurnStep } = await import("/share.js");
          return steps.map(([before, after, move]) => deckTurnStep(before, after, move));
        }""",
        steps,
    )
    assert counted == [deck_turn_step(b, a, m) for b, a, m in steps]
    assert sum(counted) == game.deck_turns > 0
    assert not p.errors
