"""Deal codes against the contract's vectors (``deal-codes.md``, ``deal-vectors.json``,
``fair-vectors.json``): numbered deals and sealed deals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import DealCode, InvalidDealCodeError, new_game
from engine.dealcode import GAME_PREFIXES

SPEC = Path(__file__).resolve().parent.parent / "docs" / "spec"
VECTORS: dict[str, Any] = json.loads((SPEC / "deal-vectors.json").read_text(encoding="utf-8"))
FAIR: dict[str, Any] = json.loads((SPEC / "fair-vectors.json").read_text(encoding="utf-8"))
SEALED = "KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJUI"


def reference_sealed(prefix: str, data: bytes) -> str:
    """``sealed(prefix, b)`` of ``fair-deals.md``, written out without the engine."""
    y = int.from_bytes(data, "big") % 26**26
    letters = ""
    for _ in range(26):
        y, digit = divmod(y, 26)
        letters = chr(ord("A") + digit) + letters
    return f"{prefix}-{letters}"


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
        ("EH1-N-ÄAAAAAF", "number"),
        ("KL1-١-AAAAAAF", "variant"),  # an Arabic-Indic one is no ruleset or variant
        ("KL١-1-AAAAAAF", "ruleset"),
    ],
)
def test_error_names_the_wrong_part(text: str, part: str) -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.parse(text)
    assert info.value.part == part


@pytest.mark.parametrize(
    "text",
    [
        SEALED[:-1],  # 25 letters
        SEALED + "Q",  # 27
        SEALED[:-1] + "7",  # a digit
        SEALED[:-1] + "Ä",  # a letter, but not A-Z
        SEALED[:-1] + "ß",  # upper-cased, two letters: still refused
        SEALED[:12] + " " + SEALED[13:],  # white space inside
        SEALED[:12] + "\t" + SEALED[12:],
        "KL1-1-AAAAAAAAAAAAA",  # 13: neither length
        "EH1-N-AAAAAAAAAA",
    ],
)
def test_a_malformed_number_says_7_or_26_letters(text: str) -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.parse(text)
    assert info.value.part == "number"
    assert "7 letters A-Z (a numbered deal) or 26 (a sealed deal)" in str(info.value)
    assert repr(text) in str(info.value)


def test_number_encoding() -> None:
    assert str(DealCode.for_game("easy-harp", 5)) == "EH1-N-AAAAAAF"
    assert str(DealCode.for_game("klondike", 999_999)) == "KL1-1-AACEXHN"
    assert DealCode.parse("AACEXHN".join(["kl1-3-", ""])).number == 999_999


def test_parse_is_case_and_space_insensitive_and_canonical() -> None:
    code = DealCode.parse(" \tkl1-1-aaaaaaf\r\n")
    assert str(code) == "KL1-1-AAAAAAF"
    assert DealCode.parse(str(code)) == code
    assert repr(code) == "DealCode.parse('KL1-1-AAAAAAF')"


def test_a_sealed_code_has_no_number_and_round_trips() -> None:
    code = DealCode.parse(f" \t{SEALED.lower()}\r\n")
    assert str(code) == SEALED and repr(code) == f"DealCode.parse({SEALED!r})"
    assert code.sealed and code.number is None
    assert (code.game_name, code.prefix, code.letters) == ("klondike", "KL1-1", SEALED[6:])
    assert DealCode.parse(str(code)) == code
    numbered = DealCode.parse("KL1-1-AAAAAAF")
    assert not numbered.sealed and numbered.number == 5
    # any 26 letters are a deal, all A included (no number range applies)
    assert DealCode.parse("EH1-N-" + "A" * 26).number is None


def test_the_constructor_checks_as_the_parser_does() -> None:
    assert DealCode("KL", 1, "3", SEALED[6:]) == DealCode.parse("KL1-3-" + SEALED[6:])
    for letters in ("A" * 25, "A" * 27, "a" * 26, "AAAAAAA", "AAAAAA5"):
        with pytest.raises(InvalidDealCodeError) as info:
            DealCode("KL", 1, "1", letters)
        assert info.value.part == "number"


@pytest.mark.parametrize("vector", FAIR["sealed"], ids=lambda v: v["code"])
def test_sealed_vectors(vector: dict[str, str]) -> None:
    data = bytes.fromhex(vector["bytes_hex"])
    assert reference_sealed(vector["prefix"], data) == vector["code"]
    code = DealCode.from_bytes(vector["prefix"], data)
    assert str(code) == vector["code"] and code.sealed
    assert DealCode.parse(vector["code"]) == code


@given(
    data=st.binary(min_size=16, max_size=16), prefix=st.sampled_from(sorted(GAME_PREFIXES.values()))
)
def test_from_bytes_matches_the_reference(data: bytes, prefix: str) -> None:
    assert str(DealCode.from_bytes(prefix, data)) == reference_sealed(prefix, data)


@pytest.mark.parametrize(
    ("prefix", "data", "error"),
    [
        ("KL1-1", bytes(15), ValueError),
        ("KL1-1", bytes(17), ValueError),
        ("KL1-1", "00" * 16, ValueError),
        ("KL1-2", bytes(16), InvalidDealCodeError),
        ("kl1-1", bytes(16), InvalidDealCodeError),
        ("klondike", bytes(16), InvalidDealCodeError),
    ],
)
def test_from_bytes_refuses_bad_input(prefix: str, data: bytes, error: type[Exception]) -> None:
    with pytest.raises(error):
        DealCode.from_bytes(prefix, data)


def test_random_codes_are_sealed_for_each_game() -> None:
    for name, game in (("easy-harp", "EH"), ("klondike", "KL"), ("klondike-3", "KL")):
        codes = {DealCode.random(name) for _ in range(4)}
        assert len(codes) == 4
        for code in codes:
            assert code.game == game and code.game_name == name
            assert code.sealed and code.number is None
            assert DealCode.parse(str(code)) == code


def test_unknown_game_name() -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.for_game("spider", 1)
    assert info.value.part == "game"
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.random("spider")
    assert info.value.part == "game"


@pytest.mark.parametrize("number", [0, 1_000_000, -1, True, 1.0])
def test_for_game_refuses_what_is_no_deal_number(number: object) -> None:
    with pytest.raises(InvalidDealCodeError) as info:
        DealCode.for_game("klondike", number)
    assert info.value.part == "number"
