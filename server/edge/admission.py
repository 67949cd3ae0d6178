"""The door: every TCP connection is counted and admitted here before the websocket
library reads a byte of it.

:class:`Admission` holds one worker's :class:`~.limits.ConnectionLimits` (sized from its
``RLIMIT_NOFILE``, raised to the hard limit at start-up) and its trusted proxies. Its
connection class (:meth:`Admission.connection_class`, a
:class:`~websockets.asyncio.server.ServerConnection`) does, as bytes arrive:

1. **Count.** On ``connection_made``: past the ceiling of descriptors, the connection is
   dropped at once (a reset). From a peer that is not a trusted proxy the address is
   known now: an address in the worker's reserve beyond its share is dropped at once too
   (its descriptor is freed for others); one over its own limit is answered
   ``429 too_many_connections`` once its request's head arrives (here: the websocket
   library never parses it).
2. **PROXY header.** From a trusted proxy, a PROXY protocol header (v1 or v2) names the
   client, who is then admitted as above. A trusted proxy may instead send
   ``X-Forwarded-For``: the gateway reads it and admits the client then
   (:meth:`AdmittedConnection.admit`), answering a refusal with an HTTP error.
3. **Request head.** The request line and headers are checked
   (:func:`~.address.check_request_head`): a POST, a body, a malformed line get their HTTP
   error here, where websockets would close the connection without a word.

Every refusal counts in ``/metrics`` (``samedeal_address_refusals_total``,
``samedeal_reserve_refusals_total``) and is logged at most once a minute per address.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
from typing import Any, ClassVar

import orjson
from websockets.asyncio.server import ServerConnection

from ..config import Config
from ..metrics import Metrics
from .address import (
    BadProxyHeader,
    HeadProblem,
    TrustedProxies,
    address_key,
    check_request_head,
    forwarded_client,
    read_proxy_header,
)
from .limits import AddressBuckets, ConnectionLimits, Refused, descriptor_budget

__all__ = [
    "TOO_MANY",
    "Admission",
    "AdmittedConnection",
    "client_address",
    "raise_descriptor_limit",
]

logger = logging.getLogger("samedeal.server")

_HEAD_MAX = 64 * 1024
"""Bytes of a request head read here at most; past that websockets refuses it itself."""
_LINGER = 5.0
"""Seconds a refused connection is kept to let its answer reach the client."""


def raise_descriptor_limit() -> tuple[int, int]:
    """Raise this process's soft ``RLIMIT_NOFILE`` to its hard limit; (the limit now, the
    descriptors open)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = hard if hard != resource.RLIM_INFINITY else max(soft, 1 << 20)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    try:
        in_use = len(os.listdir("/proc/self/fd"))
    except OSError:
        in_use = 64  # not Linux: a guess of what a worker holds before it serves
    return soft, in_use


def client_address(connection: Any) -> str:
    """The client's address of a connection: as admitted (a trusted proxy's client), else
    its TCP peer's ("" when unknown)."""
    address = getattr(connection, "client_address", "")
    if address:
        return str(address)
    peer = getattr(connection, "remote_address", None)
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""


class Admission:
    """One worker's connection limits and trusted proxies (see the module)."""

    def __init__(self, config: Config, metrics: Metrics) -> None:
        self.trusted = TrustedProxies(config.trusted_proxies)
        limit, in_use = raise_descriptor_limit()
        capacity, ceiling = descriptor_budget(limit, in_use)
        self.limits = ConnectionLimits(config.max_per_address, capacity, ceiling)
        self.metrics = metrics
        metrics.connection_capacity = capacity
        # one log line per address a minute, however many connections it has refused
        self._told = AddressBuckets(1 / 60, 1)
        if limit < 1024:
            logger.warning(
                "few file descriptors: RLIMIT_NOFILE=%d allows %d connections; raise it "
                "(ulimit -n, LimitNOFILE=) for more players",
                limit,
                capacity,
            )
        self._summary = (capacity, ceiling - capacity, config.max_per_address, limit)

    def announce(self) -> None:
        """Log the limits once the worker serves (not before: a server refused at start,
        say by its store, prints its one line of refusal and nothing else)."""
        logger.info(
            "connections capacity=%d reserve=%d per_address=%d descriptors=%d", *self._summary
        )

    def connection_class(self) -> type[AdmittedConnection]:
        """The connection class for ``serve(create_connection=…)``, counting here."""
        return type("Admitted", (AdmittedConnection,), {"admission": self})

    def refused(self, why: Refused, address: str) -> None:
        """Count a refusal, and log it (once a minute per address)."""
        if why == "address":
            self.metrics.address_refusals_total += 1
        else:
            self.metrics.reserve_refusals_total += 1
        if self._told.take(address) == 0.0:
            logger.warning(
                "connections refused address=%s why=%s open=%d capacity=%d",
                address,
                why,
                self.limits.total,
                self.limits.capacity,
            )


class AdmittedConnection(ServerConnection):
    """A server connection counted by its worker's :class:`Admission` (see the module)."""

    admission: ClassVar[Admission]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: the client's address (the TCP peer's, or the one a trusted proxy named)
        self.client_address = ""
        #: a refusal to answer once the request arrives (the address is over its limit)
        self.refusal: Refused | None = None
        #: a trusted proxy's connection whose client is not known yet (X-Forwarded-For)
        self.unnamed = False
        self._key: str | None = None
        self._counted = False
        self._stage = "head"  # "proxy", "head", then "open" (or "answered")
        self._buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Count the connection; admit its peer, unless a trusted proxy names its client."""
        super().connection_made(transport)
        limits = self.admission.limits
        self._counted = True
        peer = _peer(transport)
        self.client_address = peer
        if limits.open() is not None:
            self.admission.refused("full", peer)
            self.transport.abort()
            return
        self.metrics.tcp_connections = limits.total
        if peer in self.admission.trusted:
            self._stage, self.unnamed = "proxy", True
        else:
            self._drop_if_refused(self.admit(peer))

    @property
    def metrics(self) -> Metrics:
        """The worker's counters."""
        return self.admission.metrics

    def admit(self, address: str) -> Refused | None:
        """Admit the client at ``address`` (None), or say why not (counted): ``address`` is
        answered 429 once the request is read."""
        self.client_address, self.unnamed = address, False
        key = address_key(address)
        why = self.admission.limits.admit(key)
        if why is None:
            self._key = key
            return None
        self.admission.refused(why, address)
        if why == "address":
            self.refusal = why
        return why

    def admit_forwarded(self, forwarded_for: list[str]) -> Refused | None:
        """A trusted proxy's connection names its client in ``X-Forwarded-For``: admit it
        (see :meth:`admit`)."""
        if not self.unnamed:
            return self.refusal
        peer = self.client_address
        return self.admit(forwarded_client(peer, forwarded_for, self.admission.trusted))

    def _drop_if_refused(self, why: Refused | None) -> None:
        if why in ("reserve", "full") and self.transport is not None:
            self.transport.abort()

    def data_received(self, data: bytes) -> None:
        """The PROXY header and the request head are read here; the rest goes on."""
        if self._stage == "open":
            super().data_received(data)
            return
        if self._stage == "answered":
            return  # a refused request's body: nobody reads it
        self._buffer += data
        if self._stage == "proxy":
            try:
                found = read_proxy_header(self._buffer)
            except BadProxyHeader:
                found = (0, None)  # no header: the proxy names the client in the request
            if found is None:
                return
            length, address = found
            self._buffer = self._buffer[length:]
            self._stage = "head"
            if address is not None:
                self._drop_if_refused(self.admit(address))
                if self.transport is None or self.transport.is_closing():
                    return
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0 and len(self._buffer) < _HEAD_MAX:
            return
        problem = check_request_head(self._buffer[:end]) if end >= 0 else None
        if problem is None and self.refusal is not None:
            problem = TOO_MANY
        if problem is not None:
            self._answer(problem)
            return
        self._stage, data, self._buffer = "open", self._buffer, b""
        super().data_received(data)

    def _answer(self, problem: HeadProblem) -> None:
        """Answer a request refused before websockets saw it, and close."""
        self._stage = "answered"
        transport = self.transport
        body = orjson.dumps({"error": problem.error_code, "message": problem.message})
        head = [
            f"HTTP/1.1 {problem.status} {_REASONS.get(problem.status, 'Error')}",
            "Content-Type: application/json",
            f"Content-Length: {len(body)}",
            "Connection: close",
        ]
        if problem.allow:
            head.append(f"Allow: {problem.allow}")
        if problem.retry_after:
            head.append(f"Retry-After: {problem.retry_after}")
        transport.write("\r\n".join(head).encode() + b"\r\n\r\n" + body)
        # half-close, and read what the client still sends until it closes: closing with
        # unread bytes would reset the connection, and the answer with it
        if transport.can_write_eof():
            transport.write_eof()
        self.loop.call_later(_LINGER, transport.abort)

    def connection_lost(self, exc: Exception | None) -> None:
        """Uncount the connection."""
        if self._counted:
            self._counted = False
            limits = self.admission.limits
            if self._key is not None:
                limits.release(self._key)
                self._key = None
            limits.close()
            self.metrics.tcp_connections = limits.total
        super().connection_lost(exc)


_REASONS = {400: "Bad Request", 405: "Method Not Allowed", 429: "Too Many Requests"}

TOO_MANY = HeadProblem(
    429,
    "too_many_connections",
    "your address holds as many connections as it may: close some, or try later",
    retry_after=10,
)
"""The answer to a connection over its address's limit."""


def _peer(transport: asyncio.BaseTransport) -> str:
    peer = transport.get_extra_info("peername")
    return str(peer[0]) if isinstance(peer, tuple) and peer else ""
