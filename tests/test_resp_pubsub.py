"""The room channels' subscriber connection (server.store.redis.subscriber and
server.store.redis.pubsub): its parser on any split of the stream, and the connection
against a real Redis — confirmed subscriptions, the URL's user and database, a killed
connection repaired by seq."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

import hiredis
import pytest
import redis.asyncio as aioredis
from helpers import until
from hypothesis import given, settings
from hypothesis import strategies as st
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from server.store.redis.pubsub import RoomChannels
from server.store.redis.subscriber import PubSubProtocolError, PubSubReader, RespSubscriber, pack

# ----------------------------------------------------------------- the parser


def bulk(value: bytes | None) -> bytes:
    return b"$-1\r\n" if value is None else b"$%d\r\n%s\r\n" % (len(value), value)


def push(*items: bytes | int | None) -> bytes:
    """A push as Redis sends it in RESP2: an array of bulk strings and integers."""
    parts = [b"*%d\r\n" % len(items)]
    for item in items:
        parts.append(b":%d\r\n" % item if isinstance(item, int) else bulk(item))
    return b"".join(parts)


class Seen:
    """What a reader passed on, in order."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []
        self.reader = PubSubReader(self.message, self.reply)

    def message(self, channel: bytes, data: bytes) -> None:
        self.calls.append(("message", channel, data))

    def reply(self, kind: bytes, channel: bytes, count: Any) -> None:
        self.calls.append((kind, channel, str(count) if kind == b"error" else count))


STREAM = b"".join(
    [
        push(b"subscribe", b"sd:{K7QF2M}:ch", 1),
        push(b"message", b"sd:{K7QF2M}:ch", b'{"seq":1,"type":"progress"}'),
        push(b"message", b"sd:{K7QF2M}:ch", b"\r\n$3\r\n*2\r\n"),  # the format inside the data
        push(b"message", b"sd:{K7QF2M}:ch", b""),
        push(b"psubscribe", b"sd:*", 2),
        push(b"pmessage", b"sd:*", b"sd:{ABCDEF}:ch", b"x" * 300),
        b"-NOPERM no permissions to access the 'nope' channel\r\n",
        push(b"unsubscribe", b"sd:{K7QF2M}:ch", 1),
        push(b"unsubscribe", None, 0),  # nothing was subscribed
    ]
)

EXPECTED = [
    (b"subscribe", b"sd:{K7QF2M}:ch", 1),
    ("message", b"sd:{K7QF2M}:ch", b'{"seq":1,"type":"progress"}'),
    ("message", b"sd:{K7QF2M}:ch", b"\r\n$3\r\n*2\r\n"),
    ("message", b"sd:{K7QF2M}:ch", b""),
    (b"psubscribe", b"sd:*", 2),
    ("message", b"sd:{ABCDEF}:ch", b"x" * 300),
    (b"error", b"", "NOPERM no permissions to access the 'nope' channel"),
    (b"unsubscribe", b"sd:{K7QF2M}:ch", 1),
    (b"unsubscribe", b"", 0),
]


def test_every_push_is_passed_on_in_order() -> None:
    seen = Seen()
    seen.reader.feed(STREAM)
    assert seen.calls == EXPECTED


def test_a_stream_split_at_any_byte_is_read_the_same() -> None:
    for cut in range(len(STREAM) + 1):
        seen = Seen()
        seen.reader.feed(STREAM[:cut])
        seen.reader.feed(STREAM[cut:])
        assert seen.calls == EXPECTED, cut
    seen = Seen()
    for i in range(len(STREAM)):  # one byte at a time
        seen.reader.feed(STREAM[i : i + 1])
    assert seen.calls == EXPECTED


@settings(max_examples=200, deadline=None)
@given(
    messages=st.lists(st.tuples(st.binary(max_size=40), st.binary(max_size=200)), max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=5000), max_size=30),
)
def test_messages_cut_into_any_pieces_arrive_whole(
    messages: list[tuple[bytes, bytes]], cuts: list[int]
) -> None:
    stream = b"".join(push(b"message", channel, data) for channel, data in messages)
    seen = Seen()
    edges = sorted({0, len(stream), *(c for c in cuts if c < len(stream))})
    for start, end in itertools.pairwise(edges):
        seen.reader.feed(stream[start:end])
    assert seen.calls == [("message", channel, data) for channel, data in messages]


@pytest.mark.parametrize(
    "data",
    [
        push(b"pong", b""),  # not a push a subscriber gets
        b"+OK\r\n",
        b":1\r\n",
        push(b"message", b"only a channel"),
        b"?what\r\n",  # not RESP at all
    ],
)
def test_anything_else_is_a_protocol_error(data: bytes) -> None:
    with pytest.raises(PubSubProtocolError):
        Seen().reader.feed(data)


@given(st.lists(st.binary(max_size=30), min_size=1, max_size=6))
def test_a_packed_command_reads_back_as_its_arguments(args: list[bytes]) -> None:
    reader = hiredis.Reader()
    reader.feed(pack(*args))
    assert reader.gets() == args


# ----------------------------------------------------------------- against Redis


def connector(url: str) -> Any:
    pool = aioredis.ConnectionPool.from_url(url, protocol=2)

    async def connect() -> Any:
        conn = pool.connection_class(**pool.connection_kwargs)
        await conn.connect()  # type: ignore[no-untyped-call]
        return conn

    return connect


class Inbox:
    """Messages a subscriber read, and a way to wait for them."""

    def __init__(self) -> None:
        self.got: list[tuple[bytes, bytes]] = []
        self.changed = asyncio.Event()

    def __call__(self, channel: bytes, data: bytes) -> None:
        self.got.append((channel, data))
        self.changed.set()

    async def wait_for(self, count: int, timeout: float = 5.0) -> list[tuple[bytes, bytes]]:
        async with asyncio.timeout(timeout):
            while len(self.got) < count:
                self.changed.clear()
                await self.changed.wait()
        return self.got


async def test_a_confirmed_subscription_gets_every_later_message(redis_url: str) -> None:
    inbox = Inbox()
    sub = await RespSubscriber.open(connector(redis_url), inbox)
    r = aioredis.from_url(redis_url)
    try:
        # published as soon as the subscription is confirmed: none is missed
        await sub.subscribe([b"t:a", b"t:b"])
        big = bytes(range(256)) * 4096  # 1 MiB: many reads
        for i in range(50):
            await r.publish("t:a", b"%d" % i)
        assert await r.publish("t:b", big) == 1
        await sub.subscribe([b"t:*"], b"PSUBSCRIBE")
        assert await r.publish("t:c", b"by pattern") == 1
        got = await inbox.wait_for(52)
        assert got[:50] == [(b"t:a", b"%d" % i) for i in range(50)]
        assert got[50] == (b"t:b", big)
        assert got[51] == (b"t:c", b"by pattern")
        sub.unsubscribe([b"t:*"], b"PUNSUBSCRIBE")
        sub.unsubscribe([b"t:b"])
        await sub.subscribe([b"t:z"])  # confirmed after the unsubscriptions
        assert await r.publish("t:b", b"gone") == 0
        assert await r.publish("t:a", b"still") == 1
        assert (await inbox.wait_for(53))[52] == (b"t:a", b"still")
    finally:
        sub.close()
        await r.aclose()
    await asyncio.wait_for(sub.closed, 5)


async def test_a_refused_subscription_fails_and_the_connection_goes_on(redis_url: str) -> None:
    """The URL's user and database are used; a channel the user may not read is refused
    (its future fails) and the subscriptions before and after it work."""
    admin = aioredis.from_url(redis_url)
    await admin.execute_command(  # type: ignore[no-untyped-call]
        "ACL", "SETUSER", "sd-sub", "on", ">s3cret", "resetchannels", "&ok:*", "+@all"
    )
    base = redis_url.rsplit("/", 1)[0].replace("redis://", "redis://sd-sub:s3cret@")
    inbox = Inbox()
    sub = await RespSubscriber.open(connector(f"{base}/3"), inbox)
    try:
        first = sub.subscribe([b"ok:1"])
        refused = sub.subscribe([b"ok:2", b"nope"])
        last = sub.subscribe([b"ok:3"])
        await first
        with pytest.raises(ResponseError, match="NOPERM"):
            await refused
        await last
        listed = (await admin.execute_command("CLIENT", "LIST", "TYPE", "pubsub")).decode()  # type: ignore[no-untyped-call]
        assert "user=sd-sub" in listed and " db=3 " in listed
        assert await admin.publish("ok:2", b"no") == 0  # the refused command did nothing
        assert await admin.publish("ok:3", b"yes") == 1
        assert await inbox.wait_for(1) == [(b"ok:3", b"yes")]
    finally:
        sub.close()
        await admin.aclose()


async def test_a_lost_connection_fails_what_waits(redis_url: str) -> None:
    inbox = Inbox()
    sub = await RespSubscriber.open(connector(redis_url), inbox)
    admin = aioredis.from_url(redis_url)
    try:
        await sub.subscribe([b"lost:a"])
        waiting = sub.subscribe([b"lost:b"])
        await admin.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # type: ignore[no-untyped-call]
        await asyncio.wait_for(sub.closed, 5)
        # the kill may come before or after Redis confirmed it
        if not waiting.done() or waiting.exception() is not None:
            with pytest.raises(RedisConnectionError):
                await waiting
        with pytest.raises(RedisConnectionError):
            await sub.subscribe([b"lost:c"])  # closed: nothing is written
    finally:
        sub.close()
        await admin.aclose()


def event(seq: int) -> bytes:
    return b'{"seq":%d,"type":"progress"}' % seq


class Room:
    """A room's stored events and its channel, as the backend keeps them."""

    def __init__(self, r: aioredis.Redis, code: str) -> None:
        self.r = r
        self.code = code
        self.channel = f"sd:{{{code}}}:ch"
        self.stored: list[bytes] = []

    async def publish(self, seq: int) -> int:
        self.stored.append(event(seq))
        return int(await self.r.publish(self.channel, event(seq)))

    async def fetch(self, code: str, after: int) -> list[bytes] | None:
        assert code == self.code
        return self.stored[after:]


async def test_room_channels_repair_a_killed_connection_by_seq(redis_url: str) -> None:
    """CLIENT KILL TYPE pubsub mid-room: the events published while the connection was down
    are read from the store, and the room's listener gets every seq once, in order."""
    r = aioredis.from_url(redis_url)
    room = Room(r, "K7QF2M")
    troubles: list[None] = []
    got: list[tuple[str, bytes]] = []
    channels = RoomChannels(
        aioredis.from_url(redis_url),
        "sd:worker:test",
        lambda code: f"sd:{{{code}}}:ch",
        room.fetch,
        lambda: troubles.append(None),
    )
    await channels.start(lambda code, data: got.append((code, data)))
    try:
        await channels.subscribe(room.code)
        for seq in (1, 2, 3):
            assert await room.publish(seq) == 1  # subscribed: read from now on
        await r.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # type: ignore[no-untyped-call]
        for seq in (4, 5):
            await room.publish(seq)  # nobody listens, or the new connection does

        async def subscribers(count: int) -> bool:
            return await r.pubsub_numsub(room.channel) == [(room.channel.encode(), count)]

        await until(lambda: subscribers(1), 10)
        await until(lambda: len(got) >= 5, 10)  # filled once the connection is back
        for seq in (6, 7, 8):
            assert await room.publish(seq) == 1
        # 8 is last: once it is read, anything sent before it was (nothing twice)
        await until(lambda: len(got) >= 8, 10)
        assert got == [(room.code, event(seq)) for seq in range(1, 9)]
        assert troubles  # the backend was told to check Redis's health
        # a room left gets nothing more; one subscribed again starts afresh
        await channels.unsubscribe(room.code)
        await room.publish(9)
        await channels.subscribe(room.code)
        await room.publish(10)
        await until(lambda: len(got) >= 9, 10)
        assert got[8:] == [(room.code, event(10))]
    finally:
        await channels.close()
    # closed: no subscriber connection is left, no task runs
    await until(lambda: subscribers(0))
    await r.aclose()


async def test_room_channels_refuse_to_subscribe_while_reconnecting(redis_url: str) -> None:
    r = aioredis.from_url(redis_url)
    fetched: list[str] = []

    async def fetch(code: str, after: int) -> list[bytes] | None:
        fetched.append(code)
        return []

    channels = RoomChannels(
        aioredis.from_url(redis_url),
        "sd:worker:t2",
        lambda c: f"sd:{{{c}}}:ch",
        fetch,
        lambda: None,
    )
    await channels.start(lambda code, data: None)
    try:
        await r.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # type: ignore[no-untyped-call]

        async def refused() -> bool:
            try:
                await channels.subscribe("ABCDEF")
                await channels.unsubscribe("ABCDEF")
            except RedisConnectionError:
                return True
            return False

        async def subscribed() -> bool:
            try:
                await channels.subscribe("ABCDEF")
            except RedisConnectionError:
                return False
            return True

        await until(refused, every=0.01)  # the kill is seen
        await until(subscribed, 10)  # back soon after
        assert await r.publish("sd:{ABCDEF}:ch", event(1)) == 1
    finally:
        await channels.close()
        await r.aclose()
