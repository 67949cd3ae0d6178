"""A tournament round's deal, drawn once per worker: by the solver in the worker's solver
process (server.proving) for winnable-only rounds (started ahead, during the pause before the
round, urgent), at once otherwise.
Nobody is told it before the round starts (``next_round_deal`` derives it from the
tournament's secret, as docs/fair-deals.md fixes)."""

from __future__ import annotations

import asyncio

from engine.fair import RoundDeal

from ..context import Context
from ..proving.process import Prover
from ..tasks import retrieved
from . import TournamentState, next_round_deal

__all__ = ["RoundDeals"]


class RoundDeals:
    """The deals of the next rounds of the tournaments this worker drives."""

    def __init__(self, ctx: Context, prover: Prover) -> None:
        self.ctx = ctx
        self.prover = prover
        self._deals: dict[tuple[str, int], asyncio.Future[RoundDeal]] = {}

    def close(self) -> None:
        """Let the draws under way go (the prover is closed with the worker)."""
        for found in self._deals.values():
            found.cancel()

    def deal_of(self, state: TournamentState) -> asyncio.Future[RoundDeal]:
        """Round ``state.round + 1``'s deal (a failed draw is drawn again)."""
        key = (state.id, state.round + 1)
        found = self._deals.get(key)
        if found is None or (found.done() and found.exception() is not None):
            if state.settings.deals == "winnable":
                # unbounded while it runs: every server must choose the same candidate
                proof = self.prover.run(next_round_deal, state, urgent=True, bounded=False)
                found = asyncio.ensure_future(proof)
            else:
                found = asyncio.get_running_loop().create_future()
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
