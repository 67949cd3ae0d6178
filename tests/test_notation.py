"""The move notation of ``moves.md``: parse / print round trip, bad syntax, ranges, lists."""

from __future__ import annotations

import pytest
from helpers import EH, KL1, KL3, build

from engine import (
    GameError,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    new_game,
    parse_move_list,
    replay,
)
from engine.game import REMINDERS

CANONICAL = [
    "s",
    "u",
    "a",
    "w-t3",
    "w-f",
    "w-t",
    "w-f8",
    "t2-f",
    "t2-f5",
    "f3-t7",
    "f3-t",
    "t4-t9",
    "t6:4-t2",
    "t6:4-t",
    "t1:13-t9",
    "t12-t34",  # syntax only: the game checks the range
]


@pytest.mark.parametrize("text", CANONICAL)
def test_parse_print_round_trip(text: str) -> None:
    move = Move.parse(text)
    assert str(move) == text
    assert Move.parse(str(move)) == move
    assert repr(move) == f"Move.parse({text!r})"
    assert eval(repr(move), {"Move": Move}) == move


def test_moves_are_small_frozen_values() -> None:
    move = Move.parse("t6:4-t2")
    assert (move.kind, move.source, move.source_index, move.count) == ("m", "t", 6, 4)
    assert (move.target, move.target_index) == ("t", 2)
    assert not move.is_shorthand and Move.parse("t6:4-t").is_shorthand
    assert move == Move.cards("t", 6, "t", 2, count=4)
    assert hash(move) == hash(Move.parse("T6:4 - T2"))
    with pytest.raises(AttributeError):
        move.count = 3
    assert Move.parse("s") == Move.STOCK and Move.parse("u") == Move.UNDO
    assert Move.parse("a") == Move.AUTO


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("W-T3", "w-t3"),
        ("w - t3", "w-t3"),
        ("  t6:4 -t2 ", "t6:4-t2"),
        ("T2-F", "t2-f"),
        ("F3 -  T7", "f3-t7"),
        (" S ", "s"),
        ("U", "u"),
        ("A", "a"),
        ("t3:1-t4", "t3-t4"),
    ],
)
def test_input_is_case_and_space_insensitive(text: str, canonical: str) -> None:
    assert str(Move.parse(text)) == canonical


def test_tn_1_is_the_same_as_tn() -> None:
    assert Move.parse("t3:1-t4") == Move.parse("t3-t4")
    assert Move.parse("t3:1-f") == Move.parse("t3-f")


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "x",
        "ss",
        "s u",
        "w",
        "t3",
        "w-",
        "-t3",
        "w-w",
        "w-s",
        "t3-s",
        "s-t3",
        "t-t3",
        "f-t3",
        "w--t3",
        "w-t3-t4",
        "tt3-t2",
        "t 3-t4",
        "t3-t 4",
        "t3:0-t4",
        "t3:-t4",
        "t3:01-t4",
        "t0-t3",
        "t01-t3",
        "t3-t01",
        "t3-t0",
        "f0-t1",
        "f01-t1",
        "t3-f0",
        "w:2-t1",
        "f1:2-t1",
        "t3-t4:2",
        "t3:2:1-t4",
        "t-1-t3",
        "t3–t4",  # an en dash
        "ｔ3-t4",  # a full-width letter
        "t3-t4\x00",
        "r",  # there is no redo
        "redo",
        "w-t" + "1" * 40,
    ],
)
def test_bad_syntax_is_an_invalid_move_error_quoting_the_input(text: str) -> None:
    with pytest.raises(InvalidMoveError) as info:
        Move.parse(text)
    error = info.value
    assert isinstance(error, GameError) and isinstance(error, ValueError)
    assert not isinstance(error, IllegalMoveError)
    assert error.rule == "notation"
    assert error.reason
    if len(text) <= 32:  # longer input is cut short in the message
        assert repr(text) in str(error)


@pytest.mark.parametrize("text", [None, 3, b"s", ["s"]])
def test_a_move_must_be_text(text: object) -> None:
    with pytest.raises(InvalidMoveError):
        Move.parse(text)


@pytest.mark.parametrize("text", ["t3:0-t4", "t01-t3", "t0-t1", "t3-f0"])
def test_zero_counts_and_leading_zeros_are_rejected_by_a_game(text: str) -> None:
    for code in (EH, KL1):
        game = new_game(code)
        with pytest.raises(InvalidMoveError):
            game.push(text)
        assert game.moves == 0 and game.actions == []
        assert not game.is_legal(text)


@pytest.mark.parametrize(
    ("code", "text"),
    [
        (EH, "t10-t1"),
        (EH, "t1-t10"),
        (EH, "f9-t1"),
        (EH, "t1-f9"),
        (EH, "t10:2-t1"),
        (KL1, "t8-t1"),
        (KL1, "t1-t8"),
        (KL1, "f5-t1"),
        (KL1, "t1-f5"),
        (KL3, "w-f5"),
        (KL3, "w-t8"),
    ],
)
def test_a_column_or_slot_out_of_range_is_rejected(code: str, text: str) -> None:
    game = new_game(code)
    before = game.position()
    with pytest.raises(InvalidMoveError) as info:
        game.push(text)
    assert "only" in info.value.reason
    assert game.position() == before
    assert not game.is_legal(text)
    assert Move.parse(text) not in game.legal_moves
    with pytest.raises(InvalidMoveError):
        game.push(Move.parse(text))  # a Move value is checked too


@pytest.mark.parametrize(("code", "text"), [(EH, "t9-f8"), (EH, "f8-t9"), (KL1, "t7-f4")])
def test_the_last_column_and_slot_are_in_range(code: str, text: str) -> None:
    with pytest.raises(IllegalMoveError):  # well-formed, merely refused by the position
        new_game(code).push(text)


@pytest.mark.parametrize(
    "move",
    [
        Move("m", "t", 0, 1, "t", 3),
        Move("m", "t", 3, 0, "t", 4),
        Move("m", "w", 0, 2, "t", 3),
        Move("m", "w", 5, 1, "t", 3),
        Move("m", "f", 1, 2, "t", 3),
        Move("m", "f", 0, 1, "t", 3),
        Move("m", "t", 3, 1, "t", -1),
        Move("m", "t", 3, 1, "w", 1),
        Move("m", "q", 1, 1, "t", 2),
        Move("x"),
        Move("s", "t", 1),
    ],
)
def test_a_move_value_outside_the_notation_is_rejected(move: Move) -> None:
    game = new_game(EH)
    with pytest.raises(InvalidMoveError):
        game.push(move)
    assert not game.is_legal(move) and move not in game.legal_moves
    assert game.moves == 0


def test_illegal_move_errors_carry_a_rule_id_and_a_one_sentence_reminder() -> None:
    game = build(EH, ["7H", "7D"])
    with pytest.raises(IllegalMoveError) as info:
        game.push("T1 - T2")
    error = info.value
    assert isinstance(error, GameError) and isinstance(error, ValueError)
    assert error.rule == "build-down-alternating"
    assert error.reminder == REMINDERS[error.rule]
    assert error.move == "t1-t2" and "'t1-t2'" in str(error)


def test_every_reminder_is_one_sentence() -> None:
    for rule, reminder in REMINDERS.items():
        assert rule == rule.lower() and " " not in rule
        assert reminder[0].isupper() and reminder.endswith(".")
        assert reminder.count(". ") == 0, rule


def test_a_move_list_is_one_line_separated_by_spaces() -> None:
    moves = parse_move_list("s w-t3 t2-f u s")
    assert [str(m) for m in moves] == ["s", "w-t3", "t2-f", "u", "s"]
    assert " ".join(str(m) for m in moves) == "s w-t3 t2-f u s"
    assert parse_move_list("  S\tW-T3\n ") == [Move.STOCK, Move.parse("w-t3")]
    assert parse_move_list("") == []
    with pytest.raises(InvalidMoveError):
        parse_move_list("s w-t3 x")


def test_the_move_list_of_a_game_is_canonical_and_replays() -> None:
    game = new_game(KL1)
    game.push("S")
    game.push(" s")
    game.push("u")
    assert game.move_list() == "s s u"
    assert replay(KL1, parse_move_list(game.move_list())).position() == game.position()


def test_shorthands_are_recorded_as_the_resolved_move() -> None:
    game = build(EH, ["8S", "(2C) 8C", "7H"], waste="AS")
    game.push("t3-t")
    game.push("w-f")
    assert game.move_list() == "t3-t2 w-f1"
    assert all(not m.is_shorthand for m in game.actions)


def test_legal_moves_have_explicit_destinations_and_never_undo() -> None:
    game = new_game(EH)
    game.push("s")
    moves = list(game.legal_moves)
    assert moves and all(not m.is_shorthand for m in moves)
    assert Move.UNDO not in moves and Move.UNDO not in game.legal_moves
    assert game.can_undo
    assert len(moves) == len(set(moves)) == len(game.legal_moves)
    assert bool(game.legal_moves)
    assert all(Move.parse(str(m)) == m for m in moves)
    assert "LegalMoves" in repr(game.legal_moves)
    assert Move.parse("w-f") not in game.legal_moves  # a shorthand is not listed
    assert "s" not in game.legal_moves  # only Move values are members
