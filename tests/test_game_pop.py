"""``Game.pop()``: the last push taken back, whatever it was, as if it had never been made.

A popped game is compared with the same deal replayed without the popped actions: the
position, the player's view, the counters, the action list — and what each can still undo,
undone step by step down to the same refusal (``nothing-to-undo`` or ``undo-limit``).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import EH, KL1, KL3, build, refused, upto
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import DealCode, Game, IllegalMoveError, Move, new_game, replay

GAME_NAMES = ("easy-harp", "klondike", "klondike-3")


def state(game: Game) -> dict[str, Any]:
    """What a player or the server can tell of a game."""
    return {
        "position": game.position(),
        "view": game.player_view(),
        "actions": [str(m) for m in game.actions],
        "can_undo": game.can_undo,
        "legal": sorted(str(m) for m in game.legal_moves),
        "on_foundations": game.on_foundations,
        "deck_turns": game.deck_turns,
    }


def assert_same(game: Game, other: Game) -> None:
    """``game`` and ``other`` are the same now, and after each undo either can make."""
    game, other = game.copy(), other.copy()
    while True:
        assert state(game) == state(other)
        try:
            game.push("u")
        except IllegalMoveError as exc:
            assert refused(other, "u") == exc.rule
            return
        other.push("u")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), name=st.sampled_from(GAME_NAMES))
def test_pop_takes_back_any_action(data: st.DataObject, name: str) -> None:
    """Random playthroughs, undos mixed in; now and then up to three actions popped."""
    code = DealCode.for_game(name, data.draw(st.integers(1, 999_999), label="deal"))
    game = new_game(code)
    for _ in range(80):
        roll = data.draw(st.integers(0, 99), label="roll")
        if game.actions and roll < 15:
            count = data.draw(st.integers(1, min(3, len(game.actions))), label="pops")
            kept = game.actions[:-count]
            popped = [game.pop() for _ in range(count)]
            assert [str(m) for m in reversed(popped)] == [
                str(m) for m in replay(code, game.actions + popped[::-1]).actions[-count:]
            ]
            assert_same(game, replay(code, kept))
            continue
        if game.won:
            break
        if game.can_undo and roll < 30:
            game.push("u")
            continue
        legal = list(game.legal_moves)
        if not legal:
            break
        game.push(legal[data.draw(st.integers(0, len(legal) - 1), label="move")])
    assert_same(game, replay(code, game.actions))


@pytest.mark.parametrize("code", [EH, KL1, KL3])
def test_pop_after_an_undo_plays_the_undone_action_again(code: str) -> None:
    """An undo popped puts back the action it took back, with the score and move count of
    before the undo (Klondike charges an undo 10 points and a move)."""
    game = new_game(code)
    game.push("s")
    before = state(game)
    game.push("u")
    assert game.pop() == Move.UNDO
    assert state(game) == before
    assert_same(game, replay(code, ["s"]))


@pytest.mark.parametrize("code", [EH, KL3])
def test_pop_after_undoing_a_redeal_turns_the_deck_again(code: str) -> None:
    game = new_game(code)
    while game.deck_turns == 0:
        game.push("s")  # through the stock, then the redeal
    redealt = list(game.actions)
    game.push("u")
    assert game.deck_turns == 0
    game.pop()
    assert game.deck_turns == 1
    assert_same(game, replay(code, redealt))


def test_pop_gives_back_what_a_full_undo_history_dropped() -> None:
    """Easy Harp keeps the last 100 actions to undo: the push that dropped the oldest, once
    popped, makes it undoable again."""
    game = new_game(EH)
    for _ in range(101):
        game.push("s")
    assert game.pop() == Move.STOCK
    assert_same(game, replay(EH, ["s"] * 100))  # 100 undos, then nothing-to-undo
    game.push("s")
    game.pop()
    for _ in range(100):
        game.push("u")
    assert refused(game, "u") == "nothing-to-undo"


@pytest.mark.parametrize("last", ["t1-f1", "a"])
def test_pop_after_a_win_takes_the_win_back(last: str) -> None:
    """The last card to a foundation (or auto-finish) popped: the game is being played
    again, the win bonus gone."""
    game = build(KL1, ["KS"], foundations=[upto("QS"), upto("KH"), upto("KD"), upto("KC")])
    before = game.copy()
    game.push(last)
    assert game.won
    assert str(game.pop()) == last
    assert not game.won
    assert_same(game, before)


def test_pop_of_nothing_is_an_index_error() -> None:
    game = new_game(EH)
    with pytest.raises(IndexError):
        game.pop()
    game.push("s")
    game.pop()
    with pytest.raises(IndexError):
        game.pop()
    assert state(game) == state(new_game(EH))
