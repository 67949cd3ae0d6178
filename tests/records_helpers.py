"""Helpers of the records tests: races made to order, the store on a fresh database."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest_asyncio
from sqlalchemy import Connection, Executable, Row, func, select

from server.records.models import RaceRecord, SeatRecord
from server.records.store import SqlRecordsStore
from server.records.tables import player_stats, races, seats

__all__ = ["counts", "make_race", "query", "seat", "store"]


def seat(
    number: int,
    player_id: str | None = None,
    status: str = "won",
    *,
    rank: int | None = None,
    score: int = 100,
    elapsed_ms: int | None = 60_000,
    actions: tuple[str, ...] = ("s", "w-t3"),
) -> SeatRecord:
    """A seat; a finishing time only for a win unless given."""
    return SeatRecord(
        seat=number,
        name=f"Racer {number}",
        status=status,  # type: ignore[arg-type]
        rank=rank if rank is not None else number,
        score=score,
        moves=len(actions),
        on_foundations=52 if status == "won" else 7,
        elapsed_ms=elapsed_ms if status == "won" else None,
        actions=actions,
        action_times=tuple(100 * (i + 1) for i in range(len(actions))),
        player_id=player_id,
    )


def make_race(
    number: int,
    *seats_: SeatRecord,
    room: str = "K7QF2M",
    game: str = "klondike",
    ended_at: int | None = None,
    casual: bool = True,
    **options: Any,
) -> RaceRecord:
    """Race ``number`` of one room (ended in that order unless ``ended_at`` is given);
    ``rated=True`` makes it a rated race (kept for good)."""
    end = ended_at if ended_at is not None else 1_000_000 + number * 1000
    return RaceRecord(
        room=room,
        room_created_at=options.get("room_created_at", 500),
        race=number,
        game=game,
        deal="KL1-1-AAAAAAK" if game.startswith("klondike") else "EH1-N-AAAAAAH",
        started_at=end - 900,
        ended_at=end,
        seats=seats_ or (seat(1), seat(2, status="resigned")),
        casual=casual and not options.get("rated", False),
        rated=options.get("rated", False),
    )


async def counts(store: SqlRecordsStore) -> tuple[int, int, int]:
    """(races, seats, sum of played in the stats) as stored."""

    def count(conn: Connection) -> tuple[int, int, int]:
        n_races = conn.execute(select(func.count()).select_from(races)).scalar_one()
        n_seats = conn.execute(select(func.count()).select_from(seats)).scalar_one()
        played = conn.execute(select(func.sum(player_stats.c.played))).scalar()
        return n_races, n_seats, int(played or 0)

    return await store.db.read(count)


async def query(store: SqlRecordsStore, statement: Executable) -> list[Row[Any]]:
    """The rows of a Core statement, read straight from the store's database."""

    def run(conn: Connection) -> list[Row[Any]]:
        return list(conn.execute(statement))

    return await store.db.read(run)


@pytest_asyncio.fixture
async def store(records_url: str) -> AsyncIterator[SqlRecordsStore]:
    """The store on a fresh database (SQLite, then PostgreSQL)."""
    opened = await SqlRecordsStore.open(records_url)
    try:
        yield opened
    finally:
        await opened.close()
