"""The live directory in Redis: what the store keeps of it and how its changes reach every
worker.

Keys share the hash tag ``{live}`` (one Redis Cluster slot, so each script names its keys)::

    sd:{live}:rooms     hash: room code -> the room's entry (as a worker wrote it)
    sd:{live}:seqs      hash: room code -> the room event the entry is as of
    sd:{live}:tv        hash: game -> the featured room
    sd:live             pub/sub channel: every change ({"put": […], "drop": […]}; {"tv": …})

On a Redis Cluster the keys are on the shard of the slot of ``live``; the channel is classic
pub/sub (``PUBLISH``), which a cluster passes to every node: every worker needs every change,
so this one channel is not sharded. A worker listens on the shard of the keys, as the router
knows it when the listener (re)connects.

Every write is one script: a worker writes the entries of its rooms that changed (each
room by one worker, at most once a second: :mod:`server.watching.directory`), all at once, a few
times a second; the entry of a later event wins (two workers that take a room over at once
write it as they see it; the later one stays); what was done is published as one message,
with the writer's id first, in the same step. The featured race is compared and set the
same way. Each worker listens on its own pub/sub connection (not the rooms' one: this
channel is no room's); when it is lost, it reconnects with capped back-off and tells the
stored entries again, so nothing missed meanwhile stays missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

import orjson
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..directory import DirectoryListener
from .link import RedisLink
from .scripts import lua

__all__ = ["RedisDirectory"]


logger = logging.getLogger("samedeal.redis")

# KEYS: rooms, seqs   ARGV: channel, number of puts, writer, (code, seq, entry) per put,
# then (code, seq) per drop. Publishes one message of what was done:
# {"by":writer,"put":[…],"drop":[…]}.
_WRITE_LUA = """
local function later(code, seq)
  local cur = redis.call('HGET', KEYS[2], code)
  return cur and tonumber(cur) > tonumber(seq)
end
local puts, drops = {}, {}
local i = 4
for _ = 1, tonumber(ARGV[2]) do
  if not later(ARGV[i], ARGV[i + 1]) then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 2])
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
    puts[#puts + 1] = ARGV[i + 2]
  end
  i = i + 3
end
while i < #ARGV do
  if not later(ARGV[i], ARGV[i + 1]) then
    redis.call('HDEL', KEYS[1], ARGV[i])
    redis.call('HDEL', KEYS[2], ARGV[i])
    drops[#drops + 1] = '["' .. ARGV[i] .. '",' .. ARGV[i + 1] .. ']'
  end
  i = i + 2
end
if #puts + #drops > 0 then
  redis.call('PUBLISH', ARGV[1], '{"by":' .. cjson.encode(ARGV[3]) .. ',"put":['
    .. table.concat(puts, ',') .. '],"drop":[' .. table.concat(drops, ',') .. ']}')
end
return #puts + #drops
"""

# KEYS: tv   ARGV: game, old ('' for none), new ('' for none), channel, message
_FEATURE_LUA = """
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if cur ~= ARGV[2] then return cur end
if ARGV[3] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return ARGV[3]
"""

_UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)


class RedisDirectory:
    """:class:`~server.store.directory.Directory` in Redis: its keys, scripts and listener,
    reached through ``link``."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self.worker_id = link.worker_id
        prefix = link.prefix
        self.rooms_key = f"{prefix}:{{live}}:rooms"
        self.seqs_key = f"{prefix}:{{live}}:seqs"
        self.tv_key = f"{prefix}:{{live}}:tv"
        self.channel = f"{prefix}:live"
        self._write = lua(_WRITE_LUA)
        self._feature = lua(_FEATURE_LUA)
        self._listener: DirectoryListener | None = None
        self._pubsub: Any = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def write(self, puts: list[tuple[str, int, bytes]], drops: list[tuple[str, int]]) -> None:
        """One script: store and remove entries (unless later ones are stored), publish
        what was done."""
        args: list[Any] = [self.channel, len(puts), self.worker_id]
        for room_code, seq, entry in puts:
            args += [room_code, seq, entry]
        for room_code, seq in drops:
            args += [room_code, seq]
        keys = [self.rooms_key, self.seqs_key]
        await self._link.run(
            self.rooms_key, lambda r: self._write(keys=keys, args=args, client=r), key=True
        )

    async def entries(self) -> list[bytes]:
        """HVALS of the entries."""
        found = await self._link.run(self.rooms_key, lambda r: r.hvals(self.rooms_key), key=True)
        return [v if isinstance(v, bytes) else str(v).encode() for v in found]

    async def featured(self) -> dict[str, str]:
        """HGETALL of the featured races: game → room."""
        found = await self._link.run(self.tv_key, lambda r: r.hgetall(self.tv_key), key=True)
        return {_text(k): _text(v) for k, v in found.items()}

    async def feature(self, game: str, old: str | None, new: str | None) -> str | None:
        """One script: compare and set a game's featured race, publish; the featured race
        now."""
        message = orjson.dumps({"tv": game, "room": new})
        args: list[str | bytes] = [game, old or "", new or "", self.channel, message]
        now = await self._link.run(
            self.tv_key,
            lambda r: self._feature(keys=[self.tv_key], args=args, client=r),
            key=True,
        )
        text = _text(now)
        return text or None

    # ------------------------------------------------------------------ listening

    async def listen(self, listener: DirectoryListener) -> None:
        """Subscribe on the directory's own pub/sub connection (returns once Redis
        confirmed) and pass every change on."""
        self._listener = listener
        with self._link.reaching():
            pubsub = self._link.subscriber(self.rooms_key).pubsub()
            await pubsub.subscribe(self.channel)
        self._pubsub = pubsub
        self._task = asyncio.create_task(self._listen())

    async def _listen(self) -> None:
        backoff = 0.1
        while not self._closed:
            try:
                if self._pubsub is None:
                    pubsub = self._link.subscriber(self.rooms_key).pubsub()
                    await pubsub.subscribe(self.channel)
                    self._pubsub = pubsub
                    await self._tell_stored()  # what changed while we were away
                while True:
                    message = await self._pubsub.get_message(timeout=None)
                    backoff = 0.1
                    if message is not None and message.get("type") == "message":
                        data = message["data"]
                        self._tell(data if isinstance(data, bytes) else str(data).encode())
            except asyncio.CancelledError:
                raise
            except _UNREACHABLE as exc:
                logger.debug("live directory listener failed (%r); again in %.1fs", exc, backoff)
            except Exception:
                logger.exception("live directory listener failed; again in %.1fs", backoff)
            pubsub, self._pubsub = self._pubsub, None
            if pubsub is not None:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    async def _tell_stored(self) -> None:
        self._tell(b'{"by":"","put":[' + b",".join(await self.entries()) + b'],"drop":[]}')
        for game, room in (await self.featured()).items():
            self._tell(orjson.dumps({"tv": game, "room": room}))

    def _tell(self, message: bytes) -> None:
        if self._listener is None:
            return
        try:
            self._listener(message)
        except Exception:
            logger.exception("live directory: a change could not be taken")

    async def close(self) -> None:
        """Stop listening (a client library may swallow a cancellation: the loop also
        stops at its next turn, and closing waits for it 3 s at most)."""
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            done, _ = await asyncio.wait({self._task}, timeout=3.0)
            if not done:
                logger.warning("live directory listener did not stop")
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
