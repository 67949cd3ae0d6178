"""Ratings in the records store: Core statements on a connection the store opened.

A rated race changes its racers' ratings in the transaction that writes it
(:func:`rate_races`, called by :func:`server.records.races.write_races`): the rules are
:mod:`server.ratings.rules`'. Each racer's standing in the game (``ratings``) is read, the
race rated as one rating period, the new standings written and every change kept
(``rating_changes``). :func:`rebuild` computes them all again from the rated races, in the
order of their row ids — the order they were rated in: on PostgreSQL a transaction writing
rated races first locks its racers' player rows (:func:`lock_racers`), so of two races that
share a racer the one rated first also took its row id first; SQLite writes one
transaction at a time. Rebuilt from the same races, the numbers are the same to the bit.

A deleted identity's ratings and changes are dropped (:func:`forget`); the others' changes
made in races against it stay, and a rebuild still counts its races (the seats keep their
player), so a rebuild agrees.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from sqlalchemy import Connection, Row, delete, select

from ..ratings.glicko import Rating
from ..ratings.rules import PROVISIONAL_RD, Racer, Standing, rate_race
from .models import RaceRecord
from .tables import dialect_insert, players, races, rating_changes, ratings, seats

__all__ = [
    "RankedPlayer",
    "RatingPoint",
    "RebuildReport",
    "SeatRating",
    "abandoned_since",
    "forget",
    "leaderboard",
    "lock_racers",
    "rate_races",
    "read_history",
    "read_race_ratings",
    "read_standings",
    "read_standings_of",
    "rebuild",
]

Key = tuple[int, str]
"""A standing's key: (player row id, game)."""

_STANDING_COLUMNS = ("races", "won", "drawn", "lost", "abandoned", "last_race_at")


@dataclass(frozen=True, slots=True)
class SeatRating:
    """What a rated race did to one racer (``player_id``: public id)."""

    seat: int
    player_id: str
    before: Rating
    after: Rating
    abandoned: bool


@dataclass(frozen=True, slots=True)
class RatingPoint:
    """A player's rating after one rated race (``race_id``: public id)."""

    race_id: str
    ended_at: int
    before: Rating
    after: Rating


@dataclass(frozen=True, slots=True)
class RankedPlayer:
    """One line of a game's leaderboard."""

    rank: int
    player_id: str
    name: str
    handle: str | None
    standing: Standing


@dataclass(frozen=True, slots=True)
class RebuildReport:
    """What :func:`rebuild` found: rated races, standings computed, and how many of them
    differed from the stored ones (or were missing, or stored but not computed)."""

    races: int
    standings: int
    differing: int


# --------------------------------------------------------------------- writes


def lock_racers(conn: Connection, fresh: Sequence[RaceRecord]) -> None:
    """Lock the player rows of the racers of the rated races in ``fresh`` (PostgreSQL:
    ``FOR NO KEY UPDATE``, in row order, so two writers cannot deadlock; SQLite's write
    transaction holds the whole file already)."""
    wanted = sorted({s.player_id for r in fresh if r.rated for s in r.seats if s.player_id})
    if wanted:
        conn.execute(
            select(players.c.id)
            .where(players.c.public_id.in_(wanted))
            .order_by(players.c.id)
            .with_for_update(key_share=True)
        )


def rate_races(
    conn: Connection,
    fresh: Sequence[RaceRecord],
    race_ids: Mapping[tuple[str, int, int], int],
    player_ids: Mapping[str, int],
) -> None:
    """Rate the rated races of ``fresh`` (just written: ``race_ids`` maps their keys to row
    ids, ``player_ids`` their racers' public ids to row ids) in order. A seat without a
    known identity is left out."""
    rated = []
    for race in fresh:
        race_ms = race.ended_at - race.started_at
        racers = [
            (player_ids[s.player_id], Racer.of(s, _last_action(s.action_times), race_ms))
            for s in race.seats
            if s.player_id is not None and s.player_id in player_ids
        ]
        rated.append((race_ids[race.key], race, racers))
    rated = [
        (player_row_id, race, racers)
        for player_row_id, race, racers in rated
        if race.rated and len(racers) > 1
    ]
    if not rated:
        return
    keys = {(player_row_id, race.game) for _, race, racers in rated for player_row_id, _ in racers}
    standings = _read(conn, keys)
    changes: list[dict[str, Any]] = []
    for race_pk, race, racers in rated:
        changes += _rate(standings, race_pk, race.game, race.ended_at, racers)
    _save(conn, {key: standings[key] for key in keys}, changes)


def _last_action(times: Sequence[int]) -> int:
    return times[-1] if times else 0


def _rate(
    standings: dict[Key, Standing],
    race_pk: int,
    game: str,
    ended_at: int,
    racers: Sequence[tuple[int, Racer]],
) -> list[dict[str, Any]]:
    """Rate one race: ``standings`` updated in place; the rows of its changes."""
    mine = {
        player_row_id: standings[(player_row_id, game)]
        for player_row_id, _ in racers
        if (player_row_id, game) in standings
    }
    rows = []
    for change in rate_race(racers, mine):
        key = (change.player, game)
        standings[key] = change.apply(standings.get(key, Standing()), ended_at)
        rows.append(
            {
                "race_id": race_pk,
                "seat": change.seat,
                "player_id": change.player,
                "game": game,
                "ended_at": ended_at,
                "rating_before": change.before.rating,
                "rd_before": change.before.rd,
                "rating": change.after.rating,
                "rd": change.after.rd,
                "volatility": change.after.volatility,
                "won": change.won,
                "drawn": change.drawn,
                "lost": change.lost,
                "abandoned": change.abandoned,
            }
        )
    return rows


def _save(
    conn: Connection, standings: Mapping[Key, Standing], changes: Sequence[dict[str, Any]]
) -> None:
    if standings:
        insert = dialect_insert(conn, ratings)
        columns = ("rating", "rd", "volatility", *_STANDING_COLUMNS)
        conn.execute(
            insert.on_conflict_do_update(
                index_elements=[ratings.c.player_id, ratings.c.game],
                set_={name: insert.excluded[name] for name in columns},
            ),
            [_standing_row(key, standing) for key, standing in standings.items()],
        )
    if changes:
        conn.execute(rating_changes.insert(), list(changes))


def _standing_row(key: Key, standing: Standing) -> dict[str, Any]:
    return {
        "player_id": key[0],
        "game": key[1],
        "rating": standing.rating.rating,
        "rd": standing.rating.rd,
        "volatility": standing.rating.volatility,
        **{name: getattr(standing, name) for name in _STANDING_COLUMNS},
    }


def forget(conn: Connection, player_row_id: int) -> None:
    """Drop a deleted identity's ratings and changes (by player row id)."""
    conn.execute(delete(rating_changes).where(rating_changes.c.player_id == player_row_id))
    conn.execute(delete(ratings).where(ratings.c.player_id == player_row_id))


# --------------------------------------------------------------------- reads


def _standing(row: Row[Any]) -> Standing:
    return Standing(
        rating=Rating(row.rating, row.rd, row.volatility),
        **{name: getattr(row, name) for name in _STANDING_COLUMNS},
    )


def _read(conn: Connection, keys: Iterable[Key]) -> dict[Key, Standing]:
    wanted = set(keys)
    result = conn.execute(
        select(ratings).where(
            ratings.c.player_id.in_(sorted({player_row_id for player_row_id, _ in wanted}))
        )
    )
    return {(r.player_id, r.game): _standing(r) for r in result if (r.player_id, r.game) in wanted}


def read_standings(conn: Connection, player_row_id: int) -> dict[str, Standing]:
    """A player's standing in each game they have rated races of, by game."""
    result = conn.execute(select(ratings).where(ratings.c.player_id == player_row_id))
    return {row.game: _standing(row) for row in sorted(result, key=lambda r: r.game)}


def read_standings_of(
    conn: Connection, player_ids: Sequence[str], game: str
) -> dict[str, Standing]:
    """The standings in ``game`` of the players with these public ids that have one."""
    result = conn.execute(
        select(ratings, players.c.public_id)
        .select_from(ratings.join(players, players.c.id == ratings.c.player_id))
        .where(players.c.public_id.in_(sorted(set(player_ids))), ratings.c.game == game)
    )
    return {row.public_id: _standing(row) for row in result}


def read_history(conn: Connection, player_row_id: int, game: str, limit: int) -> list[RatingPoint]:
    """A player's latest ``limit`` rating changes in ``game``, oldest first."""
    c = rating_changes.c
    result = conn.execute(
        select(c.rating_before, c.rd_before, c.rating, c.rd, c.volatility, c.ended_at)
        .add_columns(races.c.public_id)
        .select_from(rating_changes.join(races, races.c.id == c.race_id))
        .where(c.player_id == player_row_id, c.game == game)
        .order_by(c.id.desc())
        .limit(limit)
    )
    return [
        RatingPoint(row.public_id, row.ended_at, *_before_after(row))
        for row in reversed(list(result))
    ]


def read_race_ratings(conn: Connection, race_id: str) -> list[SeatRating]:
    """What the race with this public id did to its racers' ratings, in seat order (none:
    not rated, or unknown)."""
    c = rating_changes.c
    result = conn.execute(
        select(c.seat, c.rating_before, c.rd_before, c.rating, c.rd, c.volatility, c.abandoned)
        .add_columns(players.c.public_id)
        .select_from(
            rating_changes.join(races, races.c.id == c.race_id).join(
                players, players.c.id == c.player_id
            )
        )
        .where(races.c.public_id == race_id)
        .order_by(c.seat)
    )
    return [
        SeatRating(row.seat, row.public_id, *_before_after(row), abandoned=row.abandoned)
        for row in result
    ]


def _before_after(row: Row[Any]) -> tuple[Rating, Rating]:
    """A change's rating before (the volatility is not kept: not shown) and after."""
    return Rating(row.rating_before, row.rd_before), Rating(row.rating, row.rd, row.volatility)


def leaderboard(
    conn: Connection, game: str, since: int, limit: int, offset: int
) -> list[RankedPlayer]:
    """A page of ``game``'s leaderboard: players not deleted, not provisional, with a rated
    race that ended at ``since`` or later; the best rating first (ties: by player id)."""
    result = conn.execute(
        select(ratings, players.c.public_id, players.c.name, players.c.handle)
        .select_from(ratings.join(players, players.c.id == ratings.c.player_id))
        .where(
            ratings.c.game == game,
            ratings.c.rd < PROVISIONAL_RD,
            ratings.c.last_race_at >= since,
            players.c.deleted_at.is_(None),
        )
        .order_by(ratings.c.rating.desc(), players.c.public_id)
        .limit(limit)
        .offset(offset)
    )
    return [
        RankedPlayer(offset + i, row.public_id, row.name, row.handle, _standing(row))
        for i, row in enumerate(result, 1)
    ]


def abandoned_since(conn: Connection, player_row_id: int, since: int) -> list[int]:
    """When the player's rated races abandoned at ``since`` or later ended (any game)."""
    c = rating_changes.c
    result = conn.execute(
        select(c.ended_at).where(
            c.player_id == player_row_id, c.abandoned.is_(True), c.ended_at >= since
        )
    )
    return sorted(result.scalars())


# --------------------------------------------------------------------- rebuild


def rebuild(conn: Connection, write: bool) -> RebuildReport:
    """Compute every standing and change again from the rated races, in the order they
    were rated; with ``write``, replace the stored ones with them. Every player row is
    locked first (PostgreSQL), so a server writing rated races meanwhile waits for it."""
    conn.execute(select(players.c.id).order_by(players.c.id).with_for_update(key_share=True))
    standings: dict[Key, Standing] = {}
    changes: list[dict[str, Any]] = []
    count = 0
    for (race_pk, game, started_at, ended_at), rows in groupby(
        conn.execute(_rated_seats()), key=lambda r: (r.id, r.game, r.started_at, r.ended_at)
    ):
        racers = [
            (
                row.player_id,
                Racer.of(row, _last_action_text(row.action_times), ended_at - started_at),
            )
            for row in rows
            if row.player_id is not None
        ]
        if len(racers) > 1:
            count += 1
            changes += _rate(standings, race_pk, game, ended_at, racers)
    gone = set(
        conn.execute(select(players.c.id).where(players.c.deleted_at.is_not(None))).scalars()
    )
    standings = {key: s for key, s in standings.items() if key[0] not in gone}
    changes = [row for row in changes if row["player_id"] not in gone]
    stored = {(r.player_id, r.game): _standing(r) for r in conn.execute(select(ratings))}
    differing = sum(stored.get(key) != s for key, s in standings.items())
    differing += len(stored.keys() - standings.keys())
    if write:
        conn.execute(delete(rating_changes))
        conn.execute(delete(ratings))
        _save(conn, standings, changes)
    return RebuildReport(races=count, standings=len(standings), differing=differing)


def _rated_seats() -> Any:
    return (
        select(
            races.c.id,
            races.c.game,
            races.c.started_at,
            races.c.ended_at,
            seats.c.seat,
            seats.c.player_id,
            seats.c.status,
            seats.c.elapsed_ms,
            seats.c.moves,
            seats.c.on_foundations,
            seats.c.score,
            seats.c.action_times,
        )
        .select_from(races.join(seats, seats.c.race_id == races.c.id))
        .where(races.c.rated.is_(True))
        .order_by(races.c.id, seats.c.seat)
    )


def _last_action_text(times: str) -> int:
    """The last of the action times as ``seats.action_times`` keeps them (0: none)."""
    last = times.rsplit(" ", 1)[-1]
    return int(last) if last else 0
