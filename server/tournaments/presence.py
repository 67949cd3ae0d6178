"""Who is present in a tournament: the identified players with a connection to it on some
worker. Each worker marks its own players in the store with a time (``PresenceMarks.mark``) and
renews the marks; a worker that dies stops renewing, and its players count as gone once
their marks are older than :attr:`~server.tournaments.rounds.RoundRunner.present_for`. A
round seats only the entered players present at its start."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping

from ..config import now_ms
from ..context import Context
from ..store.errors import StoreUnavailable

__all__ = ["Presence"]

logger = logging.getLogger("samedeal.server")


class Presence:
    """This worker's present players, per tournament, and their marks in the store."""

    def __init__(self, ctx: Context, every: float) -> None:
        self.ctx = ctx
        self.every = every
        #: tournament → identified player → how many connections here
        self._counts: dict[str, dict[str, int]] = {}

    def here(self, tid: str) -> Mapping[str, int]:
        """The players of tournament ``tid`` with a connection here."""
        return self._counts.get(tid, {})

    def change(self, tid: str, player: str, delta: int) -> None:
        """Count a connection of ``player`` more or fewer here; tell the store when the
        player comes or goes (what it is told is the count when the call runs, so calls
        that overtake each other still leave it right)."""
        counts = self._counts.setdefault(tid, {})
        count = counts.get(player, 0) + delta
        if count > 0:
            counts[player] = count
        else:
            counts.pop(player, None)
            if not counts:
                del self._counts[tid]
        if count in (0, 1):
            self.ctx.tasks.spawn(self._tell(tid, player), "tournament presence")

    async def _tell(self, tid: str, player: str) -> None:
        with contextlib.suppress(StoreUnavailable):
            if player in self.here(tid):
                await self.ctx.store.presence.mark(tid, [player], now_ms())
            else:
                await self.ctx.store.presence.drop(tid, [player])

    async def renew(self) -> None:
        """Renew this worker's marks every ``every`` seconds, for as long as it runs."""
        while True:
            await asyncio.sleep(self.every)
            for tid, counts in list(self._counts.items()):
                try:
                    await self.ctx.store.presence.mark(tid, list(counts), now_ms())
                except StoreUnavailable:
                    break
                except Exception:
                    logger.exception("could not renew presence tournament=%s", tid)
