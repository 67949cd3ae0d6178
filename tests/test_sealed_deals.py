"""Nobody can work out a deal the server chose from its opening board (issue 29).

The attack of the issue: read the face-up cards of the opening board, deal all 999,999
numbered deals and compare (:mod:`deal_finder`). It finds a numbered deal, a version 1 round
and a version 1 day at once; it finds nothing for a sealed random deal, a ``D2`` day or a
``T2`` round. The finder is checked against the engine first, so that "nothing found" means
something. Slow (a few seconds per game to deal a million deals), so in the integration tier.
"""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pytest
from deal_finder import _bounded, find_numbered, numbered_tops, opening_tops

from engine import DealCode
from engine.cards import card_name
from engine.dealcode import MAX_NUMBER, Xoshiro128
from engine.fair import (
    DAILY_GAMES,
    daily_candidate,
    new_daily_key,
    new_seed,
    round_candidate,
)

pytestmark = pytest.mark.slow

GAMES = ("klondike", "klondike-3", "easy-harp")
SEED = bytes(range(32))  # the fair-deals vectors' seed and daily key


def test_the_vectorised_draw_is_the_engines_with_its_rejections() -> None:
    rng = random.Random(29)
    words = [[rng.getrandbits(32) for _ in range(4)] for _ in range(2000)]
    # m = 3·2**30 rejects a quarter of the draws, so redraws are exercised on every run
    for m in (2, 52, 104, 3 << 30):
        state = np.array(words, dtype=np.uint32).T.copy()
        expected = [Xoshiro128(*w).bounded(m) for w in words]
        assert _bounded(state, m).tolist() == expected
        # and each deal's generator moved on exactly as the engine's did
        again = []
        for w in words:
            x = Xoshiro128(*w)
            x.bounded(m)
            again.append(x.next())
        assert _bounded(state, 1 << 31).tolist() == [r % (1 << 31) for r in again]


@pytest.mark.parametrize("game", GAMES)
def test_the_table_shows_what_the_engine_deals(game: str) -> None:
    table = numbered_tops(game)
    assert table.shape == (MAX_NUMBER, 9 if game == "easy-harp" else 7)
    rng = random.Random(game)
    for number in [1, 2, MAX_NUMBER, *rng.sample(range(1, MAX_NUMBER + 1), 150)]:
        shown = tuple(card_name(int(card)) for card in table[number - 1])
        assert shown == opening_tops(DealCode.for_game(game, number)), number


@pytest.mark.parametrize("game", GAMES)
def test_a_numbered_deal_is_found_from_its_opening_board(game: str) -> None:
    number = random.Random(f"{game}-found").randint(1, MAX_NUMBER)
    code = DealCode.for_game(game, number)
    found = find_numbered(game, opening_tops(code))
    assert number in found
    for other in found:
        assert opening_tops(DealCode.for_game(game, other)) == opening_tops(code)
    # version 1's derivations drew numbered deals: the same attack found them
    v1_round = round_candidate(SEED, "K7QF2M", game, 1, 0, fair=1)
    assert v1_round.number in find_numbered(game, opening_tops(v1_round))
    if game in DAILY_GAMES:
        v1_day = daily_candidate(SEED, game, "2025-01-01", 0, fair=1)
        assert v1_day.number in find_numbered(game, opening_tops(v1_day))


def assert_not_found(code: DealCode) -> list[int]:
    """No numbered deal is ``code``: any that shows its opening board deals other cards."""
    assert code.sealed
    found = find_numbered(code.game_name, opening_tops(code))
    for number in found:
        assert DealCode.for_game(code.game_name, number).layout() != code.layout()
    return found


@pytest.mark.parametrize("game", GAMES)
def test_deals_the_server_chooses_match_no_numbered_deal(game: str) -> None:
    # the vectors' sealed candidates: fixed, so their boards show no numbered deal's at all
    chosen = [round_candidate(SEED, "K7QF-2M", game, r, i) for r in (1, 2) for i in (0, 1)]
    if game in DAILY_GAMES:
        chosen += [daily_candidate(SEED, game, "2026-12-01", i) for i in (0, 1)]
    for code in chosen:
        assert assert_not_found(code) == [], code
    # fresh ones, as the server draws them: a numbered deal may show the same seven cards
    # (about one sealed Klondike deal in 700,000), but it is never the same deal
    today = dt.datetime.now(dt.UTC).date()
    fresh = [DealCode.random(game), round_candidate(new_seed(), "2JWE-7Y", game, 1, 0)]
    if game in DAILY_GAMES:
        fresh.append(daily_candidate(new_daily_key(), game, today, 0))
    for code in fresh:
        assert_not_found(code)
