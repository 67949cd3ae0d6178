"""Room events over Redis pub/sub, delivered in ``seq`` order with no gap.

One pub/sub connection per worker carries the channels of the rooms it has connections in
(and the worker's own channel, which keeps it open while it has none). Every event a worker
receives is passed on in ``seq`` order: a jump in ``seq`` (messages lost while the
connection was down, or dropped by Redis) holds the newer events back while the missing
ones are read from the room's stored event list. When the connection fails, the listener
backs off (capped), reconnects, resubscribes and fills every room's gap the same way.
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

from .backend import Listener

__all__ = ["RoomChannels"]

logger = logging.getLogger("samedeal.redis")

Fetch = Callable[[str, int], Awaitable[list[bytes] | None]]
"""Reads a room's stored events after a seq (``Backend.events_since``)."""


class RoomChannels:
    """The pub/sub side of :class:`server.redis_backend.RedisBackend`."""

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
        self._fetch = fetch
        #: called when the connection fails (the backend checks its health at once)
        self._trouble = trouble
        self._listener: Listener | None = None
        self._pubsub: Any = None
        self._channels: set[str] = {own_channel}
        self._confirm: dict[str, asyncio.Future[None]] = {}
        self._task: asyncio.Task[None] | None = None
        # per subscribed room: the last event seq delivered, and events held back while a
        # gap (pub/sub messages lost during a reconnect) is filled from the event list
        self._delivered: dict[str, int] = {}
        self._held: dict[str, list[bytes]] = {}
        self._repairs: set[asyncio.Task[None]] = set()

    async def start(self, listener: Listener) -> None:
        """Subscribe the worker's own channel and start listening."""
        self._listener = listener
        self._pubsub = self.redis.pubsub()
        await self._pubsub.subscribe(*self._channels)
        self._task = asyncio.create_task(self._listen())

    async def close(self) -> None:
        """Stop listening and close the connection."""
        for task in list(self._repairs):
            task.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def _listen(self) -> None:
        """Deliver pub/sub messages; on failure back off (capped) and resubscribe."""
        backoff = 0.1
        while True:
            try:
                if self._pubsub is None:
                    pubsub = self.redis.pubsub()
                    await pubsub.subscribe(*self._channels)
                    self._pubsub = pubsub
                    logger.info("pub/sub connection back: filling gaps")
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
            except (RedisConnectionError, RedisTimeoutError, OSError) as exc:
                # an outage is told once, by the backend's health watch
                logger.debug("pub/sub connection failed (%r); again in %.1fs", exc, backoff)
                self._trouble()
            except Exception:
                logger.exception("pub/sub listener failed; reconnecting in %.1fs", backoff)
            pubsub, self._pubsub = self._pubsub, None
            if pubsub is not None:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

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
            self._deliver(channel[channel.index("{") + 1 : channel.index("}")], message["data"])

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
        missing: list[bytes] | None = None
        for attempt in range(20):
            try:
                missing = await self._fetch(code, last)
                break
            except Exception as exc:
                # the pub/sub connection is back but the store may lag a moment behind
                logger.debug("could not fetch missed events room=%s: %r", code, exc)
                await asyncio.sleep(min(0.1 * 2**attempt, 1.0))
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
        channel = self._channel_of(code)
        self._channels.add(channel)
        self._delivered.pop(code, None)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._confirm[channel] = future
        try:
            if self._pubsub is None:
                raise ConnectionError("the pub/sub connection is being re-established")
            await self._pubsub.subscribe(channel)
            await asyncio.wait_for(future, 5.0)
        except BaseException:
            self._channels.discard(channel)
            raise
        finally:
            self._confirm.pop(channel, None)

    async def unsubscribe(self, code: str) -> None:
        """Leave the room's channel."""
        channel = self._channel_of(code)
        self._channels.discard(channel)
        self._delivered.pop(code, None)
        self._held.pop(code, None)
        if self._pubsub is not None:
            await self._pubsub.unsubscribe(channel)
