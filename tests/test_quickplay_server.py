"""Quick play through real servers: strangers who seek are seated in one room and race on a
sealed deal the solver proved winnable — on one worker, and on two workers sharing a Redis
or a Redis Cluster; a deal is shared by races at once but never dealt to a player twice;
rated pools show the ratings; a seeker who waits is offered a bot, a ghost or a smaller
room; a seeker who goes away leaves the pool; bad input gets its own error and leaves no
seek behind."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import until, until_server_clock
from server_fixtures import ServerHandle, StartServer

from clients.client import RaceClient, RequestError
from engine import DealCode
from engine.solver import solve
from protocol import (
    Ack,
    Joined,
    PoolCounts,
    Progress,
    RaceRecorded,
    RaceStarting,
    SeatEvent,
    Seeking,
    SeekOffer,
)
from server.config import now_ms
from server.quickplay.pairing import POOLS

SEAT_TIMEOUT = 90.0  # the first seat waits for the solver's process to prove a deal


async def seated(client: RaceClient) -> Joined:
    """The seat a seek was given."""
    joined = await client.next_event("joined", timeout=SEAT_TIMEOUT)
    assert isinstance(joined, Joined) and joined.seat is not None
    return joined


async def started(client: RaceClient) -> RaceStarting:
    event = await client.next_event("race_starting", timeout=10)
    assert isinstance(event, RaceStarting)
    return event


async def counts(server: ServerHandle) -> dict[str, int]:
    return await server.app.store.pools.counts([p.id for p in POOLS], now_ms())


async def no_seekers(*servers: ServerHandle, within: float = 10.0) -> None:
    """Wait until no pool has a seeker (as each server's store counts them)."""
    for server in servers:

        async def empty(server: ServerHandle = server) -> bool:
            return not any((await counts(server)).values())

        await until(empty, within)


async def deal_of(server: ServerHandle, joined: Joined) -> str:
    return await server.deal(joined.room)


async def begin(started_event: RaceStarting) -> None:
    """Wait for the countdown's end (moves count from then)."""
    await until_server_clock(started_event.start_at, started_event.now)


@pytest.mark.parametrize("kind", ["redis", "cluster"])
async def test_two_strangers_on_two_workers_race_each_other_on_a_proven_sealed_deal(
    start_server: StartServer, kind: str
) -> None:
    one, two = await start_server(kind), await start_server(kind)
    ann, bob = await one.client(), await two.client()
    assert ann.welcome.worker != bob.welcome.worker
    seeking = await ann.seek("klondike", 2, name="Ann")
    assert (seeking.pool, seeking.rated, seeking.rating) == ("klondike:2:0:casual", False, None)
    await bob.seek("klondike", 2, name="Bob")
    ann_seat, bob_seat = await seated(ann), await seated(bob)
    assert ann_seat.room == bob_seat.room and {ann_seat.seat, bob_seat.seat} == {1, 2}
    assert ann_seat.snapshot is not None and not ann_seat.snapshot.options.rated
    assert ann_seat.snapshot.deal is None  # fair play: a racer is not told the deal
    first = await started(ann)
    assert (await started(bob)).race == first.race == 1
    assert sorted(first.seats) == [1, 2] and first.deal is None
    deal = await deal_of(one, ann_seat)
    assert DealCode.parse(deal).sealed and DealCode.parse(deal).game_name == "klondike"
    assert solve(deal, nodes=100_000).verdict == "winnable"
    await begin(first)
    assert isinstance(await bob.move("s"), Ack)
    moved = await ann.next_event("progress")
    assert isinstance(moved, Progress) and moved.seat == bob_seat.seat
    await no_seekers(one, two)


async def test_a_deal_starts_races_at_once_but_never_reaches_a_player_twice(
    start_server: StartServer,
) -> None:
    server = await start_server()
    ann, bob, cid, dan = [await server.client() for _ in range(4)]
    await ann.seek("klondike-3", 2)
    await bob.seek("klondike-3", 2)
    first = await seated(ann)
    await seated(bob)
    await cid.seek("klondike-3", 2)
    await dan.seek("klondike-3", 2)
    second = await seated(cid)
    await seated(dan)
    assert first.room != second.room
    shared = await deal_of(server, first)
    assert await deal_of(server, second) == shared  # one deal, two races
    for client in (ann, bob, cid, dan):
        await started(client)
        await client.leave()
    # ann meets cid: both have had the shared deal, so theirs is a new one
    await ann.seek("klondike-3", 2)
    await cid.seek("klondike-3", 2)
    again = await seated(ann)
    assert (await seated(cid)).room == again.room
    assert await deal_of(server, again) != shared


async def test_a_rated_pool_seats_identified_players_with_their_ratings(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await start_server("memory", records_url=f"sqlite:///{tmp_path / 'r.db'}")
    ann, bob = await server.client(), await server.client()
    await ann.new_player("Ann")
    await bob.new_player("Bob")
    seeking = await ann.seek("klondike-3", 2, 300)  # rated by default: an identity, a limit
    assert (seeking.rated, seeking.rating, seeking.provisional) == (True, 1500, True)
    await bob.seek("klondike-3", 2, 300)
    joined = await seated(ann)
    await seated(bob)
    assert joined.snapshot is not None and joined.snapshot.options.rated
    assert joined.snapshot.options.time_limit == 300
    assert [(s.name, s.rating, s.provisional) for s in joined.snapshot.seats] == [
        ("Ann", 1500, True),
        ("Bob", 1500, True),
    ]
    begun = await started(ann)
    await started(bob)
    await begin(begun)
    assert isinstance(await ann.move("s"), Ack)
    await ann.resign()
    await bob.resign()  # fewer moves: Bob is ahead
    told = [await c.next_event("race_recorded", timeout=15) for c in (ann, bob)]
    ratings = told[0].ratings if isinstance(told[0], RaceRecorded) else None
    assert ratings is not None and [r.change > 0 for r in ratings] == [False, True]
    # a seat taken now shows the new rating: the room's own seats were told
    snap = await server.app.store.rooms.snapshot(joined.room.replace("-", ""))
    assert snap is not None
    assert [s.rating for s in snap.room.seats] == [r.rating for r in ratings]


async def test_a_seeker_who_waits_is_offered_a_smaller_room_then_a_bot(
    start_server: StartServer,
) -> None:
    server = await start_server()
    ann = await server.client()
    seeking = await ann.seek("klondike", 4, 600, wait=5)
    assert seeking.offer_at - seeking.since == 5000
    offer = await ann.next_event("seek_offer", timeout=10)
    assert isinstance(offer, SeekOffer) and offer.offers == ["bot", "smaller"]
    smaller = await ann.take_offer("smaller")
    assert isinstance(smaller, Seeking) and smaller.pool == "klondike:2:600:casual"
    assert smaller.since == seeking.since  # the wait so far is kept
    with pytest.raises(RequestError) as info:
        await ann.take_offer("smaller")
    assert info.value.code == "not_offered"
    joined = await ann.take_offer("bot")  # still offered, in the smaller pool too
    assert isinstance(joined, Joined) and joined.snapshot is not None
    robot = await ann.next_event("seat")
    assert isinstance(robot, SeatEvent) and (robot.seat, robot.name) == (2, "Bot (greedy)")
    assert not joined.snapshot.options.rated and joined.snapshot.options.time_limit == 600
    begun = await started(ann)
    assert sorted(begun.seats) == [1, 2]

    async def bot_moved() -> None:
        while True:
            event = await ann.next_event("progress", timeout=10)
            if isinstance(event, Progress) and event.seat == 2:
                return

    await bot_moved()
    await no_seekers(server)


async def test_a_ghost_of_a_pool_race_is_offered_on_a_deal_new_to_the_seeker(
    start_server: StartServer,
) -> None:
    server = await start_server()
    ann, bob = await server.client(), await server.client()
    await ann.seek("klondike", 2, name="Ann")
    await bob.seek("klondike", 2, name="Bob")
    joined = await seated(ann)
    await seated(bob)
    line = solve(await deal_of(server, joined), nodes=200_000).solution
    assert line is not None
    begun = await started(ann)
    await bob.resign()
    await begin(begun)
    for move in line:
        assert isinstance(await ann.move(move), Ack)
    await ann.next_event("race_ended", timeout=10)
    cid = await server.client()
    await cid.seek("klondike", 2, wait=5)
    offer = await cid.next_event("seek_offer", timeout=10)
    assert isinstance(offer, SeekOffer) and offer.offers == ["bot", "ghost"]
    ghost = await cid.take_offer("ghost")
    assert isinstance(ghost, Joined) and ghost.snapshot is not None
    robot = await cid.next_event("seat")
    assert isinstance(robot, SeatEvent) and robot.name == "Ghost of Ann"
    assert await deal_of(server, ghost) == await deal_of(server, joined)
    await started(cid)
    # Ann has had that deal: she is not offered her own ghost
    await ann.leave()
    await ann.seek("klondike", 2, wait=5)
    offer = await ann.next_event("seek_offer", timeout=10)
    assert isinstance(offer, SeekOffer) and offer.offers == ["bot"]


async def test_a_seeker_who_disconnects_or_enters_a_room_leaves_the_pool(
    start_server: StartServer,
) -> None:
    server = await start_server("redis")
    watcher = await server.client()
    await watcher.watch_pools()
    first = await watcher.next_event("pool_counts")
    assert isinstance(first, PoolCounts) and len(first.pools) == len(POOLS)
    assert all(p.seeking == 0 for p in first.pools)

    async def seeking_now(pool: str, n: int) -> None:
        while True:
            told = await watcher.next_event("pool_counts", timeout=10)
            assert isinstance(told, PoolCounts)
            if {p.pool: p.seeking for p in told.pools}[pool] == n:
                return

    ann = await server.client()
    await ann.seek("klondike-3", 4)
    await seeking_now("klondike-3:4:0:casual", 1)
    await ann.close()
    await seeking_now("klondike-3:4:0:casual", 0)
    bob = await server.client()
    await bob.seek("klondike-3", 4)
    await seeking_now("klondike-3:4:0:casual", 1)
    await bob.create("klondike")  # entering a room ends the seek
    await seeking_now("klondike-3:4:0:casual", 0)


@pytest.mark.parametrize(
    ("seek", "code"),
    [
        ({"game": "chess", "players": 2}, "no_such_pool"),
        ({"game": "klondike", "players": 3}, "no_such_pool"),
        ({"game": "klondike", "players": 2, "time_limit": 120}, "bad_time_limit"),
        ({"game": "klondike", "players": 2, "rated": True}, "rated_needs_time_limit"),
        (
            {"game": "klondike", "players": 2, "time_limit": 300, "rated": True},
            "rated_needs_identity",
        ),
        ({"game": "klondike", "players": 2, "wait": 1}, "invalid_message"),
        ({"game": "klondike"}, "invalid_message"),
    ],
)
async def test_a_bad_seek_gets_its_error_and_leaves_no_seek(
    start_server: StartServer, seek: dict[str, Any], code: str
) -> None:
    server = await start_server()
    guest = await server.client()
    with pytest.raises(RequestError) as info:
        await guest.request({"type": "seek", **seek})
    assert info.value.code == code
    assert not any((await counts(server)).values())


async def test_seeking_twice_or_while_seated_and_acting_on_no_seek_are_refused(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await start_server("memory", records_url=f"sqlite:///{tmp_path / 'r.db'}")
    ann = await server.client()
    made = await ann.new_player("Ann")

    async def refused(code: str, request: Any) -> None:
        with pytest.raises(RequestError) as info:
            await request
        assert info.value.code == code

    await refused("not_seeking", ann.cancel_seek())
    await refused("not_seeking", ann.take_offer("bot"))
    await ann.seek("klondike", 4)
    await refused("already_seeking", ann.seek("klondike", 2))
    await refused("not_offered", ann.take_offer("bot"))  # not waited long enough yet
    # the same identity on another connection: one seek per player
    tab = await server.client()
    assert made.secret is not None
    await tab.identify(made.player, made.secret)
    await refused("already_seeking", tab.seek("easy-harp", 2))
    assert sum((await counts(server)).values()) == 1
    await ann.cancel_seek()
    await refused("not_seeking", ann.cancel_seek())
    assert not any((await counts(server)).values())
    await tab.seek("easy-harp", 2)  # the claim went with the seek
    await tab.cancel_seek()
    room = await ann.create("klondike")
    await refused("already_in_room", ann.seek("klondike", 2))
    assert room.room and not any((await counts(server)).values())


async def test_the_seekers_of_a_killed_worker_leave_the_pool(
    start_server: StartServer, redis_url: str
) -> None:
    """A worker SIGKILLed with seekers queued: its lease runs out and they are dropped, so
    nobody is paired with them after."""
    import os
    import signal

    from server_fixtures import free_port, worker_process

    live = await start_server("redis")
    port = free_port()
    with worker_process("--redis", redis_url, "--rate", "1000", port=port) as doomed:
        url = f"ws://127.0.0.1:{port}"
        queued = [await RaceClient.connect(url) for _ in range(3)]
        for client in queued:
            await client.seek("klondike-3", 4, 600)
        await until(lambda: _seeking(live, "klondike-3:4:600:casual", 3))
        os.kill(doomed.pid, signal.SIGKILL)
        doomed.wait()
        for client in queued:
            await client.close()
    await no_seekers(live, within=15)
    ann, bob = await live.client(), await live.client()
    await ann.seek("klondike-3", 4, 600)
    await bob.seek("klondike-3", 4, 600)
    # two of four: nobody to fill a room with (the dead ones would have made five)
    assert (await counts(live))["klondike-3:4:600:casual"] == 2


async def _seeking(server: ServerHandle, pool: str, n: int) -> bool:
    return (await counts(server))[pool] == n


@pytest.mark.parametrize("kind", ["redis", "cluster"])
async def test_an_identitys_claim_is_renewed_while_it_seeks_and_goes_with_the_seek(
    start_server: StartServer, tmp_path: Path, kind: str
) -> None:
    """The worker renews its seekers' claims in one batch a shard: the claim outlives its
    first lease while the player seeks, and is let go when the seek ends."""
    from server.store.redis.link import RedisLink
    from server.store.redis.pools import RedisPools

    server = await start_server(kind, records_url=f"sqlite:///{tmp_path / 'r.db'}")
    pools = server.app.store.pools
    assert isinstance(pools, RedisPools)
    seekers = []
    for name in ("Ann", "Bob", "Cid"):
        client = await server.client()
        await client.new_player(name)
        await client.seek("easy-harp", 4, 600)
        seekers.append(client)
    ann = seekers[0]
    assert ann.player is not None
    key = pools._claim_key(ann.player.player)

    link = server.app.store.link
    assert isinstance(link, RedisLink)

    async def ttl() -> int:
        return int(await link.run(key, lambda r: r.pttl(key), key=True))

    first = await ttl()
    assert 0 < first <= 4000

    async def renewed() -> bool:  # its time to live went back up
        return await ttl() > first

    await until(renewed, 10)
    assert await pools.claim(ann.player.player, "another/connection", 4000) is not None
    await ann.cancel_seek()
    assert await ttl() == -2  # gone with the seek
