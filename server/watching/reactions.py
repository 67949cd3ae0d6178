"""Reactions: a fixed set (:data:`protocol.REACTIONS`: clap, wow, fire, gg), sent by the
players and spectators of a room, shown briefly beside a player. No free text, so nothing
to moderate.

A connection may send :data:`BURST` at once and :data:`RATE` a second on average. A
worker tallies the reactions of its connections per room and tells the room's workers the
tally at most every :data:`FLUSH_EVERY` seconds (a control message on the room's channel:
not stored, not numbered); each worker sends it to its connections as one ``reactions``
frame, so a crowd of spectators reacting costs frames in proportion to time, not to the
crowd. A room whose host turned ``spectator_reactions`` off does not show its spectators'
reactions to the players still racing. Spectators of a delayed room get the frame through
the room's feed, after the delay, like everything else they see.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter

import orjson

from protocol import React, frames
from protocol.frames import ReactionCountBody

from ..bucket import TokenBucket
from ..codes import display_code
from ..context import Context
from ..edge.connection import Conn
from ..rooms.registry import Event, LocalRoom
from ..rooms.room import Refusal
from ..store.errors import StoreUnavailable

__all__ = ["BURST", "FLUSH_EVERY", "RATE", "Reactions"]

RATE = 1.0
"""Reactions a second a connection may send, on average."""
BURST = 3
"""Reactions a connection may send at once."""
FLUSH_EVERY = 0.5
"""A worker tells a room its reactions at most this often (seconds)."""

Key = tuple[int | None, str, str]  # seat, reaction, by


class Reactions:
    """The reactions layer of a worker."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._tally: dict[str, Counter[Key]] = {}
        self._due: dict[str, asyncio.TimerHandle] = {}
        self._closed = False
        ctx.rooms.control_hooks["react"] = self._on_control
        ctx.rooms.drop_hooks.append(self._on_drop)

    async def on_react(self, conn: Conn, msg: React) -> None:
        """``react``: one reaction, tallied and told to the room soon."""
        if conn.room_code is None or conn.role not in ("player", "spectator"):
            raise Refusal("not_in_room", "join a room first")
        local = self.ctx.rooms[conn.room_code]
        seat = msg.seat if msg.seat is not None or conn.role != "player" else conn.seat
        if seat is not None and not _seated(local, seat):
            raise Refusal("unknown_seat", f"nobody sits in seat {seat}")
        if not _take_credit(conn):
            raise Refusal("too_many_reactions", "too many reactions: wait a moment")
        by = "player" if conn.role == "player" else "spectator"
        self._tally.setdefault(local.room_code, Counter())[seat, msg.reaction, by] += 1
        if local.room_code not in self._due and not self._closed:
            room_code = local.room_code
            self._due[room_code] = asyncio.get_running_loop().call_later(
                FLUSH_EVERY, lambda: self.ctx.tasks.spawn(self._flush(room_code), "reactions")
            )

    async def _flush(self, room_code: str) -> None:
        self._due.pop(room_code, None)
        tally = self._tally.pop(room_code, None)
        if not tally:
            return
        rows = [[seat, reaction, by, n] for (seat, reaction, by), n in tally.items()]
        # reactions are of the moment: those of an outage are not kept
        with contextlib.suppress(StoreUnavailable):
            await self.ctx.store.broker.publish_control(
                room_code, orjson.dumps({"ctl": "react", "r": rows})
            )

    def _on_control(self, local: LocalRoom, message: Event) -> None:
        """A room's tally, from any worker: to this worker's connections."""
        counts: list[ReactionCountBody] = [
            {"seat": seat, "reaction": reaction, "by": by, "n": n}
            for seat, reaction, by, n in message.get("r", [])
        ]
        if not counts:
            return
        room = display_code(local.room_code)
        everything = frames.reactions(room=room, counts=counts)
        feed = local.feed
        body = feed.body if feed is not None else None
        hide = body is not None and not body["options"].get("spectator_reactions", True)
        players_only = [c for c in counts if c["by"] == "player"]
        to_all: list[Conn] = []
        to_racers: list[Conn] = []
        for conn in local.conns:
            if not conn.ready:
                continue
            if conn.role == "spectator":
                if not local.delay:
                    to_all.append(conn)
            elif hide and _racing(local, conn):
                to_racers.append(conn)
            else:
                to_all.append(conn)
        self.ctx.rooms.send(to_all, everything)
        if to_racers and players_only:
            self.ctx.rooms.send(to_racers, frames.reactions(room=room, counts=players_only))
        if local.delay and feed is not None:
            feed.push(everything)

    def _on_drop(self, local: LocalRoom) -> None:
        timer = self._due.pop(local.room_code, None)
        if timer is not None:
            timer.cancel()
        self._tally.pop(local.room_code, None)

    def close(self) -> None:
        """Cancel the pending tallies, and start no more (shutdown)."""
        self._closed = True
        for timer in self._due.values():
            timer.cancel()
        self._due.clear()


def _take_credit(conn: Conn) -> bool:
    if conn.reaction_credits is None:
        conn.reaction_credits = TokenBucket(RATE, BURST)
    return conn.reaction_credits.take() == 0.0


def _seated(local: LocalRoom, seat: int) -> bool:
    body = local.feed.body if local.feed is not None else None
    seats = {s["seat"] for s in body["seats"]} if body is not None else set()
    return seat in seats or seat in local.participants


def _racing(local: LocalRoom, conn: Conn) -> bool:
    """A player still racing (not finished) in a race under way."""
    return (
        conn.role == "player"
        and local.phase == "running"
        and conn.seat in local.participants
        and conn.seat not in local.finished
    )
