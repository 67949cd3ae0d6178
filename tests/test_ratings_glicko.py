"""Glicko-2 against the worked example of Glickman's "Example of the Glicko-2 system", and
properties every rating keeps.

The paper rounds what it prints (and rounds μ′ and φ′ before converting them back), so
each printed figure is matched within one unit of its last printed digit: r′ = 1464.06
prints −0.2069 × 173.7178 + 1500, while the unrounded μ′ gives 1464.0507.
"""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from server.ratings.glicko import SCALE, START, Rating, expected, g, new_volatility, rate

PLAYER = Rating(1500, 200, 0.06)
OPPONENTS = [(Rating(1400, 30), 1.0), (Rating(1550, 100), 0.0), (Rating(1700, 300), 0.0)]


def close(value: float, printed: float, decimals: int) -> bool:
    """Whether ``value`` is ``printed`` within one unit of its last printed digit."""
    return abs(value - printed) <= 10.0**-decimals


def test_step_2_the_glicko2_scale() -> None:
    assert (PLAYER.mu, round(PLAYER.phi, 4)) == (0.0, 1.1513)
    assert [round(o.mu, 4) for o, _ in OPPONENTS] == [-0.5756, 0.2878, 1.1513]
    assert [round(o.phi, 4) for o, _ in OPPONENTS] == [0.1727, 0.5756, 1.7269]


def test_steps_3_and_4_the_variance_and_the_improvement() -> None:
    gs = [g(o.phi) for o, _ in OPPONENTS]
    es = [expected(PLAYER.mu, o.mu, o.phi) for o, _ in OPPONENTS]
    assert all(close(a, b, 4) for a, b in zip(gs, [0.9955, 0.9531, 0.7242], strict=True))
    assert all(close(a, b, 3) for a, b in zip(es, [0.639, 0.432, 0.303], strict=True))
    v = 1 / sum(gj * gj * ej * (1 - ej) for gj, ej in zip(gs, es, strict=True))
    delta = v * sum(gj * (s - ej) for gj, ej, (_, s) in zip(gs, es, OPPONENTS, strict=True))
    # the paper computes them from E rounded to three decimals: they agree to three
    assert close(v, 1.7785, 3) and close(delta, -0.4834, 3)


def test_step_5_the_new_volatility() -> None:
    # from the paper's own figures, and from the unrounded ones
    assert close(new_volatility(0.06, 1.1513, 1.7785, -0.4834), 0.05999, 5)
    v, delta = 1.7789771, -0.4839333
    assert close(new_volatility(0.06, PLAYER.phi, v, delta), 0.05999, 5)


def test_steps_6_to_8_the_new_rating() -> None:
    after = rate(PLAYER, OPPONENTS)
    assert close(after.mu, -0.2069, 4) and close(after.phi, 0.8722, 4)
    assert close(after.rating, 1464.06, 2) and close(after.rd, 151.52, 2)
    assert close(after.volatility, 0.05999, 5)
    # the unrounded figures, for whoever checks with another implementation
    assert abs(after.rating - 1464.0507) < 1e-4 and abs(after.rd - 151.5165) < 1e-4


def test_a_player_without_games_only_grows_less_sure() -> None:
    after = rate(PLAYER, [])
    assert after.rating == PLAYER.rating and after.volatility == PLAYER.volatility
    assert after.rd == math.sqrt(PLAYER.phi**2 + 0.06**2) * SCALE
    assert rate(START, []).rd == START.rd  # never past an unrated player's


ratings = st.builds(
    Rating,
    st.floats(400, 3000),
    st.floats(30, 350),
    st.floats(0.03, 0.1),
)
scores = st.sampled_from([0.0, 0.5, 1.0])


@given(ratings, st.lists(st.tuples(ratings, scores), min_size=1, max_size=15))
def test_every_rating_stays_a_rating(player: Rating, games: list[tuple[Rating, float]]) -> None:
    after = rate(player, games)
    assert math.isfinite(after.rating) and 0 < after.rd <= START.rd
    assert 0 < after.volatility < 1


@given(ratings, ratings)
def test_beating_someone_never_costs_and_losing_never_pays(a: Rating, b: Rating) -> None:
    assert rate(a, [(b, 1.0)]).rating > a.rating
    assert rate(a, [(b, 0.0)]).rating < a.rating


def test_far_apart_players_keep_finite_ratings() -> None:
    strong, weak = Rating(4000, 30), Rating(-1000, 30)
    assert math.isfinite(rate(weak, [(strong, 1.0)]).rating)
    assert math.isfinite(rate(strong, [(weak, 0.0)]).rating)
