"""Writing a tournament to the records store: players, rounds, results with their move
lists, the audit log — then marking the live state written, so the driver knows what is
left to write (a worker killed before the mark makes the next driver write it again; the
records store takes a tournament written twice as once)."""

from __future__ import annotations

import logging

from ..context import Context
from .updates import Recorded

__all__ = ["record_tournament"]

logger = logging.getLogger("samedeal.server")


async def record_tournament(ctx: Context, tid: str, rounds: int = 0) -> None:
    """Write the tournament to the records store, then mark the state written (and
    ``rounds``' races); a store that refuses leaves it to the driver's next look."""
    tournaments = ctx.store.tournaments
    snap = await tournaments.load(tid)
    if snap is None:
        return
    records = ctx.records
    if records is not None:
        moves = await tournaments.round_moves(tid)
        try:
            await records.tournaments.save(snap.live, moves)
        except Exception:
            logger.warning(
                "tournament not written to the records tournament=%s", tid, exc_info=True
            )
            return
    await tournaments.update(tid, Recorded(snap.live.state.version, rounds))
