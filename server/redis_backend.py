"""The Redis backend: several workers share rooms.

Keys of one room share a hash tag, so a room can live on one Redis Cluster shard::

    sd:{K7QF2M}:room              RoomState JSON (seats keep token hashes, never tokens)
    sd:{K7QF2M}:progress          hash: seat -> ProgressState JSON of the current race
    sd:{K7QF2M}:epochs            hash: seat -> the epoch of the connection holding it
    sd:{K7QF2M}:seq               the room's event counter
    sd:{K7QF2M}:events            list: the last ``event_cap`` stamped events
    sd:{K7QF2M}:moves:<race>:<seat>  list: a seat's move log, one action per item
                                     (``MOVE@MS``: with its ms since the race's start)
    sd:{K7QF2M}:done              sorted set: tokens of the last minute's room updates
    sd:{K7QF2M}:ch                pub/sub channel: stamped events and control messages
    sd:beats                      hash: worker id -> its last beat (liveness)

Room changes run in a WATCH/MULTI transaction on ``room`` and ``progress`` (retried on
conflict), so race-end detection is safe across workers; it also writes each seat's epoch.
A move is stored by one Lua script that checks the writer's epoch (a fencing token: a
connection replaced by a resume can store nothing), checks the seat is still racing, appends
the move, stores the progress and numbers, keeps and publishes the events; the move is
acknowledged only after. The script calls of all moves are pipelined on one connection
(:class:`server.resp.RespPipe`): the calls made in one turn of the event loop go out in one
write, and Redis answers them in order.

Every worker, the publishing one included, delivers events to its connections from the
pub/sub channel (:mod:`server.redis_pubsub`): one path in seq order. Every key gets a TTL
on each write (shorter once a race has ended), so abandoned rooms expire.

While Redis cannot be reached, every call raises :class:`~server.backend.StoreUnavailable`
(nothing stored); a health watch pings Redis, logs its loss and return, tells ``health_hooks``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Iterator
from typing import Any, TypeVar

import orjson
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from protocol.frames import EventBody

from .backend import (
    Backend,
    Fenced,
    Health,
    HealthWatch,
    Listener,
    LogConflict,
    OutcomeUnknown,
    Snapshot,
    StoreUnavailable,
    UnknownRoom,
    entry_move,
    entry_time,
    events_after,
    log_entry,
)
from .redis_live import RedisLive, RedisWatching
from .redis_pending import RedisPendingWrites
from .redis_pubsub import RoomChannels
from .redis_tournaments import RedisTournaments
from .resp import NotSent, RespPipe
from .room import ProgressState, RoomState
from .updates import Update

__all__ = ["RedisBackend", "check_redis_url"]

T = TypeVar("T")

logger = logging.getLogger("samedeal.redis")

_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)


def check_redis_url(url: str) -> None:
    """Raise ``ValueError`` with a clear message when ``url`` is not a Redis URL that
    redis-py can use (``redis://``, ``rediss://``, ``unix://``)."""
    try:
        aioredis.ConnectionPool.from_url(url)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a Redis URL: {url!r} ({exc})") from None


# Numbers, keeps and publishes the event bodies ARGV[first..]: the stamped form is the body
# with "seq" put in front (protocol.frames.stamp_event), the bytes every client receives.
_STAMP_LUA = """
local function stamp_events(seq_key, events_key, channel, first)
  local out = {}
  for i = first, #ARGV do
    local seq = redis.call('INCR', seq_key)
    local data = '{"seq":' .. seq .. ',' .. string.sub(ARGV[i], 2)
    redis.call('RPUSH', events_key, data)
    redis.call('PUBLISH', channel, data)
    out[#out + 1] = data
  end
  return out
end
"""

# KEYS: seq, events   ARGV: cap, channel, ttl, body...
_EVENTS_LUA = (
    _STAMP_LUA
    + """
local out = stamp_events(KEYS[1], KEYS[2], ARGV[2], 4)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[1]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return out
"""
)

# KEYS: progress, seq, events, moves, epochs
# ARGV: seat, race, cap, channel, ttl (the same for every call of a seat: packed once),
#       progress json ('' to leave it), move ('' for none), index (-1: any),
#       epoch ('' for none: a server act, not a connection's), body...
# Returns -2 (the seat is held with another epoch: fenced), false (seat not racing), -1 (log
# length is not index) or the events.
# The stored progress is checked as text, not decoded (cjson was a third of the script's
# cost): it is ProgressState JSON, whose first field is the race; a name cannot fake the
# status (its quotes are escaped). The log's TTL is renewed every 64 moves, not each move.
_APPEND_LUA = (
    _STAMP_LUA
    + """
if ARGV[9] ~= '' and (redis.call('HGET', KEYS[5], ARGV[1]) or '1') ~= ARGV[9] then
  return -2
end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return false end
if string.sub(cur, 1, 9 + #ARGV[2]) ~= '{"race":' .. ARGV[2] .. ','
   or not string.find(cur, '"status":"playing"', 1, true) then return false end
if ARGV[7] ~= '' then
  local index = tonumber(ARGV[8])
  if index >= 0 and redis.call('LLEN', KEYS[4]) ~= index then return -1 end
  if redis.call('RPUSH', KEYS[4], ARGV[7]) % 64 == 1 then
    redis.call('EXPIRE', KEYS[4], ARGV[5])
  end
end
if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], ARGV[1], ARGV[6]) end
local out = stamp_events(KEYS[2], KEYS[3], ARGV[4], 10)
if #out > 0 then redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1) end
return out
"""
)


class RedisBackend(RedisTournaments, RedisPendingWrites, RedisWatching, Backend):
    """Rooms in Redis, events over Redis pub/sub."""

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
    ) -> None:
        super().__init__()
        self.worker_id = worker_id
        self.prefix = prefix
        self.event_cap = event_cap
        self.active_ttl = active_ttl
        self.finished_ttl = finished_ttl
        check_redis_url(url)
        # a burst of requests (a thousand first moves at once) waits for a connection
        # rather than fail with "too many connections". A command on a connection Redis
        # closed (restart, kill, idle timeout) is sent again on a new one, not failed once
        # per pooled connection; moves (see append) and room updates do not go this way.
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=64,
            timeout=20,
            socket_connect_timeout=2,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.02), 3),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self.redis: aioredis.Redis = aioredis.Redis.from_pool(pool)
        # the health watch's own connection: no retries, a short timeout
        self._probe = aioredis.Redis.from_url(url, socket_timeout=1, socket_connect_timeout=1)
        self._append_sha = self.redis.register_script(_APPEND_LUA).sha.encode()
        self._events_script = self.redis.register_script(_EVENTS_LUA)
        self.channels = RoomChannels(
            self.redis,
            f"{prefix}:worker:{worker_id}",
            self._channel,
            self.events_since,
            self.check_health,
        )
        self.live = RedisLive(self.redis, prefix, worker_id)
        self._watch = HealthWatch("redis", self.health_hooks)
        self._health_interval = health_interval
        self._health_task: asyncio.Task[None] | None = None
        self._check_now = asyncio.Event()
        self._beat = 0
        # the moves' script calls: packed by us (a seat's constant arguments once) and
        # pipelined on one connection, all the calls of a loop turn in one write
        self._heads: dict[tuple[str, int, int], bytes] = {}
        self._store = RespPipe(self._store_connection, reply_timeout=10.0)

    @property
    def write_timeout(self) -> float:
        """Seconds a move may wait for Redis to answer before its connection is dropped
        (the move is then sent again on a new connection, until Redis says whether it
        was stored, for as long again at most)."""
        return self._store.reply_timeout

    @write_timeout.setter
    def write_timeout(self, seconds: float) -> None:
        self._store.reply_timeout = seconds

    async def _store_connection(self) -> Any:
        # a connection of the pool's settings without redis-py's socket timeout (the pipe
        # has its own watchdog); its transport is taken over by the pipe
        pool = self.redis.connection_pool
        conn = pool.connection_class(**{**pool.connection_kwargs, "socket_timeout": None})
        await conn.connect()  # type: ignore[no-untyped-call]
        return conn

    # ------------------------------------------------------------------ keys

    def _key(self, code: str, what: str) -> str:
        return f"{self.prefix}:{{{code}}}:{what}"

    def _moves_key(self, code: str, race: int, seat: int) -> str:
        return self._key(code, f"moves:{race}:{seat}")

    def _channel(self, code: str) -> str:
        return self._key(code, "ch")

    # ------------------------------------------------------------------ health

    def health(self) -> Health:
        """Whether Redis answered the last health check."""
        return self._watch.state

    def check_health(self) -> None:
        """Something failed to reach Redis: check it now rather than at the next tick."""
        self._check_now.set()

    @contextlib.contextmanager
    def _reaching(self) -> Iterator[None]:
        """Turn Redis's connection failures into :class:`StoreUnavailable`."""
        try:
            yield
        except _UNREACHABLE as exc:
            self.check_health()
            raise StoreUnavailable(f"Redis cannot be reached: {exc}") from exc

    async def _health_loop(self) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._check_now.wait(), self._health_interval)
            self._check_now.clear()
            try:
                await self._probe.ping()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._watch.down(str(exc) or type(exc).__name__)
            else:
                self._watch.up()

    # ------------------------------------------------------------------ lifecycle

    async def start(self, listener: Listener) -> None:
        """Check the connection, start the listener and the health watch."""
        with self._reaching():
            await self.redis.ping()
            await self.channels.start(listener)
        self._health_task = asyncio.create_task(self._health_loop())

    async def close(self) -> None:
        """Stop the listener, the health watch and the writer; close the connections."""
        self._store.close()
        await self.live.close()
        if self._health_task is not None:
            self._health_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._health_task
        await self.channels.close()
        await self._probe.aclose()
        await self.redis.aclose()

    async def subscribe(self, code: str) -> None:
        """Subscribe to the room's channel (returns once Redis confirmed it)."""
        with self._reaching():
            await self.channels.subscribe(code)

    async def unsubscribe(self, code: str) -> None:
        """Leave the room's channel."""
        with self._reaching():
            await self.channels.unsubscribe(code)

    async def publish_control(self, code: str, data: bytes) -> None:
        """Publish a control message (not stored, no seq)."""
        with self._reaching():
            await self.redis.publish(self._channel(code), data)

    # ------------------------------------------------------------------ rooms

    async def create_room(self, room: RoomState) -> bool:
        """SET NX the room's state."""
        with self._reaching():
            ok = await self.redis.set(
                self._key(room.code, "room"),
                room.model_dump_json(),
                nx=True,
                ex=int(self.ttl_for(room)),
            )
        return bool(ok)

    async def snapshot(self, code: str) -> Snapshot | None:
        """Room, progress and seq in one MULTI, so they agree."""
        with self._reaching():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(code, "room"))
                pipe.hgetall(self._key(code, "progress"))
                pipe.get(self._key(code, "seq"))
                raw, progress, seq = await pipe.execute()
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
        with self._reaching():
            return await self._update_room(code, update)

    async def _update_room(self, code: str, update: Update[T]) -> tuple[Snapshot, T]:
        room_key, progress_key = self._key(code, "room"), self._key(code, "progress")
        seq_key, events_key = self._key(code, "seq"), self._key(code, "events")
        epochs_key = self._key(code, "epochs")
        done_key, token = self._key(code, "done"), secrets.token_hex(8)
        sent = False
        async with self.redis.pipeline(transaction=True) as pipe:
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
                        if await self.redis.zscore(done_key, token) is not None:
                            logger.warning(
                                "room update ran before its connection failed room=%s", code
                            )
                            snap = await self.snapshot(code)
                            if snap is None:
                                raise UnknownRoom(code) from None
                            return snap, value
                    continue
        return Snapshot(room, progress, int(result[-1] or 0)), value

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
        The call is pipelined with the other moves of this turn of the loop.

        A call whose connection failed after it was written may have run: it is sent again
        (on a new connection, once Redis answers) until Redis tells — the move found at its
        place in the log means it ran — for ``write_timeout`` at most, then
        :class:`OutcomeUnknown`. A call never written raises :class:`StoreUnavailable`:
        it certainly did not run."""
        entry = log_entry(move, at) if move else ""
        head = self._heads.get((code, race, seat))
        if head is None:
            # the arguments that are the same for every call of a seat, packed once
            head = _resp_args(
                [
                    b"EVALSHA",
                    self._append_sha,
                    5,
                    self._key(code, "progress"),
                    self._key(code, "seq"),
                    self._key(code, "events"),
                    self._moves_key(code, race, seat),
                    self._key(code, "epochs"),
                    seat,
                    race,
                    self.event_cap,
                    self._channel(code),
                    int(self.active_ttl),
                ]
            )
            if len(self._heads) >= 100_000:
                self._heads.clear()  # bounded: rebuilt on the next call of each seat
            self._heads[code, race, seat] = head
        state = b"" if progress is None else progress.model_dump_json().encode()
        log = entry.encode()
        number = b"-1" if index is None else b"%d" % index
        fence = b"" if epoch is None else b"%d" % epoch
        packed = b"*%d\r\n%s$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
            17 + len(events),
            head,
            len(state),
            state,
            len(log),
            log,
            len(number),
            number,
            len(fence),
            fence,
        )
        if events:
            packed += _resp_args(_bodies(events))
        result, resent = await self._run_append(packed)
        if result is None:
            return None
        if result == -2:
            raise Fenced(f"seat {seat} is held by a newer connection")
        if result == -1:
            key = self._moves_key(code, race, seat)
            if resent and entry:
                with self._reaching():
                    found = await self.redis.lindex(key, index or 0)
                if found == log:
                    return []  # an earlier try was run before its connection failed
            raise LogConflict(f"the move log is not {index} moves long")
        return list(result)

    async def _run_append(self, packed: bytes) -> tuple[Any, bool]:
        """Send an append call until Redis answers it; the reply, and whether an earlier try
        may have run."""
        maybe_ran = reloaded = False
        deadline: float | None = None
        pause = 0.05
        loop = asyncio.get_running_loop()
        while True:
            try:
                return await self._store.send(packed), maybe_ran
            except NoScriptError:
                if reloaded:
                    raise
                reloaded = True  # not run: Redis restarted or its scripts were flushed
                with contextlib.suppress(*_UNREACHABLE):
                    await self.redis.script_load(_APPEND_LUA)
                continue
            except NotSent as exc:
                self.check_health()
                if not maybe_ran:
                    raise StoreUnavailable(f"Redis cannot be reached: {exc}") from exc
            except (RedisConnectionError, RedisTimeoutError):
                # whether Redis ran it is unknown: it is sent again; a move run twice is
                # refused the second time by its index (see append)
                self.check_health()
                maybe_ran = True
            now = loop.time()
            deadline = deadline if deadline is not None else now + self.write_timeout
            if now >= deadline:
                raise OutcomeUnknown("Redis stopped answering: the write may have been done")
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.5)

    async def moves(self, code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """LRANGE of the seat's move log."""
        with self._reaching():
            items = await self.redis.lrange(self._moves_key(code, race, seat), start, -1)
        return [entry_move(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def times(self, code: str, race: int, seat: int) -> list[int | None]:
        """The time of each move of the log (entries ``MOVE@MS``)."""
        with self._reaching():
            items = await self.redis.lrange(self._moves_key(code, race, seat), 0, -1)
        return [entry_time(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def events_since(self, code: str, after: int) -> list[bytes] | None:
        """Kept events after ``after``, or None when the first missed one was trimmed."""
        with self._reaching():
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(code, "seq"))
                pipe.lrange(self._key(code, "events"), 0, -1)
                seq, items = await pipe.execute()
        return events_after(items, int(seq or 0), after)

    # ------------------------------------------------------------------ liveness

    async def beat(self) -> None:
        """Write a new beat for this worker (a counter: others see it change)."""
        self._beat += 1
        with self._reaching():
            await self.redis.hset(f"{self.prefix}:beats", self.worker_id, self._beat)

    async def beats(self, workers: set[str]) -> dict[str, str | None]:
        """The last beat of each worker (None when none is kept)."""
        order = sorted(workers)
        if not order:
            return {}
        with self._reaching():
            found = await self.redis.hmget(f"{self.prefix}:beats", order)
        return {
            w: (v.decode() if isinstance(v, bytes) else v)
            for w, v in zip(order, found, strict=True)
        }

    async def forget_worker(self, worker: str) -> None:
        """Drop a dead worker's beat."""
        with self._reaching():
            await self.redis.hdel(f"{self.prefix}:beats", worker)

    async def ping(self) -> float:
        """Round trip of a PING in seconds."""
        t0 = time.perf_counter()
        with self._reaching():
            await self.redis.ping()
        return time.perf_counter() - t0


#: seconds a room update's token is kept (long enough to look it up after a failure)
_DONE_TTL = 60


def _bodies(events: list[EventBody]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def _resp_args(args: list[Any]) -> bytes:
    """Arguments of a command in the Redis wire format (RESP bulk strings); a command is
    ``*N\\r\\n`` followed by its N arguments."""
    parts = []
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)
