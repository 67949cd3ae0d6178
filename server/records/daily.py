"""The daily challenge's rows: one attempt per player, daily game and UTC day.

An attempt is made — atomically, by its primary key — the first time a player is sent a
card of the day's deal (a race on it starts with them in it, or they watch one); every later
play of that day is practice. The attempt is ended by the race it began in, in the same
transaction that writes that race (:func:`end_attempts`); one still open when its day is
over is closed as ``unfinished`` (:func:`close_unfinished`).

The leaderboard's order — score (higher first), then fewer moves, then the shorter time
(of every attempt that ended, won or not) — is kept as one ascending integer,
:func:`rank_key`, so that the top of a day and a player's place are read from one index
(``ix_daily_attempts_board``). Attempts with equal keys share a place (the one ranking
rule, :mod:`server.rooms.ranking`); they are listed in the order they began.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Connection,
    Integer,
    String,
    and_,
    bindparam,
    cast,
    func,
    literal,
    select,
    update,
)

from ..rooms.ranking import places
from .models import DailyEntry, DailyStats, RaceRecord
from .tables import daily_attempts, daily_scores, dialect_insert, players, seats

__all__ = [
    "OPEN_KEY",
    "OPEN_STATUSES",
    "AttemptsAsked",
    "begin_attempts",
    "close_unfinished",
    "daily_stats",
    "end_attempts",
    "leaderboard",
    "newcomers",
    "own_entry",
    "raced_with",
    "rank_key",
]

#: an attempt not over yet: being played, or only watched (it counts, and shows nothing)
OPEN_STATUSES = ("playing", "watched")
#: the rank key of an attempt that does not rank (yet): after every real one, so that the
#: leaderboard and a place are read from the index alone
OPEN_KEY = 2**62
_SCORE_CAP = 99_999
_MOVES_CAP = 9_999
_TIME_CAP = 99_999_999  # ms: more than a day


def rank_key(score: int, moves: int, elapsed_ms: int | None) -> int:
    """The leaderboard order as one ascending number: higher score first, then fewer moves,
    then the shorter time (a race whose time is not known — one left open past its day —
    counts as the slowest)."""
    score = min(max(score, 0), _SCORE_CAP)
    moves = min(max(moves, 0), _MOVES_CAP)
    time = _TIME_CAP if elapsed_ms is None else min(max(elapsed_ms, 0), _TIME_CAP)
    return (_SCORE_CAP - score) * 10**12 + moves * 10**8 + time


def _insert(conn: Connection) -> Any:
    return dialect_insert(conn, daily_attempts)


@dataclass(frozen=True, slots=True)
class AttemptsAsked:
    """The day's attempts of the racers (or a spectator) of one race about to start: each
    ``(player public id, watching)`` of ``players_in``."""

    game: str
    day: str
    day_start: int
    race: tuple[str, int, int]  # room code, its creation time, race number
    players_in: tuple[tuple[str, bool], ...]
    now: int


def begin_attempts(conn: Connection, asked: Sequence[AttemptsAsked]) -> list[dict[str, str]]:
    """Make the attempt of each player of each of ``asked`` that has none for the day — in
    order: of two asks for one player's day, the first makes it — and say, per ask and
    player: ``ranked``, ``unranked`` (an identity made after the day began, or one that only
    watches), ``practice`` (the day's attempt was made before and is over) or ``busy``.

    ``busy``: the player's attempt is still being played in another race. A practice race
    then would show them the deal's cards — in a second tab, undoing and trying freely —
    while their ranked attempt runs, so an ask with a busy racer makes nothing (its race
    must not start). A later race of the attempt's own room is never busy: a room runs one
    race at a time, so its attempt's race is over (the rematch "again" right after the
    attempt, before its record is written). Three statements whatever the number of asks (a
    thousand players starting at once are written together)."""
    wanted = sorted({pid for a in asked for pid, _ in a.players_in})
    if not wanted:
        return [{} for _ in asked]
    known: dict[str, tuple[int, int]] = {}
    for first in range(0, len(wanted), 500):
        found = conn.execute(
            select(players.c.public_id, players.c.id, players.c.created_at).where(
                players.c.public_id.in_(wanted[first : first + 500]),
                players.c.deleted_at.is_(None),
            )
        )
        known.update({pid: (player_row_id, created) for pid, player_row_id, created in found})
    attempts = _attempts_of(
        conn, [player_row_id for player_row_id, _ in known.values()], {a.day for a in asked}
    )
    busy: list[set[str]] = []
    for a in asked:  # in order: an attempt an earlier ask makes is being played from then on
        racing = [(pid, known[pid][0]) for pid, w in a.players_in if not w and pid in known]
        refused = {pid for pid, player_row_id in racing if _busy(attempts, player_row_id, a)}
        busy.append(refused)
        if not refused:
            for pid, watched in a.players_in:
                if pid in known:
                    status = "watched" if watched else "playing"
                    attempts.setdefault((known[pid][0], a.game, a.day), (status, a.race))
    rows: list[dict[str, Any]] = []
    made: dict[tuple[int, str, str], str] = {}  # the attempt each row would make: its kind
    for a, refused in zip(asked, busy, strict=True):
        if refused:
            continue  # the race will not start: nothing is made for anyone in it
        room, created_at, race_no = a.race
        for pid, watched in dict(a.players_in).items():
            if pid not in known:
                continue
            player_row_id, created = known[pid]
            key = (player_row_id, a.game, a.day)
            if key in made:
                continue  # asked twice at once: the first ask makes it
            ranked = created < a.day_start and not watched
            made[key] = "ranked" if ranked else "unranked"
            rows.append(
                {
                    "player_id": player_row_id,
                    "game": a.game,
                    "day": a.day,
                    "ranked": ranked,
                    "status": "watched" if watched else "playing",
                    "room": room,
                    "room_created_at": created_at,
                    "race_no": race_no,
                    "score": 0,
                    "moves": 0,
                    "on_foundations": 0,
                    "deck_turns": 0,
                    "elapsed_ms": None,
                    "rank_key": OPEN_KEY,
                    "race_public_id": None,
                    "started_at": a.now,
                    "ended_at": None,
                }
            )
    inserted: set[tuple[int, str, str]] = set()
    c = daily_attempts.c
    for first in range(0, len(rows), 200):
        result = conn.execute(
            _insert(conn)
            .values(rows[first : first + 200])
            .on_conflict_do_nothing(index_elements=["player_id", "game", "day"])
            .returning(c.player_id, c.game, c.day)
        )
        inserted.update((player_row_id, game, day) for player_row_id, game, day in result)
    out: list[dict[str, str]] = []
    claimed: set[tuple[int, str, str]] = set()
    for a, refused in zip(asked, busy, strict=True):
        if refused:
            out.append(dict.fromkeys(sorted(refused), "busy"))
            continue
        kinds: dict[str, str] = {}
        for pid in dict(a.players_in):
            if pid not in known:
                continue
            key = (known[pid][0], a.game, a.day)
            first_ask = key in inserted and key not in claimed
            kinds[pid] = made[key] if first_ask else "practice"
            claimed.add(key)
        out.append(kinds)
    return out


_Attempts = dict[tuple[int, str, str], tuple[str, tuple[str, int, int]]]
"""(player, game, day) → the attempt's status and its race (room, creation time, number)."""


def _attempts_of(conn: Connection, pks: Sequence[int], days: set[str]) -> _Attempts:
    """The attempts of ``pks`` on ``days``: their status and the race they began in."""
    c = daily_attempts.c
    out: _Attempts = {}
    for first in range(0, len(pks), 500):
        found = conn.execute(
            select(
                c.player_id, c.game, c.day, c.status, c.room, c.room_created_at, c.race_no
            ).where(c.player_id.in_(pks[first : first + 500]), c.day.in_(sorted(days)))
        )
        out.update(
            {
                (player_row_id, g, d): (st, (room, at, no))
                for player_row_id, g, d, st, room, at, no in found
            }
        )
    return out


def _busy(attempts: _Attempts, player_row_id: int, a: AttemptsAsked) -> bool:
    """Whether the player's (``player_row_id``) attempt of ``a``'s day is being played in
    another race than ``a``'s, and not in an earlier race of ``a``'s own room (which is over)."""
    status, race = attempts.get((player_row_id, a.game, a.day), ("", a.race))
    if status != "playing" or race == a.race:
        return False
    room, created_at, race_no = a.race
    return not (race[0] == room and race[1] == created_at and race[2] < race_no)


def end_attempts(
    conn: Connection, daily: Sequence[tuple[RaceRecord, str]], player_ids: dict[str, int]
) -> None:
    """End the attempts the written daily races began: each racer's result, only on the
    attempt made for that very race and still being played."""
    for race, public_id in daily:
        for s in race.seats:
            player_row_id = player_ids.get(s.player_id) if s.player_id else None
            if player_row_id is None:
                continue
            # the time of any race that ended, won or not: ties of unfinished attempts are
            # broken by it too, as they are for the winners'
            elapsed = s.elapsed_ms
            # the attempt made for this very race, still being played
            this_one = and_(
                daily_attempts.c.player_id == player_row_id,
                daily_attempts.c.game == race.game,
                daily_attempts.c.day == race.daily_day,
                daily_attempts.c.status == "playing",
                daily_attempts.c.room == race.room,
                daily_attempts.c.room_created_at == race.room_created_at,
                daily_attempts.c.race_no == race.race,
            )
            ranked = conn.execute(select(daily_attempts.c.ranked).where(this_one)).scalar()
            if ranked is None:
                continue  # practice, or an attempt begun elsewhere
            conn.execute(
                update(daily_attempts)
                .where(this_one)
                .values(
                    status=s.status,
                    score=s.score,
                    moves=s.moves,
                    on_foundations=s.on_foundations,
                    deck_turns=s.deck_turns,
                    elapsed_ms=elapsed,
                    rank_key=rank_key(s.score, s.moves, elapsed),
                    race_public_id=public_id,
                    ended_at=race.ended_at,
                )
            )
            if ranked:
                _count_score(conn, race.game, race.daily_day or "", s.score, 1)


def _count_score(conn: Connection, game: str, day: str, score: int, n: int) -> None:
    """``n`` more ranked attempts of the day ended with ``score`` (capped as the rank key
    caps it)."""
    score = min(max(score, 0), _SCORE_CAP)
    insert = _insert_scores(conn).values(game=game, day=day, score=score, attempts=n)
    conn.execute(
        insert.on_conflict_do_update(
            index_elements=["game", "day", "score"],
            set_={"attempts": daily_scores.c.attempts + n},
        )
    )


def _insert_scores(conn: Connection) -> Any:
    return dialect_insert(conn, daily_scores)


def close_unfinished(conn: Connection, before_day: str, now: int) -> int:
    """Close the attempts of the days before ``before_day`` still being played (their
    race never ended: a day's races time out at its end, so only a lost record leaves one);
    how many. They rank last of their day, with no score."""
    open_ranked = conn.execute(
        select(daily_attempts.c.game, daily_attempts.c.day, func.count())
        .where(
            daily_attempts.c.day < before_day,
            daily_attempts.c.status == "playing",
            daily_attempts.c.ranked.is_(True),
        )
        .group_by(daily_attempts.c.game, daily_attempts.c.day)
    ).all()
    for game, day, n in open_ranked:
        _count_score(conn, game, day, 0, int(n))
    result = conn.execute(
        update(daily_attempts)
        .where(daily_attempts.c.day < before_day, daily_attempts.c.status == "playing")
        .values(status="unfinished", ended_at=now, rank_key=rank_key(0, 0, None))
    )
    return int(result.rowcount or 0)


_ENTRY_COLUMNS = (
    daily_attempts.c.ranked,
    daily_attempts.c.status,
    daily_attempts.c.score,
    daily_attempts.c.moves,
    daily_attempts.c.on_foundations,
    daily_attempts.c.deck_turns,
    daily_attempts.c.elapsed_ms,
    daily_attempts.c.race_public_id,
    daily_attempts.c.rank_key,
    daily_attempts.c.started_at,
    players.c.public_id,
    players.c.name,
    players.c.handle,
)


def _board(game: Any, day: Any, ranked: bool = True) -> Any:
    """The attempts that rank (of a game and day: values or bound parameters): ranked,
    played and over (an open one has ``OPEN_KEY``); all in ``ix_daily_attempts_board``.
    ``ranked=False``: the newcomers' board, the first attempts of identities made that day
    (a watched attempt never ends: its key stays ``OPEN_KEY``)."""
    return and_(
        daily_attempts.c.game == game,
        daily_attempts.c.day == day,
        daily_attempts.c.ranked.is_(ranked),
        daily_attempts.c.rank_key < OPEN_KEY,
    )


def _entry(rank: int, row: Any) -> DailyEntry:
    return DailyEntry(
        rank=rank,
        player_id=row.public_id,
        name=row.name,
        handle=row.handle,
        ranked=row.ranked,
        status=row.status,
        score=row.score,
        moves=row.moves,
        on_foundations=row.on_foundations,
        deck_turns=row.deck_turns,
        elapsed_ms=row.elapsed_ms,
        race_id=row.race_public_id,
    )


# The board's page and a player's place are built once, their values bound at each call:
# building a statement (the counts' alias, its columns, its cache key) cost more Python time
# (0.6 ms for the place) than PostgreSQL takes to run it.
_GAME = bindparam("game", type_=String)
_DAY = bindparam("day", type_=String)
_ATTEMPTS = daily_attempts.join(players, players.c.id == daily_attempts.c.player_id)
_PAGE = (
    select(*_ENTRY_COLUMNS)
    .select_from(_ATTEMPTS)
    .where(_board(_GAME, _DAY))
    .order_by(daily_attempts.c.rank_key, daily_attempts.c.started_at)
    .limit(bindparam("limit", type_=Integer))
    .offset(bindparam("offset", type_=Integer))
)


_NEWCOMERS = (
    select(*_ENTRY_COLUMNS)
    .select_from(_ATTEMPTS)
    .where(_board(_GAME, _DAY, ranked=False))
    .order_by(daily_attempts.c.rank_key, daily_attempts.c.started_at)
    .limit(bindparam("limit", type_=Integer))
)
#: how many newcomers' attempts of a day are ahead of a key
_NEWCOMERS_AHEAD = select(func.count()).where(
    _board(_GAME, _DAY, ranked=False), daily_attempts.c.rank_key < bindparam("key", BigInteger)
)


def newcomers(conn: Connection, game: str, day: str, limit: int) -> list[DailyEntry]:
    """The newcomers' board of the day, best first: the first attempts of players made that
    day, who rank from their next day (the anti-practice rule: an identity made after the
    day began could have practised on another), placed among themselves by the one rule."""
    rows = conn.execute(_NEWCOMERS, {"game": game, "day": day, "limit": limit}).all()
    shared = places([r.rank_key for r in rows])
    return [_entry(place, row) for place, row in zip(shared, rows, strict=True)]


def leaderboard(conn: Connection, game: str, day: str, limit: int, offset: int) -> list[DailyEntry]:
    """A page of the day's leaderboard, best first, equal keys sharing a place: one
    statement, and for a page after the first one more (the attempts ahead of its first)."""
    values = {"game": game, "day": day, "limit": limit, "offset": offset}
    rows = conn.execute(_PAGE, values).all()
    if not rows:
        return []
    shared = places([row.rank_key for row in rows])
    # the page's first key may have begun on an earlier page: its place counts only the
    # attempts with a better key
    first = 1
    if offset:
        counts = {"game": game, "day": day, "score": min(max(rows[0].score, 0), _SCORE_CAP)}
        counts["key"] = rows[0].rank_key
        first = sum(int(n) for n in conn.execute(_AHEAD_OF, counts).one()) + 1
    return [
        _entry(first if key_place == 1 else offset + key_place, row)
        for key_place, row in zip(shared, rows, strict=True)
    ]


def own_entry(conn: Connection, game: str, day: str, player_id: str) -> DailyEntry | None:
    """A player's attempt of the day with their place — on the day's board, or for a
    newcomer's (``ranked`` false) among the day's newcomers; 0 when it has none (not over,
    or watched) — read with the counts of the attempts ahead in one statement (one round
    trip to PostgreSQL; a newcomer's place takes a second)."""
    row = conn.execute(_OWN, {"player_id": player_id, "game": game, "day": day}).first()
    if row is None:
        return None
    if row.status in OPEN_STATUSES:
        return _entry(0, row)
    if not row.ranked:  # a newcomer's: their place among the day's newcomers
        values = {"game": game, "day": day, "key": row.rank_key}
        return _entry(int(conn.execute(_NEWCOMERS_AHEAD, values).scalar_one()) + 1, row)
    ahead = (row.better_scores, row.better_keys)
    if not 0 <= row.score <= _SCORE_CAP:  # counted under its capped score, as the counts are
        capped = min(max(row.score, 0), _SCORE_CAP)
        values = {"game": game, "day": day, "score": capped, "key": row.rank_key}
        ahead = conn.execute(_AHEAD_OF, values).one()
    return _entry(sum(int(n) for n in ahead) + 1, row)


def _ahead(game: Any, day: Any, score: Any, key: Any) -> list[Any]:
    """The attempts ahead of one — those with a better key: equal keys share a place — as
    two labelled scalar subqueries, of the attempt row being read (columns: correlated) or
    of given values: those of a better score, summed from the day's score counts (kept by
    capped score); of the same score, the better keys. The counts bound the rank key by the
    attempt's own key, not by _board's "rank_key < OPEN_KEY" (which a ranking key implies):
    given both upper bounds, SQLite searched the index up to OPEN_KEY, most of the day, and
    filtered."""
    other = daily_attempts.alias("other").c
    same_day = (other.game == game, other.day == day, other.ranked.is_(True))
    better_scores = select(func.coalesce(func.sum(daily_scores.c.attempts), 0)).where(
        daily_scores.c.game == game,
        daily_scores.c.day == day,
        daily_scores.c.score > score,
    )
    lowest = cast(_SCORE_CAP - score, BigInteger) * literal(10**12, BigInteger)
    better_keys = select(func.count()).where(
        *same_day, other.rank_key >= lowest, other.rank_key < key
    )
    return [
        better_scores.scalar_subquery().label("better_scores"),
        better_keys.scalar_subquery().label("better_keys"),
    ]


_ME = daily_attempts.c
#: a player's attempt of the day with the counts ahead of it (see :func:`own_entry`)
_OWN = (
    select(*_ENTRY_COLUMNS, *_ahead(_ME.game, _ME.day, _ME.score, _ME.rank_key))
    .select_from(_ATTEMPTS)
    .where(
        players.c.public_id == bindparam("player_id", type_=String),
        daily_attempts.c.game == _GAME,
        daily_attempts.c.day == _DAY,
    )
)
#: the counts ahead of given values (an attempt whose score the counts hold capped)
_AHEAD_OF = select(
    *_ahead(
        _GAME,
        _DAY,
        bindparam("score", type_=Integer),
        bindparam("key", type_=BigInteger),
    )
)


def raced_with(
    conn: Connection, player_id: str, game: str, day: str, limit: int
) -> list[DailyEntry]:
    """The day's attempts of the players ``player_id`` has raced with (in their latest 200
    races), each with their place."""
    me = conn.execute(select(players.c.id).where(players.c.public_id == player_id)).scalar()
    if me is None:
        return []
    mine = (
        select(seats.c.race_id)
        .where(seats.c.player_id == me)
        .order_by(seats.c.ended_at.desc())
        .limit(200)
        .subquery()
    )
    others = conn.execute(
        select(players.c.public_id)
        .distinct()
        .select_from(seats.join(players, players.c.id == seats.c.player_id))
        .where(seats.c.race_id.in_(select(mine.c.race_id)), seats.c.player_id != me)
        .limit(limit)
    ).scalars()
    entries = [own_entry(conn, game, day, pid) for pid in others]
    return sorted(
        (e for e in entries if e is not None), key=lambda e: (e.rank == 0, e.rank, e.name)
    )


def daily_stats(conn: Connection, player_row_id: int, today: str) -> list[DailyStats]:
    """A player's daily figures per game (streaks run up to today or yesterday)."""
    rows = conn.execute(
        select(
            daily_attempts.c.game,
            daily_attempts.c.day,
            daily_attempts.c.status,
            daily_attempts.c.score,
        )
        .where(daily_attempts.c.player_id == player_row_id, daily_attempts.c.status != "watched")
        .order_by(daily_attempts.c.game, daily_attempts.c.day)
    )
    by_game: dict[str, list[tuple[dt.date, str, int]]] = {}
    for game, day, status, score in rows:
        by_game.setdefault(game, []).append((dt.date.fromisoformat(day), status, score))
    last = dt.date.fromisoformat(today)
    out = []
    for game, days in sorted(by_game.items()):
        played = [d for d, status, _ in days]
        won = [d for d, status, _ in days if status == "won"]
        out.append(
            DailyStats(
                game=game,
                days_played=len(played),
                days_won=len(won),
                played_streak=_current_run(played, last),
                won_streak=_current_run(won, last),
                longest_played_streak=_longest_run(played),
                longest_won_streak=_longest_run(won),
                best_score=max(
                    (score for _, status, score in days if status not in OPEN_STATUSES),
                    default=None,
                ),
            )
        )
    return out


def _longest_run(days: list[dt.date]) -> int:
    best = run = 0
    previous: dt.date | None = None
    for day in days:
        run = run + 1 if previous is not None and (day - previous).days == 1 else 1
        best = max(best, run)
        previous = day
    return best


def _current_run(days: list[dt.date], today: dt.date) -> int:
    """Days in a row ending today, or yesterday (today's may not be played yet)."""
    present = set(days)
    day = today if today in present else today - dt.timedelta(days=1)
    run = 0
    while day in present:
        run += 1
        day -= dt.timedelta(days=1)
    return run
