"""The records store: one interface, one implementation over SQLAlchemy's async engines.

:class:`RecordsStore` is what the server calls; :class:`SqlRecordsStore` implements it on
SQLite (aiosqlite) and PostgreSQL (asyncpg). Every query is a Core expression with bound
parameters. Races are written by :mod:`.races` (in one transaction per batch, idempotent);
finished races reach it through :class:`server.records.writer.RaceWriter`, which batches
them in the background.

    store = await SqlRecordsStore.open("sqlite+aiosqlite:///samedeal-data/samedeal.db")
    identity = await store.create_player("Ada", address="203.0.113.9")
    ...
    await store.close()
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Row, delete, select, update
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from . import identity as ids
from . import races as race_io
from .db import Engines, create_engines
from .migrate import migrate_engines
from .models import (
    HandleTaken,
    Identity,
    Player,
    PlayerStats,
    Profile,
    RaceRecord,
    RaceSummary,
    RateLimited,
    StoredRace,
    UnknownPlayer,
)
from .tables import meta, player_stats, players, rate_buckets, seats

__all__ = ["DAY_MS", "RecordsStore", "SqlRecordsStore", "now_ms", "purge_periodically"]

logger = logging.getLogger(__name__)

DAY_MS = 86_400_000
_ADDRESS_KEY = "address_key"


def now_ms() -> int:
    """The server clock in ms since the epoch."""
    return time.time_ns() // 1_000_000


class RecordsStore(ABC):
    """Player identities and finished races, kept for good.

    Identity calls take the public player id; the caller authenticates a connection once
    (:meth:`authenticate`) and then acts for that player. Errors are
    :class:`~server.records.models.RecordsError` subclasses with a sentence for the player.
    """

    # ---------------------------------------------------------------- identities

    @abstractmethod
    async def create_player(self, name: str, address: str) -> Identity:
        """A new identity for a client at ``address`` (rate-limited per address: raises
        :class:`RateLimited`). ``name`` is cleaned as room names are."""

    @abstractmethod
    async def authenticate(self, player_id: str, secret: str) -> Player | None:
        """The player if ``secret`` is theirs, else ``None`` (also for malformed input and
        deleted identities)."""

    @abstractmethod
    async def player(self, player_id: str) -> Player | None:
        """The player with this public id (deleted ones too), or ``None``."""

    @abstractmethod
    async def player_by_handle(self, handle: str) -> Player | None:
        """The player holding ``handle`` (compared by key: case and look-alikes folded)."""

    @abstractmethod
    async def rename(self, player_id: str, name: str) -> Player:
        """Set the display name; raises :class:`UnknownPlayer`."""

    @abstractmethod
    async def set_handle(self, player_id: str, handle: str | None) -> Player:
        """Take ``handle`` (``None``: give it up); raises :class:`BadHandle`,
        :class:`HandleTaken`, :class:`UnknownPlayer`."""

    @abstractmethod
    async def recover(self, recovery_code: str) -> Identity | None:
        """Redeem a recovery code: the same player with a new secret and a new recovery
        code (the old ones stop working), or ``None`` for a code that is not valid."""

    @abstractmethod
    async def delete_player(self, player_id: str) -> None:
        """Anonymise an identity for good: name "deleted player", handle freed, secret and
        recovery code void, stats dropped; its seats in past races stay (anonymised)."""

    # ---------------------------------------------------------------- races

    @abstractmethod
    async def record_races(self, races: Sequence[RaceRecord]) -> list[str]:
        """Write finished races in one transaction; the public race id of each, in order.
        A race already written (same natural key) is not written again: its id is returned."""

    async def record_race(self, race: RaceRecord) -> str:
        """Write one finished race (see :meth:`record_races`); its public id."""
        return (await self.record_races([race]))[0]

    @abstractmethod
    async def race(self, race_id: str) -> StoredRace | None:
        """A race with all its seats and move lists, or ``None``."""

    @abstractmethod
    async def recent_races(
        self, player_id: str, *, limit: int = 20, offset: int = 0
    ) -> list[RaceSummary]:
        """A player's races, the latest first; ``limit`` at most 100."""

    @abstractmethod
    async def stats(self, player_id: str) -> list[PlayerStats]:
        """A player's figures per game they played, by game name."""

    @abstractmethod
    async def profile(self, handle: str, *, limit: int = 20, offset: int = 0) -> Profile | None:
        """What the player page shows, read at once: the player holding ``handle``, their
        stats and a page of their recent races; ``None`` for an unknown handle."""

    @abstractmethod
    async def purge(self, *, now: int | None = None) -> int:
        """Delete casual races older than the retention period (never identities, never
        stats); the number of races deleted."""

    @abstractmethod
    async def close(self) -> None:
        """Release the connections."""


class SqlRecordsStore(RecordsStore):
    """:class:`RecordsStore` on SQLite or PostgreSQL. Build it with :meth:`open`.

    ``retention_days``: casual races older than that are purged (``None``: kept for good).
    ``create_limit`` identities per ``create_window`` seconds per client address (a token
    bucket kept in the database, so every worker sharing it counts together).
    """

    def __init__(
        self,
        engines: Engines,
        *,
        retention_days: float | None = 90,
        create_limit: int = 10,
        create_window: float = 3600.0,
    ) -> None:
        self.engines = engines
        self.retention_days = retention_days
        self.create_limit = create_limit
        self.create_window = create_window
        self._address_secret: bytes | None = None  # read on the first identity created

    @classmethod
    async def open(
        cls,
        url: str | URL,
        *,
        migrate: bool = True,
        pool_size: int = 5,
        retention_days: float | None = 90,
        create_limit: int = 10,
        create_window: float = 3600.0,
    ) -> SqlRecordsStore:
        """Connect to ``url`` (see :func:`server.records.db.normalize_url`) and apply the
        migrations unless ``migrate`` is false."""
        engines = create_engines(url, pool_size=pool_size)
        if migrate:
            try:
                await migrate_engines(engines)
            except BaseException:
                await engines.dispose()
                raise
        return cls(
            engines,
            retention_days=retention_days,
            create_limit=create_limit,
            create_window=create_window,
        )

    def __repr__(self) -> str:
        return f"<SqlRecordsStore {self.engines.dialect}>"

    async def close(self) -> None:
        """Release the connections."""
        await self.engines.dispose()

    # ---------------------------------------------------------------- identities

    async def create_player(self, name: str, address: str) -> Identity:
        """See :meth:`RecordsStore.create_player`."""
        now = now_ms()
        secret, code = ids.new_secret(), ids.new_recovery_code()
        recovery = ids.normalize_recovery_code(code)
        assert recovery is not None
        identity = Identity(ids.new_player_id(), secret, code)
        async with self.engines.write.begin() as conn:
            if self._address_secret is None:
                self._address_secret = await _address_secret(conn)
            await self._take_token(conn, ids.address_key(self._address_secret, address), now)
            await conn.execute(
                players.insert().values(
                    public_id=identity.player_id,
                    secret_hash=ids.hash_secret(secret),
                    recovery_hash=ids.hash_secret(recovery),
                    name=ids.clean_player_name(name),
                    created_at=now,
                )
            )
        return identity

    async def _take_token(self, conn: AsyncConnection, key: str, now: int) -> None:
        limit = float(self.create_limit)
        insert = race_io.dialect_insert(conn, rate_buckets)
        await conn.execute(
            insert.values(address_key=key, tokens=limit, updated_at=now).on_conflict_do_nothing(
                index_elements=[rate_buckets.c.address_key]
            )
        )
        # FOR UPDATE serializes PostgreSQL transactions on the row; SQLite's BEGIN
        # IMMEDIATE already serialized the whole transaction
        row = (
            await conn.execute(
                select(rate_buckets.c.tokens, rate_buckets.c.updated_at)
                .where(rate_buckets.c.address_key == key)
                .with_for_update()
            )
        ).one()
        per_ms = limit / (self.create_window * 1000)
        tokens = min(limit, row.tokens + max(0, now - row.updated_at) * per_ms)
        if tokens < 1:
            wait = (1 - tokens) / per_ms / 1000 if per_ms else self.create_window
            raise RateLimited(
                f"too many new players from this address: try again in {wait:.0f} s", wait
            )
        await conn.execute(
            update(rate_buckets)
            .where(rate_buckets.c.address_key == key)
            .values(tokens=tokens - 1, updated_at=now)
        )

    async def authenticate(self, player_id: str, secret: str) -> Player | None:
        """See :meth:`RecordsStore.authenticate`."""
        if not ids.is_player_id(player_id) or not ids.is_secret(secret):
            return None
        row = await self._player_row(player_id)
        if row is None or row.secret_hash is None:
            return None
        if not secrets.compare_digest(row.secret_hash, ids.hash_secret(secret)):
            return None
        return _player(row)

    async def _player_row(self, player_id: str) -> Row[Any] | None:
        async with self.engines.read.connect() as conn:
            result = await conn.execute(select(players).where(players.c.public_id == player_id))
            return result.first()

    async def player(self, player_id: str) -> Player | None:
        """See :meth:`RecordsStore.player`."""
        if not ids.is_player_id(player_id):
            return None
        row = await self._player_row(player_id)
        return _player(row) if row is not None else None

    async def player_by_handle(self, handle: str) -> Player | None:
        """See :meth:`RecordsStore.player_by_handle`."""
        if not isinstance(handle, str) or len(handle) > 4 * ids.HANDLE_MAX:
            return None
        key = ids.handle_key(handle.strip())
        async with self.engines.read.connect() as conn:
            result = await conn.execute(select(players).where(players.c.handle_key == key))
            row = result.first()
        return _player(row) if row is not None else None

    async def _update_player(self, player_id: str, **values: Any) -> Player:
        if not ids.is_player_id(player_id):
            raise UnknownPlayer("no such player")
        async with self.engines.write.begin() as conn:
            result = await conn.execute(
                update(players)
                .where(players.c.public_id == player_id, players.c.deleted_at.is_(None))
                .values(**values)
                .returning(*players.c)
            )
            row = result.first()
        if row is None:
            raise UnknownPlayer("no such player")
        return _player(row)

    async def rename(self, player_id: str, name: str) -> Player:
        """See :meth:`RecordsStore.rename`."""
        return await self._update_player(player_id, name=ids.clean_player_name(name))

    async def set_handle(self, player_id: str, handle: str | None) -> Player:
        """See :meth:`RecordsStore.set_handle`."""
        if handle is None:
            return await self._update_player(player_id, handle=None, handle_key=None)
        text, key = ids.check_handle(handle)
        try:
            return await self._update_player(player_id, handle=text, handle_key=key)
        except IntegrityError:
            raise HandleTaken(f"the handle {text!r} is taken") from None

    async def recover(self, recovery_code: str) -> Identity | None:
        """See :meth:`RecordsStore.recover`."""
        code = ids.normalize_recovery_code(recovery_code)
        if code is None:
            return None
        wanted = ids.hash_secret(code)
        secret, new_code = ids.new_secret(), ids.new_recovery_code()
        new_recovery = ids.normalize_recovery_code(new_code)
        assert new_recovery is not None
        async with self.engines.write.begin() as conn:
            row = (
                await conn.execute(
                    select(players.c.id, players.c.public_id, players.c.recovery_hash).where(
                        players.c.recovery_hash == wanted, players.c.deleted_at.is_(None)
                    )
                )
            ).first()
            if row is None or not secrets.compare_digest(row.recovery_hash, wanted):
                return None
            await conn.execute(
                update(players)
                .where(players.c.id == row.id)
                .values(
                    secret_hash=ids.hash_secret(secret),
                    recovery_hash=ids.hash_secret(new_recovery),
                )
            )
        return Identity(row.public_id, secret, new_code)

    async def delete_player(self, player_id: str) -> None:
        """See :meth:`RecordsStore.delete_player`."""
        if not ids.is_player_id(player_id):
            raise UnknownPlayer("no such player")
        async with self.engines.write.begin() as conn:
            row = (
                await conn.execute(
                    select(players.c.id).where(
                        players.c.public_id == player_id, players.c.deleted_at.is_(None)
                    )
                )
            ).first()
            if row is None:
                raise UnknownPlayer("no such player")
            await conn.execute(
                update(players)
                .where(players.c.id == row.id)
                .values(
                    name=ids.DELETED_NAME,
                    handle=None,
                    handle_key=None,
                    secret_hash=None,
                    recovery_hash=None,
                    deleted_at=now_ms(),
                )
            )
            await conn.execute(
                update(seats).where(seats.c.player_id == row.id).values(name=ids.DELETED_NAME)
            )
            await conn.execute(delete(player_stats).where(player_stats.c.player_id == row.id))

    # ---------------------------------------------------------------- races

    async def record_races(self, races: Sequence[RaceRecord]) -> list[str]:
        """See :meth:`RecordsStore.record_races`."""
        if not races:
            return []
        try:
            async with self.engines.write.begin() as conn:
                return await race_io.write_races(conn, races)
        except IntegrityError:
            # another worker wrote one of these races meanwhile (PostgreSQL): now it is
            # found among the races already written
            async with self.engines.write.begin() as conn:
                return await race_io.write_races(conn, races)

    async def race(self, race_id: str) -> StoredRace | None:
        """See :meth:`RecordsStore.race`."""
        if not ids.is_race_id(race_id):
            return None
        async with self.engines.read.begin() as conn:
            return await race_io.read_race(conn, race_id)

    async def recent_races(
        self, player_id: str, *, limit: int = 20, offset: int = 0
    ) -> list[RaceSummary]:
        """See :meth:`RecordsStore.recent_races`."""
        if not ids.is_player_id(player_id):
            return []
        limit, offset = max(1, min(100, limit)), max(0, offset)
        async with self.engines.read.connect() as conn:
            pk = await race_io.player_pk(conn, player_id)
            return [] if pk is None else await race_io.read_recent(conn, pk, limit, offset)

    async def stats(self, player_id: str) -> list[PlayerStats]:
        """See :meth:`RecordsStore.stats`."""
        if not ids.is_player_id(player_id):
            return []
        async with self.engines.read.connect() as conn:
            pk = await race_io.player_pk(conn, player_id)
            return [] if pk is None else await race_io.read_stats(conn, pk)

    async def profile(self, handle: str, *, limit: int = 20, offset: int = 0) -> Profile | None:
        """See :meth:`RecordsStore.profile`."""
        if not isinstance(handle, str) or len(handle) > 4 * ids.HANDLE_MAX:
            return None
        limit, offset = max(1, min(100, limit)), max(0, offset)
        async with self.engines.read.begin() as conn:
            row = (
                await conn.execute(
                    select(players).where(players.c.handle_key == ids.handle_key(handle.strip()))
                )
            ).first()
            if row is None:
                return None
            return Profile(
                player=_player(row),
                stats=tuple(await race_io.read_stats(conn, row.id)),
                recent=tuple(await race_io.read_recent(conn, row.id, limit, offset)),
            )

    async def purge(self, *, now: int | None = None) -> int:
        """See :meth:`RecordsStore.purge`. Also forgets rate buckets that are full again."""
        now = now_ms() if now is None else now
        async with self.engines.write.begin() as conn:
            window_ms = int(self.create_window * 1000)
            await conn.execute(
                delete(rate_buckets).where(rate_buckets.c.updated_at < now - window_ms)
            )
        if self.retention_days is None:
            return 0
        cutoff = now - int(self.retention_days * DAY_MS)
        total = 0
        while True:  # in chunks, so that no write waits long for the purge
            async with self.engines.write.begin() as conn:
                done = await race_io.purge_chunk(conn, cutoff)
            total += done
            if done < race_io.PURGE_CHUNK:
                return total


async def purge_periodically(store: RecordsStore, every: float = 3600.0) -> None:
    """Run :meth:`RecordsStore.purge` every ``every`` seconds, for good (a background
    task: cancel it to stop). Several workers may each run it: a purge finds what another
    did already done."""
    while True:
        try:
            purged = await store.purge()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("records: the purge failed; trying again later")
        else:
            if purged:
                logger.info("records: purged %d races past the retention period", purged)
        await asyncio.sleep(every)


async def _address_secret(conn: AsyncConnection) -> bytes:
    """The key of the address hashes, made on first use and shared by every worker."""
    insert = race_io.dialect_insert(conn, meta)
    await conn.execute(
        insert.values(key=_ADDRESS_KEY, value=secrets.token_hex(32)).on_conflict_do_nothing(
            index_elements=[meta.c.key]
        )
    )
    value = (await conn.execute(select(meta.c.value).where(meta.c.key == _ADDRESS_KEY))).scalar()
    assert value is not None
    return bytes.fromhex(value)


def _player(row: Row[Any]) -> Player:
    return Player(
        player_id=row.public_id,
        name=row.name,
        handle=row.handle,
        created_at=row.created_at,
        deleted=row.deleted_at is not None,
    )
