"""Rooms in Redis (one, or a cluster): their state, move logs and events.

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
                                  one Redis, sharded pub/sub on a cluster: the broker's)

Room changes run in a WATCH/MULTI transaction on ``room`` and ``progress`` (retried on
conflict), so race-end detection is safe across workers; it also writes each seat's epoch.
A move is stored by one Lua script (:mod:`.scripts`) that checks the writer's epoch (a
fencing token: a connection replaced by a resume can store nothing), checks the seat is
still racing, appends the move, stores the progress and numbers, keeps and publishes the
events; the move is acknowledged only after. The script calls of all moves are pipelined on
one connection per shard (:class:`~.pipe.RespPipe`, through :class:`~.moves.MoveWriter`):
the calls made in one turn of the event loop go out in one write, and Redis answers them in
order. With ``durability`` above ``memory`` each write ends with a barrier (``WAIT``,
``WAITAOF``: :mod:`.durability`). Every key gets a TTL on each write (shorter once a race
has ended), so abandoned rooms expire.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any, TypeVar

import orjson
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import WatchError

from protocol.frames import EventBody

from ...rooms.room import ProgressState, RoomState
from ...rooms.updates import Update
from ..rooms import (
    Fenced,
    LogConflict,
    Snapshot,
    UnknownRoom,
    entry_move,
    entry_time,
    events_after,
    kept_for,
    log_entry,
)
from .link import RedisLink
from .moves import MoveWriter

__all__ = ["RedisRooms"]

T = TypeVar("T")

logger = logging.getLogger("samedeal.redis")


class RedisRooms:
    """:class:`~server.store.rooms.RoomStore` in Redis, reached through ``link``."""

    def __init__(
        self,
        link: RedisLink,
        *,
        event_cap: int = 500,
        active_ttl: float = 6 * 3600,
        finished_ttl: float = 3600,
    ) -> None:
        self._link = link
        self.event_cap = event_cap
        self.active_ttl = active_ttl
        self.finished_ttl = finished_ttl
        self._writer: MoveWriter | None = None
        self._events: AsyncScript | None = None

    def _key(self, room_code: str, what: str) -> str:
        return self._link.key(room_code, what)

    def _moves_key(self, room_code: str, race: int, seat: int) -> str:
        return self._key(room_code, f"moves:{race}:{seat}")

    def _ttl(self, room: RoomState) -> int:
        return int(kept_for(room, self.active_ttl, self.finished_ttl))

    @property
    def _moves(self) -> MoveWriter:
        """The moves' writer, made on the first move (the link is open by then: it knows
        the scripts, the shards and the durability)."""
        if self._writer is None:
            link = self._link
            self._writer = MoveWriter(
                link.router,
                link.scripts.append,
                link.key,
                self.event_cap,
                self.active_ttl,
                link.check_health,
                link.durability,
            )
        return self._writer

    @property
    def _events_script(self) -> AsyncScript:
        """A room update's events script (numbering, keeping, publishing as the link
        does)."""
        if self._events is None:
            link = self._link
            self._events = AsyncScript(link.router.primaries()[0].redis, link.scripts.events)
        return self._events

    async def create(self, room: RoomState) -> bool:
        """SET NX the room's state."""
        key, ttl = self._key(room.code, "room"), self._ttl(room)
        json = room.model_dump_json()
        ok = await self._link.run(room.code, lambda r: r.set(key, json, nx=True, ex=ttl))
        if ok:
            await self._link.settle(room.code, key, ttl)
        return bool(ok)

    async def snapshot(self, room_code: str) -> Snapshot | None:
        """Room, progress and seq in one MULTI, so they agree."""

        async def read(redis: aioredis.Redis) -> list[Any]:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(room_code, "room"))
                pipe.hgetall(self._key(room_code, "progress"))
                pipe.get(self._key(room_code, "seq"))
                return await pipe.execute()

        raw, progress, seq = await self._link.run(room_code, read)
        if raw is None:
            return None
        return Snapshot(
            RoomState.model_validate_json(raw),
            {int(k): ProgressState.from_json(v) for k, v in progress.items()},
            int(seq or 0),
        )

    async def update(self, room_code: str, update: Update[T]) -> tuple[Snapshot, T]:
        """WATCH room and progress, apply ``update``, write it all in MULTI; retry on
        conflict.

        A connection that fails while the transaction is under way also ends in a retry
        (redis-py raises WatchError), but then Redis may have run the EXEC before the
        connection failed. So the transaction also records a token unique to this call (in
        the room's ``done`` set), and before running ``update`` again the token is looked
        up: if it is there, the update is done, and is not applied a second time (its
        events were published; the call returns the room as it is now, and the value of the
        update as it ran)."""
        snap, value, ttl = await self._link.run(
            room_code, lambda r: self._update(r, room_code, update)
        )
        await self._link.settle(room_code, self._key(room_code, "room"), ttl)
        return snap, value

    async def _update(
        self, redis: aioredis.Redis, room_code: str, update: Update[T]
    ) -> tuple[Snapshot, T, int]:
        room_key, progress_key = self._key(room_code, "room"), self._key(room_code, "progress")
        seq_key, events_key = self._key(room_code, "seq"), self._key(room_code, "events")
        epochs_key = self._key(room_code, "epochs")
        done_key, token = self._key(room_code, "done"), secrets.token_hex(8)
        sent = False
        async with redis.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(room_key, progress_key)
                    raw = await pipe.get(room_key)
                    if raw is None:
                        raise UnknownRoom(room_code)
                    stored = await pipe.hgetall(progress_key)
                    room = RoomState.model_validate_json(raw)
                    progress = {int(k): ProgressState.from_json(v) for k, v in stored.items()}
                    events, value = update(room, progress)
                    ttl = self._ttl(room)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.set(room_key, room.model_dump_json(), ex=ttl)
                    pipe.delete(progress_key)
                    if progress:
                        pipe.hset(
                            progress_key,
                            mapping={str(s): p.to_json() for s, p in progress.items()},
                        )
                        pipe.expire(progress_key, ttl)
                    pipe.delete(epochs_key)
                    if room.seats:
                        pipe.hset(epochs_key, mapping={str(s.seat): s.epoch for s in room.seats})
                        pipe.expire(epochs_key, ttl)
                    if room.phase == "ended":
                        for seat in room.participants:
                            pipe.expire(self._moves_key(room_code, room.race, seat), ttl)
                    now = time.time()
                    pipe.zadd(done_key, {token: now})
                    pipe.zremrangebyscore(done_key, "-inf", now - _DONE_TTL)
                    pipe.expire(done_key, ttl)
                    await self._events_script(
                        keys=[seq_key, events_key],
                        args=[self.event_cap, self._link.channel(room_code), ttl, *_bodies(events)],
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
                                "room update ran before its connection failed room=%s", room_code
                            )
                            snap = await self.snapshot(room_code)
                            if snap is None:
                                raise UnknownRoom(room_code) from None
                            return snap, value, ttl
                    continue
        return Snapshot(room, progress, int(result[-1] or 0)), value, ttl

    async def append(
        self,
        room_code: str,
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
        writer = self._moves
        packed = writer.pack(room_code, race, seat, entry, progress, events, index, epoch)
        result, resent = await writer.send(room_code, packed)
        if result is None:
            return None
        if result == -2:
            raise Fenced(f"seat {seat} is held by a newer connection")
        if result == -1:
            key = self._moves_key(room_code, race, seat)
            if resent and entry:
                found = await self._link.run(room_code, lambda r: r.lindex(key, index or 0))
                if found == entry.encode():
                    # an earlier try was run before its connection failed
                    await self._link.settle(room_code, key, int(self.active_ttl))
                    return []
            raise LogConflict(f"the move log is not {index} moves long")
        return list(result)

    async def moves(self, room_code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """LRANGE of the seat's move log."""
        key = self._moves_key(room_code, race, seat)
        items = await self._link.run(room_code, lambda r: r.lrange(key, start, -1))
        return [entry_move(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def times(self, room_code: str, race: int, seat: int) -> list[int | None]:
        """The time of each move of the log (entries ``MOVE@MS``)."""
        key = self._moves_key(room_code, race, seat)
        items = await self._link.run(room_code, lambda r: r.lrange(key, 0, -1))
        return [entry_time(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def log(self, room_code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """LRANGE of the seat's move log, entries with their times."""
        key = self._moves_key(room_code, race, seat)
        items = await self._link.run(room_code, lambda r: r.lrange(key, start, -1))
        return [m.decode() if isinstance(m, bytes) else str(m) for m in items]

    async def events_since(self, room_code: str, after: int) -> list[bytes] | None:
        """Kept events after ``after``, or None when the first missed one was trimmed."""

        async def read(redis: aioredis.Redis) -> list[Any]:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(room_code, "seq"))
                pipe.lrange(self._key(room_code, "events"), 0, -1)
                return await pipe.execute()

        seq, items = await self._link.run(room_code, read)
        return events_after(items, int(seq or 0), after)


#: seconds a room update's token is kept (long enough to look it up after a failure)
_DONE_TTL = 60


def _bodies(events: list[EventBody]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]
