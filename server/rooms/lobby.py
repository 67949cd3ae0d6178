"""The lobby: creating rooms, joining as a player or a spectator, resuming a seat, leaving
(``leave``, or the connection closing), and the grace period of a player who went away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable

import orjson

from protocol import Create, Join, Leave, Resume, frames

from ..codes import display_code, hash_token, new_room_code, new_token, normalize_code
from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn, Player
from ..ratings.service import Ratings
from ..store.errors import StoreUnavailable
from ..store.rooms import RoomStore, Snapshot, UnknownRoom
from ..watching.follow import SpectatorCounter
from ..watching.viewers import look_up
from .race import Race
from .registry import LocalRoom
from .rematch import Rematches
from .room import (
    FINAL_STATUSES,
    Refusal,
    RoomOptions,
    RoomState,
    choose_deal,
    key_fits,
    logged_deal,
    seat_by_token,
)
from .secret import refuse_secret
from .updates import (
    Disconnect,
    LeaveSeat,
    ReleaseSeat,
    Retake,
    TakeSeat,
    Update,
)
from .view import snapshot

__all__ = ["Lobby", "create_room"]

logger = logging.getLogger("samedeal.server")


class Lobby:
    """The lobby layer of a worker."""

    def __init__(
        self,
        ctx: Context,
        races: Race,
        rematches: Rematches | None = None,
        ratings: Ratings | None = None,
    ) -> None:
        self.ctx = ctx
        self.races = races
        self.daily = races.daily
        self.rematches = rematches
        self.ratings = ratings
        self.counter = SpectatorCounter(ctx)

    @staticmethod
    def _require_no_room(conn: Conn) -> None:
        if conn.room_code is not None:
            raise Refusal("already_in_room", "this connection is already in a room")

    async def find(self, text: str, key: str | None = None) -> Snapshot:
        """The room a typed code names (a private room needs its key)."""
        room_code = normalize_code(text)
        snap = await self.ctx.store.rooms.snapshot(room_code) if room_code else None
        if snap is None or not key_fits(snap.room, key):
            raise Refusal("unknown_room", f"no room {text!r}")
        return snap

    # ------------------------------------------------------------------ requests

    async def on_create(self, conn: Conn, msg: Create) -> None:
        """``create``: a new room, with the creator in seat 1 as the host."""
        self._require_no_room(conn)
        if msg.deal == "same":
            raise Refusal("bad_deal", "a new room has no last race: use code, random or daily")
        if msg.rated:
            _check_rated(msg.deal, conn.player_id)
        daily_day: str | None = None
        secret_until: int | None = None
        if msg.deal == "daily":
            # the day's secret deal: told to nobody (not even this host) before the day ends
            self.daily.require_players([conn.player_id])
            deal, daily_day, secret_until = await self.daily.todays_deal(msg.game)
        elif msg.deal == "random":
            # proven winnable first when the room asks: the reply waits for the proof
            deal = await self.races.deals.draw(msg.game, winnable=msg.winnable)
        else:
            deal = choose_deal(msg.game, msg.deal, msg.code, None)
            if msg.deal == "code":
                await refuse_secret(self.ctx, self.daily, deal)
        options = RoomOptions(
            max_players=msg.max_players,
            time_limit=msg.time_limit,
            spectators=msg.spectators,
            private=msg.private,
            spectator_delay=msg.spectator_delay,
            spectator_reactions=msg.spectator_reactions,
            spectator_boards=msg.spectator_boards,
            rated=msg.rated,
            winnable=msg.winnable,
        )
        key = secrets.token_urlsafe(6) if msg.private else None
        room = await create_room(
            self.ctx.store.rooms,
            lambda room_code: RoomState(
                code=room_code,
                game=msg.game,
                options=options,
                key=key,
                deal=deal,
                daily=msg.deal == "daily",
                created_at=now_ms(),
                # the creator takes seat 1; a code they typed is no secret to them
                deal_typed_by=1 if msg.deal == "code" else None,
                daily_day=daily_day,
                secret_until=secret_until,
                solo=msg.solo,
            ),
        )
        self.ctx.metrics.rooms_created_total += 1
        logger.info("room created room=%s game=%s deal=%s", room.code, msg.game, logged_deal(room))
        rating = await self._rating(conn, msg.game) if msg.rated else None
        await self._take_new_seat(conn, room.code, msg.name, msg.id, key, rating)
        if msg.solo:
            # a game in one tap: no waiting room, no Start, no countdown
            await self.races.start(conn, countdown_ms=0)

    async def on_join(self, conn: Conn, msg: Join) -> None:
        """``join``: a seat in the lobby or between races, or a spectator's place."""
        self._require_no_room(conn)
        snap = await self.find(msg.room, msg.key)
        room_code = snap.room.code
        if msg.role == "player":
            if snap.room.daily_day is not None and now_ms() < (snap.room.secret_until or 0):
                self.daily.require_players([conn.player_id])
            rating = await self._rating(conn, snap.room.game) if snap.room.options.rated else None
            await self._take_new_seat(conn, room_code, msg.name, msg.id, snap.room.key, rating)
            return
        if not snap.room.options.spectators:
            raise Refusal("no_spectators", "this room does not allow spectators")
        # what the board rule reads of this spectator (who is entered, who has played)
        await look_up(self.ctx, conn, snap.room, now_ms())
        rooms = self.ctx.rooms
        local = await rooms.attach(conn, room_code)
        try:
            counted = await self.counter.count(room_code, +1)
        except BaseException:
            rooms.detach(conn)
            raise
        try:
            # counted with others' (a crowd coming in): the room as it is, to start from
            snap = counted or await self._snapshot(room_code)
            conn.role = "spectator"
            local.learn(snap)
            if local.delay:
                seq = await self._send_delayed_joined(conn, msg.id, local, snap)
            else:
                seq = (await self._send_joined(conn, msg.id, snap, seat=None))["seq"]
        except BaseException:
            conn.role = None
            rooms.detach(conn)
            await self._uncount(room_code)
            raise
        logger.info("spectator joined room=%s conn=%s", room_code, conn.id)
        rooms.ready(conn, seq)
        self.races.end.arm_timer(local)

    async def _snapshot(self, room_code: str) -> Snapshot:
        snap = await self.ctx.store.rooms.snapshot(room_code)
        if snap is None:
            raise UnknownRoom(room_code)
        return snap

    async def _send_delayed_joined(
        self, conn: Conn, rid: int | None, local: LocalRoom, snap: Snapshot
    ) -> int:
        """``joined`` for a spectator of a room with a spectator delay: the room as its
        spectators see it, the delay ago (the room's feed); returns its ``seq``."""
        feed = local.feed
        assert feed is not None
        await feed.wait_loaded()
        link = self.ctx.link(snap.room.code, snap.room.key)
        body = feed.spectator_snapshot(now_ms(), link)
        if body is None:
            raise Refusal("unknown_room", "no such room (it may have expired)")
        await conn.send(
            frames.joined(
                id=rid,
                room=display_code(snap.room.code),
                link=link,
                role="spectator",
                snapshot=body,
            )
        )
        return body["seq"]

    async def _rating(self, conn: Conn, game: str) -> tuple[int, bool] | None:
        """The rating a seat of a rated room shows for ``conn``'s player (None: a guest,
        whom a rated room refuses anyway)."""
        if conn.player_id is None or self.ratings is None:
            return None
        return await self.ratings.shown(conn.player_id, game)

    async def _take_new_seat(
        self,
        conn: Conn,
        room_code: str,
        name: str,
        rid: int | None,
        key: str | None,
        rating: tuple[int, bool] | None = None,
    ) -> None:
        token = new_token()
        update = TakeSeat(
            name or conn.player_name or "",
            hash_token(token),
            conn.id,
            now_ms(),
            conn.player_id,
            rating,
        )
        await self.enter(conn, room_code, update, token=token, rid=rid, key=key)

    async def enter(
        self,
        conn: Conn,
        room_code: str,
        update: Update[int],
        *,
        token: str,
        rid: int | None = None,
        key: str | None = None,
    ) -> Snapshot:
        """Seat ``conn`` in room ``room_code`` by ``update`` (its value: the seat taken,
        held by ``token``), and send it ``joined`` and the room's events from then on;
        the snapshot after the update."""
        rooms = self.ctx.rooms
        local = await rooms.attach(conn, room_code)
        try:
            snap, seat = await self.ctx.store.rooms.update(room_code, update)
        except BaseException:
            rooms.detach(conn)
            raise
        conn.role, conn.seat, conn.epoch = "player", seat, 1
        local.learn(snap)
        await look_up(self.ctx, conn, snap.room, now_ms())
        logger.info("player joined room=%s seat=%s conn=%s", room_code, seat, conn.id)
        await self._send_joined(conn, rid, snap, seat=seat, token=token, key=key)
        rooms.ready(conn, snap.seq)
        self.races.end.arm_timer(local)
        if self.rematches is not None:
            self.rematches.learn(local, snap.room.offer)
        return snap

    async def _send_joined(
        self,
        conn: Conn,
        rid: int | None,
        snap: Snapshot,
        *,
        seat: int | None,
        token: str | None = None,
        key: str | None = None,
        with_snapshot: bool = True,
    ) -> frames.SnapshotBody:
        """Send ``joined`` (the one place it is built) and return the snapshot it holds."""
        room = snap.room
        link = self.ctx.link(room.code, room.key)
        body = snapshot(room, snap.progress, snap.seq, now_ms(), link, viewer=seat)
        view = conn.game.player_view() if seat is not None and conn.game is not None else None
        await conn.send(
            frames.joined(
                id=rid,
                room=display_code(room.code),
                link=link,
                role="player" if seat is not None else "spectator",
                seat=seat,
                token=token,
                key=key,
                snapshot=body if with_snapshot else None,
                view=view,
            )
        )
        return body

    async def on_resume(self, conn: Conn, msg: Resume) -> None:
        """``resume``: take a seat back with its token, on any worker."""
        self._require_no_room(conn)
        room_code = normalize_code(msg.room)
        store = self.ctx.store
        snap = await store.rooms.snapshot(room_code) if room_code else None
        if snap is None or room_code is None:
            raise Refusal("unknown_room", f"no room {msg.room!r}")
        token_hash = hash_token(msg.token)
        found = seat_by_token(snap.room, token_hash)
        if found is None:
            raise Refusal("bad_token", "this token holds no seat in this room")
        seat = found.seat
        rooms = self.ctx.rooms
        local = await rooms.attach(conn, room_code)
        try:
            snap, (old_conn, epoch) = await store.rooms.update(
                room_code, Retake(seat, token_hash, conn.id, now_ms())
            )
            if old_conn is not None and old_conn != conn.id:
                # the old connection's writes are refused from now on (the epoch); this
                # tells its worker to close it at once
                with contextlib.suppress(StoreUnavailable):
                    await store.broker.publish_control(
                        room_code, orjson.dumps({"ctl": "kick", "conn": old_conn})
                    )
            conn.role, conn.seat, conn.epoch = "player", seat, epoch
            local.learn(snap)
            await look_up(self.ctx, conn, snap.room, now_ms())
            conn.game = None
            if snap.room.phase != "lobby" and seat in snap.room.participants:
                await self.races.load_game(conn, snap.room.race, snap.room.deal)
            missed = (
                await store.rooms.events_since(room_code, msg.last_seq)
                if msg.last_seq is not None
                else None
            )
            if missed and any(_finish_of(data, seat, snap.room.race) for data in missed):
                await rooms.recall_finishes(local, snap.seq)  # sent after that finish (ready)
        except BaseException:
            rooms.detach(conn)
            raise
        logger.info(
            "player resumed room=%s seat=%s conn=%s last_seq=%s",
            room_code,
            seat,
            conn.id,
            msg.last_seq,
        )
        body = await self._send_joined(
            conn, msg.id, snap, seat=seat, with_snapshot=msg.last_seq is None
        )
        if msg.last_seq is None or missed is None:
            if msg.last_seq is not None:
                await conn.send(frames.resync(body))
            rooms.ready(conn, snap.seq)
            p = snap.progress.get(seat)
            if p is not None and p.race == snap.room.race and p.status in FINAL_STATUSES:
                # a snapshot shows no move lists: the finishes of the race (withheld while
                # this racer raced, or sent to a connection now gone) come after it
                await rooms.recall_finishes(local, snap.seq)
                rooms.send_finishes(local, conn, upto=snap.seq)
        else:
            conn.last_seq = msg.last_seq
            conn.pending = missed + conn.pending
            rooms.ready(conn, msg.last_seq)
        self.races.end.arm_timer(local)
        if self.rematches is not None:
            self.rematches.learn(local, snap.room.offer)

    # ------------------------------------------------------------------ leaving

    async def on_leave(self, conn: Conn, msg: Leave) -> None:
        """``leave``: a player's seat is freed at once — a running race resigned first, the
        host passing on; a spectator stops watching. The connection may then create or
        join another room."""
        if conn.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        if conn.role != "player" or conn.seat is None:
            await self.leave(conn)
            return
        room_code, seat = conn.room_code, conn.seat
        # the last moves' progress first (held back for coalescing), then the resign
        await self.races.progress.flush(conn)
        for _ in range(3):
            await self.races.forfeit(conn)
            _, freed = await self.ctx.store.rooms.update(
                room_code, LeaveSeat(seat, conn.id, now_ms())
            )
            if freed:
                break
            # a race began meanwhile (a rematch the player had accepted): resign it too
            await asyncio.sleep(0.05)
        else:
            raise Refusal("race_running", "the race could not be left now: try again")
        logger.info("player left room=%s seat=%s conn=%s", room_code, seat, conn.id)
        self.ctx.rooms.detach(conn)
        conn.role, conn.seat, conn.game = None, None, None

    async def leave(self, player: Player) -> None:
        """Undo what a connection (or robot) registered: its local room, then the seat's
        presence; a player's grace period starts."""
        room_code, seat, role = player.room_code, player.seat, player.role
        # the last moves' progress, held back for coalescing, is stored before the seat is
        # shown disconnected (a held progress is not stored with its moves)
        with contextlib.suppress(Exception):
            await self.races.progress.flush(player)
        if isinstance(player, Conn):
            self.ctx.rooms.detach(player)
        else:
            player.room_code = None
        if room_code is not None and role == "spectator":
            await self._uncount(room_code)
            return
        if room_code is None or role != "player" or seat is None:
            return
        await self._seat_gone(room_code, seat, player.id)

    async def _uncount(self, room_code: str) -> None:
        try:
            await self.counter.count(room_code, -1)
        except UnknownRoom:
            pass
        except StoreUnavailable:
            self.ctx.when_store_is_back(lambda: self._uncount(room_code), "tell later")

    async def _seat_gone(self, room_code: str, seat: int, conn_id: str) -> None:
        """Show the seat of a closed connection disconnected and start its grace period —
        once the store can be reached, if it cannot now."""
        try:
            _, held = await self.ctx.store.rooms.update(
                room_code, Disconnect(seat, conn_id, now_ms())
            )
        except UnknownRoom:
            return
        except StoreUnavailable:
            self.ctx.when_store_is_back(
                lambda: self._seat_gone(room_code, seat, conn_id), f"gone {room_code}:{seat}"
            )
            return
        except Exception:
            logger.exception("could not mark seat disconnected room=%s seat=%s", room_code, seat)
            return
        if not held:
            return  # replaced by another connection meanwhile
        logger.info("player disconnected room=%s seat=%s conn=%s", room_code, seat, conn_id)
        self.start_grace(room_code, seat)

    def start_grace(self, room_code: str, seat: int) -> None:
        """Start the grace period of a seat shown disconnected."""
        self.ctx.tasks.spawn(self._grace(room_code, seat), f"grace {room_code}:{seat}")

    async def _grace(self, room_code: str, seat: int) -> None:
        await asyncio.sleep(self.ctx.config.grace)
        try:
            await self.grace_over(room_code, seat)
        except StoreUnavailable:
            self.ctx.when_store_is_back(
                lambda: self.grace_over(room_code, seat), f"grace {room_code}:{seat}"
            )

    async def grace_over(self, room_code: str, seat_no: int) -> None:
        """A still-disconnected player loses the seat: resigned in a running race, removed
        otherwise."""
        snap = await self.ctx.store.rooms.snapshot(room_code)
        if snap is None:
            return
        seat = snap.room.seat(seat_no)
        if seat is None or seat.connected:
            return
        room = snap.room
        p = snap.progress.get(seat_no)
        if (
            room.phase == "running"
            and p is not None
            and p.race == room.race
            and p.status == "playing"
        ):
            await self.races.end.finish_from_log(room_code, room, seat_no, "left", now_ms())
            await self.races.end.check_end(room_code)
        await self.ctx.store.rooms.update(room_code, ReleaseSeat(seat_no))
        logger.info("seat released room=%s seat=%s", room_code, seat_no)


async def create_room(store: RoomStore, make: Callable[[str], RoomState]) -> RoomState:
    """Store a new room, ``make(code)`` for a fresh code until one is free (a few tries:
    codes are random, a clash is rare); :class:`Refusal` ``busy`` if none is."""
    for _ in range(10):
        room = make(new_room_code())
        if await store.create(room):
            return room
    raise Refusal("busy", "could not find a free room code")


def _check_rated(deal: str, player_id: str | None) -> None:
    """Refuse a rated room its creator cannot have: they need an identity, and the deal of
    the day is never rated (docs/ratings.md)."""
    if player_id is None:
        raise Refusal("rated_needs_identity", "a rated room seats players with an identity only")
    if deal == "daily":
        raise Refusal("rated_daily", "the deal of the day is never rated: choose another deal")


def _finish_of(data: bytes, seat: int, race: int) -> bool:
    """Whether a room event is the ``player_finished`` of ``seat`` in race ``race``."""
    if b'"player_finished"' not in data:
        return False
    event = orjson.loads(data)
    return bool(
        event.get("type") == "player_finished"
        and event.get("seat") == seat
        and event.get("race") == race
    )
