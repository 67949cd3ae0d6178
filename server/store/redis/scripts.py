"""The Lua scripts of the Redis store, and the Redis wire format of their arguments.

Every script touches the keys of one room only (they share the hash tag ``{ROOMCODE}``), so
on Redis Cluster a script runs on the shard that holds the room. The scripts publish the
events they store: with ``PUBLISH`` on one Redis, with ``SPUBLISH`` (sharded pub/sub, the
channel is in the room's slot) on a cluster — :func:`scripts` builds both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from redis.commands.core import AsyncScript

__all__ = ["Scripts", "command", "lua", "resp_args", "scripts"]


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
_EVENTS_LUA = """
local out = stamp_events(KEYS[1], KEYS[2], ARGV[2], 4)
redis.call('LTRIM', KEYS[2], -tonumber(ARGV[1]), -1)
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return out
"""

# KEYS: progress, seq, events, moves, epochs
# ARGV: seat, race, cap, channel, ttl (the same for every call of a seat: packed once),
#       progress json ('' to leave it), move ('' for none), index (-1: any),
#       epoch ('' for none: a server act, not a connection's), body...
# Returns -2 (the seat is held with another epoch: fenced), false (seat not racing), -1 (log
# length is not index) or the events.
# The stored progress is checked as text, not decoded (cjson was a third of the script's
# cost): it is ProgressState JSON, whose first field is the race; a name cannot fake the
# status (its quotes are escaped). The log's TTL is renewed every 64 moves, not each move.
_APPEND_LUA = """
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


@dataclass(frozen=True, slots=True)
class Scripts:
    """The scripts' source for one way of publishing."""

    #: ``PUBLISH`` (one Redis) or ``SPUBLISH`` (Redis Cluster: sharded pub/sub)
    publish: str
    #: a move: fence, check, append, store progress and events, publish
    append: str
    #: a room update's events: number, keep, publish
    events: str


def scripts(publish: str = "PUBLISH") -> Scripts:
    """The scripts publishing with ``publish`` (``PUBLISH`` or ``SPUBLISH``)."""
    if publish not in ("PUBLISH", "SPUBLISH"):
        raise ValueError(f"not a publish command: {publish!r}")
    stamp = _STAMP_LUA.replace("'PUBLISH'", f"'{publish}'")
    return Scripts(publish, stamp + _APPEND_LUA, stamp + _EVENTS_LUA)


def resp_args(args: list[Any]) -> bytes:
    """Arguments of a command in the Redis wire format (RESP bulk strings); a command is
    ``*N\\r\\n`` followed by its N arguments."""
    parts = []
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


def command(*args: Any) -> bytes:
    """A whole command in the Redis wire format."""
    return b"*%d\r\n%s" % (len(args), resp_args(list(args)))


def lua(text: str) -> AsyncScript:
    """A script to run with ``client=`` the shard's client (its SHA computed once; loaded
    into a Redis that does not have it yet on first use there)."""
    return AsyncScript(cast(Any, None), text.encode())
