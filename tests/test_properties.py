"""Hypothesis properties over random legal playthroughs of every game, undos mixed in.

Each step checks: card conservation, a score never below 0, the player's view hiding exactly
the hidden cards, the notation round trip, and — for undo — the exact position before the
undone action (Easy Harp) or its cards with ``max(0, score − 10)`` and one more move
(Klondike). At the end the action list replays to the identical position. A second property
compares ``legal_moves`` with what ``push`` accepts over a fixed enumeration of every
syntactically possible explicit move.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from helpers import EH, KL1, KL3, all_explicit_moves, build, visible_cards
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import DealCode, Game, IllegalMoveError, Move, card_name, new_game, replay
from protocol import merge_view

GAME_NAMES = ("easy-harp", "klondike", "klondike-3")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_cards(game: Game) -> None:
    """Every card exactly as many times as the game's decks hold it."""
    counts = game.card_count()
    assert len(counts) == 52
    assert set(counts.values()) == {game.copies}
    assert sum(len(pile) for pile in game.foundations) == game.on_foundations
    for column, down in zip(game.columns, game.down, strict=True):
        assert 0 <= down <= len(column)
        assert down == 0 or down < len(column)  # a face-down card is never left on top


def check_view(game: Game) -> None:
    """The view shows exactly the cards that are not hidden, and never the stock's cards."""
    view: dict[str, Any] = game.player_view()
    everything: Counter[str] = Counter()
    for card, n in game.card_count().items():
        everything[card_name(card)] = n
    hidden = Counter(card_name(c) for c in game.hidden_cards())
    assert visible_cards(view) == everything - hidden
    assert isinstance(view["stock"], int) and view["stock"] == len(game.stock)
    assert all(isinstance(col["down"], int) for col in view["tableau"])
    assert view["waste"]["count"] == len(game.waste)
    assert len(view["waste"]["top"]) <= game.draw
    assert view["can_undo"] == game.can_undo


def play(data: st.DataObject, name: str, steps: int) -> Game:
    """A random playthrough with every per-step check; returns the game."""
    number = data.draw(st.integers(1, 999_999), label="deal")
    code = DealCode.for_game(name, number)
    game = new_game(code)
    before: list[dict[str, Any]] = []  # position before each undoable action
    for _ in range(steps):
        if game.won:
            break
        roll = data.draw(st.integers(0, 99), label="roll")
        view = game.player_view()
        if game.can_undo and roll < 12:
            undone = before.pop()
            moves = game.moves
            outcome = game.push("u")
            assert outcome.move == Move.UNDO
            after = game.position()
            if name == "easy-harp":
                assert after == {**undone, "moves": moves}
            else:
                expected_score = max(0, undone["score"] - 10)
                assert after == {**undone, "score": expected_score, "moves": moves + 1}
        else:
            legal = list(game.legal_moves)
            if not legal:
                break
            cards = [m for m in legal if m.kind == "m"]
            pool = cards if cards and roll < 80 else legal
            move = pool[data.draw(st.integers(0, len(pool) - 1), label="move")]
            assert Move.parse(str(move)) == move
            snapshot = game.position()
            moves = game.moves
            outcome = game.push(str(move))
            assert outcome.move == move  # legal moves are explicit: resolved as given
            assert Move.parse(str(outcome.move)) == outcome.move
            if move.kind == "a":
                assert game.won
            else:
                assert game.moves == moves + 1
            before.append(snapshot)
        # what an ack carries: merged into the board held, it gives the new board exactly
        assert merge_view(view, game.view_changes(game.actions[-1])) == game.player_view()
        check_cards(game)
        check_view(game)
        assert game.score >= 0
    again = replay(code, game.actions)
    assert again.position() == game.position()
    assert again.move_list() == game.move_list()
    return game


@SETTINGS
@given(data=st.data(), name=st.sampled_from(GAME_NAMES))
def test_random_playthroughs_keep_every_invariant(data: st.DataObject, name: str) -> None:
    play(data, name, steps=60)


def check_legal_moves(game: Game) -> None:
    """``legal_moves`` lists exactly what ``push`` accepts, and a refusal changes nothing."""
    legal = list(game.legal_moves)
    assert len(legal) == len(set(legal))
    listed = set(legal)
    snapshot = game.position()
    for move in all_explicit_moves(game):
        if move in listed:
            game.copy().push(move)
            listed.discard(move)
            assert move in game.legal_moves and game.is_legal(move)
        else:
            try:
                game.push(move)
            except IllegalMoveError:
                pass
            else:  # pragma: no cover - a failure path
                raise AssertionError(f"{move} accepted but not in legal_moves")
            assert not game.is_legal(move)
    assert not listed, f"listed but outside the enumeration: {listed}"
    assert game.position() == snapshot


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(GAME_NAMES))
def test_push_accepts_exactly_the_legal_moves(data: st.DataObject, name: str) -> None:
    number = data.draw(st.integers(1, 999_999), label="deal")
    game = new_game(DealCode.for_game(name, number))
    for _ in range(16):
        check_legal_moves(game)
        legal = list(game.legal_moves)
        if not legal or game.won:
            break
        cards = [m for m in legal if m.kind == "m"]
        pool = cards or legal
        game.push(pool[data.draw(st.integers(0, len(pool) - 1), label="move")])


# ---------------------------------------------------------------- perft-style golden counts


def perft(game: Game, depth: int) -> int:
    """The number of leaves of the tree of legal actions (undo excluded) ``depth`` deep."""
    if depth == 0:
        return 1
    total = 0
    for move in game.legal_moves:
        child = game.copy()
        child.push(move)
        total += perft(child, depth - 1)
    return total


def easy_harp_middle() -> Game:
    return build(
        EH,
        ["(5C) KS QH JC", "(3D) 8S 7H", "", "9D", "(2C) 9H", "6C", "AS", "(4H) 7D", "KD"],
        waste="2S 8C",
        stock="3S QC",
        foundations=["", "AH"],
    )


def klondike_middle(code: str) -> Game:
    return build(
        code,
        ["(2C) 9H 8C 7H", "TS", "9D", "(AD) 8S", "(4D) 3C", "KH", ""],
        waste="6S 2H",
        stock="AH 5D QS",
        foundations=["AS"],
    )


def test_the_legal_moves_of_positions_in_the_middle_of_a_game() -> None:
    eh = sorted(str(m) for m in easy_harp_middle().legal_moves)
    assert eh == ["s", "t1:3-t3", "t6-t2", "t6-t8", "t7-f1", "t7-f5", "t9-t3", "w-t4", "w-t5"]
    kl = sorted(str(m) for m in klondike_middle(KL1).legal_moves)
    assert kl == ["s", "t1-t4", "t1:2-t3", "t1:3-t2", "t3-t2", "t4-t3", "t6-t7", "w-t5"]


@pytest.mark.parametrize(
    ("make", "counts"),
    [
        (lambda: new_game("EH1-N-AAAAAAB"), [2, 4, 10, 18, 38, 81]),
        (lambda: new_game("EH1-N-AAAAAAC"), [6, 29, 121, 478, 1720, 5653]),
        (lambda: new_game(KL1), [1, 6, 14, 47, 145, 516]),
        (lambda: new_game(KL3), [7, 30, 86, 260, 664, 1286]),
        (lambda: new_game("KL1-1-AAAAAAC"), [6, 24, 81, 270, 832, 2564]),
        (easy_harp_middle, [9, 82, 748]),
        (lambda: klondike_middle(KL1), [8, 63, 495]),
        (lambda: klondike_middle(KL3), [8, 65, 536]),
    ],
    ids=["EH-B", "EH-C", "KL1-F", "KL3-F", "KL1-C", "EH-middle", "KL1-middle", "KL3-middle"],
)
def test_perft_golden_counts(make: Any, counts: list[int]) -> None:
    game = make()
    assert [perft(game, depth) for depth in range(1, len(counts) + 1)] == counts
