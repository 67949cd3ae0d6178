"""Tournaments over HTTP, and the page every client shows (``protocol.api.TournamentPage``).

* ``GET /api/tournaments`` — public tournaments not finished (the lobby's list);
* ``GET /api/tournaments/{id}[?key=KEY]`` — the page: settings, fair-deal record, players,
  rounds with their results (place, points, and once the round has ended the replay of each
  race), the standings with their tie-breaks, the scoring rule, the audit log;
* ``GET /api/tournaments/{id}/results?format=json|ndjson|csv`` — the standings;
* ``GET /api/tournaments/{id}/export`` — the full export: every move list, and once the
  tournament has finished its seed (``samedeal tournament verify`` checks it).

A private tournament answers 404 without its key, as an unknown one does. A tournament no
longer in the live store (finished a day ago) is read from the records store.
"""

from __future__ import annotations

import logging
import secrets
from http import HTTPStatus
from typing import Any

import orjson
from websockets.http11 import Response

from protocol.api import TournamentList, TournamentSummary

from ..codes import display_code, normalize_code
from ..context import Context
from ..edge.http import HttpRequest, error_response, json_response, respond
from ..store.errors import StoreUnavailable
from . import (
    TIEBREAKS,
    TournamentState,
    full_export,
    public_view,
    results_csv,
    results_json,
    results_ndjson,
    round_ranking,
    standings,
)
from .export import draw_of
from .live import LiveTournament, public_rooms
from .scoring import CARD_PENALTY_MS, WIN_BONUS

__all__ = ["TournamentApi", "page_of", "tournament_link", "with_moves"]

logger = logging.getLogger("samedeal.server")

#: public tournaments listed at most
LIST_LIMIT = 100


def tournament_link(ctx: Context, tid: str, key: str | None = None) -> str:
    """The tournament page's link (with ``key``: a private tournament's, for its hosts)."""
    base = ctx.config.public_url or f"http://{ctx.config.host}:{ctx.port or 0}"
    return f"{base}/t/{display_code(tid)}" + (f"?key={key}" if key else "")


def scoring_of(state: TournamentState) -> dict[str, Any]:
    """The scoring rule as the page and the export explain it."""
    mode = state.settings.scoring
    return {
        "mode": mode,
        "win_bonus": WIN_BONUS,
        "card_penalty_ms": CARD_PENALTY_MS,
        "tiebreaks": [{"key": t.key, "better": t.better} for t in TIEBREAKS[mode]],
    }


def page_of(
    live: LiveTournament, link: str, games: dict[tuple[str, int], str] | None = None
) -> dict[str, Any]:
    """The ``TournamentPage`` of a tournament (``games``: (room, seat) → replay id of the
    rounds that have ended)."""
    state = live.state
    view = public_view(state)
    settings = dict(view["settings"])
    settings["late_join_round"] = state.settings.late_join_round
    settings["co_hosts"] = list(settings["co_hosts"])
    if settings["deal_codes"] is not None:
        settings["deal_codes"] = list(settings["deal_codes"])
    struck = {p.id for p in state.players.values() if p.status == "banned"}
    order = list(state.players)
    rounds = []
    for shown, kept in zip(view["rounds"], state.rounds, strict=True):
        placed = {p.result.player: p for p in round_ranking(kept, struck, order)}
        seats: dict[str, tuple[str, int]] = {}
        for room in live.round_rooms(kept.number):
            for player, seat in room.seats.items():
                seats[player] = (room.code, seat)
        results = []
        for player, result in shown["results"].items():
            room_seat = seats.get(player)
            line = {k: v for k, v in result.items() if k != "move_list"}
            p = placed.get(player)
            line["place"] = p.place if p is not None else None
            line["points"] = p.points if p is not None else None
            line["room"] = display_code(room_seat[0]) if room_seat else None
            line["seat"] = room_seat[1] if room_seat else None
            line["game_id"] = (games or {}).get(room_seat) if room_seat else None
            results.append(line)
        results.sort(key=lambda r: (r["place"] is None, r["place"] or 0))
        rounds.append(
            {
                "number": kept.number,
                "deal": shown["deal"],
                "candidate": kept.candidate,
                "proven": kept.solution is not None,
                "skipped": list(kept.skipped),
                "start_at": kept.start_at,
                "deadline": kept.deadline,
                "ended_at": kept.ended_at,
                "stopped_early": kept.stopped_early,
                "participants": list(kept.participants),
                "absent": list(kept.absent),
                "results": results,
                "rooms": [
                    {"room": display_code(r["room"]), "seats": r["seats"]}
                    for r in public_rooms(live, kept.number)
                ],
            }
        )
    return {
        "id": display_code(state.id),
        "link": link,
        "host": state.host,
        "phase": state.phase,
        "round": state.round,
        "version": state.version,
        "created_at": state.created_at,
        "started_at": state.started_at,
        "finished_at": state.finished_at,
        "next_round_at": state.next_round_at,
        "settings": settings,
        "fair": state.fair,
        "draw": draw_of(state),
        "players": list(view["players"].values()),
        "rounds": rounds,
        "scoring": scoring_of(state),
        "standings": [row.as_json() for row in standings(state)],
        "audit": view["audit"],
    }


def with_moves(state: TournamentState, moves: dict[tuple[int, str], str]) -> TournamentState:
    """A copy of ``state`` whose results carry their move lists again (the live state keeps
    them apart)."""
    copy = state.model_copy(deep=True)
    for round_ in copy.rounds:
        for player, result in round_.results.items():
            text = moves.get((round_.number, player))
            if text is not None:
                result.move_list = text.split()
    return copy


class TournamentApi:
    """The tournament routes of a worker."""

    def __init__(self, ctx: Context, runner: Any = None) -> None:
        self.ctx = ctx
        #: the last pages built, by (tournament, revision, link, replays known): a page is
        #: asked for by every viewer after each change, and is the same for all of them
        self._pages: dict[tuple[str, int, str, int], dict[str, Any]] = {}
        ctx.http.get("/api/tournaments", self._list)
        ctx.http.get("/api/tournaments/{tid}", self._page)
        ctx.http.get("/api/tournaments/{tid}/results", self._results)
        ctx.http.get("/api/tournaments/{tid}/export", self._export)

    async def games(self, live: LiveTournament) -> dict[tuple[str, int], str]:
        """(room, seat) → replay id, for the rounds that have ended."""
        records = self.ctx.records
        if records is None:
            return {}
        rooms = [
            (room.code, room.created_at)
            for round_ in live.state.rounds
            if round_.ended_at is not None
            for room in live.round_rooms(round_.number)
        ]
        if not rooms:
            return {}
        try:
            found = await records.tournaments.race_ids(rooms)
        except Exception:
            logger.warning("replay ids not read", exc_info=True)
            return {}
        out = {}
        for round_ in live.state.rounds:
            for room in live.round_rooms(round_.number):
                race_id = found.get((room.code, room.created_at))
                if race_id is not None:
                    for seat in room.seats.values():
                        out[(room.code, seat)] = race_id
        return out

    async def page(self, live: LiveTournament, *, with_key: bool = False) -> dict[str, Any]:
        """The page of ``live`` (``with_key``: its link carries the private key)."""
        key = live.state.key if with_key and live.state.settings.private else None
        link = tournament_link(self.ctx, live.state.id, key)
        games = await self.games(live)
        cache = (live.state.id, live.rev, link, len(games))
        found = self._pages.get(cache)
        if found is None:
            if len(self._pages) >= 64:
                self._pages.clear()  # bounded: a page is rebuilt from the state at will
            found = self._pages[cache] = page_of(live, link, games)
        return found

    async def find(
        self, text: str, key: str | None
    ) -> tuple[LiveTournament, dict[tuple[int, str], str] | None] | Response:
        """The tournament ``text`` names, live or recorded (the recorded one with its move
        lists); a 404 response when unknown or private without its key."""
        tid = normalize_code(text)
        missing = error_response(HTTPStatus.NOT_FOUND, "unknown_tournament", "no such tournament")
        if tid is None:
            return missing
        try:
            snap = await self.ctx.store.tournaments.load(tid)
        except StoreUnavailable:
            return error_response(
                HTTPStatus.SERVICE_UNAVAILABLE, "storage", "the store cannot be reached now"
            )
        live: LiveTournament | None = snap.live if snap is not None else None
        moves = None
        if live is None and self.ctx.records is not None:
            found = await self.ctx.records.tournaments.load(tid)
            if found is not None:
                live, moves = found
        if live is None:
            return missing
        if live.state.settings.private and not (
            key is not None and secrets.compare_digest(key.encode(), live.state.key.encode())
        ):
            return missing
        return live, moves

    async def _list(self, request: HttpRequest) -> Response:
        try:
            ids = await self.ctx.store.tournaments.active(public=True)
            summaries = await self.ctx.store.tournaments.summaries(ids[-LIST_LIMIT:])
        except StoreUnavailable:
            return error_response(
                HTTPStatus.SERVICE_UNAVAILABLE, "storage", "the store cannot be reached now"
            )
        listed = [
            TournamentSummary(
                id=display_code(s.id),
                link=tournament_link(self.ctx, s.id),
                name=s.name,
                game=s.game,  # type: ignore[arg-type]
                phase=s.phase,
                players=s.players,
                max_players=s.max_players,
                rounds=s.rounds,
                round=s.round,
                starts_at=s.starts_at,
                created_at=s.created_at,
            )
            for s in summaries
            if s.phase != "finished" and not s.private
        ]
        return json_response(TournamentList(tournaments=listed))

    async def _page(self, request: HttpRequest) -> Response:
        found = await self.find(request.params["tid"], request.query.get("key"))
        if isinstance(found, Response):
            return found
        live, _ = found
        return json_response(orjson.dumps(await self.page(live)))

    async def _moves(
        self, live: LiveTournament, kept: dict[tuple[int, str], str] | None
    ) -> dict[tuple[int, str], str]:
        if kept is not None:
            return kept
        return await self.ctx.store.tournaments.round_moves(live.state.id)

    async def _results(self, request: HttpRequest) -> Response:
        found = await self.find(request.params["tid"], request.query.get("key"))
        if isinstance(found, Response):
            return found
        state = found[0].state
        kind = request.query.get("format", "json")
        name = f"tournament-{display_code(state.id)}"
        if kind == "json":
            return json_response(results_json(state))
        if kind == "ndjson":
            return _download(results_ndjson(state), "application/x-ndjson", f"{name}.ndjson")
        if kind == "csv":
            body = results_csv(state).encode()
            return _download(body, "text/csv; charset=utf-8", f"{name}.csv")
        return error_response(HTTPStatus.BAD_REQUEST, "bad_format", "format: json, ndjson or csv")

    async def _export(self, request: HttpRequest) -> Response:
        found = await self.find(request.params["tid"], request.query.get("key"))
        if isinstance(found, Response):
            return found
        live, kept = found
        state = with_moves(live.state, await self._moves(live, kept))
        body = orjson.dumps(full_export(state))
        return _download(body, "application/json", f"tournament-{display_code(state.id)}.json")


def _download(body: bytes, content_type: str, filename: str) -> Response:
    return respond(
        HTTPStatus.OK,
        body,
        [
            ("Content-Type", content_type),
            ("Cache-Control", "no-store"),
            ("Content-Disposition", f'attachment; filename="{filename}"'),
        ],
    )
