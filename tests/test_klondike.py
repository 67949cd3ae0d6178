"""Klondike against its rule book (``klondike.md``) and the fine points of ``moves.md``.

Every rule has a test where it allows and one where it refuses (asserting the rule id).
Positions are built by hand with :func:`helpers.build`; columns are written bottom → top with
face-down cards in parentheses.
"""

from __future__ import annotations

import pytest
from helpers import KL1, KL3, build, names, refused, upto

from engine import Game, Klondike, Move, new_game, parse_card, replay


def column(game: Game, n: int) -> str:
    """Column ``n`` (1-based) written like the fixtures."""
    col, down = game.columns[n - 1], game.down[n - 1]
    return " ".join([f"({c})" for c in names(col[:down]).split()] + names(col[down:]).split())


# ---------------------------------------------------------------- cards and layout


@pytest.mark.parametrize("code", [KL1, KL3])
def test_layout_of_a_real_deal(code: str) -> None:
    game = new_game(code)
    assert isinstance(game, Klondike)
    assert [len(c) for c in game.columns] == list(range(1, 8))
    assert game.down == list(range(7))
    assert len(game.stock) == 24 and game.waste == []
    assert game.foundations == [[]] * 4
    assert game.score == 0 and game.moves == 0 and not game.won
    counts = game.card_count()
    assert len(counts) == 52 and set(counts.values()) == {1}
    assert game.draw == (3 if code == KL3 else 1)


# ---------------------------------------------------------------- 1. tableau building


@pytest.mark.parametrize(
    ("card", "target"), [("9H", "TS"), ("9H", "TC"), ("9D", "TS"), ("8C", "9D")]
)
def test_building_down_by_one_in_alternating_colour(card: str, target: str) -> None:
    game = build(KL1, [card, target])
    game.push("t1-t2")
    assert column(game, 2) == f"{target} {card}"
    assert game.score == 0 and game.moves == 1


@pytest.mark.parametrize(
    ("card", "target"), [("9H", "TH"), ("9H", "TD"), ("9H", "JS"), ("9S", "8H")]
)
def test_building_refuses_same_colour_or_wrong_rank(card: str, target: str) -> None:
    game = build(KL1, [card, target])
    assert refused(game, "t1-t2") == "build-down-alternating"


# ---------------------------------------------------------------- 2. runs move together


@pytest.mark.parametrize("target", ["TS", "TC"])
def test_a_run_moves_together_onto_a_card_that_takes_its_lowest_card(target: str) -> None:
    game = build(KL1, ["(2C) 9H 8C 7H", target])
    outcome = game.push("t1:3-t2")
    assert str(outcome.move) == "t1:3-t2"
    assert column(game, 2) == f"{target} 9H 8C 7H"
    assert column(game, 1) == "2C" and outcome.revealed == (parse_card("2C"),)
    assert game.score == 5 and game.moves == 1


def test_part_of_a_run_moves_too() -> None:
    game = build(KL1, ["(2C) 9H 8C 7H", "9D"])
    game.push("t1:2-t2")
    assert column(game, 2) == "9D 8C 7H" and column(game, 1) == "(2C) 9H"


@pytest.mark.parametrize(
    ("first", "move", "rule"),
    [
        ("(2C) 9H 8C 7C", "t1:3-t2", "not-a-run"),  # 7C on 8C: same colour
        ("(2C) 9H 7C 6H", "t1:3-t2", "not-a-run"),  # 7C on 9H: skips a rank
        ("(2C) 9H 8C 7H", "t1:2-t2", "build-down-alternating"),  # 8C does not fit on TS
        ("(2C) 9H 8C", "t1:3-t2", "face-down-card"),
        ("(2C) 9H 8C", "t1:5-t2", "not-enough-cards"),
        ("(2C) 9H 8C 7H", "t1:3-f1", "foundation-one-card"),
        ("(2C) 9H 8C 7H", "t1:3-f", "foundation-one-card"),
        ("(2C) 9H 8C 7H", "t1:3-t3", "king-only-on-empty"),  # empty column: kings only
        ("(2C) 9H 8C 7C", "t1:3-t", "not-a-run"),
        ("(2C) 9H 8C 7H", "t1:3-t1", "same-column"),
        ("(2C) 9H 8C 7H", "t3:2-t2", "empty-source"),
    ],
)
def test_run_refusals(first: str, move: str, rule: str) -> None:
    game = build(KL1, [first, "TS", ""], foundations=[upto("8C")])
    assert refused(game, move) == rule


def test_legal_moves_list_every_run_that_fits() -> None:
    game = build(KL1, ["(2C) 9H 8C 7H", "TS", "9D", "8S", "(4D) 3C", "KH", "KD"])
    from_t1 = sorted(str(m) for m in game.legal_moves if m.source_index == 1 and m.kind == "m")
    assert from_t1 == ["t1-t4", "t1:2-t3", "t1:3-t2"]


# ---------------------------------------------------------------- 3. empty pile


def test_a_king_alone_or_with_its_run_goes_into_an_empty_pile() -> None:
    game = build(KL1, ["(2C) KS QH JC", "(3D) KD", ""])
    game.push("t1:3-t3")
    assert column(game, 3) == "KS QH JC" and column(game, 1) == "2C"
    game.push("t2-t4")
    assert column(game, 4) == "KD" and column(game, 2) == "3D"
    assert game.score == 10


@pytest.mark.parametrize(("move", "waste"), [("t1:2-t3", ""), ("t1-t3", ""), ("w-t3", "QH")])
def test_an_empty_pile_refuses_anything_but_a_king(move: str, waste: str) -> None:
    game = build(KL1, ["(2C) KS QH JC", "5D", ""], waste=waste)
    assert refused(game, move) == "king-only-on-empty"


@pytest.mark.parametrize(
    ("move", "moved", "left"),
    [("t1:2-t2", "KS QH", (1, "")), ("t1:2-t", "KS QH", (1, "")), ("t3-t2", "KD", (3, ""))],
)
def test_a_king_or_run_that_is_the_bottom_may_move_to_another_empty_pile(
    move: str, moved: str, left: tuple[int, str]
) -> None:
    game = build(KL1, ["KS QH", "", "KD", "5C", "5C", "5C", "5C"], score=25)
    game.push(move)
    assert column(game, 2) == moved
    assert column(game, left[0]) == left[1]
    assert game.score == 25 and game.moves == 1  # pointless, legal, scores nothing


# ---------------------------------------------------------------- 4. uncovering


def test_uncovering_turns_the_card_up_and_scores_5_whatever_the_destination() -> None:
    game = build(KL1, ["(5C) AS", "(2C) KH", "", "(9D) (4C) QH", "KC"])
    assert game.push("t1-f").revealed == (parse_card("5C"),)
    assert game.score == 15
    game.push("t2-t3")
    assert game.score == 20
    game.push("t4-t5")
    assert game.score == 25 and column(game, 4) == "(9D) 4C"


def test_no_uncovering_when_a_face_up_card_remains_or_the_pile_empties() -> None:
    game = build(KL1, ["(5C) 8S 7H", "8C", "KS", ""])
    assert game.push("t1-t2").revealed == ()
    assert game.push("t3-t4").revealed == ()
    assert game.score == 0


# ---------------------------------------------------------------- 5. stock


def test_draw_one_turns_one_card() -> None:
    game = new_game(KL1)
    top = game.stock[-1]
    outcome = game.push("s")
    assert outcome.revealed == (top,) and game.waste == [top] and len(game.stock) == 23
    assert game.moves == 1 and game.score == 0


def test_draw_three_turns_three_cards_one_after_another() -> None:
    game = new_game(KL3)
    first, second, third = game.stock[-1], game.stock[-2], game.stock[-3]
    outcome = game.push("s")
    assert outcome.revealed == (first, second, third)
    assert game.waste == [first, second, third]  # the third ends on top
    assert len(game.stock) == 21 and game.moves == 1
    assert game.player_view()["waste"]["top"] == names(game.waste).split()


@pytest.mark.parametrize("left", ["5C 6C", "5C"])
def test_draw_three_with_one_or_two_cards_left_turns_those(left: str) -> None:
    game = build(KL3, ["KS"], stock=left, waste="2D 3D 4D")
    game.push("s")
    assert game.stock == [] and names(game.waste) == "2D 3D 4D " + " ".join(reversed(left.split()))
    assert game.moves == 1


def test_only_the_top_waste_card_is_playable_in_draw_three() -> None:
    game = build(KL3, ["8C", "KS"], stock="8S 7H QD")
    game.push("s")
    assert names(game.waste) == "QD 7H 8S"
    assert refused(game, "w-t1") == "build-down-alternating"  # 8S is on top, not 7H


@pytest.mark.parametrize(("code", "penalty"), [(KL1, 50), (KL3, 20)])
def test_a_redeal_turns_the_waste_over_in_the_same_order_and_costs_points(
    code: str, penalty: int
) -> None:
    game = new_game(code)
    order = list(reversed(game.stock))
    while game.stock:
        game.push("s")
    assert game.score == 0  # the first pass through the stock is free
    assert game.waste == order
    game.score = 100
    moves = game.moves
    outcome = game.push("s")
    assert outcome.revealed == () and game.waste == []  # a redeal does not also draw
    assert list(reversed(game.stock)) == order
    assert game.moves == moves + 1 and game.score == 100 - penalty
    assert game.push("s").revealed[0] == order[0]


@pytest.mark.parametrize("code", [KL1, KL3])
def test_the_redeal_penalty_stops_at_zero(code: str) -> None:
    game = build(code, ["KS"], waste="AC 2C", score=15)
    game.push("s")
    assert game.score == 0 and names(game.stock) == "2C AC"


def test_redeals_are_unlimited() -> None:
    game = build(KL1, ["KS"], waste="AC", score=1000)
    for _ in range(5):
        game.push_all(["s", "s"])
    assert game.score == 750 and game.moves == 10


@pytest.mark.parametrize("code", [KL1, KL3])
def test_the_stock_action_is_refused_with_both_stock_and_waste_empty(code: str) -> None:
    game = build(code, ["KS"], score=20, moves=3)
    assert refused(game, "s") == "stock-empty"
    assert game.moves == 3 and game.score == 20
    assert Move.STOCK not in game.legal_moves


# ---------------------------------------------------------------- 6. foundations


def test_a_foundation_starts_with_an_ace() -> None:
    game = build(KL1, ["2H", "AH"])
    assert refused(game, "t1-f1") == "foundation-starts-with-ace"
    assert refused(game, "t1-f") == "no-foundation-accepts"
    game.push("t2-f3")  # foundations are not tied to suits: any empty one takes an ace
    game.push("t1-f")
    assert names(game.foundations[2]) == "AH 2H" and game.score == 20


def test_an_ace_goes_to_the_first_empty_foundation_when_none_is_named() -> None:
    game = build(KL1, ["AH", "AS"], foundations=[upto("3C")])
    assert str(game.push("t1-f").move) == "t1-f2"
    assert str(game.push("t2-f").move) == "t2-f3"


@pytest.mark.parametrize(("card", "pile"), [("2H", "AS"), ("3H", "AH"), ("2D", "AH"), ("AH", "AH")])
def test_a_foundation_continues_up_in_the_same_suit(card: str, pile: str) -> None:
    game = build(KL1, [card], foundations=[pile])
    assert refused(game, "t1-f1") == "foundation-builds-up-in-suit"


def test_the_tap_finds_the_foundation_that_continues_the_suit() -> None:
    game = build(KL1, ["(5C) 3H", "8C"], waste="2S", foundations=["AS", upto("2H")])
    assert str(game.push("t1-f").move) == "t1-f2"
    assert str(game.push("w-f").move) == "w-f1"
    assert game.score == 25  # +10, +5 uncover, +10


# ---------------------------------------------------------------- 7. taking back


def test_a_foundation_top_goes_back_onto_a_pile_where_it_fits_for_15_points() -> None:
    game = build(KL1, ["6H", "6S"], foundations=[upto("5S")], score=100)
    assert refused(game, "f1-t2") == "build-down-alternating"
    game.push("f1-t1")
    assert column(game, 1) == "6H 5S" and game.on_foundations == 4
    assert game.score == 85 and game.moves == 1
    game.push("t1-f1")  # placed again: +10 again, the −15 is not refunded
    assert game.score == 95


def test_the_take_back_penalty_stops_at_zero() -> None:
    game = build(KL1, ["6H"], foundations=[upto("5S")], score=10)
    game.push("f1-t1")
    assert game.score == 0


def test_a_king_is_taken_back_only_onto_an_empty_pile() -> None:
    game = build(KL1, ["6H", "QD"], foundations=[upto("KS")], score=30)
    assert refused(game, "f1-t2") == "build-down-alternating"
    assert str(game.push("f1-t").move) == "f1-t3"
    assert game.score == 15


@pytest.mark.parametrize("move", ["f1-f2", "f1-f"])
def test_foundation_to_foundation_is_refused(move: str) -> None:
    game = build(KL1, ["6H"], foundations=[upto("2S")])
    assert refused(game, move) == "foundation-to-foundation"


# ---------------------------------------------------------------- double tap and tap


def test_the_double_tap_picks_the_fullest_accepting_pile_counting_face_down_cards() -> None:
    game = build(KL1, ["8S", "(2C) (3C) (4C) 8C", "(5D) 9D 8S", "7H", "(2D) (3D) (4D) (5D) 9H"])
    assert str(game.push("t4-t").move) == "t4-t2"


def test_the_double_tap_breaks_ties_to_the_leftmost_and_skips_the_source() -> None:
    # t1 is the fullest and, without 7H, its 8S would take 7H: still not a candidate
    game = build(KL1, ["(2C) (3C) (4C) 8S 7H", "(2C) 8S", "(3C) 8C", "7D"])
    assert str(game.push("t1-t").move) == "t1-t2"
    assert str(game.push("t4-t").move) == "t4-t1"  # now t1 (8S, four cards) is the fullest


def test_the_double_tap_moves_a_run() -> None:
    game = build(KL1, ["(2C) 9H 8C", "(3D) TS", "TC", "(4D) (5D) 9D"])
    assert str(game.push("t1:2-t").move) == "t1:2-t2"
    assert str(game.push("t4-t").move) == "t4-t3"


def test_the_double_tap_puts_a_king_into_the_leftmost_empty_pile() -> None:
    game = build(KL1, ["5D", "", "(3C) KS", ""], waste="KH")
    assert str(game.push("t3-t").move) == "t3-t2"
    assert str(game.push("w-t").move) == "w-t4"
    assert game.score == 10  # +5 uncover; a king from the waste into an empty pile: +5


def test_the_double_tap_finds_nothing() -> None:
    game = build(KL1, ["5D", "", "9H"])
    assert refused(game, "t3-t") == "no-table-destination"
    assert refused(game, "t3-f") == "no-foundation-accepts"


# ---------------------------------------------------------------- end of the game


def near_win(moves: int, score: int = 0) -> Game:
    """Every card on the foundations but KD, the waste's only card."""
    return build(
        KL1,
        [],
        waste="KD",
        foundations=[upto("KS"), upto("QD"), upto("KC"), upto("KH")],
        moves=moves,
        score=score,
    )


@pytest.mark.parametrize(("moves", "bonus"), [(0, 698), (100, 498), (348, 2), (349, 0), (400, 0)])
def test_the_win_bonus_is_700_minus_twice_the_moves_after_the_winning_card(
    moves: int, bonus: int
) -> None:
    game = near_win(moves, score=40)
    assert not game.won and game.on_foundations == 51
    game.push("w-f")
    assert game.won and game.on_foundations == 52
    assert game.moves == moves + 1
    assert game.score == 40 + 10 + bonus


@pytest.mark.parametrize("move", ["s", "u", "a", "f1-t1", "f2-t", "w-f"])
def test_once_won_every_action_is_refused(move: str) -> None:
    game = near_win(10)
    game.push("w-f2")
    assert refused(game, move) == "game-over"
    assert not game.can_undo and list(game.legal_moves) == []


def finishable(moves: int) -> Game:
    """All 52 cards face up in the columns, stock and waste empty; aces on top."""
    spades = " ".join(reversed(upto("KS").split()))
    hearts = " ".join(reversed(upto("KH").split()))
    diamonds = " ".join(reversed(upto("KD").split()))
    clubs = " ".join(reversed(upto("KC").split()))
    columns = [
        spades.replace(" AS", ""),  # top 2S: rank 2 waits for the aces
        hearts,  # top AH
        diamonds.replace(" AD", ""),
        clubs,  # top AC
        "AS",
        "AD",
        "",
    ]
    return build(KL1, columns, moves=moves)


def test_auto_finish_plays_lowest_rank_first_ties_leftmost_to_the_first_foundation() -> None:
    game = finishable(moves=20)
    assert game.auto_finish_offered() and Move.AUTO in game.legal_moves
    outcome = game.push("a")
    assert outcome.move == Move.AUTO
    # aces in the order AH (t2), AC (t4), AS (t5), AD (t6) to the first empty foundations
    assert [names(pile[:1]) for pile in game.foundations] == ["AH", "AC", "AS", "AD"]
    assert all(len(pile) == 13 for pile in game.foundations)
    assert game.won and game.on_foundations == 52
    assert game.moves == 20 + 52  # each card one move, `a` itself none
    assert game.score == 520 + (700 - 2 * 72)  # +10 a card, then the win bonus once
    assert game.actions == [Move.AUTO] and game.move_list() == "a"
    assert refused(game, "u") == "game-over"


def test_auto_finish_win_bonus_never_below_zero() -> None:
    game = finishable(moves=500)
    game.push("a")
    assert game.score == 520 and game.moves == 552


def test_auto_finish_with_kings_left() -> None:
    game = build(
        KL1,
        ["KD", "KS", "QS", "KC", "KH"],
        foundations=[upto("JS"), upto("QH"), upto("QD"), upto("QC")],
    )
    game.push("a")
    assert game.won and game.moves == 5 and game.score == 50 + 690
    assert [names(p[-1:]) for p in game.foundations] == ["KS", "KH", "KD", "KC"]


@pytest.mark.parametrize(
    ("columns", "stock", "waste"),
    [
        (["(3C) 4H", "2C"], "", ""),  # a face-down card is left
        (["4H", "2C"], "3C", ""),  # the stock is not empty
        (["4H", "2C"], "", "3C"),  # the waste is not empty
    ],
)
def test_auto_finish_is_offered_only_when_nothing_is_hidden(
    columns: list[str], stock: str, waste: str
) -> None:
    game = build(
        KL1,
        columns,
        stock=stock,
        waste=waste,
        foundations=[upto("KS"), upto("KD"), upto("3H"), "AC"],
    )
    assert not game.auto_finish_offered() and Move.AUTO not in game.legal_moves
    assert not game.player_view()["auto_finish"]
    assert refused(game, "a") == "auto-finish-not-offered"


def test_auto_finish_is_offered_once_the_last_card_is_uncovered() -> None:
    game = build(
        KL1,
        ["(3C) 4H", "2C", "KH QC JH TC 9H 8C 7H 6C 5H 4C", "KC QH JC TH 9C 8H 7C 6H 5C"],
        foundations=[upto("KS"), upto("KD"), upto("3H"), "AC"],
    )
    assert sorted(game.card_count().values()) == [1] * 52
    game.push("t2-f4")
    assert not game.auto_finish_offered()
    game.push("t1-f")  # 4H to its foundation, uncovering 3C
    assert game.auto_finish_offered() and game.player_view()["auto_finish"]
    game.push("a")
    assert game.won and game.moves == 22
    assert game.score == 25 + 200 + 700 - 44


# ---------------------------------------------------------------- undo


def test_undo_restores_cards_and_score_then_charges_10_and_counts_a_move() -> None:
    game = build(KL1, ["(5C) (2D) 7H", "8S"], score=50, moves=4)
    before = game.position()
    game.push("t1-t2")
    assert game.score == 55
    game.push("u")
    assert game.position() == {**before, "score": 40, "moves": 6}
    assert column(game, 1) == "(5C) (2D) 7H"  # face down again


def test_the_undo_penalty_stops_at_zero() -> None:
    game = build(KL1, ["(5C) AS"])
    game.push("t1-f")
    assert game.score == 15
    game.push("u")
    assert game.score == 0 and game.moves == 2


@pytest.mark.parametrize(
    ("columns", "foundations", "waste", "stock", "move", "after"),
    [
        (["(5C) AS"], [], "", "", "t1-f1", 115),
        (["6H"], [upto("5S")], "", "", "f1-t1", 85),
        (["8C"], [], "7H", "", "w-t1", 105),
        (["(3D) KS QH", ""], [], "", "", "t1:2-t2", 105),
        (["8C"], [], "", "9H 7H", "s", 100),
        (["8C"], [], "9H 7H", "", "s", 50),
    ],
)
def test_undo_restores_each_kind_of_action(
    columns: list[str], foundations: list[str], waste: str, stock: str, move: str, after: int
) -> None:
    game = build(KL1, columns, foundations=foundations, waste=waste, stock=stock, score=100)
    before = game.position()
    game.push(move)
    assert game.score == after
    game.push("u")
    assert game.position() == {**before, "score": 90, "moves": 2}


def test_undo_of_a_draw_three_puts_the_three_cards_back() -> None:
    game = new_game(KL3)
    before = game.position()
    game.push_all(["s", "u"])
    assert game.position() == {**before, "moves": 2}


def test_undo_is_unlimited() -> None:
    game = new_game(KL1)
    start = game.position()
    for _ in range(150):  # draws and redeals
        game.push("s")
    for _ in range(150):
        game.push("u")
    assert game.position() == {**start, "moves": 300, "score": 0}
    assert refused(game, "u") == "nothing-to-undo"
    assert game.moves == 300  # the refused undo charges nothing


def test_undo_with_nothing_to_undo_is_refused_without_penalty() -> None:
    game = build(KL1, ["KS"], score=30, moves=2)
    assert refused(game, "u") == "nothing-to-undo"
    assert game.score == 30 and game.moves == 2


def test_u_u_undoes_the_last_two_actions() -> None:
    game = new_game(KL1)
    positions = [game.position()]
    for _ in range(3):
        game.push("s")
        positions.append(game.position())
    game.push_all(["u", "u"])
    assert game.position() == {**positions[1], "moves": 5}


# ---------------------------------------------------------------- moves counter and score


def test_every_move_stock_action_and_undo_counts_one_move() -> None:
    game = build(KL1, ["7H", "8S", "2C"], stock="AD", waste="")
    game.push("t1-t2")
    game.push("s")  # draw
    game.push("s")  # redeal
    refused(game, "t3-t2")
    game.push("u")
    assert game.moves == 4


def test_score_events_in_order_with_the_floor_at_zero() -> None:
    game = build(KL1, ["(5C) AS", "8C", "(4D) 2H", "KD"], waste="AH 7H", stock="")
    game.push("t1-f")  # +10 to a foundation, +5 uncover
    assert game.score == 15
    game.push("w-t2")  # +5 waste to tableau
    assert game.score == 20
    game.push("s")  # redeal of one card: −50, floor at 0
    assert game.score == 0
    game.push("s")  # a draw scores nothing
    game.push("w-f")  # +10
    assert game.score == 10
    game.push("f1-t3")  # take back AS onto 2H: −15, floor at 0
    assert game.score == 0
    game.push("t3-f1")  # +10 again
    assert game.score == 10
    game.push("u")  # back to 0, −10, floor at 0
    assert game.score == 0


# ---------------------------------------------------------------- fine points of moves.md


def test_tn_1_is_the_same_as_tn() -> None:
    game = build(KL1, ["7H", "8S"])
    assert game.push("t1:1-t2").move == Move.parse("t1-t2")


def test_moving_a_card_onto_its_own_column_is_refused() -> None:
    game = build(KL1, ["8S 7H", "8C"])
    assert refused(game, "t1-t1") == "same-column"
    game.push("t1-t2")


def test_a_replay_of_the_actions_gives_the_same_game() -> None:
    for code in (KL1, KL3):
        game = new_game(code)
        for i in range(80):
            moves = [m for m in game.legal_moves if m.kind == "m"] or [Move.STOCK]
            game.push(moves[i % len(moves)])
            if i % 9 == 4:
                game.push("u")
        again = replay(code, game.actions)
        assert again.position() == game.position()
        assert replay(code, game.move_list().split()).position() == game.position()
