"""The daily challenge's proof bounds, UTC dates, and deals the solver proves winnable.

The deal of the day is drawn from a server secret and committed before the day
(:func:`engine.fair.secret_daily`, ``docs/spec/fair-deals.md``): a deal anyone could compute
from the date could be solved before it is played. (Until December 2026 samedeal derived a
public deal of the day from the date alone; that derivation is gone, and with it the days it
computed: the secret derivation gives other deals for the same dates.) The proof bounds are
here: the day's deal is the first candidate that :func:`engine.solver.solve` proves winnable
within ``DAILY_NODES`` (nodes, never seconds, so every machine gets the same answer), trying
at most ``DAILY_CANDIDATES`` candidates with the searches of ``DAILY_PORTFOLIO``.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
from typing import Final

from .dealcode import GAME_NAMES, MAX_NUMBER, DealCode
from .errors import InvalidDealCodeError
from .solver import Member, SolveResult, solve

__all__ = [
    "DAILY_CANDIDATES",
    "DAILY_NODES",
    "DAILY_PORTFOLIO",
    "random_winnable",
    "utc_date",
]

#: node budget of the proof, per candidate
DAILY_NODES: Final = {"klondike": 200_000, "klondike-3": 200_000, "easy-harp": 200_000}
#: how many candidates are tried before falling back to the first
DAILY_CANDIDATES: Final = {"klondike": 32, "klondike-3": 32, "easy-harp": 6}
#: the searches of the proof, per game (None: the solver's own). Easy Harp keeps the
#: best-first search alone, the one its days were first derived with: the solver's later
#: portfolio proves other candidates, which would have moved past days
DAILY_PORTFOLIO: Final[dict[str, tuple[Member, ...] | None]] = {
    "klondike": None,
    "klondike-3": None,
    "easy-harp": (Member("best"),),
}


def utc_date(date: dt.date | dt.datetime | str) -> dt.date:
    """The UTC date of a date, an aware (or naive-UTC) datetime, or ``YYYY-MM-DD`` text;
    ``ValueError`` for text that is not a date."""
    if isinstance(date, str):
        try:
            return dt.date.fromisoformat(date.strip())
        except ValueError:
            raise ValueError(f"not a date (YYYY-MM-DD): {date!r}") from None
    if isinstance(date, dt.datetime):
        if date.tzinfo is not None:
            date = date.astimezone(dt.UTC)
        return date.date()
    return date


def _check_game(game_name: str) -> None:
    if game_name not in GAME_NAMES:
        raise InvalidDealCodeError(
            game_name, "game", f"unknown game {game_name!r} (one of {', '.join(GAME_NAMES)})"
        )


def random_winnable(
    game_name: str,
    *,
    nodes: int = 100_000,
    attempts: int = 50,
    rng: random.Random | None = None,
) -> tuple[DealCode, SolveResult]:
    """A random deal of ``game_name`` that the solver proves winnable within ``nodes``
    (for "winnable deals only"). Deals are drawn with ``rng`` (default: the system's secure
    source) until one is proven; raises ``LookupError`` after ``attempts`` draws."""
    _check_game(game_name)
    for _ in range(attempts):
        number = 1 + (
            rng.randrange(MAX_NUMBER) if rng is not None else secrets.randbelow(MAX_NUMBER)
        )
        code = DealCode.for_game(game_name, number)
        result = solve(code, nodes=nodes)
        if result.verdict == "winnable":
            return code, result
    raise LookupError(f"no {game_name} deal proven winnable in {attempts} attempts")
