"""Migrations of the records store and ``samedeal db``: from an empty database, from the
previous revision, several workers at once — on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from pg_fixtures import new_pg_database
from records_helpers import make_race, seat
from sqlalchemy import Connection

from server.records.db import open_database
from server.records.migrate import head_revision, status, upgrade
from server.records.store import SqlRecordsStore
from server.records.tables import metadata, races, seats

ROOT = Path(__file__).resolve().parent.parent


async def _schema_diff(url: str) -> list[Any]:
    db = open_database(url)

    def diff(conn: Connection) -> list[Any]:
        return list(compare_metadata(MigrationContext.configure(conn), metadata))

    try:
        return await db.read(diff)
    finally:
        await db.dispose()


async def test_from_empty_to_head_builds_the_declared_schema(records_url: str) -> None:
    before = await status(records_url)
    assert before.current is None and not before.up_to_date
    await upgrade(records_url)
    after = await status(records_url)
    assert after.current == head_revision() == after.head and after.up_to_date
    assert await _schema_diff(records_url) == []
    await upgrade(records_url)  # again: nothing to do
    assert (await status(records_url)).current == head_revision()


async def test_from_the_previous_revision_keeps_the_players(records_url: str) -> None:
    await upgrade(records_url, "0001")
    assert (await status(records_url)).current == "0001"
    old = await SqlRecordsStore.open(records_url, migrate=False)
    try:
        ada = await old.create_player("Ada", "192.0.2.1")
        await old.set_handle(ada.player_id, "ada")
    finally:
        await old.close()
    new = await SqlRecordsStore.open(records_url)  # migrates to the head
    try:
        assert (await status(records_url)).up_to_date
        me = await new.authenticate(ada.player_id, ada.secret)
        assert me is not None and me.handle == "ada"
        race_id = await new.record_race(make_race(1, seat(1, ada.player_id)))
        assert (await new.recent_races(ada.player_id))[0].race_id == race_id
    finally:
        await new.close()
    assert await _schema_diff(records_url) == []


async def test_from_the_revision_before_ratings_keeps_the_races(records_url: str) -> None:
    """0007 (ratings) on a database of 0006 with a race in it: the race stays, not rated;
    rated races are rated from then on."""
    await upgrade(records_url, "0006")
    old = await SqlRecordsStore.open(records_url, migrate=False)
    try:
        ada = await old.create_player("Ada", "192.0.2.1")
        bob = await old.create_player("Bob", "192.0.2.1")

        def write_as_0006(conn: Connection) -> None:  # the columns 0006 knows, no `rated`
            race_pk = conn.execute(
                races.insert()
                .values(
                    public_id="0123456789ab",
                    room="OLD1",
                    room_created_at=1,
                    race_no=1,
                    game="klondike",
                    deal="KL1-1-AAAAAAK",
                    casual=False,
                    started_at=1,
                    ended_at=2,
                    racers=1,
                )
                .returning(races.c.id)
            ).scalar_one()
            conn.execute(
                seats.insert().values(
                    race_id=race_pk,
                    seat=1,
                    name="Ada",
                    status="won",
                    rank=1,
                    score=9,
                    moves=1,
                    on_foundations=52,
                    actions="a",
                    action_times="5",
                    game="klondike",
                    ended_at=2,
                )
            )

        await old.db.write(write_as_0006)
    finally:
        await old.close()
    new = await SqlRecordsStore.open(records_url)
    try:
        assert (await status(records_url)).current == head_revision()
        kept = await new.race("0123456789ab")
        assert kept is not None and not kept.record.rated and not kept.record.casual
        race_id = await new.record_race(
            make_race(2, seat(1, ada.player_id), seat(2, bob.player_id, "resigned"), rated=True)
        )
        assert [c.seat for c in await new.ratings.of_race(race_id)] == [1, 2]
        assert (await new.ratings.rebuild(write=False)).differing == 0
    finally:
        await new.close()
    assert await _schema_diff(records_url) == []


async def test_workers_starting_together_migrate_once(records_url: str) -> None:
    stores = await asyncio.gather(*(SqlRecordsStore.open(records_url) for _ in range(3)))
    try:
        assert (await status(records_url)).up_to_date
        identities = await asyncio.gather(*(s.create_player("x", "192.0.2.2") for s in stores))
        assert len({i.player_id for i in identities}) == 3
    finally:
        for s in stores:
            await s.close()


# --------------------------------------------------------------------- samedeal db


def _db(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", "db", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
    )


@pytest.mark.integration  # a subprocess
def test_db_upgrade_and_status_in_the_default_data_dir(tmp_path: Path) -> None:
    empty = _db("status", cwd=tmp_path)
    assert empty.returncode == 1 and "none (empty)" in empty.stdout
    assert not (tmp_path / "samedeal-data").exists()  # status creates nothing
    up = _db("upgrade", cwd=tmp_path)
    assert up.returncode == 0, up.stderr
    assert (tmp_path / "samedeal-data" / "samedeal.db").is_file()
    now = _db("status", cwd=tmp_path)
    assert now.returncode == 0 and "up to date" in now.stdout
    assert f"current revision: {head_revision()}" in now.stdout


def test_db_upgrade_on_postgresql(pg_server: str) -> None:
    records_url = new_pg_database(pg_server)
    up = _db("upgrade", "--database", records_url)
    assert up.returncode == 0, up.stderr
    now = _db("status", "--database", records_url)
    assert now.returncode == 0 and f"current revision: {head_revision()}" in now.stdout


@pytest.mark.integration  # a subprocess
def test_db_bad_values_get_one_line_and_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    for args in [
        ("upgrade", "--database", "mysql://root@localhost/x"),
        ("status", "--database", "not a url"),
        ("upgrade", "--database", "sqlite://"),
        ("upgrade", "--data", str(tmp_path / "a-file")),
        ("upgrade", "--database", "postgresql://u:hunter2@127.0.0.1:1/x"),
    ]:
        done = _db(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("samedeal db: "), done.stderr
        assert "hunter2" not in done.stderr and "Traceback" not in done.stderr
