"""Who a connection is from, and whether what it sent first is a request we answer — pure.

A worker behind a proxy (nginx, HAProxy, a cloud balancer) sees the proxy's address on
every connection. The proxy says who the client is, and the worker believes it only from
the proxies it is told to trust (``--trusted-proxy CIDR…``): in the PROXY protocol header
(version 1, text, or 2, binary) that opens the connection, or in ``X-Forwarded-For``
(the client's address is the rightmost one that is not a trusted proxy: a client may send
the header itself, and a proxy appends to it). From anyone else both are ignored.

Limits count by :func:`address_key`: an IPv4 address, or an IPv6 address's /64 — one
household or one school network, which hands its machines any number of addresses of it.

:func:`check_request_head` reads an HTTP request's head before the websocket library
does, which closes the connection without a word on a request it cannot take (a POST with
a body, a malformed request line): here such a request gets its HTTP error.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "PROXY_V2_SIGNATURE",
    "BadProxyHeader",
    "HeadProblem",
    "TrustedProxies",
    "address_key",
    "check_request_head",
    "forwarded_client",
    "read_proxy_header",
]

PROXY_V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"
_V1_MAX = 107  # the longest PROXY v1 line, CRLF included (the protocol's own bound)
_IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class BadProxyHeader(ValueError):
    """A trusted proxy's connection that does not start with a PROXY header we can read."""


class TrustedProxies:
    """The networks whose connections may say who their client is; empty: none."""

    def __init__(self, networks: Iterable[str] = ()) -> None:
        self.networks = tuple(ipaddress.ip_network(n.strip(), strict=False) for n in networks)

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __repr__(self) -> str:
        return f"TrustedProxies({[str(n) for n in self.networks]!r})"

    def __contains__(self, address: object) -> bool:
        ip = _parse(address) if isinstance(address, str) else None
        return ip is not None and any(ip in network for network in self.networks)


def _parse(text: str) -> _IPAddress | None:
    try:
        ip = ipaddress.ip_address(text.strip().removeprefix("[").split("]")[0].split("%")[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def address_key(address: str) -> str:
    """What limits count a client by: its IPv4 address, or the /64 of its IPv6 address
    (``2001:db8:1:2::/64``); anything else (a Unix socket, an unknown peer) as it is."""
    ip = _parse(address)
    if ip is None:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def forwarded_client(peer: str, forwarded_for: Iterable[str], trusted: TrustedProxies) -> str:
    """The client's address: ``peer`` (the TCP peer) unless it is a trusted proxy; then the
    rightmost address of the ``X-Forwarded-For`` values that is not a trusted proxy (the
    leftmost when all are; ``peer`` when there is none, or a value is not an address)."""
    if peer not in trusted:
        return peer
    hops = [hop.strip() for value in forwarded_for for hop in value.split(",") if hop.strip()]
    found = peer
    for hop in reversed(hops):
        ip = _parse(hop)
        if ip is None:
            return found  # a hop we cannot read: believe nothing before it
        found = str(ip)
        if found not in trusted:
            return found
    return found


def read_proxy_header(data: bytes) -> tuple[int, str | None] | None:
    """The PROXY protocol header at the start of ``data``: (its length, the client's
    address — ``None`` for a ``LOCAL`` or ``UNKNOWN`` connection, the proxy's own health
    check), or ``None`` while more bytes are needed. Raises :class:`BadProxyHeader`."""
    if data.startswith(PROXY_V2_SIGNATURE[: len(data)]) and len(data) < 16:
        return None
    if data.startswith(PROXY_V2_SIGNATURE):
        return _read_v2(data)
    if len(data) < 6 and b"PROXY "[: len(data)] == data:
        return None
    if not data.startswith(b"PROXY "):
        raise BadProxyHeader("the connection does not start with a PROXY header")
    end = data.find(b"\r\n", 0, _V1_MAX)
    if end < 0:
        if len(data) >= _V1_MAX:
            raise BadProxyHeader("a PROXY v1 line longer than the protocol allows")
        return None
    parts = data[:end].decode("ascii", "replace").split(" ")
    if parts[1:2] == ["UNKNOWN"]:
        return end + 2, None
    if len(parts) != 6 or parts[1] not in ("TCP4", "TCP6") or _parse(parts[2]) is None:
        raise BadProxyHeader("a malformed PROXY v1 line")
    return end + 2, str(_parse(parts[2]))


def _read_v2(data: bytes) -> tuple[int, str | None] | None:
    version_command, family = data[12], data[13]
    length = 16 + int.from_bytes(data[14:16], "big")
    if version_command >> 4 != 2:
        raise BadProxyHeader("a PROXY header of an unknown version")
    if len(data) < length:
        return None
    if version_command & 0x0F == 0:  # LOCAL: the proxy's own connection
        return length, None
    body = data[16:length]
    if family >> 4 == 1 and len(body) >= 12:  # AF_INET
        return length, str(ipaddress.IPv4Address(body[:4]))
    if family >> 4 == 2 and len(body) >= 36:  # AF_INET6
        ip = ipaddress.IPv6Address(body[:16])
        return length, str(ip.ipv4_mapped or ip)
    return length, None  # AF_UNSPEC, AF_UNIX: nothing to count by


@dataclass(frozen=True, slots=True)
class HeadProblem:
    """Why a request's head is refused: the HTTP status, an error code and a sentence;
    ``allow``: the methods to name in an ``Allow`` header (a 405); ``retry_after``: the
    seconds to name in a ``Retry-After`` header (a 429)."""

    status: int
    error_code: str
    message: str
    allow: str | None = None
    retry_after: int | None = None


def check_request_head(head: bytes) -> HeadProblem | None:
    """``None`` for a request this server answers — ``GET`` over HTTP/1.x, without a
    body — else what is wrong with it. ``head``: the request line and headers,
    up to the blank line."""
    line, _, rest = head.partition(b"\r\n")
    parts = line.split(b" ")
    if len(parts) != 3 or not parts[1] or parts[2] not in (b"HTTP/1.1", b"HTTP/1.0"):
        return HeadProblem(400, "bad_request", "not an HTTP/1.1 request line")
    if not parts[1].isascii() or not parts[0].isalpha():
        return HeadProblem(400, "bad_request", "a request line must be ASCII")
    if parts[0] != b"GET":
        return HeadProblem(405, "method_not_allowed", "this server answers GET only", allow="GET")
    for header in rest.split(b"\r\n"):
        name, _, value = header.partition(b":")
        name = name.strip().lower()
        if name == b"transfer-encoding" or (name == b"content-length" and value.strip() != b"0"):
            return HeadProblem(400, "bad_request", "a GET request carries no body")
    return None
