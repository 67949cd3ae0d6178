"""A casual room's random deals, winnable-only when the room asks (``create`` with
``winnable``): the solver proves the deal before the race starts, in the solver process
that ends with the worker (:func:`server.tasks.solver_pool`, as the daily's proof and a
winnable tournament round's use), never on the event loop.

A winnable deal is the first of up to ``TOURNAMENT_CANDIDATES[game]`` sealed random deals
the solver proves winnable within ``TOURNAMENT_NODES[game]`` nodes — the budget of a
winnable-only tournament round (:func:`engine.daily.random_winnable` draws and proves them).
Players who asked for a winnable deal never get one that was not proven: when every deal
tried is left unproven — with these budgets less likely than 1e-12 (``engine.fair``) — the
request is refused (``no_winnable_deal``) and nothing changes: no room is made, no rematch
offered, a solo game's race goes on. Asking again draws new deals.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ProcessPoolExecutor
from functools import partial

from engine import DealCode
from engine.daily import random_winnable
from engine.fair import TOURNAMENT_CANDIDATES, TOURNAMENT_NODES

from ..tasks import solver_pool, stop_pool
from .room import Refusal

__all__ = ["RandomDeals"]

logger = logging.getLogger("samedeal.server")


class RandomDeals:
    """The random deals of a worker's casual rooms (a new room's, a rematch's).

    ``nodes`` and ``tries``: the solver's budget per deal and the deals tried before giving
    up, for every game (default: a winnable tournament round's, per game)."""

    def __init__(self, *, nodes: int | None = None, tries: int | None = None) -> None:
        self._pool: ProcessPoolExecutor | None = None
        self.nodes, self.tries = nodes, tries

    async def draw(self, game: str, *, winnable: bool) -> str:
        """A random (sealed) deal of ``game``, proven winnable first when ``winnable``.
        Raises :class:`Refusal` (``no_winnable_deal``) when none could be proven."""
        if not winnable:
            return str(DealCode.random(game))
        if self._pool is None:
            self._pool = solver_pool()
        nodes = self.nodes or TOURNAMENT_NODES[game]
        tries = self.tries or TOURNAMENT_CANDIDATES[game]
        prove = partial(random_winnable, game, nodes=nodes, attempts=tries)
        try:
            code, _ = await asyncio.get_running_loop().run_in_executor(self._pool, prove)
        except LookupError:
            logger.warning("no winnable deal proven game=%s tries=%s nodes=%s", game, tries, nodes)
            raise Refusal(
                "no_winnable_deal",
                f"no deal was proven winnable in {tries} tries: ask again, or play any deal",
            ) from None
        return str(code)

    def close(self) -> None:
        """Stop the solver process (a proof under way is cut short)."""
        if self._pool is not None:
            stop_pool(self._pool)
            self._pool = None
