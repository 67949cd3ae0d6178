"""Easy Harp against its rule book (``easy-harp.md``) and the fine points of ``moves.md``.

Every rule has a test where it allows and one where it refuses (asserting the rule id).
Positions are built by hand with :func:`helpers.build`; columns are written bottom → top with
face-down cards in parentheses.
"""

from __future__ import annotations

from collections import Counter

import pytest
from helpers import EH, build, names, refused, upto

from engine import EasyHarp, Game, Move, new_game, parse_card, replay
from engine.easyharp import SLOT_SUITS

ALL_KINGS = [upto("KS"), upto("KH"), upto("KC"), upto("KD")] * 2


def column(game: Game, n: int) -> str:
    """Column ``n`` (1-based) written like the fixtures."""
    col, down = game.columns[n - 1], game.down[n - 1]
    return " ".join([f"({c})" for c in names(col[:down]).split()] + names(col[down:]).split())


# ---------------------------------------------------------------- cards and layout


def test_layout_of_a_real_deal() -> None:
    game = new_game(EH)
    assert isinstance(game, EasyHarp)
    assert [len(c) for c in game.columns] == list(range(1, 10))
    assert game.down == list(range(9))
    assert sum(game.down) == 36
    assert len(game.stock) == 59 and game.waste == []
    assert game.foundations == [[]] * 8
    assert game.score == 0 and game.moves == 0 and not game.won
    counts = game.card_count()
    assert sum(counts.values()) == 104
    assert set(counts.values()) == {2} and len(counts) == 52


def test_slot_suits_are_s_h_c_d_twice() -> None:
    assert "".join("CDHS"[s] for s in SLOT_SUITS) == "SHCDSHCD"


@pytest.mark.parametrize("slot", range(1, 9))
@pytest.mark.parametrize("suit", "SHCD")
def test_each_slot_takes_only_its_suit(slot: int, suit: str) -> None:
    game = build(EH, [f"A{suit}"])
    if "SHCDSHCD"[slot - 1] == suit:
        game.push(f"t1-f{slot}")
        assert names(game.foundations[slot - 1]) == f"A{suit}"
    else:
        assert refused(game, f"t1-f{slot}") == "wrong-suit-slot"


# ---------------------------------------------------------------- 1. tableau building


@pytest.mark.parametrize("target", ["8S", "8C"])
def test_building_down_in_alternating_colour(target: str) -> None:
    game = build(EH, ["7H", target])
    game.push("t1-t2")
    assert column(game, 2) == f"{target} 7H"
    assert game.moves == 1 and game.score == 0


@pytest.mark.parametrize("target", ["8H", "8D", "9S", "6S", "7S"])
def test_building_refuses_same_colour_or_wrong_rank(target: str) -> None:
    game = build(EH, ["7H", target])
    assert refused(game, "t1-t2") == "build-down-alternating"


def test_doubled_cards_give_a_black_six_four_targets() -> None:
    game = build(EH, ["7H", "7H", "7D", "7D", "6S", "7S", "8S"])
    from_t5 = sorted(str(m) for m in game.legal_moves if m.kind == "m" and m.source_index == 5)
    assert from_t5 == ["t5-t1", "t5-t2", "t5-t3", "t5-t4"]


# ---------------------------------------------------------------- 2. one card at a time


def test_a_built_sequence_is_taken_apart_one_card_at_a_time() -> None:
    game = build(EH, ["(3C) 8S 7H 6C", "9H", "9D", "7D", "8C"])
    game.push("t1-t4")  # 6C on 7D
    game.push("t1-t5")  # 7H on 8C
    outcome = game.push("t1-t2")  # 8S on 9H, uncovering 3C
    assert outcome.revealed == (parse_card("3C"),)
    assert column(game, 1) == "3C"
    assert game.moves == 3 and game.score == 5


@pytest.mark.parametrize(
    "move",
    [
        "t1:3-t2",  # 8S 7H 6C onto 9H: 8S would fit, but sequences never move onto a card
        "t1:2-t3",  # 7H 6C onto 8C
        "t1:2-t4",  # into an empty column: not led by a king
        "t1:2-f",  # to a foundation
        "t1:2-f1",
        "t1:4-t4",  # reaching a face-down card
        "t1:9-t4",  # more cards than the column holds
        "t1:3-t",
        "t5:2-t4",  # from an empty column
    ],
)
def test_multi_card_attempts_are_refused_under_the_one_card_rule(move: str) -> None:
    game = build(EH, ["(3C) 8S 7H 6C", "9H", "8C", "", ""], foundations=["", upto("5H")])
    assert refused(game, move) == "one-card-at-a-time"


# ---------------------------------------------------------------- 3. and 5. empty column


def test_a_king_from_a_column_top_goes_into_an_empty_column() -> None:
    game = build(EH, ["(4D) KS", ""])
    outcome = game.push("t1-t2")
    assert column(game, 2) == "KS" and column(game, 1) == "4D"
    assert outcome.revealed == (parse_card("4D"),)
    assert game.score == 5


def test_a_king_from_the_waste_goes_into_an_empty_column_and_scores_5() -> None:
    game = build(EH, ["5D", ""], waste="3C KH")
    game.push("w-t2")
    assert column(game, 2) == "KH" and names(game.waste) == "3C"
    assert game.score == 5


def test_a_king_from_a_foundation_goes_into_an_empty_column_for_nothing() -> None:
    game = build(EH, ["5D", ""], foundations=[upto("KS")], score=40)
    game.push("f1-t2")
    assert column(game, 2) == "KS" and len(game.foundations[0]) == 12
    assert game.score == 40 and game.on_foundations == 12


@pytest.mark.parametrize(
    ("columns", "waste", "move"),
    [
        (["QH", ""], "", "t1-t2"),
        (["(5C) QH", ""], "", "t1-t2"),  # rule 5: even though it would uncover 5C
        (["5D", ""], "QH", "w-t2"),
        (["5D", ""], "", "f1-t2"),
    ],
)
def test_an_empty_column_refuses_any_other_card(columns: list[str], waste: str, move: str) -> None:
    game = build(EH, columns, waste=waste, foundations=[upto("QS")])
    assert refused(game, move) == "king-only-on-empty"


# ---------------------------------------------------------------- 4. king-led sequence


def test_a_king_led_sequence_on_face_down_cards_moves_into_an_empty_column() -> None:
    game = build(EH, ["(5C) (2D) KS QH JC", "", "4D"])
    outcome = game.push("t1:3-t2")
    assert str(outcome.move) == "t1:3-t2"
    assert column(game, 2) == "KS QH JC"
    assert column(game, 1) == "(5C) 2D"
    assert outcome.revealed == (parse_card("2D"),)
    assert game.score == 5 and game.moves == 1


def test_a_full_king_to_ace_sequence_moves_as_a_unit() -> None:
    sequence = "KS QH JC TD 9S 8H 7C 6D 5S 4H 3C 2D AS"
    game = build(EH, [f"(2D) {sequence}", "4D"])
    game.push("t1:13-t3")
    assert column(game, 3) == sequence
    assert column(game, 1) == "2D"


@pytest.mark.parametrize("move", ["t1:2-t2", "t1:2-t"])
def test_a_king_led_sequence_that_is_the_bottom_may_move_to_another_empty_column(
    move: str,
) -> None:
    game = build(EH, ["KS QH", ""], score=15)
    outcome = game.push(move)
    assert str(outcome.move) == "t1:2-t2"
    assert column(game, 1) == "" and column(game, 2) == "KS QH"
    assert game.score == 15 and game.moves == 1


def test_a_single_king_that_is_the_bottom_may_move_to_another_empty_column() -> None:
    game = build(EH, ["4D", "KS", ""])
    outcome = game.push("t2-t")
    assert str(outcome.move) == "t2-t3"  # the source is never a candidate
    assert game.score == 0 and game.moves == 1


def test_the_double_tap_puts_a_king_led_sequence_into_the_leftmost_empty_column() -> None:
    game = build(EH, ["4D", "(5C) KS QH", "8C", "", ""] + ["6H"] * 4)
    assert str(game.push("t2:2-t").move) == "t2:2-t4"


@pytest.mark.parametrize(
    ("first", "move"),
    [
        ("(5C) KS QH", "t1:2-t2"),  # onto a card: a king-led sequence goes nowhere else
        ("(5C) KS QH", "t1:2-f1"),  # not to a foundation either
        ("(5C) KS QS", "t1:2-t3"),  # not alternating colours
        ("(5C) KS QH TC", "t1:3-t3"),  # not descending by one
        ("(5C) KS QH JC", "t1:2-t3"),  # the king must lead: QH JC alone is not a unit
        ("(5C) QD KS QH", "t1:3-t3"),  # a card under the king is not part of it
        ("(KS) QH JC", "t1:3-t3"),  # a face-down king does not lead
    ],
)
def test_king_led_sequence_refusals(first: str, move: str) -> None:
    game = build(EH, [first, "4D", ""], foundations=[upto("QS")])
    assert refused(game, move) == "one-card-at-a-time"


def test_only_single_cards_and_king_led_sequences_appear_in_legal_moves() -> None:
    game = build(EH, ["(5C) KS QH JC", "(3D) 8S 7H", "", "9D", "9H", "6C", "6C", "6C", "6C"])
    multi = sorted(str(m) for m in game.legal_moves if m.count > 1)
    assert multi == ["t1:3-t3"]


# ---------------------------------------------------------------- 6. waste


def test_only_the_top_waste_card_is_playable() -> None:
    game = build(EH, ["8C", "KS"], waste="8S 7H QD")
    assert refused(game, "w-t1") == "build-down-alternating"  # QD is on top, not 7H
    game.push("w-t2")  # QD on KS
    game.push("w-t1")  # now 7H on 8C
    assert column(game, 1) == "8C 7H" and column(game, 2) == "KS QD"
    assert names(game.waste) == "8S"
    assert game.score == 10  # +5 for each card from the waste to a column


def test_the_waste_top_goes_to_its_foundation() -> None:
    game = build(EH, ["8C"], waste="2H AS")
    assert str(game.push("w-f").move) == "w-f1"
    assert game.score == 10
    assert refused(game, "w-f") == "no-foundation-accepts"  # 2H: no heart ace yet


def test_an_empty_waste_gives_nothing() -> None:
    game = build(EH, ["8C"], stock="AS")
    assert refused(game, "w-f") == "empty-source"
    assert refused(game, "w-t1") == "empty-source"


# ---------------------------------------------------------------- 7. foundations


def test_a_foundation_starts_with_the_ace() -> None:
    game = build(EH, ["2S", "AS"])
    assert refused(game, "t1-f1") == "foundation-starts-with-ace"
    game.push("t2-f1")
    game.push("t1-f1")
    assert names(game.foundations[0]) == "AS 2S"
    assert game.score == 20


@pytest.mark.parametrize("card", ["4S", "2S", "AS", "KS"])
def test_a_foundation_builds_up_in_suit_one_card_at_a_time(card: str) -> None:
    game = build(EH, [card, "3S", "3H"], foundations=[upto("2S"), upto("2H")])
    assert refused(game, "t1-f1") == "foundation-builds-up-in-suit"
    assert refused(game, "t3-f1") == "wrong-suit-slot"
    game.push("t2-f1")
    assert names(game.foundations[0]) == upto("3S")


def test_an_ace_goes_only_onto_an_empty_slot_of_its_suit() -> None:
    game = build(EH, ["AS", "AS"], foundations=["AS"])
    assert refused(game, "t1-f1") == "foundation-builds-up-in-suit"
    assert refused(game, "t1-f2") == "wrong-suit-slot"
    assert str(game.push("t1-f").move) == "t1-f5"
    assert refused(game, "t2-f") == "no-foundation-accepts"


@pytest.mark.parametrize(
    ("foundations", "card", "slot"),
    [
        ([], "AS", 1),
        (["AS"], "AS", 5),
        (["AS"], "2S", 1),
        (["", "", "", "", "AS"], "2S", 5),
        ([upto("3S"), "", "", "", upto("4S")], "4S", 1),
        ([], "AD", 4),
        ([upto("5D"), "", "", "AD"], "AD", 8),
    ],
)
def test_the_tap_sends_a_card_to_the_first_slot_that_accepts_it(
    foundations: list[str], card: str, slot: int
) -> None:
    game = build(EH, [card], foundations=foundations)
    assert str(game.push("t1-f").move) == f"t1-f{slot}"
    assert names(game.foundations[slot - 1][-1:]) == card


def test_any_column_top_may_go_to_a_foundation() -> None:
    game = build(EH, ["(7C) KS QD", "AC"], foundations=["", "", "", upto("JD")])
    assert str(game.push("t1-f").move) == "t1-f4"
    assert str(game.push("t2-f").move) == "t2-f3"
    assert game.score == 20
    assert refused(game, "t1-f4") == "wrong-suit-slot"  # KS is not a diamond...
    assert refused(game, "t1-f1") == "foundation-starts-with-ace"  # ...nor an ace


# ---------------------------------------------------------------- 8. taking back


def test_a_foundation_top_goes_back_onto_a_column_where_it_fits() -> None:
    game = build(EH, ["6H", "6S"], foundations=[upto("5S")], score=100)
    assert refused(game, "f1-t2") == "build-down-alternating"
    game.push("f1-t1")
    assert column(game, 1) == "6H 5S" and names(game.foundations[0]) == upto("4S")
    assert game.score == 100 and game.moves == 1 and game.on_foundations == 4
    game.push("t1-f1")  # R: placing it again earns +10 again
    assert game.score == 110 and game.on_foundations == 5


def test_a_king_is_taken_back_only_into_an_empty_column() -> None:
    game = build(EH, ["6H", "QD"], foundations=[upto("KS")])
    assert refused(game, "f1-t2") == "build-down-alternating"
    game.push("f1-t")
    assert column(game, 3) == "KS"
    game.push("t3-f1")
    assert refused(build(EH, ["6H"] * 9, foundations=[upto("KS")]), "f1-t") == (
        "no-table-destination"
    )


@pytest.mark.parametrize("move", ["f1-f5", "f1-f2", "f1-f"])
def test_foundation_to_foundation_is_refused(move: str) -> None:
    game = build(EH, ["6H"], foundations=[upto("2S")])
    assert refused(game, move) == "foundation-to-foundation"


def test_an_empty_foundation_gives_nothing() -> None:
    game = build(EH, ["6H"])
    assert refused(game, "f1-t1") == "empty-source"


# ---------------------------------------------------------------- 9. uncovering


def test_uncovering_turns_the_card_up_at_once_and_scores_5() -> None:
    game = build(EH, ["(5C) (2D) 7H", "8S"])
    outcome = game.push("t1-t2")
    assert column(game, 1) == "(5C) 2D"
    assert outcome.revealed == (parse_card("2D"),)
    assert game.score == 5


def test_no_uncovering_when_a_face_up_card_remains() -> None:
    game = build(EH, ["(5C) 8S 7H", "8C"])
    outcome = game.push("t1-t2")
    assert column(game, 1) == "(5C) 8S"
    assert outcome.revealed == () and game.score == 0


def test_uncovering_scores_whatever_the_destination() -> None:
    game = build(EH, ["(5C) AS", "(2C) KH", "", "(9D) (4C) QH", "KC"])
    game.push("t1-f")
    assert game.score == 15  # +10 to the foundation, +5 for 5C
    game.push("t2-t3")
    assert game.score == 20
    game.push("t4-t5")
    assert game.score == 25
    assert column(game, 4) == "(9D) 4C"


def test_emptying_a_column_uncovers_nothing() -> None:
    game = build(EH, ["KS", ""])
    assert game.push("t1-t2").revealed == ()
    assert game.columns[0] == [] and game.down[0] == 0 and game.score == 0


# ---------------------------------------------------------------- 10. stock


def test_a_stock_action_turns_the_top_stock_card_onto_the_waste() -> None:
    game = new_game(EH)
    top = game.stock[-1]
    outcome = game.push("s")
    assert outcome.revealed == (top,) and game.waste == [top]
    assert len(game.stock) == 58 and game.moves == 1 and game.score == 0


def test_a_new_pass_turns_the_waste_back_in_the_same_order_and_costs_nothing() -> None:
    game = new_game(EH)
    order = list(reversed(game.stock))
    for _ in range(59):
        game.push("s")
    assert game.stock == [] and game.waste == order
    outcome = game.push("s")
    assert outcome.revealed == () and game.waste == []  # a new pass does not also draw
    assert list(reversed(game.stock)) == order
    assert game.moves == 60 and game.score == 0
    assert game.push("s").revealed == (order[0],)  # the card first drawn is drawn first again


def test_passes_are_unlimited() -> None:
    game = build(EH, ["KS"], stock="2C AC")
    for _ in range(10):
        game.push_all(["s", "s", "s"])
    assert names(game.stock) == "2C AC" and game.waste == [] and game.score == 0
    assert game.moves == 30


def test_the_stock_action_is_refused_with_both_stock_and_waste_empty() -> None:
    game = build(EH, ["KS"], score=20, moves=3)
    assert refused(game, "s") == "stock-empty"
    assert game.moves == 3 and game.score == 20
    assert not game.is_legal("s") and Move.STOCK not in game.legal_moves


def test_the_stock_action_with_only_the_waste_left_is_a_new_pass() -> None:
    game = build(EH, ["KS"], waste="AC")
    assert Move.STOCK in game.legal_moves
    game.push("s")
    assert names(game.stock) == "AC"


# ---------------------------------------------------------------- end of the game


def near_win() -> EasyHarp:
    """Every card on the foundations but one KS, in column 1."""
    foundations = list(ALL_KINGS)
    foundations[0] = upto("QS")
    game = build(EH, ["KS"], foundations=foundations, score=300, moves=40)
    assert isinstance(game, EasyHarp)
    return game


def test_the_game_is_won_when_all_104_cards_are_on_the_foundations() -> None:
    game = near_win()
    assert not game.won and game.on_foundations == 103
    game.push("t1-f")
    assert game.won and game.on_foundations == 104
    assert game.score == 310  # +10, no win bonus in Easy Harp
    assert game.moves == 41
    assert game.position()["won"] is True


@pytest.mark.parametrize("move", ["s", "u", "a", "f1-t1", "f1-t", "t1-f"])
def test_once_won_every_action_is_refused(move: str) -> None:
    game = near_win()
    game.push("t1-f1")
    assert refused(game, move) == "game-over"
    assert not game.can_undo and list(game.legal_moves) == []
    assert not game.is_legal("u")


def test_there_are_no_automatic_moves() -> None:
    game = build(EH, ["(AS) 7H", "8S", "AH"])
    game.push("t1-t2")
    assert column(game, 1) == "AS" and game.on_foundations == 0  # the ace stays put
    assert not game.won


@pytest.mark.parametrize("position", ["near-win", "start"])
def test_auto_finish_is_always_refused_in_easy_harp(position: str) -> None:
    game = near_win() if position == "near-win" else new_game(EH)
    assert not game.auto_finish_offered()
    assert Move.AUTO not in game.legal_moves
    assert refused(game, "a") == "no-auto-finish"


def test_the_game_never_declares_a_loss() -> None:
    game = build(EH, ["2S", "3S", "3H", "5D", "5D", "5D", "5D", "5D", "5D"])
    game.push("t1-t3")
    assert list(game.legal_moves) == []  # stuck, yet not over: the player may undo
    assert not game.won
    game.push("u")
    assert column(game, 1) == "2S"


# ---------------------------------------------------------------- undo


def test_undo_restores_the_cards_and_score_but_not_the_move_counter() -> None:
    game = build(EH, ["(5C) (2D) 7H", "8S"], score=7)
    before = game.position()
    game.push("t1-t2")
    assert game.score == 12
    game.push("u")
    after = game.position()
    assert after == {**before, "moves": 1}  # undo does not count, the counter stays
    assert column(game, 1) == "(5C) (2D) 7H"  # the uncovered card is face down again


@pytest.mark.parametrize(
    ("columns", "foundations", "waste", "stock", "move"),
    [
        (["(5C) AS"], [], "", "", "t1-f1"),
        (["6H"], [upto("5S")], "", "", "f1-t1"),
        (["8C"], [], "7H", "", "w-t1"),
        (["KS", ""], [], "", "", "t1-t2"),
        (["(3D) KS QH", ""], [], "", "", "t1:2-t2"),
        (["8C"], [], "", "9H 7H", "s"),
        (["8C"], [], "9H 7H", "", "s"),
    ],
)
def test_undo_restores_exactly_what_each_kind_of_action_did(
    columns: list[str], foundations: list[str], waste: str, stock: str, move: str
) -> None:
    game = build(EH, columns, foundations=foundations, waste=waste, stock=stock, score=33)
    before = game.position()
    game.push(move)
    assert game.position() != before
    game.push("u")
    assert game.position() == {**before, "moves": 1}
    assert game.on_foundations == sum(len(f) for f in game.foundations)


def test_u_u_undoes_the_last_two_actions_and_there_is_no_redo() -> None:
    game = new_game(EH)
    positions = [game.position()]
    for _ in range(3):
        game.push("s")
        positions.append(game.position())
    game.push_all(["u", "u"])
    assert game.position() == {**positions[1], "moves": 3}
    assert Move.parse("u") == Move.UNDO and game.actions[-2:] == [Move.UNDO, Move.UNDO]
    game.push("u")
    assert game.position() == {**positions[0], "moves": 3}
    assert refused(game, "u") == "nothing-to-undo"
    assert game.moves == 3


def test_undo_with_nothing_to_undo_is_refused() -> None:
    game = new_game(EH)
    assert not game.can_undo and not game.is_legal("u")
    assert refused(game, "u") == "nothing-to-undo"
    assert game.moves == 0 and game.score == 0


def test_undo_reaches_back_exactly_100_actions() -> None:
    game = new_game(EH)
    start = game.position()
    for _ in range(100):
        game.push("s")
    for _ in range(100):
        game.push("u")
    assert game.position() == {**start, "moves": 100}
    assert refused(game, "u") == "nothing-to-undo"


def test_older_actions_than_the_last_100_are_dropped_for_good() -> None:
    game = new_game(EH)
    game.push("s")
    after_first = game.position()
    for _ in range(100):  # 59 draws in all, a new pass, 41 more draws: 101 actions
        game.push("s")
    assert game.moves == 101
    for _ in range(100):
        game.push("u")
    assert game.position() == {**after_first, "moves": 101}
    assert not game.can_undo
    assert refused(game, "u") == "undo-limit"
    game.push("s")  # a new action can be undone again, but not the dropped one
    game.push("u")
    assert refused(game, "u") == "undo-limit"
    assert game.moves == 102
    assert replay(EH, game.actions).position() == game.position()


# ---------------------------------------------------------------- moves counter and score


def test_the_move_counter_counts_accepted_moves_and_stock_actions_only() -> None:
    game = build(EH, ["7H", "8S", "2C"], stock="AD")
    game.push("t1-t2")
    game.push("s")
    refused(game, "t3-t2")
    refused(game, "t3-f")
    game.push("u")
    assert game.moves == 2


def test_score_events() -> None:
    game = build(EH, ["(5C) AS", "8C", "(4D) 2H", "7C"], waste="AH 7H")
    game.push("t1-f")  # +10 to a foundation, +5 uncover
    assert game.score == 15
    game.push("w-t2")  # +5 waste to a column
    assert game.score == 20
    game.push("s")  # 0 for a new pass (the stock is empty)
    game.push("s")  # 0 for a draw
    assert game.score == 20
    game.push("w-f")  # AH +10
    assert game.score == 30
    game.push("f1-t3")  # 0 for a take-back
    assert game.score == 30
    game.push("t3-f1")  # +10 again
    assert game.score == 40


# ---------------------------------------------------------------- double tap


def test_the_double_tap_picks_the_accepting_column_holding_the_most_cards() -> None:
    # t2 holds the most cards counting the face-down ones, though t3 shows more face-up
    game = build(EH, ["8S", "(2C) (3C) (4C) 8C", "(5D) 9D 8S", "7H", "(2D) (3D) (4D) (5D) 9H"])
    outcome = game.push("t4-t")
    assert str(outcome.move) == "t4-t2"
    assert game.actions == [Move.parse("t4-t2")]
    assert game.move_list() == "t4-t2"


def test_the_double_tap_breaks_ties_to_the_leftmost() -> None:
    game = build(EH, ["QD", "(2C) 8S", "(3C) 8C", "7H"])
    assert str(game.push("t4-t").move) == "t4-t2"


def test_the_double_tap_never_picks_the_source_column() -> None:
    # t1 is the fullest and, without 7H, its 8S would accept 7H: still not a candidate
    game = build(EH, ["(2C) (3C) (4C) 8S 7H", "8C"])
    assert str(game.push("t1-t").move) == "t1-t2"
    lone = build(EH, ["(2C) (3C) (4C) 8S 7H", "9C"])
    assert refused(lone, "t1-t") == "no-table-destination"


def test_the_double_tap_puts_a_king_into_the_leftmost_empty_column() -> None:
    game = build(EH, ["5D", "", "(3C) KS", ""], waste="KH")
    assert str(game.push("t3-t").move) == "t3-t2"
    assert str(game.push("w-t").move) == "w-t4"
    assert game.score == 10  # +5 uncover, +5 waste to a column


def test_the_double_tap_finds_nothing_for_a_card_no_column_accepts() -> None:
    game = build(EH, ["5D", "", "9H"], waste="KH")
    assert refused(game, "t3-t") == "no-table-destination"  # not a king: empty columns refuse


def test_the_tap_finds_nothing() -> None:
    game = build(EH, ["5D"])
    assert refused(game, "t1-f") == "no-foundation-accepts"


# ---------------------------------------------------------------- fine points of moves.md


def test_tn_1_is_the_same_as_tn() -> None:
    game = build(EH, ["7H", "8S"])
    outcome = game.push("t1:1-t2")
    assert outcome.move == Move.parse("t1-t2")
    assert game.move_list() == "t1-t2"


def test_moving_a_card_onto_its_own_column_is_refused() -> None:
    game = build(EH, ["(2C) KS QH", "8S"])
    assert refused(game, "t1-t1") == "same-column"
    assert refused(game, "t1:2-t1") == "same-column"


def test_a_replay_of_the_actions_gives_the_same_game() -> None:
    game = new_game(EH)
    for _ in range(60):
        moves = [m for m in game.legal_moves if m.kind == "m"] or [Move.STOCK]
        game.push(moves[0])
        if game.moves % 7 == 0:
            game.push("u")
    again = replay(EH, game.actions)
    assert again.position() == game.position()
    assert replay(EH, game.move_list().split()).position() == game.position()


def test_conservation_in_a_real_game() -> None:
    game = new_game(EH)
    for _ in range(40):
        moves = [m for m in game.legal_moves if m.kind == "m"] or [Move.STOCK]
        game.push(moves[-1])
    counts = Counter(game.card_count())
    assert sum(counts.values()) == 104 and set(counts.values()) == {2}
