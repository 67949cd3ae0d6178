"""Writing and reading finished races: Core statements on a connection the store opened.

A batch of races is written in the caller's one transaction: a crash anywhere in it leaves
none of it. The natural key ``(room, room_created_at, race_no)`` (unique) makes a second
write of the same race a no-op, so a retry after a crash or a lost reply never duplicates
a race, its seats or its stats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Insert, and_, case, delete, select

from . import identity as ids
from .daily import end_attempts
from .models import PlayerStats, RaceRecord, RaceSummary, SeatRecord, StoredRace
from .ratings import lock_racers, rate_races
from .tables import dialect_insert, player_stats, players, races, seats

__all__ = [
    "PURGE_CHUNK",
    "player_pk",
    "purge_chunk",
    "read_race",
    "read_recent",
    "read_stats",
    "write_races",
]

PURGE_CHUNK = 1000
NAME_MAX = 64


# --------------------------------------------------------------------- writes


def write_races(conn: Connection, batch: Sequence[RaceRecord]) -> list[str]:
    """Write the races not written yet; the public id of every race of ``batch``.

    Which races exist is read first (by room: the unique index's prefix), then the new
    ones are inserted in multi-row statements. On SQLite the transaction holds the write
    lock from its start, so nobody can write the same race in between; on PostgreSQL a
    worker that does makes this transaction fail on the unique key, and the caller retries.
    """
    unique = list({race.key: race for race in reversed(batch)}.values())[::-1]
    by_key = _existing(conn, unique)
    fresh = [race for race in unique if race.key not in by_key]
    if fresh:
        # before the races get their row ids: rated races sharing a racer take them in the
        # order their ratings change (a rebuild replays them in that order)
        lock_racers(conn, fresh)
        rows: list[dict[str, Any]] = [
            {
                "public_id": ids.new_race_id(),
                "room": r.room,
                "room_created_at": r.room_created_at,
                "race_no": r.race,
                "game": r.game,
                "deal": r.deal,
                "casual": r.casual,
                "started_at": r.started_at,
                "ended_at": r.ended_at,
                "racers": len(r.seats),
                "daily_day": r.daily_day,
                "rated": r.rated,
            }
            for r in fresh
        ]
        result = conn.execute(
            races.insert().returning(races.c.id, sort_by_parameter_order=True), rows
        )
        new = {
            race.key: player_row_id
            for race, player_row_id in zip(fresh, result.scalars(), strict=True)
        }
        by_key.update((race.key, row["public_id"]) for race, row in zip(fresh, rows, strict=True))
        player_ids, deleted = _player_keys(conn, fresh)
        conn.execute(seats.insert(), _seat_rows(fresh, new, player_ids, deleted))
        stat_rows = _stat_rows(fresh, player_ids)
        if stat_rows:
            conn.execute(_stats_upsert(conn), stat_rows)
        rate_races(conn, fresh, new, player_ids)
        daily = [(race, by_key[race.key]) for race in fresh if race.daily_day is not None]
        if daily:
            end_attempts(conn, daily, player_ids)
    return [by_key[race.key] for race in batch]


def _existing(conn: Connection, batch: Sequence[RaceRecord]) -> dict[tuple[str, int, int], str]:
    """The public ids of the races of ``batch`` already written."""
    wanted = {race.key for race in batch}
    result = conn.execute(
        select(races.c.room, races.c.room_created_at, races.c.race_no, races.c.public_id).where(
            races.c.room.in_(sorted({race.room for race in batch}))
        )
    )
    return {
        (room, created, number): public_id
        for room, created, number, public_id in result
        if (room, created, number) in wanted
    }


def _player_keys(
    conn: Connection, batch: Sequence[RaceRecord]
) -> tuple[dict[str, int], dict[str, int]]:
    """The racers' rows by public id: the live players', and the deleted ones' (a player
    who deleted their identity during the race: their seat is written without it, under
    the name their past seats now have, and counts in no stats)."""
    wanted = {
        s.player_id
        for race in batch
        for s in race.seats
        if s.player_id is not None and ids.is_player_id(s.player_id)
    }
    if not wanted:
        return {}, {}
    result = conn.execute(
        select(players.c.public_id, players.c.id, players.c.deleted_at).where(
            players.c.public_id.in_(sorted(wanted))
        )
    )
    live: dict[str, int] = {}
    deleted: dict[str, int] = {}
    for public_id, player_row_id, deleted_at in result:
        (live if deleted_at is None else deleted)[public_id] = player_row_id
    return live, deleted


def _seat_rows(
    fresh: Sequence[RaceRecord],
    new: dict[tuple[str, int, int], int],
    player_ids: dict[str, int],
    deleted: dict[str, int],
) -> list[dict[str, Any]]:
    return [
        {
            "race_id": new[race.key],
            "seat": s.seat,
            "player_id": player_ids.get(s.player_id) if s.player_id else None,
            "name": ids.DELETED_NAME if s.player_id in deleted else s.name[:NAME_MAX],
            "status": s.status,
            "rank": s.rank,
            "score": s.score,
            "moves": s.moves,
            "on_foundations": s.on_foundations,
            "elapsed_ms": s.elapsed_ms,
            "actions": " ".join(s.actions),
            "action_times": " ".join(map(str, s.action_times)),
            "game": race.game,
            "ended_at": race.ended_at,
            "deck_turns": s.deck_turns,
        }
        for race in fresh
        for s in race.seats
    ]


def _stat_rows(fresh: Sequence[RaceRecord], player_ids: dict[str, int]) -> list[dict[str, Any]]:
    # in the order the races ended: streaks count races in a row
    rows = []
    for race in sorted(fresh, key=lambda r: (r.ended_at, r.key)):
        for s in race.seats:
            player_row_id = player_ids.get(s.player_id) if s.player_id else None
            if player_row_id is None:
                continue
            won = s.status == "won"
            rows.append(
                {
                    "player_id": player_row_id,
                    "game": race.game,
                    "played": 1,
                    "won": int(won),
                    "best_time_ms": s.elapsed_ms if won else None,
                    "best_score": s.score,
                    "current_streak": int(won),
                    "longest_streak": int(won),
                }
            )
    return rows


def _stats_upsert(conn: Connection) -> Insert:
    """One seat's result folded into the player's stats: executed once per row, in order
    (executemany), so a player twice in a batch is counted twice, in order."""
    insert = dialect_insert(conn, player_stats)
    new, old = insert.excluded, player_stats.c
    streak = old.current_streak + 1
    stmt: Insert = insert.on_conflict_do_update(
        index_elements=[old.player_id, old.game],
        set_={
            "played": old.played + 1,
            "won": old.won + new.won,
            "best_time_ms": case(
                (new.best_time_ms.is_(None), old.best_time_ms),
                (old.best_time_ms.is_(None), new.best_time_ms),
                (new.best_time_ms < old.best_time_ms, new.best_time_ms),
                else_=old.best_time_ms,
            ),
            "best_score": case(
                (new.best_score > old.best_score, new.best_score), else_=old.best_score
            ),
            "current_streak": case((new.won == 1, streak), else_=0),
            "longest_streak": case(
                (and_(new.won == 1, streak > old.longest_streak), streak),
                else_=old.longest_streak,
            ),
        },
    )
    return stmt


def purge_chunk(conn: Connection, cutoff: int) -> int:
    """Delete up to :data:`PURGE_CHUNK` casual races that ended before ``cutoff``, with
    their seats; how many."""
    result = conn.execute(
        select(races.c.id)
        .where(races.c.casual.is_(True), races.c.ended_at < cutoff)
        .order_by(races.c.ended_at)
        .limit(PURGE_CHUNK)
    )
    doomed = list(result.scalars())
    if doomed:
        conn.execute(delete(seats).where(seats.c.race_id.in_(doomed)))
        conn.execute(delete(races).where(races.c.id.in_(doomed)))
    return len(doomed)


# --------------------------------------------------------------------- reads


def read_race(conn: Connection, race_id: str) -> StoredRace | None:
    """The race with this public id, seats in seat order."""
    race = (conn.execute(select(races).where(races.c.public_id == race_id))).first()
    if race is None:
        return None
    result = conn.execute(
        select(
            seats,
            players.c.public_id.label("player_public_id"),
            players.c.handle,
            players.c.deleted_at,
        )
        .select_from(seats.outerjoin(players, seats.c.player_id == players.c.id))
        .where(seats.c.race_id == race.id)
        .order_by(seats.c.seat)
    )
    seat_records = tuple(
        SeatRecord(
            seat=row.seat,
            name=row.name,
            status=row.status,
            rank=row.rank,
            score=row.score,
            moves=row.moves,
            on_foundations=row.on_foundations,
            elapsed_ms=row.elapsed_ms,
            actions=tuple(row.actions.split()),
            action_times=tuple(int(t) for t in row.action_times.split()),
            player_id=row.player_public_id,
            handle=row.handle,
            player_deleted=row.deleted_at is not None,
            deck_turns=row.deck_turns,
        )
        for row in result
    )
    record = RaceRecord(
        room=race.room,
        room_created_at=race.room_created_at,
        race=race.race_no,
        game=race.game,
        deal=race.deal,
        started_at=race.started_at,
        ended_at=race.ended_at,
        seats=seat_records,
        casual=race.casual,
        daily_day=race.daily_day,
        rated=race.rated,
    )
    return StoredRace(race_id=race.public_id, record=record)


def player_pk(conn: Connection, player_id: str) -> int | None:
    """The row id of the player with this public id."""
    found = conn.execute(select(players.c.id).where(players.c.public_id == player_id))
    player_row_id: int | None = found.scalar()
    return player_row_id


def read_recent(conn: Connection, player_row_id: int, limit: int, offset: int) -> list[RaceSummary]:
    """A player's races (by row id), the latest first."""
    result = conn.execute(
        select(
            races.c.public_id,
            seats.c.game,
            races.c.deal,
            seats.c.ended_at,
            races.c.racers,
            seats.c.seat,
            seats.c.status,
            seats.c.rank,
            seats.c.score,
            seats.c.moves,
            seats.c.on_foundations,
            seats.c.elapsed_ms,
            races.c.daily_day,
        )
        .select_from(seats.join(races, races.c.id == seats.c.race_id))
        .where(seats.c.player_id == player_row_id)
        .order_by(seats.c.ended_at.desc(), seats.c.race_id.desc())
        .limit(limit)
        .offset(offset)
    )
    return [
        RaceSummary(
            race_id=row.public_id,
            game=row.game,
            deal=row.deal,
            ended_at=row.ended_at,
            racers=row.racers,
            seat=row.seat,
            status=row.status,
            rank=row.rank,
            score=row.score,
            moves=row.moves,
            on_foundations=row.on_foundations,
            elapsed_ms=row.elapsed_ms,
            daily_day=row.daily_day,
        )
        for row in result
    ]


def read_stats(conn: Connection, player_row_id: int) -> list[PlayerStats]:
    """A player's stats (by row id) per game."""
    result = conn.execute(
        select(player_stats)
        .where(player_stats.c.player_id == player_row_id)
        .order_by(player_stats.c.game)
    )
    return [
        PlayerStats(
            game=row.game,
            played=row.played,
            won=row.won,
            best_time_ms=row.best_time_ms,
            best_score=row.best_score,
            current_streak=row.current_streak,
            longest_streak=row.longest_streak,
        )
        for row in result
    ]
