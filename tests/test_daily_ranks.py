"""A player's own place on a day's leaderboard (the store's ``own_entry``, counted from the
day's score counts and the board's index) is their line's place in the full leaderboard,
read a page at a time, ties and unranked attempts included; equal attempts share a place
(the one ranking rule) — on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import random

from records_helpers import query, store
from sqlalchemy import Connection, insert, select

from server.records.daily import OPEN_KEY, rank_key
from server.records.store import SqlRecordsStore
from server.records.tables import daily_attempts, daily_scores, players

__all__ = ["store"]

DAY, GAME = "2026-04-16", "klondike"


def _fill(conn: Connection, count: int) -> list[str]:
    """``count`` attempts of the day from few scores and move counts (many ties), some
    unranked or still being played; the day's score counts kept as ending them keeps them."""
    rng = random.Random(11)
    ids = [f"r{i:015d}" for i in range(count)]
    conn.execute(
        insert(players),
        [{"public_id": pid, "name": pid, "created_at": 0} for pid in ids],
    )
    pks = {pid: pk for pid, pk in conn.execute(select(players.c.public_id, players.c.id))}
    rows: list[dict[str, object]] = []
    scores: dict[int, int] = {}
    for i, pid in enumerate(ids):
        won = rng.random() < 0.4
        # 150,000: past the rank key's cap, ranked and counted as 99,999
        score, moves = rng.choice((0, 50, 900, 150_000)), rng.choice((90, 120))
        elapsed = rng.choice((60_000, 61_000))  # a time for every finished attempt
        ranked, playing = rng.random() < 0.9, rng.random() < 0.1
        if ranked and not playing:
            scores[min(score, 99_999)] = scores.get(min(score, 99_999), 0) + 1
        rows.append(
            {
                "player_id": pks[pid],
                "game": GAME,
                "day": DAY,
                "ranked": ranked,
                "status": "playing" if playing else "won" if won else "resigned",
                "room": "RANKS1",
                "room_created_at": 0,
                "race_no": 1,
                "score": score,
                "moves": moves,
                "on_foundations": 52 if won else 10,
                "deck_turns": 1,
                "elapsed_ms": elapsed,
                "rank_key": OPEN_KEY if playing else rank_key(score, moves, elapsed),
                "started_at": 1000 + i * 7 % count,  # all different, not in id order
                "ended_at": None if playing else 1,
            }
        )
    conn.execute(insert(daily_attempts), rows)
    conn.execute(
        insert(daily_scores),
        [{"game": GAME, "day": DAY, "score": s, "attempts": n} for s, n in scores.items()],
    )
    return ids


async def test_own_place_is_the_place_on_the_full_leaderboard(store: SqlRecordsStore) -> None:
    ids = await store.db.write(_fill, 300)
    board = []
    for offset in range(0, 300, 100):  # pages of 100, the most the store gives at once
        board += await store.daily.leaderboard(GAME, DAY, limit=100, offset=offset)
    place = {entry.player_id: entry.rank for entry in board}
    key = {e.player_id: rank_key(e.score, e.moves, e.elapsed_ms) for e in board}
    assert len(set(place.values())) < len(board)  # ties, shared: the rule is exercised
    for entry in board:  # one more than the attempts with a better key, across the pages
        own_key = key[entry.player_id]
        assert entry.rank == 1 + sum(k < own_key for k in key.values()), entry
    newcomers = {e.player_id: e.rank for e in await store.daily.newcomers(GAME, DAY)}
    assert newcomers and not newcomers.keys() & place.keys()
    for pid in ids:
        mine = await store.daily.own_entry(GAME, DAY, pid)
        assert mine is not None
        # the place on the board, or among the newcomers; 0: on neither (still playing)
        assert mine.rank == place.get(pid, newcomers.get(pid, 0)), pid


def _players(conn: Connection, count: int) -> list[str]:
    ids = [f"q{i:015d}" for i in range(count)]
    conn.execute(insert(players), [{"public_id": pid, "name": pid, "created_at": 0} for pid in ids])
    return ids


async def test_asks_made_at_once_are_taken_in_order(store: SqlRecordsStore) -> None:
    """Forty races starting at once, players shared between them (one only watching): each
    player's day gets one attempt, made by the first ask (written together, as one by one);
    a race with a racer whose attempt another race of them is playing makes nothing."""
    ids = await store.db.write(_players, 20)
    asks = [
        ((ids[i % 20], False), (ids[(i + 7) % 20], i % 3 == 0), ("q" + "9" * 15, False))
        for i in range(40)
    ]
    results = await asyncio.gather(
        *(
            store.daily.begin_attempts(
                game=GAME, day=DAY, day_start=10, race=(f"R{i}", 1, 1), players=ask, now=100 + i
            )
            for i, ask in enumerate(asks)
        )
    )
    seen: dict[str, int] = {}  # the ask that made each player's attempt
    playing: set[str] = set()  # whose attempt is being played (made by racing)
    for i, (ask, kinds) in enumerate(zip(asks, results, strict=True)):
        people = ask[:2]  # the third is nobody: no attempt, no kind
        busy = {pid for pid, watching in people if not watching and pid in playing}
        if busy:
            assert kinds == dict.fromkeys(busy, "busy"), i
            continue
        expected = {}
        for pid, watching in people:
            first = pid not in seen
            seen.setdefault(pid, i)
            playing |= {pid} if first and not watching else set()
            expected[pid] = ("unranked" if watching else "ranked") if first else "practice"
        assert kinds == expected, i
    assert any("busy" in kinds.values() for kinds in results)  # the case is exercised
    rows = await query(
        store,
        select(players.c.public_id, daily_attempts.c.room).join_from(
            daily_attempts, players, players.c.id == daily_attempts.c.player_id
        ),
    )
    assert sorted(rows) == sorted((pid, f"R{i}") for pid, i in seen.items())


def _newcomers(conn: Connection) -> dict[str, str]:
    """A day with two old players' ranked attempts and four new players' (made that day):
    two ended with equal results, one ended worse, one still playing; and an old player who
    only watched. Player id → what their attempt is."""
    kinds = {
        "n000000000000001": ("ranked", "won", 900, 100),
        "n000000000000002": ("ranked", "resigned", 50, 40),
        "n000000000000003": ("new", "resigned", 60, 30),
        "n000000000000004": ("new", "resigned", 60, 30),
        "n000000000000005": ("new", "timeout", 10, 80),
        "n000000000000006": ("new", "playing", 0, 0),
        "n000000000000007": ("watched", "watched", 0, 0),
    }
    conn.execute(insert(players), [{"public_id": p, "name": p, "created_at": 0} for p in kinds])
    pks = dict(conn.execute(select(players.c.public_id, players.c.id)).all())
    rows = []
    for i, (pid, (kind, status, score, moves)) in enumerate(kinds.items()):
        ended = status not in ("playing", "watched")
        rows.append(
            {
                "player_id": pks[pid],
                "game": GAME,
                "day": "2026-04-17",
                "ranked": kind == "ranked",
                "status": status,
                "room": "NEWBIE",
                "room_created_at": 0,
                "race_no": 1,
                "score": score,
                "moves": moves,
                "on_foundations": 10,
                "deck_turns": 0,
                "elapsed_ms": 90_000 if ended else None,
                "rank_key": rank_key(score, moves, 90_000) if ended else OPEN_KEY,
                "started_at": 100 - i,  # the later listed began first: ties keep no order
                "ended_at": 1 if ended else None,
            }
        )
    conn.execute(insert(daily_attempts), rows)
    return {pid: kind for pid, (kind, *_) in kinds.items()}


async def test_newcomers_have_a_board_of_their_own(store: SqlRecordsStore) -> None:
    """Players made on the day rank from their next day (the anti-practice rule), but their
    first attempts show on the day's newcomers' board, placed among themselves by the one
    rule; an attempt not over and one only watched are on no board."""
    kinds = await store.db.write(_newcomers)
    board = await store.daily.leaderboard(GAME, "2026-04-17")
    assert [e.player_id for e in board] == [p for p, k in kinds.items() if k == "ranked"]
    new = await store.daily.newcomers(GAME, "2026-04-17")
    assert {e.player_id: e.rank for e in new} == {
        "n000000000000003": 1,
        "n000000000000004": 1,
        "n000000000000005": 3,
    }
    assert not any(e.ranked for e in new)
    for entry in new:
        mine = await store.daily.own_entry(GAME, "2026-04-17", entry.player_id)
        assert mine is not None and mine.rank == entry.rank and not mine.ranked
    for pid in ("n000000000000006", "n000000000000007"):
        mine = await store.daily.own_entry(GAME, "2026-04-17", pid)
        assert mine is not None and mine.rank == 0
