"""A worker killed (SIGKILL) while it writes finished races: no half race, no half batch,
and writing them all again after the crash adds each missing race once — on SQLite and on
a real PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from records_helpers import counts, make_race, seat

from server.records.store import SqlRecordsStore

ROOT = Path(__file__).resolve().parent.parent
BATCH = 5
SEATS = 3

WRITER = f"""
import asyncio, sys
sys.path.insert(0, "tests")
from records_helpers import make_race, seat
from server.records.store import SqlRecordsStore

async def main(url, players):
    store = await SqlRecordsStore.open(url, migrate=False)
    for b in range(100_000):
        races = [
            make_race(b * {BATCH} + i, *(seat(n + 1, p) for n, p in enumerate(players)))
            for i in range({BATCH})
        ]
        await store.record_races(races)
        print(b, flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2:]))
"""


def _batch(b: int, players: list[str]) -> list:  # type: ignore[type-arg]
    return [
        make_race(b * BATCH + i, *(seat(n + 1, p) for n, p in enumerate(players)))
        for i in range(BATCH)
    ]


async def test_sigkill_mid_write_leaves_whole_races_and_a_retry_adds_no_duplicate(
    records_url: str,
) -> None:
    store = await SqlRecordsStore.open(records_url)
    try:
        players = [(await store.create_player(f"p{i}", "192.0.2.3")).player_id for i in range(3)]
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, records_url, *players],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        committed = -1
        try:
            # let it commit a few batches, then kill it wherever it is
            while committed < 6 and time.monotonic() < deadline:
                line = proc.stdout.readline()
                if not line:
                    break
                committed = int(line)
            time.sleep(0.013)  # the scenario: the kill lands somewhere in a later batch
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.kill()
            proc.wait()
        assert committed >= 6, proc.stderr.read() if proc.stderr else ""

        n_races, n_seats, played = await counts(store)
        assert n_races % BATCH == 0, "a batch was half written"
        assert n_races >= (committed + 1) * BATCH
        assert n_seats == SEATS * n_races and played == SEATS * n_races
        for pid in players:
            assert len(await store.recent_races(pid, limit=100)) == min(n_races, 100)

        # the retry after the crash: every batch again, and some the writer never reached
        batches = n_races // BATCH + 3
        for b in range(batches):
            await store.record_races(_batch(b, players))
        assert await counts(store) == (
            batches * BATCH,
            batches * BATCH * SEATS,
            batches * BATCH * SEATS,
        )
        stats = await store.stats(players[0])
        assert stats[0].played == stats[0].won == stats[0].current_streak == batches * BATCH
    finally:
        await store.close()
