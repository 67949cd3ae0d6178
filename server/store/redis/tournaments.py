"""Tournaments in Redis: state, summary, events, move lists, the lease.

A tournament's keys share the hash tag ``{T:<id>}`` (one Redis Cluster shard), and its
events use the rooms' channel machinery under the code ``T:<id>`` (numbered, kept, published,
gaps filled from the kept list)::

    sd:{T:K7QF2M}:state     LiveTournament JSON ({"rev":N,… first: the compare-and-set)
    sd:{T:K7QF2M}:summary   Summary JSON (timers and the list read it, not the state)
    sd:{T:K7QF2M}:seq       the tournament's event counter
    sd:{T:K7QF2M}:events    list: the last ``event_cap`` stamped events
    sd:{T:K7QF2M}:ch        pub/sub channel
    sd:{T:K7QF2M}:moves     hash: "<round>|<player>" → the race's move list
    sd:{T:K7QF2M}:present   presence marks (:mod:`server.store.redis.presence`)
    sd:{T:K7QF2M}:lease     the worker running the timers (SET NX PX, renewed)
    sd:tournaments          sorted set: the active tournaments (by creation time)
    sd:tournaments:public   sorted set: those listed in the lobby

On a Redis Cluster a tournament's keys are on the shard of its tag's slot, and its events go
over sharded pub/sub there, as a room's (the scripts publish with the link's command,
``PUBLISH`` or ``SPUBLISH``). The two lists are one key each, on their own slots: no call
writes both at once (a tournament listed in one and not yet in the other is harmless: the
lobby reads the public list, the timers the active one).

A write is optimistic: read the state, apply the act, then one Lua call stores the new state
only if ``rev`` is still the one read (else read again), with the summary and the events —
so a write is whole or not at all, and two workers never overwrite each other. A call whose
connection failed is sent again by the client library; the second run finds the state
already written (its own, byte for byte) and the write is taken as done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final, TypeVar

import orjson
import redis.asyncio as aioredis
from redis.commands.core import AsyncScript

from ...tasks import gather_all
from ...tournaments.live import (
    LiveSnapshot,
    LiveTournament,
    Summary,
    TournamentUpdate,
    UnknownTournament,
    summary_of,
)
from ..errors import StoreUnavailable
from ..tournaments import TOURNAMENT_CHANNEL
from .link import RedisLink
from .scripts import lua

__all__ = ["TOURNAMENT_TTL", "RedisTournaments"]

T = TypeVar("T")

#: seconds a tournament's keys live after its last change (finished: after the end)
TOURNAMENT_TTL: Final = 7 * 86_400
_FINISHED_TTL: Final = 86_400
_TRIES: Final = 100

# KEYS: state, summary, seq, events   ARGV: rev (-1: create), state, summary, ttl, cap,
# channel, body...   Returns the last seq, or -1 (taken), -2 (unknown), -3 (conflict).
_WRITE_LUA = """
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '-1' then
  if cur then return -1 end
else
  if not cur then return -2 end
  local head = '{"rev":' .. ARGV[1] .. ','
  if string.sub(cur, 1, #head) ~= head then return -3 end
end
redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[4])
redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
local seq = 0
for i = 7, #ARGV do
  seq = redis.call('INCR', KEYS[3])
  local data = '{"seq":' .. seq .. ',' .. string.sub(ARGV[i], 2)
  redis.call('RPUSH', KEYS[4], data)
  redis.call('%PUBLISH%', ARGV[6], data)
end
if #ARGV >= 7 then redis.call('LTRIM', KEYS[4], -tonumber(ARGV[5]), -1) end
redis.call('EXPIRE', KEYS[3], ARGV[4])
redis.call('EXPIRE', KEYS[4], ARGV[4])
if seq == 0 then seq = tonumber(redis.call('GET', KEYS[3]) or '0') end
return seq
"""

# KEYS: lease   ARGV: worker, ms   Take the lease, or renew it if held; 1 if held now.
_LEASE_LUA = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""


class RedisTournaments:
    """:class:`~server.store.tournaments.TournamentStore` in Redis, reached through
    ``link``; the last ``event_cap`` events of each kept."""

    def __init__(self, link: RedisLink, event_cap: int) -> None:
        self._link = link
        self.event_cap = event_cap
        #: the sorted sets of the active tournaments and of the public ones
        self._active = f"{link.prefix}:tournaments"
        self._public = f"{link.prefix}:tournaments:public"
        self._locks: dict[str, asyncio.Lock] = {}
        self._scripts: dict[str, AsyncScript] = {}

    def _key(self, tid: str, what: str) -> str:
        return self._link.key(TOURNAMENT_CHANNEL + tid, what)

    async def _run(self, tid: str, command: Callable[[aioredis.Redis], Awaitable[T]]) -> T:
        """``command`` run on the shard of the tournament's keys."""
        return await self._link.run(TOURNAMENT_CHANNEL + tid, command)

    async def _get(self, tid: str, what: str) -> Any:
        """GET one of the tournament's keys."""
        key = self._key(tid, what)
        return await self._run(tid, lambda r: r.get(key))

    def _script(self, name: str) -> AsyncScript:
        """The write script (publishing as the rooms' scripts do) or the lease script."""
        publish = self._link.scripts.publish
        key = f"{name}:{publish}"
        script = self._scripts.get(key)
        if script is None:
            text = _WRITE_LUA.replace("%PUBLISH%", publish) if name == "write" else _LEASE_LUA
            script = self._scripts[key] = lua(text)
        return script

    async def _write(
        self, live: LiveTournament, rev: int, data: str, events: list[dict[str, object]]
    ) -> int:
        tid = live.state.id
        finished = live.state.phase == "finished"
        write = self._script("write")
        keys = [
            self._key(tid, "state"),
            self._key(tid, "summary"),
            self._key(tid, "seq"),
            self._key(tid, "events"),
        ]
        args = [
            rev,
            data,
            summary_of(live).model_dump_json(),
            _FINISHED_TTL if finished else TOURNAMENT_TTL,
            self.event_cap,
            self._link.channel(TOURNAMENT_CHANNEL + tid),
            *(orjson.dumps(e) for e in events),
        ]
        result = await self._run(tid, lambda r: write(keys=keys, args=args, client=r))
        return int(result)

    async def create(self, live: LiveTournament, events: list[dict[str, object]]) -> bool:
        """Store it unless the id is taken; list it as active (and public)."""
        tid = live.state.id
        with self._link.reaching():
            result = await self._write(live, -1, live.model_dump_json(), events)
            if result == -1:
                return False
            active, public = self._active, self._public
            entry = {tid: live.state.created_at}
            await self._link.run(active, lambda r: r.zadd(active, entry), key=True)
            if not live.state.settings.private:
                await self._link.run(public, lambda r: r.zadd(public, entry), key=True)
        return True

    async def load(self, tid: str) -> LiveSnapshot | None:
        """GET the state and the seq."""

        async def read(redis: aioredis.Redis) -> list[Any]:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.get(self._key(tid, "state"))
                pipe.get(self._key(tid, "seq"))
                return await pipe.execute()

        raw, seq = await self._run(tid, read)
        if raw is None:
            return None
        return LiveSnapshot(LiveTournament.model_validate_json(raw), int(seq or 0))

    def _writing(self, tid: str) -> asyncio.Lock:
        """One write of a tournament at a time on this worker: a thousand players joining
        at once queue here instead of retrying against each other (and holding every
        pooled connection meanwhile); only writes of other workers can conflict."""
        locks = self._locks
        lock = locks.get(tid)
        if lock is None:
            if len(locks) > 1000:
                for key in [k for k, v in locks.items() if not v.locked()]:
                    del locks[key]
            lock = locks[tid] = asyncio.Lock()
        return lock

    async def update(self, tid: str, update: TournamentUpdate[T]) -> tuple[LiveSnapshot, T]:
        """Read, apply, compare-and-set on ``rev``; again on a conflict (one at a time per
        tournament on this worker)."""
        async with self._writing(tid):
            return await self._update(tid, update)

    async def _update(self, tid: str, update: TournamentUpdate[T]) -> tuple[LiveSnapshot, T]:
        with self._link.reaching():
            for _ in range(_TRIES):
                raw = await self._get(tid, "state")
                if raw is None:
                    raise UnknownTournament(tid)
                live = LiveTournament.model_validate_json(raw)
                rev = live.rev
                events, value = update(live)
                live.rev = rev + 1
                data = live.model_dump_json()
                result = await self._write(live, rev, data, events)
                if result >= 0:
                    return LiveSnapshot(live, result), value
                if result == -2:
                    raise UnknownTournament(tid)
                # a conflict, or this very call run twice (its connection failed after
                # Redis ran it, and it was sent again): then the state is ours
                if await self._get(tid, "state") == data.encode():
                    seq = await self._get(tid, "seq")
                    return LiveSnapshot(live, int(seq or 0)), value
        raise StoreUnavailable(f"tournament {tid}: too many concurrent writes, try again")

    async def summaries(self, ids: list[str]) -> list[Summary]:
        """MGET-like: one GET per id in one pipeline on one Redis; on a cluster, where the
        keys are on different shards, the GETs at once, each on its shard."""
        if not ids:
            return []
        keys = [self._key(tid, "summary") for tid in ids]
        found: list[Any]
        if self._link.cluster:
            found = await gather_all(*(self._get(tid, "summary") for tid in ids))
        else:

            async def read(redis: aioredis.Redis) -> list[Any]:
                async with redis.pipeline(transaction=False) as pipe:
                    for key in keys:
                        pipe.get(key)
                    return await pipe.execute()

            found = await self._link.run(keys[0], read, key=True)
        return [Summary.model_validate_json(raw) for raw in found if raw is not None]

    async def active(self, *, public: bool = False) -> list[str]:
        """ZRANGE of the active (or public) tournaments."""
        key = self._public if public else self._active
        ids = await self._link.run(key, lambda r: r.zrange(key, 0, -1), key=True)
        return [i.decode() if isinstance(i, bytes) else str(i) for i in ids]

    async def retire(self, tid: str) -> None:
        """ZREM from both lists."""
        active, public = self._active, self._public
        await self._link.run(active, lambda r: r.zrem(active, tid), key=True)
        await self._link.run(public, lambda r: r.zrem(public, tid), key=True)

    async def keep_round_moves(self, tid: str, number: int, moves: dict[str, str]) -> None:
        """HSET the move lists."""
        if not moves:
            return
        key = self._key(tid, "moves")

        async def keep(redis: aioredis.Redis) -> None:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.hset(key, mapping={f"{number}|{p}": text for p, text in moves.items()})
                pipe.expire(key, TOURNAMENT_TTL)
                await pipe.execute()

        await self._run(tid, keep)

    async def round_moves(self, tid: str) -> dict[tuple[int, str], str]:
        """HGETALL of the move lists."""
        key = self._key(tid, "moves")
        raw = await self._run(tid, lambda r: r.hgetall(key))
        out = {}
        for field, text in raw.items():
            name = field.decode() if isinstance(field, bytes) else str(field)
            number, _, player = name.partition("|")
            out[(int(number), player)] = text.decode() if isinstance(text, bytes) else str(text)
        return out

    async def hold_lease(self, tid: str, lease_ms: int) -> bool:
        """SET NX PX, or PEXPIRE when this worker holds it."""
        lease, key = self._script("lease"), self._key(tid, "lease")
        held = await self._run(
            tid, lambda r: lease(keys=[key], args=[self._link.worker_id, lease_ms], client=r)
        )
        return bool(held)
