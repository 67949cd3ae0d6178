"""A tournament round through a failover of its shard (issue 20): on a Redis Cluster of 3
primaries and 3 replicas, the primary holding the tournament's slot (its keys share the tag
``{T:<id>}``: state, events, lease, presence, move lists) is SIGKILLed mid-round.

Two workers serve six players, a host and a watcher on each. Every player keeps playing
the winning line of the round's deal through the failover; a move that is not acknowledged
(refused as ``storage``, timed out, or its connection closed because its outcome is
unknown) is never counted, and after it the player's board is read again from the store and
the seat taken again on a new connection. Three players win, three resign. At the end: the
round ended and the tournament finished (both watchers were told), every acknowledged move
is in its race's log at its place (``replica`` durability: a replica had each before its
ack), each result is the race as stored, the ranking is the scoring's ranking of those
results, the export verifies, and the tournament and its race are in the records store.

The round's room has a random code: it shares the failed shard in about one run of three
(the players' moves then go through the failover too); a room's own failover, every time,
is tests/test_cluster.py's. On the other runs the players still notice: until the replica
takes over, a cluster missing a slot's primary refuses every command on every shard
(CLUSTERDOWN, ``cluster-require-full-coverage yes``, Redis's default), so each player is
refused a move (``storage``) once or so.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers import until, until_server_clock
from redis.crc import key_slot
from server_fixtures import WINS, LocalCluster, breakable_cluster, get_json, port_of, store_retry
from websockets.exceptions import ConnectionClosed

from clients.client import RaceClient, RequestError
from engine import replay
from protocol import Ack, Rejected, TournamentEvent, TournamentSeat
from server.app import Config, RaceServer, running
from server.codes import normalize_code
from server.store.redis import redis_store
from server.store.redis.link import RedisLink
from server.tournaments import round_ranking, verify

pytestmark = pytest.mark.slow

KL_CODE, KL_LINE = WINS["klondike"]
KL_MOVES = KL_LINE.split()
PLAYERS = 6
WINNERS = 3  # players 0-2 win the deal; players 3-5 resign after a few dozen moves
CONFIG = {
    "port": 0,
    "countdown": 0.05,
    "grace": 30.0,
    "liveness": 2.0,
    "rate": 1000.0,
    "burst": 500,
    "identity_limit": 100,
    "tournament_lease": 1.0,
    "tournament_countdown": 0.5,
}


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster this test breaks (:func:`breakable_cluster`)."""
    with breakable_cluster(tmp_path_factory.mktemp("tournament-cluster")) as cluster:
        yield cluster


@pytest_asyncio.fixture
async def apps(
    own_cluster: LocalCluster, tmp_path: Path, no_error_logs: Any
) -> AsyncIterator[list[RaceServer]]:
    """Two workers on the cluster, keeping records in one SQLite database."""
    records = f"sqlite:///{tmp_path / 'records.db'}"
    async with contextlib.AsyncExitStack() as stack:
        started = []
        for name in ("w1", "w2"):
            store = redis_store(own_cluster.url, worker_id=name, health_interval=0.2)
            config = Config(**CONFIG, records_url=records)  # type: ignore[arg-type]
            app, _ = await stack.enter_async_context(running(store, config))
            started.append(app)
        yield started


def _url(app: RaceServer) -> str:
    return f"ws://127.0.0.1:{app.port}"


async def _next_kind(client: RaceClient, kind: str, timeout: float) -> TournamentEvent:
    async def wait() -> TournamentEvent:
        async for m in client.events():
            if isinstance(m, TournamentEvent) and m.kind == kind:
                return m
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), timeout)


async def _next_seat(client: RaceClient) -> TournamentSeat:
    async def wait() -> TournamentSeat:
        async for m in client.events():
            if isinstance(m, TournamentSeat):
                return m
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), 20)


_UNKNOWN = (ConnectionClosed, ConnectionError, TimeoutError)
"""What leaves a request's outcome unknown: its connection closed (1011 after a write whose
outcome the worker could not learn), or no reply in time."""


@dataclass
class Entrant:
    """A player of the round who keeps playing the winning line. ``acked`` maps each
    acknowledged action's place in the race's log to the action; ``at`` is the number of
    actions on the board as last known."""

    app: RaceServer
    client: RaceClient
    player: str
    secret: str
    seat: TournamentSeat | None = None
    acked: dict[int, str] = field(default_factory=dict)
    at: int = 0
    refused: int = 0
    resumed: int = 0

    @property
    def room(self) -> str:
        assert self.seat is not None
        return normalize_code(self.seat.room) or ""

    async def log(self) -> list[str]:
        """The seat's move log as stored."""
        assert self.seat is not None
        store = self.app.store
        snap = await store_retry(store.rooms.snapshot, self.room)
        assert snap is not None
        moves: list[str] = await store_retry(
            store.rooms.moves, self.room, snap.room.race, self.seat.seat
        )
        return moves

    async def status(self) -> str:
        assert self.seat is not None
        snap = await store_retry(self.app.store.rooms.snapshot, self.room)
        assert snap is not None
        return str(snap.progress[self.seat.seat].status)

    async def reload(self) -> None:
        log = await self.log()
        assert log == KL_MOVES[: len(log)], log  # the line, nothing else, in order
        self.at = len(log)

    async def take_seat_again(self) -> None:
        """A new connection: who the player is, then the round's seat by its token."""
        assert self.seat is not None
        with contextlib.suppress(Exception):
            await self.client.close()
        deadline = time.monotonic() + 40
        while True:
            try:
                client = await RaceClient.connect(_url(self.app))
                await client.identify(self.player, self.secret)
                await client.take_seat(self.seat)
                self.client = client
                self.resumed += 1
                return
            except (RequestError, *_UNKNOWN):
                assert time.monotonic() < deadline, "the seat could not be taken again"
                await asyncio.sleep(0.2)  # the next try's back-off: the cluster is failing over

    async def play(self, upto: int, pause: float) -> None:
        """Play the line until ``upto`` actions are on the board, each acknowledged."""
        deadline = time.monotonic() + 120
        while self.at < upto:
            assert time.monotonic() < deadline, f"stuck at {self.at} of {upto} actions"
            try:
                reply = await self.client.move(KL_MOVES[self.at])
            except RequestError as exc:
                assert exc.code == "storage", exc
                self.refused += 1
                await asyncio.sleep(0.1)  # the next try's back-off: the store is failing over
                await self.reload()
                continue
            except _UNKNOWN:
                await self.take_seat_again()
                await self.reload()
                continue
            if isinstance(reply, Rejected):  # the board moved on: a move of unknown outcome
                await self.reload()
                continue
            assert isinstance(reply, Ack) and reply.move == KL_MOVES[self.at], reply
            self.acked[self.at] = reply.move
            self.at += 1
            if pause:
                await asyncio.sleep(pause)  # the scenario: moves spread over the failover

    async def resign(self) -> None:
        """Resign, again until the store says so."""
        deadline = time.monotonic() + 60
        while await self.status() == "playing":
            assert time.monotonic() < deadline, "the resignation did not take"
            try:
                await self.client.resign()
            except RequestError as exc:
                assert exc.code == "storage", exc
                await asyncio.sleep(0.1)  # the next try's back-off: the store is failing over
            except _UNKNOWN:
                await self.take_seat_again()


async def test_a_round_goes_on_through_a_failover_of_its_shard(
    apps: list[RaceServer], own_cluster: LocalCluster
) -> None:
    """Six players, one round, the tournament's primary SIGKILLed mid-round."""
    store = apps[0].store
    assert isinstance(store.link, RedisLink) and store.link.durability == "replica"
    clients: list[RaceClient] = []

    async def identified(app: RaceServer, name: str) -> tuple[RaceClient, str, str]:
        client = await RaceClient.connect(_url(app))
        clients.append(client)
        made = await client.new_player(name)
        assert made.secret is not None
        return client, made.player, made.secret

    host, _, _ = await identified(apps[0], "Host")
    entrants = []
    for i in range(PLAYERS):
        app = apps[i % 2]
        client, player, secret = await identified(app, f"P{i}")
        entrants.append(Entrant(app, client, player, secret))
    tid = (
        await host.tournament_create(
            name="Failover cup",
            game="klondike",
            rounds=1,
            round_time_limit=300,
            round_start="manual",
            deals="list",
            deal_codes=[KL_CODE],
        )
    ).page.id
    for i, e in enumerate(entrants):
        await e.client.tournament_join(tid, name=f"P{i}")
    watchers = []
    for app in apps:
        watcher = await RaceClient.connect(_url(app))
        clients.append(watcher)
        await watcher.tournament_open(tid)
        watchers.append(watcher)

    await host.tournament_host(tid, "start")
    seats = await asyncio.gather(*(_next_seat(e.client) for e in entrants))
    for e, seat in zip(entrants, seats, strict=True):
        e.seat = seat
        await e.client.take_seat(seat)
    await until_server_clock(seats[0].start_at, await host.ping())
    await asyncio.gather(*(e.play(5 + i, 0) for i, e in enumerate(entrants)))

    # mid-round: the primary holding the tournament's slot dies; everyone plays on
    slot = key_slot(f"T:{normalize_code(tid)}".encode())

    async def finish(i: int, e: Entrant) -> None:
        if i < WINNERS:
            await e.play(len(KL_MOVES), 0.02)
        else:
            await e.play(30 + 5 * i, 0.05)
            await e.resign()

    playing = asyncio.gather(*(finish(i, e) for i, e in enumerate(entrants)))
    # the primary dies once everyone is a few moves further on (all still have moves to go)
    started = [e.at for e in entrants]
    await until(lambda: all(e.at >= at + 3 for e, at in zip(entrants, started, strict=True)))
    assert not playing.done()
    victim = await own_cluster.fail_over(slot)  # the killed node comes back as a replica
    await asyncio.wait_for(playing, 150)

    # the round ends as everyone is done; the tournament (one round) finishes; both
    # workers' watchers are told, over the tournament's channel on its new primary
    ended = await asyncio.gather(*(_next_kind(w, "round_ended", 60) for w in watchers))
    await asyncio.gather(*(_next_kind(w, "tournament_finished", 30) for w in watchers))

    # every acknowledged move is in its race's log at its place
    logs = {}
    for i, e in enumerate(entrants):
        log = await e.log()
        for index, move in e.acked.items():
            assert index < len(log) and log[index] == move, (i, index, move, log)
        assert (len(log) == len(KL_MOVES)) == (i < WINNERS), (i, len(log))
        logs[e.player] = log

    # each result is its race as stored; the ranking is the scoring's, recorded: the
    # tournament written to the records and retired from the live store, its race written
    # (the records writer is a thread of its own: the replay's id comes soon after)
    code = normalize_code(tid) or ""

    async def retired() -> bool:
        return code not in await store_retry(store.tournaments.active)

    async def race_recorded() -> Any:
        _, page = await get_json(port_of(apps[1]), f"/api/tournaments/{tid}")
        return page if all(r["game_id"] for r in page["rounds"][0]["results"]) else None

    await until(retired, 30)
    page = await until(race_recorded, 30)
    assert page["phase"] == "finished"
    results = {r["player"]: r for r in page["rounds"][0]["results"]}
    assert set(results) == {e.player for e in entrants}
    for i, e in enumerate(entrants):
        mine, game = results[e.player], replay(KL_CODE, logs[e.player])
        assert mine["status"] == ("won" if i < WINNERS else "resigned"), (i, mine)
        assert (mine["moves"], mine["score"]) == (game.moves, game.score), (i, mine)
    places = {r["player"]: r["place"] for r in ended[0].data["ranking"]}
    assert ended[1].data["ranking"] == ended[0].data["ranking"]
    assert places == {p: r["place"] for p, r in results.items()}
    winners, resigners = entrants[:WINNERS], entrants[WINNERS:]
    assert max(places[e.player] for e in winners) < min(places[e.player] for e in resigners)
    _, export = await get_json(port_of(apps[0]), f"/api/tournaments/{tid}/export")
    assert verify(export) == []  # the standings and points recomputed from the move lists
    records = apps[0].ctx.records
    assert records is not None
    kept = await records.tournaments.load(code)
    assert kept is not None
    recorded, moves = kept
    assert recorded.state.phase == "finished"
    assert {p: r.status for p, r in recorded.state.rounds[0].results.items()} == {
        p: r["status"] for p, r in results.items()
    }
    assert moves == {(1, p): " ".join(log) for p, log in logs.items()}
    assert {p.result.player: p.place for p in round_ranking(recorded.state.rounds[0])} == places

    assert own_cluster.port_of_slot(slot) != victim  # the replica it had serves the slot
    for client in clients + [e.client for e in entrants]:
        with contextlib.suppress(Exception):
            await client.close()
    await asyncio.to_thread(own_cluster.wait_healthy)
