"""Who a connection is from and what a worker admits (issue 30, items 3 and 4), as pure
rules: the PROXY protocol header, X-Forwarded-For from trusted proxies only, the key limits
count by, a request head's check, and the connections an address may hold."""

from __future__ import annotations

import ipaddress
import struct

import pytest

from server.edge.address import (
    PROXY_V2_SIGNATURE,
    BadProxyHeader,
    TrustedProxies,
    address_key,
    check_request_head,
    forwarded_client,
    read_proxy_header,
)
from server.edge.limits import ConnectionLimits, descriptor_budget

NGINX = TrustedProxies(["127.0.0.1/32", "10.0.0.0/8"])


def test_only_trusted_proxies_name_the_client() -> None:
    assert forwarded_client("127.0.0.1", ["203.0.113.9"], NGINX) == "203.0.113.9"
    # a client's own header is believed from nobody else
    assert forwarded_client("198.51.100.4", ["203.0.113.9"], NGINX) == "198.51.100.4"
    assert forwarded_client("198.51.100.4", [], TrustedProxies()) == "198.51.100.4"
    # the rightmost address no trusted proxy holds: what the client wrote is further left
    forged = ["6.6.6.6, 203.0.113.9", "10.1.2.3"]
    assert forwarded_client("127.0.0.1", forged, NGINX) == "203.0.113.9"
    # nothing more to go on: the last trusted hop, or the peer
    assert forwarded_client("127.0.0.1", ["10.1.2.3"], NGINX) == "10.1.2.3"
    assert forwarded_client("127.0.0.1", [], NGINX) == "127.0.0.1"
    # a hop that is not an address: nothing left of it is believed
    assert forwarded_client("127.0.0.1", ["6.6.6.6, junk"], NGINX) == "127.0.0.1"
    assert forwarded_client("127.0.0.1", ["[2001:db8::1]"], NGINX) == "2001:db8::1"


def test_limits_count_an_ipv6_client_by_its_network() -> None:
    assert address_key("203.0.113.9") == "203.0.113.9"
    assert address_key("2001:db8:1:2:aaaa::1") == address_key("2001:db8:1:2:bbbb::7")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:203.0.113.9") == "203.0.113.9"
    assert address_key("") == "" and address_key("unix") == "unix"


def test_proxy_protocol_v1_names_the_client() -> None:
    line = b"PROXY TCP4 203.0.113.9 127.0.0.1 51000 8765\r\n"
    assert read_proxy_header(line + b"GET / HTTP/1.1\r\n") == (len(line), "203.0.113.9")
    six = b"PROXY TCP6 2001:db8::9 ::1 51000 8765\r\n"
    assert read_proxy_header(six) == (len(six), "2001:db8::9")
    assert read_proxy_header(b"PROXY UNKNOWN\r\n") == (15, None)
    for partial in (b"", b"PRO", b"PROXY TCP4 203.0"):
        assert read_proxy_header(partial) is None  # more to come
    for bad in (b"GET / HTTP/1.1\r\n", b"PROXY TCP4 nothing 1 2 3\r\n", b"PROXY " + b"9" * 120):
        with pytest.raises(BadProxyHeader):
            read_proxy_header(bad)


def _v2(command: int, family: int, body: bytes) -> bytes:
    head = PROXY_V2_SIGNATURE + bytes([0x20 | command, family])
    return head + struct.pack("!H", len(body)) + body


def test_proxy_protocol_v2_names_the_client() -> None:
    four = ipaddress.IPv4Address("203.0.113.9").packed + bytes(4) + struct.pack("!HH", 1, 2)
    header = _v2(1, 0x11, four)
    assert read_proxy_header(header + b"GET") == (len(header), "203.0.113.9")
    six = ipaddress.IPv6Address("2001:db8::9").packed + bytes(16) + struct.pack("!HH", 1, 2)
    assert read_proxy_header(_v2(1, 0x21, six))[1] == "2001:db8::9"  # type: ignore[index]
    assert read_proxy_header(_v2(0, 0x00, b"")) == (16, None)  # LOCAL: the proxy's own check
    assert read_proxy_header(header[:20]) is None
    with pytest.raises(BadProxyHeader):
        read_proxy_header(PROXY_V2_SIGNATURE + bytes([0x10, 0x11, 0, 0]))


@pytest.mark.parametrize(
    ("head", "status"),
    [
        (b"GET / HTTP/1.1\r\nHost: x", None),
        (b"GET /healthz HTTP/1.0", None),
        (b"POST /api/games HTTP/1.1\r\nContent-Length: 5", 405),
        (b"DELETE / HTTP/1.1", 405),
        (b"GET / HTTP/1.1\r\nContent-Length: 12", 400),
        (b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked", 400),
        (b"GET /", 400),
        (b"garbage", 400),
        (b"GET / HTTP/2", 400),
        ("GET /é HTTP/1.1".encode(), 400),
    ],
)
def test_a_request_head_is_answered_or_refused_with_its_status(
    head: bytes, status: int | None
) -> None:
    problem = check_request_head(head)
    assert (problem.status if problem else None) == status
    if problem is not None and problem.status == 405:
        assert problem.allow == "GET"


def test_an_address_holds_its_share_and_the_reserve_is_kept_for_others() -> None:
    limits = ConnectionLimits(per_address=3, capacity=5, ceiling=8, reserve_share=2)
    for _ in range(3):
        assert limits.open() is None and limits.admit("a") is None
    assert limits.open() is None and limits.admit("a") == "address"
    limits.close()
    for _ in range(2):
        assert limits.open() is None and limits.admit("b") is None
    assert limits.total == 5
    # past capacity: the reserve, for addresses that hold fewer than their share
    assert limits.open() is None and limits.admit("b") == "reserve"
    limits.close()
    for name in ("c", "d", "e"):
        assert limits.open() is None and limits.admit(name) is None
    assert limits.open() == "full" and limits.admit("f") == "full"
    limits.close()
    limits.release("a")
    limits.close()
    assert limits.counts["a"] == 2 and limits.total == 7
    for name in ("a", "a", "b", "b", "c", "d", "e"):
        limits.release(name)
        limits.close()
    assert limits.counts == {} and limits.total == 0


def test_the_descriptor_budget_keeps_a_reserve_and_room_for_the_rest() -> None:
    capacity, ceiling = descriptor_budget(20_000, 40)
    assert ceiling == 20_000 - 40 - 64 and capacity == ceiling - 2_000
    capacity, ceiling = descriptor_budget(256, 30)
    assert 0 < capacity < ceiling < 256 - 30
