"""How the records' database runs a call on a real PostgreSQL: writes and reads in a
transaction, a single-statement read (:meth:`Database.read_single`) in none of its own —
one round trip — with its statement prepared once per connection and reused."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pg_fixtures import new_pg_database
from sqlalchemy import Connection, func, literal_column, select, table

from server.records.db import Database, open_database

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
