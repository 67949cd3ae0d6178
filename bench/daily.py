"""Daily challenge benchmark (issue 15): the leaderboard and a player's own place with a
full day, and a thousand players starting the day's deal within one second.

1. The store, on SQLite and PostgreSQL: ``--attempts`` attempts of one day (100,000 by
   default; players and attempts written in bulk), then ``--reads`` leaderboard pages (the
   top 100) and own places (a random player's rank): p50 / p99. Goals: the page p99 ≤ 20 ms,
   the own place p99 ≤ 5 ms.
2. The server: ``samedeal serve`` (memory store, records in SQLite) and ``--starters``
   identified players (1,000), each in a room of their own on the day's deal; the starts
   are spread over one second and each ``start`` is timed from its send to its ``ok``
   (the attempt is written to the records before the race may start). Goal: p99 ≤ 100 ms.

Everything on 127.0.0.1; the server's clock is moved to a known day with the fair-deals
test key, so the day's proof costs the same every run (it is done before the timing).

    python bench/daily.py                                   # both parts, both engines
    python bench/daily.py --engines sqlite --attempts 20000 # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import gc
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from sqlalchemy import Connection, insert, select  # noqa: E402

from server.records.daily import rank_key  # noqa: E402
from server.records.store import SqlRecordsStore  # noqa: E402
from server.records.tables import daily_attempts, daily_scores, players  # noqa: E402

__all__ = ["main"]

DAY = "2026-04-16"
GAME = "klondike"


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def _fill(conn: Connection, count: int, seed: int) -> list[str]:
    """``count`` players and their attempts of the day, in bulk; their public ids."""
    rng = random.Random(seed)
    ids = ["p" + f"{i:015d}" for i in range(count)]
    chunk = 5000
    for start in range(0, count, chunk):
        part = ids[start : start + chunk]
        conn.execute(
            insert(players),
            [
                {
                    "public_id": pid,
                    "secret_hash": None,
                    "recovery_hash": None,
                    "name": f"player {start + i}",
                    "handle": None,
                    "handle_key": None,
                    "created_at": 0,
                    "deleted_at": None,
                }
                for i, pid in enumerate(part)
            ],
        )
    found = conn.execute(select(players.c.public_id, players.c.id))
    pks = {pid: pk for pid, pk in found}
    rows = []
    scores: dict[int, int] = {}
    for pid in ids:
        won = rng.random() < 0.3
        score = rng.randrange(0, 1300)
        moves = rng.randrange(80, 400)
        elapsed = rng.randrange(60_000, 900_000) if won else None
        scores[score] = scores.get(score, 0) + 1
        rows.append(
            {
                "player_id": pks[pid],
                "game": GAME,
                "day": DAY,
                "ranked": True,
                "status": "won" if won else rng.choice(["resigned", "timeout", "left"]),
                "room": "BENCH1",
                "room_created_at": 0,
                "race_no": 1,
                "score": score,
                "moves": moves,
                "on_foundations": 52 if won else rng.randrange(0, 52),
                "deck_turns": rng.randrange(0, 6),
                "elapsed_ms": elapsed,
                "rank_key": rank_key(score, moves, elapsed),
                "race_public_id": None,
                "started_at": rng.randrange(0, 86_400_000),
                "ended_at": 1,
            }
        )
        if len(rows) == chunk:
            conn.execute(insert(daily_attempts), rows)
            rows = []
    if rows:
        conn.execute(insert(daily_attempts), rows)
    # the day's score counts, as ending the attempts one by one keeps them
    conn.execute(
        insert(daily_scores),
        [
            {"game": GAME, "day": DAY, "score": score, "attempts": n}
            for score, n in sorted(scores.items())
        ],
    )
    return ids


async def bench_store(name: str, url: str, args: argparse.Namespace) -> None:
    """The leaderboard page and own places with ``--attempts`` attempts of one day."""
    store = await SqlRecordsStore.open(url)
    try:
        t = time.perf_counter()
        ids = await store.db.write(_fill, args.attempts, 7)
        if url.startswith("postgresql"):
            # the planner's statistics, as autovacuum keeps them on a server that has run
            # for a while (right after a bulk fill it knows of no rows, and plans for none)
            await store.db.write(lambda conn: conn.exec_driver_sql("ANALYZE"))
        fill = time.perf_counter() - t
        rng = random.Random(3)
        pages, places = [], []
        for _ in range(args.reads):
            t = time.perf_counter()
            board = await store.daily.leaderboard(GAME, DAY, limit=100)
            pages.append(time.perf_counter() - t)
            assert len(board) == 100
            t = time.perf_counter()
            mine = await store.daily.own_entry(GAME, DAY, rng.choice(ids))
            places.append(time.perf_counter() - t)
            assert mine is not None and mine.rank >= 1
        print(
            f"{name:10s} {args.attempts} attempts (fill {fill:.0f} s): leaderboard page "
            f"p50 {statistics.median(pages) * 1000:.2f} ms p99 {_pct(pages, 0.99) * 1000:.2f} ms"
            f" | own place p50 {statistics.median(places) * 1000:.2f} ms "
            f"p99 {_pct(places, 0.99) * 1000:.2f} ms",
            flush=True,
        )
    finally:
        await store.close()


async def bench_starts(args: argparse.Namespace, tmp: str) -> None:
    """``--starters`` players start the day's deal within one second."""
    from server_fixtures import free_port, wait_port

    from clients.client import RaceClient

    key_file = Path(tmp) / "daily.key"
    key_file.write_text(bytes(range(32)).hex())
    offset = dt.datetime.fromisoformat(f"{DAY}T12:00:00+00:00").timestamp() - time.time()
    port = free_port()
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(port)]
    argv += ["--data", str(Path(tmp) / "starts"), "--daily-key-file", str(key_file)]
    argv += ["--clock-offset", str(offset), "--identity-limit", "1000000"]
    argv += ["--rate", "1000000", "--burst", "1000000", "--countdown", "0.5"]
    argv += ["--log-level", "WARNING"]
    proc = subprocess.Popen(argv, cwd=ROOT)
    try:
        wait_port(port, 30)
        url = f"ws://127.0.0.1:{port}"
        clients = []
        for i in range(args.starters):
            client = await RaceClient.connect(url)
            await client.new_player(f"starter {i}")
            clients.append(client)
        # the day's proof, before the timing (samedeal serve started it at once)
        await clients[0].create(GAME, deal="daily")
        for client in clients[1:]:
            await client.create(GAME, deal="daily")
        # the load's own collector pauses (1,000 clients' objects) are not the server's
        gc.collect()
        gc.freeze()
        laps: list[float] = []

        async def start(client: RaceClient, at: float) -> None:
            await asyncio.sleep(at)
            t = time.perf_counter()
            await client.start()
            laps.append(time.perf_counter() - t)

        spread = [random.Random(i).random() for i in range(len(clients))]
        t0 = time.perf_counter()
        await asyncio.gather(*(start(c, at) for c, at in zip(clients, spread, strict=True)))
        took = time.perf_counter() - t0
        print(
            f"starts     {len(laps)} players within {took:.2f} s: start p50 "
            f"{statistics.median(laps) * 1000:.1f} ms p99 {_pct(laps, 0.99) * 1000:.1f} ms "
            f"max {max(laps) * 1000:.1f} ms",
            flush=True,
        )
        for client in clients:
            await client.close()
    finally:
        proc.terminate()
        proc.wait(30)


async def run(args: argparse.Namespace) -> None:
    """The parts asked for."""
    with tempfile.TemporaryDirectory(prefix="samedeal-bench-") as tmp:
        if "sqlite" in args.engines:
            await bench_store("sqlite", f"sqlite:///{tmp}/board.db", args)
        if "postgresql" in args.engines:
            from pg_fixtures import find_pg_bin, pg_cluster

            bindir = find_pg_bin()
            if bindir is None:
                print("postgresql: not installed, skipped", file=sys.stderr)
            else:
                with pg_cluster(bindir, durable=True) as url:
                    await bench_store("postgresql", url, args)
        if args.starters:
            await bench_starts(args, tmp)


def main() -> int:
    """Parse the options and run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engines", nargs="*", default=["sqlite", "postgresql"])
    p.add_argument("--attempts", type=int, default=100_000)
    p.add_argument("--reads", type=int, default=500)
    p.add_argument("--starters", type=int, default=1000)
    args = p.parse_args()
    try:
        import uvloop

        uvloop.run(run(args))
    except ImportError:
        asyncio.run(run(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
