"""Redis outages and restarts (issue 19): an acknowledged move is never lost, a player who
is still playing is never taken for gone.

Two workers share a real redis-server run with ``--appendonly yes --appendfsync always``.
Mid-race it is shut down (``SHUTDOWN``) for ``OUTAGE`` seconds while both players keep
sending, then restarted on the same port and data directory. After each variant: every
acknowledged move is in the final move list (and nothing else is), no live player was shown
disconnected or resigned, ``/healthz`` answered 503 during the outage and 200 after, and the
spectators' progress equals the players' real state.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import shutil
import subprocess
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from helpers import until, until_race_starts
from server_fixtures import free_port, wait_port
from websockets.exceptions import ConnectionClosed

from clients.client import RaceClient, RequestError
from engine import Game, new_game
from protocol import Ack, PlayerFinished, Progress, Rejected, SeatEvent
from server.app import Config, RaceServer, running
from server.rooms.room import ProgressState, RoomState, SeatState
from server.rooms.updates import Retake
from server.store.memory import memory_store
from server.store.redis import redis_store
from server.store.rooms import Fenced

pytestmark = pytest.mark.slow

REDIS_SERVER = shutil.which("redis-server") or "/usr/bin/redis-server"
DEAL = "KL1-1-AAAAAAK"
OUTAGE = 5.0  # seconds Redis is down: longer than the liveness period below
CONFIG: dict[str, Any] = {
    "port": 0,
    "countdown": 0.05,
    "grace": 3.0,
    "liveness": 1.0,
    "rate": 1000.0,
    "burst": 500,
}


class DurableRedis:
    """A redis-server with an append-only file fsynced on every write, which a test can
    shut down and start again on the same port and data directory."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        argv = [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        argv += ["--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.workdir)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_port(self.port)

    async def shutdown(self) -> None:
        """SHUTDOWN: Redis finishes what it was doing, syncs the AOF and exits."""
        r = aioredis.from_url(self.url)
        with contextlib.suppress(Exception):
            await r.shutdown()
        await r.aclose()
        assert self.proc is not None
        await asyncio.to_thread(self.proc.wait, 10)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def durable_redis(tmp_path: Path) -> Iterator[DurableRedis]:
    if not Path(REDIS_SERVER).exists():
        pytest.skip("redis-server is not installed")
    redis = DurableRedis(tmp_path)
    redis.start()
    try:
        yield redis
    finally:
        redis.kill()


@dataclass
class Workers:
    """Two workers on one Redis."""

    apps: list[RaceServer]

    def url(self, i: int) -> str:
        return f"ws://127.0.0.1:{self.apps[i].port}"

    def healthz(self, i: int) -> int:
        try:
            with urllib.request.urlopen(
                f"http://127.0.0.1:{self.apps[i].port}/healthz", timeout=2
            ) as r:
                return int(r.status)
        except urllib.error.HTTPError as exc:
            return int(exc.code)


@pytest_asyncio.fixture
async def workers(durable_redis: DurableRedis, no_error_logs: Any) -> AsyncIterator[Workers]:
    async with contextlib.AsyncExitStack() as stack:
        apps = []
        for name in ("w1", "w2"):
            store = redis_store(durable_redis.url, worker_id=name, health_interval=0.2)
            app, _ = await stack.enter_async_context(running(store, Config(**CONFIG)))
            apps.append(app)
        yield Workers(apps)


@dataclass
class Racer:
    """A player who keeps trying legal moves, sending each again until it is answered;
    ``acked`` holds every move acknowledged, in order, and ``game`` the board they make."""

    client: RaceClient
    game: Game
    seed: int
    acked: list[str] = field(default_factory=list)
    storage_errors: int = 0

    def next_move(self, rng: random.Random) -> str:
        moves = [str(m) for m in self.game.legal_moves if str(m) not in ("u", "a")]
        return rng.choice(moves)

    async def play(self, count: int, *, pause: float = 0.0) -> None:
        """Make ``count`` acknowledged moves (through an outage: each is tried again)."""
        rng = random.Random(self.seed + len(self.acked))
        done = 0
        while done < count:
            text = self.next_move(rng)
            while True:
                try:
                    reply = await self.client.move(text)
                except RequestError as exc:
                    assert exc.code == "storage", exc
                    self.storage_errors += 1
                    await asyncio.sleep(0.1)  # the next try's back-off: Redis is down
                    continue
                break
            assert isinstance(reply, Ack), reply
            self.game.push(reply.move)
            self.acked.append(reply.move)
            done += 1
            if pause:
                await asyncio.sleep(pause)  # the scenario: moves spread over the outage


async def _retry(request: Any, *args: Any) -> Any:
    """A request sent again while the store cannot be reached."""
    for _ in range(100):
        try:
            return await request(*args)
        except RequestError as exc:
            if exc.code != "storage":
                raise
            await asyncio.sleep(0.1)  # the next try's back-off: Redis is down
    raise AssertionError("the store never came back")


async def _healthz_until(workers: Workers, status: int, timeout: float = 5.0) -> None:
    """Wait until both workers' ``/healthz`` answers ``status``."""

    async def both_say() -> bool:
        codes = [await asyncio.to_thread(workers.healthz, i) for i in (0, 1)]
        return codes == [status, status]

    await until(both_say, timeout, every=0.1)


async def _race(workers: Workers) -> tuple[Racer, Racer, RaceClient]:
    """Ann on worker 1 hosts, Bob on worker 2 joins, a spectator watches from worker 1."""
    ann = await RaceClient.connect(workers.url(0))
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    bob = await RaceClient.connect(workers.url(1))
    await bob.join(joined.room, name="Bob")
    spectator = await RaceClient.connect(workers.url(0))
    await spectator.join(joined.room, role="spectator")
    await ann.start()
    await ann.next_event("race_starting")
    await until_race_starts(bob)
    return Racer(ann, new_game(DEAL), 1), Racer(bob, new_game(DEAL), 2), spectator


def _shown(spectator: RaceClient) -> tuple[dict[int, Progress], list[Any]]:
    """The spectator's last progress per seat, and anything that showed a live player
    gone: a ``seat`` event with ``connected: false``, a progress of a player who had not
    finished shown ``disconnected`` or ``resigned``."""
    last: dict[int, Progress] = {}
    gone: list[Any] = []
    for message in spectator.history:
        if isinstance(message, SeatEvent) and not message.connected:
            gone.append(message)
        if isinstance(message, Progress):
            last[message.seat] = message
            if message.status in ("disconnected", "resigned", "timeout"):
                gone.append(message)
    return last, gone


async def _settled(spectator: RaceClient, racers: dict[int, Racer]) -> None:
    """Wait until the spectator's progress shows each player's real state."""

    def shows_each() -> bool:
        last, _ = _shown(spectator)
        return all(
            s in last
            and (last[s].moves, last[s].score, last[s].on_foundations)
            == (r.game.moves, r.game.score, r.game.on_foundations)
            for s, r in racers.items()
        )

    await until(shows_each, 6)


async def _check_after(
    workers: Workers, room: str, racers: dict[int, Racer], spectator: RaceClient
) -> None:
    # the spectators' progress equals the players' real state, for one who watched all
    # along and for one who comes now (their snapshot: the held progress was stored again)
    await _settled(spectator, racers)
    late = await RaceClient.connect(workers.url(1))
    snap = (await late.join(room, role="spectator")).snapshot
    assert snap is not None
    for seat in snap.seats:
        real = racers[seat.seat].game
        assert (seat.moves, seat.score, seat.on_foundations) == (
            real.moves,
            real.score,
            real.on_foundations,
        )
        assert seat.connected and seat.status == "playing"
    # nobody who stayed was shown gone
    _, gone = _shown(spectator)
    assert not gone, gone
    # every acknowledged move is in the store's log, and nothing else
    code = room.replace("-", "")
    store = workers.apps[0].store
    for number, racer in racers.items():
        assert await store.rooms.moves(code, 1, number) == racer.acked
    # and in the final move list of each player
    for number, racer in racers.items():
        await racer.client.resign()
        finished = await spectator.next_event("player_finished", timeout=5)
        while not (isinstance(finished, PlayerFinished) and finished.seat == number):
            finished = await spectator.next_event("player_finished", timeout=5)
        assert finished.move_list is not None and finished.move_list.split() == racer.acked
    await late.close()


async def test_an_outage_loses_no_acknowledged_move(
    workers: Workers, durable_redis: DurableRedis, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    ann, bob, spectator = await _race(workers)
    room = ann.client.room or ""
    await asyncio.gather(ann.play(10), bob.play(10))
    # a quick burst right before the outage: its last progress is held back (coalesced)
    await ann.play(3)
    await durable_redis.shutdown()
    # both keep sending through the outage (each move tried until it is acknowledged)
    during = asyncio.gather(ann.play(5, pause=0.05), bob.play(5, pause=0.05))
    await _healthz_until(workers, 503)
    await asyncio.sleep(OUTAGE - 1.0)  # the scenario: down for longer than a liveness period
    durable_redis.start()
    await _healthz_until(workers, 200)
    await asyncio.wait_for(during, 20)
    assert ann.storage_errors and bob.storage_errors  # they did try during the outage
    await asyncio.gather(ann.play(5), bob.play(5))
    # the scenario: more than a liveness period after the outage, in which a player taken
    # for gone would be shown so
    await asyncio.sleep(1.5)
    await _check_after(workers, room, {1: ann, 2: bob}, spectator)
    # the outage is told in one line when it starts and one when it ends, per worker; no
    # traceback, and nothing else above INFO
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
    assert sorted(r.getMessage().split(":")[0].split(" after")[0] for r in loud) == [
        "redis back",
        "redis back",
        "redis unreachable",
        "redis unreachable",
    ], [r.getMessage() for r in loud]


async def test_a_resume_on_the_other_worker_during_an_outage_fences_the_old_connection(
    workers: Workers, durable_redis: DurableRedis
) -> None:
    ann, bob, spectator = await _race(workers)
    room = ann.client.room or ""
    await asyncio.gather(ann.play(10), bob.play(10))
    old = ann.client
    await durable_redis.shutdown()
    await _healthz_until(workers, 503)
    # Ann opens a second connection, to worker 2, and resumes there (refused with
    # "storage" until Redis is back); Bob plays on; the old connection stays open
    resumed = await RaceClient.connect(workers.url(1))
    bob_during = asyncio.create_task(bob.play(3, pause=0.1))
    resume = asyncio.create_task(_retry(resumed.resume, room, old.token or "", old.last_seq))
    await asyncio.sleep(OUTAGE - 1.0)  # the scenario: down for longer than a liveness period
    durable_redis.start()
    await asyncio.wait_for(resume, 20)
    await _healthz_until(workers, 200)
    await asyncio.wait_for(bob_during, 20)
    # the old connection is never acknowledged again: it is refused and closed (4000)
    # (it may be closed already: the kick, or the reassertion after the outage, came first)
    with contextlib.suppress(ConnectionError, ConnectionClosed, RequestError, TimeoutError):
        reply = await old.move(ann.next_move(random.Random(5)))
        assert not isinstance(reply, Ack), "the replaced connection was acknowledged"
        assert isinstance(reply, Rejected)
    await asyncio.wait_for(old.websocket.wait_closed(), 5)
    assert old.websocket.close_code == 4000
    ann.client = resumed
    await asyncio.gather(ann.play(5), bob.play(5))
    await asyncio.sleep(1.5)  # the scenario: more than a liveness period after the outage
    await _check_after(workers, room, {1: ann, 2: bob}, spectator)


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_the_store_refuses_a_write_with_an_old_epoch(
    kind: str, durable_redis: DurableRedis
) -> None:
    store = (
        redis_store(durable_redis.url, worker_id="t", prefix="fence")
        if kind == "redis"
        else memory_store()
    )
    await store.start(lambda code, data: None)
    try:
        room = RoomState(code="FENCE2", game="klondike", options={}, deal=DEAL)  # type: ignore[arg-type]
        assert await store.rooms.create(room)

        def seat_and_race(
            room: RoomState, progress: dict[int, ProgressState]
        ) -> tuple[list[Any], None]:
            room.seats.append(SeatState(seat=1, name="Ann", token_hash="h", conn="c1"))
            room.race = 1
            progress[1] = ProgressState(race=1, seat=1)
            return [], None

        await store.rooms.update("FENCE2", seat_and_race)
        assert (
            await store.rooms.append(
                "FENCE2", 1, 1, move="s", progress=None, events=[], index=0, epoch=1
            )
            == []
        )
        _, (old, epoch) = await store.rooms.update("FENCE2", Retake(1, "h", "c2", 0))
        assert old == "c1" and epoch == 2
        with pytest.raises(Fenced):
            await store.rooms.append(
                "FENCE2", 1, 1, move="s", progress=None, events=[], index=1, epoch=1
            )
        assert await store.rooms.moves("FENCE2", 1, 1) == ["s"]  # nothing of the old holder
        assert (
            await store.rooms.append(
                "FENCE2", 1, 1, move="s", progress=None, events=[], index=1, epoch=2
            )
            == []
        )
        assert await store.rooms.moves("FENCE2", 1, 1) == ["s", "s"]
    finally:
        await store.close()
