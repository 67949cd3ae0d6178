"""Storage: what is kept where, for how long (Redis and memory)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import pytest
import redis.asyncio as aioredis
from helpers import until, until_race_starts
from server_fixtures import ServerHandle, StartServer, as_text, until_redis_busy

from clients.client import RaceClient
from engine import new_game, replay
from protocol import Ack, Progress, RaceStatus
from protocol.frames import EventBody
from server.rooms.room import Events, ProgressState, RoomOptions, RoomState
from server.store.memory import memory_store
from server.store.memory.rooms import MemoryRooms
from server.store.rooms import LogConflict


async def race_two(server: ServerHandle) -> tuple[RaceClient, RaceClient, str, str]:
    ann = await server.client()
    joined = await ann.create("klondike")
    bob = await server.client()
    await bob.join(joined.room)
    await ann.start()
    start = await until_race_starts(bob)
    assert start.deal is None  # fair play: the racers are not told it
    return ann, bob, joined.room, await server.deal(joined.room)


async def test_redis_keys_tokens_and_move_log(start_server, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    server = await start_server("redis", active_ttl=600, finished_ttl=30)
    ann, bob, room, deal = await race_two(server)
    code = room.replace("-", "")
    game = new_game(deal)
    for text in ("s", "s", "s"):
        reply = await bob.move(text)
        assert isinstance(reply, Ack)
        game.push(reply.move)
    r = aioredis.from_url(redis_url)
    try:
        keys = sorted(as_text(k) for k in await r.keys(f"sd:{{{code}}}:*"))
        assert keys == [
            f"sd:{{{code}}}:{k}"
            for k in ("done", "epochs", "events", "moves:1:2", "progress", "room", "seq")
        ]
        # every key of the room carries a TTL
        for key in keys:
            assert 0 < await r.ttl(key) <= 600
        # the acknowledged moves are in the log; the token is stored only as a hash
        # entries are MOVE@MS: the move and its server time since the race's start
        entries = [as_text(m) for m in await r.lrange(f"sd:{{{code}}}:moves:1:2", 0, -1)]
        assert [e.split("@")[0] for e in entries] == ["s"] * 3
        assert [int(e.split("@")[1]) for e in entries] == await server.app.store.rooms.times(
            code, 1, 2
        )
        state = as_text(await r.get(f"sd:{{{code}}}:room") or b"")
        assert bob.token is not None and ann.token is not None
        assert bob.token not in state and ann.token not in state
        assert replay(deal, ["s"] * 3).player_view() == game.player_view()
        await ann.resign()
        await bob.resign()
        await bob.next_event("race_ended")
        for key in keys:
            assert 0 < await r.ttl(key) <= 30  # finished rooms expire sooner
    finally:
        await r.aclose()


async def test_memory_rooms_expire() -> None:
    store = memory_store(active_ttl=0.05, finished_ttl=0.01, sweep_interval=0.02)
    await store.start(lambda code, data: None)
    try:
        room = RoomState(
            code="K7QF2M", game="klondike", options=RoomOptions(), deal="KL1-1-AAAAAAK"
        )
        rooms = store.rooms
        assert isinstance(rooms, MemoryRooms)
        assert await rooms.create(room)
        assert rooms.room_count == 1
        await until(lambda: rooms.room_count == 0)  # swept
        assert await rooms.snapshot("K7QF2M") is None
        assert await rooms.create(room)
        assert rooms.sweep(time.monotonic() + 1) == 1
    finally:
        await store.close()


async def test_event_list_is_capped(start_server, store_kind: str) -> None:  # type: ignore[no-untyped-def]
    server = await start_server(store_kind, event_cap=8, progress_interval=0)  # one per move
    _ann, bob, room, _deal = await race_two(server)
    for _ in range(20):
        assert isinstance(await bob.move("s"), Ack)
    store = server.app.store
    code = room.replace("-", "")
    assert await store.rooms.events_since(code, 0) is None
    snap = await store.rooms.snapshot(code)
    assert snap is not None
    kept = await store.rooms.events_since(code, snap.seq - 8)
    assert kept is not None and len(kept) == 8
    assert await store.rooms.events_since(code, snap.seq) == []


async def test_pubsub_reconnect_loses_no_event(start_server, redis_url: str, no_error_logs) -> None:  # type: ignore[no-untyped-def]
    """The pub/sub connection dies mid-race: the listener reconnects (capped back-off) and
    fills the gap from the stored events, so connected clients miss nothing."""
    server = await start_server("redis", progress_interval=0)  # one progress per move
    _ann, bob, room, _deal = await race_two(server)
    watcher = await server.client()
    await watcher.join(room, role="spectator")
    first = watcher.last_seq or 0
    r = aioredis.from_url(redis_url)
    try:
        for _ in range(3):
            assert isinstance(await bob.move("s"), Ack)
        await r.execute_command("CLIENT", "KILL", "TYPE", "pubsub")  # type: ignore[no-untyped-call]
        for _ in range(5):  # while the worker is not subscribed: the gap
            assert isinstance(await bob.move("s"), Ack)
        channel = f"sd:{{{room.replace('-', '')}}}:ch"

        async def subscribed_again() -> bool:
            _, count = await r.execute_command("PUBSUB", "NUMSUB", channel)  # type: ignore[no-untyped-call]
            return bool(count)

        await until(subscribed_again)
        for _ in range(2):
            assert isinstance(await bob.move("s"), Ack)
    finally:
        await r.aclose()
    seqs: list[int] = []
    while len(seqs) < 10:
        event = await watcher.next_event("progress", timeout=10)
        assert isinstance(event, Progress)
        seqs.append(event.seq)
    assert seqs == list(range(first + 1, first + 11))
    # the listener's failure is logged (logger.exception), nothing else
    assert all(rec.name == "samedeal.redis" for rec in no_error_logs.records)
    no_error_logs.records.clear()


async def test_move_log_cannot_fork(start_server, store_kind: str) -> None:  # type: ignore[no-untyped-def]
    """A move meant for position N of the log is refused when the log is not N long (two
    connections of one seat racing each other), so the log always replays."""
    server = await start_server(store_kind)
    _ann, bob, room, deal = await race_two(server)
    assert isinstance(await bob.move("s"), Ack)
    store = server.app.store
    code = room.replace("-", "")
    snap = await store.rooms.snapshot(code)
    assert snap is not None
    progress = snap.progress[2]
    with pytest.raises(LogConflict):
        await store.rooms.append(code, 1, 2, move="s", progress=progress, events=[], index=0)
    assert await store.rooms.moves(code, 1, 2) == ["s"]
    assert (
        await store.rooms.append(code, 1, 2, move="s", progress=progress, events=[], index=1) == []
    )
    assert replay(deal, await store.rooms.moves(code, 1, 2)).moves == 2


async def test_moves_survive_a_script_flush_and_a_dropped_connection(
    start_server: StartServer, redis_url: str
) -> None:
    """The append script is reloaded when Redis forgets it (a restart, SCRIPT FLUSH), and a
    store connection killed by Redis is replaced: the moves after both are acknowledged and
    the log holds every acknowledged move, in order."""
    server = await start_server("redis")
    _ann, bob, room, deal = await race_two(server)
    code = room.replace("-", "")
    r = aioredis.from_url(redis_url)
    try:
        assert isinstance(await bob.move("s"), Ack)
        await r.script_flush()
        assert isinstance(await bob.move("s"), Ack)  # NOSCRIPT: loaded again, then run
        await r.client_kill_filter(_type="normal", skipme=True)  # every other client
        for _ in range(3):  # sent again on a new connection
            assert isinstance(await bob.move("s"), Ack)
        acked = ["s"] * 5
        assert await server.app.store.rooms.moves(code, 1, 2) == acked
        assert replay(deal, acked).player_view() == bob.view
    finally:
        await r.aclose()


_BUSY_LUA = """
local t0 = redis.call('TIME')
local start = t0[1] * 1000000 + t0[2]
while true do
  local t = redis.call('TIME')
  if t[1] * 1000000 + t[2] - start > tonumber(ARGV[1]) * 1000 then return 1 end
end
"""


async def test_a_move_sent_twice_is_stored_once(start_server, redis_url: str) -> None:  # type: ignore[no-untyped-def]
    """Redis stalls (a long script) past the store timeout: the move is sent again on a new
    connection, Redis then runs both copies, and the second is recognised as already stored
    rather than refused. The move is acknowledged and logged once."""
    server = await start_server("redis")
    _ann, bob, room, deal = await race_two(server)
    code = room.replace("-", "")
    store = server.app.store
    store.link.write_timeout = 0.4
    r, probe = aioredis.from_url(redis_url), aioredis.from_url(redis_url)
    try:
        assert isinstance(await bob.move("s"), Ack)
        await probe.ping()
        stall = asyncio.ensure_future(r.eval(_BUSY_LUA, 0, 700))  # Redis busy for 0.7 s
        await until_redis_busy(probe)  # the move goes in while the script runs
        reply = await bob.move("s")
        assert isinstance(reply, Ack)
        await stall
        assert await store.rooms.moves(code, 1, 2) == ["s", "s"]
        assert replay(deal, ["s", "s"]).player_view() == bob.view
    finally:
        await r.aclose()
        await probe.aclose()


class _CuttingProxy:
    """A TCP proxy to Redis on 127.0.0.1 that, once armed, lets the next transaction's
    EXEC through to Redis and then cuts the client's connection instead of passing the
    reply on: Redis ran it, the client cannot know."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.armed = False
        self.cuts = 0
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        rreader, rwriter = await asyncio.open_connection("127.0.0.1", self.target_port)
        cut = asyncio.Event()

        async def upstream() -> None:
            while data := await creader.read(65536):
                rwriter.write(data)
                if self.armed and b"EXEC\r\n" in data:
                    self.armed = False
                    cut.set()

        async def downstream() -> None:
            dropped = b""
            while data := await rreader.read(65536):
                if cut.is_set():
                    # the transaction's replies are dropped with the connection, once the
                    # reply of its EXEC (an array, after MULTI's +OK and the +QUEUED) comes:
                    # Redis ran it
                    dropped += data
                    if dropped.startswith(b"*") or b"\r\n*" in dropped:
                        self.cuts += 1
                        return
                    continue
                cwriter.write(data)

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        cwriter.close()
        rwriter.close()


async def test_a_room_update_whose_reply_is_lost_is_applied_once(redis_url: str) -> None:
    """The connection fails after Redis ran the update's EXEC: the update is recognised as
    done (by its token) instead of being applied a second time."""
    from server.store.redis import redis_store

    proxy = _CuttingProxy(int(redis_url.rsplit(":", 1)[1].split("/")[0]))
    port = await proxy.start()
    store = redis_store(f"redis://127.0.0.1:{port}/0", worker_id="cut", prefix="cut")
    await store.start(lambda code, data: None)
    try:
        room = RoomState(
            code="CUT1A2", game="klondike", options=RoomOptions(), deal="KL1-1-AAAAAAK"
        )
        assert await store.rooms.create(room)
        calls = 0

        def bump(room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, int]:
            nonlocal calls
            calls += 1
            room.next_seat += 1
            # an event of the test's own: the store keeps and counts whatever it is given
            bumped = cast(EventBody, {"type": "bumped", "room": room.code})
            return [bumped], room.next_seat

        await store.rooms.update("CUT1A2", bump)  # the proxy passes it on as is
        assert calls == 1
        proxy.armed = True
        snap, value = await store.rooms.update("CUT1A2", bump)
        assert proxy.cuts == 1  # the reply of the second update was lost
        assert calls == 2  # not run a third time
        assert value == 3  # the value of the update as it ran
        assert snap.room.next_seat == 3 and snap.seq == 2
        stored = await store.rooms.snapshot("CUT1A2")
        assert stored is not None and stored.room.next_seat == 3 and stored.seq == 2
        assert len(await store.rooms.events_since("CUT1A2", 0) or []) == 2
    finally:
        await store.close()
        await proxy.close()


async def test_the_store_takes_moves_only_from_a_seat_racing_in_that_race(
    redis_url: str,
) -> None:
    """The append script reads the stored progress as text: wrong race, a final status, or a
    name that spells a status are refused; the seat's own race while playing is taken."""
    from server.store.redis import redis_store

    store = redis_store(redis_url, worker_id="seat", prefix="seatcheck")
    await store.start(lambda code, data: None)
    try:
        room = RoomState(
            code="SEAT22", game="klondike", options=RoomOptions(), deal="KL1-1-AAAAAAK"
        )
        assert await store.rooms.create(room)

        def set_progress(status: RaceStatus, race: int, name: str = "") -> Any:
            def update(
                room: RoomState, progress: dict[int, ProgressState]
            ) -> tuple[list[Any], None]:
                progress[2] = ProgressState(race=race, seat=2, status=status, name=name)
                return [], None

            return update

        async def append(race: int, index: int) -> list[bytes] | None:
            return await store.rooms.append(
                "SEAT22", race, 2, move="s", progress=None, events=[], index=index
            )

        await store.rooms.update("SEAT22", set_progress("playing", 12))
        assert await append(12, 0) == []
        assert await append(1, 0) is None  # race 1 is not race 12 (a prefix of it)
        assert await append(123, 0) is None
        # every final status (``disconnected`` is only shown: a stored status is a RaceStatus)
        final: tuple[RaceStatus, ...] = ("won", "resigned", "timeout", "left")
        for status in final:
            await store.rooms.update(
                "SEAT22", set_progress(status, 12, name='x","status":"playing"')
            )
            assert await append(12, 1) is None, status
        await store.rooms.update("SEAT22", set_progress("playing", 12, name='"status":"won"'))
        assert await append(12, 1) == []
        assert await store.rooms.moves("SEAT22", 12, 2) == ["s", "s"]
    finally:
        await store.close()
