"""A tournament round's deal, drawn once per worker: by the solver in a process for
winnable-only rounds (started ahead, during the pause before the round), at once otherwise.
Nobody is told it before the round starts (``next_round_deal`` derives it from the
tournament's secret, as docs/fair-deals.md fixes)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ProcessPoolExecutor

from engine.fair import RoundDeal

from ..context import Context
from ..tasks import retrieved, solver_pool, stop_pool
from . import TournamentState, next_round_deal

__all__ = ["RoundDeals"]


class RoundDeals:
    """The deals of the next rounds of the tournaments this worker drives."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._deals: dict[tuple[str, int], asyncio.Future[RoundDeal]] = {}
        self._pool: ProcessPoolExecutor | None = None

    def close(self) -> None:
        """Stop the solver process (a search under way is cut short)."""
        if self._pool is not None:
            stop_pool(self._pool)
            self._pool = None

    def deal_of(self, state: TournamentState) -> asyncio.Future[RoundDeal]:
        """Round ``state.round + 1``'s deal (a failed draw is drawn again)."""
        key = (state.id, state.round + 1)
        found = self._deals.get(key)
        if found is None or (found.done() and found.exception() is not None):
            loop = asyncio.get_running_loop()
            if state.settings.deals == "winnable":
                if self._pool is None:
                    self._pool = solver_pool()
                found = asyncio.ensure_future(
                    loop.run_in_executor(self._pool, next_round_deal, state)
                )
            else:
                found = loop.create_future()
                found.set_result(next_round_deal(state))
            found.add_done_callback(retrieved)
            self._deals[key] = found
            for old in [k for k in self._deals if k[0] == state.id and k[1] < key[1]]:
                del self._deals[old]
        return found

    async def prepare(self, tid: str, number: int) -> None:
        """Start drawing round ``number``'s deal now, if it is the tournament's next."""
        if (tid, number) in self._deals:
            return
        snap = await self.ctx.store.tournaments.load(tid)
        if snap is not None and snap.live.state.round + 1 == number:
            self.deal_of(snap.live.state)
