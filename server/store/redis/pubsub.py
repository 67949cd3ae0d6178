"""Room events over Redis pub/sub, delivered in ``seq`` order with no gap.

:class:`InOrder` passes each room's events on in ``seq`` order, whatever carries them: a
jump in ``seq`` (messages lost while a connection was down, dropped by Redis, or sent while
a subscription was moving to another shard) holds the newer events back while the missing
ones are read from the room's stored event list. It serves both transports:

* :class:`RoomChannels` (one Redis): one pub/sub connection per worker carries the channels
  of the rooms it has connections in (and the worker's own channel, which keeps it open
  while it has none). It speaks RESP2 itself (:mod:`.subscriber`): each message goes
  from the transport's callback to :class:`InOrder`, with no task or dict per message.
  When the connection fails, the watcher backs off (capped), reconnects, resubscribes
  (waiting for Redis to confirm) and fills every room's gap;
* :class:`server.store.cluster.pubsub.ShardChannels` (Redis Cluster): sharded pub/sub, one
  connection per primary that holds rooms of this worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from protocol.frames import event_seq

from ..broker import Listener
from .subscriber import RespSubscriber

__all__ = ["Fetch", "InOrder", "RoomChannels", "room_of_channel"]

logger = logging.getLogger("samedeal.redis")

Fetch = Callable[[str, int], Awaitable[list[bytes] | None]]
"""Reads a room's stored events after a seq (``RoomStore.events_since``)."""


def room_of_channel(channel: str | bytes) -> str:
    """The room code in a channel's hash tag (``sd:{K7QF2M}:ch`` → ``K7QF2M``)."""
    if isinstance(channel, bytes):
        channel = channel.decode()
    return channel[channel.index("{") + 1 : channel.index("}")]


class InOrder:
    """Per subscribed room: the last event seq delivered, and the events held back while a
    gap is filled from the stored events (``fetch``)."""

    def __init__(self, fetch: Fetch) -> None:
        self._fetch = fetch
        self.listener: Listener | None = None
        self._delivered: dict[str, int] = {}
        self._held: dict[str, list[bytes]] = {}
        self._repairs: set[asyncio.Task[None]] = set()

    def track(self, room_code: str) -> None:
        """A new subscription of ``room_code``: its first event sets where it starts."""
        self._delivered.pop(room_code, None)

    def forget(self, room_code: str) -> None:
        """``room_code`` is no longer subscribed."""
        self._delivered.pop(room_code, None)
        self._held.pop(room_code, None)

    def rooms(self) -> list[str]:
        """The rooms that received events since they were subscribed."""
        return list(self._delivered)

    def close(self) -> None:
        """Stop filling gaps."""
        for task in list(self._repairs):
            task.cancel()

    def deliver(self, room_code: str, data: bytes) -> None:
        """Pass events on in seq order; a gap is filled from the stored events first."""
        assert self.listener is not None
        seq = event_seq(data)
        if seq is None:
            self.listener(room_code, data)
            return
        held = self._held.get(room_code)
        if held is not None:
            held.append(data)
            return
        last = self._delivered.get(room_code)
        if last is not None and seq > last + 1:
            self.repair(room_code, data)
            return
        if last is None or seq > last:
            self._delivered[room_code] = seq
            self.listener(room_code, data)

    def repair(self, room_code: str, data: bytes | None = None) -> None:
        """Read the room's events after the last one delivered (some may have been missed)
        and pass them on, then ``data`` and whatever came meanwhile. A room that has not
        had an event since it was subscribed has nothing to fill."""
        if data is None and room_code not in self._delivered:
            return
        if room_code in self._held:
            if data is not None:
                self._held[room_code].append(data)
            return
        self._held[room_code] = [data] if data is not None else []
        task = asyncio.create_task(self._fill(room_code))
        self._repairs.add(task)
        task.add_done_callback(self._repairs.discard)

    async def _fill(self, room_code: str) -> None:
        last = self._delivered.get(room_code, 0)
        missing: list[bytes] | None = None
        for attempt in range(20):
            try:
                missing = await self._fetch(room_code, last)
                break
            except Exception as exc:
                # the pub/sub connection is back but the store may lag a moment behind
                logger.debug("could not fetch missed events room=%s: %r", room_code, exc)
                await asyncio.sleep(min(0.1 * 2**attempt, 1.0))
        if missing is None:
            logger.warning("events lost for connected clients room=%s after=%s", room_code, last)
        held = self._held.pop(room_code, [])
        if room_code not in self._delivered or self.listener is None:
            return  # unsubscribed meanwhile
        for item in sorted({*(missing or []), *held}, key=lambda d: event_seq(d) or 0):
            seq = event_seq(item) or 0
            if seq > self._delivered[room_code]:
                self._delivered[room_code] = seq
                self.listener(room_code, item)


class RoomChannels:
    """The pub/sub side of :class:`~server.store.redis.broker.RedisBroker` on one Redis: one
    subscriber connection (:class:`~server.store.redis.subscriber.RespSubscriber`, opened with the
    settings of ``redis``'s pool) for the worker's own channel and its rooms'."""

    def __init__(
        self,
        redis: aioredis.Redis,
        own_channel: str,
        channel_of: Callable[[str], str],
        fetch: Fetch,
        trouble: Callable[[], None],
    ) -> None:
        self.redis = redis
        self._channel_of = channel_of
        #: called when the connection fails (the link checks its health at once)
        self._trouble = trouble
        self._order = InOrder(fetch)
        self._link: RespSubscriber | None = None
        #: subscribed (or being subscribed) channel → its room (the worker's own: "")
        self._channels: dict[bytes, str] = {own_channel.encode(): ""}
        self._task: asyncio.Task[None] | None = None

    async def _connect(self) -> Any:
        # a connection of the pool's settings (URL, password, database, TLS), made by
        # redis-py; RESP2, so that messages come as arrays; no socket timeout (a subscriber
        # waits for as long as no room has an event)
        pool = self.redis.connection_pool
        kwargs = {**pool.connection_kwargs, "socket_timeout": None, "protocol": 2}
        conn = pool.connection_class(**kwargs)
        await conn.connect()  # type: ignore[no-untyped-call]
        return conn

    async def _open(self) -> None:
        """A new connection, every channel subscribed and confirmed."""
        link = await RespSubscriber.open(self._connect, self._message)
        try:
            confirmed = link.subscribe(list(self._channels))
            self._link = link  # later subscriptions go after these, on the same connection
            await asyncio.wait_for(confirmed, 5.0)
        except BaseException:
            if self._link is link:
                self._link = None
            link.close()
            raise

    async def start(self, listener: Listener) -> None:
        """Subscribe the worker's own channel and start listening."""
        self._order.listener = listener
        await self._open()
        self._task = asyncio.create_task(self._watch())

    async def close(self) -> None:
        """Stop listening and close the connection."""
        self._order.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        link, self._link = self._link, None
        if link is not None:
            link.close()

    def _message(self, channel: bytes, data: bytes) -> None:
        # called by the connection's transport for each message
        room_code = self._channels.get(channel)
        if not room_code:
            return  # the worker's own channel, or a room left (its last messages)
        try:
            self._order.deliver(room_code, data)
        except Exception:
            logger.exception("could not deliver an event of room %s", room_code)

    async def _watch(self) -> None:
        """When the connection is lost: back off (capped), open a new one, subscribe every
        channel again and fill each room's gap from its stored events."""
        backoff = 0.1
        while True:
            link = self._link
            if link is not None:
                await asyncio.shield(link.closed)
                if self._link is link:
                    self._link = None
                # an outage is told once, by the link's health watch
                logger.debug("pub/sub connection lost; again in %.1fs", backoff)
                self._trouble()
            await asyncio.sleep(backoff)
            try:
                await self._open()
            except asyncio.CancelledError:
                raise
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                logger.debug("pub/sub connection failed (%r); again in %.1fs", exc, backoff)
                self._trouble()
                backoff = min(backoff * 2, 2.0)
                continue
            except Exception:
                logger.exception("pub/sub connection failed; again in %.1fs", backoff)
                backoff = min(backoff * 2, 2.0)
                continue
            backoff = 0.1
            logger.info("pub/sub connection back: filling gaps")
            for room_code in self._order.rooms():
                self._order.repair(room_code)  # events published while we were away

    async def subscribe(self, room_code: str) -> None:
        """Subscribe and wait for Redis to confirm, so no later event is missed."""
        channel = self._channel_of(room_code).encode()
        self._channels[channel] = room_code
        self._order.track(room_code)
        link = self._link
        try:
            if link is None:
                raise RedisConnectionError("the pub/sub connection is being re-established")
            await asyncio.wait_for(link.subscribe([channel]), 5.0)
        except BaseException:
            self._channels.pop(channel, None)
            if link is not None and self._link is link:
                link.unsubscribe([channel])  # in case Redis subscribes it after all
            raise

    async def unsubscribe(self, room_code: str) -> None:
        """Leave the room's channel."""
        channel = self._channel_of(room_code).encode()
        self._channels.pop(channel, None)
        self._order.forget(room_code)
        if self._link is not None:
            self._link.unsubscribe([channel])
