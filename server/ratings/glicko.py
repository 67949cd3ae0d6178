"""The Glicko-2 rating system (Mark E. Glickman, "Example of the Glicko-2 system"), pure.

A player's strength is a :class:`Rating`: the rating ``r`` (1500 to start), its deviation
``RD`` (350 to start: how unsure the rating is) and the volatility ``σ`` (0.06 to start: how
erratic the player's results are). The games of a *rating period* count as played at once:
:func:`rate` takes a player's rating before the period and each game's opponent (as they
stood before it too) and score (1 win, ½ draw, 0 loss), and returns the rating after it.

The steps follow the paper, on its internal scale (``μ = (r − 1500) / 173.7178``,
``φ = RD / 173.7178``): the estimated variance ``v`` of the rating from the results alone,
the estimated improvement ``Δ``, the new volatility by the Illinois algorithm (step 5), the
pre-period deviation widened by it (``φ*``), then the new ``φ′`` and ``μ′``. Two guards the
paper leaves to the administrator: an expected score is kept a hair inside (0, 1), so that
``v`` stays finite between players thousands of points apart, and a deviation never exceeds
the starting one (:data:`START`'s 350, as in Glicko).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "EPSILON",
    "SCALE",
    "START",
    "TAU",
    "Rating",
    "expected",
    "g",
    "new_volatility",
    "rate",
]

SCALE = 173.7178
"""Rating points per unit of the Glicko-2 scale."""

TAU = 0.5
"""The system constant τ: how fast the volatility may change (the paper suggests 0.3–1.2;
its example uses 0.5)."""

EPSILON = 0.000001
"""The convergence tolerance of the volatility's iteration (the paper's)."""

_EDGE = 1e-9  # an expected score stays within (_EDGE, 1 - _EDGE)


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating ``rating`` ± ``rd`` (rating points) and volatility."""

    rating: float = 1500.0
    rd: float = 350.0
    volatility: float = 0.06

    @property
    def mu(self) -> float:
        """The rating on the Glicko-2 scale."""
        return (self.rating - 1500.0) / SCALE

    @property
    def phi(self) -> float:
        """The deviation on the Glicko-2 scale."""
        return self.rd / SCALE

    @classmethod
    def from_scale(cls, mu: float, phi: float, volatility: float) -> Rating:
        """The rating of ``μ``, ``φ`` and ``σ`` on the Glicko-2 scale (step 8)."""
        return cls(SCALE * mu + 1500.0, min(SCALE * phi, START.rd), volatility)


START = Rating()
"""An unrated player's rating: 1500, RD 350, volatility 0.06 (the paper's step 1)."""


def g(phi: float) -> float:
    """How much a game against an opponent with deviation ``φ`` tells (1: fully)."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def expected(mu: float, mu_j: float, phi_j: float) -> float:
    """The expected score of a player at ``μ`` against an opponent at ``μ_j`` ± ``φ_j``."""
    e = 1.0 / (1.0 + math.exp(-g(phi_j) * (mu - mu_j)))
    return min(1.0 - _EDGE, max(_EDGE, e))


def new_volatility(sigma: float, phi: float, v: float, delta: float, tau: float = TAU) -> float:
    """Step 5: the volatility ``σ′``, the root of the paper's ``f`` found by the Illinois
    algorithm (a regula falsi that halves the stale end's value)."""
    a = math.log(sigma * sigma)
    rest = phi * phi + v

    def f(x: float) -> float:
        exp_x = math.exp(x)
        return exp_x * (delta * delta - rest - exp_x) / (2.0 * (rest + exp_x) ** 2) - (x - a) / (
            tau * tau
        )

    big_a = a
    if delta * delta > rest:
        big_b = math.log(delta * delta - rest)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def rate(player: Rating, games: Sequence[tuple[Rating, float]], tau: float = TAU) -> Rating:
    """The rating after one rating period in which ``player`` played ``games``: each an
    opponent's rating before the period and the score (1, 0.5 or 0). Without games only
    the deviation grows (the paper's rule for a player who did not compete)."""
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not games:
        return Rating.from_scale(mu, math.sqrt(phi * phi + sigma * sigma), sigma)
    information = 0.0  # 1 / v
    surprise = 0.0  # Σ g(φ_j)(s_j − E_j): Δ / v
    for opponent, score in games:
        g_j = g(opponent.phi)
        e_j = expected(mu, opponent.mu, opponent.phi)
        information += g_j * g_j * e_j * (1.0 - e_j)
        surprise += g_j * (score - e_j)
    v = 1.0 / information
    sigma_new = new_volatility(sigma, phi, v, v * surprise, tau)
    phi_star = math.sqrt(phi * phi + sigma_new * sigma_new)
    phi_new = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + information)
    return Rating.from_scale(mu + phi_new * phi_new * surprise, phi_new, sigma_new)
