"""Rated races through a real server: a rated room seats identified players only, no
robots, never the deal of the day; its races' results carry the ratings, the HTTP API shows
them, and they rebuild from the stored races to the same numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers import until_server_clock
from server_fixtures import ServerHandle, StartServer, get_json

from clients.client import RaceClient, RequestError
from protocol import Ack, Progress, RaceRecorded, RaceStarting, RematchOffered, SeatEvent
from server.config import now_ms


async def with_records(start_server: StartServer, url: str, **options: Any) -> ServerHandle:
    return await start_server("memory", records_url=url, **options)


async def identified(server: ServerHandle, name: str) -> RaceClient:
    client = await server.client()
    await client.new_player(name)
    return client


async def refused(code: str, request: Any) -> None:
    with pytest.raises(RequestError) as info:
        await request
    assert info.value.code == code


async def test_a_rated_room_seats_identified_people_only(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, f"sqlite:///{tmp_path / 'r.db'}")
    guest = await server.client()
    await refused("rated_needs_identity", guest.create("klondike", rated=True))
    ann = await identified(server, "Ann")
    await refused("rated_daily", ann.create("klondike", deal="daily", rated=True))
    joined = await ann.create("klondike", rated=True)
    assert joined.snapshot is not None and joined.snapshot.options.rated
    await refused("rated_needs_identity", guest.join(joined.room))
    await refused("rated_no_robots", ann.request({"type": "add_bot"}))
    await refused("rated_daily", ann.rematch("daily"))
    bob = await identified(server, "Bob")
    assert (await bob.join(joined.room)).seat == 2
    status, invitation = await get_json(server.port, f"/api/rooms/{joined.room}")
    assert status == 200 and invitation["rated"]  # a guest knows before trying
    casual = await (await server.client()).create("klondike")
    assert casual.snapshot is not None and not casual.snapshot.options.rated


async def race(racers: dict[RaceClient, int], *, started: bool = False) -> list[RaceRecorded]:
    """Race the race just started (``started``: and begun): each racer draws from the stock
    that many times and resigns (the fewer moves, the better the place); what each is told
    once it is recorded."""
    if not started:
        starts = [await c.next_event("race_starting") for c in racers]
        first = starts[0]
        assert isinstance(first, RaceStarting)
        await until_server_clock(first.start_at, first.now)  # moves count from then
    for client, draws in racers.items():
        for _ in range(draws):
            assert isinstance(await client.move("s"), Ack)
        await client.resign()
    recorded = [await c.next_event("race_recorded", timeout=15) for c in racers]
    assert all(isinstance(r, RaceRecorded) for r in recorded)
    return recorded  # type: ignore[return-value]


async def rematch(host: RaceClient, others: list[RaceClient]) -> None:
    await host.rematch("same")
    for client in others:
        offered = await client.next_event("rematch_offered")
        assert isinstance(offered, RematchOffered)
        await client.rematch_reply(offered.race, True)


async def test_rated_races_change_ratings_that_rebuild_to_the_same(
    start_server: StartServer, records_url: str
) -> None:
    """Four players race twice in a rated room (the second time Dan goes away and is
    counted as abandoning): each race's results carry the ratings, the API shows them, and
    a rebuild from the stored races gives the same numbers — on SQLite and PostgreSQL."""
    server = await with_records(start_server, records_url)
    ann, bob, cid, dan = [await identified(server, n) for n in ("Ann", "Bob", "Cid", "Dan")]
    await ann.set_handle("ann")
    room = (await ann.create("klondike", rated=True, max_players=4)).room
    for client in (bob, cid, dan):
        await client.join(room)
    await ann.start()
    first = await race({ann: 0, bob: 1, cid: 2, dan: 3})
    told = first[0].ratings
    assert told is not None and all(r.ratings == told for r in first)
    assert [(r.seat, r.player) for r in told] == [
        (n, c.player.player if c.player else None) for n, c in enumerate((ann, bob, cid, dan), 1)
    ]
    assert [r.change > 0 for r in told] == [True, True, False, False]
    assert told[0].change > told[1].change and told[3].change < told[2].change
    assert all(r.provisional and r.rating == 1500 + r.change for r in told)
    assert not any(r.abandoned for r in told)

    await rematch(ann, [bob, cid, dan])
    await dan.next_event("race_starting")
    await dan.close()  # gone for good: left once the grace period is over
    second = (await race({ann: 3, bob: 2, cid: 1}))[0].ratings
    assert second is not None and [r.seat for r in second] == [1, 2, 3, 4]
    assert second[3].abandoned and second[3].rating < told[3].rating
    assert second[2].change > 0  # Cid beat Ann and Bob this time, and Dan

    port = server.port
    game_id = first[0].game_id
    status, replay = await get_json(port, f"/api/games/{game_id}")
    assert status == 200 and replay["rated"]
    assert [s["rating"] for s in replay["seats"]] == [r.model_dump() for r in told]
    status, page = await get_json(port, "/api/players/ann")
    (klondike,) = page["ratings"]
    assert (klondike["game"], klondike["races"], klondike["rating"]) == (
        "klondike",
        2,
        second[0].rating,
    )
    assert (klondike["won"], klondike["lost"], klondike["abandoned"]) == (4, 2, 0)
    status, chart = await get_json(port, "/api/players/ann/ratings/klondike")
    assert status == 200 and chart["current"] == klondike
    assert [(p["game_id"], p["rating"], p["change"]) for p in chart["points"]] == [
        (game_id, told[0].rating, told[0].change),
        (second_id := chart["points"][1]["game_id"], second[0].rating, second[0].change),
    ]
    assert second_id != game_id
    status, board = await get_json(port, "/api/leaderboard/klondike")
    assert status == 200 and board["entries"] == []  # everyone is still provisional
    assert (board["active_days"], board["provisional_rd"]) == (30, 110)
    records = server.app.ctx.records
    assert records is not None
    assert await records.ratings.seek_cooldown(told[3].player, now=now_ms()) == 0  # once
    assert (await records.ratings.rebuild(write=False)).differing == 0


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/leaderboard/chess", 400, "bad_game"),
        ("/api/leaderboard/klondike?limit=many", 400, "bad_query"),
        ("/api/players/nobody_here/ratings/klondike", 404, "unknown_player"),
        ("/api/players/ann/ratings/chess", 400, "bad_game"),
        ("/api/players/ann/ratings/klondike?limit=-1", 400, "bad_query"),
    ],
)
async def test_bad_rating_requests_get_a_clear_error(
    start_server: StartServer, tmp_path: Path, path: str, status: int, error: str
) -> None:
    server = await with_records(start_server, f"sqlite:///{tmp_path / 'r.db'}")
    got, body = await get_json(server.port, path)
    assert (got, body["error"]) == (status, error)


async def test_leaving_a_rated_race_abandons_it(start_server: StartServer, tmp_path: Path) -> None:
    """Leave during a rated race counts as abandoning (in a casual room it resigns)."""
    server = await with_records(start_server, f"sqlite:///{tmp_path / 'r.db'}")
    ann, bob = await identified(server, "Ann"), await identified(server, "Bob")
    room = (await ann.create("klondike", rated=True)).room
    await bob.join(room)
    await ann.start()
    started = await bob.next_event("race_starting")
    assert isinstance(started, RaceStarting)
    await until_server_clock(started.start_at, started.now)
    assert isinstance(await bob.move("s"), Ack)
    await bob.leave()
    gone = await ann.next_event("progress")
    while isinstance(gone, Progress) and gone.status == "playing":  # Bob's move first
        gone = await ann.next_event("progress")
    assert isinstance(gone, Progress) and (gone.seat, gone.status) == (2, "left")
    (recorded,) = await race({ann: 0}, started=True)
    assert recorded.ratings is not None
    assert [(r.seat, r.abandoned, r.change > 0) for r in recorded.ratings] == [
        (1, False, True),
        (2, True, False),
    ]


async def test_a_rated_rooms_seats_show_each_players_rating(
    start_server: StartServer, tmp_path: Path
) -> None:
    """A seat of a rated room shows its player's rating (a casual room's none), and after
    a rated race the seats show the new ones."""
    server = await with_records(start_server, f"sqlite:///{tmp_path / 'r.db'}")
    ann, bob = await identified(server, "Ann"), await identified(server, "Bob")
    joined = await ann.create("klondike", rated=True)
    assert joined.snapshot is not None
    assert [(s.rating, s.provisional) for s in joined.snapshot.seats] == [(1500, True)]
    await bob.join(joined.room)
    seat = await ann.next_event("seat")
    assert isinstance(seat, SeatEvent) and (seat.name, seat.rating) == ("Bob", 1500)
    await ann.start()
    (recorded, _) = await race({ann: 0, bob: 1})
    assert recorded.ratings is not None
    again = await (await identified(server, "Cid")).join(joined.room, role="spectator")
    assert again.snapshot is not None
    assert [s.rating for s in again.snapshot.seats] == [r.rating for r in recorded.ratings]
    casual = await (await server.client()).create("klondike")
    assert casual.snapshot is not None and casual.snapshot.seats[0].rating is None
