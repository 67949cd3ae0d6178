"""A finished race's replay over HTTP (issue 14, the browser's side): each racer's boards
computed by the engine (``GET /api/games/{id}/seats/{seat}/boards``), and the
``race_recorded`` event that tells the room the race's id once the database has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import until_race_starts
from server_fixtures import ServerHandle, StartServer, fetch

from engine import new_game
from protocol import RaceEnded, RaceRecorded, frames, merge_view
from protocol.api import SeatBoards
from server.players.history import TellRecorded
from server.rooms.room import ProgressState, RoomState, SeatState

DEAL = "KL1-1-AAAAAAM"  # t3 shows an ace, t1-t2 is legal
ANN = ["t3-f", "s", "u", "t1-t2", "s", "s"]  # a shorthand, an undo, a stock draw
BOB = ["s", "t1-t2", "s"]


async def get(server: ServerHandle, path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET, errors included, off the server's loop."""
    return await fetch(server.port, path)


async def recorded_race(server: ServerHandle) -> tuple[str, RaceEnded]:
    """Ann and Bob race on DEAL and both give up; the id the room is told (race_recorded)."""
    ann, bob = await server.client(), await server.client()
    await ann.new_player("Ann")
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    await bob.join(joined.room, name="Bob")
    await ann.start()
    await ann.next_event("race_starting")
    await until_race_starts(bob)
    for move in ANN:
        await ann.move(move)
    for move in BOB:
        await bob.move(move)
    await ann.resign()
    await bob.resign()
    ended = await bob.next_event("race_ended", timeout=10)
    assert isinstance(ended, RaceEnded)
    told = [await c.next_event("race_recorded", timeout=10) for c in (ann, bob)]
    assert all(isinstance(t, RaceRecorded) for t in told)
    ids = {t.game_id for t in told if isinstance(t, RaceRecorded)}
    (game_id,) = ids
    assert {t.race for t in told if isinstance(t, RaceRecorded)} == {ended.race}
    return game_id, ended


async def test_each_board_of_a_replay_is_the_engine_s(
    start_server: StartServer, store_kind: str, tmp_path: Path
) -> None:
    server = await start_server(store_kind, records_url=f"sqlite:///{tmp_path / 'r.db'}")
    game_id, _ended = await recorded_race(server)
    status, kind, body = await get(server, f"/api/games/{game_id}")
    assert status == 200 and kind == "application/json"
    seats = {s["seat"]: s for s in orjson.loads(body)["seats"]}
    for seat, played in ((1, ANN), (2, BOB)):
        status, kind, body = await get(server, f"/api/games/{game_id}/seats/{seat}/boards")
        assert status == 200 and kind == "application/json"
        boards = SeatBoards.model_validate_json(body)
        assert (boards.id, boards.game, boards.seat) == (game_id, "klondike", seat)
        mirror = new_game(DEAL)
        assert boards.start == mirror.player_view()
        assert len(boards.moves) == len(boards.changes) == len(seats[seat]["actions"])
        view: dict[str, Any] = boards.start
        for action, resolved, changes in zip(played, boards.moves, boards.changes, strict=True):
            assert resolved == str(mirror.push(action).move)
            view = merge_view(view, changes)
            assert view == mirror.player_view(), (seat, action)
        assert b'"code"' not in body and DEAL.encode() not in body  # boards, not positions


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/games/not-an-id/seats/1/boards", 400, "bad_game_id"),
        ("/api/games/000000000000/seats/1/boards", 404, "unknown_game"),
        ("/api/games/{id}/seats/9/boards", 404, "unknown_seat"),
        ("/api/games/{id}/seats/0/boards", 404, "unknown_seat"),
        ("/api/games/{id}/seats/x/boards", 404, "unknown_seat"),
        ("/api/games/{id}/seats/-1/boards", 404, "unknown_seat"),
        ("/api/games/{id}/seats/99999999999/boards", 404, "unknown_seat"),
        ("/api/games/{id}/seats/%27%20OR%201%3D1/boards", 404, "unknown_seat"),
    ],
)
async def test_bad_board_requests_get_a_clear_error(
    start_server: StartServer, tmp_path: Path, path: str, status: int, error: str
) -> None:
    server = await start_server("memory", records_url=f"sqlite:///{tmp_path / 'r.db'}")
    game_id, _ = await recorded_race(server)
    got, kind, body = await get(server, path.replace("{id}", game_id))
    assert got == status and kind == "application/json"
    assert orjson.loads(body)["error"] == error


async def test_a_server_without_records_has_no_boards_and_tells_no_room(
    start_server: StartServer,
) -> None:
    server = await start_server("memory")
    status, _, body = await get(server, "/api/games/000000000000/seats/1/boards")
    assert status == 404 and orjson.loads(body)["error"] == "no_records"
    ann = await server.client()
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    await ann.start()
    await until_race_starts(ann)
    await ann.resign()
    await ann.next_event("race_ended")
    with pytest.raises(TimeoutError):
        await ann.next_event("race_recorded", timeout=0.5)
    assert joined.room


def _room(created_at: int, race: int) -> RoomState:
    return RoomState(
        code="K7QF2M",
        game="klondike",
        options={"max_players": 4},  # type: ignore[arg-type]
        deal=DEAL,
        seats=[SeatState(seat=1, name="Ann", token_hash="x")],
        host=1,
        phase="ended",
        race=race,
        created_at=created_at,
    )


def test_only_the_room_of_the_race_is_told_while_its_results_stand() -> None:
    progress: dict[int, ProgressState] = {}
    tell = TellRecorded(created_at=500, race=2, game_id="0123456789ab")
    events, told = tell(_room(500, 2), progress)
    assert told and events == [frames.race_recorded(room="K7QF-2M", race=2, game_id="0123456789ab")]
    for other in (_room(501, 2), _room(500, 3), _room(500, 1)):  # a new room, another race
        assert tell(other, progress) == ([], False)
