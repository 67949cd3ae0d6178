"""The OpenAPI 3.1 document of the HTTP JSON API, generated from :mod:`protocol.api`.

``python -m protocol.openapi`` rewrites ``protocol/openapi.json``; a test fails when the
checked-in file differs from what the models generate.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import orjson
from pydantic.json_schema import models_json_schema

from .api import API_MODELS, PLAYER_ID_PATTERN, RACE_ID_PATTERN
from .messages import LIVE_LIMIT, PROTOCOL_VERSION

__all__ = ["OPENAPI_PATH", "build_openapi", "openapi_text"]

OPENAPI_PATH = Path(__file__).with_name("openapi.json")
_REF = "#/components/schemas/{model}"


def _json(model: str) -> dict[str, Any]:
    return {"application/json": {"schema": {"$ref": _REF.format(model=model)}}}


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": _json("ApiError")}


_RECORDS_AWAY = _error("the records database cannot be reached now (`records_unavailable`)")


_HANDLE = {
    "name": "handle",
    "in": "path",
    "required": True,
    "description": "compared with case and look-alike letters folded",
    "schema": {"type": "string", "minLength": 3, "maxLength": 20},
}


def _paging(default_limit: int) -> list[dict[str, Any]]:
    """The ``limit`` (1-100) and ``offset`` query parameters of a paged list."""
    return [
        {
            "name": "limit",
            "in": "query",
            "required": False,
            "schema": {"type": "integer", "minimum": 1, "maximum": 100, "default": default_limit},
        },
        {
            "name": "offset",
            "in": "query",
            "required": False,
            "schema": {"type": "integer", "minimum": 0, "default": 0},
        },
    ]


_DAY = {
    "name": "day",
    "in": "path",
    "required": True,
    "description": "YYYY-MM-DD (UTC)",
    "schema": {"type": "string", "format": "date"},
}


def build_openapi() -> dict[str, Any]:
    """The OpenAPI document as a dict."""
    _, schemas = models_json_schema(
        [(model, "serialization") for model in API_MODELS], ref_template=_REF
    )
    race_id = {
        "name": "id",
        "in": "path",
        "required": True,
        "description": "the race's public id",
        "schema": {"type": "string", "pattern": RACE_ID_PATTERN},
    }
    seat = {
        "name": "seat",
        "in": "path",
        "required": True,
        "description": "the racer's seat in the race",
        "schema": {"type": "integer", "minimum": 1},
    }
    paths = {
        "/api/rooms/{code}": {
            "get": {
                "summary": "A room as its invitation shows it: game, host, players, phase",
                "operationId": "getRoom",
                "parameters": [
                    {
                        "name": "code",
                        "in": "path",
                        "required": True,
                        "description": "the room code; case, spaces and the dash are ignored",
                        "schema": {"type": "string", "maxLength": 16},
                    },
                    {
                        "name": "key",
                        "in": "query",
                        "required": False,
                        "description": "a private room's join key (the `key` of its link)",
                        "schema": {"type": "string", "maxLength": 64},
                    },
                ],
                "responses": {
                    "200": {"description": "the room", "content": _json("RoomSummary")},
                    "404": _error(
                        "no room has this code, or it is private and the key is missing or "
                        "wrong (the same answer: codes cannot be probed)"
                    ),
                    "429": _error("too many requests from this address: see Retry-After"),
                    "503": _error("the store cannot be reached now"),
                },
            }
        },
        "/api/games/{id}": {
            "get": {
                "summary": "A finished race: every racer's moves, their server times, results",
                "operationId": "getGame",
                "parameters": [race_id],
                "responses": {
                    "200": {"description": "the race", "content": _json("GameReplay")},
                    "400": _error("a malformed game id"),
                    "404": _error("no finished race has this id"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
        "/api/games/{id}/seats/{seat}/moves": {
            "get": {
                "summary": "One racer's move list as text, for `samedeal replay DEAL -`",
                "operationId": "getSeatMoves",
                "parameters": [race_id, seat],
                "responses": {
                    "200": {
                        "description": "actions in move notation, separated by spaces",
                        "content": {"text/plain": {"schema": {"type": "string"}}},
                    },
                    "400": _error("a malformed game id"),
                    "404": _error("no such race or seat"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
        "/api/games/{id}/seats/{seat}/boards": {
            "get": {
                "summary": "One racer's boards: the starting board and each action's changes",
                "operationId": "getSeatBoards",
                "parameters": [race_id, seat],
                "responses": {
                    "200": {"description": "the racer's boards", "content": _json("SeatBoards")},
                    "400": _error("a malformed game id"),
                    "404": _error("no such race or seat"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
        "/api/daily": {
            "get": {
                "summary": "The daily challenge: today's commitments, yesterday's reveal",
                "operationId": "getDaily",
                "responses": {"200": {"description": "today", "content": _json("DailyToday")}},
            }
        },
        "/api/daily/{day}": {
            "get": {
                "summary": "A day of the daily challenge: commitments, and the reveal once over",
                "operationId": "getDailyDay",
                "parameters": [_DAY],
                "responses": {
                    "200": {"description": "the day", "content": _json("DailyDay")},
                    "400": _error("not a day (YYYY-MM-DD)"),
                    "404": _error("a day not begun yet, or before the first"),
                },
            }
        },
        "/api/daily/{day}/{game}": {
            "get": {
                "summary": "A day's leaderboard of one game, your place, who you raced with",
                "operationId": "getDailyBoard",
                "parameters": [
                    _DAY,
                    {
                        "name": "game",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "enum": ["klondike", "easy-harp"]},
                    },
                    {
                        "name": "player",
                        "in": "query",
                        "required": False,
                        "description": "a player id: their own attempt and who they raced with",
                        "schema": {"type": "string"},
                    },
                    *_paging(100),
                ],
                "responses": {
                    "200": {"description": "the leaderboard", "content": _json("DailyBoard")},
                    "400": _error("not a day, or a malformed paging value"),
                    "404": _error("no daily of that game or day"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
        "/api/players/{handle}": {
            "get": {
                "summary": "A player's recent races and stats per game",
                "operationId": "getPlayer",
                "parameters": [
                    _HANDLE,
                    *_paging(20),
                ],
                "responses": {
                    "200": {"description": "the player", "content": _json("PlayerPage")},
                    "400": _error("a malformed handle or paging value"),
                    "404": _error("no player has this handle"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
        "/api/live": {
            "get": {
                "summary": "The public races being played now and about to start, and the "
                "featured race of each game (live: subscribe with the websocket's `live`)",
                "operationId": "getLive",
                "parameters": [
                    {
                        "name": "sort",
                        "in": "query",
                        "required": False,
                        "schema": {
                            "type": "string",
                            "enum": ["closest", "watched", "newest"],
                            "default": "closest",
                        },
                    },
                    {
                        "name": "game",
                        "in": "query",
                        "required": False,
                        "schema": {
                            "type": "string",
                            "enum": ["easy-harp", "klondike", "klondike-3"],
                        },
                    },
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": LIVE_LIMIT,
                            "default": 20,
                        },
                    },
                ],
                "responses": {
                    "200": {"description": "the directory", "content": _json("LiveDirectory")},
                    "400": _error("a malformed sort, game or limit"),
                },
            }
        },
    }
    paths.update(_rating_paths())
    paths.update(_tournament_paths())
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "samedeal HTTP API",
            "version": str(PROTOCOL_VERSION),
            "description": (
                "Rooms (as invitations show them), finished races, players and their "
                "ratings, the daily challenge, the live directory and tournaments. "
                f"Player ids match `{PLAYER_ID_PATTERN}`."
            ),
        },
        "paths": paths,
        "components": {"schemas": dict(sorted(schemas["$defs"].items()))},
    }


_GAME = {
    "name": "game",
    "in": "path",
    "required": True,
    "schema": {"type": "string", "enum": ["easy-harp", "klondike", "klondike-3"]},
}


def _rating_paths() -> dict[str, Any]:
    return {
        "/api/players/{handle}/ratings/{game}": {
            "get": {
                "summary": "A player's rating in one game and after each rated race (a chart)",
                "operationId": "getPlayerRatings",
                "parameters": [
                    _HANDLE,
                    _GAME,
                    {
                        "name": "limit",
                        "in": "query",
                        "required": False,
                        "description": "the latest this many rated races",
                        "schema": {
                            "type": "integer",
                            "minimum": 1,
                            "maximum": 1000,
                            "default": 200,
                        },
                    },
                ],
                "responses": {
                    "200": {"description": "the history", "content": _json("RatingHistory")},
                    "400": _error("a malformed handle, game or limit"),
                    "404": _error("no player has this handle"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
        "/api/leaderboard/{game}": {
            "get": {
                "summary": "The rated players of a game active lately, not provisional, "
                "best rating first",
                "operationId": "getLeaderboard",
                "parameters": [
                    _GAME,
                    *_paging(100),
                ],
                "responses": {
                    "200": {"description": "the leaderboard", "content": _json("Leaderboard")},
                    "400": _error("not a game, or a malformed paging value"),
                    "503": _RECORDS_AWAY,
                },
            }
        },
    }


_TOURNAMENT = {
    "name": "id",
    "in": "path",
    "required": True,
    "description": "the tournament code; case, spaces and the dash are ignored",
    "schema": {"type": "string", "maxLength": 16},
}
_KEY = {
    "name": "key",
    "in": "query",
    "required": False,
    "description": "a private tournament's key (the `key` of its link)",
    "schema": {"type": "string", "maxLength": 64},
}
_UNKNOWN = _error(
    "no tournament has this code, or it is private and the key is missing or wrong (the "
    "same answer)"
)


def _tournament_paths() -> dict[str, Any]:
    return {
        "/api/tournaments": {
            "get": {
                "summary": "Public tournaments, upcoming and running, oldest first",
                "operationId": "listTournaments",
                "responses": {
                    "200": {"description": "the list", "content": _json("TournamentList")},
                    "503": _error("the store cannot be reached now"),
                },
            }
        },
        "/api/tournaments/{id}": {
            "get": {
                "summary": "A tournament's page: settings, fair deals, players, rounds, "
                "standings with tie-breaks, scoring, audit log",
                "operationId": "getTournament",
                "parameters": [_TOURNAMENT, _KEY],
                "responses": {
                    "200": {"description": "the tournament", "content": _json("TournamentPage")},
                    "404": _UNKNOWN,
                    "503": _error("the store cannot be reached now"),
                },
            }
        },
        "/api/tournaments/{id}/results": {
            "get": {
                "summary": "The standings as JSON, NDJSON (one row a line) or CSV",
                "operationId": "getTournamentResults",
                "parameters": [
                    _TOURNAMENT,
                    _KEY,
                    {
                        "name": "format",
                        "in": "query",
                        "required": False,
                        "schema": {
                            "type": "string",
                            "enum": ["json", "ndjson", "csv"],
                            "default": "json",
                        },
                    },
                ],
                "responses": {
                    "200": {
                        "description": "the standings: rank, player, points, per round place, "
                        "time, score, moves and cards home, tie-break values",
                        "content": {
                            **_json("TournamentResults"),
                            "application/x-ndjson": {
                                "schema": {"$ref": _REF.format(model="StandingRow")}
                            },
                            "text/csv": {"schema": {"type": "string"}},
                        },
                    },
                    "400": _error("format is not json, ndjson or csv"),
                    "404": _UNKNOWN,
                },
            }
        },
        "/api/tournaments/{id}/export": {
            "get": {
                "summary": "The full export: settings, fair-deal record (the seed once "
                "finished), every round and result with its move list, standings, audit log",
                "operationId": "getTournamentExport",
                "parameters": [_TOURNAMENT, _KEY],
                "responses": {
                    "200": {
                        "description": "format `samedeal-tournament/2` (`fair`: the version "
                        "of fair deals its rounds were drawn by, 1 or 2): `samedeal tournament "
                        "verify FILE` checks it",
                        "content": {"application/json": {"schema": {"type": "object"}}},
                    },
                    "404": _UNKNOWN,
                },
            }
        },
    }


def openapi_text() -> str:
    """The document as the exact text checked in."""
    return orjson.dumps(build_openapi(), option=orjson.OPT_INDENT_2).decode() + "\n"


def main() -> int:
    """Write ``openapi.json`` next to this module."""
    OPENAPI_PATH.write_text(openapi_text())
    print(f"wrote {OPENAPI_PATH}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
