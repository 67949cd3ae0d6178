"""Rematch by invitation, leaving, and the daily label on a real server (issue 18, items 13
and 17), on both backends; and the start-once rule with two workers on one Redis."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers import until, until_race_starts, until_server_clock
from server_fixtures import ServerHandle, StartServer

from clients.client import RaceClient, RequestError
from protocol import (
    Ack,
    Progress,
    RaceEnded,
    RaceStarting,
    Rejected,
    RematchOffered,
    SeatEvent,
    Spectators,
)
from server.codes import normalize_code
from server.rooms.room import Refusal
from server.rooms.updates import AnswerRematch, OfferDeadline

DEAL = "KL1-1-AAAAAAK"


async def after_a_race(
    server: ServerHandle, names: tuple[str, ...] = ("Ann", "Bob", "Cy")
) -> list[RaceClient]:
    """Players in one room (the first hosts) whose first race is over."""
    clients = [await server.client() for _ in names]
    joined = await clients[0].create("klondike", name=names[0], deal="code", code=DEAL)
    for client, name in zip(clients[1:], names[1:], strict=True):
        await client.join(joined.room, name=name)
    await clients[0].start()
    for client in clients[1:]:
        await client.next_event("race_starting")
    await until_race_starts(clients[0])
    for client in clients:
        await client.resign()
    for client in clients:
        await client.next_event("race_ended")
    return clients


async def offered(client: RaceClient) -> RematchOffered:
    event = await client.next_event("rematch_offered")
    assert isinstance(event, RematchOffered)
    return event


async def test_the_race_starts_once_everyone_answered_with_those_who_accepted(
    server: ServerHandle,
) -> None:
    ann, bob, cy = await after_a_race(server)
    ann.frames, bob.frames = [], []
    await ann.rematch("random")
    offer = await offered(bob)
    assert (offer.race, offer.deal, offer.by) == (2, "random", 1)
    assert offer.deadline - offer.now == 20_000  # the default time to answer
    assert (await offered(ann)).race == 2  # everyone sees it; the host is not asked
    with pytest.raises(RequestError) as info:
        await ann.rematch("same")
    assert info.value.code == "rematch_pending"
    await bob.rematch_reply(2, accept=True)
    stored = await server.app.store.rooms.snapshot(normalize_code(ann.room or "") or "")
    assert stored is not None and stored.room.offer is not None  # Cy is waited for
    assert not [m for m in ann.drain() if m.type == "race_starting"]
    await cy.rematch_reply(2, accept=False)
    start = await ann.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.race == 2 and start.seats == [1, 2]
    deal = await server.deal(ann.room or "")
    assert deal != DEAL and not any(deal in str(f) for f in bob.frames or [])  # fair play
    with pytest.raises(RequestError) as info:
        await cy.rematch_reply(2, accept=True)  # too late: the race has started
    assert info.value.code == "no_offer"
    await until_server_clock(start.start_at, start.now)
    assert isinstance(await bob.move("s"), Ack)
    refused = await cy.move("s")  # Cy sits this one out, seated
    assert isinstance(refused, Rejected) and refused.rule == "no-race"
    for client in (ann, bob):
        await client.resign()
    ended = await cy.next_event("race_ended")
    assert isinstance(ended, RaceEnded) and [r.seat for r in ended.results] == [1, 2]
    # and is asked again next time
    await ann.rematch("same")
    assert (await offered(cy)).race == 3


async def test_the_deadline_starts_it_with_who_accepted(
    start_server: StartServer, store_kind: str
) -> None:
    server = await start_server(store_kind, rematch_wait=0.4)
    ann, bob, _cy = await after_a_race(server)
    await ann.rematch("same")
    offer = await offered(bob)
    await bob.rematch_reply(offer.race)
    start = await ann.next_event("race_starting", timeout=3)  # Cy never answers
    assert isinstance(start, RaceStarting) and start.seats == [1, 2]
    assert start.now >= offer.deadline
    snap = (await (await server.client()).join(ann.room or "", role="spectator")).snapshot
    assert snap is not None and snap.rematch_offer is None and snap.race == 2


async def test_refusals(server: ServerHandle) -> None:
    ann, bob = await after_a_race(server, ("Ann", "Bob"))
    with pytest.raises(RequestError) as info:
        await bob.rematch("same")
    assert info.value.code == "not_host"
    with pytest.raises(RequestError) as info:
        await bob.rematch_reply(2)
    assert info.value.code == "no_offer"
    watcher = await server.client()
    await watcher.join(ann.room or "", role="spectator")
    await ann.rematch("same")
    with pytest.raises(RequestError) as info:
        await watcher.rematch_reply(2)
    assert info.value.code == "spectator"
    stranger = await server.client()
    for request in (stranger.rematch_reply(2), stranger.leave()):
        with pytest.raises(RequestError) as info:
            await request
        assert info.value.code == "not_in_room"


async def test_alone_or_with_robots_the_rematch_starts_at_once(server: ServerHandle) -> None:
    ann = await server.client()
    # a time limit of a second ends the bot's race soon
    await ann.create("klondike", name="Ann", deal="code", code=DEAL, time_limit=1)
    await ann.request({"type": "add_bot", "strength": "greedy", "pace": 10})
    await ann.start()
    await until_race_starts(ann)
    await ann.resign()
    await ann.next_event("race_ended", timeout=5)
    await ann.rematch("same")
    start = await ann.next_event("race_starting", "rematch_offered")
    assert isinstance(start, RaceStarting) and start.seats == [1, 2]  # the bot accepts


async def test_a_joiner_during_an_offer_sees_it_and_may_accept(server: ServerHandle) -> None:
    ann, bob = await after_a_race(server, ("Ann", "Bob"))
    await ann.rematch("same")
    dan = await server.client()
    snap = (await dan.join(ann.room or "", name="Dan")).snapshot
    assert snap is not None and snap.rematch_offer is not None
    assert (snap.rematch_offer.race, snap.rematch_offer.deal) == (2, "same")
    await dan.rematch_reply(2)
    await bob.rematch_reply(2, accept=False)
    start = await ann.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.seats == [1, 3]


async def test_leave_in_the_lobby_frees_the_seat_and_passes_the_host(
    server: ServerHandle,
) -> None:
    ann, bob = await server.client(), await server.client()
    joined = await ann.create("klondike", name="Ann")
    await bob.join(joined.room, name="Bob")
    token = ann.token
    assert token is not None
    await ann.leave()
    left = await bob.next_event("seat")
    assert isinstance(left, SeatEvent) and left.seat == 1 and left.left
    host = await bob.next_event("seat")
    assert isinstance(host, SeatEvent) and host.seat == 2 and host.host
    other = await server.client()
    with pytest.raises(RequestError) as info:
        await other.resume(joined.room, token)  # the seat is gone
    assert info.value.code == "bad_token"
    again = await ann.join(joined.room, name="Ann again")  # the connection goes on
    assert again.seat == 3
    await bob.start()  # the new host
    await ann.next_event("race_starting")


async def test_leave_during_a_race_resigns_first(server: ServerHandle) -> None:
    ann, bob = await server.client(), await server.client()
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    await bob.join(joined.room, name="Bob")
    await ann.start()
    starting = await bob.next_event("race_starting")
    assert isinstance(starting, RaceStarting)
    await bob.leave()  # during the countdown
    gone = await ann.next_event("progress")
    assert isinstance(gone, Progress) and (gone.seat, gone.status) == (2, "resigned")
    left = await ann.next_event("seat")
    assert isinstance(left, SeatEvent) and left.seat == 2 and left.left
    await until_server_clock(starting.start_at, starting.now)
    assert isinstance(await ann.move("s"), Ack)
    await ann.resign()
    ended = await ann.next_event("race_ended")
    assert isinstance(ended, RaceEnded)
    assert {r.seat: (r.name, r.status) for r in ended.results}[2] == ("Bob", "resigned")


async def test_leave_during_an_offer_stops_it_waiting(server: ServerHandle) -> None:
    ann, bob, cy = await after_a_race(server)
    await ann.rematch("same")
    await bob.rematch_reply(2)
    await cy.leave()
    start = await ann.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.seats == [1, 2]


async def test_a_spectator_who_leaves_stops_watching(server: ServerHandle) -> None:
    ann, watcher = await server.client(), await server.client()
    joined = await ann.create("klondike", name="Ann")
    await watcher.join(joined.room, role="spectator")
    count = await ann.next_event("spectators")
    assert isinstance(count, Spectators) and count.count == 1
    await watcher.leave()
    count = await ann.next_event("spectators")
    assert isinstance(count, Spectators) and count.count == 0
    await watcher.join(joined.room, name="Wes")  # now as a player
    seat = await ann.next_event("seat")
    assert isinstance(seat, SeatEvent) and seat.name == "Wes"


async def test_a_daily_room_says_so(server: ServerHandle, on_day: Any) -> None:
    on_day("2026-04-16")  # a known day: its proof's cost the same every run
    ann, bob = await server.client(), await server.client()
    joined = await ann.create("easy-harp", name="Ann", deal="daily")
    assert joined.snapshot is not None and joined.snapshot.daily
    snap = (await bob.join(joined.room, name="Bob")).snapshot
    assert snap is not None and snap.daily and snap.deal is None
    await ann.start()
    start = await bob.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.daily
    for kind, daily in (("random", False), ("daily", True), ("same", True)):
        await until_server_clock(start.start_at, start.now)
        await ann.resign()
        await bob.resign()
        await bob.next_event("race_ended")
        await ann.rematch(kind)
        await bob.rematch_reply((await offered(bob)).race)
        start = await bob.next_event("race_starting")
        assert isinstance(start, RaceStarting) and start.daily is daily, kind
        snap = (await (await server.client()).join(joined.room, role="spectator")).snapshot
        assert snap is not None and snap.daily is daily


# --------------------------------------------------------------------- two workers


async def two_workers(start_server: StartServer, **options: float) -> list[ServerHandle]:
    """Two workers (two RaceServer instances in this process) on one Redis."""
    return [await start_server("redis", **options), await start_server("redis", **options)]


async def race_starts(server: ServerHandle, room: str, race: int) -> int:
    """How many ``race_starting`` events of race ``race`` the room's stored events hold."""
    code = normalize_code(room)
    assert code is not None
    events = await server.app.store.rooms.events_since(code, 0)
    assert events is not None
    return sum(b'"type":"race_starting"' in e and b'"race":%d,' % race in e for e in events)


async def test_both_workers_time_the_offer_and_the_race_starts_once(
    start_server: StartServer,
) -> None:
    w0, w1 = await two_workers(start_server, rematch_wait=0.4)
    ann, bob = await w0.client(), await w1.client()
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    await bob.join(joined.room, name="Bob")
    await ann.start()
    await until_race_starts(bob)
    await ann.resign()
    await bob.resign()
    await bob.next_event("race_ended")
    await ann.rematch("same")
    offer = await offered(bob)
    code = normalize_code(joined.room)
    assert code is not None
    for worker in (w0, w1):  # each worker with the room times the offer itself
        await until(lambda w=worker: w.app.rematches.armed(code) == 2)  # type: ignore[misc]
    start = await ann.next_event("race_starting", timeout=3)  # Bob never answers
    while isinstance(start, RaceStarting) and start.race == 1:
        start = await ann.next_event("race_starting", timeout=3)
    assert isinstance(start, RaceStarting) and start.seats == [1]
    told = await bob.next_event("race_starting")
    assert isinstance(told, RaceStarting) and told.race == 2

    def timed_everywhere() -> bool:
        # each worker's timer has fired (or the start disarmed it) and its update is done
        timing = f"rematch deadline {code}"
        return all(w.app.rematches.armed(code) is None for w in (w0, w1)) and not any(
            t.get_name() == timing for t in asyncio.all_tasks()
        )

    await until(timed_everywhere)
    assert not [m for m in bob.drain() if m.type == "race_starting"]
    assert await race_starts(w0, joined.room, 2) == 1
    snap = await w1.app.store.rooms.snapshot(code)
    assert snap is not None and snap.room.race == 2 and snap.room.offer is None
    assert offer.deadline <= start.now


async def test_the_last_answer_and_both_deadlines_at_once_start_it_once(
    start_server: StartServer,
) -> None:
    """The store decides: the last answer (on one worker) and the deadline (on both) come
    together, in a room after another; each offered race starts exactly once."""
    w0, w1 = await two_workers(start_server, rematch_wait=60)
    for round_ in range(4):
        ann, bob = await w0.client(), await w1.client()
        joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
        await bob.join(joined.room, name="Bob")
        code = normalize_code(joined.room)
        assert code is not None
        await ann.start()
        await until_race_starts(bob)
        await ann.resign()
        await bob.resign()
        await bob.next_event("race_ended")
        await ann.rematch("same")
        offer = await offered(bob)
        snap = await w1.app.store.rooms.snapshot(code)
        seat = snap.room.seat(2) if snap is not None else None
        assert seat is not None and seat.conn is not None
        # the deadline as if it had come (a minute is long for a test)
        results = await asyncio.gather(
            w0.app.store.rooms.update(code, OfferDeadline(2, offer.deadline)),
            w1.app.store.rooms.update(
                code, AnswerRematch(2, seat.conn, 2, round_ % 2 == 0, offer.now)
            ),
            w1.app.store.rooms.update(code, OfferDeadline(2, offer.deadline)),
            return_exceptions=True,
        )
        started = [r[1] for r in results if isinstance(r, tuple)]
        assert started.count(True) == 1, results
        # an answer that came after the start was refused, nothing else went wrong
        refused = [r for r in results if not isinstance(r, tuple)]
        assert all(isinstance(r, Refusal) and r.error_code == "no_offer" for r in refused)
        assert await race_starts(w0, joined.room, 2) == 1


async def test_after_leaving_a_room_the_connection_hears_the_next_one(
    server: ServerHandle,
) -> None:
    # the old room's seq numbers ran higher than the new room's first ones
    ann, _bob = await after_a_race(server, ("Ann", "Bob"))
    await ann.leave()
    await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    await ann.start()
    start = await ann.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.race == 1
