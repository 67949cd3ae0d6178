"""Races end to end: a real server on 127.0.0.1, real websockets, memory and Redis backends."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass
from typing import Any

import pytest
from helpers import until, until_server_clock
from server_fixtures import (
    DAILY_TEST_KEY,
    WINS,
    ServerHandle,
    StartServer,
)

from clients.client import RaceClient, RequestError
from engine import Game, new_game, replay
from protocol import (
    Ack,
    Board,
    PlayerFinished,
    Progress,
    RaceEnded,
    RaceStarting,
    Rejected,
    RematchOffered,
    ServerMessage,
)


def assert_no_hidden_cards(view: dict[str, object]) -> None:
    """A player view never lists a face-down card or the stock order."""
    assert isinstance(view["stock"], int)
    for col in view["tableau"]:  # type: ignore[attr-defined]
        assert isinstance(col["down"], int)


async def play_random(client: RaceClient, game: Game, count: int, seed: int = 1) -> list[str]:
    """Play ``count`` random legal actions (no undo); returns the acknowledged moves."""
    rng = random.Random(seed)
    played = []
    for _ in range(count):
        if game.won:
            break
        moves = [str(m) for m in game.legal_moves if str(m) not in ("u", "a")]
        if not moves:
            break
        text = rng.choice(moves)
        reply = await client.move(text)
        assert isinstance(reply, Ack), reply
        game.push(reply.move)
        # the ack's changes merged into the board give the player's view exactly, and every
        # pile in them lands in it whole: they show nothing the view does not
        assert client.view == game.player_view()
        assert_no_hidden_cards(client.view)
        played.append(reply.move)
    return played


async def room_with(
    server: ServerHandle, game: str = "klondike", players: int = 2, **options: object
) -> tuple[list[RaceClient], RaceClient]:
    """A room with ``players`` players (the first is the host) and a spectator."""
    host = await server.client()
    joined = await host.create(game, name="Ann", **options)
    clients = [host]
    for i in range(1, players):
        c = await server.client()
        await c.join(joined.room, name=f"P{i + 1}", key=host.key)
        clients.append(c)
    spectator = await server.client()
    await spectator.join(joined.room, role="spectator", key=host.key)
    return clients, spectator


@dataclass(frozen=True)
class Started:
    """A race begun by :func:`start`: its ``race_starting``, and its deal code (withheld
    from the racers: fair play), read from the server for the tests to play with."""

    event: RaceStarting
    deal: str


async def start(
    server: ServerHandle, clients: list[RaceClient], spectator: RaceClient | None = None
) -> Started:
    """The host starts; everyone gets the same start time and starting board; wait until
    the start has passed."""
    await clients[0].start()
    seen = []
    for c in [*clients, *([spectator] if spectator else [])]:
        event = await c.next_event("race_starting")
        assert isinstance(event, RaceStarting)
        seen.append(event)
    assert len({(e.start_at, e.race, repr(e.view)) for e in seen}) == 1
    deal = await server.deal(clients[0].room or "")
    assert seen[0].view == new_game(deal).player_view()
    await until_server_clock(seen[-1].start_at, seen[-1].now)
    return Started(seen[0], deal)


def events_of(messages: list[ServerMessage], kind: type) -> list:  # type: ignore[type-arg]
    return [m for m in messages if isinstance(m, kind)]


# --------------------------------------------------------------------- whole races


@pytest.mark.parametrize("game", ["klondike", "klondike-3", "easy-harp"])
async def test_full_race(server: ServerHandle, game: str) -> None:
    """Two players race to the end: one wins (Klondike) or both resign; the spectator
    sees every player's progress and the results; the ranking follows the rules."""
    code, solution = WINS.get(game, ("", ""))
    options: dict[str, Any] = {"deal": "code", "code": code} if code else {"deal": "random"}
    (ann, bob), watcher = await room_with(server, game, **options)
    race = await start(server, [ann, bob], watcher)
    bob_game = new_game(race.deal)
    bob_moves = await play_random(bob, bob_game, 15, seed=7)
    if solution:
        ann_game = new_game(race.deal)
        for text in solution.split():
            reply = await ann.move(text)
            assert isinstance(reply, Ack), reply
            ann_game.push(reply.move)
        assert ann_game.won and ann.view is not None and ann.view["won"]
    else:
        await play_random(ann, new_game(race.deal), 10, seed=3)
        await ann.resign()
    late = await bob.move("s")
    assert isinstance(late, Ack | Rejected)
    if isinstance(late, Ack):
        bob_game.push(late.move)
        bob_moves.append(late.move)
    await bob.resign()
    end = await watcher.next_event("race_ended")
    assert isinstance(end, RaceEnded)
    ranking = [(r.seat, r.status) for r in end.results]
    if solution:
        assert ranking[0] == (1, "won") and ranking[1] == (2, "resigned")
    assert {r.seat for r in end.results} == {1, 2}
    # the spectator saw both players' progress, and their finished move lists
    seen = list(watcher.history)
    progress_seats = {m.seat for m in events_of(seen, Progress)}
    assert progress_seats == {1, 2}
    finished = {m.seat: m for m in events_of(seen, PlayerFinished)}
    assert set(finished) == {1, 2}
    assert finished[2].move_list == " ".join(bob_moves)
    assert_no_hidden_cards(finished[2].board)
    assert replay(race.deal, finished[2].move_list.split()).player_view() == finished[2].board
    # results are kept: a late spectator sees them in the snapshot
    late_watcher = await server.client()
    joined = await late_watcher.join(ann.room or "", role="spectator")
    assert joined.snapshot is not None and joined.snapshot.phase == "ended"
    assert [r.seat for r in joined.snapshot.results or []] == [r.seat for r in end.results]


async def test_fair_play_player_never_sees_other_board(server: ServerHandle) -> None:
    """While racing, a player gets others' progress only: no player_finished, no board."""
    (ann, bob), watcher = await room_with(
        server, "klondike-3", deal="code", code=WINS["klondike-3"][0]
    )
    race = await start(server, [ann, bob], watcher)
    for text in WINS["klondike-3"][1].split():
        assert isinstance(await ann.move(text), Ack)
    finished = await watcher.next_event("player_finished")
    assert isinstance(finished, PlayerFinished)
    await play_random(bob, new_game(race.deal), 3)
    # Bob has been sent (or spared) every event up to Ann's finish and after
    await until(lambda: (bob.last_seq or 0) > finished.seq)
    bob_saw = list(bob.history)
    assert not events_of(bob_saw, PlayerFinished)
    assert not events_of(bob_saw, Board)
    assert any(isinstance(m, Progress) and m.seat == 1 and m.status == "won" for m in bob_saw)
    # the follow request is for spectators only
    with pytest.raises(RequestError) as info:
        await bob.follow(1)
    assert info.value.code == "not_spectator"
    await bob.resign()
    await bob.next_event("race_ended")


async def test_spectator_follows_a_board(server: ServerHandle) -> None:
    """A spectator following a player gets that player's board (face-up cards only)."""
    (ann, bob), watcher = await room_with(server)
    race = await start(server, [ann, bob], watcher)
    await watcher.follow(2)
    first = await watcher.next_event("board")
    assert isinstance(first, Board) and first.seat == 2
    game = new_game(race.deal)
    await play_random(bob, game, 5)
    await until(lambda: any(b.view == game.player_view() for b in boards(watcher)))
    for board in boards(watcher):
        assert_no_hidden_cards(board.view)


def boards(client: RaceClient) -> list[Board]:
    """The boards ``client`` was sent."""
    return [m for m in client.history if isinstance(m, Board)]


async def test_spectator_delay(start_server) -> None:  # type: ignore[no-untyped-def]
    """With a spectator delay, a board never shows a move sooner than that after the move:
    the board a spectator starts with is the one of the delay ago (tests/test_watching.py
    checks everything else a spectator gets)."""
    server = await start_server("memory")
    (ann,), watcher = await room_with(server, players=1, spectator_delay=1)
    await start(server, [ann], watcher)
    loop = asyncio.get_running_loop()
    assert isinstance(await ann.move("s"), Ack)
    acked = loop.time()
    await watcher.follow(1)
    first = await watcher.next_event("board", timeout=3)
    assert isinstance(first, Board) and first.view["moves"] == 0
    assert loop.time() - acked < 0.9  # at once: the board of a second ago
    while True:
        board = await watcher.next_event("board", timeout=3)
        assert isinstance(board, Board)
        if board.view["moves"] == 1:
            break
    assert loop.time() - acked >= 0.99


# --------------------------------------------------------------------- moves and acks


async def test_moves_rejected_before_start_after_finish_and_for_spectators(
    store_kind: str, start_server: StartServer
) -> None:
    # a countdown no loaded machine outlasts between the start and the next move
    server = await start_server(store_kind, countdown=1.0)
    (ann, bob), watcher = await room_with(server)
    reply = await ann.move("s")
    assert isinstance(reply, Rejected) and reply.rule == "no-race"
    await ann.start()
    starting = await ann.next_event("race_starting")
    reply = await bob.move("s")  # the countdown is still running
    assert isinstance(reply, Rejected) and reply.rule == "not-started"
    assert isinstance(starting, RaceStarting)
    await until_server_clock(starting.start_at, starting.now)
    reply = await bob.move("t9-t1")
    assert isinstance(reply, Rejected) and reply.rule == "notation"
    reply = await bob.move("zz")
    assert isinstance(reply, Rejected) and reply.rule == "notation"
    assert isinstance(await bob.move("s"), Ack)
    await bob.resign()
    reply = await bob.move("s")
    assert isinstance(reply, Rejected) and reply.rule == "finished"
    with pytest.raises(RequestError) as info:
        await watcher.move("s")
    assert info.value.code == "spectator"
    with pytest.raises(RequestError) as info:
        await bob.resign()
    assert info.value.code == "finished"


async def test_a_resign_in_the_countdown_is_taken_and_a_move_is_not(
    store_kind: str, start_server: StartServer
) -> None:
    # a page shows the board by its estimate of the server's clock: a resign sent as it
    # does may arrive an instant before the start, and giving up early is what leaving does
    server = await start_server(store_kind, countdown=5.0)
    (ann, bob), _ = await room_with(server)
    with pytest.raises(RequestError) as info:
        await bob.resign()  # no race yet
    assert info.value.code == "no_race"
    await ann.start()
    starting = await bob.next_event("race_starting")
    assert isinstance(starting, RaceStarting)
    await bob.resign()
    finished = await bob.next_event("player_finished")
    assert isinstance(finished, PlayerFinished)
    assert (finished.seat, finished.status, finished.elapsed_ms) == (bob.seat, "resigned", 0)
    reply = await ann.move("s")
    assert isinstance(reply, Rejected) and reply.rule == "not-started"  # still counting down
    with pytest.raises(RequestError) as info:
        await bob.resign()
    assert info.value.code == "finished"


async def test_illegal_move_names_the_rule(server: ServerHandle) -> None:
    (ann,), _ = await room_with(server, players=1)
    race = await start(server, [ann])
    game = new_game(race.deal)
    illegal = next(f"t{i}-f" for i in range(1, 8) if not game.is_legal(f"t{i}-f"))
    reply = await ann.move(illegal)
    assert isinstance(reply, Rejected)
    assert reply.rule not in ("notation", "") and reply.reminder
    assert ann.view == game.player_view()  # the starting board: nothing accepted yet


async def test_start_is_for_the_host(server: ServerHandle) -> None:
    (_ann, bob), _ = await room_with(server)
    with pytest.raises(RequestError) as info:
        await bob.start()
    assert info.value.code == "not_host"


# --------------------------------------------------------------------- reconnecting


async def test_resume_gets_exactly_the_missed_events(server: ServerHandle) -> None:
    (ann, bob), _ = await room_with(server)
    race = await start(server, [ann, bob])
    bob_game = new_game(race.deal)
    await play_random(bob, bob_game, 4)
    bob.drain()
    last = bob.last_seq  # whatever came after it, the resume is to send
    assert last is not None
    await bob.close()
    await play_random(ann, new_game(race.deal), 5, seed=5)
    bob2 = await bob.reconnect()
    assert bob2.view == bob_game.player_view()  # rebuilt from the stored log
    missed = []
    while True:
        m = await bob2.next_event(timeout=2)
        missed.append(m)
        if isinstance(m, Progress) and m.seat == 1 and m.moves == 5:
            break
    seqs = [m.seq for m in missed if hasattr(m, "seq")]
    assert seqs == list(range(last + 1, last + 1 + len(seqs)))  # nothing lost, no repeat
    assert any(getattr(m, "type", "") == "seat" and m.seat == 2 for m in missed)  # type: ignore[union-attr]
    await play_random(bob2, bob_game, 2, seed=9)  # and plays on
    await bob2.close()


async def test_resume_too_late_gets_a_resync(start_server, store_kind: str) -> None:  # type: ignore[no-untyped-def]
    # one progress event per move: ten moves overflow the five events kept
    server = await start_server(store_kind, event_cap=5, progress_interval=0)
    (ann, bob), _ = await room_with(server)
    race = await start(server, [ann, bob])
    last = bob.last_seq
    await bob.close()
    await play_random(ann, new_game(race.deal), 10)
    bob2 = await RaceClient.connect(server.url)
    await bob2.resume(bob.room or "", bob.token or "", last)
    resync = await bob2.next_event("resync")
    assert resync.snapshot.seq >= (last or 0) + 10  # type: ignore[union-attr]
    await bob2.close()


async def test_second_connection_replaces_the_first(server: ServerHandle) -> None:
    (_ann, bob), _ = await room_with(server)
    bob2 = await bob.reconnect()
    await until(lambda: bob.closed)
    assert bob.websocket.close_code == 4000
    assert bob2.seat == 2
    await bob2.close()


async def test_grace_period_then_seat_released(server: ServerHandle) -> None:
    (_ann, bob), watcher = await room_with(server)
    await bob.close()
    event = await watcher.next_event("seat")
    assert event.seat == 2 and not event.connected and not event.left  # type: ignore[union-attr]
    event = await watcher.next_event("seat", timeout=3)
    assert event.seat == 2 and event.left  # type: ignore[union-attr]
    stale = await RaceClient.connect(server.url)
    with pytest.raises(RequestError) as info:
        await stale.resume(bob.room or "", bob.token or "")
    assert info.value.code == "bad_token"
    await stale.close()


async def test_a_disconnected_racer_is_out_as_left_after_grace(server: ServerHandle) -> None:
    (ann, bob), watcher = await room_with(server)
    await start(server, [ann, bob], watcher)
    await bob.close()
    event = await watcher.next_event("progress")
    assert event.seat == 2 and event.status == "disconnected"  # type: ignore[union-attr]
    done = await watcher.next_event("player_finished", timeout=3)
    assert done.seat == 2 and done.status == "left"  # type: ignore[union-attr]


async def test_host_leaving_passes_the_host(server: ServerHandle) -> None:
    (ann, bob), watcher = await room_with(server)
    await ann.close()
    for _ in range(4):
        event = await watcher.next_event("seat", timeout=3)
        if event.seat == 2 and event.host:  # type: ignore[union-attr]
            break
    else:
        raise AssertionError("host not passed")
    await bob.start()


# --------------------------------------------------------------------- limits and rematch


async def test_time_limit_ends_the_race(server: ServerHandle) -> None:
    (ann, bob), watcher = await room_with(server, time_limit=1)
    race = await start(server, [ann, bob], watcher)
    assert race.event.deadline == race.event.start_at + 1000
    await play_random(ann, new_game(race.deal), 3)
    end = await watcher.next_event("race_ended", timeout=4)
    assert isinstance(end, RaceEnded)
    assert [r.status for r in end.results] == ["timeout", "timeout"]
    keys = [(-r.on_foundations, -r.score, r.moves, r.seat) for r in end.results]
    assert keys == sorted(keys)
    reply = await bob.move("s")
    assert isinstance(reply, Rejected) and reply.rule in ("finished", "time-up")


async def test_rematch_same_and_new_deal(server: ServerHandle) -> None:
    (ann, bob), watcher = await room_with(server)
    first = await start(server, [ann, bob], watcher)
    with pytest.raises(RequestError):
        await ann.rematch()  # the race is still running
    await ann.resign()
    await bob.resign()
    await watcher.next_event("race_ended")
    with pytest.raises(RequestError) as info:
        await bob.rematch()
    assert info.value.code == "not_host"
    await ann.rematch("same")
    offer = await bob.next_event("rematch_offered")
    assert isinstance(offer, RematchOffered)
    assert (offer.race, offer.deal, offer.by) == (2, "same", 1)
    await bob.rematch_reply(offer.race)
    second = await watcher.next_event("race_starting")
    assert isinstance(second, RaceStarting)
    assert second.race == 2 and second.deal is None and second.view == first.event.view
    await until_server_clock(second.start_at, second.now)
    assert isinstance(await bob.move("s"), Ack)
    await ann.resign()
    await bob.resign()
    await watcher.next_event("race_ended")
    await ann.rematch("random")
    await bob.next_event("rematch_offered")
    await bob.rematch_reply(3)
    third = await watcher.next_event("race_starting")
    assert isinstance(third, RaceStarting)
    assert third.race == 3 and await server.deal(ann.room or "") != first.deal
    await until_server_clock(third.start_at, third.now)
    reply = await bob.move("s")
    assert isinstance(reply, Ack) and reply.changes["moves"] == 1
    assert bob.view is not None and bob.view["moves"] == 1


async def test_deal_choices(start_server: StartServer, store_kind: str, on_day: Any) -> None:
    # a known key on a known day: the day's proof costs the same every run
    on_day("2026-04-16")
    server = await start_server(store_kind, daily_key=DAILY_TEST_KEY)
    c = await server.client()
    joined = await c.create("easy-harp", deal="daily")
    assert joined.snapshot is not None and joined.snapshot.deal is None  # fair play
    assert (await server.deal(joined.room)).startswith("EH1-N-")
    d = await server.client()
    daily = await d.create("easy-harp", deal="daily")
    assert await server.deal(daily.room) == await server.deal(joined.room)
    for bad in (
        {"deal": "same"},
        {"deal": "code", "code": "KL1-1-AAAAAAF"},
        {"deal": "code", "code": "nonsense"},
        {"deal": "code"},
    ):
        e = await server.client()
        with pytest.raises(RequestError) as info:
            await e.create("easy-harp", **bad)
        assert info.value.code == "bad_deal"
    with pytest.raises(RequestError) as info:
        await (await server.client()).create("klondike-3", deal="daily")
    assert info.value.code == "no_daily"  # draw three has no deal of the day


async def test_room_code_link_and_names(server: ServerHandle) -> None:
    host = await server.client()
    joined = await host.create("klondike", name="  \x1b[31mAnn\u202e\n" + "x" * 40)
    assert len(joined.room) == 7 and joined.room[4] == "-"
    assert joined.link.endswith("/r/" + joined.room)
    assert joined.token is not None and len(joined.token) >= 22  # ≥ 128 bits
    assert joined.snapshot is not None
    name = joined.snapshot.seats[0].name
    assert name.startswith("[31mAnn") and len(name) <= 24
    assert all(ch.isprintable() for ch in name)
    guest = await server.client()
    typed = joined.room.lower().replace("-", " ")
    assert (await guest.join(typed, name="")).seat == 2


async def test_private_room_needs_the_key(server: ServerHandle) -> None:
    host = await server.client()
    joined = await host.create("klondike", private=True)
    assert joined.key and f"key={joined.key}" in joined.link
    guest = await server.client()
    with pytest.raises(RequestError) as info:
        await guest.join(joined.room)
    assert info.value.code == "unknown_room"
    assert (await guest.join(joined.room, key=joined.key)).seat == 2


async def test_full_room_and_running_race(server: ServerHandle) -> None:
    (ann, _bob), _ = await room_with(server, max_players=2)
    third = await server.client()
    with pytest.raises(RequestError) as info:
        await third.join(ann.room or "")
    assert info.value.code == "room_full"
    ann_only, _ = await room_with(server, players=1)
    await start(server, ann_only)
    with pytest.raises(RequestError) as info:
        await third.join(ann_only[0].room or "")
    assert info.value.code == "race_running"
    assert (await third.join(ann_only[0].room or "", role="spectator")).role == "spectator"


async def test_no_spectators_option(server: ServerHandle) -> None:
    host = await server.client()
    joined = await host.create("klondike", spectators=False)
    other = await server.client()
    with pytest.raises(RequestError) as info:
        await other.join(joined.room, role="spectator")
    assert info.value.code == "no_spectators"
