"""The deal of the day: a stable derivation from the UTC date, proven winnable."""

from __future__ import annotations

import datetime as dt
import random

import pytest

from clients.cli import main
from engine import DealCode, InvalidDealCodeError, replay
from engine.daily import candidate_codes, daily_code, daily_deal, random_winnable

# Golden values: every worker and client must derive these. A change here changes the deal
# of the day for everyone (see engine.daily).
GOLDEN_CANDIDATES = {
    ("klondike", "2025-01-01"): ["KL1-1-AABJRXW", "KL1-1-AABVROR", "KL1-1-AABUZWK"],
    ("easy-harp", "2025-06-15"): ["EH1-N-AABAOAP", "EH1-N-AAARSJA", "EH1-N-AAAFJCS"],
}
GOLDEN_DAILY = {
    ("klondike", "2025-01-01"): ("KL1-1-AABVROR", 1),
    ("klondike", "2025-06-15"): ("KL1-1-AABAIMX", 0),
    ("klondike", "2026-03-01"): ("KL1-1-AAAVGRP", 0),
    ("klondike-3", "2025-06-15"): ("KL1-3-AABQBXN", 0),
    ("easy-harp", "2025-06-15"): ("EH1-N-AABAOAP", 0),
    ("easy-harp", "2026-03-01"): ("EH1-N-AABHHTG", 0),
}


@pytest.mark.parametrize(("key", "codes"), GOLDEN_CANDIDATES.items())
def test_candidates_are_stable(key: tuple[str, str], codes: list[str]) -> None:
    game, date = key
    assert [str(c) for c in candidate_codes(game, date, 3)] == codes


@pytest.mark.parametrize(("key", "expected"), GOLDEN_DAILY.items())
def test_daily_deal_is_stable_and_proven(key: tuple[str, str], expected: tuple[str, int]) -> None:
    game, date = key
    deal = daily_deal(game, date)
    assert (str(deal.code), deal.candidate) == expected
    assert deal.verified and deal.result is not None
    assert deal.result.solution is not None
    assert replay(deal.code, deal.result.solution).won
    assert daily_code(game, date) == DealCode.parse(expected[0])


def test_date_forms_agree() -> None:
    day = dt.date(2025, 6, 15)
    late = dt.datetime(2025, 6, 15, 23, 30, tzinfo=dt.UTC)
    # 01:30 on the 16th in UTC+2 is still the 15th in UTC
    east = dt.datetime(2025, 6, 16, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    codes = {daily_code("klondike", d) for d in ("2025-06-15", day, late, east)}
    assert codes == {DealCode.parse("KL1-1-AABAIMX")}


def test_days_differ() -> None:
    assert daily_code("klondike", "2025-06-15") != daily_code("klondike", "2025-06-16")


def test_bad_input() -> None:
    with pytest.raises(InvalidDealCodeError):
        daily_code("spider", "2025-06-15")
    with pytest.raises(ValueError):
        daily_code("klondike", "15/06/2025")


def test_random_winnable() -> None:
    code, result = random_winnable("klondike", nodes=20_000, rng=random.Random(7))
    assert code.game_name == "klondike"
    assert result.verdict == "winnable" and result.solution is not None
    assert replay(code, result.solution).won
    again, _ = random_winnable("klondike", nodes=20_000, rng=random.Random(7))
    assert again == code


def test_cli_daily(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["daily", "klondike", "--date", "2025-06-15"]) == 0
    assert capsys.readouterr().out.strip() == "KL1-1-AABAIMX"
    assert main(["daily", "klondike", "--date", "June"]) == 2
