"""Tournaments, the layer: the requests of hosts and players, the tournament's events and
live standings delivered to the connections that opened it, and who is connected.

A tournament is a pure state machine (:mod:`server.tournaments`) kept in the store as a
:class:`~server.tournaments.live.LiveTournament` and changed only by optimistic atomic
updates (``TournamentStore.update``), whose events every worker receives on the
tournament's channel (``T:<id>``) in ``seq`` order. Its rounds are run by
:mod:`server.tournament_rounds` (the timers, the rooms, the results), its HTTP routes are
:mod:`server.tournament_api`.

A connection opens one tournament at a time (``tournament_open``, ``tournament_join``,
``tournament_create``): it gets the page, then every event (``tournament_event``) and the
standings as they change (``tournament_standings``, coalesced: at most two a second), and,
when a round starts with its player in it, their seat (``tournament_seat``). An identified
connection that has the tournament open counts as its player being connected: a round starts
with the entered players connected then (``PresenceMarks.mark``, renewed while they stay).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from engine.fair import new_seed
from protocol import (
    TournamentClose,
    TournamentCreate,
    TournamentHost,
    TournamentJoin,
    TournamentOpen,
    TournamentRejoin,
    TournamentWithdraw,
    frames,
)

from ..codes import display_code, new_room_code, normalize_code
from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn
from ..rooms.registry import Event, LocalRoom
from ..rooms.room import Refusal
from ..store.errors import StoreUnavailable
from ..store.tournaments import TOURNAMENT_CHANNEL
from . import (
    TournamentError,
    TournamentState,
    create,
    join,
    parse_settings,
    rejoin,
    role_of,
    withdraw,
)
from .api import TournamentApi
from .live import (
    LiveTournament,
    new_live,
    seat_of,
    seat_token,
)
from .presence import Presence
from .rounds import RoundRunner
from .state import Event as TEvent
from .state import current_round
from .table import LiveCopy, Table, pause_between, slices
from .updates import host_act, live_round, result_of_event

__all__ = ["Tournaments"]

logger = logging.getLogger("samedeal.server")

#: the standings go out at most this often (seconds) per tournament and worker
STANDINGS_INTERVAL: Final = 0.5
#: events not forwarded to connections: the standings show them, coalesced
_QUIET: Final = frozenset({"round_result"})


@dataclass(slots=True, eq=False)
class Viewer:
    """A connection that has a tournament open."""

    conn: Conn
    tid: str
    player: str | None
    last_seq: int = 0
    ready: bool = False
    pending: list[bytes] = field(default_factory=list)


@dataclass(slots=True)
class LocalTournament:
    """What this worker knows of a tournament its connections opened."""

    tid: str
    viewers: set[Viewer] = field(default_factory=set)
    subscribed: asyncio.Event = field(default_factory=asyncio.Event)
    flush: asyncio.TimerHandle | None = None
    flushed_at: float = 0.0
    version: int = -1
    #: the standings as last ranked here (again only when what they count changed)
    table: Table = field(default_factory=Table)
    #: the state the standings are pushed from, kept current by the events
    copy: LiveCopy = field(default_factory=LiveCopy)


def _refused(exc: TournamentError) -> Refusal:
    return Refusal(exc.error_code, exc.message)


class Tournaments:
    """The tournament layer of a worker."""

    def __init__(self, ctx: Context, runner: RoundRunner) -> None:
        self.ctx = ctx
        self.runner = runner
        self.local: dict[str, LocalTournament] = {}
        self.viewers: dict[str, Viewer] = {}  # conn id → its viewer
        self.api = TournamentApi(ctx, runner)
        self.presence = Presence(ctx, runner.presence_every)
        ctx.rooms.event_hooks.append(self._on_room_event)

    async def start(self) -> None:
        """Start the presence refresh and the round runner."""
        self.ctx.tasks.spawn(self.presence.renew(), "tournament presence")
        await self.runner.start()

    async def close(self) -> None:
        """Stop the runner's solver process."""
        await self.runner.close()

    # ------------------------------------------------------------------ helpers

    def _identity(self, conn: Conn) -> str:
        if self.ctx.records is None:
            raise Refusal("no_records", "this server keeps no players: tournaments need them")
        if conn.player_id is None:
            raise Refusal("no_identity", "say who you are first (identify)")
        return conn.player_id

    @staticmethod
    def _tid(text: str) -> str:
        tid = normalize_code(text)
        if tid is None:
            raise Refusal("unknown_tournament", f"no tournament {text!r}")
        return tid

    async def act(self, tid: str, act: Callable[[TournamentState], list[TEvent]]) -> LiveTournament:
        """Apply a pure act to the stored tournament; a refusal becomes :class:`Refusal`."""

        def update(live: LiveTournament) -> tuple[list[TEvent], None]:
            return act(live.state), None

        try:
            snap, _ = await self.ctx.store.tournaments.update(tid, update)
        except TournamentError as exc:
            raise _refused(exc) from None
        except KeyError:
            raise Refusal("unknown_tournament", "no such tournament (it may have ended)") from None
        return snap.live

    # ------------------------------------------------------------------ requests

    async def on_create(self, conn: Conn, msg: TournamentCreate) -> None:
        """``tournament_create``: a new tournament hosted by the identified player."""
        host = self._identity(conn)
        config = self.ctx.config
        try:
            settings = parse_settings(msg.settings)
            for _ in range(10):
                state, events = create(
                    tournament_id=new_room_code(),
                    host=host,
                    settings=settings,
                    seed=new_seed(),
                    key=secrets.token_urlsafe(6),
                    now=now_ms(),
                    node_budget=config.tournament_nodes,
                    max_candidates=config.tournament_candidates,
                )
                live = new_live(state)
                if await self.ctx.store.tournaments.create(live, events):
                    break
            else:
                raise Refusal("busy", "could not find a free tournament code")
        except TournamentError as exc:
            raise _refused(exc) from None
        logger.info(
            "tournament created tournament=%s host=%s game=%s rounds=%s",
            state.id,
            host,
            settings.game,
            settings.rounds,
        )
        self.runner.created(state.id)
        await self._open(conn, msg.id, state.id, None)

    async def on_open(self, conn: Conn, msg: TournamentOpen) -> None:
        """``tournament_open``: follow a tournament's events and standings."""
        await self._open(conn, msg.id, self._tid(msg.tournament), msg.key)

    async def on_join(self, conn: Conn, msg: TournamentJoin) -> None:
        """``tournament_join``: enter as a player, and open the tournament."""
        player = self._identity(conn)
        tid = self._tid(msg.tournament)
        name = msg.name or conn.player_name or ""
        await self.act(tid, lambda s: join(s, actor=player, name=name, now=now_ms(), key=msg.key))
        logger.info("tournament joined tournament=%s player=%s", tid, player)
        await self._open(conn, msg.id, tid, msg.key)

    async def on_withdraw(self, conn: Conn, msg: TournamentWithdraw) -> None:
        """``tournament_withdraw``: the player leaves (a race being played is resigned)."""
        player = self._identity(conn)
        tid = self._tid(msg.tournament)
        await self.act(tid, lambda s: withdraw(s, actor=player, now=now_ms()))
        await self.runner.out_of_round(tid, player)

    async def on_rejoin(self, conn: Conn, msg: TournamentRejoin) -> None:
        """``tournament_rejoin``: a withdrawn player enters again."""
        player = self._identity(conn)
        tid = self._tid(msg.tournament)
        await self.act(tid, lambda s: rejoin(s, actor=player, now=now_ms()))

    async def on_host(self, conn: Conn, msg: TournamentHost) -> None:
        """``tournament_host``: a host's act, checked by the tournament (who, when)."""
        actor = self._identity(conn)
        tid = self._tid(msg.tournament)
        now = now_ms()
        act = msg.act
        if act == "start_round":
            await self.runner.begin_round(tid, actor)
        elif act == "end_early":
            await self.runner.end_early(tid, actor, msg.reason)
        else:
            await self.act(tid, host_act(msg, actor, now))
            if act in ("kick", "ban") and msg.player:
                await self.runner.out_of_round(tid, msg.player)
        logger.info("tournament host act tournament=%s act=%s by=%s", tid, act, actor)
        if act in ("ban", "disqualify", "restore"):
            self.runner.record_soon(tid)

    async def on_close(self, conn: Conn, msg: TournamentClose) -> None:
        """``tournament_close``: stop following the open tournament."""
        self.closed(conn)

    # ------------------------------------------------------------------ following

    async def _open(self, conn: Conn, rid: int | None, tid: str, key: str | None) -> None:
        snap = await self.ctx.store.tournaments.load(tid)
        if snap is None:
            raise Refusal("unknown_tournament", f"no tournament {display_code(tid)}")
        state = snap.live.state
        player = conn.player_id
        role = role_of(state, player) if player is not None else None
        private_ok = key is not None and secrets.compare_digest(key.encode(), state.key.encode())
        if state.settings.private and role is None and not private_ok:
            # a private tournament is not found without its key: codes cannot be probed
            raise Refusal("unknown_tournament", f"no tournament {display_code(tid)}")
        viewer = self.viewers.get(conn.id)
        if viewer is not None and viewer.tid == tid and viewer.player == player:
            local = self.local[tid]  # opened again (a page refreshing): the same viewer
            viewer.ready = False
        else:
            self.closed(conn)
            local = await self._ensure(tid)
            viewer = Viewer(conn, tid, player)
            local.viewers.add(viewer)
            self.viewers[conn.id] = viewer
            if player is not None:
                self.presence.change(tid, player, +1)
        try:
            # the page as of now; events after it follow (those before it are in it)
            snap = await self.ctx.store.tournaments.load(tid) or snap
            viewer.last_seq = snap.seq
            you = self.you(snap.live, player)
            if you["seat"] is not None:
                self.runner.learn_room(you["seat"]["room"], tid, int(you["seat"]["round"]))
            page = await self.api.page(snap.live, with_key=role in ("host", "co_host"))
            await conn.send(frames.tournament_reply(id=rid, page=page, you=you, seq=snap.seq))
        except BaseException:
            self.closed(conn)  # not followed: nothing left registered
            raise
        viewer.ready = True
        for data in viewer.pending:
            self._send_event(viewer, data)
        viewer.pending.clear()
        self._flush_soon(tid)

    def you(self, live: LiveTournament, player: str | None) -> dict[str, Any]:
        """The ``you`` of a ``tournament`` reply: role, status, the seat being played."""
        state = live.state
        role = role_of(state, player) if player is not None else None
        entry = state.players.get(player) if player is not None else None
        seat = self._seat(live, player) if player is not None else None
        return {
            "player": player,
            "role": role if role in ("host", "co_host", "player") else "spectator",
            "status": entry.status if entry is not None else None,
            "reason": entry.reason if entry is not None else None,
            "seat": seat,
        }

    @staticmethod
    def _seat(live: LiveTournament, player: str) -> dict[str, Any] | None:
        current = current_round(live.state)
        if current is None or player not in current.participants or player in current.results:
            return None
        found = seat_of(live, current.number, player)
        if found is None:
            return None
        room, seat = found
        return frames.tournament_seat(
            tournament=display_code(live.state.id),
            round=current.number,
            room=display_code(room.code),
            seat=seat,
            token=seat_token(live, current.number, player),
            start_at=current.start_at,
            deadline=current.deadline,
            now=now_ms(),
        )

    async def _ensure(self, tid: str) -> LocalTournament:
        local = self.local.get(tid)
        if local is None:
            local = LocalTournament(tid)
            self.local[tid] = local
            try:
                await self.ctx.store.broker.subscribe(TOURNAMENT_CHANNEL + tid)
            except BaseException:
                self.local.pop(tid, None)
                raise
            local.subscribed.set()
        else:
            await asyncio.wait_for(local.subscribed.wait(), 10)
        return local

    def closed(self, conn: Conn) -> None:
        """The connection closed, or stopped following its tournament."""
        viewer = self.viewers.pop(conn.id, None)
        if viewer is None:
            return
        local = self.local.get(viewer.tid)
        if local is None:
            return
        local.viewers.discard(viewer)
        if viewer.player is not None:
            self.presence.change(viewer.tid, viewer.player, -1)
        if not local.viewers:
            self._drop(local)

    def _drop(self, local: LocalTournament) -> None:
        if local.flush is not None:
            local.flush.cancel()
        if self.local.get(local.tid) is local:
            del self.local[local.tid]
            self.ctx.tasks.spawn(self._unsubscribe(local.tid), "tournament unsubscribe")

    async def _unsubscribe(self, tid: str) -> None:
        if tid not in self.local:
            with contextlib.suppress(StoreUnavailable):
                await self.ctx.store.broker.unsubscribe(TOURNAMENT_CHANNEL + tid)

    # ------------------------------------------------------------------ delivery

    def deliver(self, tid: str, data: bytes) -> None:
        """An event of tournament ``tid`` from the broker (every worker, in seq order):
        its frame encoded once, written to every connection following it here."""
        local = self.local.get(tid)
        try:
            if local is None:
                return
            event = orjson.loads(data)
            seq = int(event["seq"])
            kind = event.get("type")
            local.copy.delivered(event)
            self._flush_soon(tid)
            if kind == "round_starting":
                self.ctx.tasks.spawn(self._hand_seats(tid, event), "tournament seats")
            frame = None if kind in _QUIET else _event_frame(tid, event)
            for viewer in list(local.viewers):
                if not viewer.ready:
                    viewer.pending.append(data)
                elif seq > viewer.last_seq:
                    viewer.last_seq = seq
                    if frame is not None and self._keeps_up(viewer):
                        viewer.conn.push(frame)
        except Exception:
            logger.exception("could not deliver a tournament event tournament=%s", tid)

    def _keeps_up(self, viewer: Viewer) -> bool:
        """A connection that stopped reading is closed (1013), as in rooms: its buffer
        would grow with every push."""
        return self.ctx.rooms.writable(viewer.conn)

    def _send_event(self, viewer: Viewer, data: bytes) -> None:
        """An event held back while ``viewer`` was opening the tournament."""
        event = orjson.loads(data)
        seq = int(event["seq"])
        if seq <= viewer.last_seq:
            return
        viewer.last_seq = seq
        if event.get("type") not in _QUIET:
            viewer.conn.push(_event_frame(viewer.tid, event))

    async def _hand_seats(self, tid: str, event: Event) -> None:
        """A round starts: give each participant connected here their seat."""
        local = self.local.get(tid)
        participants = set(event.get("participants") or ())
        if local is None or not participants & self.presence.here(tid).keys():
            return
        snap = await self.ctx.store.tournaments.load(tid)
        if snap is None:
            return
        for viewer in list(local.viewers):
            if viewer.player is not None and viewer.player in participants:
                seat = self._seat(snap.live, viewer.player)
                if seat is not None:
                    self.runner.learn_room(seat["room"], tid, int(seat["round"]))
                    viewer.conn.push(orjson.dumps(seat))

    # ------------------------------------------------------------------ standings

    def _flush_soon(self, tid: str) -> None:
        """Push the standings soon: at most every :data:`STANDINGS_INTERVAL`."""
        local = self.local.get(tid)
        if local is None or local.flush is not None or not local.viewers:
            return
        loop = asyncio.get_running_loop()
        at = max(loop.time() + 0.05, local.flushed_at + STANDINGS_INTERVAL)
        local.flush = loop.call_at(
            at, lambda: self.ctx.tasks.spawn(self._push_standings(local), "standings")
        )

    async def _push_standings(self, local: LocalTournament) -> None:
        local.flush = None
        local.flushed_at = asyncio.get_running_loop().time()
        live_copy = await local.copy.current(self.ctx.store.tournaments, local.tid)
        if live_copy is None or live_copy.state.version == local.version:
            return
        state = live_copy.state
        version = local.version = state.version
        table = local.table
        table.update(state)
        live = live_round(state)
        tournament = display_code(local.tid)
        followers = list(local.viewers)
        pause = pause_between(len(followers))
        for i, part in enumerate(slices(followers)):
            if i:
                # a slice a turn: moves are answered between them (see tournament_standings)
                await asyncio.sleep(pause)
                if local.version != version or self.local.get(local.tid) is not local:
                    return  # a newer push writes to everyone
            for viewer in part:
                if viewer not in local.viewers or not viewer.ready or not self._keeps_up(viewer):
                    continue
                role = role_of(state, viewer.player) if viewer.player else None
                player_row = table.by_player.get(viewer.player) if viewer.player else None
                mine = None
                if live is not None:
                    mine = {**live[0], "you": live[1].get(viewer.player or "")}
                viewer.conn.push(
                    frames.tournament_standings(
                        tournament=tournament,
                        version=version,
                        players=table.count,
                        top=table.top_players if role == "player" else table.top_watchers,
                        you=player_row,
                        live=mine,
                    )
                )

    # ------------------------------------------------------------------ results

    def _on_room_event(self, room: LocalRoom, event: Event) -> None:
        """A player finished a race: the worker holding their seat reports the result at
        once (the round runner finds any that no worker reported)."""
        if event.get("type") != "player_finished":
            return
        found = self.runner.room_round(room.room_code)
        if found is None:
            return
        tid, number = found
        seat = event.get("seat")
        for conn in room.conns:
            if conn.role == "player" and conn.seat == seat and conn.player_id is not None:
                result = result_of_event(conn.player_id, room.deal_code, event)
                if result is not None:
                    self.runner.report(tid, number, *result)
                return


def _event_frame(tid: str, event: dict[str, Any]) -> bytes:
    """The ``tournament_event`` frame of a stored event."""
    data = {k: v for k, v in event.items() if k not in ("seq", "type", "tournament")}
    return frames.tournament_event(
        tournament=display_code(tid), seq=int(event["seq"]), kind=str(event["type"]), data=data
    )
