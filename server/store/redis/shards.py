"""Where a room's keys live: one Redis, or the shard of a Redis Cluster that holds the room's
slot — and one set of connections per shard.

Every key of a room carries the hash tag ``{ROOMCODE}``, so the room's slot is the CRC16 of
its code and all its keys, scripts and its sharded pub/sub channel are on one shard. A
:class:`Shard` is one primary: a connection pool for commands and transactions, and the
moves' pipelined connection (:class:`~.pipe.RespPipe`). A router gives the shard of a
room or of a key:

* :class:`SingleRouter`: one Redis, one shard, whatever the key (the fast path: no slot is
  computed);
* :class:`ClusterRouter`: the cluster's slot map, read with redis-py's asyncio cluster
  client (``CLUSTER SLOTS`` through its ``NodesManager``) and read again when the cluster
  says it changed — a ``MOVED`` reply, a primary that stopped answering (a failover) —
  so commands follow the slots to their new primary.

A cluster is given as ``redis+cluster://HOST:PORT[,HOST:PORT…]`` (``rediss+cluster://``:
TLS; user and password as in a Redis URL); any one reachable node is enough to find the
others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.connection import SSLConnection, parse_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff, NoBackoff
from redis.crc import key_slot
from redis.driver_info import DriverInfo
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MasterDownError,
    MovedError,
    ReadOnlyError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .pipe import NotSent, RespPipe

__all__ = [
    "CLUSTER_SCHEMES",
    "ClusterRouter",
    "Router",
    "Shard",
    "SingleRouter",
    "check_cluster_url",
    "check_redis_url",
    "cluster_node_urls",
    "make_router",
    "not_run",
    "open_router",
    "redirection",
]

T = TypeVar("T")

logger = logging.getLogger("samedeal.redis")

CLUSTER_SCHEMES = ("redis+cluster", "rediss+cluster")
"""URL schemes naming a Redis Cluster by some of its nodes."""

# error replies for which Redis did not run the command: the cluster is changing or a node
# cannot take writes now (a failover, a slot migration, a restart, too few replicas)
_NOT_RUN = (
    "MOVED",
    "ASK",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "READONLY",
    "LOADING",
    "NOREPLICAS",
    "MASTERDOWN",
)


# the same, as redis-py's parser raises them (it strips the kind from the message)
_NOT_RUN_TYPES = (
    MovedError,
    AskError,
    TryAgainError,
    ClusterDownError,
    ReadOnlyError,
    MasterDownError,
)


def not_run(exc: BaseException) -> bool:
    """Whether ``exc`` is an error reply saying the command was not run because of the
    cluster's state (sending it again later, maybe elsewhere, is safe)."""
    if isinstance(exc, _NOT_RUN_TYPES):
        return True
    return isinstance(exc, ResponseError) and _reply_text(exc).startswith(_NOT_RUN)


def _reply_text(exc: ResponseError) -> str:
    """The error reply of ``exc``: a pipeline's error is raised as "Command # N (the
    command, up to 100 characters) of pipeline caused error: ('the reply',)", whose reply
    may come far from the start (a transaction refused with NOREPLICAS as a whole)."""
    text = str(exc)
    head, found, reply = text.rpartition(" of pipeline caused error: ")
    if found and head.startswith("Command # "):
        return reply.lstrip("('\"")
    return text


def redirection(exc: BaseException) -> tuple[str, int, str] | None:
    """``(kind, slot, "host:port")`` of a ``MOVED`` or ``ASK`` error reply, else None."""
    if not isinstance(exc, ResponseError):
        return None
    words = str(exc).split()
    # redis-py's parser strips the kind from MOVED/ASK replies it turns into MovedError /
    # AskError ("3999 127.0.0.1:7001"); hiredis in the moves' pipe keeps it
    kind = type(exc).__name__.removesuffix("Error").upper()
    if len(words) == 3 and words[0] in ("MOVED", "ASK"):
        kind, words = words[0], words[1:]
    if kind not in ("MOVED", "ASK") or len(words) != 2 or not words[0].isdigit():
        return None
    return kind, int(words[0]), words[1]


def cluster_node_urls(url: str) -> list[str]:
    """The Redis URLs of the nodes a ``redis+cluster://`` URL names (user, password, TLS
    and query kept); ``ValueError`` when it names none."""
    parts = urlsplit(url)
    if parts.scheme not in CLUSTER_SCHEMES:
        raise ValueError(f"not a Redis Cluster URL: {url!r}")
    scheme = parts.scheme.split("+", 1)[0]
    userinfo, _, hosts = parts.netloc.rpartition("@")
    if parts.path not in ("", "/", "/0"):
        raise ValueError(f"a Redis Cluster has database 0 only: {url!r}")
    urls = []
    for host in hosts.split(","):
        if not host:
            continue
        netloc = f"{userinfo}@{host}" if userinfo else host
        node = urlunsplit((scheme, netloc, "", parts.query, ""))
        kwargs = parse_url(node)
        if "host" not in kwargs or "port" not in kwargs:
            raise ValueError(f"give every node as HOST:PORT: {host!r} in {url!r}")
        urls.append(node)
    if not urls:
        raise ValueError(f"no node in {url!r}")
    return urls


def check_cluster_url(url: str) -> None:
    """Raise ``ValueError`` with a clear message when ``url`` is not a usable
    ``redis+cluster://`` URL."""
    try:
        for node in cluster_node_urls(url):
            aioredis.ConnectionPool.from_url(node)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a Redis Cluster URL: {url!r} ({exc})") from None


def check_redis_url(url: str) -> None:
    """Raise ``ValueError`` with a clear message when ``url`` is neither a Redis URL that
    redis-py can use (``redis://``, ``rediss://``, ``unix://``) nor a Redis Cluster's
    (``redis+cluster://HOST:PORT[,HOST:PORT…]``)."""
    if urlsplit(url).scheme in CLUSTER_SCHEMES:
        check_cluster_url(url)
        return
    try:
        aioredis.ConnectionPool.from_url(url)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"not a Redis URL: {url!r} ({exc})") from None


#: redis-py looks its own version up in the installed packages' metadata for every connection
#: it makes unless told (a scan of sys.path, and reference cycles left for the collector):
#: told once here, for every client and pool below
CLIENT_INFO: dict[str, Any] = {"driver_info": DriverInfo(lib_version=redis.__version__)}


def _pool(url: str) -> aioredis.BlockingConnectionPool:
    # a burst of requests (a thousand players making their first move, or leaving at once)
    # waits for a connection instead of failing with "too many connections". A command on a
    # connection that Redis closed (a restart, a kill, an idle timeout) is sent again on a
    # new one, instead of failing once per pooled connection. Moves do not go this way (the
    # shard's pipe), nor do room updates (RedisRooms.update).
    return aioredis.BlockingConnectionPool.from_url(
        url,
        max_connections=64,
        timeout=20,
        socket_connect_timeout=2,
        retry=Retry(ExponentialBackoff(cap=0.5, base=0.02), 3),
        retry_on_error=[RedisConnectionError, RedisTimeoutError],
        **CLIENT_INFO,
    )


class Shard:
    """One Redis primary: a connection pool (``redis``) for commands and transactions, its
    own connections for pub/sub and health checks, and the moves' pipe (``store``)."""

    def __init__(self, name: str, url: str, pipe_options: dict[str, Any]) -> None:
        self.name = name
        self.url = url
        self.redis: aioredis.Redis = aioredis.Redis.from_pool(_pool(url))
        #: for pub/sub: a failure is seen at once (no silent reconnect), so the gap it left
        #: is filled at once
        self.subscriber: aioredis.Redis = aioredis.Redis.from_url(
            url, socket_connect_timeout=2, retry=Retry(NoBackoff(), 0), **CLIENT_INFO
        )
        # the health watch's own connection: no retries, a short timeout
        self.probe: aioredis.Redis = aioredis.Redis.from_url(
            url,
            socket_timeout=1,
            socket_connect_timeout=1,
            retry=Retry(NoBackoff(), 0),
            **CLIENT_INFO,
        )
        self.store = RespPipe(self._store_connection, **pipe_options)

    async def _store_connection(self) -> Any:
        # a connection of the pool's settings without redis-py's socket timeout (the pipe
        # has its own watchdog); its transport is taken over by the pipe
        pool = self.redis.connection_pool
        conn = pool.connection_class(**{**pool.connection_kwargs, "socket_timeout": None})
        await conn.connect()  # type: ignore[no-untyped-call]
        return conn

    async def close(self) -> None:
        """Fail the moves waiting, close every connection."""
        self.store.close()
        for client in (self.redis, self.subscriber, self.probe):
            with contextlib.suppress(Exception):
                await client.aclose()


class Router:
    """Which :class:`Shard` holds a room or a key. ``pipe_options`` (the moves' pipe
    settings) apply to every shard, those made later included."""

    cluster = False

    def __init__(self, pipe_options: dict[str, Any]) -> None:
        self.pipe_options = pipe_options

    def shard(self, room_code: str) -> Shard:
        """The shard holding room ``room_code``."""
        raise NotImplementedError

    def shard_of_key(self, key: str) -> Shard:
        """The shard holding ``key``."""
        raise NotImplementedError

    def primaries(self) -> list[Shard]:
        """Every primary, as last known."""
        raise NotImplementedError

    def shards(self) -> list[Shard]:
        """Every shard made so far (primaries, and former ones)."""
        return self.primaries()

    def shard_at(self, name: str) -> Shard:
        """The shard of the node ``host:port`` (an ``ASK`` redirection's target)."""
        raise NotImplementedError

    async def start(self) -> None:
        """Find the shards (a cluster: read its slot map)."""

    async def refresh(self) -> None:
        """Read the cluster's slot map again (after a MOVED reply, or a failure)."""

    def changed(self) -> None:
        """Something failed that may be a failover: read the slot map again soon."""

    async def run(
        self, where: str, command: Callable[[aioredis.Redis], Awaitable[T]], *, key: bool = False
    ) -> T:
        """``command`` run on the shard of room ``where`` (of the key ``where`` with ``key``)."""
        shard = self.shard_of_key(where) if key else self.shard(where)
        return await command(shard.redis)

    def set_pipe_option(self, name: str, value: Any) -> None:
        """Change a setting of every shard's pipe (and of those made later)."""
        self.pipe_options[name] = value
        for shard in self.shards():
            setattr(shard.store, name, value)

    async def close(self) -> None:
        """Close every shard."""
        for shard in self.shards():
            await shard.close()


class SingleRouter(Router):
    """One Redis holds everything."""

    def __init__(self, url: str, pipe_options: dict[str, Any]) -> None:
        super().__init__(pipe_options)
        self.one = Shard("redis", url, pipe_options)

    def shard(self, room_code: str) -> Shard:
        """The one shard."""
        return self.one

    def shard_of_key(self, key: str) -> Shard:
        """The one shard."""
        return self.one

    def primaries(self) -> list[Shard]:
        """The one shard."""
        return [self.one]


class ClusterRouter(Router):
    """A Redis Cluster's primaries, by slot."""

    cluster = True

    def __init__(self, node_urls: list[str], pipe_options: dict[str, Any]) -> None:
        super().__init__(pipe_options)
        self._template = node_urls[0]
        kwargs = dict(parse_url(node_urls[0]))
        tls = kwargs.pop("connection_class", None) is SSLConnection
        for name in ("host", "port", "db", "path"):
            kwargs.pop(name, None)
        startup = []
        for url in node_urls:
            node = parse_url(url)
            startup.append(ClusterNode(str(node["host"]), int(node["port"])))
        # the cluster client is our map of the slots (redis-py's NodesManager reads and
        # checks CLUSTER SLOTS); commands go to the shards' own connections
        options: dict[str, Any] = {
            "socket_connect_timeout": 1,
            "socket_timeout": 2,
            **CLIENT_INFO,
            **kwargs,
        }
        self.client = RedisCluster(startup_nodes=startup, ssl=tls, **options)
        self._shards: dict[str, Shard] = {}
        self._by_slot: list[Shard | None] = [None] * 16384
        self._refreshing: asyncio.Task[None] | None = None
        self._last_refresh = 0.0
        #: called after each read of the slot map that moved some slots to another primary
        self.moved_hooks: list[Callable[[], Awaitable[None] | None]] = []

    def shard_at(self, name: str) -> Shard:
        """The shard of the node ``host:port`` (made now if new)."""
        shard = self._shards.get(name)
        if shard is None:
            host, _, port = name.rpartition(":")
            parts = urlsplit(self._template)
            userinfo = parts.netloc.rpartition("@")[0]
            netloc = f"{userinfo}@{host}:{port}" if userinfo else f"{host}:{port}"
            url = urlunsplit((parts.scheme, netloc, "", parts.query, ""))
            shard = self._shards[name] = Shard(name, url, self.pipe_options)
        return shard

    def shard(self, room_code: str) -> Shard:
        """The primary of the room's slot (the slot of its hash tag)."""
        shard = self._by_slot[key_slot(room_code.encode())]
        if shard is None:
            raise NotSent(f"no primary is known for room {room_code}")
        return shard

    def shard_of_key(self, key: str) -> Shard:
        """The primary of the key's slot."""
        shard = self._by_slot[key_slot(key.encode())]
        if shard is None:
            raise NotSent(f"no primary is known for {key}")
        return shard

    def primaries(self) -> list[Shard]:
        """The primaries of the slot map."""
        seen: dict[str, Shard] = {}
        for shard in self._by_slot:
            if shard is not None:
                seen.setdefault(shard.name, shard)
        return list(seen.values())

    def shards(self) -> list[Shard]:
        """Every shard made so far."""
        return list(self._shards.values())

    async def start(self) -> None:
        """Read the slot map; ``ConnectionError`` when no node answers."""
        try:
            await self.client.initialize()
        except Exception as exc:
            raise RedisConnectionError(f"Redis Cluster cannot be reached: {exc}") from exc
        self._map()

    def _map(self) -> list[int]:
        """Take the client's slot map; the slots whose primary changed."""
        changed = []
        cache = self.client.nodes_manager.slots_cache
        for slot in range(16384):
            nodes = cache.get(slot)
            shard = self.shard_at(nodes[0].name) if nodes else None
            if shard is not self._by_slot[slot]:
                self._by_slot[slot] = shard
                changed.append(slot)
        return changed

    async def refresh(self) -> None:
        """Read the slot map again (one read at a time, at most ten a second); raises
        ``ConnectionError`` when no node answers."""
        if self._refreshing is None:
            self._refreshing = asyncio.create_task(self._refresh())
        await asyncio.shield(self._refreshing)

    async def _refresh(self) -> None:
        try:
            pause = self._last_refresh + 0.1 - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            try:
                await self.client.nodes_manager.initialize()
            except Exception as exc:
                raise RedisConnectionError(f"Redis Cluster cannot be reached: {exc}") from exc
        finally:
            self._last_refresh = time.monotonic()
            self._refreshing = None
        changed = self._map()
        if changed:
            logger.info(
                "redis cluster slots moved: %d slots, primaries %s",
                len(changed),
                " ".join(sorted(s.name for s in self.primaries())),
            )
            for hook in list(self.moved_hooks):
                try:
                    result = hook()
                    if result is not None:
                        await result
                except Exception:
                    logger.exception("a slot map hook failed")

    async def run(
        self, where: str, command: Callable[[aioredis.Redis], Awaitable[T]], *, key: bool = False
    ) -> T:
        """``command`` run on the shard of room ``where`` (of the key ``where`` with ``key``).
        When the cluster answers that the slot moved, or that it cannot run it now
        (nothing was run), the slot map is read again and ``command`` run again where the slot
        is then (a few times). A connection failure is not retried: ``command`` may have run."""
        for attempt in range(10):
            try:
                shard = self.shard_of_key(where) if key else self.shard(where)
                return await command(shard.redis)
            except ResponseError as exc:
                if not not_run(exc) or attempt == 9:
                    raise
                moved = redirection(exc)
                if moved is None or moved[0] == "ASK":
                    # the cluster is changing (a slot migrating: its keys move one by one,
                    # a failover): wait for it rather than follow each key
                    await asyncio.sleep(min(0.05 * 2**attempt, 0.5))
                await self.refresh()
        raise AssertionError("unreachable")

    def changed(self) -> None:
        """Read the slot map again in the background (errors: the next call sees them)."""
        if self._refreshing is None:
            task = asyncio.ensure_future(self.refresh())
            task.add_done_callback(_quiet)

    async def close(self) -> None:
        """Close the shards and the cluster client."""
        if self._refreshing is not None:
            self._refreshing.cancel()
        await super().close()
        with contextlib.suppress(Exception):
            await self.client.aclose()


def make_router(url: str, pipe_options: dict[str, Any]) -> Router:
    """The router of ``url``: a cluster's for ``redis+cluster://``, else one Redis's."""
    if urlsplit(url).scheme in CLUSTER_SCHEMES:
        return ClusterRouter(cluster_node_urls(url), pipe_options)
    return SingleRouter(url, pipe_options)


async def open_router(router: Router, url: str) -> Router:
    """Start ``router``; one Redis that turns out to be a node of a cluster (given as
    ``redis://``) is replaced by the cluster's router, which is returned."""
    if isinstance(router, SingleRouter):
        info: dict[str, Any] = {}
        with contextlib.suppress(ResponseError):  # INFO may be refused (a proxy)
            info = await router.one.redis.info("cluster")
        if not int(info.get("cluster_enabled", 0)):
            await router.one.redis.ping()
            return router
        await router.close()
        router = ClusterRouter([url], router.pipe_options)
    await router.start()
    return router


def _quiet(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()  # retrieved: the failure is seen by whoever calls next
