"""The closed sets of statuses the HTTP API and the wire carry: each is listed as an enum in
``protocol/openapi.json`` and ``protocol/schema.json`` (a client can know every value), and
each is the set the server's own rules define — so a status added on one side only fails
here, not as a 500 of a working endpoint. The tournaments' statuses are the protocol's own
types (``server/tournaments/state.py`` imports them): what can still drift is a room's way
of ending a race that no round result stands for. The daily attempts' statuses are also
reached for real: every one the API lists is one the records store writes, and the other
way round."""

from __future__ import annotations

import dataclasses
from typing import Any, get_args

import pytest
from records_helpers import make_race, seat, store
from sqlalchemy import Connection, insert

from protocol import schema
from protocol.api import AttemptStatus, EntrantStatus, ResultStatus, RoundStatus
from protocol.live import FinalStatus
from protocol.openapi import build_openapi
from server.records.daily import OPEN_STATUSES
from server.records.models import STATUSES
from server.records.store import SqlRecordsStore
from server.records.tables import players
from server.rooms.room import ProgressState
from server.tournaments import state
from server.tournaments.updates import result_of_progress

__all__ = ["store"]

_ENTRANT = set(get_args(EntrantStatus))
_RESULT = set(get_args(ResultStatus))

# (model, field) → the values the server's rules define for it
API_STATUSES: dict[tuple[str, str], set[str]] = {
    ("SeatReplay", "status"): set(STATUSES),
    ("RaceLine", "status"): set(STATUSES),
    # begun playing or watching, then the race's end, or closed with its day
    ("DailyEntry", "status"): {*OPEN_STATUSES, *STATUSES, "unfinished"},
    ("TournamentPlayer", "status"): _ENTRANT,
    ("StandingRow", "status"): _ENTRANT,
    ("TournamentResult", "status"): _RESULT,
    ("StandingRound", "status"): set(get_args(RoundStatus)),
}
WIRE_STATUSES: dict[tuple[str, str], set[str]] = {
    ("TournamentYou", "status"): _ENTRANT,
    ("TournamentLiveRow", "status"): _RESULT,
}


def _enum(schemas: dict[str, Any], model: str, field: str) -> set[str]:
    """The values a model's field may take as a JSON Schema lists them (a nullable one: its
    non-null branch)."""
    prop = schemas[model]["properties"][field]
    branches = prop.get("anyOf", [prop])
    values = [b["enum"] for b in branches if "enum" in b]
    assert len(values) == 1, f"{model}.{field} lists no enum: {prop}"
    return set(values[0])


@pytest.mark.parametrize(("model", "field"), sorted(API_STATUSES))
def test_the_openapi_document_lists_each_status_the_server_sends(model: str, field: str) -> None:
    schemas = build_openapi()["components"]["schemas"]
    assert _enum(schemas, model, field) == API_STATUSES[model, field]


@pytest.mark.parametrize(("model", "field"), sorted(WIRE_STATUSES))
def test_the_json_schema_lists_each_status_the_server_sends(model: str, field: str) -> None:
    defs = schema.build_schema()["$defs"]
    assert _enum(defs, model, field) == WIRE_STATUSES[model, field]


def test_a_round_result_stands_for_every_way_a_room_ends_a_race() -> None:
    # a room's race ends in one of its final statuses; a round's result must stand for each
    # (one it could not would leave the racer no result, as if absent), and each result
    # status must be one a race ends in ("left", a rated room's, counts as resigned)
    shown: dict[str, str] = {}
    for status in get_args(FinalStatus):
        result = result_of_progress("p", ProgressState(race=1, seat=1, status=status, total=52))
        assert result is not None, status
        shown[status] = result.status
    assert shown["left"] == "resigned"
    assert set(shown.values()) == set(state.FINAL_STATUSES) == _RESULT


DAY, BEFORE, GAME = "2026-04-17", "2026-04-16", "klondike"


def _racers(conn: Connection) -> list[str]:
    ids = [f"s{i:015d}" for i in range(7)]
    conn.execute(insert(players), [{"public_id": pid, "name": pid, "created_at": 0} for pid in ids])
    return ids


async def test_every_status_an_attempt_takes_is_one_the_api_lists(store: SqlRecordsStore) -> None:
    """Attempts begun racing and watching, a daily race ending four of them (won, resigned,
    out of time, left), one still being played and one left open past its day: the statuses
    the store reports are exactly those ``DailyEntry`` lists."""
    won, resigned, timeout, left, playing, watched, stale = await store.db.write(_racers)
    racers = [(pid, False) for pid in (won, resigned, timeout, left)]
    made = await store.daily.begin_attempts(
        game=GAME, day=DAY, day_start=10, race=("DAILY1", 500, 1), players=racers, now=100
    )
    assert set(made.values()) == {"ranked"}
    await store.daily.begin_attempts(
        game=GAME,
        day=DAY,
        day_start=10,
        race=("DAILY2", 500, 1),
        players=[(playing, False), (watched, True)],
        now=100,
    )
    await store.daily.begin_attempts(
        game=GAME,
        day=BEFORE,
        day_start=10,
        race=("DAILY3", 500, 1),
        players=[(stale, False)],
        now=50,
    )
    race = make_race(
        1,
        seat(1, won, "won"),
        seat(2, resigned, "resigned"),
        seat(3, timeout, "timeout"),
        seat(4, left, "left"),
        room="DAILY1",
    )
    await store.record_race(dataclasses.replace(race, daily_day=DAY, casual=False))
    assert await store.daily.close_unfinished(DAY, now=200) == 1

    days = dict.fromkeys((won, resigned, timeout, left, playing, watched), DAY) | {stale: BEFORE}
    reported: dict[str, str] = {}
    for pid, day in days.items():
        entry = await store.daily.own_entry(GAME, day, pid)
        assert entry is not None, pid
        reported[pid] = entry.status
    assert reported[stale] == "unfinished" and reported[won] == "won"
    assert set(reported.values()) == set(get_args(AttemptStatus))
