"""Liveness: this worker's beat, freeing the seats of workers that died, and standing up
for this worker's own seats after an outage of the store.

A worker killed or crashed cannot mark its connections' seats disconnected, nor end the
grace periods it was timing. Every worker writes a beat (a counter) each third of the
liveness period, and looks, as often, at every worker's beat (one read of the store,
whatever the number of rooms).

A worker is judged dead only by what the judge saw itself: its beat did not change for a
whole liveness period while the judge could reach the store all along. Beats that nobody
could write during an outage of the store are therefore never held against anyone (a TTL
key would have expired then, and every worker would have taken the others for dead). After
an outage, a worker tells the store that its connections still hold their seats
(``Reassert``): one marked gone meanwhile is shown connected again, and one whose seat was
taken by a resume is closed (4000).

Rooms are read only when something may need freeing, not on every beat: all of this
worker's rooms when a worker is found dead (its seats are shown disconnected: a grace
period starts; its spectators are forgotten), a room once when this worker takes it, and
again on each look while it has a seat away (a grace period whose timer may have died with
its worker is ended by whoever notices it overdue) or names a worker with no beat kept.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from ..config import now_ms
from ..context import Context
from ..store.errors import StoreUnavailable
from ..store.health import Health
from .lobby import Lobby
from .updates import Disconnect, DropWatchers, Reassert

__all__ = ["Liveness"]

logger = logging.getLogger("samedeal.server")


#: a worker dead for this many liveness periods has its beat forgotten (the store's list of
#: beats does not grow with every worker that ever ran); one forgotten is still judged dead
#: by any worker that finds it holding a seat (no beat kept: none changes)
FORGET_AFTER = 10


class Liveness:
    """The liveness layer of a worker."""

    def __init__(self, ctx: Context, lobby: Lobby) -> None:
        self.ctx = ctx
        self.lobby = lobby
        #: since when (monotonic) this worker has reached the store without a break
        self.connected_since: float | None = None
        #: each other worker's beat as last seen, and since when it has not changed
        self.seen: dict[str, tuple[str | None, float]] = {}
        #: the workers judged dead at the last look
        self.dead_now: set[str] = set()
        self._read: set[str] = set()  # local rooms read since this worker took them
        self._watched: set[str] = set()  # local rooms read again at every look
        self._strangers: set[str] = set()  # workers rooms name, with no beat kept
        ctx.store.health_hooks.append(self._on_health)

    async def start(self) -> None:
        """Beat once, then keep beating in the background (a store shared by workers)."""
        if self.ctx.config.liveness <= 0 or not self.ctx.store.shared:
            return
        await self.ctx.store.beats.beat()
        self.connected_since = time.monotonic()
        self.ctx.tasks.spawn(self._beats(), "beats")
        self.ctx.tasks.spawn(self._loop(), "liveness")

    def _lost(self) -> None:
        # the dead are judged anew once the store is back: found again, they are reaped
        # again from every room (what happened meanwhile was not seen)
        self.connected_since = None
        self.seen.clear()
        self.dead_now.clear()

    def _on_health(self, health: Health) -> None:
        if not health.ok:
            self._lost()
        elif self.ctx.store.shared:
            self.ctx.tasks.spawn(self.reassert(), "reassert seats")

    async def _beats(self) -> None:
        """Beat on time, whatever else this worker does: the beat has its own loop, so a
        long look through many rooms (after a worker died) never delays it past the
        liveness period — the others would take this worker for dead."""
        liveness = self.ctx.config.liveness
        while True:
            await asyncio.sleep(liveness / 3)
            try:
                await self.ctx.store.beats.beat()
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
                await self.look()
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:
                self._lost()  # told once by the health watch
            except Exception:
                logger.exception("liveness check failed")

    async def look(self) -> None:
        """Judge the workers by their beats, then read the rooms that may need freeing:
        every room of this worker when a worker was found dead since the last look, else
        those not read yet and those watched."""
        beats = await self.ctx.store.beats.latest()
        dead = self.dead(beats)
        await self._forget(beats, dead)
        local = set(self.ctx.rooms.rooms)
        self._read &= local
        self._watched &= local
        if dead - self.dead_now:
            todo = local
            self._strangers.clear()
        else:
            todo = (local - self._read) | self._watched
        self.dead_now = dead
        for room_code in sorted(todo):
            self._read.add(room_code)
            if await self.reap(room_code, beats, dead):
                self._watched.add(room_code)
            else:
                self._watched.discard(room_code)

    def dead(self, beats: dict[str, str]) -> set[str]:
        """Which workers — of ``beats`` (every worker's last beat) and those rooms named
        without one — this worker has seen make no new beat for a whole liveness period,
        while it could reach the store all along."""
        me = self.ctx.worker_id
        workers = (set(beats) | self._strangers) - {me}
        now = time.monotonic()
        liveness = self.ctx.config.liveness
        settled = self.connected_since is not None and now - self.connected_since >= liveness
        for worker in set(self.seen) - workers:
            del self.seen[worker]
        found = set()
        for worker in workers:
            beat = beats.get(worker)
            last = self.seen.get(worker)
            if last is None or last[0] != beat:
                self.seen[worker] = (beat, now)
            elif settled and now - last[1] >= liveness:
                found.add(worker)
        return found

    async def _forget(self, beats: dict[str, str], dead: set[str]) -> None:
        """Forget the beats of workers dead for FORGET_AFTER liveness periods, once every
        room of this worker has been read since they were found dead."""
        if dead - self.dead_now:
            return  # found just now: the rooms are read first
        oldest = time.monotonic() - FORGET_AFTER * self.ctx.config.liveness
        for worker in dead:
            if worker in beats and self.seen[worker][1] < oldest:
                await self.ctx.store.beats.forget(worker)
                logger.info("dead worker forgotten worker=%s", worker)

    async def reap(self, room_code: str, beats: dict[str, str], dead: set[str]) -> bool:
        """Free a room's seats held by ``dead`` workers' connections; end overdue grace
        periods; forget dead workers' spectators. Whether the room is to be read again at
        the next look: a seat is away (its grace period may be nobody's to end), or a
        worker it names has no beat kept (it is judged by the looks to come)."""
        store, config = self.ctx.store, self.ctx.config
        snap = await store.rooms.snapshot(room_code)
        if snap is None:
            return False
        me = self.ctx.worker_id
        # a grace period whose timer died with its worker is ended by whoever notices
        overdue = now_ms() - int((config.grace + config.liveness) * 1000)
        away = False
        for s in snap.room.seats:
            if not s.connected and s.disconnected_at is not None:
                away = True
                if s.disconnected_at < overdue:
                    logger.warning("grace period overdue room=%s seat=%s", room_code, s.seat)
                    await self.lobby.grace_over(room_code, s.seat)
        held = {
            s.seat: s.conn.rsplit("/", 1)[0]
            for s in snap.room.seats
            if s.connected and s.conn and "/" in s.conn
        }
        watching = {w for w in snap.room.watchers if w != me}
        others = {w for w in held.values() if w != me} | watching
        strangers = others - set(beats)
        self._strangers |= strangers
        gone = watching & dead
        if gone:
            logger.warning(
                "spectators of dead workers gone room=%s workers=%s",
                room_code,
                ",".join(sorted(gone)),
            )
            await store.rooms.update(room_code, DropWatchers(frozenset(gone)))
        for seat_no, worker in held.items():
            if worker not in dead:
                continue
            away = True
            conn_id = snap.room.seat(seat_no).conn  # type: ignore[union-attr]
            await store.rooms.update(room_code, Disconnect(seat_no, conn_id, now_ms()))
            logger.warning(
                "seat held by a dead worker room=%s seat=%s worker=%s", room_code, seat_no, worker
            )
            self.lobby.start_grace(room_code, seat_no)
        return away or bool(strangers)

    async def reassert(self) -> None:
        """The store is back: this worker's connections still hold their seats. One shown
        gone meanwhile is shown connected again; one replaced by a resume is closed."""
        rooms = self.ctx.rooms
        for conn in list(rooms.conns.values()):
            room_code, seat = conn.room_code, conn.seat
            if room_code is None or seat is None or conn.role != "player" or conn.closing:
                continue
            try:
                _, holds = await self.ctx.store.rooms.update(
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
            await self.ctx.store.beats.beat()
