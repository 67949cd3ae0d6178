"""The quick-play pools in Redis. A pool's keys share the hash tag ``{P:<pool id>}`` (one
Redis Cluster shard per pool), and every change of a pool is one Lua call on it::

    sd:{P:klondike:2:300:rated}:seekers    hash: seeker key → the seeker (JSON)
    sd:{P:klondike:2:300:rated}:workers    hash: worker → when its lease runs out (ms)
    sd:{P:klondike:2:300:rated}:taken      hash: seeker key → "ROOM SEAT" (taken by a pairing)
    sd:{P:klondike:2:300:rated}:taken_at   sorted set: seeker key by when it was taken
    sd:{P:klondike:2:300:rated}:ch         the pool's channel (the rooms' machinery)
    sd:{seek:<player>}:claim               the one seek of an identity (SET NX PX)

A pairing is one script (:meth:`RedisPools.take`): it checks every seeker of the room is
still there with a live lease, takes them out, keeps their seats and publishes them on the
pool's channel (``PUBLISH`` on one Redis, ``SPUBLISH`` on a cluster, as a room's events), so
two workers pairing the same pool at once never take one seeker twice. Reading the pool
drops the seekers of a worker whose lease ran out (it died, or stalled past it: its next
renewal finds them gone and puts them back).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from ...quickplay.pairing import Seeker
from ...tasks import gather_all
from ..pools import POOL_CHANNEL, TAKEN_KEPT_MS, Taken, paired_message
from .link import RedisLink
from .scripts import lua

__all__ = ["RedisPools"]

T = TypeVar("T")

# Drops the seekers of the workers whose lease ran out (KEYS[1] seekers, KEYS[2] workers):
# decoding a seeker only when some worker is gone.
_PRUNE_LUA = """
local function prune(now)
  local dead, any = {}, false
  local leases = redis.call('HGETALL', KEYS[2])
  for i = 1, #leases, 2 do
    if tonumber(leases[i + 1]) < now then
      dead[leases[i]] = true
      any = true
      redis.call('HDEL', KEYS[2], leases[i])
    end
  end
  if not any then return end
  local all = redis.call('HGETALL', KEYS[1])
  for i = 1, #all, 2 do
    if dead[cjson.decode(all[i + 1]).worker] then redis.call('HDEL', KEYS[1], all[i]) end
  end
end
"""

# KEYS: seekers, workers   ARGV: now
_SEEKERS_LUA = (
    _PRUNE_LUA
    + """
prune(tonumber(ARGV[1]))
return redis.call('HVALS', KEYS[1])
"""
)

# KEYS: seekers, workers   ARGV: now
_COUNT_LUA = (
    _PRUNE_LUA
    + """
prune(tonumber(ARGV[1]))
return redis.call('HLEN', KEYS[1])
"""
)

# KEYS: seekers, workers, taken, taken_at   ARGV: key, seeker, worker, lease until
_ADD_LUA = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[4])
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
"""

# KEYS: seekers   ARGV: key, conn
_REMOVE_LUA = """
local found = redis.call('HGET', KEYS[1], ARGV[1])
if not found or cjson.decode(found).conn ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1
"""

# KEYS: seekers, workers, taken, taken_at
# ARGV: now, room, channel, message, kept ms, then (key, seat) per seeker taken
_TAKE_LUA = """
local now = tonumber(ARGV[1])
for i = 6, #ARGV, 2 do
  local found = redis.call('HGET', KEYS[1], ARGV[i])
  if not found then return 0 end
  local lease = redis.call('HGET', KEYS[2], cjson.decode(found).worker)
  if not lease or tonumber(lease) < now then return 0 end
end
for i = 6, #ARGV, 2 do
  redis.call('HDEL', KEYS[1], ARGV[i])
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[2] .. ' ' .. ARGV[i + 1])
  redis.call('ZADD', KEYS[4], now, ARGV[i])
end
local old = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[5]))
for _, key in ipairs(old) do redis.call('HDEL', KEYS[3], key) end
if #old > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now - tonumber(ARGV[5])) end
redis.call('%PUBLISH%', ARGV[3], ARGV[4])
return 1
"""

# KEYS: seekers, workers, taken   ARGV: worker, lease until, keys...
# Returns, per key: '' still seeking, the taken seat, or '-' gone.
_RENEW_LUA = """
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
local out = {}
for i = 3, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    out[#out + 1] = ''
  else
    out[#out + 1] = redis.call('HGET', KEYS[3], ARGV[i]) or '-'
  end
end
return out
"""

# KEYS: claim   ARGV: holder, ms   Returns '' (held now) or the holder.
_CLAIM_LUA = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return '' end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return ''
end
return holder or ''
"""

# KEYS: claim   ARGV: holder
_UNCLAIM_LUA = """
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
"""


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class RedisPools:
    """:class:`~server.store.pools.PoolStore` in Redis, reached through ``link``."""

    def __init__(self, link: RedisLink) -> None:
        self._link = link
        self._seekers = lua(_SEEKERS_LUA)
        self._count = lua(_COUNT_LUA)
        self._add = lua(_ADD_LUA)
        self._remove = lua(_REMOVE_LUA)
        self._renew = lua(_RENEW_LUA)
        self._claim = lua(_CLAIM_LUA)
        self._unclaim = lua(_UNCLAIM_LUA)
        self._takes: dict[str, AsyncScript] = {}

    def _keys(self, pool: str) -> list[str]:
        tag = POOL_CHANNEL + pool
        return [self._link.key(tag, what) for what in ("seekers", "workers", "taken", "taken_at")]

    async def _run(self, pool: str, command: Callable[[aioredis.Redis], Awaitable[T]]) -> T:
        """``command`` on the shard of the pool's keys."""
        return await self._link.run(POOL_CHANNEL + pool, command)

    def _claim_key(self, player: str) -> str:
        return self._link.key(f"seek:{player}", "claim")

    async def claim(self, player: str, holder: str, lease_ms: int) -> str | None:
        """One script: SET NX PX, or renew our own."""
        key = self._claim_key(player)
        found = await self._link.run(
            key,
            lambda r: self._claim(keys=[key], args=[holder, lease_ms], client=r),
            key=True,
        )
        return _text(found) or None

    async def hold_claims(self, claims: list[tuple[str, str]], lease_ms: int) -> None:
        """The claim script for each, pipelined: one round trip per shard holding some."""
        by_shard: dict[int, list[tuple[str, str]]] = {}
        for player, holder in claims:
            key = self._claim_key(player)
            with self._link.reaching():
                shard = self._link.router.shard_of_key(key)
            by_shard.setdefault(id(shard), []).append((key, holder))

        async def hold(batch: list[tuple[str, str]]) -> None:
            async def run(r: aioredis.Redis) -> None:
                async with r.pipeline(transaction=False) as pipe:
                    for key, holder in batch:  # queued: sent at once by execute
                        await self._claim(keys=[key], args=[holder, lease_ms], client=pipe)
                    await pipe.execute()

            await self._link.run(batch[0][0], run, key=True)

        await gather_all(*(hold(batch) for batch in by_shard.values()))

    async def unclaim(self, player: str, holder: str) -> None:
        """One script: DEL if ours."""
        key = self._claim_key(player)
        await self._link.run(
            key, lambda r: self._unclaim(keys=[key], args=[holder], client=r), key=True
        )

    async def add(self, pool: str, seeker: Seeker, lease_ms: int, now: int) -> bool:
        """One script: HSETs unless the key is there."""
        keys = self._keys(pool)
        args: list[str | bytes | int] = [
            seeker.key,
            seeker.to_json(),
            seeker.worker,
            now + lease_ms,
        ]
        done = await self._run(pool, lambda r: self._add(keys=keys, args=args, client=r))
        return bool(int(done))

    async def remove(self, pool: str, key: str, conn: str) -> bool:
        """One script: HDEL if held by ``conn``."""
        keys = self._keys(pool)[:1]
        done = await self._run(pool, lambda r: self._remove(keys=keys, args=[key, conn], client=r))
        return bool(int(done))

    async def seekers(self, pool: str, now: int) -> list[Seeker]:
        """One script: the dead workers' seekers dropped, the rest read."""
        keys = self._keys(pool)[:2]
        found = await self._run(pool, lambda r: self._seekers(keys=keys, args=[now], client=r))
        return [Seeker.from_json(data) for data in found]

    def _take_script(self) -> AsyncScript:
        publish = self._link.scripts.publish
        script = self._takes.get(publish)
        if script is None:
            script = self._takes[publish] = lua(_TAKE_LUA.replace("%PUBLISH%", publish))
        return script

    async def take(self, pool: str, seats: dict[str, int], room: str, now: int) -> bool:
        """One script: all or nothing, published on the pool's channel."""
        keys = self._keys(pool)
        args: list[Any] = [
            now,
            room,
            self._link.channel(POOL_CHANNEL + pool),
            paired_message(room, seats),
            TAKEN_KEPT_MS,
        ]
        for key, seat in seats.items():
            args += [key, seat]
        script = self._take_script()
        done = await self._run(pool, lambda r: script(keys=keys, args=args, client=r))
        return bool(int(done))

    async def renew(
        self, pool: str, keys: list[str], lease_ms: int, now: int
    ) -> dict[str, Taken | None]:
        """One script: the lease held, each key looked up."""
        kept = self._keys(pool)[:3]
        args: list[str | int] = [self._link.worker_id, now + lease_ms, *keys]
        found = await self._run(pool, lambda r: self._renew(keys=kept, args=args, client=r))
        out: dict[str, Taken | None] = {}
        for key, value in zip(keys, found, strict=True):
            text = _text(value)
            if text:
                out[key] = None if text == "-" else Taken.parse(text)
        return out

    async def counts(self, pools: list[str], now: int) -> dict[str, int]:
        """One script per pool (each on its shard), all at once."""

        async def count(pool: str) -> int:
            keys = self._keys(pool)[:2]
            found = await self._run(pool, lambda r: self._count(keys=keys, args=[now], client=r))
            return int(found)

        return dict(zip(pools, await gather_all(*(count(p) for p in pools)), strict=True))
