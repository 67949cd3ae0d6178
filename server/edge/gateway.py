"""The gateway: what comes in on the port. HTTP routes (``/healthz``, ``/metrics``, the
browser client's files), the websocket handshake and ``hello``, message credits, frame
decoding, and the dispatch table from message type to the layer that serves it. Every
request gets exactly one direct reply; a refused one gets an ``error``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from protocol import (
    PROTOCOL_VERSION,
    ClientMessage,
    Hello,
    Ping,
    ProtocolError,
    decode_client,
    frames,
    id_problem,
    request_id,
)

from ..bucket import TokenBucket
from ..config import now_ms
from ..context import Context
from ..records.models import RecordsUnavailable
from ..rooms.room import Refusal
from ..store.errors import StoreUnavailable
from ..store.rooms import UnknownRoom
from .admission import TOO_MANY, Admission, AdmittedConnection, client_address
from .connection import Conn
from .http import HttpRequest, error_response, respond, text_response
from .static import StaticFiles

__all__ = ["Gateway", "Handler", "Route"]

logger = logging.getLogger("samedeal.server")

Handler = Callable[[Conn, Any], Awaitable[None]]
"""Serves one request; raises :class:`~server.room.Refusal` to refuse it."""


@dataclass(frozen=True, slots=True)
class Route:
    """Where a request type goes, and whether ``ok`` answers it once served (otherwise
    the handler sends its own reply)."""

    handler: Handler
    answers_ok: bool = False


LeaveHook = Callable[[Conn], Awaitable[None]]


class Gateway:
    """Connections in, requests dispatched."""

    def __init__(self, ctx: Context, routes: dict[type[Any], Route], on_close: LeaveHook) -> None:
        self.ctx = ctx
        self.routes: dict[type[Any], Route] = {**routes, Ping: Route(self._ping)}
        self.on_close = on_close
        #: connections counted and admitted per client address (create_connection)
        self.admission = Admission(ctx.config, ctx.metrics)
        # files served on the websocket port (the browser client), read once
        self.static = StaticFiles(ctx.config.static_dir) if ctx.config.static_dir else None
        ctx.http.get("/healthz", self._healthz)
        ctx.http.get("/metrics", self._metrics)
        ctx.http.on_error(StoreUnavailable, _storage_response)

    # ------------------------------------------------------------------ HTTP

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """Answer plain HTTP on the websocket port: the routes (``/healthz``, ``/metrics``
        and the layers' own), then the static files (the last: they answer 404 to any
        other address). A websocket upgrade goes on to the handshake. A trusted proxy's
        client, known only now (X-Forwarded-For), refused by its address's limit or by the
        reserve of descriptors is answered 429 or 503 instead."""
        if isinstance(connection, AdmittedConnection) and connection.unnamed:
            why = connection.admit_forwarded(request.headers.get_all("X-Forwarded-For"))
            if why is not None:
                return _refusal(why)
        if "websocket" in request.headers.get("Upgrade", "").lower():
            return None
        found = await self.ctx.http.dispatch(request, client_address(connection))
        if found is not None:
            return found
        if request.path.startswith("/api/"):
            # an API client reads JSON, never the browser's page
            return error_response(HTTPStatus.NOT_FOUND, "not_found", "no such API address")
        if self.static is None:
            return None
        return self.static.serve(connection, request)

    async def _healthz(self, request: HttpRequest) -> Response:
        for name, health in self.ctx.health.items():
            state = health()
            if not state.ok:
                # a load balancer takes this worker out while it cannot store anything;
                # the records database's outage is told the same way (docs/operations.md)
                return text_response(
                    f"{name} unreachable: {state.reason}\n", HTTPStatus.SERVICE_UNAVAILABLE
                )
        return text_response("ok\n")

    async def _metrics(self, request: HttpRequest) -> Response:
        metrics = self.ctx.metrics
        try:
            metrics.store_rtt_seconds = await asyncio.wait_for(self.ctx.store.ping(), 2)
        except Exception:
            metrics.store_rtt_seconds = -1.0
        metrics.rooms = len(self.ctx.rooms)
        with contextlib.suppress(Exception):
            metrics.records_pending = await self.ctx.store.pending.count()
        return respond(
            HTTPStatus.OK,
            metrics.render(self.ctx.worker_id).encode(),
            [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
        )

    # ------------------------------------------------------------------ connections

    async def handler(self, websocket: ServerConnection) -> None:
        """Serve one connection from ``hello`` to close; undo its registrations in
        ``finally:``."""
        ctx = self.ctx
        config, metrics = ctx.config, ctx.metrics
        credits = TokenBucket(config.rate, config.burst)
        conn = Conn(websocket, credits, ctx.worker_id, ctx.frames)
        ctx.rooms.conns[conn.id] = conn
        metrics.connections += 1
        metrics.connections_total += 1
        try:
            if not await self._hello(conn):
                return
            async for frame in websocket:
                if conn.closing:
                    continue  # reading on lets the closing handshake through
                metrics.messages_total += 1
                if not ctx.rooms.writable(conn):
                    continue  # it does not read its replies: closed (1013) by writable
                if not self._take_credit(conn):
                    if conn.strikes > config.max_strikes:
                        metrics.abuse_closes_total += 1
                        logger.warning("closing flooding connection conn=%s", conn.id)
                        ctx.rooms.close(conn, 1008, "too many messages")
                        continue
                    await self._error(
                        conn, request_id(frame), "rate_limited", "too many messages: slow down"
                    )
                    continue
                await self.serve_frame(conn, frame)
        except ConnectionClosed:
            pass
        finally:
            metrics.connections -= 1
            del ctx.rooms.conns[conn.id]
            await self.on_close(conn)

    async def _hello(self, conn: Conn) -> bool:
        config = self.ctx.config
        try:
            frame = await asyncio.wait_for(conn.websocket.recv(), config.hello_timeout)
        except TimeoutError:
            await conn.websocket.close(1008, "no hello")
            return False
        try:
            msg = _decode(frame)
        except ProtocolError as exc:
            await self._refused(conn, frame, exc)
            await conn.websocket.close(1002, "expected hello")
            return False
        if not isinstance(msg, Hello):
            await self._error(conn, msg.id, "hello_first", "the first message must be hello")
            await conn.websocket.close(1002, "expected hello")
            return False
        if msg.v != PROTOCOL_VERSION:
            await self._error(
                conn,
                msg.id,
                "unsupported_version",
                f"protocol version {msg.v} is not supported; this server speaks "
                f"version {PROTOCOL_VERSION}",
            )
            await conn.websocket.close(1002, "unsupported protocol version")
            return False
        await conn.send(
            frames.welcome(
                id=msg.id,
                worker=self.ctx.worker_id,
                max_frame=config.max_frame,
                rate=config.rate,
                burst=config.burst,
                bots=True,
            )
        )
        return True

    def _take_credit(self, conn: Conn) -> bool:
        if conn.credits.take() == 0.0:
            return True
        # strikes count a flood: they are forgiven after a quiet spell
        now = time.monotonic()
        if now - conn.last_strike > 10.0:
            conn.strikes = 0
        conn.last_strike = now
        conn.strikes += 1
        return False

    async def _ping(self, conn: Conn, msg: Ping) -> None:
        await conn.send(frames.pong(id=msg.id, now=now_ms()))

    async def _error(self, conn: Conn, rid: int | None, error_code: str, message: str) -> None:
        self.ctx.metrics.errors_total += 1
        await conn.send(frames.error(id=rid, code=error_code, message=message))

    async def _refused(self, conn: Conn, frame: str | bytes, exc: ProtocolError) -> None:
        """The ``error`` to a frame that is not a valid message: its ``id`` when it has one
        a reply may carry, else a word on why not."""
        rid = request_id(frame)
        problem = id_problem(frame) if rid is None and not isinstance(frame, bytes) else None
        message = f"{exc.message} ({problem})" if problem else exc.message
        await self._error(conn, rid, exc.error_code, message)

    async def serve_frame(self, conn: Conn, frame: str | bytes) -> None:
        """Decode one frame and serve it; anything refused gets an ``error`` reply."""
        try:
            msg = _decode(frame)
        except ProtocolError as exc:
            conn.bad += 1
            await self._refused(conn, frame, exc)
            if conn.bad > self.ctx.config.max_bad_messages:
                self.ctx.metrics.abuse_closes_total += 1
                logger.warning("closing abusive connection conn=%s", conn.id)
                self.ctx.rooms.close(conn, 1008, "too many bad messages")
            return
        rid = msg.id
        try:
            route = self.routes.get(type(msg))
            if route is None:
                raise Refusal("hello_again", "hello is only the first message")
            await route.handler(conn, msg)
            if route.answers_ok:
                await conn.send(frames.ok(rid))
        except Refusal as exc:
            await self._error(conn, rid, exc.error_code, exc.message)
        except (UnknownRoom, KeyError):
            await self._error(conn, rid, "unknown_room", "no such room (it may have expired)")
        except StoreUnavailable:
            await self._error(
                conn, rid, "storage", "the store cannot be reached: nothing was done, try again"
            )
        except RecordsUnavailable as exc:
            # the worker's records health logs the outage once, not once per request
            await self._error(conn, rid, exc.error_code, exc.for_players)
        except ConnectionClosed:
            raise
        except Exception:
            logger.exception(
                "request failed type=%s room=%s seat=%s conn=%s",
                msg.type,
                conn.room_code,
                conn.seat,
                conn.id,
            )
            await self._error(conn, rid, "server_error", "the server could not do that now")


def _refusal(why: str) -> Response:
    """The answer to a trusted proxy's client refused once its address is known."""
    if why == "address":
        response = error_response(
            HTTPStatus.TOO_MANY_REQUESTS, TOO_MANY.error_code, TOO_MANY.message
        )
    else:
        response = error_response(
            HTTPStatus.SERVICE_UNAVAILABLE, "server_full", "the server is full: try again later"
        )
    response.headers["Retry-After"] = str(TOO_MANY.retry_after)
    return response


def _storage_response(exc: BaseException) -> Response:
    return error_response(
        HTTPStatus.SERVICE_UNAVAILABLE, "storage", "the store cannot be reached now: try again"
    )


def _decode(frame: str | bytes) -> ClientMessage:
    """A message from a text frame (a binary frame is refused, whatever it holds)."""
    if isinstance(frame, bytes):
        raise ProtocolError("invalid_message", "messages are sent as text frames, not binary")
    return decode_client(frame)
