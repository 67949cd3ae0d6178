"""Players and records through a real server (issue 14): identities over the websocket,
every finished race in the records store, replays and player pages over HTTP."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import until, until_race_starts
from server_fixtures import ROOT, WINS, ServerHandle, StartServer, connect_from

from clients.client import RaceClient, RequestError
from engine import new_game, replay
from protocol import RaceEnded
from server.players.history import record_to_json
from server.records.models import RaceRecord, SeatRecord


async def get(server: ServerHandle, path: str) -> tuple[int, str, bytes]:
    """(status, content type, body) of a GET, errors included (off the event loop the
    server runs on)."""
    return await asyncio.to_thread(_get, server, path)


def _get(server: ServerHandle, path: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read()


async def with_records(
    start_server: StartServer, kind: str, tmp_path: Path, **options: Any
) -> ServerHandle:
    return await start_server(kind, records_url=f"sqlite:///{tmp_path / 'records.db'}", **options)


async def test_a_new_identity_is_known_again_and_a_wrong_secret_changes_nothing(
    start_server: StartServer, store_kind: str, tmp_path: Path
) -> None:
    server = await with_records(start_server, store_kind, tmp_path)
    first = await server.client()
    me = await first.new_player("Ann")
    assert me.name == "Ann" and me.secret and me.recovery_code and me.player
    assert len(me.secret) >= 22  # ≥ 128 random bits, URL-safe text
    again = await server.client()
    known = await again.identify(me.player, me.secret)
    assert known.player == me.player and known.name == "Ann"
    assert known.secret is None and known.recovery_code is None  # shown once
    stranger = await server.client()
    for player, secret in (
        (me.player, me.secret[:-1] + ("A" if me.secret[-1] != "A" else "B")),
        (me.player, "x"),
        ("nobody-like-this", me.secret),
        ("' OR 1=1 --", "'; DROP TABLE players; --"),
    ):
        with pytest.raises(RequestError) as info:
            await stranger.identify(player, secret)
        assert info.value.code == "bad_identity"
    # still nobody: what needs an identity is refused, the real one still works
    with pytest.raises(RequestError) as info:
        await stranger.rename("Mallory")
    assert info.value.code == "no_identity"
    assert (await (await server.client()).identify(me.player, me.secret)).name == "Ann"


async def test_identities_are_rate_limited_per_address(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, "memory", tmp_path, identity_limit=2)
    client = await server.client()
    await client.new_player("a")
    await client.new_player("b")
    with pytest.raises(RequestError) as info:
        await client.new_player("c")
    assert info.value.code == "rate_limited"


async def test_recovery_moves_the_identity_and_retires_the_old_secret(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, "memory", tmp_path)
    phone = await server.client()
    me = await phone.new_player("Ann")
    laptop = await server.client()
    moved = await laptop.recover(me.recovery_code or "")
    assert moved.player == me.player and moved.secret and moved.secret != me.secret
    assert moved.recovery_code and moved.recovery_code != me.recovery_code
    other = await server.client()
    with pytest.raises(RequestError) as info:
        await other.identify(me.player, me.secret or "")
    assert info.value.code == "bad_identity"
    with pytest.raises(RequestError) as info:
        await other.recover(me.recovery_code or "")
    assert info.value.code == "bad_recovery_code"
    assert (await other.identify(me.player, moved.secret)).player == me.player


async def test_a_recovery_elsewhere_ends_the_old_connections_hold_on_the_identity(
    start_server: StartServer, tmp_path: Path
) -> None:
    """The device that lost its identity (stolen, or just old) can no longer change it once
    the player recovers it elsewhere: its connection identified before the recovery."""
    server = await with_records(start_server, "memory", tmp_path)
    old = await server.client()
    me = await old.new_player("Ann")
    new = await server.client()
    await new.recover(me.recovery_code or "")
    for change in (old.rename("Mallory"), old.set_handle("mallory"), old.forget_me()):
        with pytest.raises(RequestError) as info:
            await change
        assert info.value.code in ("bad_identity", "no_identity")
    assert (await new.rename("Ann B")).name == "Ann B"
    assert (await new.set_handle("annb")).handle == "annb"


async def test_identify_and_recover_attempts_are_limited_per_address(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, "memory", tmp_path, recover_burst=3, identify_burst=4)
    me = await (await server.client()).new_player("Ann")  # one identify's worth is left
    guesser = await server.client()
    for _ in range(3):
        with pytest.raises(RequestError) as info:
            await guesser.recover("AAAA-AAAA-AAAA-AAAA-AAAA-AAAA")
        assert info.value.code == "bad_recovery_code"
    with pytest.raises(RequestError) as info:
        await guesser.recover(me.recovery_code or "")  # even the right code: not now
    assert info.value.code == "rate_limited" and "recovery" in info.value.message
    for _ in range(4):
        await (await server.client()).identify(me.player, me.secret or "")
    with pytest.raises(RequestError) as info:
        await guesser.identify(me.player, me.secret or "")
    assert info.value.code == "rate_limited"
    # another address is not held back by this one's attempts
    elsewhere = await connect_from(server.url, "127.0.0.2")
    try:
        assert (await elsewhere.identify(me.player, me.secret or "")).player == me.player
        assert (await elsewhere.recover(me.recovery_code or "")).player == me.player
    finally:
        await elsewhere.close()
    metrics = (await get(server, "/metrics"))[2].decode()
    assert 'samedeal_attempt_refusals_total{worker="test-0"} 2' in metrics


async def test_handles_are_unique_whatever_the_case_or_form(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, "memory", tmp_path)
    ann = await server.client()
    await ann.new_player("Ann")
    assert (await ann.set_handle("Ann_42")).handle == "Ann_42"
    bob = await server.client()
    await bob.new_player("Bob")
    for taken in ("ann_42", "ＡＮＮ_42", "ANN_42"):
        with pytest.raises(RequestError) as info:
            await bob.set_handle(taken)
        assert info.value.code == "handle_taken", taken
    for bad in ("ab", "x" * 21, "admin", "deleted", "a b", "<script>", "ann/42"):
        with pytest.raises(RequestError) as info:
            await bob.set_handle(bad)
        assert info.value.code == "bad_handle", bad
    with pytest.raises(RequestError) as info:
        await bob.rename("x" * 300)  # over the wire limit: refused before the store
    assert info.value.code == "invalid_message"


async def _race_two(server: ServerHandle) -> tuple[RaceClient, RaceClient, str, Any, Any]:
    """Ann (identified, handle 'ann') and Bob (identified) race; Ann wins, Bob resigns."""
    deal, line = WINS["klondike"]
    ann = await server.client()
    ann_id = await ann.new_player("Ann")
    await ann.set_handle("ann")
    bob = await server.client()
    bob_id = await bob.new_player("Bob")
    await bob.set_handle("bob")
    joined = await ann.create("klondike", deal="code", code=deal)
    await bob.join(joined.room)
    await ann.start()
    await until_race_starts(ann)
    await bob.move("s")
    await bob.move("s")
    await bob.resign()
    for move in line.split():
        await ann.move(move)
    ended = await ann.next_event("race_ended", timeout=10)
    assert isinstance(ended, RaceEnded)
    return ann, bob, deal, ann_id, bob_id


async def _game_id(server: ServerHandle, handle: str) -> str:
    """The id of the player's latest race, once it is recorded."""

    async def latest() -> str:
        status, _, body = await get(server, f"/api/players/{handle}")
        recent = orjson.loads(body)["recent"] if status == 200 else []
        return str(recent[0]["id"]) if recent else ""

    return await until(latest)


async def test_a_finished_race_is_recorded_and_replays(
    start_server: StartServer, store_kind: str, tmp_path: Path
) -> None:
    server = await with_records(start_server, store_kind, tmp_path)
    _ann, _bob, deal, ann_id, bob_id = await _race_two(server)
    race_id = await _game_id(server, "ann")
    status, kind, body = await get(server, f"/api/games/{race_id}")
    assert status == 200 and kind == "application/json"
    game = orjson.loads(body)
    assert game["deal"] == deal and game["game"] == "klondike"
    seats = {s["seat"]: s for s in game["seats"]}
    assert seats[1]["status"] == "won" and seats[1]["rank"] == 1
    assert seats[1]["player"]["id"] == ann_id.player and seats[1]["player"]["handle"] == "ann"
    assert seats[2]["status"] == "resigned" and seats[2]["actions"] == ["s", "s"]
    assert seats[1]["actions"] == WINS["klondike"][1].split()
    times = seats[1]["action_times_ms"]
    assert len(times) == len(seats[1]["actions"]) and times == sorted(times)
    assert replay(deal, seats[1]["actions"]).won
    # the plain-text export: samedeal replay DEAL - reproduces the final position
    status, kind, text = await get(server, f"/api/games/{race_id}/seats/1/moves")
    assert status == 200 and kind.startswith("text/plain")
    out = subprocess.run(
        [sys.executable, "-m", "clients.cli", "replay", deal, "-", "--json"],
        input=text,
        capture_output=True,
        cwd=ROOT,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    final = new_game(deal)
    final.push_all(seats[1]["actions"])
    assert orjson.loads(out.stdout) == final.position()
    # the player page: the race, the stats
    page = orjson.loads((await get(server, "/api/players/bob"))[2])
    assert page["name"] == "Bob" and page["recent"][0]["id"] == race_id
    klondike = next(s for s in page["stats"] if s["game"] == "klondike")
    assert (klondike["played"], klondike["won"], klondike["current_streak"]) == (1, 0, 0)
    ann_page = orjson.loads((await get(server, "/api/players/ann"))[2])
    ann_stats = next(s for s in ann_page["stats"] if s["game"] == "klondike")
    assert (ann_stats["played"], ann_stats["won"], ann_stats["current_streak"]) == (1, 1, 1)
    for secret in (ann_id.secret, bob_id.secret, ann_id.recovery_code):
        assert secret and secret.encode() not in body


async def test_deleting_an_identity_keeps_the_others_results(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, "memory", tmp_path)
    _ann, bob, _deal, _ann_id, bob_id = await _race_two(server)
    race_id = await _game_id(server, "bob")
    await bob.forget_me()
    with pytest.raises(RequestError) as info:
        await (await server.client()).identify(bob_id.player, bob_id.secret or "")
    assert info.value.code == "bad_identity"
    assert (await get(server, "/api/players/bob"))[0] == 404  # the handle is gone
    game = orjson.loads((await get(server, f"/api/games/{race_id}"))[2])
    seats = {s["seat"]: s for s in game["seats"]}
    assert seats[2]["player"]["deleted"] and seats[2]["name"] != "Bob"
    assert seats[1]["name"] == "Ann" and seats[1]["status"] == "won"  # untouched


async def test_a_race_in_progress_when_its_racer_deletes_their_identity_is_anonymised(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, "memory", tmp_path)
    ann, bob = await server.client(), await server.client()
    await ann.new_player("Ann")
    await ann.set_handle("ann")
    await bob.new_player("Bob")
    await bob.set_handle("bob")
    joined = await ann.create("klondike", name="Ann Typed", deal="code", code=WINS["klondike"][0])
    await bob.join(joined.room, name="Bob")
    await ann.start()
    await ann.next_event("race_starting")
    await ann.forget_me()  # mid-race: the seat still plays, its identity is gone
    await ann.resign()
    await bob.resign()
    await bob.next_event("race_ended", timeout=10)
    race_id = await _game_id(server, "bob")
    game = orjson.loads((await get(server, f"/api/games/{race_id}"))[2])
    seats = {s["seat"]: s for s in game["seats"]}
    assert seats[1]["name"] == "deleted player" and seats[1]["player"] is None
    assert seats[1]["status"] == "resigned"
    assert seats[2]["name"] == "Bob" and seats[2]["player"]["handle"] == "bob"


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/games/not-an-id", 400, "bad_game_id"),
        ("/api/games/000000000000", 404, "unknown_game"),
        ("/api/games/000000000000/seats/1/moves", 404, "unknown_game"),
        ("/api/players/nobody_here", 404, "unknown_player"),
        ("/api/players/x?limit=lots", 400, "bad_query"),
        ("/api/players/%27%20OR%201%3D1%20--", 404, "unknown_player"),
    ],
)
async def test_bad_api_requests_get_a_clear_error(
    start_server: StartServer, tmp_path: Path, path: str, status: int, error: str
) -> None:
    server = await with_records(start_server, "memory", tmp_path)
    got, kind, body = await get(server, path)
    assert got == status and kind == "application/json"
    assert orjson.loads(body)["error"] == error


async def test_a_record_left_by_a_dead_worker_is_written_once_by_another(
    start_server: StartServer, store_kind: str, tmp_path: Path
) -> None:
    """A worker kept a finished race for its writer and died before the database had it:
    any worker writes it after ``records_retry_after``; writing it again changes nothing."""
    server = await with_records(start_server, store_kind, tmp_path, records_retry_after=0.2)
    record = RaceRecord(
        room="DEADW1",
        room_created_at=1,
        race=1,
        game="klondike",
        deal=WINS["klondike"][0],
        started_at=2,
        ended_at=3,
        seats=(
            SeatRecord(
                seat=1,
                name="Ghost",
                status="resigned",
                rank=1,
                score=0,
                moves=1,
                on_foundations=0,
                elapsed_ms=5,
                actions=("s",),
                action_times=(4,),
            ),
        ),
    )
    store = server.app.store
    key = "race:DEADW1:1:1"
    await store.pending.keep(key, record_to_json(record))
    records = server.app.ctx.records
    assert records is not None

    async def written() -> bool:
        return await store.pending.count() == 0

    await until(written, 10)
    # in the store, once: writing it again gives back the same race
    race_id = await records.record_race(record)
    assert await records.record_races([record, record]) == [race_id, race_id]
    stored = await records.race(race_id)
    assert stored is not None and stored.record.seats[0].name == "Ghost"
