"""Spectators: following players' boards live (up to :data:`~protocol.MAX_FOLLOWED` at once),
and telling the room how many watch.

A worker keeps one :class:`Follower` per followed seat of a room: a copy of that player's
board, rebuilt from the move log as the room's feed releases their ``progress``, sent as
``board`` frames to the spectators of this worker who follow it. With a spectator delay the
feed releases everything that many seconds late, and a follower replays only the moves
its released ``progress`` covers (the log keeps each move's time), so the boards a
spectator sees agree with the player list and the finishes they are shown.

The spectator count is kept in the room (``CountSpectator``) and told to the room (a
``spectators`` event) at most once a second: the store refuses to tell it sooner and says
when it may, and :class:`SpectatorCounter` comes back then. A crowd coming in at once is
counted in a few room updates, not one each: while one update of a room is on its way, the
joins and leaves that come meanwhile are added up and stored together after it (one update
per spectator made a thousand of them retry each other's transactions for seconds).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from engine import GameError, new_game, replay
from engine.game import Game
from protocol import Follow, frames

from ..codes import display_code
from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn
from ..rooms.registry import Event, LocalRoom
from ..rooms.room import Refusal
from ..rooms.updates import CountSpectator, TellSpectators
from ..rooms.view import boards_shown
from ..store.errors import StoreUnavailable
from ..store.rooms import Snapshot, UnknownRoom, entry_move, entry_time
from .viewers import look_up

__all__ = ["Follower", "Spectate", "SpectatorCounter"]

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
        ctx.rooms.release_hooks.append(self._on_release)
        ctx.rooms.drop_hooks.append(self._on_drop)
        ctx.rooms.detach_hooks.append(self._on_detach)

    async def on_follow(self, conn: Conn, msg: Follow) -> None:
        """``follow``: follow up to four players' boards (none: stop)."""
        if conn.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        local = self.ctx.rooms[conn.room_code]
        seats = msg.followed()
        if seats and local.viewer(conn).racing:  # stopping is anyone's
            raise Refusal("not_spectator", "a player still racing cannot follow boards")
        feed = local.feed
        assert feed is not None
        await feed.wait_loaded()
        if seats:
            snap = await self.ctx.store.rooms.snapshot(local.room_code)
            if snap is not None:  # asked again: the viewer may have played meanwhile
                await look_up(self.ctx, conn, snap.room, now_ms())
            if not self.may_see(local, conn) and not self._missed_end(local, conn, snap):
                raise Refusal("boards_hidden", _hidden_because(local))
        for seat in seats:
            if feed.body is None or feed.body["race"] == 0 or seat not in feed.participants:
                raise Refusal("unknown_seat", f"seat {seat} is not racing")
        for seat in conn.following:
            if seat not in seats:
                self._unfollow(conn, seat)
        followers = self.followers.setdefault(local.room_code, {})
        for seat in seats:
            f = followers.get(seat)
            if f is None:
                f = Follower(feed.body["race"] if feed.body else 0, new_game(feed.deal))
                followers[seat] = f
                f.task = self.ctx.tasks.spawn(self._follow_loop(local, seat, f), "follow")
            if conn not in f.spectators:
                f.spectators.add(conn)
                f.newcomers.add(conn)  # gets the board even if nothing changes
                f.dirty.set()
        conn.following = tuple(seats)

    def _missed_end(self, local: LocalRoom, conn: Conn, snap: Snapshot | None) -> bool:
        """Whether a viewer about to be refused the boards may see them after all: the
        stored room (``snap``, read for this ``follow`` — no read of its own) shows its
        round over, though this worker missed the ``secret_ends`` message and keeps the
        secret. The round's end is then taken as that message would have been."""
        ended = local.missed_end(snap.room, now_ms()) if snap is not None else None
        if ended is None:
            return False
        self.ctx.rooms.end_secret(local, ended)
        return self.may_see(local, conn)

    @staticmethod
    def may_see(local: LocalRoom, conn: Conn) -> bool:
        """The board rule, for a viewer of ``local`` shown the room as its feed has it: a
        spectator, or a player not racing (finished, sitting the race out, waiting)."""
        feed = local.feed
        phase = feed.body["phase"] if feed is not None and feed.body is not None else None
        return boards_shown(local.viewer(conn), local.facts(phase), now_ms()) != "progress"

    def unfollow(self, conn: Conn) -> None:
        """Stop following every board (the connection leaves)."""
        for seat in conn.following:
            self._unfollow(conn, seat)
        conn.following = ()

    def _unfollow(self, conn: Conn, seat: int) -> None:
        followers = self.followers.get(conn.room_code or "")
        f = followers.get(seat) if followers is not None else None
        if f is None or followers is None:
            return
        f.spectators.discard(conn)
        f.newcomers.discard(conn)
        if not f.spectators:
            if f.task is not None:
                f.task.cancel()
            del followers[seat]

    def _on_detach(self, conn: Conn) -> None:
        if conn.following:
            self.unfollow(conn)

    def _on_release(self, local: LocalRoom, event: Event) -> None:
        followers = self.followers.get(local.room_code)
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

    def _on_drop(self, local: LocalRoom) -> None:
        for f in self.followers.pop(local.room_code, {}).values():
            if f.task is not None:
                f.task.cancel()

    async def _follow_loop(self, local: LocalRoom, seat: int, f: Follower) -> None:
        feed = local.feed
        assert feed is not None
        while True:
            await f.dirty.wait()
            f.dirty.clear()
            body = feed.body
            if body is None:
                continue
            if f.race != body["race"]:
                f.race, f.game, f.applied = body["race"], new_game(feed.deal), 0
            try:
                new = await self._new_moves(local, seat, f)
            except StoreUnavailable:
                f.dirty.set()  # tried again at the next release
                continue
            if new:
                try:
                    f.game.push_all(new)
                    f.applied += len(new)
                except GameError:
                    logger.warning(
                        "follow: log does not replay room=%s seat=%s", local.room_code, seat
                    )
                    moves = await self.ctx.store.rooms.moves(local.room_code, f.race, seat)
                    f.game, f.applied = replay(feed.deal, moves), len(moves)
            to = set(f.spectators) if new else f.newcomers & f.spectators
            f.newcomers.clear()
            # asked again at every board: a new race may be on a secret deal, or race the
            # follower (a player who followed once finished, and races the next race)
            to = {conn for conn in to if self.may_see(local, conn)}
            if to:
                data = frames.board(
                    room=display_code(local.room_code),
                    seat=seat,
                    race=f.race,
                    view=f.game.player_view(),
                )
                self.ctx.rooms.send(to, data)

    async def _new_moves(self, local: LocalRoom, seat: int, f: Follower) -> list[str]:
        """The moves of the log not on the board yet — with a spectator delay, only those
        the feed has released the player's progress for, and none made after the delay's
        moment. (A move's time is taken before it is stored, its event after: a slow
        store would otherwise put a move on the board before the player's ack was a
        delay old, and ahead of the player list.)"""
        feed = local.feed
        assert feed is not None and feed.body is not None
        store = self.ctx.store
        if not feed.delay:
            return await store.rooms.moves(local.room_code, f.race, seat, f.applied)
        shown = feed.shown.get(seat)
        if shown is None:
            return []
        start = feed.body["start_at"] or 0
        cutoff = min(now_ms() - feed.delay * 1000 - start, shown)
        moves = []
        for entry in await store.rooms.log(local.room_code, f.race, seat, f.applied):
            at = entry_time(entry)
            if at is not None and at > cutoff:
                break  # the log is in time order: the rest is later still
            moves.append(entry_move(entry))
        return moves


def _hidden_because(local: LocalRoom) -> str:
    """Why the board rule hides a race's boards from a spectator (the refusal's sentence)."""
    if local.secret_until is None or now_ms() >= local.secret_until:
        return "this room shows its spectators the racers' progress only while they race"
    if local.tournament:
        return (
            "a tournament round's boards are shown when the round is over, or after the "
            "host's delay, and never to a player entered in the tournament: you see the "
            "racers' progress"
        )
    return (
        "the boards of the deal of the day are shown only to players who have finished "
        "their own attempt today: you see the racers' progress"
    )


class SpectatorCounter:
    """Counts spectators in and out, and has the count told at most once a second (the
    store decides when; this worker comes back then, once per room however many came)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._due: dict[str, asyncio.TimerHandle] = {}
        #: rooms with an update on its way, and what came meanwhile (to store after it)
        self._storing: set[str] = set()
        self._waiting: dict[str, int] = {}
        self._closed = False

    async def count(self, room_code: str, change: int) -> Snapshot | None:
        """One spectator more (+1) or fewer (-1) on this worker: stored now, and the room
        after it returned — or, while another update of the room is on its way, added to
        the next one (None). Raises what the store raises (nothing changed)."""
        if room_code in self._storing:
            self._waiting[room_code] = self._waiting.get(room_code, 0) + change
            return None
        self._storing.add(room_code)
        try:
            return await self._store(room_code, change)
        finally:
            self._storing.discard(room_code)
            if self._waiting.get(room_code):
                self.ctx.tasks.spawn(self._store_waiting(room_code), f"count {room_code}")

    async def _store(self, room_code: str, change: int) -> Snapshot:
        snap, due = await self.ctx.store.rooms.update(
            room_code, CountSpectator(self.ctx.worker_id, change, now_ms())
        )
        self._later(room_code, due)
        return snap

    async def _store_waiting(self, room_code: str) -> None:
        """Store what came while the last update was on its way (and what comes during
        this one, after it)."""
        if room_code in self._storing:
            return
        self._storing.add(room_code)
        try:
            while change := self._waiting.pop(room_code, 0):
                try:
                    await self._store(room_code, change)
                except UnknownRoom:
                    return
                except StoreUnavailable:
                    self._waiting[room_code] = self._waiting.get(room_code, 0) + change
                    self.ctx.when_store_is_back(
                        lambda: self._store_waiting(room_code), f"count {room_code}"
                    )
                    return
        finally:
            self._storing.discard(room_code)

    def _later(self, room_code: str, due: int | None) -> None:
        if due is None or room_code in self._due or self._closed:
            return
        delay = max(0.0, (due - now_ms()) / 1000) + 0.01
        self._due[room_code] = asyncio.get_running_loop().call_later(
            delay, lambda: self.ctx.tasks.spawn(self._tell(room_code), f"count {room_code}")
        )

    async def _tell(self, room_code: str) -> None:
        self._due.pop(room_code, None)
        try:
            _, due = await self.ctx.store.rooms.update(room_code, TellSpectators(now_ms()))
        except UnknownRoom:
            return
        except StoreUnavailable:
            due = now_ms() + 1000
        self._later(room_code, due)

    def close(self) -> None:
        """Forget the pending tellings, and set no more (shutdown)."""
        self._closed = True
        for timer in self._due.values():
            timer.cancel()
        self._due.clear()
