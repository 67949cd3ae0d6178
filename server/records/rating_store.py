"""The records store's ratings (``store.ratings``, held by :class:`SqlRecordsStore`): what
the HTTP routes, the results and the pools ask of the ratings (statements in
:mod:`.ratings`)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from ..ratings.rules import ABANDON_WINDOW_MS, ACTIVE_DAYS, Standing, seek_cooldown_ms
from . import identity as ids
from . import ratings as rating_io
from .db import Database
from .races import player_pk

__all__ = ["RatingRecords"]

_DAY_MS = 86_400_000


class RatingRecords:
    """Ratings in the records store: standings, histories, a race's changes, the
    leaderboards, the cooldown on seeking, the rebuild."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def standings(self, player_id: str) -> dict[str, Standing]:
        """A player's standing in each game they have rated races of, by game."""
        if not ids.is_player_id(player_id):
            return {}

        def read(conn: Connection) -> dict[str, Standing]:
            player_row_id = player_pk(conn, player_id)
            return {} if player_row_id is None else rating_io.read_standings(conn, player_row_id)

        return await self.db.read(read)

    async def standings_of(self, player_ids: Sequence[str], game: str) -> dict[str, Standing]:
        """The standing in ``game`` of each player (a player without a rated race of it, or
        not known, starts at 1500 ± 350: :class:`Standing`'s default) — one statement, for
        the pools to compare the players seeking a race."""
        valid = [p for p in dict.fromkeys(player_ids) if ids.is_player_id(p)]
        found = await self.db.read_single(rating_io.read_standings_of, valid, game) if valid else {}
        return {p: found.get(p, Standing()) for p in player_ids}

    async def history(
        self, player_id: str, game: str, *, limit: int = 200
    ) -> list[rating_io.RatingPoint]:
        """A player's rating after each of their latest ``limit`` rated races of ``game``
        (at most 1000), oldest first."""
        if not ids.is_player_id(player_id):
            return []
        limit = max(1, min(1000, limit))

        def read(conn: Connection) -> list[rating_io.RatingPoint]:
            player_row_id = player_pk(conn, player_id)
            return (
                []
                if player_row_id is None
                else rating_io.read_history(conn, player_row_id, game, limit)
            )

        return await self.db.read(read)

    async def of_race(self, race_id: str) -> list[rating_io.SeatRating]:
        """What a rated race did to its racers' ratings, by seat (none: not rated)."""
        if not ids.is_race_id(race_id):
            return []
        return await self.db.read_single(rating_io.read_race_ratings, race_id)

    async def leaderboard(
        self, game: str, *, now: int, limit: int = 100, offset: int = 0
    ) -> list[rating_io.RankedPlayer]:
        """A page of the game's leaderboard: rated in the last ``ACTIVE_DAYS`` days, not
        provisional, best first."""
        limit, offset = max(1, min(100, limit)), max(0, offset)
        since = now - ACTIVE_DAYS * _DAY_MS
        return await self.db.read_single(rating_io.leaderboard, game, since, limit, offset)

    async def seek_cooldown(self, player_id: str, *, now: int) -> int:
        """How many ms a player must still wait before seeking a race, for abandoning rated
        races (:func:`server.ratings.rules.seek_cooldown_ms`); 0: none."""
        if not ids.is_player_id(player_id):
            return 0

        def read(conn: Connection) -> list[int]:
            player_row_id = player_pk(conn, player_id)
            return (
                []
                if player_row_id is None
                else rating_io.abandoned_since(conn, player_row_id, now - ABANDON_WINDOW_MS)
            )

        return seek_cooldown_ms(await self.db.read(read), now)

    async def rebuild(self, *, write: bool = True) -> rating_io.RebuildReport:
        """Compute every rating again from the rated races (``samedeal ratings rebuild``);
        with ``write``, store what was computed instead of what was stored."""
        return await self.db.write(rating_io.rebuild, write)
