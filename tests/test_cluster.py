"""Redis Cluster (issue 20): rooms on the shard of their slot, events over sharded pub/sub,
and the cluster changing under a race — a slot migrated, a primary killed.

The tests that change the cluster run on a cluster of their own (3 primaries, 3 replicas,
a short node timeout so that a failover takes a few seconds), shared by this module; the
failover test runs last and leaves it healthy again. Two workers race a room: Ann on
worker 1, Bob on worker 2, a spectator on worker 1. Each player keeps trying legal moves;
a move that is not acknowledged (refused as ``storage``, or its connection closed with
1011 because its outcome is unknown) is never counted, and after it the player's board is
read again from the store. At the end every acknowledged move is in the log at its place,
and the spectator saw every event of the room in ``seq`` order with no gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from helpers import until, until_race_starts
from redis.crc import key_slot
from server_fixtures import (
    LocalCluster,
    ServerHandle,
    as_text,
    breakable_cluster,
    get_json,
    port_of,
    store_retry,
)
from websockets.exceptions import ConnectionClosed

from clients.client import RaceClient, RequestError
from engine import Game, new_game, replay
from protocol import Ack, Progress
from server.app import Config, RaceServer, running
from server.codes import normalize_code
from server.store import Store
from server.store.redis import redis_store
from server.store.redis.link import RedisLink

pytestmark = pytest.mark.slow

DEAL = "KL1-1-AAAAAAK"
CONFIG: dict[str, Any] = {
    "port": 0,
    "countdown": 0.05,
    "grace": 5.0,
    "liveness": 2.0,
    "rate": 1000.0,
    "burst": 500,
}


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster these tests may break (:func:`breakable_cluster`)."""
    with breakable_cluster(tmp_path_factory.mktemp("own-cluster")) as cluster:
        yield cluster


@dataclass
class Workers:
    """Two workers on one cluster."""

    apps: list[RaceServer]

    def url(self, i: int) -> str:
        return f"ws://127.0.0.1:{self.apps[i].port}"

    @property
    def store(self) -> Store:
        return self.apps[0].store


@pytest_asyncio.fixture
async def workers(own_cluster: LocalCluster, no_error_logs: Any) -> AsyncIterator[Workers]:
    async with contextlib.AsyncExitStack() as stack:
        apps = []
        for name in ("w1", "w2"):
            store = redis_store(own_cluster.url, worker_id=name, health_interval=0.2)
            app, _ = await stack.enter_async_context(running(store, Config(**CONFIG)))
            apps.append(app)
        yield Workers(apps)


@dataclass
class Racer:
    """A player who keeps trying legal moves. ``acked`` maps each acknowledged move's
    place in the log to the move; after anything but an ``ack`` the board is read again
    from the store (a move whose outcome was unknown may or may not be there)."""

    workers: Workers
    worker: int
    client: RaceClient
    room: str
    seat: int
    seed: int
    game: Game = field(default_factory=lambda: new_game(DEAL))
    acked: dict[int, str] = field(default_factory=dict)
    refused: int = 0
    resumed: int = 0

    async def _reload(self) -> None:
        code = normalize_code(self.room) or ""
        log = await store_retry(self.workers.store.rooms.moves, code, 1, self.seat)
        self.game = replay(DEAL, log)

    async def _resume(self) -> None:
        token, last = self.client.token or "", self.client.last_seq
        deadline = time.monotonic() + 40
        while True:
            try:
                client = await RaceClient.connect(self.workers.url(self.worker))
                await client.resume(self.room, token, last)
                self.client = client
                self.resumed += 1
                return
            except (RequestError, ConnectionError, ConnectionClosed, TimeoutError):
                assert time.monotonic() < deadline, "the seat could not be resumed"
                await asyncio.sleep(0.2)  # the next try's back-off: the cluster is failing over

    async def play(self, count: int, *, pause: float = 0.0, within: float = 60.0) -> None:
        """Make ``count`` acknowledged moves, within ``within`` seconds."""
        rng = random.Random(self.seed + len(self.acked))
        deadline = time.monotonic() + within
        done = 0
        while done < count:
            assert time.monotonic() < deadline, f"only {done} of {count} moves acknowledged"
            moves = [str(m) for m in self.game.legal_moves if str(m) not in ("u", "a")]
            text = rng.choice(moves)
            index = len(self.game.actions)
            try:
                reply = await self.client.move(text)
            except RequestError as exc:
                assert exc.code in ("storage", "replaced"), exc
                self.refused += 1
                await asyncio.sleep(0.1)  # the next try's back-off: the store is failing over
                await self._reload()
                continue
            except (ConnectionClosed, ConnectionError, TimeoutError):
                await self._resume()
                await self._reload()
                continue
            if not isinstance(reply, Ack):
                await self._reload()  # stale: the board moved on elsewhere
                continue
            self.game.push(reply.move)
            self.acked[index] = reply.move
            done += 1
            if pause:
                await asyncio.sleep(pause)  # the scenario: moves spread over the change


async def _race(workers: Workers) -> tuple[Racer, Racer, RaceClient]:
    ann = await RaceClient.connect(workers.url(0))
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    bob = await RaceClient.connect(workers.url(1))
    await bob.join(joined.room, name="Bob")
    spectator = await RaceClient.connect(workers.url(0))
    await spectator.join(joined.room, role="spectator")
    await ann.start()
    await until_race_starts(ann)
    await until_race_starts(bob)
    return (
        Racer(workers, 0, ann, joined.room, 1, 1),
        Racer(workers, 1, bob, joined.room, 2, 2),
        spectator,
    )


async def _check(workers: Workers, racers: list[Racer], spectator: RaceClient) -> None:
    """Every acknowledged move is in the log at its place; the spectator saw the room's
    events in seq order with no gap, and its last progress of each seat is the seat's
    board as stored."""
    code = normalize_code(racers[0].room) or ""
    for racer in racers:
        log = await store_retry(workers.store.rooms.moves, code, 1, racer.seat)
        for index, move in racer.acked.items():
            assert index < len(log) and log[index] == move, (racer.seat, index, move, log)
        game = replay(DEAL, log)  # the log replays: no move twice, none out of place

        def shows_the_log(seat: int = racer.seat, moves: int = game.moves) -> bool:
            shown = [m for m in spectator.history if isinstance(m, Progress) and m.seat == seat]
            return bool(shown) and shown[-1].moves == moves

        await until(shows_the_log, 10)
    seqs = [s for m in spectator.history if (s := getattr(m, "seq", None)) is not None]
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))), seqs


def _slot_of(room: str) -> int:
    return key_slot((normalize_code(room) or "").encode())


async def _node_id(port: int) -> str:
    r = aioredis.Redis(port=port)
    try:
        return as_text(await r.execute_command("CLUSTER", "MYID"))  # type: ignore[no-untyped-call]
    finally:
        await r.aclose()


async def _migrate(cluster: LocalCluster, slot: int, source: int, target: int) -> None:
    """Move ``slot`` from the primary on ``source`` to the one on ``target``, key by key,
    as ``redis-cli --cluster reshard`` does (the slot is migrating meanwhile: ASK)."""
    src, dst = aioredis.Redis(port=source), aioredis.Redis(port=target)
    try:
        src_id, dst_id = await _node_id(source), await _node_id(target)
        await dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)  # type: ignore[no-untyped-call]
        await src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)  # type: ignore[no-untyped-call]
        while keys := await src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 2):  # type: ignore[no-untyped-call]
            await src.execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *keys)  # type: ignore[no-untyped-call]
            await asyncio.sleep(0.05)  # the scenario: the race goes on between the keys
        for node in (dst, src):
            await node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)  # type: ignore[no-untyped-call]
    finally:
        await src.aclose()
        await dst.aclose()


async def test_a_migrated_slot_takes_the_race_along(
    workers: Workers, own_cluster: LocalCluster
) -> None:
    """The room's slot is migrated to another primary mid-race: moves follow (ASK while it
    moves, MOVED after), the subscriptions follow (Redis drops them on the old primary),
    and nobody misses an event."""
    ann, bob, spectator = await _race(workers)
    await asyncio.gather(ann.play(10), bob.play(10))
    slot = _slot_of(ann.room)
    source = own_cluster.port_of_slot(slot)
    target = next(p for p in own_cluster.primary_ports() if p != source)
    playing = asyncio.gather(ann.play(20, pause=0.02), bob.play(20, pause=0.02))
    await _migrate(own_cluster, slot, source, target)
    await playing
    assert own_cluster.port_of_slot(slot) == target
    await asyncio.gather(ann.play(5), bob.play(5))
    await _check(workers, [ann, bob], spectator)


async def test_a_killed_primary_loses_no_acknowledged_move(
    workers: Workers, own_cluster: LocalCluster
) -> None:
    """SIGKILL of the primary holding the racing room: a replica takes over, the killed
    node comes back as its replica, the players carry on, and with ``replica`` durability
    every acknowledged move is still there."""
    link = workers.store.link
    assert isinstance(link, RedisLink) and link.durability == "replica"  # a cluster's default
    ann, bob, spectator = await _race(workers)
    await asyncio.gather(ann.play(10), bob.play(10))
    slot = _slot_of(ann.room)
    playing = asyncio.gather(ann.play(30, pause=0.05), bob.play(30, pause=0.05))
    await until(lambda: len(ann.acked) > 12 and len(bob.acked) > 12)
    # the primary dies mid-race (30 moves with 0.05 s pauses each are not over yet); the
    # players may notice (a refusal, a resume) or not (the worker's retry outlasts the
    # takeover): either way, nothing acknowledged may be lost
    assert not playing.done()
    await own_cluster.fail_over(slot)
    await asyncio.wait_for(playing, 90)
    await asyncio.gather(ann.play(5), bob.play(5))
    await _check(workers, [ann, bob], spectator)
    await asyncio.to_thread(own_cluster.wait_healthy)


async def test_the_live_directory_follows_a_failover(
    workers: Workers, own_cluster: LocalCluster
) -> None:
    """SIGKILL of the primary holding the live directory's keys (tag ``{live}``): once a
    replica took over, a room opened on one worker is listed on the other again (its entry
    written on the new primary, told over the channel the listener subscribed to again)."""
    slot = key_slot(b"live")
    hosts: list[RaceClient] = []

    async def open_room() -> str:
        host = await RaceClient.connect(workers.url(0))
        hosts.append(host)
        return (await host.create("klondike")).room

    async def listed(room: str) -> bool:
        _, body = await get_json(port_of(workers.apps[1]), "/api/live?sort=newest&limit=50")
        return any(r["room"] == room for r in body["rooms"])

    before = await open_room()
    await until(lambda: listed(before), 10)
    await own_cluster.fail_over(slot)  # back as the new primary's replica: writes allowed again
    await asyncio.to_thread(own_cluster.wait_healthy)
    after = await open_room()
    await until(lambda: listed(after), 20)
    assert await listed(before)
    for host in hosts:
        await host.close()


async def test_a_dropped_shard_subscription_is_filled_by_seq(
    start_server: Any, redis_cluster: LocalCluster, no_error_logs: Any
) -> None:
    """The worker's sharded pub/sub connections are killed by Redis mid-race: it subscribes
    again and fills the gap from the stored events, so a spectator misses nothing."""
    server: ServerHandle = await start_server("cluster", progress_interval=0)
    ann = await server.client()
    joined = await ann.create("klondike")
    bob = await server.client()
    await bob.join(joined.room)
    watcher = await server.client()
    await watcher.join(joined.room, role="spectator")
    await ann.start()
    await until_race_starts(bob)
    first = watcher.last_seq or 0
    for _ in range(3):
        assert isinstance(await bob.move("s"), Ack)
    port = redis_cluster.port_of_slot(_slot_of(joined.room))
    r = aioredis.Redis(port=port)
    try:
        killed = await r.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # type: ignore[no-untyped-call]
        assert killed >= 1
        for _ in range(5):  # while the worker is not subscribed: the gap
            assert isinstance(await bob.move("s"), Ack)
        channel = f"sd:{{{normalize_code(joined.room)}}}:ch"

        async def subscribed_again() -> bool:
            _, count = await r.execute_command("PUBSUB", "SHARDNUMSUB", channel)  # type: ignore[no-untyped-call]
            return bool(count)

        await until(subscribed_again)
        for _ in range(2):
            assert isinstance(await bob.move("s"), Ack)
    finally:
        await r.aclose()
    seqs: list[int] = []
    while len(seqs) < 10:
        event = await watcher.next_event("progress", timeout=10)
        seqs.append(event.seq)  # type: ignore[union-attr]
    assert seqs == list(range(first + 1, first + 11))


async def test_rooms_spread_over_the_shards_and_keys_share_the_slot(
    start_server: Any, redis_cluster: LocalCluster
) -> None:
    """Rooms made at once by a fresh worker land on every primary, each with all its keys
    (and its channel) in its slot; a worker subscribes only to the rooms it serves."""
    server: ServerHandle = await start_server("cluster")

    async def create() -> str:
        client = await server.client()
        return normalize_code((await client.create("klondike")).room) or ""

    codes = await asyncio.gather(*(create() for _ in range(12)))
    ports = {redis_cluster.port_of_slot(key_slot(c.encode())) for c in codes}
    assert len(ports) >= 2  # 12 random codes on one shard of three: about 1 in 59,000
    for code in codes[:3]:
        port = redis_cluster.port_of_slot(key_slot(code.encode()))
        r = aioredis.Redis(port=port)
        try:
            keys = {as_text(k) for k in await r.keys(f"sd:{{{code}}}:*")}
            assert f"sd:{{{code}}}:room" in keys
            channels = await r.execute_command("PUBSUB", "SHARDCHANNELS", f"sd:{{{code}}}:*")  # type: ignore[no-untyped-call]
            assert [c.decode() for c in channels] == [f"sd:{{{code}}}:ch"]
        finally:
            await r.aclose()
    # a room nobody on this worker serves is not subscribed anywhere
    r = aioredis.Redis(port=redis_cluster.primary_ports()[0])
    try:
        none = await r.execute_command("PUBSUB", "SHARDCHANNELS", "sd:{NOROOM}:*")  # type: ignore[no-untyped-call]
        assert none == []
    finally:
        await r.aclose()


def test_cluster_urls_are_checked() -> None:
    from server.store.redis.shards import check_redis_url, cluster_node_urls

    assert cluster_node_urls("redis+cluster://u:p@a:7000,b:7001") == [
        "redis://u:p@a:7000",
        "redis://u:p@b:7001",
    ]
    assert cluster_node_urls("rediss+cluster://a:7000")[0].startswith("rediss://")
    for bad in ("redis+cluster://", "redis+cluster://a", "redis+cluster://a:1/3"):
        with pytest.raises(ValueError):
            check_redis_url(bad)


async def test_a_transaction_refused_for_want_of_replicas_is_not_run(redis_url: str) -> None:
    """A MULTI/EXEC refused with NOREPLICAS (a primary whose replica is away) is told apart
    from a real error however long its first command: redis-py puts up to 100 characters
    of the command before the reply (it was an ERROR log line of a tournament's presence
    marks during a failover)."""
    from redis.exceptions import ResponseError

    from server.store.redis.shards import not_run

    r = aioredis.Redis.from_url(redis_url)
    try:
        await r.config_set("min-replicas-to-write", 1)
        for fields in (1, 8):  # a short command, and one past the text's 80th character
            with pytest.raises(ResponseError) as refused:
                async with r.pipeline(transaction=True) as pipe:
                    pipe.hset("refused", mapping={f"player-{n:012d}": n for n in range(fields)})
                    pipe.expire("refused", 60)
                    await pipe.execute()
            assert not_run(refused.value), refused.value
        await r.config_set("min-replicas-to-write", 0)
        with pytest.raises(ResponseError) as wrong:
            async with r.pipeline(transaction=True) as pipe:
                pipe.set("refused-kind", "x")
                pipe.hset("refused-kind", mapping={f"player-{n:012d}": n for n in range(8)})
                await pipe.execute()
        assert not not_run(wrong.value), wrong.value  # WRONGTYPE: it ran, and failed
        assert await r.exists("refused") == 0
    finally:
        await r.config_set("min-replicas-to-write", 0)
        await r.delete("refused", "refused-kind")
        await r.aclose()
