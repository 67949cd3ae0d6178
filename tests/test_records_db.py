"""How the records' database runs a call on a real PostgreSQL: writes and reads in a
transaction, a single-statement read (:meth:`Database.read_single`) in none of its own —
one round trip — with its statement prepared once per connection and reused. And how a
SQLite file shared by several workers is opened: switched to WAL even while another
connection writes to it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pg_fixtures import new_pg_database
from sqlalchemy import Connection, func, literal_column, select, table

from server.records.db import Database, SqliteDatabase, open_database

__all__: list[str] = []


@pytest.fixture
def pg_url(pg_server: str) -> str:
    """A fresh PostgreSQL database."""
    return new_pg_database(pg_server)


@pytest.fixture
async def pg_db(pg_url: str) -> AsyncIterator[Database]:
    """The database at ``pg_url``, one pooled connection at a time."""
    db = open_database(pg_url, pool_size=1)
    try:
        yield db
    finally:
        await db.dispose()


def _own_transaction(conn: Connection) -> bool:
    """Whether each statement is a transaction of its own (none begun around them): two
    statements asking their transaction's id get two ids."""
    first, second = (conn.execute(select(func.txid_current())).scalar() for _ in range(2))
    return bool(first != second)


async def test_single_reads_run_without_a_transaction_around_them(pg_db: Database) -> None:
    assert await pg_db.read_single(_own_transaction) is True
    assert await pg_db.read(_own_transaction) is False
    assert await pg_db.write(_own_transaction) is False
    # the pool's connection went back to transactions after the single read
    assert await pg_db.read_single(_own_transaction) is True
    assert await pg_db.write(_own_transaction) is False


def _prepared(conn: Connection) -> tuple[Any, ...]:
    conn.execute(select(literal_column("1")))
    pid = func.pg_backend_pid()
    prepared = select(func.count()).select_from(table("pg_prepared_statements"))
    return tuple(conn.execute(select(pid, prepared.scalar_subquery())).one())


async def test_a_single_reads_statements_are_prepared_once(pg_db: Database) -> None:
    first = await pg_db.read_single(_prepared)
    again = [await pg_db.read_single(_prepared) for _ in range(5)]
    # the same connection each time, holding no more prepared statements than after the
    # first call: each statement was prepared once and reused
    assert again == [first] * 5
    assert first[1] >= 2


async def test_a_new_sqlite_file_is_switched_to_wal_while_another_connection_writes(
    tmp_path: Path,
) -> None:
    # SQLite refuses a switch to WAL at once, without waiting the busy timeout, while
    # another connection holds the write lock of a file still in its rollback journal: the
    # race of workers opening a new file together (it failed a CI run). The switch waits.
    path = tmp_path / "new.db"
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("CREATE TABLE t (x)")
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("INSERT INTO t VALUES (1)")
    released = threading.Event()

    def release_soon() -> None:
        released.wait(0.3)
        writer.execute("COMMIT")

    thread = threading.Thread(target=release_soon)
    thread.start()
    db = open_database(f"sqlite:///{path}")
    assert isinstance(db, SqliteDatabase)
    try:
        mode = await db.read(lambda c: c.exec_driver_sql("PRAGMA journal_mode").scalar())
        assert mode == "wal"
        rows = await db.read(lambda c: c.exec_driver_sql("SELECT x FROM t").scalars().all())
        assert rows == [1]  # the writer's transaction went through, after the switch waited
    finally:
        thread.join()
        writer.close()
        await db.dispose()
