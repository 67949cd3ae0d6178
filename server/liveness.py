"""Liveness: this worker's heartbeat, and freeing the seats of workers that died.

A worker killed or crashed cannot mark its connections' seats disconnected, nor end the
grace periods it was timing. Every worker with connections in a room looks, each third of
the liveness period, for seats held by connections of dead workers (shown disconnected: a
grace period starts) and for grace periods whose timer died with its worker.
"""

from __future__ import annotations

import asyncio
import logging

from .config import now_ms
from .context import Context
from .lobby import Lobby
from .updates import (
    Disconnect,
    DropWatchers,
)

__all__ = ["Liveness"]

logger = logging.getLogger("samedeal.server")


class Liveness:
    """The liveness layer of a worker."""

    def __init__(self, ctx: Context, lobby: Lobby) -> None:
        self.ctx = ctx
        self.lobby = lobby

    async def start(self) -> None:
        """Beat once, then keep beating in the background."""
        liveness = self.ctx.config.liveness
        if liveness <= 0:
            return
        await self.ctx.backend.heartbeat(liveness)
        self.ctx.tasks.spawn(self._loop(), "liveness")

    async def _loop(self) -> None:
        liveness = self.ctx.config.liveness
        while True:
            await asyncio.sleep(liveness / 3)
            try:
                await self.ctx.backend.heartbeat(liveness)
                for room_code in list(self.ctx.rooms.rooms):
                    await self.reap(room_code)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("liveness check failed")

    async def reap(self, room_code: str) -> None:
        """Free a room's seats held by dead workers' connections; end overdue grace
        periods; forget dead workers' spectators."""
        backend, config = self.ctx.backend, self.ctx.config
        snap = await backend.snapshot(room_code)
        if snap is None:
            return
        me = self.ctx.worker_id
        # a grace period whose timer died with its worker is ended by whoever notices
        overdue = now_ms() - int((config.grace + config.liveness) * 1000)
        for s in snap.room.seats:
            if not s.connected and s.disconnected_at is not None and s.disconnected_at < overdue:
                logger.warning("grace period overdue room=%s seat=%s", room_code, s.seat)
                await self.lobby.grace_over(room_code, s.seat)
        held = {
            s.seat: s.conn.rsplit("/", 1)[0]
            for s in snap.room.seats
            if s.connected and s.conn and "/" in s.conn
        }
        watching = {w for w in snap.room.watchers if w != me}
        others = {w for w in held.values() if w != me} | watching
        if not others:
            return
        alive = await backend.alive(others)
        if watching - alive:
            logger.warning(
                "spectators of dead workers gone room=%s workers=%s",
                room_code,
                ",".join(sorted(watching - alive)),
            )
            await backend.update_room(room_code, DropWatchers(frozenset(watching - alive)))
        for seat_no, worker in held.items():
            if worker == me or worker in alive:
                continue
            conn_id = snap.room.seat(seat_no).conn  # type: ignore[union-attr]
            await backend.update_room(room_code, Disconnect(seat_no, conn_id, now_ms()))
            logger.warning(
                "seat held by a dead worker room=%s seat=%s worker=%s", room_code, seat_no, worker
            )
            self.lobby.start_grace(room_code, seat_no)
