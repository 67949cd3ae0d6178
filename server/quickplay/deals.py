"""Where the pools' deals come from: sealed deals (docs/fair-deals.md: nobody can know one
before it is dealt) that the solver has proven winnable, each dealt to no player twice.

:class:`DealSource` is what the pools ask — "a proven sealed deal of GAME not yet dealt to
these players". The worker's pool of proven deals (:class:`server.proving.deals.ProvenDeals`,
shared with winnable-only rooms) is the one in use.

**Never twice.** A deal may start several races at once (every room of a pool may share
one), but the source keeps whom each deal was dealt to and never deals it to them again.
That is enough: a sealed deal is drawn from 16 random bytes, so no other worker ever holds
the same deal, and a deal that leaves the source is never dealt again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..proving.deals import NoDeal

__all__ = ["DealSource", "NoDeal"]


class DealSource(Protocol):
    """Proven sealed deals for the pools."""

    def warm(self, games: Sequence[str]) -> None:
        """Start proving deals of ``games`` now, before anyone asks."""
        ...

    async def deal_for(self, game: str, players: Sequence[str]) -> str:
        """A proven winnable sealed deal of ``game`` dealt to none of ``players`` (their
        pool keys) before; dealt to them from now on. Raises :class:`NoDeal`."""
        ...

    def deal_again(self, deal: str, players: Sequence[str], *, dry_run: bool = False) -> bool:
        """Deal ``deal`` (one this source dealt) to ``players`` too, if it is still dealt
        and none of them had it (``dry_run``: only say whether it could be)."""
        ...
