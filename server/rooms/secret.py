"""The deals that are secret now, which no room may be made on: today's deal of the day
(any of today's candidates, whichever the proof picks) and the deal of every tournament
round being played. A typed code that is one of them is refused as any code the server will
not play is (``bad_deal``), so the refusal confirms nothing about the code."""

from __future__ import annotations

from engine import DealCode, GameError

from ..context import Context
from ..daily.challenge import Daily
from ..tournaments.live import deal_digest
from .room import Refusal

__all__ = ["NOT_PLAYABLE", "refuse_secret"]

NOT_PLAYABLE = "this deal cannot be played now: choose another"
"""The sentence of every refused typed code that parses (the same for every reason)."""


async def refuse_secret(ctx: Context, daily: Daily, deal: str) -> None:
    """Raise :class:`Refusal` (``bad_deal``) when ``deal`` (a canonical code) is secret
    now. Reads the running tournaments' summaries (two reads of the store)."""
    try:
        deal_code = DealCode.parse(deal)
    except GameError:
        return  # not a code at all: the caller's parse says what is wrong with it
    if daily.candidate_today(deal_code):
        raise Refusal("bad_deal", NOT_PLAYABLE)
    ids = await ctx.store.tournaments.active()
    if ids:
        digest = deal_digest(str(deal_code))
        if any(s.deal_digest == digest for s in await ctx.store.tournaments.summaries(ids)):
            raise Refusal("bad_deal", NOT_PLAYABLE)
