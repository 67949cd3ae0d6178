"""Alembic migrations of the records store, applied through :class:`~.db.Database`.

:func:`upgrade` runs at server start and from ``samedeal db upgrade``; several workers
starting at once are fine: on SQLite the migration transaction takes the write lock
(``BEGIN IMMEDIATE``) before it reads the current revision, on PostgreSQL it first takes a
transaction-level advisory lock, so the second worker finds the work done.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, func, select
from sqlalchemy.engine import URL

from .db import Database, normalize_url, open_database

__all__ = [
    "MIGRATIONS",
    "RevisionStatus",
    "alembic_config",
    "head_revision",
    "migrate_database",
    "status",
    "upgrade",
]

MIGRATIONS = Path(__file__).with_name("migrations")
_PG_LOCK = 0x5A4DEA1  # the advisory lock id of migrations (any constant of our own)


@dataclass(frozen=True, slots=True)
class RevisionStatus:
    """The database's current revision (``None``: empty) and the newest one shipped."""

    current: str | None
    head: str

    @property
    def up_to_date(self) -> bool:
        """Whether the database is at the head revision."""
        return self.current == self.head


def alembic_config(connection: Connection | None = None) -> Config:
    """An Alembic configuration for the packaged migrations (no ini file)."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    """The newest revision shipped."""
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    assert head is not None
    return head


def _current(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def migrate_database(db: Database, revision: str = "head") -> None:
    """Upgrade ``db`` to ``revision`` (tests stop at an older one to check the migrations
    from it)."""

    def run(connection: Connection) -> None:
        if connection.dialect.name == "postgresql":
            connection.execute(select(func.pg_advisory_xact_lock(_PG_LOCK)))
        command.upgrade(alembic_config(connection), revision)

    await db.write(run)


async def upgrade(url: str | URL, revision: str = "head") -> None:
    """Bring the database at ``url`` to ``revision`` (the newest by default)."""
    db = open_database(url, pool_size=1)
    try:
        await migrate_database(db, revision)
    finally:
        await db.dispose()


async def status(url: str | URL) -> RevisionStatus:
    """The database's current revision and the head (an SQLite file that does not exist
    yet is reported empty, not created)."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() == "sqlite" and not Path(parsed.database or "").exists():
        return RevisionStatus(current=None, head=head_revision())
    db = open_database(url, pool_size=1)
    try:
        current = await db.read(_current)
    finally:
        await db.dispose()
    return RevisionStatus(current=current, head=head_revision())
