"""Liveness: this worker's beat, freeing the seats of workers that died, and standing up
for this worker's own seats after an outage of the store.

A worker killed or crashed cannot mark its connections' seats disconnected, nor end the
grace periods it was timing. Every worker writes a beat (a counter) each third of the
liveness period, and every worker with connections in a room looks, as often, for seats
held by connections of dead workers (shown disconnected: a grace period starts) and for
grace periods whose timer died with its worker.

A worker is judged dead only by what the judge saw itself: its beat did not change for a
whole liveness period while the judge could reach the store all along. Beats that nobody
could write during an outage of the store are therefore never held against anyone (a TTL
key would have expired then, and every worker would have taken the others for dead). After
an outage, a worker tells the store that its connections still hold their seats
(``Reassert``): one marked gone meanwhile is shown connected again, and one whose seat was
taken by a resume is closed (4000).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from .backend import Health, StoreUnavailable
from .config import now_ms
from .context import Context
from .lobby import Lobby
from .updates import Disconnect, DropWatchers, Reassert

__all__ = ["Liveness"]

logger = logging.getLogger("samedeal.server")


class Liveness:
    """The liveness layer of a worker."""

    def __init__(self, ctx: Context, lobby: Lobby) -> None:
        self.ctx = ctx
        self.lobby = lobby
        #: since when (monotonic) this worker has reached the store without a break
        self.connected_since: float | None = None
        #: each other worker's beat as last seen, and since when it has not changed
        self.seen: dict[str, tuple[str | None, float]] = {}
        ctx.backend.health_hooks.append(self._on_health)

    async def start(self) -> None:
        """Beat once, then keep beating in the background (a store shared by workers)."""
        if self.ctx.config.liveness <= 0 or not self.ctx.backend.shared:
            return
        await self.ctx.backend.beat()
        self.connected_since = time.monotonic()
        self.ctx.tasks.spawn(self._beats(), "beats")
        self.ctx.tasks.spawn(self._loop(), "liveness")

    def _lost(self) -> None:
        self.connected_since = None
        self.seen.clear()

    def _on_health(self, health: Health) -> None:
        if not health.ok:
            self._lost()
        elif self.ctx.backend.shared:
            self.ctx.tasks.spawn(self.reassert(), "reassert seats")

    async def _beats(self) -> None:
        """Beat on time, whatever else this worker does: the beat has its own loop, so a
        long look through many rooms (a tournament's rounds put sixty on a worker) never
        delays it past the liveness period — the others would take this worker for dead."""
        liveness = self.ctx.config.liveness
        while True:
            await asyncio.sleep(liveness / 3)
            try:
                await self.ctx.backend.beat()
                if self.connected_since is None:
                    self.connected_since = time.monotonic()
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:
                self._lost()  # told once by the health watch
            except Exception:
                logger.exception("beat failed")

    async def _loop(self) -> None:
        liveness = self.ctx.config.liveness
        while True:
            await asyncio.sleep(liveness / 3)
            try:
                for room_code in list(self.ctx.rooms.rooms):
                    await self.reap(room_code)
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:
                self._lost()  # told once by the health watch
            except Exception:
                logger.exception("liveness check failed")

    async def dead(self, workers: set[str]) -> set[str]:
        """Which of ``workers`` this worker has seen make no beat for a whole liveness
        period, while it could reach the store all along."""
        beats = await self.ctx.backend.beats(workers)
        now = time.monotonic()
        liveness = self.ctx.config.liveness
        settled = self.connected_since is not None and now - self.connected_since >= liveness
        found = set()
        for worker in workers:
            beat = beats.get(worker)
            last = self.seen.get(worker)
            if last is None or last[0] != beat:
                self.seen[worker] = (beat, now)
            elif settled and now - last[1] >= liveness:
                found.add(worker)
        return found

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
        dead = await self.dead(others)
        if watching & dead:
            logger.warning(
                "spectators of dead workers gone room=%s workers=%s",
                room_code,
                ",".join(sorted(watching & dead)),
            )
            await backend.update_room(room_code, DropWatchers(frozenset(watching & dead)))
        for seat_no, worker in held.items():
            if worker not in dead:
                continue
            conn_id = snap.room.seat(seat_no).conn  # type: ignore[union-attr]
            await backend.update_room(room_code, Disconnect(seat_no, conn_id, now_ms()))
            logger.warning(
                "seat held by a dead worker room=%s seat=%s worker=%s", room_code, seat_no, worker
            )
            self.lobby.start_grace(room_code, seat_no)

    async def reassert(self) -> None:
        """The store is back: this worker's connections still hold their seats. One shown
        gone meanwhile is shown connected again; one replaced by a resume is closed."""
        rooms = self.ctx.rooms
        for conn in list(rooms.conns.values()):
            room_code, seat = conn.room_code, conn.seat
            if room_code is None or seat is None or conn.role != "player" or conn.closing:
                continue
            try:
                _, holds = await self.ctx.backend.update_room(
                    room_code, Reassert(seat, conn.id, conn.epoch, now_ms())
                )
            except StoreUnavailable:
                return  # lost again: the next return of the store tries again
            except Exception:
                logger.exception("could not reassert seat room=%s seat=%s", room_code, seat)
                continue
            if not holds:
                logger.info(
                    "seat taken meanwhile: closing room=%s seat=%s conn=%s",
                    room_code,
                    seat,
                    conn.id,
                )
                conn.seat, conn.role = None, None
                rooms.close(conn, 4000, "replaced by a new connection")
        with contextlib.suppress(StoreUnavailable):
            await self.ctx.backend.beat()
