"""The pipelined store connection (server.resp) against a real Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from server_fixtures import until_redis_busy

from server.store.redis.pipe import RespPipe
from server.store.redis.scripts import command


def pipe_for(url: str, **kwargs: Any) -> RespPipe:
    pool = aioredis.ConnectionPool.from_url(url)

    async def connect() -> Any:
        conn = pool.connection_class(**pool.connection_kwargs)
        await conn.connect()  # type: ignore[no-untyped-call]
        return conn

    return RespPipe(connect, **kwargs)


async def test_replies_in_order_with_errors_in_their_place(redis_url: str) -> None:
    pipe = pipe_for(redis_url)
    try:
        futures = [
            pipe.send(command("SET", "resp:k", "v1")),
            pipe.send(command("INCR", "resp:k")),  # an error reply: not an integer
            pipe.send(command("EVALSHA", "0" * 40, 0)),
            pipe.send(command("GET", "resp:k")),
            pipe.send(command("GET", "resp:missing")),
        ]
        results = await asyncio.gather(*futures, return_exceptions=True)
        assert results[0] == b"OK"
        assert isinstance(results[1], ResponseError) and "not an integer" in str(results[1])
        assert isinstance(results[2], NoScriptError)
        assert results[3:] == [b"v1", None]
        # many commands of one turn, one write: every reply goes to its own future
        many = [pipe.send(command("INCR", "resp:n")) for _ in range(1000)]
        assert await asyncio.gather(*many) == list(range(1, 1001))
    finally:
        pipe.close()


async def test_the_url_s_user_password_and_database_are_used(redis_url: str) -> None:
    admin = aioredis.from_url(redis_url)
    try:
        await admin.execute_command("ACL", "SETUSER", "sd-store", "on", ">s3cret", "~*", "+@all")  # type: ignore[no-untyped-call]
        base = redis_url.rsplit("/", 1)[0].replace("redis://", "redis://sd-store:s3cret@")
        pipe = pipe_for(f"{base}/5")
        try:
            assert await pipe.send(command("SET", "resp:db5", "yes")) == b"OK"
            assert await pipe.send(command("ACL", "WHOAMI")) == b"sd-store"
        finally:
            pipe.close()
        assert await admin.get("resp:db5") is None  # database 0
        db5 = aioredis.from_url(f"{redis_url.rsplit('/', 1)[0]}/5")
        assert await db5.get("resp:db5") == b"yes"
        await db5.aclose()
        wrong = pipe_for(base.replace("s3cret", "wrong") + "/0")
        with pytest.raises(RedisConnectionError):
            await wrong.send(command("PING"))
        wrong.close()
    finally:
        await admin.execute_command("ACL", "DELUSER", "sd-store")  # type: ignore[no-untyped-call]
        await admin.aclose()


async def test_a_stalled_redis_fails_the_waiting_commands_then_reconnects(
    redis_url: str,
) -> None:
    admin, probe = aioredis.from_url(redis_url), aioredis.from_url(redis_url)
    pipe = pipe_for(redis_url, reply_timeout=0.2)
    try:
        assert await pipe.send(command("PING")) == b"PONG"
        await admin.ping()  # connected: the script below goes out at once
        await probe.ping()
        busy = "local t = redis.call('TIME') local s = t[1] * 1e6 + t[2] " + (
            "while true do t = redis.call('TIME') "
            "if t[1] * 1e6 + t[2] - s > 1000000 then return 1 end end"
        )
        stall = asyncio.ensure_future(admin.eval(busy, 0))
        # Redis runs the script a second; the PING is sent once it runs, well before it ends
        await until_redis_busy(probe)
        waited = asyncio.get_running_loop().time()
        with pytest.raises(RedisTimeoutError):
            await pipe.send(command("PING"))
        assert asyncio.get_running_loop().time() - waited < 0.5  # the watchdog, not Redis
        await stall
        assert await pipe.send(command("PING")) == b"PONG"  # a new connection
    finally:
        pipe.close()
        await admin.aclose()
        await probe.aclose()


async def test_closed_pipe_refuses_and_fails_what_waits(redis_url: str) -> None:
    pipe = pipe_for(redis_url)
    queued = pipe.send(command("PING"))
    pipe.close()
    with pytest.raises(RedisConnectionError):
        await queued
    with pytest.raises(RedisConnectionError):
        await pipe.send(command("PING"))


async def test_a_barrier_holds_the_replies_until_it_answers(redis_url: str) -> None:
    """Each write ends with the barrier; its reply decides for the whole batch: passed on,
    or ``NotSettled`` carrying the command's own reply. Error replies stay errors."""
    wait = command("WAIT", 1, 20)  # the test Redis has no replica: WAIT answers 0
    strict = pipe_for(redis_url, barrier=wait, settled=lambda n: n >= 1)
    lenient = pipe_for(redis_url, barrier=wait, settled=lambda n: n >= 0)
    try:
        batch = [
            strict.send(command("SET", "resp:b", "1")),
            strict.send(command("INCR", "resp:b")),
            strict.send(command("HGET", "resp:b", "x")),  # wrong type: an error reply
        ]
        results = await asyncio.gather(*batch, return_exceptions=True)
        assert [type(r).__name__ for r in results] == ["NotSettled", "NotSettled", "ResponseError"]
        assert [r.reply for r in results[:2]] == [b"OK", 2]  # type: ignore[union-attr]
        assert await lenient.send(command("INCR", "resp:b")) == 3
        many = [lenient.send(command("INCR", "resp:n2")) for _ in range(500)]
        assert await asyncio.gather(*many) == list(range(1, 501))
    finally:
        strict.close()
        lenient.close()
