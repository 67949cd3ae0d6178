"""Watching (issue 17) end to end, on real servers: the live directory the same on two
workers sharing a Redis (one, or a Redis Cluster), private rooms never listed, the featured
race moving on when its race ends, a spectator delay that holds for everything a spectator
gets, finishes sent to a racer once they finish, several boards at once, reactions,
spectator counts told at most once a second, and a spectator who stops reading dropped
while the room goes on."""

from __future__ import annotations

import asyncio
import itertools
import signal
import socket
from functools import partial
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from helpers import until, until_server_clock
from redis.asyncio.cluster import RedisCluster
from server_fixtures import (
    TEST_CONFIG,
    WINS,
    LocalCluster,
    ServerHandle,
    StartServer,
    get_json,
    own_redis,
)
from watch_helpers import LoopLag, Timeline, race_room
from websockets.asyncio.client import connect

from clients.client import RequestError
from protocol import (
    PROTOCOL_VERSION,
    Ack,
    Board,
    LiveRooms,
    PlayerFinished,
    Progress,
    RaceEnded,
    RaceStarting,
    Reactions,
    Spectators,
)
from server.app import Config, running
from server.store.redis import redis_store

# --------------------------------------------------------------------- the live directory


async def listed(
    server: ServerHandle, sort: str = "closest", game: str = "", among: set[str] | None = None
) -> list[str]:
    """The room codes ``GET /api/live`` lists, in order (only those of ``among``: rooms of
    earlier tests may still be listed on a shared Redis)."""
    query = f"?sort={sort}" + (f"&game={game}" if game else "")
    status, body = await get_json(server.port, "/api/live" + query)
    assert status == 200
    return [r["room"] for r in body["rooms"] if among is None or r["room"] in among]


@pytest_asyncio.fixture(params=["redis", "cluster"])
async def two_workers(
    start_server: StartServer, request: pytest.FixtureRequest
) -> list[ServerHandle]:
    """Two workers on one Redis (or on the local Redis Cluster: the directory's keys on
    one shard, its channel reaching every node) whose directory holds nothing of earlier
    tests."""
    kind: str = request.param
    if kind == "redis":
        redis: Any = aioredis.from_url(request.getfixturevalue("redis_url"))
    else:
        cluster: LocalCluster = request.getfixturevalue("redis_cluster")
        redis = RedisCluster(host="127.0.0.1", port=cluster.ports[0])
    await redis.delete("sd:{live}:rooms", "sd:{live}:seqs", "sd:{live}:tv")
    await redis.aclose()
    return [await start_server(kind), await start_server(kind)]


async def test_the_directory_is_the_same_on_two_workers(two_workers: list[ServerHandle]) -> None:
    w0, w1 = two_workers
    waiting, *_ = await race_room([w0], players=1, start=False)
    close, _, _ = await race_room([w0, w1], watchers=[w0, w1])
    apart, (leader, _), _ = await race_room([w1, w0])
    assert isinstance(await leader.move("t3-f"), Ack)  # an ace home: 1/52 ahead
    secret, *_ = await race_room([w1], watchers=[w1], private=True)
    closed, *_ = await race_room([w0], spectators=False)

    expected = {
        "closest": [close, apart, waiting],  # gap 0, gap 1/52, waiting to start
        "watched": [close, apart, waiting],  # 2 spectators, then the race before the room
        "newest": [apart, close, waiting],  # latest started first
    }
    for sort, order in expected.items():
        for w in (w0, w1):
            await until(partial(_listed_as, w, sort, order), 5)

    # the whole entries agree, not only the order (once the second spectator is told: the
    # count is told at most once a second; and once the leader's progress is: a tie of gaps
    # would sort the rooms the same way, so the orders above do not wait for it)
    async def both() -> tuple[Any, Any] | None:
        _, one = await get_json(w0.port, "/api/live?sort=newest")
        _, two = await get_json(w1.port, "/api/live?sort=newest")
        rooms = one["rooms"]
        told = len(rooms) == 3 and rooms[1]["spectators"] == 2 and (rooms[0]["gap"] or 0) > 0
        return (one, two) if told and rooms == two["rooms"] else None

    one, two = await until(both, 4)
    assert one["total"] == two["total"] == 3
    (apart_entry, close_entry, waiting_entry) = one["rooms"]
    assert apart_entry["gap"] == round(1 / 52, 4) and close_entry["gap"] == 0
    assert close_entry["spectators"] == 2 and waiting_entry["phase"] == "lobby"
    assert [p["on_foundations"] for p in apart_entry["players"]] == [1, 0]
    assert secret not in str(one) and closed not in str(one)
    assert (await listed(w1, "closest", "easy-harp")) == []

    # a subscriber on one worker is told of a race started on the other
    watcher = await w1.client()
    feed = Timeline(watcher)
    await watcher.live(sort="newest", limit=10)
    first = (await feed.wait(LiveRooms))[1]
    assert [r.room for r in first.rooms] == expected["newest"]
    late, *_ = await race_room([w0], players=2)
    updates = await until(
        lambda: [m for _, m in feed.of(LiveRooms) if m.rooms and m.rooms[0].room == late]
    )
    update = updates[0]
    assert [r.room for r in update.rooms] == [late, *expected["newest"]]


async def _listed_as(server: ServerHandle, sort: str, order: list[str]) -> bool:
    return await listed(server, sort) == order


async def test_bad_directory_queries_are_refused(server: ServerHandle) -> None:
    for query in ("sort=best", "game=chess", "limit=0", "limit=51", "limit=ten"):
        status, body = await get_json(server.port, f"/api/live?{query}")
        assert status == 400 and body["error"].startswith("bad_")
    client = await server.client()
    with pytest.raises(RequestError) as info:
        await client.request({"type": "live", "sort": "best"})
    assert info.value.code == "invalid_message"


async def test_private_rooms_are_never_listed(server: ServerHandle) -> None:
    watcher = await server.client()
    feed = Timeline(watcher)
    await watcher.live(limit=50)
    secret, (host, _), _ = await race_room([server], watchers=[server], private=True)
    closed, *_ = await race_room([server], spectators=False)
    public, *_ = await race_room([server], watchers=[server])
    await until(lambda: any(public in str(m) for _, m in feed.of(LiveRooms)))
    # the scenario: the next writes and pushes, had there been any (a window: what is
    # looked for must not come)
    await asyncio.sleep(0.6)
    assert isinstance(await host.move("t3-f"), Ack)
    await asyncio.sleep(0.8)  # the same after a move in the private room
    for _, message in feed.of(LiveRooms):
        assert secret not in str(message) and closed not in str(message)
    assert (await listed(server, among={secret, closed, public})) == [public]


# --------------------------------------------------------------------- the featured race


async def featured(server: ServerHandle, game: str = "klondike") -> str | None:
    _, body = await get_json(server.port, "/api/live")
    found: str | None = next(f["room"] for f in body["featured"] if f["game"] == game)
    return found


async def test_the_featured_race_moves_on_when_it_ends(two_workers: list[ServerHandle]) -> None:
    w0, w1 = two_workers
    first, (ann, bob), _ = await race_room([w0], watchers=[w0, w1, w1])
    for w in (w0, w1):  # its watchers counted before the other starts (counts are told at
        # most once a second: a pick made meanwhile could take the other, which then stays)
        await until(partial(_watched, w, first, 3))
    second, (cat, dan), _ = await race_room([w1], watchers=[w0])
    # the featured race stays while it runs, even when another becomes closer
    assert isinstance(await ann.move("t3-f"), Ack)
    await asyncio.sleep(1.0)  # the scenario: four picks (every 0.25 s) that must keep it
    assert await featured(w0) == first and await featured(w1) == first
    watcher = await w1.client()
    feed = Timeline(watcher)
    await watcher.live(limit=5)
    # it ends: the next one, by itself, on both workers, told to subscribers
    await ann.resign()
    await bob.resign()
    for w in (w0, w1):
        await until(partial(_featuring, w, second))
    await until(
        lambda: any(
            f.game == "klondike" and f.room == second
            for _, m in feed.of(LiveRooms)
            for f in m.featured
        )
    )
    assert await featured(w0, "easy-harp") is None
    # and when that one ends too, there is none
    await cat.resign()
    await dan.resign()
    for w in (w0, w1):
        await until(partial(_featuring, w, None))


async def _watched(server: ServerHandle, room: str, spectators: int) -> bool:
    _, body = await get_json(server.port, "/api/live?sort=newest")
    return any(r["room"] == room and r["spectators"] == spectators for r in body["rooms"])


async def _featuring(server: ServerHandle, room: str | None) -> bool:
    return await featured(server) == room


# --------------------------------------------------------------------- the spectator delay


async def test_a_delayed_spectator_gets_nothing_early(server: ServerHandle) -> None:
    """Every progress, finish, result and board reaches a spectator of a room with a 1 s
    delay at least 1 s after the players had it; the players get them at once."""
    code, line = WINS["klondike-3"]
    _, (ann, bob), (watcher,) = await race_room(
        [server],
        watchers=[server],
        game="klondike-3",
        code=code,
        spectator_delay=1,
        start=False,
    )
    seen = {name: Timeline(c) for name, c in (("ann", ann), ("bob", bob), ("spec", watcher))}
    await ann.start()
    started = (await seen["ann"].wait(RaceStarting))[1]
    await until_server_clock(started.start_at, started.now)
    loop = asyncio.get_running_loop()
    acked: dict[int, float] = {}  # moves on ann's board → when acknowledged
    half = line.split()[: len(line.split()) // 2]
    for text in half:
        assert isinstance(await ann.move(text), Ack)
        assert ann.view is not None
        acked.setdefault(ann.view["moves"], loop.time())
    await seen["spec"].wait(RaceStarting, timeout=3)
    await watcher.follow([1, 2])
    for text in line.split()[len(half) :]:
        assert isinstance(await ann.move(text), Ack)
        assert ann.view is not None
        acked.setdefault(ann.view["moves"], loop.time())
        await asyncio.sleep(0.005)  # the scenario: moves spread over the delay
    await bob.resign()
    await seen["spec"].wait(RaceEnded, timeout=5)

    players_got: dict[int, float] = {}
    for name in ("ann", "bob"):
        for t, m in seen[name].items:
            seq = getattr(m, "seq", None)
            if seq is not None:
                players_got[seq] = min(t, players_got.get(seq, t))
    # the times are taken as the clients read the frames, on the loop the server runs on:
    # a busy loop reads some late, so a little is allowed (no delay at all would be ~0)
    checked = 0
    for t, m in seen["spec"].items:
        seq = getattr(m, "seq", None)
        if seq is not None and seq in players_got and m.type != "spectators":
            assert t - players_got[seq] >= 0.9, (m.type, t - players_got[seq])
            checked += 1
        if isinstance(m, Board) and m.seat == 1 and m.view["moves"] in acked:
            assert t - acked[m.view["moves"]] >= 0.9, ("board", t - acked[m.view["moves"]])
            checked += 1
    kinds = {m.type for _, m in seen["spec"].items}
    assert {"progress", "player_finished", "race_ended", "board"} <= kinds and checked > 10
    # the players are not delayed: ann's win reached bob at once
    win = next(m.seq for _, m in seen["ann"].items if isinstance(m, Progress) and m.status == "won")
    assert players_got[win] - max(acked.values()) < 0.5


async def test_a_board_waits_for_the_progress_of_a_slowly_stored_move(
    tmp_path: Path, no_error_logs: Any
) -> None:
    """A move's time is taken before it is stored, its event after. With Redis paused for
    1.2 s under a move, the move is in the log with a time more than the delay ago by the
    time it is acknowledged: the board showing it still comes a delay after the ack (it
    follows the released progress), never ahead of the player list."""
    with own_redis(tmp_path) as (redis_proc, url):
        store = redis_store(url, worker_id="slow")
        async with running(store, Config(**TEST_CONFIG)) as (app, _):
            server = ServerHandle(app, "redis")
            try:
                _, (ann,), (watcher,) = await race_room(
                    [server], players=1, watchers=[server], spectator_delay=1
                )
                loop = asyncio.get_running_loop()
                seen = Timeline(watcher)
                acked: dict[int, float] = {}
                assert isinstance(await ann.move("s"), Ack) and ann.view is not None
                acked[ann.view["moves"]] = loop.time()
                await seen.wait(Progress, timeout=3, moves=ann.view["moves"])  # released
                redis_proc.send_signal(signal.SIGSTOP)
                try:
                    slow = asyncio.create_task(ann.move("s"))
                    await asyncio.sleep(1.2)  # the scenario: Redis stalls for longer than the delay
                finally:
                    redis_proc.send_signal(signal.SIGCONT)
                assert isinstance(await slow, Ack) and ann.view is not None
                acked[ann.view["moves"]] = loop.time()
                await watcher.follow(1)
                await seen.wait(Board, timeout=3)
                await seen.wait(Progress, timeout=3, moves=ann.view["moves"])
                last = ann.view["moves"]  # the board of the released progress
                await until(lambda: any(b.view["moves"] == last for _, b in seen.of(Board)))
                boards = [(t, b.view["moves"]) for t, b in seen.of(Board)]
                assert [moves for _, moves in boards] == sorted(acked)
                for t, moves in boards:
                    assert t - acked[moves] >= 0.9, (moves, t - acked[moves])
            finally:
                await server.close_clients()


async def test_a_spectator_joining_mid_race_sees_the_room_of_the_delay_ago(
    start_server: StartServer,
) -> None:
    """On a worker that had not seen the room: the joined snapshot is the room 2 s ago
    (rebuilt from the move logs' times), and the moves made since come each 2 s after."""
    w0, w1 = await start_server("redis"), await start_server("redis")
    _, (ann,), _ = await race_room([w0], players=1, spectator_delay=2)
    loop = asyncio.get_running_loop()
    for _ in range(5):
        assert isinstance(await ann.move("s"), Ack)
    await asyncio.sleep(2.3)  # the scenario: five moves older than the delay, five newer
    for _ in range(5):
        assert isinstance(await ann.move("s"), Ack)
    recent = loop.time()
    await asyncio.sleep(0.3)  # the scenario: the spectator comes within the delay of them
    watcher = await w1.client()
    seen = Timeline(watcher)
    joined = await watcher.join(ann.room or "", role="spectator")
    assert joined.snapshot is not None
    (seat,) = joined.snapshot.seats
    assert seat.moves == 5 and seat.status == "playing"
    await watcher.follow(1)
    _, board = await seen.wait(Board)
    assert board.view["moves"] == 5
    t, progress = await seen.wait(Progress, timeout=4, moves=10)
    assert t - recent >= 1.98 and progress.seat == 1
    # the board of the tenth move comes with its progress or after it (boards and progress
    # are separate frames, each 2 s late)
    await until(lambda: any(b.view["moves"] == 10 for _, b in seen.of(Board)), 4)


# --------------------------------------------------------------------- finishes


async def test_a_racer_gets_the_finishes_withheld_once_they_finish(server: ServerHandle) -> None:
    code, line = WINS["klondike-3"]
    _, (ann, bob), _ = await race_room([server], game="klondike-3", code=code)
    bob_saw = Timeline(bob)
    for text in line.split():
        assert isinstance(await ann.move(text), Ack)
    await bob_saw.wait(Progress, seat=1, status="won")
    # Bob's own progress comes after Ann's finish: he was sent (or spared) it by then
    assert isinstance(await bob.move("s"), Ack)
    await bob_saw.wait(Progress, seat=2, moves=1)
    assert not bob_saw.of(PlayerFinished)  # still racing: withheld
    await bob.resign()
    await bob_saw.wait(RaceEnded)
    finishes = [m for _, m in bob_saw.of(PlayerFinished)]
    assert [f.seat for f in finishes] == [2, 1]  # his own, then the one withheld
    mine, withheld = finishes
    assert withheld.seq < mine.seq and withheld.move_list.split() == line.split()
    assert withheld.deal is None and mine.deal == code  # fair play as ever


@pytest.mark.parametrize("trimmed", [False, True])
@pytest.mark.parametrize("missed_events", [True, False])
async def test_a_racer_timed_out_while_away_gets_the_withheld_finishes_on_resume(
    store_kind: str, start_server: StartServer, missed_events: bool, trimmed: bool
) -> None:
    # Bob saw events after Ann's finish (it was withheld from him), went away, and the time
    # limit finished him meanwhile: resuming — with the events he missed, or a snapshot —
    # he is sent Ann's finish too
    # trimmed: the room keeps its last 40 events only, one progress a move (Ann makes 101)
    small = {"event_cap": 40, "progress_interval": 0} if trimmed else {}
    server = await start_server(store_kind, grace=30.0, **small)
    code, line = WINS["klondike-3"]
    _, (ann, bob), _ = await race_room([server], game="klondike-3", code=code, time_limit=2)
    bob_saw = Timeline(bob)
    for text in line.split():
        assert isinstance(await ann.move(text), Ack)
    await bob_saw.wait(Progress, seat=1, status="won")
    assert isinstance(await bob.move("s"), Ack)
    await bob_saw.wait(Progress, seat=2, moves=1)
    assert not bob_saw.of(PlayerFinished)
    await bob.close()
    ann_saw = Timeline(ann)
    await ann_saw.wait(RaceEnded, timeout=6)
    await ann.close()  # nobody left in the room here: the worker takes it anew on the resume
    await until(lambda: not server.app.ctx.rooms.rooms)
    if trimmed:  # the race's first events are gone: the finish is read from the last ones
        assert (
            await server.app.store.rooms.events_since((bob.room or "").replace("-", ""), 0) is None
        )
    if missed_events:
        again = await bob.reconnect()  # the events after the last it saw
        again_saw = Timeline(again)
        await again_saw.wait(RaceEnded, timeout=4)
        await until(lambda: len(again_saw.of(PlayerFinished)) == 2)
    else:
        again = await server.client()  # a snapshot, as after a reload
        again_saw = Timeline(again)
        joined = await again.resume(bob.room or "", bob.token or "")
        assert joined.snapshot is not None and joined.snapshot.phase == "ended"
        await until(lambda: len(again_saw.of(PlayerFinished)) == 1)
    finishes = {f.seat: f for _, f in again_saw.of(PlayerFinished)}
    assert finishes[1].status == "won" and finishes[1].move_list.split() == line.split()
    assert finishes[1].deal == code  # the race is over: the deal is told
    if missed_events:
        assert finishes[2].status == "timeout"


# --------------------------------------------------------------------- several boards


async def test_a_spectator_follows_up_to_four_boards(server: ServerHandle) -> None:
    _, players, (watcher, other) = await race_room([server], players=5, watchers=[server, server])
    seen = Timeline(watcher)
    await watcher.follow([1, 3, 4, 5])
    await until(lambda: {m.seat for _, m in seen.of(Board)} == {1, 3, 4, 5})
    await watcher.follow([3, 2])
    await seen.wait(Board, seat=2)
    before = len(seen.items)
    assert isinstance(await players[0].move("s"), Ack)  # seat 1: no longer followed
    assert isinstance(await players[1].move("s"), Ack)  # seat 2: followed
    await seen.wait(Board, seat=2, timeout=3)
    await asyncio.sleep(0.3)  # the scenario: a window in which seat 1's board must not come
    assert not [m for _, m in seen.items[before:] if isinstance(m, Board) and m.seat == 1]
    for bad, code in (([1, 2, 3, 4, 5], "invalid_message"), ([9], "unknown_seat")):
        with pytest.raises(RequestError) as info:
            await other.follow(bad)
        assert info.value.code == code
    with pytest.raises(RequestError) as info:
        await players[0].follow([2])
    assert info.value.code == "not_spectator"
    await watcher.follow([])
    assert isinstance(await players[1].move("s"), Ack)
    await asyncio.sleep(0.4)  # the scenario: a window in which no board may come
    assert not [m for _, m in seen.items if isinstance(m, Board) and m.view["moves"] == 2]


# --------------------------------------------------------------------- reactions


def tally(timeline: Timeline) -> dict[tuple[int | None, str, str], int]:
    out: dict[tuple[int | None, str, str], int] = {}
    for _, m in timeline.of(Reactions):
        for r in m.reactions:
            out[r.seat, r.reaction, r.by] = out.get((r.seat, r.reaction, r.by), 0) + r.n
    return out


async def test_reactions_are_tallied_to_everyone_and_rate_limited(server: ServerHandle) -> None:
    _, (ann, bob), (fan, other) = await race_room([server], watchers=[server, server])
    seen = {c: Timeline(c) for c in (ann, bob, other)}
    for _ in range(3):
        await fan.react("clap", seat=1)
    with pytest.raises(RequestError) as info:
        await fan.react("clap", seat=1)
    assert info.value.code == "too_many_reactions"
    await ann.react("gg")  # a player's own seat

    async def fire() -> bool:  # the crowd's, once a credit is back (one a second)
        try:
            await fan.react("fire")
        except RequestError as refused:
            assert refused.code == "too_many_reactions"
            return False
        return True

    await until(fire, every=0.1)

    def told_fire(timeline: Timeline) -> bool:
        return tally(timeline).get((None, "fire", "spectator")) == 1

    for timeline in seen.values():
        await until(partial(told_fire, timeline))
        assert tally(timeline) == {
            (1, "clap", "spectator"): 3,
            (1, "gg", "player"): 1,
            (None, "fire", "spectator"): 1,
        }
    for payload, code in (
        ({"reaction": "boo"}, "invalid_message"),
        ({"reaction": "wow", "seat": 9}, "unknown_seat"),
        ({"reaction": "wow", "text": "hi"}, "invalid_message"),
    ):
        with pytest.raises(RequestError) as info:
            await other.request({"type": "react", **payload})
        assert info.value.code == code
    stranger = await server.client()
    with pytest.raises(RequestError) as info:
        await stranger.react("wow")
    assert info.value.code == "not_in_room"


async def test_the_host_can_hide_spectators_reactions_from_racers(server: ServerHandle) -> None:
    _, (ann, bob), (fan,) = await race_room([server], watchers=[server], spectator_reactions=False)
    ann_saw, fan_saw = Timeline(ann), Timeline(fan)
    await fan.react("clap", seat=2)
    await bob.react("gg")
    await until(lambda: tally(fan_saw).get((2, "gg", "player")) == 1)
    await until(lambda: tally(ann_saw).get((2, "gg", "player")) == 1)
    assert tally(fan_saw).get((2, "clap", "spectator")) == 1
    await asyncio.sleep(0.6)  # the scenario: a window in which the clap must not reach Ann
    assert (2, "clap", "spectator") not in tally(ann_saw)  # racing: hidden
    await ann.resign()  # no longer racing
    await fan.react("wow", seat=1)
    await until(lambda: tally(ann_saw).get((1, "wow", "spectator")) == 1)


# --------------------------------------------------------------------- counts, slow readers


async def test_spectator_counts_are_told_at_most_once_a_second(server: ServerHandle) -> None:
    _, (ann,), _ = await race_room([server], players=1, start=False)
    seen = Timeline(ann)
    lag = LoopLag()
    crowd = []
    for _ in range(12):
        c = await server.client()
        await c.join(ann.room or "", role="spectator")
        crowd.append(c)
    await until(lambda: any(m.count == 12 for _, m in seen.of(Spectators)), timeout=4)
    for c in crowd[:6]:
        await c.close()
    await until(lambda: any(m.count == 6 for _, m in seen.of(Spectators)), timeout=4)
    lag.stop()
    times = [t for t, _ in seen.of(Spectators)]
    # a count read late (the loop was late by lag.worst at most) shortens the gap after it
    assert len(times) <= 4
    assert all(b - a >= 0.9 - lag.worst for a, b in itertools.pairwise(times)), lag.worst
    assert [m.count for _, m in seen.of(Spectators)][-1] == 6


async def test_a_spectator_who_stops_reading_is_dropped_and_the_room_goes_on(
    start_server: StartServer,
) -> None:
    server = await start_server(
        "memory", max_backlog=64 * 1024, progress_interval=0.0, rate=100_000.0, burst=5000
    )
    _, (ann,), (reader,) = await race_room([server], players=1, watchers=[server])
    room = ann.room or ""
    # a spectator with a tiny receive buffer that follows the board, then reads no more
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.port))
    lazy = await connect(server.url, sock=sock, max_queue=1)
    for message in (
        {"type": "hello", "v": PROTOCOL_VERSION},
        {"type": "join", "id": 1, "room": room, "role": "spectator"},
        {"type": "follow", "id": 2, "seats": [1]},
        {"type": "live", "id": 3, "limit": 50},
    ):
        await lazy.send(orjson.dumps(message).decode())
    app = server.app
    await until(lambda: any(c.following for c in app.ctx.rooms.conns.values()))
    slow = next(c for c in app.ctx.rooms.conns.values() if c.following)
    # the kernel's buffers small on both ends (as on a congested link): what the client
    # does not read piles up in the server's own buffer, the one that is bounded
    server_side = (
        slow.websocket.transport.get_extra_info("socket") if slow.websocket.transport else None
    )
    assert server_side is not None
    server_side.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    seen = Timeline(reader)
    loop = asyncio.get_running_loop()
    waits = []
    for _ in range(1500):
        t0 = loop.time()
        assert isinstance(await ann.move("s"), Ack)
        waits.append(loop.time() - t0)
        if slow.closing:
            break
    assert slow.closing and app.ctx.metrics.slow_closes_total == 1
    for _ in range(50):  # the room goes on
        assert isinstance(await ann.move("s"), Ack)
    assert ann.view is not None
    await seen.wait(Progress, moves=ann.view["moves"])
    assert max(waits) < 0.5
    lazy.transport.abort()
