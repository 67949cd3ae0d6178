"""``samedeal daily play GAME``: the deal of the day in the terminal client (Textual's pilot,
a real server that keeps records, its clock moved to 2026-04-16).

The player kept in the XDG identity file (made the day before, as ``samedeal play`` makes
it) plays today's Klondike in a room of their own, started at once: the title says it is the
deal of the day and their ranked attempt; they win with the solver's line, and the share
text printed at the end tells the day's number and the numbers of the race — never the
day's code (the server does not tell it), never a card, never a ``/d/`` link.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import until
from rich.console import Group
from rich.text import Text
from server_fixtures import DAILY_TEST_KEY, http_get, live_server
from textual.widgets import Static

from clients.cli import main
from clients.client import RaceClient, ensure_identity
from clients.cmd_solve import daily_play_app, daily_play_epilogue
from clients.daily_share import DailyResult, daily_share_text
from clients.i18n import Catalogue
from clients.identity import IdentityFile
from engine import new_game
from engine.fair import secret_daily

DAY = "2026-04-16"
CARD = re.compile(
    r"(?i)\b(?:ace|king|queen|jack|spades|hearts|diamonds|clubs)\b|[♠♥♦♣]"
    r"|\b(?:[2-9TJQKA]|10)[SHDC]\b"
)


async def test_daily_play_in_the_terminal(
    tmp_path: Path, on_day: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    secret = secret_daily(DAILY_TEST_KEY, "klondike", DAY)
    code = str(secret.code)
    assert secret.solution is not None
    records = f"sqlite:///{tmp_path / 'records.db'}"
    async with live_server(countdown=0.1, records_url=records, rate=1000.0, burst=500) as server:
        # the player this terminal keeps for the server, made the day before
        on_day("2026-04-15")
        maker = await RaceClient.connect(server.url)
        made = await ensure_identity(maker, IdentityFile(server.http), "Ann")
        await maker.close()
        assert made is not None
        on_day(DAY)
        # the server's proof process starts before Textual takes the test's stderr (one
        # process here: a real server runs apart from its terminal clients)
        assert (await asyncio.to_thread(http_get, server.port, f"/api/daily/{DAY}"))[0] == 200

        app = daily_play_app(server.http, "klondike", name="Ann", lang="en")
        async with app.run_test(size=(120, 40)) as pilot:
            await until(
                lambda: app.view is not None and app._now() >= (app.start_at or 0), timeout=8
            )
            assert app.daily and app.attempt() == "ranked"
            title = str(app.query_one("#title", Static).content)
            assert "Deal of the day #106" in title and "This race: Ranked attempt" in title
            assert code not in title and "None" not in title
            assert app.client is not None and app.client.player is not None
            assert app.client.player.player == made.player  # the identity kept in the file

            # the first moves by key, the rest of the solver's line as typed moves are sent
            mirror = new_game(code)
            first, *rest = secret.solution
            await pilot.press("colon", *first, "enter")
            mirror.push(first)
            await until(lambda: app.view is not None and app.view["moves"] == 1, timeout=8)
            for move in rest:
                await app._send(move)
                mirror.push(move)
                assert app.view is not None and app.view["moves"] == mirror.moves, move
            assert mirror.won
            await until(lambda: app.phase == "ended" and app.results is not None, timeout=8)
            assert app.deck_turns == mirror.deck_turns > 0

            (row,) = app.results or []
            share = app.share_text()
            assert share == daily_share_text(
                Catalogue("en"),
                DailyResult(
                    number=106,
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
            shown = app.query_one("#results", Static).content  # the table, the share text
            assert isinstance(shown, Group) and isinstance(shown.renderables[-1], Text)
            assert share in shown.renderables[-1].plain
            # the server tells nobody the code while the day lasts: nothing falls back on it
            assert app.deal == "" and code not in share and "/d/" not in share
            assert not CARD.search(share) and "null" not in share and "None" not in share
            assert daily_play_epilogue(app) == [share]  # what the command prints at the end


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["daily", "play"], "which game?"),
        (["daily", "play", "klondike-3"], "has no deal of the day"),
        (["daily", "play", "klondike", "--date", "2026-04-16"], "today's deal"),
        (["daily", "play", "easy-harp", "--server", "ftp://host"], "not a server URL"),
    ],
)
def test_daily_play_refuses_bad_input(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert says in err and err.count("\n") == 1 and "Traceback" not in err and out == ""
