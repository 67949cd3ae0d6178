"""UTC dates, random winnable deals, and ``samedeal daily`` (the deal of the day comes from
a server: see tests/test_daily_challenge.py for the server)."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from pathlib import Path
from typing import Any

import pytest
from server_fixtures import DAILY_TEST_KEY, StartServer

from clients.cli import main
from engine import replay
from engine.daily import random_winnable, utc_date
from engine.fair import secret_daily


def test_date_forms_agree() -> None:
    day = dt.date(2025, 6, 15)
    late = dt.datetime(2025, 6, 15, 23, 30, tzinfo=dt.UTC)
    # 01:30 on the 16th in UTC+2 is still the 15th in UTC
    east = dt.datetime(2025, 6, 16, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert {utc_date(d) for d in ("2025-06-15", day, late, east)} == {day}
    with pytest.raises(ValueError):
        utc_date("15/06/2025")


def test_random_winnable() -> None:
    code, result = random_winnable("klondike", nodes=20_000, rng=random.Random(7))
    assert code.game_name == "klondike"
    assert result.verdict == "winnable" and result.solution is not None
    assert replay(code, result.solution).won
    again, _ = random_winnable("klondike", nodes=20_000, rng=random.Random(7))
    assert again == code


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["daily", "klondike"], "--server"),
        (["daily", "klondike-3", "--server", "http://x"], "invalid choice"),
        (["daily", "klondike", "--server", "ftp://x"], "not a server URL"),
        (["daily", "klondike", "--server", "http://x", "--date", "June"], "not a date"),
    ],
)
def test_cli_daily_bad_input(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        status = main(args)
    except SystemExit as exc:  # argparse's own refusal
        status = int(exc.code or 0)
    assert status == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


async def test_cli_daily_from_a_server(
    start_server: StartServer, tmp_path: Path, on_day: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    on_day("2026-04-17")
    server = await start_server("memory", daily_key=DAILY_TEST_KEY)
    url = f"http://127.0.0.1:{server.port}"
    today = secret_daily(DAILY_TEST_KEY, "klondike", "2026-04-17")
    yesterday = secret_daily(DAILY_TEST_KEY, "klondike", "2026-04-16")
    # the proofs are done on the server first (a request never waits for one)
    server.app.daily.deal_of("klondike", dt.date(2026, 4, 17))
    await server.app.daily.deal_of("klondike", dt.date(2026, 4, 16))
    await server.app.daily.deal_of("klondike", dt.date(2026, 4, 17))
    status = await asyncio.to_thread(main, ["daily", "klondike", "--server", url])
    out = capsys.readouterr().out
    assert status == 0 and "secret until 00:00 UTC" in out and today.commitment in out
    assert str(today.code) not in out
    status = await asyncio.to_thread(
        main, ["daily", "klondike", "--server", url, "--date", "2026-04-16"]
    )
    captured = capsys.readouterr()
    assert status == 0 and captured.out.strip() == str(yesterday.code)
    assert "matches its commitment" in captured.err
