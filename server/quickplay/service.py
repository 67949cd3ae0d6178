"""Quick play on a worker: the requests (``seek``, ``cancel_seek``, ``take_offer``,
``pools``), the pairing passes, the leases on this worker's seekers, the offers made to those
who wait, and the counts the lobby shows.

**A seek.** The player's rating in the game is read (1500 for a guest or a newcomer), an
identity's one seek is claimed in the store (:meth:`~server.store.pools.PoolStore.claim`: a
second tab's seek is refused), a seat token is made for them here (only its hash goes to
the store), and they are put in the pool. Then this worker pairs the pool at once.

**A pass** (:meth:`Pools.pair`) reads the pool (the seekers of any worker), forms its rooms
(:func:`~.pairing.groups`: the longest waiter first, ratings within a window that widens
with the wait) and, for each, draws a proven deal new to all of them
(:class:`~.deals.DealSource`), creates the room with a seat per seeker (their token hashes,
ratings) and takes them out of the pool in one atomic step
(:meth:`~server.store.pools.PoolStore.take`), which tells the pool's channel. A worker
passes over a pool when one of its players seeks there, and every :data:`TICK` while it
has seekers there (so windows widen); two workers passing at once cannot take one seeker
twice (the loser's room is left unused, to expire).

**Seated.** Each seeker's worker hears it on the pool's channel (or, had it missed the
message, from its next renewal) and seats the connection with its token
(:class:`~.updates.TakePoolSeat`): ``joined``, then the room's events. The race begins as
soon as every seat is taken, or :data:`GATHER_MS` after the room was made with those who
took theirs (a seeker who went away meanwhile: their seat is freed), on a timer every
worker with the room arms.

**Leases.** Every :data:`RENEW_EVERY` a worker renews its lease in each pool it has seekers
in, and their claims; a worker that dies stops, and its seekers are dropped from the pool
:data:`LEASE_MS` later, their claims with them. A seeker whose connection closes or enters
a room leaves the pool at once.

**Offers.** After the wait the player chose (``seek``'s ``wait``, 20 s by default) they
are offered something else while they keep waiting (``seek_offer``): a labelled bot, the
ghost of another player's run of a deal new to them (runs of pool races that ended on this
worker, on deals of its buffer), or, seeking a room of 4, a room of 2 with the wait so far
kept. A bot or a ghost is a casual race in a room of one's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Final

import orjson

from protocol import CancelSeek, Seek, TakeOffer, frames
from protocol import Pools as PoolsRequest

from ..codes import hash_token, new_token
from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn
from ..ratings.rules import PROVISIONAL_RD
from ..ratings.service import Ratings
from ..rooms.lobby import Lobby, create_room
from ..rooms.race import Race
from ..rooms.robots import BotDriver, Driver, GhostDriver, Robots
from ..rooms.room import Refusal, RoomOptions, RoomState, SeatState
from ..rooms.updates import StartRace, TakeSeat
from ..store.errors import StoreUnavailable
from ..store.pools import POOL_CHANNEL, Taken
from ..store.rooms import Snapshot, UnknownRoom
from ..tasks import gather_all
from .deals import DealSource, NoDeal
from .pairing import POOLS, Pool, PoolError, Seeker, groups, pool_of
from .updates import StartPoolRace, TakePoolSeat

__all__ = ["GATHER_MS", "LEASE_MS", "RENEW_EVERY", "TICK", "Pools", "Run"]

logger = logging.getLogger("samedeal.server")

TICK: Final = 0.5
"""Seconds between a worker's passes over each pool it has seekers in (and its looks at
whose wait is over)."""
LEASE_MS: Final = 4_000
"""A worker's hold on its seekers in a pool, and on their claims: renewed every
:data:`RENEW_EVERY`; a worker that dies loses its seekers this long after its last renewal."""
RENEW_EVERY: Final = 1.0
GATHER_MS: Final = 5_000
"""A pool room's race begins this long after the room was made at the latest, with the
seekers who took their seats by then."""
COUNTS_EVERY: Final = 1.0
"""Seconds between a worker's readings of the counts, while a connection watches them."""
RUNS_KEPT: Final = 16
"""Runs kept per game for ghosts."""


@dataclass(frozen=True, slots=True)
class Run:
    """A finished run of a pool race, for a ghost: its deal, the racer's name, actions and
    their times (ms after the start), and its finishing time."""

    deal: str
    name: str
    moves: list[str]
    times_ms: list[int]
    elapsed_ms: int


@dataclass(slots=True, eq=False)
class LocalSeek:
    """A seek of one of this worker's connections."""

    conn: Conn
    pool: Pool
    seeker: Seeker
    #: the seat token made for them (its hash is the seeker's)
    token: str
    #: when to offer something else (server ms)
    offer_at: int
    wait_ms: int
    offers: tuple[str, ...] = ()
    #: set once ``seeking`` was sent (the seat's ``joined`` comes after it)
    replied: asyncio.Event = field(default_factory=asyncio.Event)


class Pools:
    """The quick-play layer of a worker."""

    def __init__(
        self,
        ctx: Context,
        lobby: Lobby,
        races: Race,
        robots: Robots,
        ratings: Ratings,
        deals: DealSource,
    ) -> None:
        self.ctx = ctx
        self.lobby = lobby
        self.races = races
        self.robots = robots
        self.ratings = ratings
        #: the worker's proven deals (shared with winnable-only rooms; closed by the app)
        self.deals = deals
        #: this worker's seeks, by connection id and by (pool, seeker key)
        self._seeks: dict[str, LocalSeek] = {}
        self._keyed: dict[tuple[str, str], LocalSeek] = {}
        self._subscribed: set[str] = set()
        self._passing: dict[str, asyncio.Lock] = {}
        self._again: set[str] = set()
        #: a pool room's start timers, by room
        self._starts: dict[str, asyncio.TimerHandle] = {}
        #: connections watching the counts, and the counts as last told
        self._watchers: set[Conn] = set()
        self._counts: bytes | None = None
        self._counted = asyncio.Event()
        self._runs: dict[str, deque[Run]] = {}
        races.end.end_hooks.append(self._race_ended)

    async def start(self) -> None:
        """Start the passes, the renewals and the counts."""
        self.ctx.tasks.spawn(self._ticks(), "pool passes")
        self.ctx.tasks.spawn(self._renewals(), "pool leases")
        self.ctx.tasks.spawn(self._counting(), "pool counts")

    def close(self) -> None:
        """Stop the timers."""
        for timer in self._starts.values():
            timer.cancel()
        self._starts.clear()

    # ------------------------------------------------------------------ requests

    async def on_seek(self, conn: Conn, msg: Seek) -> None:
        """``seek``: into the pool, answered with ``seeking``; then a pass over it."""
        if conn.id in self._seeks:
            raise Refusal("already_seeking", "you are seeking a race already: cancel it first")
        if conn.room_code is not None:
            raise Refusal("already_in_room", "leave the room before seeking a race")
        try:
            pool = pool_of(
                msg.game, msg.players, msg.time_limit, msg.rated, conn.player_id is not None
            )
        except PoolError as exc:
            raise Refusal(exc.code, exc.message) from None
        player = conn.player_id
        if pool.rated and player is None:
            raise Refusal(
                "rated_needs_identity", "a rated pool seats players with an identity only"
            )
        if player is not None:
            cooldown = await self.ratings.seek_cooldown(player)
            if cooldown > 0:
                minutes = -(-cooldown // 60_000)
                raise Refusal(
                    "seek_cooldown",
                    f"you abandoned rated races: you may seek again in {minutes} min",
                )
        standing = (
            (await self.ratings.standings_of([player], pool.game))[player] if player else None
        )
        token = new_token()
        now = now_ms()
        seeker = Seeker(
            key=f"p:{player}" if player else f"g:{conn.id}",
            name=msg.name or conn.player_name or "",
            rating=standing.rating.rating if standing else 1500.0,
            rd=standing.rating.rd if standing else 350.0,
            since=now,
            worker=self.ctx.worker_id,
            conn=conn.id,
            token_hash=hash_token(token),
            player=player,
        )
        wait_ms = msg.wait * 1000
        local = LocalSeek(conn, pool, seeker, token, now + wait_ms, wait_ms)
        await self._enter(local, msg.id)

    async def _enter(self, local: LocalSeek, rid: int | None) -> None:
        """Claim, subscribe, put the seeker in the pool, answer ``seeking``, pass."""
        conn, pool, seeker = local.conn, local.pool, local.seeker
        store = self.ctx.store.pools
        if seeker.player is not None:
            holder = await store.claim(seeker.player, conn.id, LEASE_MS)
            if holder is not None:
                raise Refusal("already_seeking", "you are seeking a race on another connection")
        try:
            await self._subscribe(pool)
            self._remember(local)  # before the store has it: a pairing may come at once
            if not await store.add(pool.id, seeker, LEASE_MS, now_ms()):
                raise Refusal("already_seeking", "you are seeking a race in this pool already")
        except BaseException:
            self._forget(local)
            if seeker.player is not None:
                with contextlib.suppress(StoreUnavailable):
                    await store.unclaim(seeker.player, conn.id)
            raise
        logger.info("seeking pool=%s conn=%s rating=%d", pool, conn.id, seeker.rating)
        await conn.send(self._seeking_frame(local, rid))
        local.replied.set()
        self.ctx.tasks.spawn(self._pair_quietly(pool), f"pair {pool}")

    def _seeking_frame(self, local: LocalSeek, rid: int | None) -> bytes:
        pool, seeker = local.pool, local.seeker
        return frames.seeking(
            id=rid,
            pool=pool.id,
            game=pool.game,
            players=pool.players,
            time_limit=pool.time_limit,
            rated=pool.rated,
            since=seeker.since,
            offer_at=local.offer_at,
            now=now_ms(),
            rating=round(seeker.rating) if seeker.player else None,
            provisional=seeker.player is not None and seeker.rd >= PROVISIONAL_RD,
        )

    async def on_cancel_seek(self, conn: Conn, msg: CancelSeek) -> None:
        """``cancel_seek``: out of the pool."""
        local = self._seeks.get(conn.id)
        if local is None:
            raise Refusal("not_seeking", "you are not seeking a race")
        await self._leave(local)

    async def on_take_offer(self, conn: Conn, msg: TakeOffer) -> None:
        """``take_offer``: race a bot or a ghost (``joined``), or seek a room of 2
        (``seeking``)."""
        local = self._seeks.get(conn.id)
        if local is None:
            raise Refusal("not_seeking", "you are not seeking a race")
        if msg.offer not in local.offers:
            raise Refusal("not_offered", f"{msg.offer!r} is not offered to you now")
        ghost = self._ghost_for(local) if msg.offer == "ghost" else None
        if msg.offer == "ghost" and ghost is None:
            raise Refusal("not_offered", "no ghost is left to race: take another offer")
        if not await self._out_of_pool(local):
            raise Refusal("already_paired", "you were just paired: your race is coming")
        if msg.offer == "smaller":
            smaller = local.pool.smaller()
            assert smaller is not None
            moved = LocalSeek(
                conn,
                smaller,
                local.seeker,
                local.token,
                local.offer_at,
                local.wait_ms,
                tuple(o for o in local.offers if o != "smaller"),
            )
            await self._enter(moved, msg.id)
            return
        await self._solo(local, ghost, msg.id)

    async def on_pools(self, conn: Conn, msg: PoolsRequest) -> None:
        """``pools``: watch the counts (sent now, then as they change) or stop."""
        if not msg.watch:
            self._watchers.discard(conn)
            return
        self._watchers.add(conn)
        self._counted.set()
        if self._counts is None:
            await self._count()  # told to every watcher, this one included
        else:
            await conn.send(self._counts)

    async def closed(self, conn: Conn) -> None:
        """The connection closed: out of the pool, no more counts."""
        self._watchers.discard(conn)
        local = self._seeks.get(conn.id)
        if local is not None:
            with contextlib.suppress(StoreUnavailable):
                await self._leave(local)

    async def entering(self, conn: Conn) -> None:
        """The connection is entering a room: its seek ends."""
        local = self._seeks.get(conn.id)
        if local is not None:
            await self._leave(local)

    # ------------------------------------------------------------------ the pool

    def _remember(self, local: LocalSeek) -> None:
        self._seeks[local.conn.id] = local
        self._keyed[(local.pool.id, local.seeker.key)] = local
        self.ctx.metrics.pool_seekers = len(self._seeks)

    def _forget(self, local: LocalSeek) -> bool:
        """No longer seeking here; False if it was not."""
        if self._seeks.get(local.conn.id) is not local:
            return False
        del self._seeks[local.conn.id]
        self._keyed.pop((local.pool.id, local.seeker.key), None)
        self.ctx.metrics.pool_seekers = len(self._seeks)
        return True

    async def _out_of_pool(self, local: LocalSeek) -> bool:
        """Take the seeker out of the store's pool; False if a pairing took them first
        (their seat comes)."""
        removed = await self.ctx.store.pools.remove(local.pool.id, local.seeker.key, local.conn.id)
        if removed:
            self._forget(local)
            await self._unclaim(local)
        return removed

    async def _leave(self, local: LocalSeek) -> None:
        """Leave the pool (a cancel, a close, a room entered). A seeker a pairing took
        meanwhile leaves their seat untaken: that race begins without them. If the store
        cannot be reached now, the seeker leaves it once it can (this worker's lease would
        keep them there)."""
        if not self._forget(local):
            return
        logger.info("seek ended pool=%s conn=%s", local.pool, local.conn.id)
        try:
            await self._remove(local)
        except StoreUnavailable:
            self.ctx.when_store_is_back(lambda: self._remove(local), f"seek ended {local.pool}")

    async def _remove(self, local: LocalSeek) -> None:
        await self.ctx.store.pools.remove(local.pool.id, local.seeker.key, local.conn.id)
        await self._unclaim(local)

    async def _unclaim(self, local: LocalSeek) -> None:
        if local.seeker.player is not None:
            await self.ctx.store.pools.unclaim(local.seeker.player, local.conn.id)

    async def _subscribe(self, pool: Pool) -> None:
        if pool.id not in self._subscribed:
            await self.ctx.store.broker.subscribe(POOL_CHANNEL + pool.id)
            self._subscribed.add(pool.id)

    # ------------------------------------------------------------------ pairing

    async def pair(self, pool: Pool) -> None:
        """Make the rooms of ``pool`` its seekers fill now (a pass asked for during one
        runs again after it)."""
        lock = self._passing.setdefault(pool.id, asyncio.Lock())
        if lock.locked():
            self._again.add(pool.id)
            return
        async with lock:
            while True:
                self._again.discard(pool.id)
                now = now_ms()
                seekers = await self.ctx.store.pools.seekers(pool.id, now)
                for group in groups(seekers, pool.players, now):
                    try:
                        await self._make_room(pool, group)
                    except NoDeal as exc:
                        logger.warning("pool room not made pool=%s: %s", pool, exc)
                        return
                if pool.id not in self._again:
                    return

    async def _make_room(self, pool: Pool, group: tuple[Seeker, ...]) -> None:
        """A room for ``group`` on a proven deal new to them, then take them from the pool
        into it (unless one left, or another worker took one first)."""
        deal = await self.deals.deal_for(pool.game, [s.key for s in group])
        now = now_ms()
        seats = {s.key: n for n, s in enumerate(group, 1)}
        options = RoomOptions(
            max_players=pool.players, time_limit=pool.time_limit, rated=pool.rated
        )
        room = await create_room(
            self.ctx.store.rooms,
            lambda room_code: RoomState(
                code=room_code,
                game=pool.game,
                options=options,
                seats=[
                    SeatState(
                        seat=seats[s.key],
                        name=s.name or f"Player {seats[s.key]}",
                        token_hash=s.token_hash,
                        connected=False,
                        player_id=s.player,
                        rating=round(s.rating) if pool.rated else None,
                        provisional=pool.rated and s.rd >= PROVISIONAL_RD,
                    )
                    for s in group
                ],
                next_seat=len(group) + 1,
                deal=deal,
                created_at=now,
                pool=pool.id,
                pool_start_by=now + GATHER_MS,
            ),
        )
        if not await self.ctx.store.pools.take(pool.id, seats, room.code, now):
            self.ctx.metrics.pool_rooms_unused_total += 1
            return
        self.ctx.metrics.pool_rooms_total += 1
        logger.info("pool room made pool=%s room=%s players=%s", pool, room.code, len(group))
        self._arm_start(room.code, now + GATHER_MS)

    def deliver(self, pool_id: str, data: bytes) -> None:
        """A message on a pool's channel: seekers taken into a room; this worker seats its
        own."""
        try:
            message = orjson.loads(data)
            if message.get("ctl") != "paired":
                return
            room = str(message["room"])
            for key, seat in message["seats"].items():
                local = self._keyed.get((pool_id, key))
                if local is not None:
                    self._seat_soon(local, Taken(room, int(seat)))
        except Exception:
            logger.exception("could not read a pool's message pool=%s", pool_id)

    def _seat_soon(self, local: LocalSeek, taken: Taken) -> None:
        if self._forget(local):
            self.ctx.tasks.spawn(self._seat(local, taken), f"pool seat {taken.room}")

    async def _seat(self, local: LocalSeek, taken: Taken) -> None:
        """Seat a seeker a pairing took (then start the race if every seat is taken)."""
        await self._unclaim_quietly(local)
        await local.replied.wait()
        conn = local.conn
        if conn.closing or conn.room_code is not None or conn.id not in self.ctx.rooms.conns:
            return  # gone, or in another room: the race begins without them
        update = TakePoolSeat(taken.seat, local.seeker.token_hash, conn.id, now_ms())
        try:
            snap = await self.lobby.enter(conn, taken.room, update, token=local.token)
        except StoreUnavailable:
            self.ctx.when_store_is_back(lambda: self._seat(local, taken), f"pool seat {taken.room}")
            return
        except (Refusal, UnknownRoom):
            # the race began without them: back in the pool, their wait kept
            logger.info("pool seat lost room=%s conn=%s: seeking again", taken.room, conn.id)
            again = LocalSeek(
                conn, local.pool, local.seeker, local.token, local.offer_at, local.wait_ms
            )
            again.replied.set()
            with contextlib.suppress(Refusal, StoreUnavailable):
                await self._enter_quietly(again)
            return
        room = snap.room
        if room.pool_start_by is not None:
            self._arm_start(room.code, room.pool_start_by)
        if all(s.connected for s in room.seats):
            await self._start(room.code)

    async def _enter_quietly(self, local: LocalSeek) -> None:
        """Put a seeker back in the pool after a lost seat (no reply: they still seek)."""
        store = self.ctx.store.pools
        if local.seeker.player is not None and await store.claim(
            local.seeker.player, local.conn.id, LEASE_MS
        ):
            return
        self._remember(local)
        if not await store.add(local.pool.id, local.seeker, LEASE_MS, now_ms()):
            self._forget(local)
            return
        self.ctx.tasks.spawn(self._pair_quietly(local.pool), f"pair {local.pool}")

    async def _unclaim_quietly(self, local: LocalSeek) -> None:
        with contextlib.suppress(StoreUnavailable):
            await self._unclaim(local)

    def _arm_start(self, room_code: str, at: int) -> None:
        """Begin the room's race at ``at`` at the latest (every worker with the room arms
        it; the store begins it once)."""
        if room_code in self._starts:
            return
        delay = max(0.0, (at - now_ms()) / 1000) + 0.01

        def due() -> None:
            self._starts.pop(room_code, None)
            self.ctx.tasks.spawn(self._start(room_code), f"pool start {room_code}")

        self._starts[room_code] = asyncio.get_running_loop().call_later(delay, due)

    async def _start(self, room_code: str) -> None:
        countdown = int(self.ctx.config.countdown * 1000)
        try:
            snap, began = await self.ctx.store.rooms.update(
                room_code, StartPoolRace(now_ms(), countdown)
            )
        except UnknownRoom:
            return
        except StoreUnavailable:
            self.ctx.when_store_is_back(lambda: self._start(room_code), f"pool start {room_code}")
            return
        if began:
            timer = self._starts.pop(room_code, None)
            if timer is not None:
                timer.cancel()
            logger.info(
                "pool race started room=%s racers=%s", room_code, len(snap.room.participants)
            )

    # ------------------------------------------------------------------ a room of one's own

    def _ghost_for(self, local: LocalSeek) -> Run | None:
        """The newest kept run of the game on a deal new to the seeker."""
        for run in reversed(self._runs.get(local.pool.game, ())):
            if self.deals.deal_again(run.deal, [local.seeker.key], dry_run=True):
                return run
        return None

    async def _solo(self, local: LocalSeek, ghost: Run | None, rid: int | None) -> None:
        """A casual room of the seeker's own with a bot (``ghost`` None) or a ghost, its
        race started at once."""
        pool, conn, key = local.pool, local.conn, local.seeker.key
        if ghost is not None and self.deals.deal_again(ghost.deal, [key]):
            deal = ghost.deal
            driver: Driver = GhostDriver(ghost.deal, ghost.moves, ghost.times_ms, ghost.elapsed_ms)
            name = f"Ghost of {ghost.name}"
        else:
            deal = await self.deals.deal_for(pool.game, [key])
            driver, name = BotDriver(), "Bot (greedy)"
        options = RoomOptions(max_players=2, time_limit=pool.time_limit)
        room = await create_room(
            self.ctx.store.rooms,
            lambda room_code: RoomState(
                code=room_code, game=pool.game, options=options, deal=deal, created_at=now_ms()
            ),
        )
        token = new_token()
        update = TakeSeat(
            local.seeker.name, hash_token(token), conn.id, now_ms(), local.seeker.player
        )
        await self.lobby.enter(conn, room.code, update, token=token, rid=rid)
        await self.robots.seat(conn, name, driver)
        countdown = int(self.ctx.config.countdown * 1000)
        await self.ctx.store.rooms.update(room.code, StartRace(1, now_ms(), countdown))
        logger.info("pool seeker races a robot room=%s robot=%s", room.code, name)

    async def _race_ended(self, room_code: str, snap: Snapshot) -> None:
        """Keep the best finished run of a pool race on one of this worker's deals, for
        ghosts."""
        room = snap.room
        if room.pool is None or not room.results:
            return
        if not self.deals.deal_again(room.deal, [], dry_run=True):
            return
        best = room.results[0]
        if best["status"] != "won" or best["elapsed_ms"] is None:
            return
        store = self.ctx.store.rooms
        moves = await store.moves(room_code, room.race, best["seat"])
        times = await store.times(room_code, room.race, best["seat"])
        known = [t for t in times if t is not None]
        if not moves or len(known) != len(moves):
            return
        runs = self._runs.setdefault(room.game, deque(maxlen=RUNS_KEPT))
        runs.append(Run(room.deal, best["name"], moves, known, best["elapsed_ms"]))

    # ------------------------------------------------------------------ background

    async def _ticks(self) -> None:
        """Every :data:`TICK`: a pass over each pool this worker has seekers in; the offers
        whose time has come."""
        while True:
            await asyncio.sleep(TICK)
            pools = {local.pool for local in self._seeks.values()}
            for pool in pools:
                self.ctx.tasks.spawn(self._pair_quietly(pool), f"pair {pool}")
            now = now_ms()
            for local in list(self._seeks.values()):
                if not local.offers and now >= local.offer_at and local.replied.is_set():
                    self._offer(local)

    def _offer(self, local: LocalSeek) -> None:
        offers = ["bot"]
        if self._ghost_for(local) is not None:
            offers.append("ghost")
        if local.pool.smaller() is not None:
            offers.append("smaller")
        local.offers = tuple(offers)
        self.ctx.rooms.send([local.conn], frames.seek_offer(pool=local.pool.id, offers=offers))

    async def _pair_quietly(self, pool: Pool) -> None:
        """A pass in the background: the store being away is no failure (the next tick
        passes again)."""
        with contextlib.suppress(StoreUnavailable):
            await self.pair(pool)

    async def _renewals(self) -> None:
        """Every :data:`RENEW_EVERY`: this worker's lease in each pool it has seekers in,
        and their claims; a seeker taken (a missed message) is seated, one dropped (this
        worker's lease had run out) is put back."""
        while True:
            await asyncio.sleep(RENEW_EVERY)
            by_pool: dict[Pool, list[LocalSeek]] = {}
            for local in self._seeks.values():
                by_pool.setdefault(local.pool, []).append(local)
            try:
                await gather_all(*(self._renew(pool, seeks) for pool, seeks in by_pool.items()))
            except StoreUnavailable:
                continue
            except Exception:
                logger.exception("pool leases not renewed")

    async def _renew(self, pool: Pool, seeks: list[LocalSeek]) -> None:
        store = self.ctx.store.pools
        now = now_ms()
        found = await store.renew(pool.id, [s.seeker.key for s in seeks], LEASE_MS, now)
        claims = [(s.seeker.player, s.conn.id) for s in seeks if s.seeker.player is not None]
        if claims:
            await store.hold_claims(claims, LEASE_MS)
        for local in seeks:
            if local.seeker.key not in found or self._seeks.get(local.conn.id) is not local:
                continue
            taken = found[local.seeker.key]
            if taken is not None:
                self._seat_soon(local, taken)
            else:
                logger.info("seeker dropped from pool=%s: put back", pool)
                await store.add(pool.id, local.seeker, LEASE_MS, now)

    async def _counting(self) -> None:
        """While connections watch the counts: read them every :data:`COUNTS_EVERY` and
        tell the watchers when they change."""
        while True:
            if not self._watchers:
                self._counts = None
                self._counted.clear()
                await self._counted.wait()
            await asyncio.sleep(COUNTS_EVERY)
            try:
                await self._count()
            except StoreUnavailable:
                continue
            except Exception:
                logger.exception("pool counts not read")

    async def _count(self) -> None:
        counts = await self.ctx.store.pools.counts([p.id for p in POOLS], now_ms())
        data = frames.pool_counts(
            [
                {
                    "pool": p.id,
                    "game": p.game,
                    "players": p.players,
                    "time_limit": p.time_limit,
                    "rated": p.rated,
                    "seeking": counts.get(p.id, 0),
                }
                for p in POOLS
            ]
        )
        if data != self._counts:
            self._counts = data
            self.ctx.rooms.send(list(self._watchers), data)
