"""What the board rule (:func:`server.rooms.view.boards_shown`) needs to know of a viewer's
identity, looked up in the stores: whether it is entered in the tournament whose round a
room plays, and whether it has finished its own attempt at the day's deal a room plays.

A connection's answers are kept on it (:attr:`Conn.entered`, :attr:`Conn.attempt_done`)
when it comes into a room, so that the rule can be asked for every frame it is sent without
a store's round trip, and looked up again when it asks to follow boards. The tournament is
read from the live store, which every worker shares: an identity entered in it is refused
the round's boards whichever connection, and whichever worker, it comes through.
"""

from __future__ import annotations

import logging

from ..context import Context
from ..edge.connection import Conn
from ..records.daily import OPEN_STATUSES
from ..rooms.room import RoomState
from ..store.errors import StoreUnavailable

__all__ = ["look_up"]

logger = logging.getLogger("samedeal.server")


async def look_up(ctx: Context, conn: Conn, room: RoomState, now: int) -> None:
    """Set what the board rule reads of ``conn``'s identity in ``room`` (server ms ``now``).
    Nothing to look up outside a secret race (nothing then depends on the identity); an
    identity that cannot be looked up is taken as entered and not done — hidden boards are
    the safe side."""
    conn.entered = conn.attempt_done = False
    player = conn.player_id
    if player is None or room.secret_until is None or now >= room.secret_until:
        return
    if room.tournament is not None:
        try:
            found = await ctx.store.tournaments.load(room.tournament)
        except StoreUnavailable:
            conn.entered = True
            return
        conn.entered = found is None or player in found.live.state.players
        return
    records = ctx.records
    if records is None or room.daily_day is None:
        return
    try:
        entry = await records.daily.own_entry(room.game, room.daily_day, player)
    except Exception:
        logger.warning("could not read a daily attempt room=%s", room.code, exc_info=True)
        return
    conn.attempt_done = entry is not None and entry.status not in OPEN_STATUSES
