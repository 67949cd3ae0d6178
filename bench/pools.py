"""Quick-play benchmark (issue 32): players seeking at a steady rate over two workers on one
Redis, from their seek to their race's start.

``--players`` players (10,000) arrive at ``--rate`` a second (33.3: 10,000 in 5 minutes),
each on a connection of its own: it says who it is (identities made beforehand with ratings
in the records, spread ``--spread`` points around 1500), seeks a rated pool (a game, rooms
of 2 or — one in ``--fours`` — of 4, 5 or 10 minutes; all chosen at random), and once its
race starts resigns and goes. The workers (``samedeal serve --workers 2 --redis``, records in
a temporary SQLite) prove their pools' deals before the load starts (``--pools-warm``).

Printed:

* **seek → start**: from the seek to its race's ``race_starting`` (the race begun, its
  countdown running), p50 / p99 / max, on the server's clock; and **ready → start**: from
  the moment the pairing rule first allowed that room (the last of its players had sought
  and every one was within the longest waiter's window, which widens with the wait) to its
  start — the time the server takes once a compatible player is waiting (the goal);
* **nobody paired twice**: every player was sent one seat, every room holds distinct
  players, and no player of a finished load is left seated twice or not at all;
* **nobody left waiting**: every half second the pools are read from Redis, and a seeker
  counts as *stale* if the pairing rule would have put them in a room more than a second
  (two passes) before;
* rooms whose players were on both workers, and the load generator's lag.

Everything on 127.0.0.1, every phase bounded in time. A redis-server on a free port is
started unless ``--redis URL`` is given.

    flock /tmp/bench.lock python3 bench/pools.py               # 10,000 players, 5 minutes
    python3 bench/pools.py --players 2000                      # the same rate, 1 minute
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import orjson  # noqa: E402
import race as race_bench  # noqa: E402  (bench/race.py: the server's processes and CPU)
from sqlalchemy import Connection, insert, select  # noqa: E402
from websockets.asyncio.client import connect  # noqa: E402

from protocol.messages import PROTOCOL_VERSION  # noqa: E402
from server.quickplay.pairing import (  # noqa: E402
    WINDOW_GROWTH,
    WINDOW_START,
    Pool,
    Seeker,
    groups,
)
from server.records.identity import hash_secret, new_player_id, new_secret  # noqa: E402
from server.records.store import SqlRecordsStore  # noqa: E402
from server.records.tables import players, ratings  # noqa: E402

__all__ = ["main"]

GAMES = ("easy-harp", "klondike", "klondike-3")
LIMITS = (300, 600)
WARM = 4 * len(GAMES)  # each worker's pool full: 4 proven deals a game
STALE_MS = 1000  # a compatible room left this long counts as stale (two passes missed)
_PROVEN = re.compile(r'samedeal_proven_deals_total\{worker="([^"]+)",game="([^"]+)"\} (\d+)')


def _pct(values: Sequence[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] if ordered else float("nan")


# --------------------------------------------------------------------- the players


@dataclass(slots=True)
class Player:
    """One player of the load and what happened to it."""

    number: int
    public_id: str
    secret: str
    rating: float
    game: str
    size: int
    limit: int
    #: server times (ms): sought, race begun; the room and seat; seats sent (1 expected)
    since: int | None = None
    started: int | None = None
    room: str | None = None
    seats: int = 0
    worker: str = ""
    error: str | None = None

    @property
    def pool(self) -> str:
        return Pool(self.game, self.size, self.limit, True).id


def _seed(conn: Connection, count: int, spread: float, seed: int) -> list[tuple[str, str, float]]:
    """``count`` identities with a rating in every game (the same in each), in bulk: their
    public ids, secrets and ratings."""
    rng = random.Random(seed)
    made = [(new_player_id(), new_secret(), rng.gauss(1500, spread)) for _ in range(count)]
    conn.execute(
        insert(players),
        [
            {
                "public_id": pid,
                "secret_hash": hash_secret(secret),
                "recovery_hash": None,
                "name": f"p{i}",
                "handle": None,
                "handle_key": None,
                "created_at": 0,
                "deleted_at": None,
            }
            for i, (pid, secret, _) in enumerate(made)
        ],
    )
    pks = dict(conn.execute(select(players.c.public_id, players.c.id)).all())
    rows = [
        {
            "player_id": pks[pid],
            "game": game,
            "rating": rating,
            "rd": 60.0,
            "volatility": 0.06,
            "races": 40,
            "won": 20,
            "drawn": 0,
            "lost": 20,
            "abandoned": 0,
            "last_race_at": 0,
        }
        for pid, _, rating in made
        for game in GAMES
    ]
    for start in range(0, len(rows), 5000):
        conn.execute(insert(ratings), rows[start : start + 5000])
    return made


def _text(message: dict[str, Any]) -> str:
    """A message as the text frame the server reads."""
    return orjson.dumps(message).decode()


async def _play(player: Player, url: str) -> None:
    """Connect, identify, seek; once the race starts, resign and go."""
    try:
        async with connect(url, max_size=None, ping_interval=None) as ws:
            await ws.send(_text({"type": "hello", "v": PROTOCOL_VERSION}))
            welcome = orjson.loads(await ws.recv())
            player.worker = welcome["worker"]
            who = {"type": "identify", "id": 1, "player": player.public_id}
            await ws.send(_text({**who, "secret": player.secret}))
            seek = {
                "type": "seek",
                "id": 2,
                "game": player.game,
                "players": player.size,
                "time_limit": player.limit,
                "wait": 300,
            }
            async for frame in ws:
                message = orjson.loads(frame)
                kind = message.get("type")
                if kind == "identity":
                    await ws.send(_text(seek))
                elif kind == "seeking":
                    player.since = message["since"]
                elif kind == "joined":
                    player.seats += 1
                    player.room = message["room"]
                elif kind == "race_starting":
                    player.started = message["now"]
                    await ws.send(_text({"type": "resign", "id": 3}))
                elif kind == "ok" and message.get("id") == 3:
                    return
                elif kind == "error":
                    player.error = message["code"]
                    if message.get("id") in (1, 2):
                        return
    except Exception as exc:
        player.error = player.error or f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------- the pools


@dataclass
class Sampler:
    """Reads every pool this load seeks every half second; counts stale seekers."""

    url: str
    pools: list[str]
    samples: int = 0
    stale: set[str] = field(default_factory=set)
    waiting_max: int = 0

    async def run(self, stop: asyncio.Event) -> None:
        import redis.asyncio as aioredis

        client = aioredis.Redis.from_url(self.url)
        try:
            while not stop.is_set():
                now = int(time.time() * 1000)
                for pool_id in self.pools:
                    found = await client.hvals(f"sd:{{P:{pool_id}}}:seekers")
                    seekers = [Seeker.from_json(data) for data in found]
                    self.waiting_max = max(self.waiting_max, len(seekers))
                    size = Pool.parse(pool_id).players
                    # as a pass STALE_MS ago would have seen those already waiting then
                    then = now - STALE_MS
                    earlier = [s for s in seekers if s.since <= then]
                    for room in groups(earlier, size, then):
                        self.stale.update(s.key for s in room)
                self.samples += 1
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), 0.5)
        finally:
            await client.aclose()


def _ready_at(room: list[Player]) -> int:
    """When the pairing rule first allowed this room: its last player had sought, and every
    rating was within the longest waiter's window."""
    anchor = min(room, key=lambda p: p.since or 0)
    assert anchor.since is not None
    spread = max(abs(p.rating - anchor.rating) for p in room)
    widened = anchor.since + max(0.0, (spread - WINDOW_START) / WINDOW_GROWTH) * 1000
    return int(max(max(p.since or 0 for p in room), widened))


# --------------------------------------------------------------------- the run


def _proven(port: int) -> dict[str, int]:
    """Each worker's proven deals (every game's), from /metrics (a connection reaches
    either worker)."""
    seen: dict[str, dict[str, int]] = {}
    for _ in range(8):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
            for worker, game, n in _PROVEN.findall(r.read().decode()):
                seen.setdefault(worker, {})[game] = int(n)
    return {worker: sum(games.values()) for worker, games in seen.items()}


async def run(args: argparse.Namespace) -> int:
    from server_fixtures import free_port, own_redis, wait_port

    rng = random.Random(args.seed)
    with (
        tempfile.TemporaryDirectory(prefix="samedeal-pools-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        redis_url = args.redis
        if redis_url is None:
            _, redis_url = stack.enter_context(own_redis(Path(tmp)))
        db = f"sqlite:///{tmp}/records.db"
        store = await SqlRecordsStore.open(db)
        made = await store.db.write(_seed, args.players, args.spread, args.seed)
        await store.close()
        load = [
            Player(
                i,
                pid,
                secret,
                rating,
                rng.choice(GAMES),
                4 if rng.random() < args.fours else 2,
                rng.choice(LIMITS),
            )
            for i, (pid, secret, rating) in enumerate(made)
        ]
        port = free_port()
        argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
        argv += ["--workers", str(args.workers), "--redis", redis_url, "--database", db]
        argv += ["--pools-warm", "--countdown", "0.5", "--rate", "1000000", "--burst", "1000000"]
        argv += ["--identity-limit", "1000000", "--no-daily-warm", "--log-level", "WARNING"]
        proc = subprocess.Popen(argv, cwd=ROOT)
        try:
            wait_port(port, 60)
            t = time.monotonic()
            while True:
                proven = _proven(port)
                if len(proven) >= args.workers and min(proven.values()) >= WARM:
                    break
                if time.monotonic() - t > 600:
                    print(f"the buffers did not fill: {proven}", file=sys.stderr)
                    return 1
                await asyncio.sleep(1.0)
            print(f"warm: {proven} proven deals after {time.monotonic() - t:.0f} s", flush=True)
            return await _load(args, load, f"ws://127.0.0.1:{port}", redis_url, proc)
        finally:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _solver_pids(workers: list[int]) -> list[int]:
    """The workers' own processes (the solvers that prove the pools' deals); ``workers``:
    the worker processes only."""
    found: list[int] = []
    for pid in workers:
        with contextlib.suppress(OSError):
            found += map(int, Path(f"/proc/{pid}/task/{pid}/children").read_text().split())
    return found


async def _load(
    args: argparse.Namespace,
    load: list[Player],
    url: str,
    redis_url: str,
    proc: subprocess.Popen[bytes],
) -> int:
    workers = race_bench.server_pids(proc)  # the supervisor, then its workers
    solvers = _solver_pids(workers[1:])
    cpu0 = (race_bench.cpu_seconds(workers), race_bench.cpu_seconds(solvers))
    pools = sorted({p.pool for p in load})
    sampler = Sampler(redis_url, pools)
    stop = asyncio.Event()
    sampling = asyncio.create_task(sampler.run(stop))
    lags: list[float] = []
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    tasks = []
    for player in load:
        at = t0 + player.number / args.rate
        delay = at - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        lags.append(max(0.0, loop.time() - at))
        tasks.append(asyncio.create_task(_play(player, url)))
    sent = loop.time() - t0
    _, late = await asyncio.wait(tasks, timeout=args.drain)
    took = loop.time() - t0
    cpu = (
        race_bench.cpu_seconds(workers) - cpu0[0],
        race_bench.cpu_seconds(solvers) - cpu0[1],
    )
    for task in late:
        task.cancel()
    stop.set()
    await sampling
    code = _report(args, load, sampler, lags, sent, len(late))
    proven = _proven(int(url.rsplit(":", 1)[1]))
    print(f"deals proven by the workers, warming included: {sorted(proven.values())}")
    print(
        f"server CPU {cpu[0] / took:.2f} cores ({cpu[0] * 1000 / len(load):.1f} ms a player) "
        f"and its provers {cpu[1] / took:.2f} cores, over {took:.0f} s"
    )
    return code


def _report(
    args: argparse.Namespace,
    load: list[Player],
    sampler: Sampler,
    lags: list[float],
    sent: float,
    unfinished: int,
) -> int:
    started = [p for p in load if p.started is not None and p.since is not None]
    if not started:
        print(f"nobody started: errors {[p.error for p in load][:5]}")
        return 1
    waits = [(p.started or 0) - (p.since or 0) for p in started]
    rooms: dict[str, list[Player]] = {}
    for p in started:
        rooms.setdefault(p.room or "", []).append(p)
    ready = [
        (room[0].started or 0) - _ready_at(room)
        for room in rooms.values()
        if len(room) == room[0].size
    ]
    twice = [p for p in load if p.seats > 1]
    wrong = [code for code, room in rooms.items() if len(room) != room[0].size]
    mixed = sum(len({p.worker for p in room}) > 1 for room in rooms.values())
    errors: dict[str, int] = {}
    for p in load:
        if p.error:
            errors[p.error] = errors.get(p.error, 0) + 1
    print(
        f"{len(load)} players in {sent:.0f} s ({len(load) / sent:.1f}/s), {len(started)} started "
        f"in {len(rooms)} rooms ({mixed} across workers), {unfinished} unfinished, errors {errors}"
    )
    print(
        f"seek -> start  p50 {statistics.median(waits):.0f} ms  p99 {_pct(waits, 0.99):.0f} ms  "
        f"max {max(waits):.0f} ms"
    )
    print(
        f"ready -> start p50 {statistics.median(ready):.0f} ms  p99 {_pct(ready, 0.99):.0f} ms  "
        f"max {max(ready):.0f} ms  (goal p99 <= 3000 ms)"
    )
    print(
        f"paired twice: {len(twice)} players, rooms not full or over: {len(wrong)}; "
        f"stale seekers (a room missed over {STALE_MS} ms): {len(sampler.stale)} in "
        f"{sampler.samples} looks at the pools, at most {sampler.waiting_max} waiting in a pool"
    )
    print(f"load lag p99 {_pct(lags, 0.99) * 1000:.1f} ms max {max(lags) * 1000:.1f} ms")
    return 0 if not twice and not wrong and not sampler.stale else 1


def main() -> int:
    """Parse the options and run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--players", type=int, default=10_000)
    p.add_argument("--rate", type=float, default=10_000 / 300)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--spread", type=float, default=250.0, help="ratings' standard deviation")
    p.add_argument("--fours", type=float, default=0.25, help="share seeking rooms of 4")
    p.add_argument("--drain", type=float, default=60.0, help="seconds to wait for the last")
    p.add_argument("--redis", default=None)
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args()
    if args.redis is None and shutil.which("redis-server") is None:
        print("redis-server is not installed", file=sys.stderr)
        return 1
    try:
        import uvloop

        return uvloop.run(run(args))
    except ImportError:
        return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
