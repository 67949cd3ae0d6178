"""Finished races in the records store: idempotent writes, reads, stats and streaks,
retention, the background writer — on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from helpers import until
from records_helpers import counts, make_race, seat, store

from server.records.models import BadDatabase, BadRecord, PlayerStats, RaceRecord, SeatRecord
from server.records.store import DAY_MS, SqlRecordsStore, purge_periodically
from server.records.writer import RaceWriter

__all__ = ["store"]

ADDRESS = "192.0.2.1"


async def test_a_race_reads_back_as_written(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    await store.set_handle(ada.player_id, "ada")
    race = make_race(
        3,
        seat(2, None, "resigned", rank=2, score=15, actions=("s", "s", "u", "w-t3")),
        seat(1, ada.player_id, "won", rank=1, actions=("t1-f", "a")),
        seat(3, None, "left", rank=3, actions=()),
    )
    race_id = await store.record_race(race)
    stored = await store.race(race_id)
    assert stored is not None and stored.race_id == race_id
    got = stored.record
    assert (got.room, got.room_created_at, got.race, got.game, got.deal) == (
        race.room,
        race.room_created_at,
        3,
        race.game,
        race.deal,
    )
    assert (got.started_at, got.ended_at, got.casual) == (race.started_at, race.ended_at, True)
    assert [s.seat for s in got.seats] == [1, 2, 3]
    first = got.seats[0]
    assert first.player_id == ada.player_id and first.handle == "ada"
    assert first.actions == ("t1-f", "a") and first.action_times == (100, 200)
    second = got.seats[1]
    assert (second.status, second.score, second.elapsed_ms) == ("resigned", 15, None)
    assert second.actions == ("s", "s", "u", "w-t3") and second.player_id is None
    assert got.seats[2].actions == () and got.seats[2].status == "left"


async def test_unknown_race_ids_find_nothing(store: SqlRecordsStore) -> None:
    for bad in ["", "x" * 12, "' OR 1=1 --", "abcdefghjkmn", "A" * 10_000]:
        assert await store.race(bad) is None


async def test_the_same_race_twice_is_written_once(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    race = make_race(1, seat(1, ada.player_id), seat(2))
    first = await store.record_race(race)
    assert await store.record_race(race) == first
    assert await store.record_races([race, make_race(2), race]) == [
        first,
        await store.record_race(make_race(2)),
        first,
    ]
    assert await counts(store) == (2, 4, 1)
    # another room, or the same room code made again later, is another race
    await store.record_race(make_race(1, room="ZZZZZZ"))
    await store.record_race(make_race(1, room_created_at=999))
    assert (await counts(store))[0] == 4


async def test_bad_records_are_refused_before_the_database(store: SqlRecordsStore) -> None:
    with pytest.raises(BadRecord):
        seat(1, status="gave-up")
    with pytest.raises(BadRecord):
        SeatRecord(1, "x", "won", 1, 0, 0, 0, None, ("s",), ())
    with pytest.raises(BadRecord):
        SeatRecord(1, "x", "won", 1, 0, 0, 0, None, ("s w-t3",), (1,))
    with pytest.raises(BadRecord):
        make_race(1, seat(1), seat(1))
    with pytest.raises(BadRecord):
        make_race(1, room="R" * 9)
    with pytest.raises(BadRecord):
        make_race(1, game="chess")
    assert await counts(store) == (0, 0, 0)


# --------------------------------------------------------------------- stats


def _fold(results: list[tuple[str, int, int | None]]) -> PlayerStats:
    """Stats by hand: (status, score, elapsed) in the order the races ended."""
    won = [r for r in results if r[0] == "won"]
    current = longest = 0
    for status, _, _ in results:
        current = current + 1 if status == "won" else 0
        longest = max(longest, current)
    return PlayerStats(
        game="klondike",
        played=len(results),
        won=len(won),
        best_time_ms=min((t for _, _, t in won if t is not None), default=None),
        best_score=max(s for _, s, _ in results),
        current_streak=current,
        longest_streak=longest,
    )


async def test_stats_and_streaks_hand_worked(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    pid = ada.player_id
    # won 100 s, won 80 s, won 150 s, resigned (best score), won 120 s, timeout:
    # 6 played, 4 won (66.7 %), best 80 s, best score 70, streak 0, longest 3
    plan = [
        ("won", 50, 100_000),
        ("won", 40, 80_000),
        ("won", 45, 150_000),
        ("resigned", 70, None),
        ("won", 30, 120_000),
        ("timeout", 5, None),
    ]
    races = [
        make_race(i, seat(1, pid, status, score=score, elapsed_ms=t), seat(2))
        for i, (status, score, t) in enumerate(plan, 1)
    ]
    shuffled = races[:]
    random.Random(4).shuffle(shuffled)
    await store.record_races(shuffled)  # one batch, any order: folded in the order they ended
    await store.record_race(make_race(9, seat(1, pid, "left"), game="easy-harp"))
    easy_harp, klondike = await store.stats(pid)  # by game name
    assert klondike == PlayerStats("klondike", 6, 4, 80_000, 70, 0, 3)
    assert klondike.win_pct == 66.7
    assert easy_harp == PlayerStats("easy-harp", 1, 0, None, 100, 0, 0)
    assert easy_harp.win_pct == 0.0
    # two more wins: the current streak is 2, the longest still 3; then 2 more: 4
    for i in (10, 11):
        await store.record_race(make_race(i, seat(1, pid, "won", score=10, elapsed_ms=90_000)))
    assert (await store.stats(pid))[1] == PlayerStats("klondike", 8, 6, 80_000, 70, 2, 3)
    await store.record_races([make_race(i, seat(1, pid, "won", score=1)) for i in (12, 13)])
    assert (await store.stats(pid))[1] == PlayerStats("klondike", 10, 8, 60_000, 70, 4, 4)
    # a race written again changes nothing
    await store.record_races(races)
    assert (await store.stats(pid))[1].played == 10


async def test_stats_match_a_fold_of_random_histories(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    rng = random.Random(11)
    history: list[tuple[str, int, int | None]] = []
    batch = []
    for i in range(1, 61):
        status = rng.choice(["won", "won", "resigned", "timeout", "left"])
        score = rng.randrange(0, 500)
        t = rng.randrange(30_000, 300_000)
        history.append((status, score, t if status == "won" else None))
        batch.append(make_race(i, seat(1, ada.player_id, status, score=score, elapsed_ms=t)))
        if rng.random() < 0.3:
            await store.record_races(batch)
            batch = []
    await store.record_races(batch)
    assert await store.stats(ada.player_id) == [_fold(history)]


async def test_recent_races_latest_first_paged(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    bob = await store.create_player("Bob", ADDRESS)
    ids_by_number = {}
    for i in range(1, 8):
        racers = [seat(1, ada.player_id, "won" if i % 2 else "resigned", score=i)]
        if i <= 3:
            racers.append(seat(2, bob.player_id, "timeout", rank=2))
        ids_by_number[i] = await store.record_race(make_race(i, *racers))
    page = await store.recent_races(ada.player_id, limit=3)
    assert [r.race_id for r in page] == [ids_by_number[i] for i in (7, 6, 5)]
    assert page[0].status == "won" and page[1].status == "resigned" and page[0].score == 7
    assert [r.racers for r in page] == [1, 1, 1]
    rest = await store.recent_races(ada.player_id, limit=3, offset=3)
    assert [r.race_id for r in rest] == [ids_by_number[i] for i in (4, 3, 2)]
    assert rest[1].racers == 2
    bobs = await store.recent_races(bob.player_id)
    assert [(r.race_id, r.seat, r.rank, r.status) for r in bobs] == [
        (ids_by_number[i], 2, 2, "timeout") for i in (3, 2, 1)
    ]
    assert len(await store.recent_races(ada.player_id, limit=10_000)) == 7
    assert await store.recent_races("nobody") == []


# --------------------------------------------------------------------- retention


async def test_purge_removes_old_casual_races_only(records_url: str) -> None:
    store = await SqlRecordsStore.open(records_url, retention_days=30)
    try:
        ada = await store.create_player("Ada", ADDRESS)
        now = 100 * DAY_MS
        old = [
            make_race(i, seat(1, ada.player_id), ended_at=now - 31 * DAY_MS + i) for i in range(5)
        ]
        kept = make_race(10, seat(1, ada.player_id), ended_at=now - 29 * DAY_MS)
        ranked = make_race(11, seat(1, ada.player_id), ended_at=now - 300 * DAY_MS, casual=False)
        old_ids = await store.record_races(old)
        kept_ids = await store.record_races([kept, ranked])
        stats = await store.stats(ada.player_id)
        assert await store.purge(now=now) == 5
        assert await store.purge(now=now) == 0
        assert [await store.race(i) for i in old_ids] == [None] * 5
        assert all([await store.race(i) for i in kept_ids])
        assert await counts(store) == (2, 2, 7)
        assert await store.stats(ada.player_id) == stats  # results are kept
        assert await store.authenticate(ada.player_id, ada.secret) is not None
    finally:
        await store.close()


async def test_no_retention_keeps_everything(records_url: str) -> None:
    store = await SqlRecordsStore.open(records_url, retention_days=None)
    try:
        await store.record_race(make_race(1, ended_at=0))
        assert await store.purge(now=10**15) == 0
        assert (await counts(store))[0] == 1
    finally:
        await store.close()


# --------------------------------------------------------------------- the writer


async def test_the_writer_batches_and_answers_every_race(
    store: SqlRecordsStore, records_url: str
) -> None:
    ada = await store.create_player("Ada", ADDRESS)
    async with RaceWriter(records_url, max_batch=50) as writer:
        futures: list[asyncio.Future[str]] = []

        def submit(race: RaceRecord) -> None:
            future = writer.submit(race)
            assert future is not None  # far below the writer's bound
            futures.append(future)

        for burst in range(4):
            for i in range(100):
                number = burst * 100 + i
                submit(make_race(number, seat(1, ada.player_id)))
            await asyncio.sleep(0)  # the scenario: a burst a turn of the loop
        submit(make_race(0, seat(1, ada.player_id)))  # a duplicate
        race_ids = await asyncio.gather(*futures)
    assert race_ids[-1] == race_ids[0] and len(set(race_ids)) == 400
    assert writer.written == 401 and writer.pending == 0
    assert 8 <= writer.batches < 401
    assert await counts(store) == (400, 400, 400)
    assert (await store.race(race_ids[123])) is not None


async def test_close_writes_what_is_queued(store: SqlRecordsStore, records_url: str) -> None:
    writer = RaceWriter(records_url)
    await writer.start()
    for i in range(30):
        writer.submit(make_race(i))
    await writer.close()
    assert (await counts(store))[0] == 30 and writer.pending == 0
    with pytest.raises(RuntimeError):
        writer.submit(make_race(31))


async def test_a_writer_that_cannot_open_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(BadDatabase):
        await RaceWriter("mysql://nowhere/x").start()
    # a database never migrated: the writer refuses nothing at start, and a race it
    # cannot write is retried, not lost — here the table appears once migrated
    url = f"sqlite+aiosqlite:///{tmp_path / 'late.db'}"
    async with RaceWriter(url) as writer:
        future = writer.submit(make_race(1))
        assert future is not None
        await until(lambda: "trying again" in caplog.text)  # it failed once
        assert not future.done() and writer.pending == 1
        late = await SqlRecordsStore.open(url)
        race_id = await asyncio.wait_for(future, 30)
    try:
        assert await late.race(race_id) is not None
    finally:
        await late.close()


async def test_purge_periodically_purges_until_cancelled(records_url: str) -> None:
    store = await SqlRecordsStore.open(records_url, retention_days=1)
    try:
        await store.record_race(make_race(1, ended_at=0))
        task = asyncio.create_task(purge_periodically(store, every=0.05))

        async def purged() -> bool:
            return (await counts(store))[0] == 0

        await until(purged)
        await store.record_race(make_race(2, ended_at=0))
        await until(purged)  # and again: it goes on purging
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        await store.close()
