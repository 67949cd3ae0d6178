"""Tournaments through the server, on both backends: create, join, rounds played in rooms,
live standings, host acts with the audit log, absences, the HTTP API and the export."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import urllib.error
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import pytest_asyncio
from server_fixtures import WINS, ServerHandle, http_get

from clients.client import RaceClient, RequestError
from protocol import (
    Ack,
    RaceEnded,
    TournamentEvent,
    TournamentSeat,
    TournamentStandings,
)
from server.tournaments import verify

KL_CODE, KL_LINE = WINS["klondike"]
KL_MOVES = KL_LINE.split()

Start = Callable[..., Awaitable[ServerHandle]]


@pytest_asyncio.fixture
async def tserver(start_server: Start, backend_kind: str, tmp_path: Path) -> ServerHandle:
    """A server keeping records (identities), with short tournament countdowns."""
    return await start_server(
        backend_kind,
        records_url=f"sqlite:///{tmp_path / 'records.db'}",
        tournament_countdown=0.2,
        tournament_lease=1.0,
    )


async def identified(server: ServerHandle, name: str) -> RaceClient:
    client = await server.client()
    await client.new_player(name)
    return client


async def next_of(client: RaceClient, model: type[Any], timeout: float = 10.0, **match: Any) -> Any:
    """The next message of type ``model`` whose fields match (others are skipped)."""

    async def wait() -> Any:
        async for message in client.events():
            if isinstance(message, model) and all(
                getattr(message, k) == v for k, v in match.items()
            ):
                return message
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), timeout)


async def event(client: RaceClient, kind: str, timeout: float = 10.0) -> TournamentEvent:
    """The next ``tournament_event`` of ``kind``."""
    found: TournamentEvent = await next_of(client, TournamentEvent, timeout, kind=kind)
    return found


def settings(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "Friday cup",
        "game": "klondike",
        "rounds": 2,
        "round_start": "manual",
        "deals": "list",
        "deal_codes": [KL_CODE, KL_CODE],
    }
    return {**base, **over}


async def win(client: RaceClient) -> None:
    for text in KL_MOVES:
        reply = await client.move(text)
        assert isinstance(reply, Ack), reply


async def test_a_tournament_end_to_end(tserver: ServerHandle) -> None:
    host = await identified(tserver, "Host")
    ann = await identified(tserver, "Ann")
    bob = await identified(tserver, "Bob")
    watcher = await tserver.client()  # a guest: the page, no identity

    made = await host.tournament_create(**settings())
    tid = made.page.id
    assert made.you.role == "host" and made.page.phase == "created"
    assert made.page.fair.seed is None and len(made.page.fair.commitment) == 64
    assert made.page.settings.deal_codes is None  # the host's list is told at the end

    joined = await ann.tournament_join(tid, name="Ann")
    assert joined.you.role == "player" and joined.you.status == "entered"
    await bob.tournament_join(tid, name="Bob")
    page = await watcher.tournament_open(tid)
    assert page.you.role == "spectator"
    assert [p.name for p in page.page.players] == ["Ann", "Bob"]
    seen = await event(host, "player_joined")
    assert seen.data["name"] == "Ann"

    # the host starts; the timer starts round 1 at once, seating both players
    await host.tournament_host(tid, "start")
    seat_a: TournamentSeat = await next_of(ann, TournamentSeat)
    seat_b: TournamentSeat = await next_of(bob, TournamentSeat)
    assert seat_a.round == 1 and seat_a.room == seat_b.room  # two players: one room
    assert seat_a.token != seat_b.token
    starting = await event(watcher, "round_starting")
    assert set(starting.data["participants"]) == {ann_id(ann), ann_id(bob)}
    assert "deal" not in starting.data  # nobody is told the deal before it is over

    joined_a = await ann.take_seat(seat_a)
    await bob.take_seat(seat_b)
    assert joined_a.snapshot is not None and joined_a.snapshot.deal is None
    assert joined_a.view is not None  # the starting board
    await asyncio.sleep(max(0, seat_a.start_at - await ann.ping()) / 1000 + 0.05)
    await win(ann)
    await bob.resign()

    ended = await event(watcher, "round_ended")
    assert ended.data["deal"] == KL_CODE  # told once the round is over
    ranking = {r["player"]: r for r in ended.data["ranking"]}
    assert ranking[ann_id(ann)]["place"] == 1 and ranking[ann_id(ann)]["points"] == 3
    assert ranking[ann_id(bob)]["points"] == 0
    # the room's race never told the deal (it is the round's secret until its deadline)
    race_end: RaceEnded = await next_of(bob, RaceEnded)
    assert race_end.deal is None

    standings = await standings_where(watcher, lambda s: bool(s.top) and s.top[0].points == 3)
    assert [r.name for r in standings.top] == ["Ann", "Bob"]

    # round 2: by hand; Bob withdraws during it (his race is resigned), Ann wins again
    await host.tournament_host(tid, "start_round")
    seat_a = await next_of(ann, TournamentSeat, round=2)
    seat_b = await next_of(bob, TournamentSeat, round=2)
    await ann.take_seat(seat_a)
    await bob.take_seat(seat_b)
    await bob.tournament_withdraw(tid)
    await asyncio.sleep(max(0, seat_a.start_at - await ann.ping()) / 1000 + 0.05)
    await win(ann)
    finished = await event(watcher, "tournament_finished")
    assert len(finished.data["seed"]) == 64

    # the page, the results, the export: after the end, with the seed and every move list
    status, kind, body = await asyncio.to_thread(http_get, tserver.port, f"/api/tournaments/{tid}")
    assert status == 200 and kind == "application/json"
    page_data = json.loads(body)
    assert page_data["phase"] == "finished" and page_data["fair"]["seed"] == finished.data["seed"]
    assert page_data["settings"]["deal_codes"] == [KL_CODE, KL_CODE]
    assert next(r["player"] for r in page_data["standings"]) == ann_id(ann)
    bob_round_2 = [r for r in page_data["rounds"][1]["results"] if r["player"] == ann_id(bob)]
    assert bob_round_2 and bob_round_2[0]["status"] == "resigned"
    status, _, export_text = await asyncio.to_thread(
        http_get, tserver.port, f"/api/tournaments/{tid}/export"
    )
    export = orjson.loads(export_text)
    assert verify(export) == []
    assert export["rounds"][0]["results"][ann_id(ann)]["move_list"] == KL_MOVES
    tampered = json.loads(export_text)
    tampered["rounds"][0]["results"][ann_id(bob)]["score"] += 5
    assert verify(tampered)

    status, kind, text = await asyncio.to_thread(
        http_get, tserver.port, f"/api/tournaments/{tid}/results?format=csv"
    )
    rows = list(csv.DictReader(io.StringIO(text)))
    assert kind.startswith("text/csv") and [r["name"] for r in rows] == ["Ann", "Bob"]
    status, kind, text = await asyncio.to_thread(
        http_get, tserver.port, f"/api/tournaments/{tid}/results?format=ndjson"
    )
    assert [json.loads(line)["rank"] for line in text.splitlines()] == [1, 2]
    with pytest.raises(urllib.error.HTTPError) as bad:
        await asyncio.to_thread(
            http_get, tserver.port, f"/api/tournaments/{tid}/results?format=xml"
        )
    assert bad.value.code == 400
    bad.value.close()  # its socket, else the server waits for it to close


def ann_id(client: RaceClient) -> str:
    """The identity of a client (set by ``new_player``)."""
    assert client.player is not None
    return client.player


async def standings_where(
    client: RaceClient, check: Callable[[TournamentStandings], bool], timeout: float = 10.0
) -> TournamentStandings:
    """The first standings pushed that pass ``check``."""

    async def wait() -> TournamentStandings:
        async for message in client.events():
            if isinstance(message, TournamentStandings) and check(message):
                return message
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), timeout)


async def test_refusals_change_nothing(tserver: ServerHandle) -> None:
    host = await identified(tserver, "Host")
    guest = await tserver.client()
    with pytest.raises(RequestError) as no_id:
        await guest.tournament_create(**settings())
    assert no_id.value.code == "no_identity"
    with pytest.raises(RequestError) as bad:
        await host.tournament_create(**settings(rounds=25))
    assert bad.value.code == "bad_settings" and bad.value.message.startswith("rounds")
    made = await host.tournament_create(**settings())
    tid = made.page.id
    ann = await identified(tserver, "Ann")
    await ann.tournament_join(tid)
    for act, fields, code in [
        ("start_round", {}, "wrong_phase"),
        ("pause", {}, "wrong_phase"),
        ("kick", {"player": "nobody", "reason": "r"}, "no_such_player"),
        ("kick", {"player": ann_id(ann)}, "invalid_message"),
        ("announce", {"text": " "}, "bad_text"),
    ]:
        with pytest.raises(RequestError) as refused:
            await host.tournament_host(tid, act, **fields)
        assert refused.value.code == code, (act, refused.value)
    with pytest.raises(RequestError) as not_host:
        await ann.tournament_host(tid, "start")
    assert not_host.value.code == "not_allowed"
    with pytest.raises(RequestError) as unknown:
        await ann.tournament_open("ZZZZ-ZZ")
    assert unknown.value.code == "unknown_tournament"
    page = await ann.tournament_open(tid)
    assert page.page.phase == "created" and page.page.version == made.page.version + 1
