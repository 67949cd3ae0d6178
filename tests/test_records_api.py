"""The HTTP JSON shapes of finished games and players, the checked-in OpenAPI document, and
the plain-text export that ``samedeal replay CODE -`` reads back (run for real)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from records_helpers import make_race, seat, store
from server_fixtures import WINS

from engine import new_game
from protocol.api import PLAYER_ID_PATTERN, RACE_ID_PATTERN, GameReplay, PlayerPage, moves_text
from protocol.openapi import OPENAPI_PATH, build_openapi, openapi_text
from server.records import identity as ids
from server.records.models import RaceRecord, SeatRecord
from server.records.store import SqlRecordsStore
from server.records.views import game_replay, player_page, seat_moves_text

__all__ = ["store"]

ROOT = Path(__file__).resolve().parent.parent


def test_openapi_is_up_to_date() -> None:
    assert OPENAPI_PATH.read_text() == openapi_text(), (
        "protocol/openapi.json is out of date: run python -m protocol.openapi"
    )


def test_openapi_document_names_every_route_and_model() -> None:
    doc = build_openapi()
    assert doc["openapi"].startswith("3.1")
    # exactly the server's own /api routes (placeholders' names aside)
    from server.app import RaceServer
    from server.store.memory import memory_store

    served = RaceServer(memory_store()).ctx.http.patterns

    def shape(path: str) -> str:
        return re.sub(r"\{\w+\}", "{}", path)

    assert {shape(p) for p in doc["paths"]} == {shape(p) for p in served if p.startswith("/api")}
    refs = set(re.findall(r'"#/components/schemas/(\w+)"', orjson.dumps(doc).decode()))
    assert refs <= set(doc["components"]["schemas"])
    assert {"GameReplay", "PlayerPage", "ApiError", "RoomSummary", "SeatBoards"} <= refs


def test_id_patterns_match_the_ids_the_store_makes() -> None:
    for _ in range(50):
        assert re.fullmatch(RACE_ID_PATTERN, ids.new_race_id())
        assert re.fullmatch(PLAYER_ID_PATTERN, ids.new_player_id())


@given(st.lists(st.sampled_from(["s", "u", "a", "w-t3", "t10:12-t9", "t2-f"]), max_size=200))
def test_moves_text_keeps_every_action_in_short_lines(moves: list[str]) -> None:
    text = moves_text(moves)
    assert text.split() == moves
    assert all(len(line) <= 78 for line in text.splitlines())
    assert text == "" or text.endswith("\n")


def _race_of(code: str, actions: tuple[str, ...]) -> RaceRecord:
    game = new_game(code)
    for action in actions:
        game.push(action)
    pos = game.position()
    home = sum(len(pile) for pile in pos["foundations"])
    seat_record = SeatRecord(
        seat=1,
        name="Ada",
        status="won" if pos["won"] else "resigned",
        rank=1,
        score=pos["score"],
        moves=pos["moves"],
        on_foundations=home,
        elapsed_ms=len(actions) * 500,
        actions=actions,
        action_times=tuple(500 * (i + 1) for i in range(len(actions))),
    )
    return RaceRecord(
        room="K7QF2M",
        room_created_at=1,
        race=1,
        game=game.code.game_name,
        deal=code,
        started_at=10_000,
        ended_at=10_000 + 500 * len(actions),
        seats=(seat_record,),
    )


@pytest.mark.parametrize("game", sorted(WINS))
async def test_the_text_export_replays_to_the_recorded_position(
    store: SqlRecordsStore, game: str
) -> None:
    code, moves = WINS[game]
    actions = tuple(moves.split())
    if game.startswith("klondike"):  # an undo, recorded like any action
        actions = ("s", "u", *actions)
    race_id = await store.record_race(_race_of(code, actions))
    stored = await store.race(race_id)
    assert stored is not None
    text = seat_moves_text(stored, 1)
    assert text is not None and seat_moves_text(stored, 2) is None
    replay = subprocess.run(
        [sys.executable, "-m", "clients.cli", "replay", code, "-", "--json"],
        input=text,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=True,
    )
    position = orjson.loads(replay.stdout)
    seat_record = stored.record.seats[0]
    expected = new_game(code)
    for action in actions:
        expected.push(action)
    assert position == expected.position()
    assert position["won"] and seat_record.status == "won"
    assert (position["score"], position["moves"]) == (seat_record.score, seat_record.moves)


async def test_game_replay_json(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", "192.0.2.4")
    await store.set_handle(ada.player_id, "ada")
    bob = await store.create_player("Bob", "192.0.2.4")
    race_id = await store.record_race(
        make_race(
            2,
            seat(1, ada.player_id, actions=("s", "w-t3", "u")),
            seat(2, bob.player_id, "timeout", score=4),
            seat(3, None, "left"),
        )
    )
    await store.delete_player(bob.player_id)
    stored = await store.race(race_id)
    assert stored is not None
    replay = game_replay(stored)
    data = orjson.loads(replay.model_dump_json())
    assert GameReplay.model_validate(data) == replay
    assert (data["id"], data["game"], data["deal"], data["race"]) == (
        race_id,
        "klondike",
        "KL1-1-AAAAAAK",
        2,
    )
    first, second, third = data["seats"]
    assert first["player"] == {"id": ada.player_id, "handle": "ada", "deleted": False}
    assert first["actions"] == ["s", "w-t3", "u"]
    assert first["action_times_ms"] == [100, 200, 300]
    assert (first["status"], first["rank"], first["elapsed_ms"]) == ("won", 1, 60_000)
    assert second["player"]["deleted"] and second["name"] == ids.DELETED_NAME
    assert (second["status"], second["score"], second["elapsed_ms"]) == ("timeout", 4, None)
    assert third["player"] is None and third["status"] == "left"
    for secret in (ada.secret, ada.recovery_code, bob.secret):
        assert secret not in replay.model_dump_json()


async def test_player_page_json(store: SqlRecordsStore) -> None:
    ada = await store.create_player("Ada", "192.0.2.5")
    await store.set_handle(ada.player_id, "Ada")
    race_ids = [
        await store.record_race(make_race(i, seat(1, ada.player_id, "won", score=10 * i)))
        for i in (1, 2, 3)
    ]
    profile = await store.profile("ADA")
    assert profile is not None
    assert profile.stats == tuple(await store.stats(ada.player_id))
    assert profile.recent == tuple(await store.recent_races(ada.player_id))
    assert [r.race_id for r in (await store.profile("ada", limit=1, offset=1)).recent] == [  # type: ignore[union-attr]
        race_ids[1]
    ]
    for unknown in ["nobody", "", "' OR 1=1 --", "x" * 10_000]:
        assert await store.profile(unknown) is None
    page = player_page(profile)
    data = orjson.loads(page.model_dump_json())
    assert PlayerPage.model_validate(data) == page
    assert data["handle"] == "Ada" and data["name"] == "Ada"
    assert [r["id"] for r in data["recent"]] == race_ids[::-1]
    assert data["stats"] == [
        {
            "game": "klondike",
            "played": 3,
            "won": 3,
            "win_pct": 100.0,
            "best_time_ms": 60_000,
            "best_score": 30,
            "current_streak": 3,
            "longest_streak": 3,
        }
    ]
    assert ada.secret not in page.model_dump_json() and ada.player_id not in str(data)
