"""The ratings of a worker: the HTTP routes, and what other parts ask of a player's rating.

Routes (``protocol.api`` models; ``protocol/openapi.json``): ``GET /api/leaderboard/{game}``
and ``GET /api/players/{handle}/ratings/{game}`` (the player page itself,
``GET /api/players/{handle}``, carries the rating per game: :mod:`server.players.history`).

The ratings are written with the races (:mod:`server.records.ratings`); what the pools need
before pairing players is one read of the records store: :meth:`Ratings.standings_of` (the
rating and RD in a game of the players seeking, a default for the unrated) and
:meth:`Ratings.seek_cooldown` (abandoned rated races keep a player from seeking for a
while). Without a records store nobody is rated: everyone stands at 1500 ± 350.
"""

from __future__ import annotations

from collections.abc import Sequence
from http import HTTPStatus

from websockets.http11 import Response

from engine import GAME_NAMES

from ..config import now_ms
from ..context import Context
from ..edge.http import HttpRequest, error_response, json_response
from ..records.views import leaderboard_page, rating_history
from .rules import Standing

__all__ = ["Ratings"]


def _no_records() -> Response:
    return error_response(HTTPStatus.NOT_FOUND, "no_records", "this server keeps no ratings")


def _bad_game() -> Response:
    return error_response(
        HTTPStatus.BAD_REQUEST, "bad_game", f"a game is one of {', '.join(GAME_NAMES)}"
    )


def _number(text: str, low: int, high: int) -> int | None:
    """A query's number, held within [low, high] (``None``: not a number)."""
    if not text.isdigit() or len(text) > 9:
        return None
    return max(low, min(high, int(text)))


class Ratings:
    """The rating layer of a worker."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        ctx.http.get("/api/leaderboard/{game}", self._leaderboard)
        ctx.http.get("/api/players/{handle}/ratings/{game}", self._history)

    async def standings_of(self, player_ids: Sequence[str], game: str) -> dict[str, Standing]:
        """Each player's standing in ``game`` (1500 ± 350 for one without rated races)."""
        records = self.ctx.records
        if records is None:
            return {p: Standing() for p in player_ids}
        return await records.ratings.standings_of(player_ids, game)

    async def shown(self, player_id: str, game: str) -> tuple[int, bool]:
        """A player's rating in ``game`` as a seat shows it: whole points, and whether it
        is provisional (shown with "?")."""
        standing = (await self.standings_of([player_id], game))[player_id]
        return round(standing.rating.rating), standing.provisional

    async def seek_cooldown(self, player_id: str) -> int:
        """How many ms the player must still wait before seeking a race (0: none)."""
        records = self.ctx.records
        return (
            0 if records is None else await records.ratings.seek_cooldown(player_id, now=now_ms())
        )

    # ------------------------------------------------------------------ HTTP

    async def _leaderboard(self, request: HttpRequest) -> Response:
        records = self.ctx.records
        game = request.params["game"]
        if game not in GAME_NAMES:
            return _bad_game()
        if records is None:
            return _no_records()
        limit = _number(request.query.get("limit", "100"), 1, 100)
        offset = _number(request.query.get("offset", "0"), 0, 10**9)
        if limit is None or offset is None:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_query", "limit and offset: numbers")
        ranked = await records.ratings.leaderboard(game, now=now_ms(), limit=limit, offset=offset)
        return json_response(leaderboard_page(game, ranked))

    async def _history(self, request: HttpRequest) -> Response:
        records = self.ctx.records
        handle, game = request.params["handle"], request.params["game"]
        if game not in GAME_NAMES:
            return _bad_game()
        if records is None:
            return _no_records()
        if len(handle) > 64:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_handle", "not a handle")
        limit = _number(request.query.get("limit", "200"), 1, 1000)
        if limit is None:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_query", "limit: a number")
        player = await records.player_by_handle(handle)
        if player is None or player.deleted:
            return error_response(
                HTTPStatus.NOT_FOUND, "unknown_player", "no player has this handle"
            )
        standing = (await records.ratings.standings(player.player_id)).get(game)
        points = await records.ratings.history(player.player_id, game, limit=limit)
        return json_response(rating_history(player.handle or handle, game, standing, points))
