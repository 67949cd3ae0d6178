"""A pipelined Redis connection for the hot path: commands go out already in the wire
format, replies come back to futures, with no task, coroutine or timer per command.

redis-py answers each command of a pipeline through a few coroutine layers and (unless
disabled) a timer, and writes each pipeline with its own system call. Under load a worker
stores thousands of moves a second; here :meth:`RespPipe.send` only queues the command and
its future. At the end of the event loop's turn, everything queued in that turn is written
at once (one system call however many moves arrived), and the reader callback parses the
replies with hiredis and sets each future in order: Redis answers the commands of one
connection in the order it received them.

The connection is opened and authenticated by redis-py (so every URL form it knows works:
TCP, TLS, Unix sockets, ACL users, a database number); once it is ready we take over its
transport. A stalled Redis is detected by one watchdog timer per connection, not a timer
per command: when the oldest unanswered command has waited ``reply_timeout`` seconds, the
connection is dropped and every unanswered command fails with a timeout. After a failure
the next command opens a new connection. Whether Redis ran a command whose connection
failed is unknown: the caller decides whether to send it again (:class:`RedisBackend` does,
as each move names its place in the log). A command that was never written — no connection
could be opened, or the pipe is closed — fails with :class:`NotSent`: Redis certainly did
not run it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from typing import Any

import hiredis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["NotSent", "RespPipe"]

logger = logging.getLogger("samedeal.redis")


class NotSent(RedisConnectionError):
    """The command was never written to Redis: it certainly did not run."""


class RespPipe:
    """Pipelined commands on one connection at a time; ``connect`` makes a redis-py
    connection of the right settings (used only for the handshake)."""

    def __init__(self, connect: Any, *, reply_timeout: float = 10.0) -> None:
        #: an async callable returning a connected redis-py connection
        self._connect = connect
        #: seconds the oldest unanswered command may wait before the connection is dropped
        self.reply_timeout = reply_timeout
        self._link: _Link | None = None
        self._opening: asyncio.Task[None] | None = None
        # queued this turn of the loop, not yet written
        self._queue: list[bytes] = []
        self._queued: list[asyncio.Future[Any]] = []
        self._flush_armed = False
        self._closed = False

    def send(self, packed: bytes) -> asyncio.Future[Any]:
        """Queue one command in the wire format; the future gets its reply (an error reply
        is set as its exception; a lost or stalled connection fails it)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self._closed:
            future.set_exception(NotSent("the connection is closed"))
            return future
        self._queue.append(packed)
        self._queued.append(future)
        if not self._flush_armed:
            self._flush_armed = True
            loop.call_soon(self._flush)
        return future

    def _flush(self) -> None:
        self._flush_armed = False
        if not self._queue:
            return
        link = self._link
        if link is None or link.transport.is_closing():
            self._link = None
            if self._opening is None:
                self._opening = asyncio.get_running_loop().create_task(self._open())
            return  # written once the connection is open
        link.write(b"".join(self._queue), self._queued)
        self._queue.clear()
        self._queued = []

    async def _open(self) -> None:
        try:
            conn: AbstractConnection = await self._connect()
            # take the transport over from redis-py's stream objects, which are detached so
            # that nothing else reads from or closes it
            writer, reader = conn._writer, conn._reader
            assert writer is not None and reader is not None
            conn._writer = conn._reader = None
            transport: Any = writer.transport
            leftover = bytes(getattr(reader, "_buffer", b""))
            link = _Link(self, transport)
            link.streams = (writer, reader)  # a collected StreamWriter closes its transport
            transport.set_protocol(link)
            self._link = link
            if leftover:
                link.data_received(leftover)
        except BaseException as exc:
            self._fail_queued(exc)
            if not isinstance(exc, Exception):
                raise
            # the outage itself is logged once, by the backend's health watch
            logger.debug("could not open a store connection to Redis: %r", exc)
        finally:
            self._opening = None
        if self._closed:
            self.close()
        else:
            self._flush()

    def _fail_queued(self, exc: BaseException) -> None:
        # queued commands were never written, whatever stopped them
        error = NotSent(f"could not connect: {exc}")
        queued, self._queued = self._queued, []
        self._queue.clear()
        for future in queued:
            if not future.done():
                future.set_exception(error)

    def close(self) -> None:
        """Fail everything waiting and close the connection."""
        self._closed = True
        self._fail_queued(NotSent("the connection is closed"))
        link, self._link = self._link, None
        if link is not None:
            link.drop(RedisConnectionError("the connection is closed"))
        if self._opening is not None:
            self._opening.cancel()


class _Link(asyncio.Protocol):
    """One connection of a :class:`RespPipe`: its commands waiting for replies, in order."""

    def __init__(self, pipe: RespPipe, transport: asyncio.Transport) -> None:
        self.pipe = pipe
        self.transport = transport
        self.reader = hiredis.Reader(replyError=ResponseError)
        # written, waiting for their replies: (future, loop time when written)
        self.sent: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self.watchdog: asyncio.TimerHandle | None = None
        self.streams: tuple[Any, ...] = ()

    def write(self, data: bytes, futures: list[asyncio.Future[Any]]) -> None:
        now = asyncio.get_running_loop().time()
        self.sent.extend((future, now) for future in futures)
        self.transport.write(data)
        if self.watchdog is None:
            self._arm()

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        reader.feed(data)
        sent = self.sent
        while True:
            try:
                reply = reader.gets()
            except hiredis.ProtocolError as exc:
                self.drop(RedisConnectionError(f"protocol error from Redis: {exc}"))
                return
            if reply is False:
                return
            if not sent:
                self.drop(RedisConnectionError("a reply from Redis to no command"))
                return
            future = sent.popleft()[0]
            if future.done():
                continue  # its caller went away; the command ran all the same
            if isinstance(reply, ResponseError):
                message = str(reply)
                future.set_exception(
                    NoScriptError(message) if message.startswith("NOSCRIPT") else reply
                )
            else:
                future.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.drop(RedisConnectionError(f"connection to Redis lost: {exc!r}" if exc else "closed"))

    def drop(self, error: Exception) -> None:
        """Close the connection and fail every command waiting for its reply."""
        if self.pipe._link is self:
            self.pipe._link = None
        if self.watchdog is not None:
            self.watchdog.cancel()
            self.watchdog = None
        sent, self.sent = self.sent, collections.deque()
        if sent:
            logger.info(
                "store connection to Redis failed, %d commands unanswered: %s", len(sent), error
            )
        for future, _ in sent:
            if not future.done():
                future.set_exception(error)
        self.transport.abort()

    def _arm(self) -> None:
        loop = asyncio.get_running_loop()
        self.watchdog = loop.call_later(self.pipe.reply_timeout / 4, self._check)

    def _check(self) -> None:
        self.watchdog = None
        if not self.sent:
            return
        waited = asyncio.get_running_loop().time() - self.sent[0][1]
        if waited >= self.pipe.reply_timeout:
            self.drop(RedisTimeoutError(f"no reply from Redis for {waited:.1f}s"))
        else:
            self._arm()
