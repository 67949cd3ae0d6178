"""How durable a write must be before it is acknowledged (``--durability``).

* ``memory``: once the primary has it in memory (the reply to the write). Survives a
  worker's death; lost with the primary (a crash, a failover to a replica that had not
  received it yet, a restart without a synced append-only file).
* ``aof``: once the primary's append-only file has it on disk. The server checks at start
  that every primary runs with ``appendonly yes`` and ``appendfsync always`` (Redis then
  syncs the file before it sends a reply) and refuses to start otherwise; on Redis 7.2 or
  newer each write is followed by ``WAITAOF 1 0 <ms>`` too. Survives a restart or crash of
  the primary (it reloads the file); not a failover to a replica that lacked it.
* ``replica``: once a replica has it: each batch of writes is followed by ``WAIT 1 <ms>``.
  Survives the loss of the primary (a replica takes over with the write); not the loss of
  the primary and its replicas at once. A barrier that times out is an error to the player
  (:class:`~server.store.errors.NotDurable`), never an acknowledgement.

One barrier command covers all the writes of one pipelined batch (Redis answers ``WAIT``
for every write the connection made before it), so its cost is shared by the moves of a
turn of the event loop. The default is ``memory`` on one Redis, ``replica`` on a cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from ..errors import NotDurable, StoreUnsuitable
from .pipe import NotSettled
from .scripts import command
from .shards import Router

__all__ = [
    "DURABILITY",
    "Barrier",
    "apply_durability",
    "barrier",
    "check_durability",
    "redis_version",
    "settle",
]

logger = logging.getLogger("samedeal.redis")

DURABILITY = ("memory", "aof", "replica")
"""The durability levels, weakest first."""


@dataclass(frozen=True, slots=True)
class Barrier:
    """The command written after each batch of writes, and the test of its reply."""

    command: bytes | None
    settled: Callable[[Any], bool] | None


def _replicated(reply: Any) -> bool:
    return isinstance(reply, int) and reply >= 1


def _synced(reply: Any) -> bool:
    return isinstance(reply, list) and len(reply) == 2 and int(reply[0]) >= 1


def barrier(level: str, version: tuple[int, ...], timeout: float) -> Barrier:
    """The barrier of ``level`` on Redis ``version``, waiting ``timeout`` seconds."""
    timeout_ms = max(1, round(timeout * 1000))
    if level == "replica":
        return Barrier(command("WAIT", 1, timeout_ms), _replicated)
    if level == "aof" and version >= (7, 2):
        return Barrier(command("WAITAOF", 1, 0, timeout_ms), _synced)
    return Barrier(None, None)  # memory, or aof on Redis < 7.2: appendfsync always


def redis_version(info: dict[str, Any]) -> tuple[int, ...]:
    """The version in an ``INFO server`` reply (``7.0.15`` → ``(7, 0, 15)``)."""
    text = str(info.get("redis_version", "0"))
    return tuple(int(p) for p in text.split(".") if p.isdigit())


async def check_durability(
    level: str, primaries: list[tuple[str, aioredis.Redis]]
) -> tuple[int, ...]:
    """Check that the primaries can give ``level``; the lowest Redis version among them.
    Raises :class:`StoreUnsuitable` (one line, for the operator) when they cannot."""
    if level not in DURABILITY:
        raise ValueError(f"not a durability level: {level!r}")
    versions = []
    without_replica = []
    for name, redis in primaries:
        versions.append(redis_version(await redis.info("server")))
        if level == "aof":
            try:
                config = await redis.config_get("append*")
            except Exception as exc:
                raise StoreUnsuitable(
                    f"--durability aof: cannot read the append-only settings of {name} "
                    f"(CONFIG GET refused: {exc})"
                ) from None
            found = {_text(k): _text(v) for k, v in config.items()}
            if found.get("appendonly") != "yes" or found.get("appendfsync") != "always":
                raise StoreUnsuitable(
                    f"--durability aof: {name} runs with appendonly "
                    f"{found.get('appendonly', '?')}, appendfsync "
                    f"{found.get('appendfsync', '?')}: it needs appendonly yes and "
                    "appendfsync always"
                )
        elif level == "replica":
            replication = await redis.info("replication")
            if int(replication.get("connected_slaves", 0)) < 1:
                without_replica.append(name)
    if without_replica and len(without_replica) == len(primaries):
        raise StoreUnsuitable(
            "--durability replica: no replica is connected to "
            + ", ".join(without_replica)
            + " (start replicas, or choose --durability memory or aof)"
        )
    for name in without_replica:
        logger.warning(
            "durability replica: %s has no replica now; writes to its slots fail until one is back",
            name,
        )
    return min(versions) if versions else (0,)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


async def apply_durability(router: Router, asked: str | None, timeout: float) -> str:
    """Check the primaries can give ``asked`` (None: the default, ``memory`` on one Redis,
    ``replica`` on a cluster) and set every move pipe's barrier; the level."""
    level = asked or ("replica" if router.cluster else "memory")
    primaries = router.primaries()
    version = await check_durability(level, [(s.name, s.redis) for s in primaries])
    wait = barrier(level, version, timeout)
    router.set_pipe_option("barrier", wait.command)
    router.set_pipe_option("settled", wait.settled)
    return level


async def settle(router: Router, room_code: str, key: str, ttl: int, level: str) -> None:
    """With a barrier: return once the writes made so far on room ``room_code``'s shard are as
    durable as ``level`` asks, else raise :class:`NotDurable`. The barrier needs a write of
    ours that comes after them: ``key``'s TTL is renewed (``ttl``, as it was just set)."""
    if router.pipe_options.get("barrier") is None:
        return
    try:
        shard = router.shard(room_code)
        if await shard.store.send(command("EXPIRE", key, ttl)) == 1:
            return
    except NotSettled:
        pass
    except Exception as exc:
        raise NotDurable(f"the write was made; its durability is unknown: {exc}") from exc
    raise NotDurable(f"Redis did not confirm the write as {level} in time")
