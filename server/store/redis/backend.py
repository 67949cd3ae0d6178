"""The Redis backend: several workers share rooms, on one Redis or on a Redis Cluster.

Keys of one room share a hash tag, so a room lives on one Redis Cluster shard::

    sd:{K7QF2M}:room              RoomState JSON (seats keep token hashes, never tokens)
    sd:{K7QF2M}:progress          hash: seat -> ProgressState JSON of the current race
    sd:{K7QF2M}:epochs            hash: seat -> the epoch of the connection holding it
    sd:{K7QF2M}:seq               the room's event counter
    sd:{K7QF2M}:events            list: the last ``event_cap`` stamped events
    sd:{K7QF2M}:moves:<race>:<seat>  list: a seat's move log, one action per item
                                     (``MOVE@MS``: with its ms since the race's start)
    sd:{K7QF2M}:done              sorted set: tokens of the last minute's room updates
    sd:{K7QF2M}:ch                channel: stamped events and control messages (pub/sub on
                                  one Redis, sharded pub/sub on a cluster)

The live directory (:mod:`server.redis_live`), the kept records writes
(:mod:`server.redis_pending`), tournaments (:mod:`server.redis_tournaments`) and the
workers' beats (:mod:`server.redis_beats`) are mixins
with their own keys, each group of keys a script or transaction touches under one hash tag;
they reach Redis through the same router (:meth:`RedisBackend._at`).

Room changes run in a WATCH/MULTI transaction on ``room`` and ``progress`` (retried on
conflict), so race-end detection is safe across workers; it also writes each seat's epoch.
A move is stored by one Lua script (:mod:`server.redis_scripts`) that checks the writer's
epoch (a fencing token: a connection replaced by a resume can store nothing), checks the
seat is still racing, appends the move, stores the progress and numbers, keeps and
publishes the events; the move is acknowledged only after. The script calls of all moves
are pipelined on one connection per shard (:class:`server.resp.RespPipe`): the calls made
in one turn of the event loop go out in one write, and Redis answers them in order. With
``durability`` above ``memory`` each write ends with a barrier (``WAIT``, ``WAITAOF``:
:mod:`server.redis_durability`).

Where a room's keys are is the router's business (:mod:`server.redis_cluster`): one Redis,
or the primary of the room's slot — following ``MOVED`` replies and failovers. Every
worker, the publishing one included, delivers events to its connections from the room's
channel (:mod:`server.redis_pubsub`, :mod:`server.redis_cluster_pubsub`): one path in seq
order. Every key gets a TTL on each write (shorter once a race has ended), so abandoned
rooms expire.

While Redis cannot be reached, every call raises :class:`~server.backend.StoreUnavailable`
(nothing was stored); a health watch pings every primary, logs one line when Redis is lost
and one when it is back, and tells the server's layers (``health_hooks``).
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import orjson
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import WatchError

from protocol.frames import EventBody

from ...rooms.room import ProgressState, RoomState
from ...rooms.updates import Update
from ..backend import (
    Backend,
    Fenced,
    Health,
    Listener,
    LogConflict,
    Snapshot,
    UnknownRoom,
    entry_move,
    entry_time,
    events_after,
    log_entry,
)
from ..cluster.pubsub import ShardChannels
from .beats import RedisBeats
from .directory import RedisDirectory
from .link import RedisLink
from .moves import MoveWriter
from .pending import RedisPending
from .presence import RedisPresence
from .pubsub import RoomChannels
from .scripts import Scripts
from .shards import ClusterRouter, check_redis_url
from .tournaments import RedisTournaments

__all__ = ["RedisBackend", "check_redis_url"]

T = TypeVar("T")

logger = logging.getLogger("samedeal.redis")


class RedisBackend(Backend):
    """Rooms in Redis (one, or a cluster), events over its pub/sub."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        worker_id: str = "redis",
        prefix: str = "sd",
        event_cap: int = 500,
        active_ttl: float = 6 * 3600,
        finished_ttl: float = 3600,
        health_interval: float = 0.5,
        durability: str | None = None,
        durability_timeout: float = 1.0,
    ) -> None:
        super().__init__()
        self.worker_id = worker_id
        self.prefix = prefix
        self.event_cap = event_cap
        self.active_ttl = active_ttl
        self.finished_ttl = finished_ttl
        self.link = RedisLink(
            url,
            worker_id=worker_id,
            prefix=prefix,
            health_interval=health_interval,
            durability=durability,
            durability_timeout=durability_timeout,
            health_hooks=self.health_hooks,
        )
        self.channels: RoomChannels | ShardChannels | None = None
        self._events_script: AsyncScript | None = None
        self._writer: MoveWriter | None = None
        self.pending = RedisPending(self.link)
        self.beats = RedisBeats(self.link)
        self.directory = RedisDirectory(self.link)
        self.tournaments = RedisTournaments(self.link, event_cap)
        self.presence = RedisPresence(self.link)

    @property
    def cluster(self) -> bool:
        """Whether the rooms are on a Redis Cluster."""
        return self.link.cluster

    @property
    def durability(self) -> str:
        """The durability every write is confirmed with (known once started)."""
        return self.link.durability

    @property
    def write_timeout(self) -> float:
        """Seconds a move may wait for Redis to answer (:attr:`RedisLink.write_timeout`)."""
        return self.link.write_timeout

    @write_timeout.setter
    def write_timeout(self, seconds: float) -> None:
        self.link.write_timeout = seconds

    @property
    def _scripts(self) -> Scripts:
        return self.link.scripts

    # ------------------------------------------------------------------ keys

    def _key(self, code: str, what: str) -> str:
        return self.link.key(code, what)

    def _moves_key(self, code: str, race: int, seat: int) -> str:
        return self._key(code, f"moves:{race}:{seat}")

    def _channel(self, code: str) -> str:
        return self.link.channel(code)

    # ------------------------------------------------------------------ health

    def health(self) -> Health:
        """Whether every primary answered the last health check."""
        return self.link.health()

    def _reaching(self) -> contextlib.AbstractContextManager[None]:
        return self.link.reaching()

    async def _at(
        self, where: str, op: Callable[[aioredis.Redis], Awaitable[T]], *, key: bool = False
    ) -> T:
        return await self.link.run(where, op, key=key)

    # ------------------------------------------------------------------ lifecycle

    async def start(self, listener: Listener) -> None:
        """Find the shards, check they can give the durability asked for, start the
        listener and the health watch."""
        link = self.link
        await link.open()
        with link.reaching():
            router = link.router
            self._events_script = AsyncScript(router.primaries()[0].redis, link.scripts.events)
            self._writer = MoveWriter(
                router,
                link.scripts.append,
                link.key,
                self.event_cap,
                self.active_ttl,
                link.check_health,
                link.durability,
            )
            if isinstance(router, ClusterRouter):
                self.channels = ShardChannels(
                    router, link.channel, self.events_since, link.check_health
                )
            else:
                self.channels = RoomChannels(
                    router.shard("").redis,
                    f"{self.prefix}:worker:{self.worker_id}",
                    link.channel,
                    self.events_since,
                    link.check_health,
                )
            await self.channels.start(listener)

    async def close(self) -> None:
        """Stop the listeners, the health watch and the writers; close the connections."""
        await self.directory.close()
        if self.channels is not None:
            await self.channels.close()
        await self.link.close()

    async def subscribe(self, code: str) -> None:
        """Subscribe to the room's channel (returns once Redis confirmed it)."""
        assert self.channels is not None
        with self._reaching():
            await self.channels.subscribe(code)

    async def unsubscribe(self, code: str) -> None:
        """Leave the room's channel."""
        assert self.channels is not None
        with self._reaching():
            await self.channels.unsubscribe(code)

    async def publish_control(self, code: str, data: bytes) -> None:
        """Publish a control message (not stored, no seq)."""
        publish = self._scripts.publish
        channel = self._channel(code)
        await self._at(code, lambda r: r.execute_command(publish, channel, data))  # type: ignore[no-untyped-call]

    # ------------------------------------------------------------------ rooms

    async def create_room(self, room: RoomState) -> bool:
        """SET NX the room's state."""
        key, ttl = self._key(room.code, "room"), int(self.ttl_for(room))
        json = room.model_dump_json()
        ok = await self._at(room.code, lambda r: r.set(key, json, nx=True, ex=ttl))
        if ok:
            await self._settle(room.code, key, ttl)
        return bool(ok)

    async def _settle(self, code: str, key: str, ttl: int) -> None:
        await self.link.settle(code, key, ttl)

    async def snapshot(self, code: str) -> Snapshot | None:
        """Room, progress and seq in one MULTI, so they agree."""

        async def read(redis: aioredis.Redis) -> list[Any]:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(code, "room"))
                pipe.hgetall(self._key(code, "progress"))
                pipe.get(self._key(code, "seq"))
                return await pipe.execute()

        raw, progress, seq = await self._at(code, read)
        if raw is None:
            return None
        return Snapshot(
            RoomState.model_validate_json(raw),
            {int(k): ProgressState.model_validate_json(v) for k, v in progress.items()},
            int(seq or 0),
        )

    async def update_room(self, code: str, update: Update[T]) -> tuple[Snapshot, T]:
        """WATCH room and progress, apply ``update``, write it all in MULTI; retry on
        conflict.

        A connection that fails while the transaction is under way also ends in a retry
        (redis-py raises WatchError), but then Redis may have run the EXEC before the
        connection failed. So the transaction also records a token unique to this call (in
        the room's ``done`` set), and before running ``update`` again the token is looked
        up: if it is there, the update is done, and is not applied a second time (its
        events were published; the call returns the room as it is now, and the value of the
        update as it ran)."""
        snap, value, ttl = await self._at(code, lambda r: self._update_room(r, code, update))
        await self._settle(code, self._key(code, "room"), ttl)
        return snap, value

    async def _update_room(
        self, redis: aioredis.Redis, code: str, update: Update[T]
    ) -> tuple[Snapshot, T, int]:
        room_key, progress_key = self._key(code, "room"), self._key(code, "progress")
        seq_key, events_key = self._key(code, "seq"), self._key(code, "events")
        epochs_key = self._key(code, "epochs")
        done_key, token = self._key(code, "done"), secrets.token_hex(8)
        assert self._events_script is not None
        sent = False
        async with redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(room_key, progress_key)
                    raw = await pipe.get(room_key)
                    if raw is None:
                        raise UnknownRoom(code)
                    stored = await pipe.hgetall(progress_key)
                    room = RoomState.model_validate_json(raw)
                    progress = {
                        int(k): ProgressState.model_validate_json(v) for k, v in stored.items()
                    }
                    events, value = update(room, progress)
                    ttl = int(self.ttl_for(room))
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.set(room_key, room.model_dump_json(), ex=ttl)
                    pipe.delete(progress_key)
                    if progress:
                        pipe.hset(
                            progress_key,
                            mapping={str(s): p.model_dump_json() for s, p in progress.items()},
                        )
                        pipe.expire(progress_key, ttl)
                    pipe.delete(epochs_key)
                    if room.seats:
                        pipe.hset(epochs_key, mapping={str(s.seat): s.epoch for s in room.seats})
                        pipe.expire(epochs_key, ttl)
                    if room.phase == "ended":
                        for seat in room.participants:
                            pipe.expire(self._moves_key(code, room.race, seat), ttl)
                    now = time.time()
                    pipe.zadd(done_key, {token: now})
                    pipe.zremrangebyscore(done_key, "-inf", now - _DONE_TTL)
                    pipe.expire(done_key, ttl)
                    await self._events_script(
                        keys=[seq_key, events_key],
                        args=[self.event_cap, self._channel(code), ttl, *_bodies(events)],
                        client=pipe,
                    )
                    pipe.get(seq_key)
                    sent = True
                    result = await pipe.execute()
                    break
                except WatchError:
                    if sent:
                        sent = False
                        if await redis.zscore(done_key, token) is not None:
                            logger.warning(
                                "room update ran before its connection failed room=%s", code
                            )
                            snap = await self.snapshot(code)
                            if snap is None:
                                raise UnknownRoom(code) from None
                            return snap, value, ttl
                    continue
        return Snapshot(room, progress, int(result[-1] or 0)), value, ttl

    async def append(
        self,
        code: str,
        race: int,
        seat: int,
        *,
        move: str | None,
        progress: ProgressState | None,
        events: list[EventBody],
        index: int | None = None,
        at: int | None = None,
        epoch: int | None = None,
    ) -> list[bytes] | None:
        """One Lua call: fence, check, append the move, store progress and events, publish.
        The call is pipelined with the other moves of this turn of the loop (to the same
        shard).

        A call whose connection failed after it was written may have run: it is sent again
        (on a new connection, once Redis answers — on a cluster, to the slot's primary as
        it is then) until Redis tells — the move found at its place in the log means it
        ran — for ``write_timeout`` at most, then :class:`OutcomeUnknown`. A call never
        written, or refused by Redis unrun, raises :class:`StoreUnavailable`: it certainly
        did not run. With a barrier, a move Redis ran that the barrier did not confirm
        raises :class:`NotDurable`."""
        entry = log_entry(move, at) if move else ""
        assert self._writer is not None, "not started"
        packed = self._writer.pack(code, race, seat, entry, progress, events, index, epoch)
        result, resent = await self._writer.send(code, packed)
        if result is None:
            return None
        if result == -2:
            raise Fenced(f"seat {seat} is held by a newer connection")
        if result == -1:
            key = self._moves_key(code, race, seat)
            if resent and entry:
                found = await self._at(code, lambda r: r.lindex(key, index or 0))
                if found == entry.encode():
                    # an earlier try was run before its connection failed
                    await self._settle(code, key, int(self.active_ttl))
                    return []
            raise LogConflict(f"the move log is not {index} moves long")
        return list(result)

    async def moves(self, code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """LRANGE of the seat's move log."""
        key = self._moves_key(code, race, seat)
        items = await self._at(code, lambda r: r.lrange(key, start, -1))
        return [entry_move(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def times(self, code: str, race: int, seat: int) -> list[int | None]:
        """The time of each move of the log (entries ``MOVE@MS``)."""
        key = self._moves_key(code, race, seat)
        items = await self._at(code, lambda r: r.lrange(key, 0, -1))
        return [entry_time(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def log(self, code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """LRANGE of the seat's move log, entries with their times."""
        key = self._moves_key(code, race, seat)
        items = await self._at(code, lambda r: r.lrange(key, start, -1))
        return [m.decode() if isinstance(m, bytes) else str(m) for m in items]

    async def events_since(self, code: str, after: int) -> list[bytes] | None:
        """Kept events after ``after``, or None when the first missed one was trimmed."""

        async def read(redis: aioredis.Redis) -> list[Any]:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(code, "seq"))
                pipe.lrange(self._key(code, "events"), 0, -1)
                return await pipe.execute()

        seq, items = await self._at(code, read)
        return events_after(items, int(seq or 0), after)

    async def ping(self) -> float:
        """Round trip of a PING in seconds (on a cluster: of the slowest primary)."""
        return await self.link.ping()


#: seconds a room update's token is kept (long enough to look it up after a failure)
_DONE_TTL = 60


def _bodies(events: list[EventBody]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]
