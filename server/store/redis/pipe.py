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
failed is unknown: the caller decides whether to send it again (:class:`MoveWriter` does,
as each move names its place in the log). A command that was never written — no connection
could be opened, or the pipe is closed — fails with :class:`NotSent`: Redis certainly did
not run it.

A pipe may end each write with a barrier command (``WAIT 1 <ms>``: a replica has the
writes; ``WAITAOF 1 0 <ms>``: the primary's append-only file has them): the replies of that
write's commands are then passed on only once the barrier answered, and when it did not
confirm them in time each fails with :class:`NotSettled` (Redis ran it; it may not survive
the loss of the primary). One barrier covers all the commands of a write, as Redis answers
WAIT for every write the connection made before it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable
from typing import Any

import hiredis
from redis.asyncio.connection import AbstractConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["NotSent", "NotSettled", "RespPipe", "take_transport"]

logger = logging.getLogger("samedeal.redis")


class NotSent(RedisConnectionError):
    """The command was never written to Redis: it certainly did not run."""


class NotSettled(Exception):
    """Redis ran the command, but the barrier after it did not confirm it in time (no
    replica acknowledged it, the file was not synced): ``reply`` is Redis's reply to the
    command, ``barrier`` its reply to the barrier."""

    def __init__(self, reply: Any, barrier: Any) -> None:
        super().__init__(f"not confirmed by the barrier (it answered {barrier!r})")
        self.reply = reply
        self.barrier = barrier


class RespPipe:
    """Pipelined commands on one connection at a time; ``connect`` makes a redis-py
    connection of the right settings (used only for the handshake)."""

    def __init__(
        self,
        connect: Any,
        *,
        reply_timeout: float = 10.0,
        barrier: bytes | None = None,
        settled: Callable[[Any], bool] | None = None,
    ) -> None:
        #: an async callable returning a connected redis-py connection
        self._connect = connect
        #: seconds the oldest unanswered command may wait before the connection is dropped
        self.reply_timeout = reply_timeout
        #: a command (wire format) written after each batch, and the test its reply must
        #: pass for the batch's replies to count as settled
        self.barrier = barrier
        self.settled = settled or bool
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
        if self.barrier is None:
            link.write(b"".join(self._queue), self._queued)
        else:
            self._queue.append(self.barrier)
            link.write_settled(b"".join(self._queue), _Batch(self._queued, self.settled))
        self._queue.clear()
        self._queued = []

    async def _open(self) -> None:
        try:
            transport, streams, leftover = take_transport(await self._connect())
            link = _Link(self, transport)
            link.streams = streams
            transport.set_protocol(link)
            self._link = link
            if leftover:
                link.data_received(leftover)
        except BaseException as exc:
            self._fail_queued(exc)
            if not isinstance(exc, Exception):
                raise
            # the outage itself is logged once, by the link's health watch
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


def take_transport(conn: AbstractConnection) -> tuple[asyncio.Transport, tuple[Any, ...], bytes]:
    """Take the transport of a connected redis-py connection over: ``(transport, streams,
    leftover)``. redis-py's stream objects are detached, so that nothing else reads from or
    closes it; ``streams`` must be kept as long as the transport (a collected StreamWriter
    closes its transport), and ``leftover`` is what its reader had buffered, to be parsed
    first. The caller then sets the transport's protocol."""
    writer, reader = conn._writer, conn._reader
    assert writer is not None and reader is not None
    conn._writer = conn._reader = None
    transport: Any = writer.transport
    leftover = bytes(getattr(reader, "_buffer", b""))
    return transport, (writer, reader), leftover


class _Link(asyncio.Protocol):
    """One connection of a :class:`RespPipe`: its commands waiting for replies, in order."""

    def __init__(self, pipe: RespPipe, transport: asyncio.Transport) -> None:
        self.pipe = pipe
        self.transport = transport
        self.reader = hiredis.Reader(replyError=ResponseError)
        # written, waiting for their replies: (future, loop time when written); the
        # commands of a batch followed by a barrier each have the batch instead
        self.sent: collections.deque[tuple[asyncio.Future[Any] | _Batch, float]] = (
            collections.deque()
        )
        self.watchdog: asyncio.TimerHandle | None = None
        self.streams: tuple[Any, ...] = ()

    def write(self, data: bytes, futures: list[asyncio.Future[Any]]) -> None:
        now = asyncio.get_running_loop().time()
        self.sent.extend((future, now) for future in futures)
        self.transport.write(data)
        if self.watchdog is None:
            self._arm()

    def write_settled(self, data: bytes, batch: _Batch) -> None:
        """Write commands and their barrier (the last command of ``data``)."""
        now = asyncio.get_running_loop().time()
        self.sent.extend((batch, now) for _ in range(len(batch.futures) + 1))
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
            if future.__class__ is _Batch:
                future.take(reply)
                continue
            if future.done():  # type: ignore[union-attr]
                continue  # its caller went away; the command ran all the same
            if isinstance(reply, ResponseError):
                future.set_exception(_error(reply))  # type: ignore[union-attr]
            else:
                future.set_result(reply)  # type: ignore[union-attr]

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
            if isinstance(future, _Batch):
                future.fail(error)
            elif not future.done():
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


def _error(reply: ResponseError) -> Exception:
    message = str(reply)
    return NoScriptError(message) if message.startswith("NOSCRIPT") else reply


class _Batch:
    """The commands of one write followed by a barrier: their replies are kept until the
    barrier's reply tells whether they are settled."""

    __slots__ = ("futures", "replies", "settled")

    def __init__(self, futures: list[asyncio.Future[Any]], settled: Callable[[Any], bool]) -> None:
        self.futures = futures
        self.settled = settled
        self.replies: list[Any] = []

    def take(self, reply: Any) -> None:
        """The next reply of the batch: a command's, or (the last) the barrier's."""
        if len(self.replies) < len(self.futures):
            self.replies.append(reply)
            return
        ok = not isinstance(reply, Exception) and self.settled(reply)
        for future, answer in zip(self.futures, self.replies, strict=True):
            if future.done():
                continue
            if isinstance(answer, ResponseError):
                future.set_exception(_error(answer))  # refused: nothing to settle
            elif ok:
                future.set_result(answer)
            else:
                future.set_exception(NotSettled(answer, reply))

    def fail(self, error: Exception) -> None:
        """The connection failed before the barrier answered."""
        for future in self.futures:
            if not future.done():
                future.set_exception(error)
