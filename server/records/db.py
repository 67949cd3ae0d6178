"""Database URLs and engines: SQLite (aiosqlite) and PostgreSQL (asyncpg).

SQLite is set up for several worker processes sharing one file: WAL (readers never wait
for the writer), a busy timeout (a writer waits for another instead of failing), and every
write transaction opened with ``BEGIN IMMEDIATE`` so it takes the write lock before it
reads — a deferred transaction that reads first and then writes fails at once
(``SQLITE_BUSY``) when another process wrote in between, whatever the timeout.
``synchronous=NORMAL`` in WAL mode loses nothing when a process dies; a power cut may lose
the last transactions, never corrupt the file.

The only text SQL in the package is here: the pragmas and ``BEGIN``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from .models import BadDatabase

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DB_FILE",
    "DEFAULT_DATA_DIR",
    "Engines",
    "create_engines",
    "database_url",
    "normalize_url",
    "safe_url",
]

DEFAULT_DATA_DIR = "samedeal-data"
DB_FILE = "samedeal.db"
BUSY_TIMEOUT_MS = 10_000


def database_url(*, data: str | Path | None = None, database: str | None = None) -> str:
    """The URL for ``--database URL`` or ``--data DIR`` (the SQLite file ``samedeal.db``
    inside; the default directory is ``./samedeal-data``). Raises :class:`BadDatabase`."""
    if database is not None:
        if data is not None:
            raise BadDatabase("give --data or --database, not both")
        return normalize_url(database).render_as_string(hide_password=False)
    directory = Path(data if data is not None else DEFAULT_DATA_DIR)
    if directory.exists() and not directory.is_dir():
        raise BadDatabase(f"the data directory {str(directory)!r} is a file")
    return f"sqlite+aiosqlite:///{(directory / DB_FILE).absolute()}"


def normalize_url(url: str | URL) -> URL:
    """A URL with its async driver: ``postgresql://`` (or ``postgres://``) becomes
    ``postgresql+asyncpg://``, ``sqlite://`` becomes ``sqlite+aiosqlite://``. Raises
    :class:`BadDatabase` for anything else, and for an SQLite database that is not a file."""
    try:
        parsed = make_url(url) if isinstance(url, str) else url
    except (ArgumentError, ValueError):
        raise BadDatabase(f"not a database URL: {str(url)[:80]!r}") from None
    name = parsed.drivername
    backend = name.split("+")[0]
    if name in ("postgresql", "postgres", "postgresql+asyncpg"):
        return parsed.set(drivername="postgresql+asyncpg")
    if name in ("sqlite", "sqlite+aiosqlite"):
        if not parsed.database or parsed.database == ":memory:":
            raise BadDatabase("an SQLite database must be a file (sqlite:///PATH)")
        return parsed.set(drivername="sqlite+aiosqlite")
    raise BadDatabase(
        f"unsupported database {backend!r}: use sqlite:///PATH or postgresql://USER@HOST/DB"
    )


def safe_url(url: str | URL) -> str:
    """The URL as it may be printed: any password hidden."""
    try:
        return normalize_url(url).render_as_string(hide_password=True)
    except BadDatabase:
        return "<bad URL>"


@dataclass(frozen=True, slots=True)
class Engines:
    """The engines of one store: ``write`` for transactions that write (on SQLite one
    connection per process, ``BEGIN IMMEDIATE``), ``read`` for reads (the same engine on
    PostgreSQL)."""

    write: AsyncEngine
    read: AsyncEngine

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.write.dialect.name

    async def dispose(self) -> None:
        """Close every pooled connection."""
        await self.write.dispose()
        if self.read is not self.write:
            await self.read.dispose()


def create_engines(url: str | URL, *, pool_size: int = 5) -> Engines:
    """Engines for ``url`` (see :func:`normalize_url`); creates the SQLite file's
    directory."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "sqlite":
        engine = create_async_engine(parsed, pool_size=pool_size, max_overflow=pool_size)
        return Engines(write=engine, read=engine)
    assert parsed.database is not None
    try:
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadDatabase(f"cannot create the data directory: {exc.strerror}") from None
    write = create_async_engine(parsed, pool_size=1, max_overflow=0, pool_timeout=60)
    read = create_async_engine(parsed, pool_size=pool_size, max_overflow=0)
    _sqlite_setup(write, "BEGIN IMMEDIATE")
    _sqlite_setup(read, "BEGIN")
    return Engines(write=write, read=read)


def _sqlite_setup(engine: AsyncEngine, begin: str) -> None:
    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # the driver's own transaction handling off: SQLAlchemy's "begin" below emits BEGIN
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)
