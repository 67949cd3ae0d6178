"""A Redis subscriber connection that speaks RESP2 itself: the room channels' reader.

redis-py's ``PubSub`` turns each published message into a dict after going through a few
coroutine layers, its connection's lock and its health check; a worker reads one message
per room event, so under load that was most of what Redis cost it over the memory store.
Here the bytes Redis sends are parsed as they arrive (hiredis, incrementally: a message
split anywhere between two reads is simply completed by the next), and each message is
passed on as ``(channel, data)`` from the transport's callback, with no task, coroutine or
object per message.

* :class:`PubSubReader` is the sans-I/O part: bytes in, messages and confirmations out.
* :class:`RespSubscriber` is one connection: it writes ``SUBSCRIBE``/``UNSUBSCRIBE``
  (``PSUBSCRIBE``/``PUNSUBSCRIBE`` alike), matches Redis's confirmations to them in order
  (Redis confirms each channel of a command, in the order the commands were sent) and tells
  when the connection is lost. It is opened and authenticated by redis-py (every URL form
  it knows works: TCP, TLS, Unix sockets, ACL users, a database number), then its transport
  is taken over (:func:`~.pipe.take_transport`). It does not reconnect: its owner
  (:class:`server.store.redis.pubsub.RoomChannels`) opens a new one and fills the gap.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

import hiredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from .pipe import take_transport

__all__ = ["PubSubProtocolError", "PubSubReader", "RespSubscriber", "pack"]

logger = logging.getLogger("samedeal.redis")

OnMessage = Callable[[bytes, bytes], None]
"""Called with ``(channel, data)`` for each message published on a subscribed channel."""

OnReply = Callable[[bytes, bytes, Any], None]
"""Called with ``(kind, channel, count)`` for each confirmation (``b"subscribe"``, …; the
count of subscriptions left), and with ``(b"error", b"", error)`` for an error reply."""

_CONFIRMATIONS = frozenset((b"subscribe", b"unsubscribe", b"psubscribe", b"punsubscribe"))


class PubSubProtocolError(RedisConnectionError):
    """Redis sent something a subscriber connection cannot get (the connection is dropped)."""


def pack(*args: bytes) -> bytes:
    """A command in the wire format (RESP2: an array of bulk strings)."""
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        parts.append(b"$%d\r\n%s\r\n" % (len(arg), arg))
    return b"".join(parts)


class PubSubReader:
    """The pushes of a subscriber connection, parsed from its bytes as they arrive:
    ``message`` and ``pmessage`` go to ``on_message``, confirmations and error replies to
    ``on_reply``; anything else raises :class:`PubSubProtocolError`."""

    __slots__ = ("_feed", "_gets", "on_message", "on_reply")

    def __init__(self, on_message: OnMessage, on_reply: OnReply) -> None:
        reader = hiredis.Reader(replyError=ResponseError)
        self._feed = reader.feed
        self._gets = reader.gets
        self.on_message = on_message
        self.on_reply = on_reply

    def feed(self, data: bytes) -> None:
        """Parse ``data`` (any piece of the stream) and pass on every push it completes."""
        self._feed(data)
        gets = self._gets
        on_message = self.on_message
        while True:
            try:
                push = gets()
            except hiredis.ProtocolError as exc:
                raise PubSubProtocolError(f"protocol error from Redis: {exc}") from None
            if push is False:
                return
            # the hot path: a published message (a list of three bulk strings)
            if push.__class__ is list and len(push) == 3 and push[0] == b"message":
                on_message(push[1], push[2])
            elif push.__class__ is list and len(push) == 4 and push[0] == b"pmessage":
                on_message(push[2], push[3])  # [kind, pattern, channel, data]
            elif push.__class__ is list and len(push) == 3 and push[0] in _CONFIRMATIONS:
                channel = push[1] if push[1] is not None else b""  # nil: none was subscribed
                self.on_reply(push[0], channel, push[2])
            elif isinstance(push, ResponseError):
                self.on_reply(b"error", b"", push)
            else:
                raise PubSubProtocolError(f"unexpected from Redis on a subscriber: {push!r}")


@dataclass(eq=False)
class _Command:
    """A command written, waiting for Redis to confirm each of its channels."""

    kind: bytes
    left: int
    future: asyncio.Future[None] | None


class RespSubscriber(asyncio.Protocol):
    """One subscriber connection to Redis (see the module's docstring). ``on_message`` is
    called for each message; ``closed`` is done once the connection is lost or closed."""

    def __init__(self, on_message: OnMessage) -> None:
        self._reader = PubSubReader(on_message, self._confirmed)
        self._sent: collections.deque[_Command] = collections.deque()
        self._transport: asyncio.Transport | None = None
        # a collected StreamWriter closes its transport: the handshake's streams are kept
        self._streams: tuple[Any, ...] = ()
        #: done (with None) once the connection is lost or closed
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @classmethod
    async def open(
        cls, connect: Callable[[], Awaitable[Any]], on_message: OnMessage
    ) -> RespSubscriber:
        """A subscriber on a new connection; ``connect`` returns a connected redis-py
        connection (it did the handshake: AUTH, SELECT…)."""
        conn = await connect()
        subscriber = cls(on_message)
        transport, subscriber._streams, leftover = take_transport(conn)
        subscriber._transport = transport
        transport.set_protocol(subscriber)
        if leftover:
            subscriber.data_received(leftover)
        return subscriber

    def subscribe(
        self, channels: Iterable[bytes], kind: bytes = b"SUBSCRIBE"
    ) -> asyncio.Future[None]:
        """Write a ``SUBSCRIBE`` (or ``PSUBSCRIBE``); the future is done once Redis has
        confirmed every channel: any message published on them afterwards will be read.
        It fails when Redis refuses the command or the connection is lost first."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._write(kind, list(channels), future)
        return future

    def unsubscribe(self, channels: Iterable[bytes], kind: bytes = b"UNSUBSCRIBE") -> None:
        """Write an ``UNSUBSCRIBE`` (or ``PUNSUBSCRIBE``); a message already on its way may
        still arrive."""
        self._write(kind, list(channels), None)

    def _write(
        self, kind: bytes, channels: list[bytes], future: asyncio.Future[None] | None
    ) -> None:
        if not channels:
            raise ValueError("no channel given")
        if self.closed.done() or self._transport is None:
            if future is not None:
                future.set_exception(RedisConnectionError("the pub/sub connection is closed"))
            return
        self._sent.append(_Command(kind.lower(), len(channels), future))
        self._transport.write(pack(kind, *channels))

    def close(self) -> None:
        """Close the connection (``closed`` is then done)."""
        if self._transport is not None:
            self._transport.close()
        self._lost(RedisConnectionError("the pub/sub connection is closed"))

    # ----------------------------------------------------------- asyncio.Protocol

    def data_received(self, data: bytes) -> None:
        """Parse what Redis sent (called by the transport)."""
        try:
            self._reader.feed(data)
        except PubSubProtocolError as exc:
            logger.warning("pub/sub connection dropped: %s", exc)
            self._abort(exc)

    def connection_lost(self, exc: Exception | None) -> None:
        """The connection is gone (called by the transport)."""
        self._lost(
            RedisConnectionError(f"pub/sub connection to Redis lost: {exc!r}" if exc else "closed")
        )

    # ----------------------------------------------------------- replies

    def _confirmed(self, kind: bytes, channel: bytes, count: Any) -> None:
        if not self._sent:
            raise PubSubProtocolError(f"a {kind.decode()} reply from Redis to no command")
        command = self._sent[0]
        if kind == b"error":
            # Redis refused the whole command (it sends one error, not one per channel)
            self._sent.popleft()
            if command.future is not None and not command.future.done():
                command.future.set_exception(count)
            else:
                logger.warning("Redis refused a pub/sub command: %s", count)
            return
        if kind != command.kind:
            raise PubSubProtocolError(f"{kind.decode()} from Redis for a {command.kind.decode()}")
        command.left -= 1
        if command.left == 0:
            self._sent.popleft()
            if command.future is not None and not command.future.done():
                command.future.set_result(None)

    def _abort(self, error: Exception) -> None:
        if self._transport is not None:
            self._transport.abort()
        self._lost(error)

    def _lost(self, error: Exception) -> None:
        sent, self._sent = self._sent, collections.deque()
        for command in sent:
            if command.future is not None and not command.future.done():
                command.future.set_exception(error)
        if not self.closed.done():
            self.closed.set_result(None)
