"""A casual room's random deals, winnable-only when the room asks (``create`` with
``winnable``): taken from the worker's pool of proven deals (:mod:`server.proving`), which
keeps a few proven ahead of need, or proven on demand when the pool has none — never on the
event loop, and before the race starts.

A winnable deal is a sealed random deal the solver proved winnable within
``TOURNAMENT_NODES[game]`` nodes — the budget of a winnable-only tournament round. Players
who asked for a winnable deal never get one that was not proven: when the pool is empty and
``TOURNAMENT_CANDIDATES[game]`` candidates proven on demand are all left unproven — with
these budgets less likely than 1e-12 (``engine.fair``) — the request is refused
(``no_winnable_deal``) and nothing changes: no room is made, no rematch offered, a solo
game's race goes on. Asking again tries new deals.
"""

from __future__ import annotations

import logging

from engine import DealCode

from ..proving.deals import NoWinnableDeal, ProvenDeals
from .room import Refusal

__all__ = ["RandomDeals"]

logger = logging.getLogger("samedeal.server")


class RandomDeals:
    """The random deals of a worker's casual rooms (a new room's, a rematch's); the
    winnable ones from ``proven``."""

    def __init__(self, proven: ProvenDeals) -> None:
        self.proven = proven

    async def draw(self, game: str, *, winnable: bool) -> str:
        """A random (sealed) deal of ``game``, proven winnable first when ``winnable``.
        Raises :class:`Refusal` (``no_winnable_deal``) when none could be proven."""
        if not winnable:
            return str(DealCode.random(game))
        try:
            return await self.proven.take(game)
        except NoWinnableDeal as exc:
            logger.warning("no winnable deal proven game=%s: %s", game, exc)
            raise Refusal(
                "no_winnable_deal", "no deal was proven winnable: ask again, or play any deal"
            ) from None
