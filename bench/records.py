"""Records store benchmark: writing finished races, and the reads of the player page and
the replay with a full database — on SQLite and on PostgreSQL.

For each engine, on a fresh database:

1. baseline: races written one per transaction (``store.record_race``, awaited in turn);
2. the server's write path: races submitted to a :class:`RaceWriter` as fast as a loop can
   end them, written in batches in the background; the event loop's lag (a 1 ms ticker)
   is measured meanwhile — the writes must not stall it;
3. fill to ``--races`` stored races (default 200,000; move lists shortened to
   ``--fill-actions``, which only the size of the file depends on), then time
   ``--reads`` player pages (handle → player, stats, 20 recent races, JSON) and replay
   fetches (race with all seats and move lists, JSON): p50 / p99.

Races have 1–4 racers (players drawn from ``--players`` identities with handles) and
``--actions`` actions per racer in the timed write phases. PostgreSQL is a throw-away
cluster on a free port (``tests/pg_fixtures.py``) unless ``--database URL`` is given.

    python bench/records.py                      # both engines, about 4 minutes
    python bench/records.py --engines sqlite --races 20000 --reads 500     # quick look
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from server.records.models import RaceRecord, SeatRecord  # noqa: E402
from server.records.store import SqlRecordsStore  # noqa: E402
from server.records.views import game_replay, player_page  # noqa: E402
from server.records.writer import RaceWriter  # noqa: E402

__all__ = ["main"]

ACTIONS = ["s", "w-t3", "t2-f", "t6:3-t1", "w-f", "t4-t7", "u", "f2-t5"]
STATUSES = ["won", "resigned", "timeout", "left"]


class Races:
    """Races made to order: room codes numbered, racers drawn from the players."""

    def __init__(self, players: list[str], seed: int = 1) -> None:
        self.players = players
        self.rng = random.Random(seed)
        self.count = 0

    def make(self, actions: int) -> RaceRecord:
        """The next race."""
        self.count += 1
        n = self.count
        racers = self.rng.randint(1, 4)
        chosen = self.rng.sample(self.players, racers)
        seats = []
        for i, pid in enumerate(chosen, 1):
            status = self.rng.choice(STATUSES)
            acts = tuple(self.rng.choice(ACTIONS) for _ in range(actions))
            seats.append(
                SeatRecord(
                    seat=i,
                    name=f"racer {i}",
                    status=status,  # type: ignore[arg-type]
                    rank=i,
                    score=self.rng.randrange(600),
                    moves=actions,
                    on_foundations=52 if status == "won" else self.rng.randrange(52),
                    elapsed_ms=self.rng.randrange(60_000, 600_000) if status == "won" else None,
                    actions=acts,
                    action_times=tuple(range(400, 400 * (actions + 1), 400)),
                    player_id=pid,
                )
            )
        end = 1_700_000_000_000 + n * 1000
        return RaceRecord(
            room=f"R{n:07d}"[-8:],
            room_created_at=n,
            race=1,
            game="klondike",
            deal="KL1-1-AAAAAAK",
            started_at=end - 300_000,
            ended_at=end,
            seats=tuple(seats),
        )


async def _lag_probe(samples: list[float], stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        t = loop.time()
        await asyncio.sleep(0.001)
        samples.append(loop.time() - t - 0.001)


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def _timed(call: Callable[[], Awaitable[object]], n: int) -> tuple[float, float]:
    laps = []
    for _ in range(n):
        t = time.perf_counter()
        await call()
        laps.append(time.perf_counter() - t)
    return statistics.median(laps) * 1000, _pct(laps, 0.99) * 1000


async def bench_engine(name: str, url: str, args: argparse.Namespace) -> dict[str, float]:
    """Run the three phases on one fresh database; the figures."""
    store = await SqlRecordsStore.open(url, create_limit=10**9)
    try:
        players = []
        for i in range(args.players):
            identity = await store.create_player(f"player {i}", "192.0.2.1")
            await store.set_handle(identity.player_id, f"player_{i}")
            players.append(identity.player_id)
        races = Races(players)
        out: dict[str, float] = {}

        # made beforehand: the server has its finished races at hand, what is timed is
        # only what the records store does with them
        baseline = [races.make(args.actions) for _ in range(args.baseline)]
        ended = [races.make(args.actions) for _ in range(args.writes)]
        # the bench's own heap of races must not make the collector's pauses the loop lag
        gc.collect()
        gc.freeze()
        t = time.perf_counter()
        for race in baseline:
            await store.record_race(race)
        out["one_per_tx"] = args.baseline / (time.perf_counter() - t)

        # the loop's lag with nothing to do, the same run's baseline for the lag while
        # the writer works
        idle: list[float] = []
        stop = asyncio.Event()
        probe = asyncio.create_task(_lag_probe(idle, stop))
        await asyncio.sleep(2)
        stop.set()
        await probe
        out["idle_lag_p99_ms"] = _pct(idle, 0.99) * 1000

        lag: list[float] = []
        stop = asyncio.Event()
        probe = asyncio.create_task(_lag_probe(lag, stop))
        async with RaceWriter(url, max_batch=args.batch, max_queued=len(ended)) as writer:
            t = time.perf_counter()
            for i, race in enumerate(ended):
                writer.submit(race)
                if i % 50 == 49:
                    await asyncio.sleep(0)  # races end between other work of the server
            await writer.flush()
            elapsed = time.perf_counter() - t
        stop.set()
        await probe
        out["batched"] = args.writes / elapsed
        out["batches"] = writer.batches
        out["lag_p99_ms"] = _pct(lag, 0.99) * 1000
        out["lag_max_ms"] = max(lag) * 1000

        t = time.perf_counter()
        async with RaceWriter(url, max_batch=2000) as writer:
            while races.count < args.races:
                for _ in range(2000):
                    if races.count >= args.races:
                        break
                    writer.submit(races.make(args.fill_actions))
                await writer.flush()
        out["fill_s"] = time.perf_counter() - t

        rng = random.Random(7)
        race_ids = [await store.record_race(races.make(args.actions)) for _ in range(200)]

        async def page() -> object:
            profile = await store.profile(f"player_{rng.randrange(args.players)}", limit=20)
            assert profile is not None
            return player_page(profile).model_dump_json()

        async def replay() -> object:
            stored = await store.race(rng.choice(race_ids))
            assert stored is not None
            return game_replay(stored).model_dump_json()

        out["page_p50"], out["page_p99"] = await _timed(page, args.reads)
        out["replay_p50"], out["replay_p99"] = await _timed(replay, args.reads)
        print(
            f"{name:10s} one per transaction {out['one_per_tx']:8.0f} races/s | "
            f"writer {out['batched']:8.0f} races/s ({out['batched'] / out['one_per_tx']:.1f}×, "
            f"{int(out['batches'])} batches, loop lag p99 {out['lag_p99_ms']:.1f} ms, "
            f"max {out['lag_max_ms']:.1f} ms; idle p99 {out['idle_lag_p99_ms']:.1f} ms)",
            flush=True,
        )
        print(
            f"{'':10s} {races.count} races (fill {out['fill_s']:.0f} s): player page "
            f"p50 {out['page_p50']:.2f} ms p99 {out['page_p99']:.2f} ms | replay "
            f"p50 {out['replay_p50']:.2f} ms p99 {out['replay_p99']:.2f} ms",
            flush=True,
        )
        return out
    finally:
        await store.close()


async def run(args: argparse.Namespace) -> None:
    """Every engine asked for, in turn."""
    with tempfile.TemporaryDirectory(prefix="samedeal-bench-") as tmp:
        if "sqlite" in args.engines:
            await bench_engine("sqlite", f"sqlite+aiosqlite:///{tmp}/samedeal.db", args)
        if "postgresql" in args.engines:
            if args.database:
                await bench_engine("postgresql", args.database, args)
            else:
                from pg_fixtures import find_pg_bin, pg_cluster

                bindir = find_pg_bin()
                if bindir is None:
                    print("postgresql: not installed, skipped", file=sys.stderr)
                    return
                with pg_cluster(bindir, durable=True) as url:
                    await bench_engine("postgresql", url, args)


def main() -> int:
    """Parse the options and run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engines", nargs="+", default=["sqlite", "postgresql"])
    p.add_argument("--database", metavar="URL", help="an existing PostgreSQL to use")
    p.add_argument("--players", type=int, default=2000)
    p.add_argument("--baseline", type=int, default=1000, help="races one per transaction")
    p.add_argument("--writes", type=int, default=20_000, help="races through the writer")
    p.add_argument("--actions", type=int, default=150, help="actions per racer when timed")
    p.add_argument("--races", type=int, default=200_000, help="races stored before reads")
    p.add_argument("--fill-actions", type=int, default=20, help="actions per racer, fill")
    p.add_argument("--reads", type=int, default=2000, help="requests of each kind timed")
    p.add_argument("--batch", type=int, default=200, help="the writer's largest batch")
    args = p.parse_args()
    try:
        import uvloop  # the server's loop, when installed
    except ImportError:
        asyncio.run(run(args))
    else:
        uvloop.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
