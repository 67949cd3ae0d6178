"""The records store's daily-challenge calls (a part of :class:`SqlRecordsStore`)."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from functools import partial

from sqlalchemy import Connection, select

from . import daily as daily_io
from . import identity as ids
from .db import Database
from .models import DailyEntry, DailyStats
from .tables import meta

__all__ = ["DailyCalls"]

_DAILY_KEY = "daily_key"


def _daily_key(conn: Connection) -> bytes:
    from .races import dialect_insert

    conn.execute(
        dialect_insert(conn, meta)
        .values(key=_DAILY_KEY, value=secrets.token_hex(32))
        .on_conflict_do_nothing(index_elements=[meta.c.key])
    )
    value = conn.execute(select(meta.c.value).where(meta.c.key == _DAILY_KEY)).scalar()
    assert value is not None
    return bytes.fromhex(value)


class DailyCalls:
    """The daily challenge in the records store: its key, attempts, leaderboards, stats."""

    db: Database

    async def daily_key(self) -> bytes:
        """The server's secret daily key (32 bytes), made on first use and the same for
        every worker and host of this database. Never published."""
        return await self.db.write(_daily_key)

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
        """Make the day's attempt of each (player id, watching) that has none, in one
        transaction: see :func:`server.records.daily.begin_attempts`."""
        valid = [(pid, w) for pid, w in players if ids.is_player_id(pid)]
        if not valid:
            return {}
        return await self.db.write(
            partial(
                daily_io.begin_attempts,
                game=game,
                day=day,
                day_start=day_start,
                race=race,
                players_in=valid,
                now=now,
            )
        )

    async def close_unfinished(self, before_day: str, now: int) -> int:
        """Close the attempts of past days still open; how many."""
        return await self.db.write(daily_io.close_unfinished, before_day, now)

    async def leaderboard(
        self, game: str, day: str, *, limit: int = 100, offset: int = 0
    ) -> list[DailyEntry]:
        """A page of the day's leaderboard, best first."""
        limit, offset = max(1, min(100, limit)), max(0, offset)
        return await self.db.read(daily_io.leaderboard, game, day, limit, offset)

    async def own_entry(self, game: str, day: str, player_id: str) -> DailyEntry | None:
        """A player's attempt of the day, with their place."""
        if not ids.is_player_id(player_id):
            return None
        return await self.db.read(daily_io.own_entry, game, day, player_id)

    async def raced_with(
        self, player_id: str, game: str, day: str, *, limit: int = 50
    ) -> list[DailyEntry]:
        """The day's attempts of the players ``player_id`` has raced with."""
        if not ids.is_player_id(player_id):
            return []
        return await self.db.read(daily_io.raced_with, player_id, game, day, limit)

    async def daily_stats(self, player_id: str, today: str) -> list[DailyStats]:
        """A player's daily streaks and best scores, per game."""
        from .races import player_pk

        if not ids.is_player_id(player_id):
            return []

        def read(conn: Connection) -> list[DailyStats]:
            pk = player_pk(conn, player_id)
            return [] if pk is None else daily_io.daily_stats(conn, pk, today)

        return await self.db.read(read)
