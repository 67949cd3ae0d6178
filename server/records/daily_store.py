"""The daily challenge in the records store (``store.daily``, a part held by
:class:`~server.records.store.SqlRecordsStore`)."""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence

from sqlalchemy import Connection, exists, select

from . import daily as daily_io
from . import identity as ids
from .db import Database
from .models import DailyEntry, DailyStats
from .tables import daily_attempts, dialect_insert, meta

__all__ = ["DailyRecords"]

_DAILY_KEY = "daily_key"
_SEALED_SINCE = "daily_sealed_since"


def _daily_key(conn: Connection) -> bytes:
    from .players import shared_secret

    return shared_secret(conn, _DAILY_KEY)


def _sealed_since(conn: Connection, today: dt.date) -> dt.date:
    """The first day drawn by fair deals version 2, set once: every day (``date.min``) when
    the store has no past days (no daily key kept yet, no attempt), else tomorrow — today's
    deal was drawn by version 1 and its commitment may be out already, and a commitment
    never changes."""
    stored = conn.execute(select(meta.c.value).where(meta.c.key == _SEALED_SINCE)).scalar()
    if stored is None:
        had_days = (
            conn.execute(select(exists().where(meta.c.key == _DAILY_KEY))).scalar()
            or conn.execute(select(exists().select_from(daily_attempts))).scalar()
        )
        first = today + dt.timedelta(days=1) if had_days else dt.date.min
        conn.execute(
            dialect_insert(conn, meta)
            .values(key=_SEALED_SINCE, value=first.isoformat())
            .on_conflict_do_nothing(index_elements=[meta.c.key])
        )
        stored = conn.execute(select(meta.c.value).where(meta.c.key == _SEALED_SINCE)).scalar()
    assert stored is not None
    return dt.date.fromisoformat(stored)


class DailyRecords:
    """The daily challenge in the records store: its key, attempts, leaderboards, stats
    (``store.daily``, held by :class:`~server.records.store.SqlRecordsStore`)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        #: attempts asked for while the last batch was being written, and the writing task
        self._attempts_asked: list[
            tuple[daily_io.AttemptsAsked, asyncio.Future[dict[str, str]]]
        ] = []
        self._attempts_writing: asyncio.Task[None] | None = None

    async def key(self) -> bytes:
        """The server's secret daily key (32 bytes), made on first use and the same for
        every worker and host of this database. Never published."""
        return await self.db.write(_daily_key)

    async def sealed_since(self, today: dt.date) -> dt.date:
        """The first day whose deal is drawn by fair deals version 2 (a sealed deal, ``D2``);
        days before it keep version 1's numbered deal (``D1``). Set once, by the first
        start of a server that draws sealed deals (``today``: its day): tomorrow when days
        were drawn before, else ``date.min`` (every day); the same for every worker. Call it
        before :meth:`key`, which would make the key look old."""
        return await self.db.write(_sealed_since, today)

    async def begin_attempts(
        self,
        *,
        game: str,
        day: str,
        day_start: int,
        race: tuple[str, int, int],
        players: Sequence[tuple[str, bool]],
        now: int,
    ) -> dict[str, str]:
        """Make the day's attempt of each (player id, watching) that has none: see
        :func:`server.records.daily.begin_attempts`. The asks that arrive while a write of
        them is under way are written together next, in one transaction (a thousand
        players starting the day's deal within a second do not queue one by one)."""
        valid = tuple((pid, w) for pid, w in players if ids.is_player_id(pid))
        if not valid:
            return {}
        done: asyncio.Future[dict[str, str]] = asyncio.get_running_loop().create_future()
        asked = daily_io.AttemptsAsked(game, day, day_start, race, valid, now)
        self._attempts_asked.append((asked, done))
        if self._attempts_writing is None:
            self._attempts_writing = asyncio.create_task(self._write_attempts())
        return await done

    async def _write_attempts(self) -> None:
        """Write the asked attempts, a batch at a time, until none is waiting."""
        try:
            while asks := self._attempts_asked:
                self._attempts_asked = []
                try:
                    made = await self.db.write(daily_io.begin_attempts, [a for a, _ in asks])
                except Exception as exc:  # each waiting ask is told (nothing was made)
                    for _, done in asks:
                        if not done.done():
                            done.set_exception(exc)
                    continue
                for (_, done), kinds in zip(asks, made, strict=True):
                    if not done.done():
                        done.set_result(kinds)
        finally:
            self._attempts_writing = None

    async def close_unfinished(self, before_day: str, now: int) -> int:
        """Close the attempts of past days still open; how many."""
        return await self.db.write(daily_io.close_unfinished, before_day, now)

    async def leaderboard(
        self, game: str, day: str, *, limit: int = 100, offset: int = 0
    ) -> list[DailyEntry]:
        """A page of the day's leaderboard, best first."""
        limit, offset = max(1, min(100, limit)), max(0, offset)
        return await self.db.read_single(daily_io.leaderboard, game, day, limit, offset)

    async def newcomers(self, game: str, day: str, *, limit: int = 100) -> list[DailyEntry]:
        """The day's newcomers' board (first attempts of players made that day), best first."""
        limit = max(1, min(100, limit))
        return await self.db.read_single(daily_io.newcomers, game, day, limit)

    async def own_entry(self, game: str, day: str, player_id: str) -> DailyEntry | None:
        """A player's attempt of the day, with their place."""
        if not ids.is_player_id(player_id):
            return None
        # one statement (a second only for a score past the counts' cap, which needs
        # no common snapshot: PostgreSQL's READ COMMITTED gives none in a transaction)
        return await self.db.read_single(daily_io.own_entry, game, day, player_id)

    async def raced_with(
        self, player_id: str, game: str, day: str, *, limit: int = 50
    ) -> list[DailyEntry]:
        """The day's attempts of the players ``player_id`` has raced with."""
        if not ids.is_player_id(player_id):
            return []
        return await self.db.read(daily_io.raced_with, player_id, game, day, limit)

    async def stats(self, player_id: str, today: str) -> list[DailyStats]:
        """A player's daily streaks and best scores, per game."""
        from .races import player_pk

        if not ids.is_player_id(player_id):
            return []

        def read(conn: Connection) -> list[DailyStats]:
            player_row_id = player_pk(conn, player_id)
            return [] if player_row_id is None else daily_io.daily_stats(conn, player_row_id, today)

        return await self.db.read(read)
