"""Tournaments in the records store: migration 0004 from empty and from 0003 (SQLite and a
real PostgreSQL), and a tournament written and read back whole."""

from __future__ import annotations

from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, insert
from tournament_fixtures import SEED, new, play_round, with_players

from server.records.db import open_database
from server.records.migrate import status, upgrade
from server.records.store import SqlRecordsStore
from server.records.tables import metadata, tournaments
from server.records.tournaments import tournament_row
from server.tournaments import ban, disqualify, standings
from server.tournaments.live import LiveTournament, RoundRoom, new_live, strip_moves


async def _diff(url: str) -> list[Any]:
    db = open_database(url)

    def diff(conn: Connection) -> list[Any]:
        return list(compare_metadata(MigrationContext.configure(conn), metadata))

    try:
        return await db.read(diff)
    finally:
        await db.dispose()


def _finished() -> tuple[LiveTournament, dict[tuple[int, str], str]]:
    """A finished tournament of two rounds, one result disqualified, one player banned;
    its live form keeps the move lists apart, as the server does."""
    state = with_players(new(rounds=2), "ann", "bob", "cat")
    play_round(state, ["ann", "bob", "cat"], {"ann": ["s", "s"], "bob": ["s"], "cat": []})
    play_round(state, ["ann", "bob"], {"ann": ["s"], "bob": ["s", "s", "s"]})
    disqualify(state, actor="host", player="bob", round=1, reason="late", now=state.created_at)
    ban(state, actor="host", player="cat", reason="rude", now=state.created_at)
    moves = {
        (r.number, p): " ".join(res.move_list) for r in state.rounds for p, res in r.results.items()
    }
    for r in state.rounds:
        for p, res in list(r.results.items()):
            r.results[p] = strip_moves(res)
    live = new_live(state)
    live.rooms["1"] = [RoundRoom(code="M4PX9Q", created_at=5, seats={"ann": 1, "bob": 2})]
    return live, moves


async def test_from_0003_keeps_what_was_there_and_stores_tournaments(records_url: str) -> None:
    await upgrade(records_url, "0003")
    old = await SqlRecordsStore.open(records_url, migrate=False)
    try:
        ada = await old.create_player("Ada", "192.0.2.1")
    finally:
        await old.close()
    store = await SqlRecordsStore.open(records_url)  # migrates to the head
    try:
        assert (await status(records_url)).up_to_date
        assert await _diff(records_url) == []
        assert (await store.player(ada.player_id)) is not None
        live, moves = _finished()
        await store.tournaments.save(live, moves)
        await store.tournaments.save(live, moves)  # rewritten whole: no duplicate rows
        found = await store.tournaments.load(live.state.id)
        assert found is not None
        back, back_moves = found
        assert back_moves == moves
        assert back.state.model_dump(exclude={"seed"}) == live.state.model_dump(exclude={"seed"})
        assert back.state.seed == SEED.hex()  # finished: the seed is kept
        assert back.rooms == live.rooms
        assert [row.as_json() for row in standings(back.state)] == [
            row.as_json() for row in standings(live.state)
        ]
        assert await store.tournaments.load("NOSUCH") is None
    finally:
        await store.close()


async def test_the_seed_is_written_only_once_finished(records_url: str) -> None:
    store = await SqlRecordsStore.open(records_url)
    try:
        state = with_players(new(rounds=2), "ann")
        await store.tournaments.save(new_live(state), {})
        found = await store.tournaments.load(state.id)
        assert found is not None and found[0].state.seed != state.seed
        assert found[0].state.commitment == state.commitment
    finally:
        await store.close()


async def test_from_0005_a_stored_tournament_is_version_1(records_url: str) -> None:
    """A tournament written before sealed deals drew numbered deals (fair-deals.md version
    1): migrated, it must say so, or its rounds would be re-derived as sealed ones and its
    export would not verify; a new one is version 2."""
    await upgrade(records_url, "0005")
    old = new(rounds=2)
    old.id = "OLD1AB"
    db = open_database(records_url)

    def write_as_0005(conn: Connection) -> None:
        row = {k: v for k, v in tournament_row(old).items() if k != "fair"}
        conn.execute(insert(tournaments).values(row))

    try:
        await db.write(write_as_0005)
    finally:
        await db.dispose()
    store = await SqlRecordsStore.open(records_url)  # migrates to the head
    try:
        assert await _diff(records_url) == []
        found = await store.tournaments.load(old.id)
        assert found is not None and found[0].state.fair == 1
        fresh = new(rounds=2)
        assert fresh.fair == 2
        await store.tournaments.save(new_live(fresh), {})
        found = await store.tournaments.load(fresh.id)
        assert found is not None and found[0].state.fair == 2
    finally:
        await store.close()
