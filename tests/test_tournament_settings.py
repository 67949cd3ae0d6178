"""Tournament settings: every range accepted at its ends and refused past them, never clamped."""

from __future__ import annotations

from typing import Any

import pytest

from server.tournaments import SettingsError, TournamentError, parse_settings

BASE: dict[str, Any] = {"name": "Friday cup", "game": "klondike"}


def test_defaults() -> None:
    s = parse_settings(BASE)
    assert (s.rounds, s.round_time_limit, s.round_start, s.pause) == (3, 600, "auto", 60)
    assert (s.starts_at, s.max_players, s.private, s.late_join_round) == (None, 100, False, 2)
    assert (s.scoring, s.deals, s.deal_codes) == ("points", "winnable", None)
    assert (s.spectator_delay, s.absences_to_withdraw, s.co_hosts) == (0, 2, ())


@pytest.mark.parametrize(
    ("field", "low", "high"),
    [
        ("rounds", 1, 20),
        ("round_time_limit", 60, 7200),
        ("pause", 10, 3600),
        ("max_players", 2, 1000),
        ("spectator_delay", 0, 300),
        ("absences_to_withdraw", 0, 20),
    ],
)
def test_ranges_are_refused_past_their_ends(field: str, low: int, high: int) -> None:
    rounds = {"rounds": 20} if field != "rounds" else {}
    for value in (low, high):
        assert getattr(parse_settings({**BASE, **rounds, field: value}), field) == value
    for value in (low - 1, high + 1):
        with pytest.raises(SettingsError) as info:
            parse_settings({**BASE, **rounds, field: value})
        assert info.value.field == field and info.value.error_code == "bad_settings"
        assert f"(got {value})" in info.value.message


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"name": ""}, "name"),
        ({"name": "   "}, "name"),
        ({"name": "x" * 61}, "name"),
        ({"name": "tab\there"}, "name"),
        ({"name": None}, "name"),
        ({"game": "spider"}, "game"),
        ({"game": "klondike-1"}, "game"),
        ({"rounds": "3"}, "rounds"),  # no silent conversion
        ({"rounds": 3.0}, "rounds"),
        ({"rounds": True}, "rounds"),
        ({"round_start": "sometimes"}, "round_start"),
        ({"starts_at": -1}, "starts_at"),
        ({"private": "yes"}, "private"),
        ({"late_join_until": 0}, "late_join_until"),
        ({"rounds": 4, "late_join_until": 5}, "late_join_until"),
        ({"scoring": "elo"}, "scoring"),
        ({"deals": "chosen"}, "deals"),
        ({"deals": "list"}, "deal_codes"),
        ({"deals": "list", "deal_codes": ["KL1-1-AAAAAAB"]}, "deal_codes"),
        ({"deals": "list", "rounds": 1, "deal_codes": ["EH1-N-AAAAAAB"]}, "deal_codes"),
        ({"deals": "list", "rounds": 1, "deal_codes": ["KL1-1-AAAAAAA"]}, "deal_codes"),
        ({"deal_codes": ["KL1-1-AAAAAAB"] * 3}, "deal_codes"),
        ({"co_hosts": ["a", "a"]}, "co_hosts"),
        ({"co_hosts": [f"c{i}" for i in range(11)]}, "co_hosts"),
        ({"co_hosts": [""]}, "co_hosts"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_settings_name_the_field(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(SettingsError) as info:
        parse_settings({**BASE, **changes})
    assert info.value.field == field, info.value.message
    assert info.value.message.startswith(f"{field}: ")
    assert isinstance(info.value, TournamentError)


def test_missing_and_non_object_settings() -> None:
    with pytest.raises(SettingsError) as info:
        parse_settings({"game": "klondike"})
    assert info.value.field == "name"
    with pytest.raises(SettingsError):
        parse_settings([("name", "x")])  # type: ignore[arg-type]


def test_a_host_list_of_deals_is_kept_canonical() -> None:
    s = parse_settings(
        {
            **BASE,
            "rounds": 2,
            "deals": "list",
            "deal_codes": [" kl1-1-aaaaaab", "KL1-1-AAAAAAC"],
        }
    )
    assert s.deal_codes == ("KL1-1-AAAAAAB", "KL1-1-AAAAAAC")


def test_names_are_trimmed_not_cut() -> None:
    assert parse_settings({**BASE, "name": "  Cup  "}).name == "Cup"
    assert parse_settings({**BASE, "name": "é" * 60}).name == "é" * 60


def test_settings_are_frozen_values() -> None:
    s = parse_settings(BASE)
    with pytest.raises(ValueError):
        s.rounds = 5
    assert parse_settings(s.model_dump()) == s
