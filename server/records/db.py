"""Database URLs and engines: SQLite (the ``sqlite3`` module, in threads) and PostgreSQL
(asyncpg).

SQLite is set up for several worker processes sharing one file: WAL (readers never wait
for the writer), a busy timeout (a writer waits for another instead of failing), and every
write transaction opened with ``BEGIN IMMEDIATE`` so it takes the write lock before it
reads — a deferred transaction that reads first and then writes fails at once
(``SQLITE_BUSY``) when another process wrote in between, whatever the timeout.
``synchronous=NORMAL`` in WAL mode loses nothing when a process dies; a power cut may lose
the last transactions, never corrupt the file.

Every call reports whether the database answered (:attr:`Database.observers`), and a call
that could not reach it raises :class:`~.models.RecordsUnavailable` (:func:`trouble` tells
such failures from refusals); nothing is retried here but a read on a pooled connection
the database had closed (a restart), which cannot have changed anything.

The only text SQL in the package is here: the pragmas and ``BEGIN``.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, InterfaceError, OperationalError
from sqlalchemy.ext.asyncio import create_async_engine

from .models import BadDatabase, RecordsUnavailable

__all__ = [
    "BUSY_TIMEOUT_MS",
    "CONNECT_TIMEOUT",
    "DB_FILE",
    "DEFAULT_DATA_DIR",
    "Database",
    "Observer",
    "PostgresDatabase",
    "SqliteDatabase",
    "database_url",
    "normalize_url",
    "open_database",
    "safe_url",
    "trouble",
]

T = TypeVar("T")

DEFAULT_DATA_DIR = "samedeal-data"
DB_FILE = "samedeal.db"
BUSY_TIMEOUT_MS = 10_000
CONNECT_TIMEOUT = 5.0
"""Seconds to open a PostgreSQL connection (asyncpg's own default is a minute: a host
that does not answer would hold every call that long)."""
STATEMENT_TIMEOUT = 30.0
"""Seconds a PostgreSQL statement may take before the call fails (a connection whose
peer vanished without a reset would otherwise wait for TCP to give up)."""

Observer = Callable[[str | None], None]
"""Told after each call: ``None`` when the database answered (whatever it said), else why
it could not be reached."""

# SQLSTATE classes and codes of a database that cannot serve now (PostgreSQL appendix A):
# 08 connection exception, 53 insufficient resources (too many connections, disk full),
# 57 operator intervention (admin or crash shutdown, starting up), 58 system error (I/O);
# 25006 read-only transaction (a standby, default_transaction_read_only), 40001 and 40P01
# a serialization failure or deadlock (try again), 55P03 a lock not available
_PASSING_CLASSES = ("08", "53", "57", "58")
_PASSING_CODES = ("25006", "40001", "40P01", "55P03")


def trouble(exc: BaseException) -> str | None:
    """Why ``exc`` says the database cannot be reached now (a short reason for the log),
    or ``None`` when it is an answer — a refusal of this call that trying again would not
    change (a constraint, a bug).

    Passing: any ``OSError`` (refused, reset, a name that does not resolve, a timeout),
    SQLAlchemy's ``OperationalError`` and ``InterfaceError`` (SQLite's locked, read-only or
    unopenable file; a closed connection), any error after which SQLAlchemy dropped the
    connection, and the SQLSTATEs of a server that cannot serve now (shutdown, starting
    up, read-only, out of connections). asyncpg raises a refused or timed-out connect
    unwrapped, so the whole chain of causes is looked at."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError):  # ConnectionError, TimeoutError, socket.gaierror …
            return _reason(cause)
        if isinstance(cause, OperationalError | InterfaceError):
            return _reason(cause.orig or cause)
        if isinstance(cause, DBAPIError) and cause.connection_invalidated:
            return _reason(cause.orig or cause)
        state = getattr(cause, "sqlstate", None)
        if isinstance(state, str) and (state[:2] in _PASSING_CLASSES or state in _PASSING_CODES):
            return _reason(cause)
        cause = cause.__cause__ or cause.__context__
    return None


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:160]}" if text else type(exc).__name__


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
    return f"sqlite:///{(directory / DB_FILE).absolute()}"


def normalize_url(url: str | URL) -> URL:
    """A URL with its driver: ``postgresql://`` (or ``postgres://``) becomes
    ``postgresql+asyncpg://``; ``sqlite://`` (or ``sqlite+aiosqlite://``) stays SQLite. Raises
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
        return parsed.set(drivername="sqlite")
    raise BadDatabase(
        f"unsupported database {backend!r}: use sqlite:///PATH or postgresql://USER@HOST/DB"
    )


def safe_url(url: str | URL) -> str:
    """The URL as it may be printed: any password hidden."""
    try:
        return normalize_url(url).render_as_string(hide_password=True)
    except BadDatabase:
        return "<bad URL>"


class Database(ABC):
    """Runs a function of a Core :class:`~sqlalchemy.Connection` in one transaction, off
    the event loop: :meth:`write` for transactions that write, :meth:`read` for the rest,
    :meth:`read_single` for a read of one statement that needs no transaction around it.

    A call that cannot reach the database raises :class:`RecordsUnavailable`; each call
    tells the :attr:`observers` whether the database answered.

    The store's statements are written once, as plain functions of a connection; the two
    engines run them the way each is fastest:

    * SQLite (the ``sqlite3`` module): the whole function in a worker thread, so a call
      costs one hand-over between threads. aiosqlite hands over every cursor operation —
      some fifteen for a player page, which made it four times slower
      (docs/benchmarks/history.md, "Records store").
    * PostgreSQL (asyncpg): on the event loop through SQLAlchemy's async engine
      (``run_sync``); asyncpg's network waits are awaited, never blocking.
    """

    def __init__(self) -> None:
        #: told after each call whether the database answered (see :data:`Observer`)
        self.observers: list[Observer] = []

    @property
    @abstractmethod
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""

    async def write(self, work: Callable[..., T], *args: Any) -> T:
        """``work(connection, *args)`` in a write transaction (committed unless it raises)."""
        return await self._call(self._write, work, args, again=False)

    async def read(self, work: Callable[..., T], *args: Any) -> T:
        """``work(connection, *args)`` in a read-only transaction."""
        return await self._call(self._read, work, args, again=True)

    async def read_single(self, work: Callable[..., T], *args: Any) -> T:
        """``work(connection, *args)`` for a read of one statement (or of statements that
        need not see one snapshot), with no transaction begun and ended around it where
        the engine allows: on PostgreSQL one round trip instead of three. Never for a
        function that writes."""
        return await self._call(self._read_single, work, args, again=True)

    async def _call(
        self,
        run: Callable[[Callable[..., T], tuple[Any, ...]], Awaitable[T]],
        work: Callable[..., T],
        args: tuple[Any, ...],
        *,
        again: bool,
    ) -> T:
        try:
            try:
                result = await run(work, args)
            except DBAPIError as exc:
                # a pooled connection the database closed (it restarted): SQLAlchemy has
                # dropped the pool's old connections; a read is safe to send once more
                if not (again and exc.connection_invalidated):
                    raise
                result = await run(work, args)
        except Exception as exc:
            reason = trouble(exc)
            self._tell(reason)
            if reason is None:
                raise
            raise RecordsUnavailable(reason) from exc
        self._tell(None)
        return result

    def _tell(self, reason: str | None) -> None:
        for observer in self.observers:
            observer(reason)

    @abstractmethod
    async def _write(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        """:meth:`write` without the error handling."""

    @abstractmethod
    async def _read(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        """:meth:`read` without the error handling."""

    @abstractmethod
    async def _read_single(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        """:meth:`read_single` without the error handling."""

    @abstractmethod
    async def dispose(self) -> None:
        """Close every pooled connection."""


class SqliteDatabase(Database):
    """SQLite: a write engine of one connection (``BEGIN IMMEDIATE``), a read engine of
    ``pool_size`` connections, and a thread pool of their size to run the calls."""

    def __init__(self, url: URL, pool_size: int) -> None:
        super().__init__()
        self.write_engine = create_engine(url, pool_size=1, max_overflow=0, pool_timeout=60)
        self.read_engine = create_engine(url, pool_size=pool_size, max_overflow=0)
        _sqlite_setup(self.write_engine, "BEGIN IMMEDIATE")
        _sqlite_setup(self.read_engine, "BEGIN")
        self._threads = ThreadPoolExecutor(pool_size + 1, thread_name_prefix="records-sqlite")

    @property
    def dialect(self) -> str:
        """``sqlite``."""
        return "sqlite"

    async def _write(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        return await self._run(self.write_engine, work, args)

    async def _read(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        return await self._run(self.read_engine, work, args)

    async def _read_single(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        # a read transaction, as _read (SQLite's BEGIN is no round trip; the thread's
        # hand-over is the cost)
        return await self._run(self.read_engine, work, args)

    async def _run(self, engine: Engine, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        def call() -> T:
            with engine.begin() as connection:
                return work(connection, *args)

        return await asyncio.get_running_loop().run_in_executor(self._threads, call)

    async def dispose(self) -> None:
        """See :meth:`Database.dispose`."""
        await asyncio.get_running_loop().run_in_executor(self._threads, self._dispose)
        self._threads.shutdown(wait=False)

    def _dispose(self) -> None:
        self.write_engine.dispose()
        self.read_engine.dispose()


class PostgresDatabase(Database):
    """PostgreSQL through asyncpg: one async engine (one pool) for reads and writes.

    A call's connection runs ``BEGIN`` and ``ROLLBACK`` (or ``COMMIT``) around its
    statements: three round trips for a read of one statement. :meth:`read_single` takes
    its connection in autocommit instead (the pool's connection with its isolation level
    set for the call; asyncpg's adapter sets it without a round trip, and has no
    transaction to roll back when the connection returns to the pool): one round trip. It
    loses nothing for a read: PostgreSQL's default READ COMMITTED takes a snapshot per
    statement, in a transaction or not. Statements are prepared once per connection and
    reused (SQLAlchemy's asyncpg dialect keeps ``prepared_statement_cache_size``, 100, of
    them per connection).
    """

    def __init__(self, url: URL, pool_size: int) -> None:
        super().__init__()
        self.engine = create_async_engine(
            url,
            pool_size=pool_size,
            max_overflow=pool_size,
            connect_args={"timeout": CONNECT_TIMEOUT, "command_timeout": STATEMENT_TIMEOUT},
        )
        self._autocommit = self.engine.execution_options(isolation_level="AUTOCOMMIT")

    @property
    def dialect(self) -> str:
        """``postgresql``."""
        return "postgresql"

    async def _write(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        async with self.engine.begin() as connection:
            return await connection.run_sync(work, *args)

    async def _read(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        async with self.engine.connect() as connection:
            return await connection.run_sync(work, *args)

    async def _read_single(self, work: Callable[..., T], args: tuple[Any, ...]) -> T:
        async with self._autocommit.connect() as connection:
            return await connection.run_sync(work, *args)

    async def dispose(self) -> None:
        """See :meth:`Database.dispose`."""
        await self.engine.dispose()


def open_database(url: str | URL, *, pool_size: int = 5) -> Database:
    """The :class:`Database` for ``url`` (see :func:`normalize_url`); creates the SQLite
    file's directory. Connections are made on first use."""
    parsed = normalize_url(url)
    if parsed.get_backend_name() != "sqlite":
        return PostgresDatabase(parsed, pool_size)
    assert parsed.database is not None
    try:
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadDatabase(f"cannot create the data directory: {exc.strerror}") from None
    return SqliteDatabase(parsed, pool_size)


def _sqlite_setup(engine: Engine, begin: str) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # the driver's own transaction handling off: SQLAlchemy's "begin" below emits BEGIN
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        _enter_wal(cursor)
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql(begin)


def _enter_wal(cursor: Any) -> None:
    """Switch the file to WAL. Several connections opening a new file at once race to
    switch it, and SQLite refuses the losers at once (``database is locked``) without
    calling the busy handler, to avoid a deadlock; so the switch is retried, with short
    sleeps, for as long as the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)
