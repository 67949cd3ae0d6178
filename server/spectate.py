"""Spectators following a player's board live.

A worker keeps one :class:`Follower` per followed seat of a room: a copy of that player's
board, rebuilt from the move log as ``progress`` events say it moved, sent as ``board``
frames to the spectators of this worker who follow it (after the room's spectator delay).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from websockets.asyncio.server import broadcast

from engine import GameError, new_game, replay
from engine.game import Game
from protocol import Follow, frames

from .connection import Conn
from .context import Context
from .room import Refusal, display_code
from .rooms import Event, LocalRoom

__all__ = ["Follower", "Spectate"]

logger = logging.getLogger("samedeal.server")


@dataclass(slots=True)
class Follower:
    """A worker's copy of one player's board, rebuilt from the move log, for spectators."""

    race: int
    game: Game
    applied: int = 0
    spectators: set[Conn] = field(default_factory=set)
    newcomers: set[Conn] = field(default_factory=set)
    dirty: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class Spectate:
    """The spectating layer of a worker."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: room code → followed seat → its follower
        self.followers: dict[str, dict[int, Follower]] = {}
        ctx.rooms.event_hooks.append(self._on_event)
        ctx.rooms.drop_hooks.append(self._on_drop)
        ctx.rooms.detach_hooks.append(self._on_detach)

    async def on_follow(self, conn: Conn, msg: Follow) -> None:
        """``follow``: follow a player's board (``seat: null`` stops)."""
        if conn.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        if conn.role != "spectator":
            raise Refusal("not_spectator", "only spectators who are not racing can follow boards")
        lr = self.ctx.rooms[conn.room_code]
        if conn.following is not None:
            self.unfollow(conn)
        if msg.seat is None:
            return
        if lr.race == 0 or msg.seat not in lr.participants:
            raise Refusal("unknown_seat", f"seat {msg.seat} is not racing")
        followers = self.followers.setdefault(lr.room_code, {})
        f = followers.get(msg.seat)
        if f is None:
            f = Follower(lr.race, new_game(lr.deal_code))
            followers[msg.seat] = f
            f.task = self.ctx.tasks.spawn(self._follow_loop(lr, msg.seat, f), "follow")
        f.spectators.add(conn)
        f.newcomers.add(conn)  # gets the board even if nothing changes
        conn.following = msg.seat
        f.dirty.set()

    def unfollow(self, conn: Conn) -> None:
        """Stop following (the connection leaves, or follows another board)."""
        seat, conn.following = conn.following, None
        followers = self.followers.get(conn.room_code or "")
        f = followers.get(seat) if followers is not None and seat is not None else None
        if f is None or followers is None or seat is None:
            return
        f.spectators.discard(conn)
        if not f.spectators:
            if f.task is not None:
                f.task.cancel()
            del followers[seat]

    def _on_detach(self, conn: Conn) -> None:
        if conn.following is not None:
            self.unfollow(conn)

    def _on_event(self, lr: LocalRoom, event: Event) -> None:
        followers = self.followers.get(lr.room_code)
        if not followers:
            return
        kind = event.get("type")
        if kind == "race_starting":
            for f in followers.values():
                f.dirty.set()
        elif kind == "progress":
            follower = followers.get(event.get("seat", -1))
            if follower is not None:
                follower.dirty.set()

    def _on_drop(self, lr: LocalRoom) -> None:
        for f in self.followers.pop(lr.room_code, {}).values():
            if f.task is not None:
                f.task.cancel()

    async def _follow_loop(self, lr: LocalRoom, seat: int, f: Follower) -> None:
        backend = self.ctx.backend
        while True:
            await f.dirty.wait()
            f.dirty.clear()
            if f.race != lr.race:
                f.race, f.game, f.applied = lr.race, new_game(lr.deal_code), 0
            new = await backend.moves(lr.room_code, f.race, seat, f.applied)
            if new:
                try:
                    f.game.push_all(new)
                    f.applied += len(new)
                except GameError:
                    logger.warning(
                        "follow: log does not replay room=%s seat=%s", lr.room_code, seat
                    )
                    moves = await backend.moves(lr.room_code, f.race, seat)
                    f.game, f.applied = replay(lr.deal_code, moves), len(moves)
            to = set(f.spectators) if new else f.newcomers & f.spectators
            f.newcomers.clear()
            if to:
                self._send_board(lr, seat, f, to)

    def _send_board(self, lr: LocalRoom, seat: int, f: Follower, to: set[Conn]) -> None:
        data = frames.board(
            room=display_code(lr.room_code), seat=seat, race=f.race, view=f.game.player_view()
        )
        if lr.delay:
            asyncio.get_running_loop().call_later(
                lr.delay,
                lambda: broadcast(
                    [c.ws for c in to if c.room_code == lr.room_code], data, text=True
                ),
            )
        else:
            broadcast([c.ws for c in to], data, text=True)
