"""Room events over Redis Cluster's sharded pub/sub.

A room's channel (``sd:{K7QF2M}:ch``) is in the room's slot: the scripts that store its
events ``SPUBLISH`` them on the shard that holds the room, and a worker ``SSUBSCRIBE``\\ s to
the channels of the rooms it serves only, on the primary of each — one pub/sub connection
per primary it needs (redis-py's ``PubSub`` on that node's connection). A message never
crosses to other shards, so the cluster's pub/sub traffic grows with the rooms, not with
the number of shards.

A subscription moves when its slot does:

* the primary's connection fails (it died: a replica takes its slots over), or
* the primary tells us it dropped the subscription (``sunsubscribe`` from Redis: the slot
  was migrated, or the node became a replica), or
* the slot map, read again for any reason (a ``MOVED`` reply to a move), shows a new
  primary for the room,

and then the room is subscribed again on its slot's primary (trying until one answers,
with capped back-off), and the events published meanwhile are read from the room's stored
event list by ``seq`` (:class:`server.store.redis.pubsub.InOrder`), so no client sees a gap.

redis-py 8's ``ClusterPubSub`` is not used for reading: it polls its per-node connections
in turn (``get_sharded_message(timeout=…)``), reconnects them silently (the moment to fill
a gap is lost), and logs the routine failures of its background re-subscription during a
failover at ERROR with a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..broker import Listener
from ..redis.pubsub import Fetch, InOrder, room_of_channel
from ..redis.shards import ClusterRouter, Shard

__all__ = ["ShardChannels"]

logger = logging.getLogger("samedeal.redis")

_LOST = (RedisConnectionError, RedisTimeoutError, OSError)


@dataclass(eq=False)
class _Node:
    """This worker's pub/sub connection to one primary, and the rooms it carries."""

    shard: Shard
    pubsub: Any
    codes: set[str] = field(default_factory=set)
    #: channels subscribed, not confirmed yet
    pending: set[str] = field(default_factory=set)
    task: asyncio.Task[None] | None = None
    #: held while the connection opens (redis-py opens one per caller otherwise)
    opening: asyncio.Lock = field(default_factory=asyncio.Lock)


class ShardChannels:
    """The pub/sub side of :class:`~server.store.redis.broker.RedisBroker` on a cluster."""

    def __init__(
        self,
        router: ClusterRouter,
        channel_of: Callable[[str], str],
        fetch: Fetch,
        trouble: Callable[[], None],
    ) -> None:
        self._router = router
        self._channel_of = channel_of
        #: called when a connection fails (the link checks its health at once)
        self._trouble = trouble
        self._order = InOrder(fetch)
        #: subscribed rooms: the primary confirmed (its name), or None while moving
        self._wanted: dict[str, str | None] = {}
        self._nodes: dict[str, _Node] = {}
        self._confirm: dict[str, asyncio.Future[None]] = {}
        self._moving: set[str] = set()
        self._mover: asyncio.Task[None] | None = None
        router.moved_hooks.append(self._on_slots_moved)

    async def start(self, listener: Listener) -> None:
        """Deliver events to ``listener`` from now on (connections open as rooms come)."""
        self._order.listener = listener

    async def close(self) -> None:
        """Stop listening and close the connections."""
        self._order.close()
        if self._mover is not None:
            self._mover.cancel()
        for node in list(self._nodes.values()):
            await self._drop(node)

    # ------------------------------------------------------------------ subscribing

    async def subscribe(self, room_code: str) -> None:
        """Subscribe on the primary of the room's slot; returns once it confirmed (a stale
        slot map is read again and the subscription sent where it now belongs)."""
        self._order.track(room_code)
        self._wanted[room_code] = None
        try:
            for attempt in range(5):
                try:
                    await self._subscribe_on(room_code, self._router.shard(room_code))
                    return
                except ResponseError:  # MOVED: our map of the slots is behind
                    if attempt == 4:
                        raise
                    await self._router.refresh()
        except BaseException as exc:
            self._wanted.pop(room_code, None)
            if isinstance(exc, ResponseError):
                raise RedisConnectionError(f"cannot subscribe room {room_code}: {exc}") from exc
            raise

    async def _subscribe_on(self, room_code: str, shard: Shard) -> None:
        channel = self._channel_of(room_code)
        node = self._nodes.get(shard.name)
        if node is None:
            node = self._nodes[shard.name] = _Node(shard, shard.subscriber.pubsub())
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._confirm[channel] = future
        node.pending.add(channel)
        try:
            if node.pubsub.connection is None:
                async with node.opening:
                    if node.pubsub.connection is None:
                        await node.pubsub.connect()
            await node.pubsub.ssubscribe(channel)
            if node.task is None:
                node.task = asyncio.create_task(self._listen(node))
            await asyncio.wait_for(future, 5.0)
        except _LOST:
            self._move(await self._drop(node))
            raise
        finally:
            self._confirm.pop(channel, None)
            node.pending.discard(channel)
        if room_code in self._wanted:
            node.codes.add(room_code)
            self._wanted[room_code] = shard.name

    async def unsubscribe(self, room_code: str) -> None:
        """Leave the room's channel."""
        name = self._wanted.pop(room_code, None)
        self._moving.discard(room_code)
        self._order.forget(room_code)
        node = self._nodes.get(name or "")
        if node is not None and room_code in node.codes:
            node.codes.discard(room_code)
            with contextlib.suppress(*_LOST):
                await node.pubsub.sunsubscribe(self._channel_of(room_code))

    # ------------------------------------------------------------------ listening

    async def _listen(self, node: _Node) -> None:
        """Deliver one primary's messages until its connection fails."""
        while True:
            try:
                # blocking: no timer per message (a timeout would only wake it idle)
                message = await node.pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except ResponseError as exc:
                # a subscription sent to a node that no longer holds the slot (MOVED)
                for channel in node.pending:
                    future = self._confirm.get(channel)
                    if future is not None and not future.done():
                        future.set_exception(exc)
                continue
            except _LOST as exc:
                # an outage is told once, by the link's health watch
                logger.debug("pub/sub connection to %s failed: %r", node.shard.name, exc)
                break
            except Exception:
                logger.exception("pub/sub listener of %s failed", node.shard.name)
                break
            if message is not None:
                self._dispatch(node, message)
        node.task = None  # ended by itself: not to be cancelled by _drop
        codes = await self._drop(node)
        self._trouble()
        self._move(codes)

    def _dispatch(self, node: _Node, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "smessage":
            self._order.deliver(room_of_channel(message["channel"]), message["data"])
        elif kind == "ssubscribe":
            channel = message["channel"]
            future = self._confirm.get(channel.decode() if isinstance(channel, bytes) else channel)
            if future is not None and not future.done():
                future.set_result(None)
        elif kind == "sunsubscribe":
            room_code = room_of_channel(message["channel"])
            if self._wanted.get(room_code) == node.shard.name:
                # not ours: Redis dropped it (the slot moved away from this node)
                node.codes.discard(room_code)
                self._wanted[room_code] = None
                self._move({room_code})

    async def _drop(self, node: _Node) -> set[str]:
        """Close a node's connection; the rooms it carried (to be subscribed again)."""
        if self._nodes.get(node.shard.name) is node:
            del self._nodes[node.shard.name]
        codes = set(node.codes)
        node.codes.clear()
        for room_code in codes:
            if self._wanted.get(room_code) == node.shard.name:
                self._wanted[room_code] = None
        if node.task is not None:
            node.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await node.task
        with contextlib.suppress(Exception):
            await node.pubsub.aclose()
        return codes

    # ------------------------------------------------------------------ moving

    def _on_slots_moved(self) -> None:
        """The slot map changed: move the rooms whose primary is another now."""
        stale = set()
        for room_code, name in self._wanted.items():
            with contextlib.suppress(RedisConnectionError):
                if name is not None and self._router.shard(room_code).name != name:
                    stale.add(room_code)
        if stale:
            self._move(stale)

    def _move(self, codes: set[str]) -> None:
        """Subscribe ``codes`` again where their slots are now, then fill their gaps."""
        self._moving.update(room_code for room_code in codes if room_code in self._wanted)
        if self._moving and (self._mover is None or self._mover.done()):
            self._mover = asyncio.create_task(self._run_mover())

    async def _run_mover(self) -> None:
        backoff = 0.1
        while self._moving:
            try:
                await self._router.refresh()
            except _LOST as exc:
                logger.debug("cannot read the slot map yet: %r", exc)
            for room_code in sorted(self._moving):
                if room_code not in self._wanted:
                    self._moving.discard(room_code)
                    continue
                try:
                    shard = self._router.shard(room_code)
                    old = self._nodes.get(self._wanted[room_code] or "")
                    if old is not None and old.shard is not shard:
                        old.codes.discard(room_code)
                        self._wanted[room_code] = None
                        with contextlib.suppress(*_LOST):
                            await old.pubsub.sunsubscribe(self._channel_of(room_code))
                    if self._wanted.get(room_code) != shard.name:
                        await self._subscribe_on(room_code, shard)
                except (*_LOST, ResponseError) as exc:
                    logger.debug("room %s not subscribed again yet: %r", room_code, exc)
                    continue
                self._moving.discard(room_code)
                logger.info("room %s subscribed on %s: filling its gap", room_code, shard.name)
                self._order.repair(room_code)
            if self._moving:
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, 2.0)
