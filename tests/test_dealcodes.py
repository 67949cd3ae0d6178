"""Deal codes against the contract's vectors (``deal-codes.md``, ``deal-vectors.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine import DealCode, InvalidDealCodeError, new_game

SPEC = Path(__file__).resolve().parent.parent / "docs" / "spec"
VECTORS: dict[str, Any] = json.loads((SPEC / "deal-vectors.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("vector", VECTORS["valid"], ids=lambda v: v["input"].strip())
def test_layout_matches_vector(vector: dict[str, Any]) -> None:
    game = new_game(vector["input"])
    assert game.position() == vector["position"]


@pytest.mark.parametrize("text", VECTORS["invalid"])
def test_invalid_code_rejected(text: str) -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.parse(text)
    assert info.value.part in {"code", "format", "game", "ruleset", "variant", "number"}
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("text", "part"),
    [
        ("EH1-N-AAAAAAA", "number"),
        ("EH1-N-AACEXHO", "number"),
        ("EH1-1-AAAAAAF", "variant"),
        ("KL1-N-AAAAAAF", "variant"),
        ("KL1-2-AAAAAAF", "variant"),
        ("EH2-N-AAAAAAF", "ruleset"),
        ("XX1-N-AAAAAAF", "game"),
        ("EH1-N-AAAAAF", "number"),
        ("EH1-N-AAAAAAFF", "number"),
        ("EH1-N-AAAAAA5", "number"),
        ("EH1N-AAAAAAF", "format"),
        ("", "code"),
        ("EH1-N-ÄAAAAAF", "code"),
    ],
)
def test_error_names_the_wrong_part(text: str, part: str) -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.parse(text)
    assert info.value.part == part


def test_number_encoding() -> None:
    assert str(DealCode.for_game("easy-harp", 5)) == "EH1-N-AAAAAAF"
    assert str(DealCode.for_game("klondike", 999_999)) == "KL1-1-AACEXHN"
    assert DealCode.parse("AACEXHN".join(["kl1-3-", ""])).number == 999_999


def test_parse_is_case_and_space_insensitive_and_canonical() -> None:
    code = DealCode.parse(" \tkl1-1-aaaaaaf\r\n")
    assert str(code) == "KL1-1-AAAAAAF"
    assert DealCode.parse(str(code)) == code
    assert repr(code) == "DealCode.parse('KL1-1-AAAAAAF')"


def test_random_code_is_valid_for_each_game() -> None:
    for name, game in (("easy-harp", "EH"), ("klondike", "KL"), ("klondike-3", "KL")):
        code = DealCode.random(name)
        assert code.game == game and code.game_name == name
        assert DealCode.parse(str(code)) == code


def test_unknown_game_name() -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.for_game("spider", 1)
    assert info.value.part == "game"
