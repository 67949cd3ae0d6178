"""The public deal of the day, and deals the solver proves winnable.

The ranked daily challenge does not use this derivation: its deal is drawn from a server
secret and committed before the day (:func:`engine.fair.secret_daily`, ``fair-deals.md``),
because a deal anyone can compute from the date can be solved before it is played. That
derivation shares this module's proof bounds (``DAILY_NODES``, ``DAILY_CANDIDATES``,
``DAILY_PORTFOLIO``). What follows stays for tools and for the ``samedeal daily`` command.

Every worker and every client derives the same deal of the day from the UTC date alone, with
no coordination and no stored state:

1. **Candidates.** For game name ``G`` (``klondike``, ``klondike-3``, ``easy-harp``), UTC date
   ``D`` written ``YYYY-MM-DD`` and ``k = 0, 1, 2, …``: ``h = SHA-256("samedeal-daily:G:D:k")``
   (ASCII); the candidate deal number is ``int.from_bytes(h[0:8], "big") mod 999,999 + 1``, the
   deal code ``DealCode.for_game(G, number)``.
2. **Proof.** The day's deal is the first candidate that :func:`engine.solver.solve` proves
   winnable within a fixed node budget (``DAILY_NODES``; nodes, never seconds, so every
   machine gets the same answer), trying at most ``DAILY_CANDIDATES`` candidates, with the
   searches of ``DAILY_PORTFOLIO``.
3. **Fallback.** If no candidate is proven within those bounds, the day's deal is candidate
   ``k = 0``, marked unverified. For Klondike the bounds make this practically impossible
   (about nine deals in ten are proven within the budget, so all 32 failing has odds far
   below one in 10³⁰); for Easy Harp, whose search is much harder, it can happen.

The Klondike of the day is always draw one (``klondike``, ``KL1-1``), as its rule book says;
the other names are offered for tools. The proof budget makes the derivation depend on the
solver: a change to the solver that proves a candidate it used to miss (or the reverse) can
change a day's deal, so the tests pin golden codes for a few dates. Deciding a day costs up to
one budget per candidate tried (usually one quick solve for Klondike); results are cached.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import random
import secrets
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from .dealcode import GAME_NAMES, MAX_NUMBER, DealCode
from .errors import InvalidDealCodeError
from .solver import Member, SolveResult, solve

__all__ = [
    "DAILY_CANDIDATES",
    "DAILY_NODES",
    "DAILY_PORTFOLIO",
    "DailyDeal",
    "candidate_codes",
    "daily_code",
    "daily_deal",
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
_PREFIX: Final = "samedeal-daily"


@dataclass(frozen=True, slots=True)
class DailyDeal:
    """The deal of the day of one game: its ``code``, which candidate it is (``candidate``
    = ``k``), whether the solver proved it winnable (``verified``) and that proof
    (``result``, the solve that proved it; ``None`` for the fallback)."""

    game: str
    date: dt.date
    code: DealCode
    candidate: int
    verified: bool
    result: SolveResult | None


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


def candidate_codes(
    game_name: str, date: dt.date | dt.datetime | str, count: int
) -> list[DealCode]:
    """The first ``count`` candidates of the day (step 1 of the derivation)."""
    _check_game(game_name)
    day = utc_date(date).isoformat()
    out = []
    for k in range(count):
        digest = hashlib.sha256(f"{_PREFIX}:{game_name}:{day}:{k}".encode("ascii")).digest()
        number = int.from_bytes(digest[:8], "big") % MAX_NUMBER + 1
        out.append(DealCode.for_game(game_name, number))
    return out


def daily_deal(game_name: str, date: dt.date | dt.datetime | str) -> DailyDeal:
    """The deal of the day of ``game_name`` on the UTC ``date`` (a date, an aware or naive-UTC
    datetime, or ``YYYY-MM-DD``), with how it was chosen."""
    _check_game(game_name)
    return _daily(game_name, utc_date(date))


@lru_cache(maxsize=64)
def _daily(game_name: str, day: dt.date) -> DailyDeal:
    codes = candidate_codes(game_name, day, DAILY_CANDIDATES[game_name])
    for k, code in enumerate(codes):
        result = solve(code, nodes=DAILY_NODES[game_name], portfolio=DAILY_PORTFOLIO[game_name])
        if result.verdict == "winnable":
            return DailyDeal(game_name, day, code, k, True, result)
    return DailyDeal(game_name, day, codes[0], 0, False, None)


def daily_code(game_name: str, date: dt.date | dt.datetime | str) -> DealCode:
    """The code of the deal of the day: ``daily_code("klondike", "2025-01-01")``."""
    return daily_deal(game_name, date).code


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
