"""The records store: one interface, one implementation over SQLAlchemy.

:class:`RecordsStore` is what the server calls; :class:`SqlRecordsStore` implements it on
SQLite and PostgreSQL (:mod:`.db` runs its work off the event loop). Every query is a Core
expression with bound parameters, in :mod:`.players` and :mod:`.races`; each call is one
transaction (a batch of races in one, idempotent). Finished races reach it through
:class:`server.records.writer.RaceWriter`, which batches them in the background.

    store = await SqlRecordsStore.open("sqlite:///samedeal-data/samedeal.db")
    identity = await store.create_player("Ada", address="203.0.113.9")
    ...
    await store.close()
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import partial
from typing import Any

from sqlalchemy import Connection, delete, literal, select
from sqlalchemy.engine import URL
from sqlalchemy.exc import IntegrityError

from .. import config
from . import identity as ids
from . import players as player_io
from . import races as race_io
from .daily_store import DailyRecords
from .db import Database, open_database
from .migrate import migrate_database
from .models import (
    Identity,
    Player,
    PlayerStats,
    Profile,
    RaceRecord,
    RaceSummary,
    RecordsUnavailable,
    StoredRace,
    UnknownPlayer,
)
from .rating_store import RatingRecords
from .tables import rate_buckets
from .tournaments import TournamentRecords

__all__ = ["DAY_MS", "RecordsStore", "SqlRecordsStore", "now_ms", "purge_periodically"]

logger = logging.getLogger(__name__)

DAY_MS = 86_400_000


def now_ms() -> int:
    """The server clock in ms since the epoch (:func:`server.config.now_ms`: a test may
    move it)."""
    return config.now_ms()


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
    async def rename(self, player_id: str, name: str, *, proof: str | None = None) -> Player:
        """Set the display name; raises :class:`UnknownPlayer`. With ``proof`` (the hash of
        the secret the caller authenticated with: :func:`~.identity.hash_secret`), only if
        it is still the player's: raises :class:`StaleIdentity` otherwise (a recovery
        elsewhere gave the player a new secret)."""

    @abstractmethod
    async def set_handle(
        self, player_id: str, handle: str | None, *, proof: str | None = None
    ) -> Player:
        """Take ``handle`` (``None``: give it up); raises :class:`BadHandle`,
        :class:`HandleTaken`, :class:`UnknownPlayer`; ``proof`` as for :meth:`rename`."""

    @abstractmethod
    async def recover(self, recovery_code: str) -> Identity | None:
        """Redeem a recovery code: the same player with a new secret and a new recovery
        code (the old ones stop working), or ``None`` for a code that is not valid."""

    @abstractmethod
    async def delete_player(self, player_id: str, *, proof: str | None = None) -> None:
        """Anonymise an identity for good: name "deleted player", handle freed, secret and
        recovery code void, stats and ratings dropped; its seats in past races stay
        (anonymised), and so does a race it was playing, when it is recorded. ``proof`` as
        for :meth:`rename`."""

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
    ``daily``, ``tournaments`` and ``ratings`` are the parts it holds, on the same database.
    """

    def __init__(
        self,
        db: Database,
        *,
        retention_days: float | None = 90,
        create_limit: int = 10,
        create_window: float = 3600.0,
    ) -> None:
        self.db = db
        self.tournaments = TournamentRecords(db)
        self.ratings = RatingRecords(db)
        self.daily = DailyRecords(db)
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
        db = open_database(url, pool_size=pool_size)
        if migrate:
            try:
                await migrate_database(db)
            except BaseException:
                await db.dispose()
                raise
        return cls(
            db,
            retention_days=retention_days,
            create_limit=create_limit,
            create_window=create_window,
        )

    def __repr__(self) -> str:
        return f"<SqlRecordsStore {self.db.dialect}>"

    async def ping(self) -> None:
        """One round trip to the database; raises :class:`RecordsUnavailable` if it cannot
        be reached."""
        await self.db.read_single(lambda conn: conn.execute(select(literal(1))).scalar())

    async def close(self) -> None:
        """Release the connections."""
        await self.db.dispose()

    # ---------------------------------------------------------------- identities

    async def create_player(self, name: str, address: str) -> Identity:
        """See :meth:`RecordsStore.create_player`."""
        identity = Identity(ids.new_player_id(), ids.new_secret(), ids.new_recovery_code())
        if self._address_secret is None:
            self._address_secret = await self.db.write(player_io.address_secret)
        key = ids.address_key(self._address_secret, str(address))

        def create(conn: Connection) -> None:
            now = now_ms()
            player_io.take_token(conn, key, now, self.create_limit, self.create_window)
            player_io.create(conn, identity, name, now)

        await self.db.write(create)
        return identity

    async def authenticate(self, player_id: str, secret: str) -> Player | None:
        """See :meth:`RecordsStore.authenticate`."""
        if not ids.is_player_id(player_id) or not ids.is_secret(secret):
            return None
        return await self.db.read(player_io.authenticate, player_id, secret)

    async def player(self, player_id: str) -> Player | None:
        """See :meth:`RecordsStore.player`."""
        if not ids.is_player_id(player_id):
            return None
        return await self.db.read(partial(player_io.find, player_id=player_id))

    async def player_by_handle(self, handle: str) -> Player | None:
        """See :meth:`RecordsStore.player_by_handle`."""
        key = _lookup_key(handle)
        if key is None:
            return None
        return await self.db.read(partial(player_io.find, key=key))

    async def _update(self, player_id: str, values: dict[str, Any], proof: str | None) -> Player:
        if not ids.is_player_id(player_id):
            raise UnknownPlayer("no such player")
        return await self.db.write(player_io.update_player, player_id, values, proof)

    async def rename(self, player_id: str, name: str, *, proof: str | None = None) -> Player:
        """See :meth:`RecordsStore.rename`."""
        return await self._update(player_id, {"name": ids.clean_player_name(name)}, proof)

    async def set_handle(
        self, player_id: str, handle: str | None, *, proof: str | None = None
    ) -> Player:
        """See :meth:`RecordsStore.set_handle`."""
        if handle is None:
            return await self._update(player_id, {"handle": None, "handle_key": None}, proof)
        text, key = ids.check_handle(handle)
        return await self._update(player_id, {"handle": text, "handle_key": key}, proof)

    async def recover(self, recovery_code: str) -> Identity | None:
        """See :meth:`RecordsStore.recover`."""
        normalized = ids.normalize_recovery_code(recovery_code)
        if normalized is None:
            return None
        secret, new_code = ids.new_secret(), ids.new_recovery_code()
        new_recovery = ids.normalize_recovery_code(new_code)
        assert new_recovery is not None
        player_id = await self.db.write(player_io.recover, normalized, secret, new_recovery)
        return Identity(player_id, secret, new_code) if player_id is not None else None

    async def delete_player(self, player_id: str, *, proof: str | None = None) -> None:
        """See :meth:`RecordsStore.delete_player`."""
        if not ids.is_player_id(player_id):
            raise UnknownPlayer("no such player")
        await self.db.write(player_io.delete_player, player_id, now_ms(), proof)

    # ---------------------------------------------------------------- races

    async def record_races(self, races: Sequence[RaceRecord]) -> list[str]:
        """See :meth:`RecordsStore.record_races`."""
        if not races:
            return []
        try:
            return await self.db.write(race_io.write_races, races)
        except IntegrityError:
            # another worker wrote one of these races meanwhile (PostgreSQL): now it is
            # found among the races already written
            return await self.db.write(race_io.write_races, races)

    async def race(self, race_id: str) -> StoredRace | None:
        """See :meth:`RecordsStore.race`."""
        if not ids.is_race_id(race_id):
            return None
        return await self.db.read(race_io.read_race, race_id)

    async def recent_races(
        self, player_id: str, *, limit: int = 20, offset: int = 0
    ) -> list[RaceSummary]:
        """See :meth:`RecordsStore.recent_races`."""
        if not ids.is_player_id(player_id):
            return []
        limit, offset = max(1, min(100, limit)), max(0, offset)

        def read(conn: Connection) -> list[RaceSummary]:
            player_row_id = race_io.player_pk(conn, player_id)
            return (
                []
                if player_row_id is None
                else race_io.read_recent(conn, player_row_id, limit, offset)
            )

        return await self.db.read(read)

    async def stats(self, player_id: str) -> list[PlayerStats]:
        """See :meth:`RecordsStore.stats`."""
        if not ids.is_player_id(player_id):
            return []

        def read(conn: Connection) -> list[PlayerStats]:
            player_row_id = race_io.player_pk(conn, player_id)
            return [] if player_row_id is None else race_io.read_stats(conn, player_row_id)

        return await self.db.read(read)

    async def profile(self, handle: str, *, limit: int = 20, offset: int = 0) -> Profile | None:
        """See :meth:`RecordsStore.profile`."""
        key = _lookup_key(handle)
        if key is None:
            return None
        limit, offset = max(1, min(100, limit)), max(0, offset)
        return await self.db.read(player_io.profile, key, limit, offset)

    async def purge(self, *, now: int | None = None) -> int:
        """See :meth:`RecordsStore.purge`. Also forgets rate buckets that are full again."""
        now = now_ms() if now is None else now
        window_ms = int(self.create_window * 1000)

        def forget(conn: Connection) -> None:
            conn.execute(delete(rate_buckets).where(rate_buckets.c.updated_at < now - window_ms))

        await self.db.write(forget)
        if self.retention_days is None:
            return 0
        cutoff = now - int(self.retention_days * DAY_MS)
        total = 0
        while True:  # in chunks, so that no write waits long for the purge
            done = await self.db.write(race_io.purge_chunk, cutoff)
            total += done
            if done < race_io.PURGE_CHUNK:
                return total


def _lookup_key(handle: object) -> str | None:
    """The key to look a typed handle up by (``None``: it cannot be one)."""
    if not isinstance(handle, str) or len(handle) > 4 * ids.HANDLE_MAX:
        return None
    return ids.handle_key(handle.strip())


async def purge_periodically(store: RecordsStore, every: float = 3600.0) -> None:
    """Run :meth:`RecordsStore.purge` every ``every`` seconds, for good (a background
    task: cancel it to stop). Several workers may each run it: a purge finds what another
    did already done."""
    while True:
        try:
            purged = await store.purge()
        except asyncio.CancelledError:
            raise
        except RecordsUnavailable as exc:
            logger.warning("records: no purge now (%s); trying again later", exc.reason)
        except Exception:
            logger.exception("records: the purge failed; trying again later")
        else:
            if purged:
                logger.info("records: purged %d races past the retention period", purged)
        await asyncio.sleep(every)
