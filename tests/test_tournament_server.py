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
from helpers import until, until_server_clock
from server_fixtures import WINS, ServerHandle, http_get

from clients.client import RaceClient, RequestError
from protocol import (
    Ack,
    BoardsOpen,
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
async def tserver(start_server: Start, store_kind: str, tmp_path: Path) -> ServerHandle:
    """A server keeping records (identities), with short tournament countdowns."""
    return await start_server(
        store_kind,
        records_url=f"sqlite:///{tmp_path / 'records.db'}",
        tournament_countdown=0.2,
        tournament_lease=1.0,
    )


SECRETS: dict[str, str] = {}


async def identified(server: ServerHandle, name: str) -> RaceClient:
    """A client with a new identity (its secret kept in :data:`SECRETS`)."""
    client = await server.client()
    made = await client.new_player(name)
    assert made.secret is not None
    SECRETS[made.player] = made.secret
    return client


async def secret_of(client: RaceClient) -> str:
    assert client.player_id is not None
    return SECRETS[client.player_id]


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
    assert made.page.draw.seed is None and len(made.page.draw.commitment) == 64
    assert made.page.fair == 2  # its rounds are sealed deals
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
    await until_start(ann, seat_a)
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
    await until_start(ann, seat_a)
    await win(ann)
    finished = await event(watcher, "tournament_finished")
    assert len(finished.data["seed"]) == 64

    # the page, the results, the export: after the end, with the seed and every move list
    status, kind, body = await asyncio.to_thread(http_get, tserver.port, f"/api/tournaments/{tid}")
    assert status == 200 and kind == "application/json"
    page_data = json.loads(body)
    assert page_data["phase"] == "finished" and page_data["draw"]["seed"] == finished.data["seed"]
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
    assert client.player_id is not None
    return client.player_id


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


# --------------------------------------------------------------------- helpers for rounds


async def until_start(client: RaceClient, seat: TournamentSeat) -> None:
    """Wait for the round's start, by the server's clock."""
    await until_server_clock(seat.start_at, await client.ping())


async def resign_round(client: RaceClient, number: int) -> TournamentSeat:
    """Take the seat of round ``number`` and resign at its start."""
    seat: TournamentSeat = await next_of(client, TournamentSeat, round=number)
    await client.take_seat(seat)
    await until_start(client, seat)
    await client.resign()
    return seat


async def page_of(server: ServerHandle, tid: str, key: str | None = None) -> dict[str, Any]:
    path = f"/api/tournaments/{tid}" + (f"?key={key}" if key else "")
    _, _, body = await asyncio.to_thread(http_get, server.port, path)
    data: dict[str, Any] = json.loads(body)
    return data


async def test_late_join_absences_withdraw_and_rejoin(tserver: ServerHandle) -> None:
    host = await identified(tserver, "Host")
    ann = await identified(tserver, "Ann")
    bob = await identified(tserver, "Bob")
    tid = (
        await host.tournament_create(
            **settings(rounds=3, deal_codes=[KL_CODE] * 3, late_join_until=2)
        )
    ).page.id
    await ann.tournament_join(tid, name="Ann")
    await bob.tournament_join(tid, name="Bob")
    bob_id = ann_id(bob)
    await host.tournament_host(tid, "start")
    await event(host, "round_starting")

    # round 1: Ann and Bob; Dan joins late during it (he plays from round 2)
    dan = await identified(tserver, "Dan")
    late = await dan.tournament_join(tid, name="Dan")
    assert late.you.status == "entered" and late.you.seat is None
    await asyncio.gather(resign_round(ann, 1), resign_round(bob, 1))
    await event(host, "round_ended")

    # Bob goes away: absent from round 2 (one absence), Dan plays it
    await bob.close()

    async def gone() -> bool:
        return bob_id not in await tserver.app.store.presence.present(tid.replace("-", ""), 0)

    await until(gone)
    await host.tournament_host(tid, "start_round")
    starting = await event(host, "round_starting")
    assert starting.data["absent"] == [bob_id]
    assert set(starting.data["participants"]) == {ann_id(ann), ann_id(dan)}
    eve = await identified(tserver, "Eve")
    with pytest.raises(RequestError) as closed:
        await eve.tournament_join(tid)
    assert closed.value.code == "late_join_closed"
    await asyncio.gather(resign_round(ann, 2), resign_round(dan, 2))
    await event(host, "round_ended")

    # round 3: a second absence in a row withdraws him
    await host.tournament_host(tid, "start_round")
    withdrawn = await event(host, "player_withdrawn")
    assert withdrawn.data == {"player": bob_id, "by": "absences"}

    # he comes back and rejoins (for the rounds to come: none here); Ann withdraws mid-round
    bob2 = await tserver.client()
    await bob2.identify(bob_id, await secret_of(bob))
    reopened = await bob2.tournament_open(tid)
    assert reopened.you.status == "withdrawn"
    await bob2.tournament_rejoin(tid)
    seat = await next_of(ann, TournamentSeat, round=3)
    await ann.take_seat(seat)
    await ann.tournament_withdraw(tid)
    with pytest.raises(RequestError) as again:
        await ann.tournament_withdraw(tid)
    assert again.value.code == "not_entered"
    await resign_round(dan, 3)
    await event(host, "tournament_finished")

    page = await page_of(tserver, tid)
    lines = {row["name"]: row for row in page["standings"]}
    assert [r["status"] for r in lines["Bob"]["rounds"]] == ["resigned", "absent", "absent"]
    assert [r["status"] for r in lines["Dan"]["rounds"]] == ["missed", "resigned", "resigned"]
    assert lines["Ann"]["rounds"][2]["status"] == "resigned"  # her race ended as she left
    assert lines["Ann"]["status"] == "withdrawn" and lines["Bob"]["status"] == "entered"


async def test_host_acts_are_kept_in_the_audit_log(tserver: ServerHandle) -> None:
    host = await identified(tserver, "Host")
    ann, bob, cat = [await identified(tserver, n) for n in ("Ann", "Bob", "Cat")]
    made = await host.tournament_create(**settings(rounds=2))
    tid = made.page.id
    await host.tournament_host(tid, "edit_settings", settings={"name": "Saturday cup"})
    for client, name in ((ann, "Ann"), (bob, "Bob"), (cat, "Cat")):
        await client.tournament_join(tid, name=name)
    await host.tournament_host(tid, "announce", text="Good luck!")
    told = await event(cat, "announcement")
    assert told.data["text"] == "Good luck!"
    await host.tournament_host(tid, "start")
    seat_a = await next_of(ann, TournamentSeat, round=1)
    await ann.take_seat(seat_a)
    await until_start(ann, seat_a)
    await win(ann)
    await asyncio.gather(resign_round(bob, 1), resign_round(cat, 1))
    await event(host, "round_ended")

    # kicked: out for good with the reason they see; their result stays
    await host.tournament_host(tid, "kick", player=ann_id(cat), reason="rude in chat")
    kicked = await event(cat, "player_kicked")
    assert kicked.data["reason"] == "rude in chat" and kicked.data["player"] == ann_id(cat)
    reopened = await cat.tournament_open(tid)
    assert reopened.you.status == "kicked" and reopened.you.reason == "rude in chat"
    with pytest.raises(RequestError) as refused:
        await cat.tournament_rejoin(tid)
    assert refused.value.code == "not_withdrawn"

    # a disqualified result scores nothing, restored it counts again
    await host.tournament_host(
        tid, "disqualify", player=ann_id(ann), round=1, reason="shared the deal"
    )
    page = await page_of(tserver, tid)
    assert [r["name"] for r in page["standings"]][:1] == ["Bob"]
    with pytest.raises(RequestError) as twice:
        await host.tournament_host(tid, "disqualify", player=ann_id(ann), round=1, reason="x")
    assert twice.value.code == "already_disqualified"
    await host.tournament_host(tid, "restore", player=ann_id(ann), round=1)
    page = await page_of(tserver, tid)
    assert page["standings"][0]["name"] == "Ann" and page["standings"][0]["points"] == 4

    # banned: every result struck, left out of the standings
    await host.tournament_host(tid, "ban", player=ann_id(bob), reason="second account")
    await host.tournament_host(tid, "pause")
    await host.tournament_host(tid, "resume")
    page = await page_of(tserver, tid)
    assert {r["name"] for r in page["standings"]} == {"Ann", "Cat"}
    assert page["standings"][0]["points"] == 3  # one player beaten now, plus the win
    acts = [(a["act"], a["player"], a["reason"]) for a in page["audit"]]
    assert acts == [
        ("edit_settings", None, None),
        ("announce", None, None),
        ("start", None, None),
        ("kick", ann_id(cat), "rude in chat"),
        ("disqualify", ann_id(ann), "shared the deal"),
        ("restore", ann_id(ann), None),
        ("ban", ann_id(bob), "second account"),
        ("pause", None, None),
        ("resume", None, None),
    ]
    assert all(a["actor"] == ann_id(host) for a in page["audit"])
    assert page["settings"]["name"] == "Saturday cup"
    await host.tournament_host(tid, "end_early", reason="rain")
    finished = await event(ann, "tournament_finished")
    assert finished.data["early"] is True


async def test_private_tournaments_need_their_key(tserver: ServerHandle) -> None:
    host = await identified(tserver, "Host")
    ann = await identified(tserver, "Ann")
    made = await host.tournament_create(**settings(private=True))
    public = await host.tournament_create(**settings(name="Open cup"))
    tid = made.page.id
    assert "?key=" in made.page.link  # the host's link carries the key
    key = made.page.link.split("?key=")[1]
    for wrong in (None, "nope"):
        with pytest.raises(RequestError) as hidden:
            await ann.tournament_open(tid, key=wrong)
        assert hidden.value.code == "unknown_tournament"
        with pytest.raises(urllib.error.HTTPError) as not_found:
            await page_of(tserver, tid, wrong)
        assert not_found.value.code == 404
        not_found.value.close()
    joined = await ann.tournament_join(tid, key=key)
    assert "?key=" not in joined.page.link
    assert (await page_of(tserver, tid, key))["id"] == tid
    _, _, body = await asyncio.to_thread(http_get, tserver.port, "/api/tournaments")
    listed = [t["id"] for t in json.loads(body)["tournaments"]]
    assert public.page.id in listed and tid not in listed


async def test_a_round_ends_at_its_deadline_and_the_records_keep_it(
    tserver: ServerHandle,
) -> None:
    from server.config import set_clock_offset

    host = await identified(tserver, "Host")
    ann, bob = await identified(tserver, "Ann"), await identified(tserver, "Bob")
    tid = (
        await host.tournament_create(
            **settings(rounds=1, deal_codes=[KL_CODE], round_time_limit=60)
        )
    ).page.id
    await ann.tournament_join(tid, name="Ann")
    await bob.tournament_join(tid, name="Bob")
    await host.tournament_host(tid, "start")
    seat = await next_of(ann, TournamentSeat, round=1)
    await ann.take_seat(seat)
    await until_start(ann, seat)
    for text in KL_MOVES[:10]:
        assert isinstance(await ann.move(text), Ack)
    # a spectator come by the room's link: no board while the round runs
    guest = await tserver.client()
    await guest.join(seat.room, role="spectator")
    with pytest.raises(RequestError) as refused:
        await guest.follow([seat.seat])
    assert refused.value.code == "boards_hidden"
    # Bob never takes his seat; nobody finishes: the deadline ends the round
    try:
        set_clock_offset(61)
        ended = await event(host, "round_ended", timeout=10)
        # the room's connections are told its boards are open (the deadline ended its
        # secret by itself: told all the same), and the spectator follows Ann's at once
        await next_of(guest, BoardsOpen, room=seat.room)
        await guest.follow([seat.seat])
    finally:
        set_clock_offset(0)
    ranking = {r["player"]: r for r in ended.data["ranking"]}
    assert ranking[ann_id(ann)]["place"] == 1 and ranking[ann_id(bob)]["place"] == 2
    await event(host, "tournament_finished")
    page = await page_of(tserver, tid)
    mine = next(r for r in page["rounds"][0]["results"] if r["player"] == ann_id(ann))
    assert mine["status"] == "timeout" and mine["moves"] == 10

    # the live store lets it go: the records store has it all, move lists included
    async def retired() -> bool:  # written to the records, then retired
        return tid.replace("-", "") not in await tserver.app.store.tournaments.active()

    await until(retired)
    await forget(tserver, tid.replace("-", ""))
    page = await page_of(tserver, tid)
    assert page["phase"] == "finished" and page["rounds"][0]["results"][0]["game_id"]
    _, _, export_text = await asyncio.to_thread(
        http_get, tserver.port, f"/api/tournaments/{tid}/export"
    )
    export = orjson.loads(export_text)
    assert verify(export) == []
    assert export["rounds"][0]["results"][ann_id(ann)]["move_list"] == KL_MOVES[:10]


async def forget(server: ServerHandle, tid: str) -> None:
    """Drop a tournament from the live store, as its expiry would."""
    tournaments: Any = server.app.store.tournaments
    if server.kind == "memory":
        tournaments._tournaments.pop(tid)
    else:

        async def drop(redis: Any) -> None:  # on the shard of the tournament's tag
            await redis.delete(*await redis.keys(f"sd:{{T:{tid}}}:*"))

        await tournaments._link.run(f"T:{tid}", drop)


async def test_a_scheduled_start_on_winnable_deals(start_server: Start, tmp_path: Path) -> None:
    """Nobody starts it: the timer does at the scheduled time; the round's deal is the
    first candidate the solver proves (in a process), checked by the export's verify."""
    server = await start_server(
        "memory",
        records_url=f"sqlite:///{tmp_path / 'records.db'}",
        tournament_countdown=0.2,
        tournament_lease=1.0,
        tournament_nodes=5000,
        tournament_candidates=3,
    )
    host = await identified(server, "Host")
    ann = await identified(server, "Ann")
    starts_at = await host.ping() + 1500
    made = await host.tournament_create(
        name="Dawn cup", game="klondike", rounds=1, deals="winnable", starts_at=starts_at
    )
    assert made.page.draw.node_budget == 5000 and made.page.draw.max_candidates == 3
    await ann.tournament_join(made.page.id, name="Ann")
    seat = await next_of(ann, TournamentSeat, timeout=30)
    assert seat.start_at >= starts_at
    await ann.take_seat(seat)
    await until_start(ann, seat)
    await ann.resign()
    await event(ann, "tournament_finished")
    _, _, text = await asyncio.to_thread(
        http_get, server.port, f"/api/tournaments/{made.page.id}/export"
    )
    export = orjson.loads(text)
    assert verify(export) == []
    (played,) = export["rounds"]
    assert played["solution"] is not None or played["skipped"] == [0, 1, 2]
    page = await page_of(server, made.page.id)
    assert page["audit"] == []  # the timer's start is no host act
