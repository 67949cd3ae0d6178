"""Ratings in the records store, on SQLite and on a real PostgreSQL: written with the rated
race in its transaction, read back for the player page, the chart, the leaderboard and the
pools, dropped with a deleted identity, and rebuilt from the races to the same numbers —
also when two stores write rated races of the same players at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from records_helpers import make_race, query, seat, store
from sqlalchemy import select, update

from server.ratings.glicko import START, Rating
from server.ratings.rules import Racer, Standing, rate_race
from server.records.models import Identity, RaceRecord, SeatRecord
from server.records.store import DAY_MS, SqlRecordsStore
from server.records.tables import rating_changes, ratings

__all__ = ["store"]

ROOT = Path(__file__).resolve().parent.parent
ADDRESS = "192.0.2.7"
NOW = 1_900_000_000_000


async def players(store: SqlRecordsStore, *names: str) -> list[str]:
    made: list[Identity] = [await store.create_player(n, ADDRESS) for n in names]
    return [m.player_id for m in made]


def rated(number: int, *seats_: SeatRecord, **kw: Any) -> RaceRecord:
    return make_race(number, *seats_, rated=True, **kw)


async def tables(store: SqlRecordsStore) -> tuple[list[Any], list[Any]]:
    """Every stored standing and change, in a stable order, ids of changes left out."""
    standings = await query(store, select(ratings).order_by(ratings.c.player_id, ratings.c.game))
    c = rating_changes.c
    changes = await query(
        store,
        select(*(col for col in c if col.name != "id")).order_by(c.race_id, c.seat),
    )
    return [tuple(r) for r in standings], [tuple(r) for r in changes]


async def test_a_rated_race_rates_its_racers_once(store: SqlRecordsStore) -> None:
    ann, bob, cid = await players(store, "Ann", "Bob", "Cid")
    race = rated(
        1,
        seat(1, ann, "won"),
        seat(2, bob, "resigned", score=40),
        seat(3, cid, "resigned", score=40),
        seat(4, None, "resigned"),  # a seat without an identity is left out
    )
    race_id = await store.record_race(race)
    assert await store.record_race(race) == race_id  # written again: rated once
    changes = await store.ratings.of_race(race_id)
    assert [(c.seat, c.player_id) for c in changes] == [(1, ann), (2, bob), (3, cid)]
    expected = rate_race(list(zip((ann, bob, cid), _racers(race)[:3], strict=True)), {})
    assert [c.after for c in changes] == [e.after for e in expected]
    assert all(c.before == START for c in changes)
    mine = await store.ratings.standings(ann)
    assert list(mine) == ["klondike"]
    assert mine["klondike"] == Standing(expected[0].after, 1, 2, 0, 0, 0, race.ended_at)
    bob_now = (await store.ratings.standings(bob))["klondike"]
    assert (bob_now.races, bob_now.won, bob_now.drawn, bob_now.lost) == (1, 0, 1, 1)
    stored = await store.race(race_id)
    assert stored is not None and stored.record.rated and not stored.record.casual


def _racers(race: RaceRecord) -> list[Racer]:
    return [Racer.of(s, s.action_times[-1], race.ended_at - race.started_at) for s in race.seats]


async def test_a_casual_race_changes_no_rating(store: SqlRecordsStore) -> None:
    ann, bob = await players(store, "Ann", "Bob")
    race_id = await store.record_race(make_race(1, seat(1, ann), seat(2, bob, "resigned")))
    assert await store.ratings.of_race(race_id) == []
    assert await store.ratings.standings(ann) == {} and await tables(store) == ([], [])


async def test_ratings_follow_the_races_in_the_order_they_are_written(
    store: SqlRecordsStore,
) -> None:
    ann, bob = await players(store, "Ann", "Bob")
    first = await store.record_race(rated(1, seat(1, ann), seat(2, bob, "resigned")))
    # a batch of two: the second sees the first's ratings
    ids = await store.record_races(
        [
            rated(2, seat(1, ann, "resigned"), seat(2, bob)),
            rated(3, seat(1, ann), seat(2, bob, "resigned"), game="easy-harp"),
        ]
    )
    points = await store.ratings.history(ann, "klondike")
    assert [p.race_id for p in points] == [first, ids[0]]
    assert points[1].before == Rating(points[0].after.rating, points[0].after.rd)
    assert points[1].after.rating < points[0].after.rating  # lost the second
    assert [p.race_id for p in await store.ratings.history(ann, "klondike", limit=1)] == [ids[0]]
    assert set(await store.ratings.standings(ann)) == {"easy-harp", "klondike"}
    both = await store.ratings.standings_of([bob, ann, "nobody-like-this"], "easy-harp")
    assert both[ann].races == 1 and both[bob].races == 1
    assert both["nobody-like-this"] == Standing()
    assert (await store.ratings.standings_of([ann], "klondike-3"))[ann] == Standing()


async def test_the_cooldown_counts_abandoned_rated_races(store: SqlRecordsStore) -> None:
    ann, bob = await players(store, "Ann", "Bob")
    for n in (1, 2):
        await store.record_race(
            rated(n, seat(1, ann, "left"), seat(2, bob), ended_at=NOW - (3 - n) * 60_000)
        )
    assert (await store.ratings.standings(ann))["klondike"].abandoned == 2
    assert await store.ratings.seek_cooldown(ann, now=NOW) == 4 * 60_000  # 5 min after the last
    assert await store.ratings.seek_cooldown(bob, now=NOW) == 0
    assert await store.ratings.seek_cooldown(ann, now=NOW + DAY_MS) == 0


async def test_the_leaderboard_lists_active_established_players(store: SqlRecordsStore) -> None:
    ann, bob, cid, dan, eve = await players(store, "Ann", "Bob", "Cid", "Dan", "Eve")
    await store.set_handle(bob, "bob")
    await store.record_race(rated(1, seat(1, ann), seat(2, bob, "resigned")))
    await store.record_race(rated(2, seat(1, cid), seat(2, dan, "resigned")))
    await store.record_race(rated(3, seat(1, eve), seat(2, ann, "resigned")))
    recent, old = NOW - DAY_MS, NOW - 31 * DAY_MS
    set_to = {
        ann: (1700.0, 60.0, recent),
        bob: (1800.0, 60.0, recent),
        cid: (1900.0, 60.0, old),  # not active
        dan: (2000.0, 200.0, recent),  # provisional
        eve: (1750.0, 60.0, recent),
    }

    def tune(conn: Any) -> None:
        from server.records.races import player_pk

        for pid, (rating, rd, at) in set_to.items():
            conn.execute(
                update(ratings)
                .where(ratings.c.player_id == player_pk(conn, pid))
                .values(rating=rating, rd=rd, last_race_at=at)
            )

    await store.db.write(tune)
    await store.delete_player(eve)  # gone from the board
    board = await store.ratings.leaderboard("klondike", now=NOW)
    assert [(e.rank, e.player_id, e.handle) for e in board] == [(1, bob, "bob"), (2, ann, None)]
    assert board[0].standing.rating == Rating(1800.0, 60.0, board[0].standing.rating.volatility)
    page = await store.ratings.leaderboard("klondike", now=NOW, limit=1, offset=1)
    assert [(e.rank, e.player_id) for e in page] == [(2, ann)]
    assert await store.ratings.leaderboard("easy-harp", now=NOW) == []


async def test_a_deleted_identity_takes_its_ratings_along(store: SqlRecordsStore) -> None:
    ann, bob = await players(store, "Ann", "Bob")
    race_id = await store.record_race(rated(1, seat(1, ann), seat(2, bob, "resigned")))
    await store.delete_player(bob)
    assert await store.ratings.standings(bob) == {}
    assert [c.player_id for c in await store.ratings.of_race(race_id)] == [ann]
    assert (await store.ratings.standings(ann))["klondike"].races == 1  # the race still counts


async def _a_season(store: SqlRecordsStore, ids: list[str]) -> None:
    """Rated races of every size and game, ties, abandonment, a casual one between."""
    a, b, c, d = ids
    await store.record_race(rated(1, seat(1, a), seat(2, b, "resigned"), seat(3, c, "timeout")))
    await store.record_races(
        [
            rated(2, seat(1, a, "resigned"), seat(2, b), seat(3, c), seat(4, d, "left")),
            make_race(3, seat(1, a), seat(2, d, "resigned")),
            rated(4, seat(1, c, "resigned"), seat(2, d, "resigned"), game="easy-harp"),
        ]
    )
    await store.record_race(rated(5, seat(1, b), seat(2, d, "left"), seat(3, None, "resigned")))


async def test_rebuild_gives_the_numbers_the_races_gave(store: SqlRecordsStore) -> None:
    ids = await players(store, "Ann", "Bob", "Cid", "Dan")
    await _a_season(store, ids)
    await store.delete_player(ids[3])  # its races still count for the others
    live = await tables(store)
    assert len(live[0]) == 4 and len(live[1]) == 8  # Dan's 2 and 3 are gone
    check = await store.ratings.rebuild(write=False)
    assert (check.races, check.standings, check.differing) == (4, 4, 0)
    assert await tables(store) == live
    done = await store.ratings.rebuild()
    assert done.differing == 0 and await tables(store) == live
    # a standing changed by hand: found, and put back
    await store.db.write(lambda conn: conn.execute(update(ratings).values(races=99)))
    assert (await store.ratings.rebuild(write=False)).differing == 4
    assert (await store.ratings.rebuild()).differing == 4
    assert await tables(store) == live


async def test_two_stores_rating_the_same_players_at_once_rebuild_the_same(
    store: SqlRecordsStore, records_url: str
) -> None:
    """Two workers' writers rate races that share players, concurrently: the order they
    rated them in is the order a rebuild replays (the players' rows are locked first)."""
    ids = await players(store, "Ann", "Bob", "Cid")
    other = await SqlRecordsStore.open(records_url)
    try:
        races = [
            rated(n, seat(1, ids[n % 3]), seat(2, ids[(n + 1) % 3], "resigned"), room=f"R{n % 4}")
            for n in range(1, 25)
        ]
        await asyncio.gather(
            *(s.record_race(r) for s, r in zip([store, other] * 12, races, strict=True))
        )
    finally:
        await other.close()
    live = await tables(store)
    assert len(live[1]) == 48
    assert (await store.ratings.rebuild(write=False)).differing == 0
    await store.ratings.rebuild()
    assert await tables(store) == live


def _samedeal(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", "ratings", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )


async def test_samedeal_ratings_rebuild(store: SqlRecordsStore, records_url: str) -> None:
    ids = await players(store, "Ann", "Bob", "Cid", "Dan")
    await _a_season(store, ids)
    live = await tables(store)
    url = records_url.replace("sqlite+aiosqlite", "sqlite")
    await store.db.write(lambda conn: conn.execute(update(ratings).values(rating=1.0)))
    dry = await asyncio.to_thread(_samedeal, "rebuild", "--database", url, "--dry-run")
    assert dry.returncode == 1, dry.stderr
    assert "4 rated races, 6 ratings; 6 would differ" in dry.stdout
    done = await asyncio.to_thread(_samedeal, "rebuild", "--database", url)
    assert done.returncode == 0, done.stderr
    assert "6 differed and were replaced" in done.stdout
    assert await tables(store) == live
    again = await asyncio.to_thread(_samedeal, "rebuild", "--database", url, "--dry-run")
    assert again.returncode == 0 and "0 would differ" in again.stdout


@pytest.mark.integration  # a subprocess
def test_samedeal_ratings_rebuild_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    for args in [
        ("rebuild", "--database", "mysql://root@localhost/x"),
        ("rebuild", "--data", str(tmp_path / "a-file")),
        ("rebuild", "--data", str(tmp_path / "empty")),  # never upgraded
        ("rebuild", "--database", "postgresql://u:hunter2@127.0.0.1:1/x"),
    ]:
        done = _samedeal(*args)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("samedeal ratings: "), done.stderr
        assert "hunter2" not in done.stderr and "Traceback" not in done.stderr
