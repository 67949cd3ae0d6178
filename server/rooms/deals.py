"""A casual room's random deals, winnable-only when the room asks (``create`` with
``winnable``): the solver proves the deal before the race starts, in the solver process
that ends with the worker (:func:`server.tasks.solver_pool`, as the daily's proof and a
winnable tournament round's use), never on the event loop.

A winnable deal is the first of up to ``TOURNAMENT_CANDIDATES[game]`` random deals the
solver proves winnable within ``TOURNAMENT_NODES[game]`` nodes — the budget of a
winnable-only tournament round — or, if none is proven (rare: most deals of every game are
proven within a fraction of a second), the last one tried, said to be unproven in the log.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ProcessPoolExecutor

from engine import DealCode
from engine.fair import TOURNAMENT_CANDIDATES, TOURNAMENT_NODES
from engine.solver import solve

from ..tasks import solver_pool, stop_pool

__all__ = ["RandomDeals", "winnable_random"]

logger = logging.getLogger("samedeal.server")


def winnable_random(game: str, nodes: int, tries: int) -> tuple[str, bool]:
    """A random deal of ``game`` the solver proved winnable within ``nodes`` nodes — the first
    of up to ``tries`` drawn — and True; else the last drawn and False. Costs up to one budget
    per deal tried: run it off the event loop."""
    code = DealCode.random(game)
    for tried in range(1, tries + 1):
        result = solve(code, nodes=nodes)
        if result.verdict == "winnable" and result.solution is not None:
            return str(code), True
        if tried < tries:
            code = DealCode.random(game)
    return str(code), False


class RandomDeals:
    """The random deals of a worker's casual rooms (a new room's, a rematch's)."""

    def __init__(self) -> None:
        self._pool: ProcessPoolExecutor | None = None

    async def draw(self, game: str, *, winnable: bool) -> str:
        """A random deal of ``game``, proven winnable first when ``winnable``."""
        if not winnable:
            return str(DealCode.random(game))
        if self._pool is None:
            self._pool = solver_pool()
        loop = asyncio.get_running_loop()
        nodes, tries = TOURNAMENT_NODES[game], TOURNAMENT_CANDIDATES[game]
        code, proven = await loop.run_in_executor(self._pool, winnable_random, game, nodes, tries)
        if not proven:
            logger.warning("no winnable deal proven game=%s tries=%s: one unproven", game, tries)
        return code

    def close(self) -> None:
        """Stop the solver process (a proof under way is cut short)."""
        if self._pool is not None:
            stop_pool(self._pool)
            self._pool = None
