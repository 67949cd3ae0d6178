"""Coalesced progress: a player's moves inside the progress interval store no event; the
latest state is held in the player's outbox and stored once by its timer (or with the next
move after the interval). Held progress that the store could not take is sent again once
the store is back. This module alone reads and writes the outbox: the race layer asks
:meth:`Progress.due` whether a move's progress is shown now, and :meth:`Progress.hold`s it
when not."""

from __future__ import annotations

import asyncio
import logging

from ..context import Context
from ..edge.connection import Player
from ..store.errors import StoreUnavailable
from ..store.health import Health
from ..store.rooms import Fenced
from .room import ProgressState, progress_body

__all__ = ["Progress"]

logger = logging.getLogger("samedeal.server")


class Progress:
    """The held progress of a worker's players."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: players whose held progress could not be stored (the store was unreachable):
        #: sent again once it is back
        self._unsent: set[Player] = set()
        ctx.store.health_hooks.append(self._on_health)

    def _on_health(self, health: Health) -> None:
        if not health.ok:
            return
        unsent, self._unsent = self._unsent, set()
        for player in unsent:
            if player.outbox.held is not None:
                self.ctx.tasks.spawn(self.send(player, leaving=True), "progress again")

    def due(self, player: Player) -> bool:
        """Whether a move of ``player``'s shows its progress now: the first after a quiet
        spell, or one past the interval. Its state then supersedes a held one (the outbox
        timer has nothing left to send), and the interval starts again."""
        outbox = player.outbox
        clock = asyncio.get_running_loop().time()
        if clock - outbox.sent_at < self.ctx.config.progress_interval:
            return False
        if outbox.timer is not None:
            outbox.timer.cancel()
            outbox.timer = None
        outbox.held = None
        outbox.sent_at = clock
        return True

    def hold(self, player: Player, room_code: str, progress: ProgressState, elapsed: int) -> None:
        """Keep the latest progress of a player (reached ``elapsed`` ms into the race) for
        the outbox timer."""
        outbox = player.outbox
        outbox.held, outbox.held_room, outbox.held_elapsed = progress, room_code, elapsed
        if outbox.timer is None:
            # a little after the interval: a player still moving then sends the progress
            # with that move; the timer is for one who stopped (one store call less, and no
            # move waiting at the gate behind a held progress)
            outbox.timer = asyncio.get_running_loop().call_at(
                outbox.sent_at + self.ctx.config.progress_interval * 1.25,
                lambda: self.ctx.tasks.spawn(self.send(player), "progress"),
            )

    async def flush(self, player: Player) -> None:
        """Send a held progress now (the player leaves: their last moves are shown before
        they are shown disconnected)."""
        outbox = player.outbox
        if outbox.held is None:
            return
        if outbox.timer is not None:
            outbox.timer.cancel()
            outbox.timer = None
        await self.send(player, leaving=True)

    async def send(self, player: Player, *, leaving: bool = False) -> None:
        """Store and publish the latest held ``progress`` of a player (a move of theirs may
        be in flight: the gate lets it land first, so the event is its latest state). A
        status change meanwhile (won, resigned, disconnected) makes the store refuse it."""
        outbox = player.outbox
        async with outbox.gate:
            outbox.timer = None
            held, outbox.held = outbox.held, None
            room_code, elapsed = outbox.held_room, outbox.held_elapsed
            if held is None or player.room_code != room_code or player.seat != held.seat:
                return
            if player.closing and not leaving:
                return
            outbox.sent_at = asyncio.get_running_loop().time()
            body = progress_body(room_code, held, "playing", elapsed)
            try:
                await self.ctx.store.rooms.append(
                    room_code,
                    held.race,
                    held.seat,
                    move=None,
                    progress=held,
                    events=[body],
                    epoch=player.epoch,
                )
            except Fenced:
                self.ctx.rooms.replaced(player)
            except StoreUnavailable:
                # kept, to be sent once the store is back (unless a newer one is held)
                if outbox.held is None:
                    outbox.held, outbox.held_room, outbox.held_elapsed = held, room_code, elapsed
                self._unsent.add(player)
            except Exception:
                logger.warning(
                    "could not send progress room=%s seat=%s",
                    room_code,
                    held.seat,
                    exc_info=True,
                )
