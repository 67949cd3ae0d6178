"""Sealed deals and fair watching through real servers (issue 29).

* What a racer is sent of a deal the server chose — the opening board of a random room, of
  the deal of the day, of a tournament round — is dealt against all 999,999 numbered deals
  (``tests/deal_finder.py``): no numbered deal has it (a rare numbered deal that shows the
  same face-up cards is another deal). The same search finds the deal of a room made on a
  typed numbered code, so the test can fail.
* Who may see a board, across two workers on one Redis: a tournament round shows no board to
  an identity entered in it (on a second connection, on the other worker), nor — without a
  host's delay — to anyone before the round is over; with a delay, other spectators follow
  the boards that late. A round over before its deadline (everyone done, or the host's
  ``end_early``) shows every board and its deal from then, on every worker, to the entered
  too (with a delay, that late); every connection in its rooms is told (``boards_open``)
  and may follow at once — spectators who came by the room's link, who get no
  ``round_ended``, included. Nobody is told ``round_ended`` before the boards of every room
  of the round are open: a round of three rooms, a spectator of each on each worker who
  follows the moment they are told. A worker that missed the round's end (its
  ``secret_ends`` dropped) finds it in the store when a spectator follows, lets them
  through and tells its connections then. Today's deal shows no board to a guest, nor to a
  player who has not finished their own attempt. Refusals are error replies: the
  connection and any seat stay.
* The live directory lists such races, saying their boards are not shown.
* The secret stays secret: no room is made on today's deal or on a running round's deal
  (refused as any code the server will not play), and no log line names a sealed code.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from deal_finder import find_numbered
from helpers import until
from server_fixtures import DAILY_TEST_KEY, ServerHandle, StartServer, get_json

from clients.client import RaceClient, RequestError
from engine import DealCode, new_game
from engine.fair import secret_daily
from protocol import (
    Ack,
    Board,
    BoardsOpen,
    PlayerFinished,
    RaceStarting,
    TournamentEvent,
    TournamentSeat,
)
from server.rooms.local import Event, LocalRoom

DAY = "2026-04-16"
TYPED = "KL1-1-AAAAAAM"


async def records_servers(
    start_server: StartServer, tmp_path: Path, kind: str = "redis", count: int = 2, **options: Any
) -> list[ServerHandle]:
    """``count`` workers on one store and one records database (identities, the day's
    attempts), with short tournament countdowns."""
    url = f"sqlite:///{tmp_path / 'records.db'}"
    return [
        await start_server(
            kind,
            records_url=url,
            daily_key=DAILY_TEST_KEY,
            tournament_countdown=0.2,
            tournament_lease=1.0,
            **options,
        )
        for _ in range(count)
    ]


async def player(server: ServerHandle, name: str) -> tuple[RaceClient, Any]:
    client = await server.client()
    return client, await client.new_player(name)


async def as_player(server: ServerHandle, made: Any) -> RaceClient:
    """A second connection of the identity ``made`` (another tab, another device)."""
    client = await server.client()
    await client.identify(made.player, made.secret or "")
    return client


async def next_of(client: RaceClient, model: type[Any], timeout: float = 10.0) -> Any:
    async def wait() -> Any:
        async for message in client.events():
            if isinstance(message, model):
                return message
        raise ConnectionError("closed")

    return await asyncio.wait_for(wait(), timeout)


async def first_move(client: RaceClient) -> None:
    """A racer's first move (draw from the stock), once the countdown is over."""

    async def accepted() -> bool:  # refused during the countdown
        return isinstance(await client.move("s"), Ack)

    await until(accepted)


async def started(client: RaceClient) -> RaceStarting:
    """The racer's ``race_starting``, and their first move once its countdown is over."""
    start = await client.next_event("race_starting")
    assert isinstance(start, RaceStarting)
    await first_move(client)
    return start


def tops(view: dict[str, Any] | None) -> list[str]:
    """The face-up card of each column of a board a racer is sent."""
    assert view is not None
    return [column["up"][-1] for column in view["tableau"]]


def assert_not_numbered(code: str, view: dict[str, Any] | None) -> None:
    """No numbered deal is ``code``'s deal, though some may show the same face-up cards."""
    deal = DealCode.parse(code)
    assert deal.sealed, code
    layout = new_game(deal).position()
    for number in find_numbered(deal.game_name, tops(view)):
        assert new_game(DealCode.for_game(deal.game_name, number)).position() != layout


async def refused_boards(spectator: RaceClient, seat: int = 1) -> None:
    """``follow`` is refused with ``boards_hidden``, and the connection goes on."""
    with pytest.raises(RequestError) as info:
        await spectator.request({"type": "follow", "seats": [seat]})
    assert info.value.code == "boards_hidden" and info.value.message
    await spectator.ping()


async def round_seats(
    host: RaceClient, players: list[RaceClient], **settings: Any
) -> tuple[str, list[TournamentSeat]]:
    """A one-round Klondike tournament on a deal its server draws (sealed), entered by
    ``players`` and started: its id and each player's seat, taken."""
    made = await host.tournament_create(
        name="Sealed cup", game="klondike", rounds=1, round_start="manual", deals="any", **settings
    )
    tid = made.page.id
    for i, p in enumerate(players):
        await p.tournament_join(tid, name=f"P{i}")
    await host.tournament_host(tid, "start")
    seats = [await next_of(p, TournamentSeat) for p in players]
    for p, seat in zip(players, seats, strict=True):
        await p.take_seat(seat)
    return tid, seats


async def follows(spectator: RaceClient, seat: int) -> bool:
    """Whether ``follow`` of ``seat`` is accepted now: not yet while its boards are hidden,
    nor — with a delay — before the room shown that late races."""
    try:
        await spectator.request({"type": "follow", "seats": [seat]})
    except RequestError as exc:
        assert exc.code in ("boards_hidden", "unknown_seat"), exc
        return False
    return True


async def told_open(spectator: RaceClient, seat: int) -> Board:
    """``spectator`` is told the room's boards opened (``boards_open``) and, following
    ``seat`` then — once, not waited on — is shown its board."""
    opened = await next_of(spectator, BoardsOpen)
    assert opened.room == spectator.room
    assert await follows(spectator, seat), "refused after boards_open"
    board: Board = await next_of(spectator, Board)
    assert board.seat == seat and board.view["tableau"]
    return board


async def shown_board(spectator: RaceClient, seat: int) -> Board:
    """``seat``'s board, once ``spectator`` may follow it (waited on: the round's end)."""
    await until(lambda: follows(spectator, seat), timeout=10)
    board: Board = await next_of(spectator, Board)
    assert board.seat == seat and board.view["tableau"]
    return board


# ---------------------------------------------------------------------- sealed deals


@pytest.mark.slow
async def test_no_deal_the_server_chose_is_found_from_its_opening_board(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    on_day(DAY)
    (server,) = await records_servers(start_server, tmp_path, "memory", count=1)
    ann, _ = await player(server, "Ann")

    # a random room
    joined = await ann.create("klondike", deal="random")
    await ann.start()
    start = await started(ann)
    assert start.deal is None
    assert_not_numbered(await server.deal(joined.room), start.view)
    await ann.leave()

    # the deal of the day
    joined = await ann.create("klondike", deal="daily")
    await ann.start()
    start = await started(ann)
    day = await server.deal(joined.room)
    assert day == str(secret_daily(DAILY_TEST_KEY, "klondike", DAY).code)
    assert_not_numbered(day, start.view)
    await ann.leave()

    # a tournament round: its racer's board as they take their seat
    host, _ = await player(server, "Host")
    bob, _ = await player(server, "Bob")
    _, (seat,) = await round_seats(host, [bob])
    assert_not_numbered(await server.deal(seat.room), bob.view)  # as its seat was taken

    # a typed numbered code: the same search finds it from the same kind of board
    await ann.create("klondike", deal="code", code=TYPED)
    await ann.start()
    start = await started(ann)
    assert DealCode.parse(TYPED).number in find_numbered("klondike", tops(start.view))


# ---------------------------------------------------------------------- fair watching


async def test_a_round_shows_no_board_before_it_ends_and_every_board_once_it_ends_early(
    start_server: StartServer, tmp_path: Path
) -> None:
    w1, w2 = await records_servers(start_server, tmp_path)
    host, _ = await player(w1, "Host")
    ann, ann_id = await player(w1, "Ann")
    bob, _ = await player(w2, "Bob")
    _, seats = await round_seats(host, [ann, bob])
    room, bob_seat = seats[0].room, seats[1].seat
    # Ann's second connection on the other worker, as Ann; another identity of hers; a
    # guest on each worker (one of them learns of the round's end from the other worker)
    again = await as_player(w2, ann_id)
    other, _ = await player(w2, "Zed")
    spectators = (again, other, await w2.client(), await w1.client())
    for spectator in spectators:
        spectator.frames = []
        await spectator.join(room, role="spectator")
        await refused_boards(spectator)
    # the racers race on: progress is shown, no board (not a finish's either)
    await first_move(ann)
    await ann.resign()
    for spectator in spectators:
        finished = await next_of(spectator, PlayerFinished)
        assert finished.board is None and finished.move_list is None
        assert not [f for f in spectator.frames or [] if isinstance(f, Board)]
        await refused_boards(spectator, bob_seat)  # Ann is done, her round is not
    # nothing of it cost a racer their seat: Bob still plays
    await first_move(bob)
    # Bob is done too: the round is over, ten minutes before its deadline, and its boards
    # are everyone's, Ann's included. The spectators came by the room's link (they did
    # not open the tournament: no round_ended), and each worker tells its own
    await bob.resign()
    for spectator in spectators:
        await told_open(spectator, bob_seat)
    assert await again.ping() < seats[0].deadline
    # and its deal is told, as after a deadline, to a spectator who comes now
    code = await w1.deal(room)
    for server in (w1, w2):
        joined = await (await server.client()).join(room, role="spectator")
        assert joined.snapshot is not None and joined.snapshot.deal == code


async def test_with_a_hosts_delay_only_the_entered_are_refused(
    start_server: StartServer, tmp_path: Path
) -> None:
    w1, w2 = await records_servers(start_server, tmp_path)
    host, _ = await player(w1, "Host")
    ann, ann_id = await player(w1, "Ann")
    bob, _ = await player(w1, "Bob")
    _, seats = await round_seats(host, [ann, bob], spectator_delay=1)
    room = seats[0].room
    again = await as_player(w2, ann_id)
    await again.join(room, role="spectator")
    await refused_boards(again)
    other, _ = await player(w2, "Zed")
    await other.join(room, role="spectator")
    # followed once the room they are shown, a second late, races
    await until(lambda: follows(other, seats[1].seat), timeout=10)
    await first_move(bob)  # a move of Bob's: the follower sees his board a second later
    board = await next_of(other, Board, timeout=10)
    assert board.seat == seats[1].seat and board.view["tableau"]


@pytest.mark.parametrize("delay", [0, 1])
async def test_a_round_the_host_ends_early_shows_its_boards_then(
    start_server: StartServer, tmp_path: Path, delay: int
) -> None:
    """With a host's delay, the boards are shown that late after the early end, as after a
    deadline; so is the deal, to a spectator shown the race's end."""
    (server,) = await records_servers(start_server, tmp_path, "memory", count=1)
    host, _ = await player(server, "Host")
    ann, ann_id = await player(server, "Ann")
    bob, _ = await player(server, "Bob")
    tid, seats = await round_seats(host, [ann, bob], spectator_delay=delay)
    room, bob_seat = seats[0].room, seats[1].seat
    again = await as_player(server, ann_id)
    guest = await server.client()
    for spectator in (again, guest):
        await spectator.join(room, role="spectator")
    await first_move(ann)
    await first_move(bob)
    await refused_boards(again, bob_seat)  # entered: never while the round runs
    if not delay:
        await refused_boards(guest, bob_seat)
    # the host ends the tournament mid-round: its races are stopped, the round is over;
    # the room's connections are told (with a delay, that late)
    await host.tournament_host(tid, "end_early")
    await told_open(again, bob_seat)
    assert await again.ping() < seats[0].deadline
    code = await server.deal(room)

    async def told() -> bool:  # the room's deal, to a spectator who comes now
        joined = await (await server.client()).join(room, role="spectator")
        return joined.snapshot is not None and joined.snapshot.deal == code

    await until(told, timeout=10)


async def test_nobody_is_told_a_round_ended_before_its_rooms_boards_are_open(
    start_server: StartServer, tmp_path: Path
) -> None:
    """A round of several rooms on two workers: a spectator of each room on each worker,
    with the tournament open, sends ``follow`` the moment ``round_ended`` comes, and is let
    through — every room's secret ended before the round's end was told."""
    w1, w2 = await records_servers(start_server, tmp_path, identity_limit=100)
    host, _ = await player(w1, "Host")
    # more than a room holds (16): the round is played in several rooms
    racers = [(await player((w1, w2)[i % 2], f"R{i}"))[0] for i in range(33)]
    tid, seats = await round_seats(host, racers)
    rooms = sorted({seat.room for seat in seats})
    assert len(rooms) == 3
    first_seat = {room: min(s.seat for s in seats if s.room == room) for room in rooms}
    watchers = []
    for room in rooms:
        for server in (w1, w2):
            watcher = await server.client()
            await watcher.tournament_open(tid)
            await watcher.join(room, role="spectator")
            await refused_boards(watcher, first_seat[room])
            watchers.append(watcher)

    async def done(racer: RaceClient) -> None:
        await first_move(racer)
        await racer.resign()

    async def follows_when_told(watcher: RaceClient) -> None:
        async def told() -> None:
            async for message in watcher.events():
                if isinstance(message, TournamentEvent) and message.kind == "round_ended":
                    return
            raise ConnectionError("closed")

        await asyncio.wait_for(told(), 30)
        assert watcher.room is not None
        assert await follows(watcher, first_seat[watcher.room]), "refused after round_ended"

    waiting = [asyncio.ensure_future(follows_when_told(w)) for w in watchers]
    await asyncio.gather(*(done(racer) for racer in racers))
    await asyncio.gather(*waiting)


def missing_secret_ends(server: ServerHandle, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """``server``'s worker misses every ``secret_ends`` control message from now on (as
    while its subscription to the room is being restored: control messages are not stored);
    the messages it missed."""
    rooms = server.app.ctx.rooms
    control = rooms._control
    missed: list[Any] = []

    def dropping(local: LocalRoom, message: Event) -> None:
        if message.get("ctl") == "secret_ends":
            missed.append(message)
        else:
            control(local, message)

    monkeypatch.setattr(rooms, "_control", dropping)
    return missed


async def test_a_worker_that_missed_the_rounds_end_lets_its_spectators_follow_once_it_is_over(
    start_server: StartServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker not told that a round ended early still refuses its boards while the round
    runs — the store says so too, to the follow that reads it — and lets a spectator follow
    once the round is over: the follow finds its end in the store. The worker's other
    connections in the room are told then (``boards_open``), as the message would have."""
    w1, w2 = await records_servers(start_server, tmp_path)
    missed = missing_secret_ends(w2, monkeypatch)
    host, _ = await player(w1, "Host")
    ann, ann_id = await player(w1, "Ann")
    bob, _ = await player(w1, "Bob")
    _, seats = await round_seats(host, [ann, bob])
    room, bob_seat = seats[0].room, seats[1].seat
    again = await as_player(w2, ann_id)  # entered: Ann's second connection, on w2
    guest, other, told = await w2.client(), await w2.client(), await w1.client()
    for spectator in (again, guest, other, told):
        await spectator.join(room, role="spectator")
        await refused_boards(spectator)
    await first_move(ann)
    await ann.resign()
    await first_move(bob)
    # Ann is done, the round is not: the store says secret, and w2 refuses as before
    await refused_boards(guest, bob_seat)
    await refused_boards(again, bob_seat)
    await bob.resign()  # the round is over, before its deadline
    await told_open(told, bob_seat)  # w1 is told
    await until(lambda: missed)  # w2 is not
    # a guest on w2 follows once, and is let through
    assert await follows(guest, bob_seat), "refused though the round is over"
    board = await next_of(guest, Board)
    assert board.seat == bob_seat and board.view["tableau"]
    # and w2's other connections in the room are told, Ann's own included
    for spectator in (other, again):
        await told_open(spectator, bob_seat)
    assert len(missed) == 1


async def test_todays_deal_shows_no_board_to_who_has_not_played_it(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    on_day(DAY)
    w1, w2 = await records_servers(start_server, tmp_path)
    ann, ann_id = await player(w1, "Ann")
    joined = await ann.create("klondike", deal="daily")
    again = await as_player(w2, ann_id)  # her attempt is under way, not over
    other, _ = await player(w2, "Zed")
    guest = await w2.client()
    for spectator in (again, other, guest):
        spectator.frames = []
        await spectator.join(joined.room, role="spectator")
    await ann.start()
    await started(ann)
    for spectator in (again, other, guest):
        seen = await next_of(spectator, RaceStarting)
        assert seen.view is None and seen.deal is None  # the opening cards are a board
        await refused_boards(spectator)
        await spectator.next_event("progress")  # progress is for everyone
    # a guest cannot play it either, on either worker
    for server in (w1, w2):
        with pytest.raises(RequestError) as info:
            await (await server.client()).create("klondike", deal="daily")
        assert info.value.code == "daily_needs_player"


async def test_the_live_directory_lists_secret_races_without_boards(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    on_day(DAY)
    (server,) = await records_servers(start_server, tmp_path, "memory", count=1)
    ann, _ = await player(server, "Ann")
    daily = await ann.create("klondike", deal="daily")
    await ann.start()
    bob, _ = await player(server, "Bob")
    shown = await bob.create("klondike", deal="code", code=TYPED)
    await bob.start()
    cat, _ = await player(server, "Cat")
    hidden = await cat.create("klondike", deal="code", code=TYPED, spectator_boards=False)
    await cat.start()
    host, _ = await player(server, "Host")
    dan, _ = await player(server, "Dan")
    _, (seat,) = await round_seats(host, [dan])
    expected = {
        daily.room: "progress",
        shown.room: "live",
        hidden.room: "progress",
        seat.room: "progress",
    }

    async def listed() -> dict[str, str] | None:
        _, body = await get_json(server.port, "/api/live?game=klondike")
        found = {r["room"]: r["boards"] for r in body["rooms"]}
        return found if expected.keys() <= found.keys() else None

    found = await until(listed, timeout=10)
    assert found is not None
    assert {room: found[room] for room in expected} == expected


# ---------------------------------------------------------------------- secrets elsewhere


async def test_no_room_on_a_secret_deal_and_no_sealed_code_in_the_logs(
    start_server: StartServer, tmp_path: Path, on_day: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    on_day(DAY)
    (server,) = await records_servers(start_server, tmp_path, "memory", count=1)
    host, _ = await player(server, "Host")
    dan, _ = await player(server, "Dan")
    _, (seat,) = await round_seats(host, [dan])
    round_deal = await server.deal(seat.room)
    today = str(secret_daily(DAILY_TEST_KEY, "klondike", DAY).code)
    ann, _ = await player(server, "Ann")
    joined = await ann.create("klondike", deal="random")
    await ann.start()
    await started(ann)
    random_deal = await server.deal(joined.room)
    await ann.leave()
    messages = set()
    for secret in (today, round_deal, f"  {today.lower()} "):
        with pytest.raises(RequestError) as info:
            await ann.create("klondike", deal="code", code=secret)
        assert info.value.code == "bad_deal"
        messages.add(info.value.message)
    assert len(messages) == 1  # one sentence, whatever the reason
    # a malformed sealed code is bad input too, saying what is wrong; the connection stays
    for bad in (today[:-1], today + "A", today[:-1] + "1", today[:-1] + "É"):
        with pytest.raises(RequestError) as info:
            await ann.create("klondike", deal="code", code=bad)
        assert info.value.code == "bad_deal"
        assert "or 26 (a sealed deal)" in info.value.message
    await ann.ping()
    # a sealed code nobody is playing in secret is played (a person typed it)
    made = await ann.create("klondike", deal="code", code=random_deal)
    assert made.room
    lines = "\n".join(r.getMessage() for r in caplog.records)
    for secret in (today, round_deal, random_deal):
        assert secret not in lines
