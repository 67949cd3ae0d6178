"""The Redis backend: several workers share rooms.

Keys of one room share a hash tag, so a room can live on one Redis Cluster shard::

    sd:{K7QF2M}:room              RoomState JSON (seats keep token hashes, never tokens)
    sd:{K7QF2M}:progress          hash: seat -> ProgressState JSON of the current race
    sd:{K7QF2M}:seq               the room's event counter
    sd:{K7QF2M}:events            list: the last ``event_cap`` stamped events
    sd:{K7QF2M}:moves:<race>:<seat>  list: a seat's move log, one action per item
                                     (``MOVE@MS``: with its ms since the race's start)
    sd:{K7QF2M}:done              sorted set: tokens of the last minute's room updates
    sd:{K7QF2M}:ch                pub/sub channel: stamped events and control messages

Room changes run in a WATCH/MULTI transaction on ``room`` and ``progress`` (retried on
conflict), so race-end detection is safe across workers. A move is stored by one Lua script
that checks the seat is still racing, appends the move, stores the progress and numbers,
keeps and publishes the events; the move is acknowledged only after. The script calls of
all moves are pipelined on one connection (:class:`server.resp.RespPipe`): the calls made in
one turn of the event loop go out in one write, and Redis answers them in order.

Every worker, the publishing one included, delivers events to its connections from the
pub/sub channel: one path in seq order. Every key gets a TTL on each write (shorter once a
race has ended), so abandoned rooms expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
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
    Listener,
    LogConflict,
    Snapshot,
    UnknownRoom,
    entry_move,
    entry_time,
    event_seq,
    events_after,
    log_entry,
)
from .resp import RespPipe
from .room import (
    ProgressState,
    RoomState,
)
from .updates import (
    Update,
)

T = TypeVar("T")

__all__ = ["RedisBackend"]

logger = logging.getLogger("samedeal.redis")

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

# KEYS: progress, seq, events, moves
# ARGV: seat, race, cap, channel, ttl (the same for every call of a seat: packed once),
#       progress json ('' to leave it), move ('' for none), index (-1: any), body...
# Returns false (seat not racing), -1 (log length is not index) or the events.
# The stored progress is checked as text, not decoded (cjson was a third of the script's
# cost): it is ProgressState JSON, whose first field is the race; a name cannot fake the
# status (its quotes are escaped). The log's TTL is renewed every 64 moves, not each move.
_APPEND_LUA = (
    _STAMP_LUA
    + """
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
local out = stamp_events(KEYS[2], KEYS[3], ARGV[4], 9)
if #out > 0 then redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1) end
return out
"""
)


class RedisBackend(Backend):
    """Rooms in Redis, events over Redis pub/sub."""

    def __init__(
        self,
        url: str,
        *,
        worker_id: str = "redis",
        prefix: str = "sd",
        event_cap: int = 500,
        active_ttl: float = 6 * 3600,
        finished_ttl: float = 3600,
    ) -> None:
        self.worker_id = worker_id
        self.prefix = prefix
        self.event_cap = event_cap
        self.active_ttl = active_ttl
        self.finished_ttl = finished_ttl
        # a burst of requests (a thousand players making their first move, or leaving at
        # once) waits for a connection instead of failing with "too many connections"
        # A command on a connection that Redis closed (a restart, a kill, an idle timeout)
        # is sent again on a new one, instead of failing once per pooled connection. Moves
        # do not go this way (see append), nor do room updates (see update_room).
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=64,
            timeout=20,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.02), 3),
            retry_on_error=[RedisConnectionError, RedisTimeoutError],
        )
        self.redis: aioredis.Redis = aioredis.Redis.from_pool(pool)
        self._append_script = self.redis.register_script(_APPEND_LUA)
        self._append_sha = self._append_script.sha.encode()
        self._events_script = self.redis.register_script(_EVENTS_LUA)
        self._listener: Listener | None = None
        self._pubsub: Any = None
        self._channels: set[str] = set()
        self._confirm: dict[str, asyncio.Future[None]] = {}
        self._task: asyncio.Task[None] | None = None
        # per subscribed room: the last event seq delivered, and events held back while a
        # gap (pub/sub messages lost during a reconnect) is filled from the event list
        self._delivered: dict[str, int] = {}
        self._held: dict[str, list[bytes]] = {}
        self._repairs: set[asyncio.Task[None]] = set()
        # the moves' script calls: packed by us (a seat's constant arguments once) and
        # pipelined on one connection, all the calls of a loop turn in one write
        self._heads: dict[tuple[str, int, int], bytes] = {}
        self._store = RespPipe(self._store_connection, reply_timeout=10.0)

    @property
    def write_timeout(self) -> float:
        """Seconds a move may wait for Redis to answer before its connection is dropped
        (the move is then sent once more on a new connection)."""
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

    def _code_of(self, channel: str) -> str:
        return channel[channel.index("{") + 1 : channel.index("}")]

    # ------------------------------------------------------------------ pub/sub

    async def start(self, listener: Listener) -> None:
        """Check the connection and start the listener loop."""
        self._listener = listener
        await self.redis.ping()
        # a worker's own channel keeps the pub/sub connection open while it has no rooms
        self._channels.add(f"{self.prefix}:worker:{self.worker_id}")
        self._pubsub = self.redis.pubsub()
        await self._pubsub.subscribe(*self._channels)
        self._task = asyncio.create_task(self._listen())

    async def close(self) -> None:
        """Stop the listener and the writer and close the connections."""
        for task in list(self._repairs):
            task.cancel()
        self._store.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()
        await self.redis.aclose()

    async def _listen(self) -> None:
        """Deliver pub/sub messages; on failure log, back off (capped) and resubscribe."""
        backoff = 0.1
        while True:
            try:
                if self._pubsub is None:
                    pubsub = self.redis.pubsub()
                    await pubsub.subscribe(*self._channels)
                    self._pubsub = pubsub
                    for code in list(self._delivered):
                        self._repair(code, None)  # events published while we were away
                while True:
                    # blocking: no timer per message (a timeout would only wake it idle)
                    message = await self._pubsub.get_message(timeout=None)
                    backoff = 0.1
                    if message is not None:
                        self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("pub/sub listener failed; reconnecting in %.1fs", backoff)
                pubsub, self._pubsub = self._pubsub, None
                if pubsub is not None:
                    with contextlib.suppress(Exception):
                        await pubsub.aclose()
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 5.0)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        channel = message["channel"]
        if isinstance(channel, bytes):
            channel = channel.decode()
        if kind == "subscribe":
            future = self._confirm.pop(channel, None)
            if future is not None and not future.done():
                future.set_result(None)
        elif kind == "message" and self._listener is not None:
            self._deliver(self._code_of(channel), message["data"])

    def _deliver(self, code: str, data: bytes) -> None:
        """Pass events on in seq order; a gap is filled from the stored events first."""
        assert self._listener is not None
        seq = event_seq(data)
        if seq is None:
            self._listener(code, data)
            return
        held = self._held.get(code)
        if held is not None:
            held.append(data)
            return
        last = self._delivered.get(code)
        if last is not None and seq > last + 1:
            self._repair(code, data)
            return
        if last is None or seq > last:
            self._delivered[code] = seq
            self._listener(code, data)

    def _repair(self, code: str, data: bytes | None) -> None:
        if code in self._held:
            if data is not None:
                self._held[code].append(data)
            return
        self._held[code] = [data] if data is not None else []
        task = asyncio.create_task(self._fill(code))
        self._repairs.add(task)
        task.add_done_callback(self._repairs.discard)

    async def _fill(self, code: str) -> None:
        last = self._delivered.get(code, 0)
        try:
            missing = await self.events_since(code, last)
        except Exception:
            logger.exception("could not fetch missed events room=%s", code)
            missing = None
        if missing is None:
            logger.warning("events lost for connected clients room=%s after=%s", code, last)
        held = self._held.pop(code, [])
        if code not in self._delivered or self._listener is None:
            return  # unsubscribed meanwhile
        for item in sorted({*(missing or []), *held}, key=lambda d: event_seq(d) or 0):
            seq = event_seq(item) or 0
            if seq > self._delivered[code]:
                self._delivered[code] = seq
                self._listener(code, item)

    async def subscribe(self, code: str) -> None:
        """Subscribe and wait for Redis to confirm, so no later event is missed."""
        channel = self._channel(code)
        self._channels.add(channel)
        self._delivered.pop(code, None)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._confirm[channel] = future
        if self._pubsub is None:
            raise ConnectionError("the pub/sub connection is being re-established")
        await self._pubsub.subscribe(channel)
        try:
            await asyncio.wait_for(future, 5.0)
        finally:
            self._confirm.pop(channel, None)

    async def unsubscribe(self, code: str) -> None:
        """Leave the room's channel."""
        channel = self._channel(code)
        self._channels.discard(channel)
        self._delivered.pop(code, None)
        self._held.pop(code, None)
        if self._pubsub is not None:
            await self._pubsub.unsubscribe(channel)

    async def publish_control(self, code: str, data: bytes) -> None:
        """Publish a control message (not stored, no seq)."""
        await self.redis.publish(self._channel(code), data)

    # ------------------------------------------------------------------ rooms

    async def create_room(self, room: RoomState) -> bool:
        """SET NX the room's state."""
        ok = await self.redis.set(
            self._key(room.code, "room"),
            room.model_dump_json(),
            nx=True,
            ex=int(self.ttl_for(room)),
        )
        return bool(ok)

    async def snapshot(self, code: str) -> Snapshot | None:
        """Room, progress and seq in one MULTI, so they agree."""
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
        up: if it is there, the
        update is done, and is not applied a second time (its events were published; the
        call returns the room as it is now, without them)."""
        room_key, progress_key = self._key(code, "room"), self._key(code, "progress")
        seq_key, events_key = self._key(code, "seq"), self._key(code, "events")
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
    ) -> list[bytes] | None:
        """One Lua call: check, append the move, store progress and events, publish. The
        call is pipelined with the other moves of this turn of the loop."""
        entry = log_entry(move, at) if move else ""
        head = self._heads.get((code, race, seat))
        if head is None:
            # the arguments that are the same for every call of a seat, packed once
            head = _resp_args(
                [
                    b"EVALSHA",
                    self._append_sha,
                    4,
                    self._key(code, "progress"),
                    self._key(code, "seq"),
                    self._key(code, "events"),
                    self._moves_key(code, race, seat),
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
        packed = b"*%d\r\n%s$%d\r\n%s\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (
            15 + len(events),
            head,
            len(state),
            state,
            len(log),
            log,
            len(number),
            number,
        )
        if events:
            packed += _resp_args(_bodies(events))
        resent = reloaded = False
        while True:
            try:
                result = await self._store.send(packed)
                break
            except NoScriptError:
                if reloaded:
                    raise
                reloaded = True  # not run: Redis restarted or its scripts were flushed
                await self.redis.script_load(_APPEND_LUA)
            except (RedisConnectionError, RedisTimeoutError) as exc:
                # whether Redis ran it is unknown: sent once more (on a new connection); a
                # move run twice is refused the second time by its index, seen below
                if resent:
                    raise ConnectionError(f"could not store: {exc!r}") from exc
                resent = True
        if result is None:
            return None
        if result == -1:
            key = self._moves_key(code, race, seat)
            if resent and entry and await self.redis.lindex(key, index or 0) == entry.encode():
                return []  # the first try was run before its connection failed: stored once
            raise LogConflict(f"the move log is not {index} moves long")
        return list(result)

    async def moves(self, code: str, race: int, seat: int, start: int = 0) -> list[str]:
        """LRANGE of the seat's move log."""
        items = await self.redis.lrange(self._moves_key(code, race, seat), start, -1)
        return [entry_move(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def times(self, code: str, race: int, seat: int) -> list[int | None]:
        """The time of each move of the log (entries ``MOVE@MS``)."""
        items = await self.redis.lrange(self._moves_key(code, race, seat), 0, -1)
        return [entry_time(m.decode() if isinstance(m, bytes) else str(m)) for m in items]

    async def events_since(self, code: str, after: int) -> list[bytes] | None:
        """Kept events after ``after``, or None when the first missed one was trimmed."""
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.get(self._key(code, "seq"))
            pipe.lrange(self._key(code, "events"), 0, -1)
            seq, items = await pipe.execute()
        return events_after(items, int(seq or 0), after)

    def _alive_key(self, worker: str) -> str:
        return f"{self.prefix}:worker:{worker}:alive"

    async def heartbeat(self, ttl: float) -> None:
        """SET the worker's alive key with a TTL."""
        await self.redis.set(self._alive_key(self.worker_id), b"1", px=int(ttl * 1000))

    async def alive(self, workers: set[str]) -> set[str]:
        """The workers whose alive key exists."""
        order = sorted(workers)
        async with self.redis.pipeline(transaction=False) as pipe:
            for worker in order:
                pipe.exists(self._alive_key(worker))
            found = await pipe.execute()
        return {w for w, n in zip(order, found, strict=True) if n}

    async def ping(self) -> float:
        """Round trip of a PING in seconds."""
        t0 = time.perf_counter()
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
