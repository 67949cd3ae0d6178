"""The end of a race: a seat's final status stored with its last progress and
``player_finished``, the race ended once every participant has finished, and the time limit
that finishes whoever still plays.

Every worker with a connection in a room arms the room's timer; the store makes the outcome
the same whichever worker's timer fires first (:class:`~server.updates.EndIfDone`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from engine import replay
from engine.game import Game
from protocol import FinalStatus, RaceStatus, frames

from ..codes import display_code
from ..config import now_ms
from ..context import Context
from ..store.rooms import Snapshot
from .registry import Event, LocalRoom
from .room import ProgressState, RoomState, progress_body
from .updates import EndIfDone

__all__ = ["RaceEnd", "finished_body", "progress_state"]

logger = logging.getLogger("samedeal.server")


def progress_state(
    race: int, seat: int, status: RaceStatus, game: Game, elapsed: int | None
) -> ProgressState:
    """A seat's progress as its game stands."""
    return ProgressState(
        race=race,
        seat=seat,
        status=status,
        on_foundations=game.on_foundations,
        total=game.total,
        score=game.score,
        moves=game.moves,
        elapsed_ms=elapsed,
    )


def finished_body(
    room_code: str,
    race: int,
    seat: int,
    status: FinalStatus,
    elapsed: int,
    game: Game,
    times: list[int | None],
    secret_until: int | None,
) -> frames.PlayerFinishedBody:
    """The ``player_finished`` event of a seat whose game is ``game`` (``secret_until``:
    the day's secret deal is told to nobody before then)."""
    known = len(times) == len(game.actions) and None not in times
    return frames.player_finished(
        room=display_code(room_code),
        race=race,
        seat=seat,
        status=status,
        elapsed_ms=elapsed,
        move_list=game.move_list(),
        board=game.player_view(),
        deal=str(game.code),  # delivered to the finished player only
        times_ms=[t for t in times if t is not None] if known else None,
        secret_until=secret_until,
    )


class RaceEnd:
    """Finishing seats and ending races, for the race, lobby and tournament layers."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: told of each race that ends, once, by the worker that ended it
        self.end_hooks: list[Callable[[str, Snapshot], Coroutine[Any, Any, None]]] = []
        ctx.rooms.event_hooks.append(self._on_event)

    async def finish(
        self,
        room_code: str,
        race: int,
        seat: int,
        status: FinalStatus,
        elapsed: int,
        game: Game,
        *,
        epoch: int | None = None,
        secret_until: int | None = None,
    ) -> bool:
        """Store a seat's final status with its last progress and ``player_finished``;
        False if the seat was no longer racing. ``epoch``: the holder's (a player's own
        act); None for the server's (time-out, grace period)."""
        progress = progress_state(race, seat, status, game, elapsed)
        times = await self.ctx.store.rooms.times(room_code, race, seat)
        events: list[frames.EventBody] = [
            progress_body(room_code, progress, status, elapsed),
            finished_body(room_code, race, seat, status, elapsed, game, times, secret_until),
        ]
        stored = await self.ctx.store.rooms.append(
            room_code, race, seat, move=None, progress=progress, events=events, epoch=epoch
        )
        return stored is not None

    async def finish_from_log(
        self, room_code: str, room: RoomState, seat: int, status: FinalStatus, at: int
    ) -> bool:
        """Finish a seat whose game is not on this worker (time-out, a player gone), from
        its stored move log."""
        moves = await self.ctx.store.rooms.moves(room_code, room.race, seat)
        game = replay(room.deal, moves)
        elapsed = max(0, min(at, room.deadline or at) - (room.start_at or at))
        return await self.finish(
            room_code, room.race, seat, status, elapsed, game, secret_until=room.secret_until
        )

    async def check_end(self, room_code: str) -> None:
        """End the race if every participant has finished."""
        snap, ended = await self.ctx.store.rooms.update(room_code, EndIfDone(now_ms()))
        if ended:
            logger.info("race ended room=%s race=%s", room_code, snap.room.race)
            for hook in self.end_hooks:
                self.ctx.tasks.spawn(hook(room_code, snap), f"race ended {room_code}")

    # ------------------------------------------------------------------ time limit

    def _on_event(self, local: LocalRoom, event: Event) -> None:
        kind = event.get("type")
        if kind == "race_starting":
            self.arm_timer(local)
        elif kind == "race_ended" and local.timer is not None and local.phase == "ended":
            local.timer.cancel()
            local.timer = None

    def arm_timer(self, local: LocalRoom) -> None:
        """Time the race out at its deadline (every worker with a connection in the room
        does; the store makes the outcome the same)."""
        if local.timer is not None:
            local.timer.cancel()
            local.timer = None
        if local.phase != "running" or local.deadline is None:
            return
        delay = max(0.0, (local.deadline - now_ms()) / 1000)
        room_code, race = local.room_code, local.race
        local.timer = asyncio.get_running_loop().call_later(
            delay + 0.01,
            lambda: self.ctx.tasks.spawn(self.expire(room_code, race), f"expire {room_code}"),
        )

    async def expire(self, room_code: str, race: int) -> None:
        """The time limit of race ``race`` has passed: time out whoever still plays."""
        snap = await self.ctx.store.rooms.snapshot(room_code)
        if snap is None or snap.room.race != race or snap.room.phase != "running":
            return
        room = snap.room
        if room.deadline is None or now_ms() < room.deadline:
            return
        for seat, p in sorted(snap.progress.items()):
            if p.race == race and p.status == "playing":
                await self.finish_from_log(room_code, room, seat, "timeout", room.deadline)
        await self.check_end(room_code)
