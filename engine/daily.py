"""The daily challenge's proof bounds, UTC dates, and deals the solver proves winnable.

The deal of the day is drawn from a server secret and committed before the day
(:func:`engine.fair.secret_daily`, ``docs/spec/fair-deals.md``): a deal anyone could compute
from the date could be solved before it is played. (Until December 2026 samedeal derived a
public deal of the day from the date alone; that derivation is gone, and with it the days it
computed: the secret derivation gives other deals for the same dates.) Since version 2 of
``fair-deals.md`` the day's deal is sealed; days drawn before keep their numbered deals and
version 1's bounds (``…_V1``). The proof bounds are here: the day's deal is the first
candidate that :func:`engine.solver.solve` proves winnable within ``DAILY_NODES`` (nodes,
never seconds, so every machine gets the same answer), trying at most ``DAILY_CANDIDATES``
candidates with the searches of ``DAILY_PORTFOLIO``.
"""

from __future__ import annotations

import datetime as dt
import random
import secrets
from typing import Final

from .dealcode import GAME_NAMES, GAME_PREFIXES, SEALED_BYTES, DealCode
from .errors import InvalidDealCodeError
from .solver import Member, SolveResult, solve

__all__ = [
    "DAILY_CANDIDATES",
    "DAILY_CANDIDATES_V1",
    "DAILY_NODES",
    "DAILY_PORTFOLIO",
    "DAILY_PORTFOLIO_V1",
    "random_winnable",
    "utc_date",
]

#: node budget of the proof, per candidate (both versions)
DAILY_NODES: Final = {"klondike": 200_000, "klondike-3": 200_000, "easy-harp": 200_000}
#: how many candidates a (version 2) day tries before falling back to the first: a safety net
#: only. With the solver's own searches, sealed candidates were proven within the budget at
#: 36/40 (Klondike) and 29/40 (Easy Harp), so 32 candidates all unproven is below 1e-12 even
#: at the 95 % upper bound of the failure rate (0.21, 0.41)
DAILY_CANDIDATES: Final = {"klondike": 32, "klondike-3": 32, "easy-harp": 32}
#: the searches of a (version 2) day's proof, per game (None: the solver's own). Pinned: every
#: worker derives the day itself, so a day must not depend on the solver's own portfolio,
#: which changes as the solver learns — a server upgraded during a day would otherwise draw
#: another deal than its published commitment's, and reveal another past day than was played.
#: These are the solver's portfolios of 2026-12-06, before Klondike draw one took restart dives
#: and reduction 10 ("arrangement"), and Easy Harp its aimed searches (issue 34): draw one's
#: members run the search kept for them (``arranged=False``, engine/solver/_klondike_pinned.py).
#: (A change to the search itself can still move a day: it must keep these members' verdicts
#: within ``DAILY_NODES``.)
DAILY_PORTFOLIO: Final[dict[str, tuple[Member, ...] | None]] = {
    "klondike": (Member("best", arranged=False), Member("depth", start=4096, arranged=False)),
    "klondike-3": None,
    "easy-harp": (
        Member("best"),
        Member("depth", start=4096),
        Member("restart", 1, 8192, streamline_every=2),
        Member("best", 1, 2048, streamline=True),
    ),
}
#: version 1's cap, as its days were drawn
DAILY_CANDIDATES_V1: Final = {"klondike": 32, "klondike-3": 32, "easy-harp": 6}
#: version 1's searches: Easy Harp kept the best-first search alone, the one its days were
#: first derived with (the solver's later portfolio proves other candidates, which would have
#: moved past days). Best-first alone proved 23/40 sealed Easy Harp candidates, the solver's
#: own 29/40, so version 2 days use the solver's own
DAILY_PORTFOLIO_V1: Final[dict[str, tuple[Member, ...] | None]] = {
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
    """A random sealed deal of ``game_name`` that the solver proves winnable within ``nodes``
    (for "winnable deals only"). Deals are drawn from 16 bytes of ``rng`` (default: the
    system's secure source; a seeded ``rng`` is for tests) until one is proven; raises
    ``LookupError`` after ``attempts`` draws."""
    _check_game(game_name)
    for _ in range(attempts):
        data = rng.randbytes(SEALED_BYTES) if rng is not None else secrets.token_bytes(SEALED_BYTES)
        code = DealCode.from_bytes(GAME_PREFIXES[game_name], data)
        result = solve(code, nodes=nodes)
        if result.verdict == "winnable":
            return code, result
    raise LookupError(f"no {game_name} deal proven winnable in {attempts} attempts")
