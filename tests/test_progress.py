"""Coalesced ``progress``: quick moves show as fewer events carrying the latest state; a
status change goes out at once."""

from __future__ import annotations

import asyncio

from server_fixtures import ServerHandle
from test_server import room_with, start

from protocol import Ack, PlayerFinished, Progress


async def test_quick_moves_show_as_fewer_progress_events(server: ServerHandle) -> None:
    (ann, bob), watcher = await room_with(server)
    await start(server, [ann, bob], watcher)
    for _ in range(12):
        assert isinstance(await ann.move("s"), Ack)
    seen: list[Progress] = []
    while not seen or seen[-1].moves < 12:
        event = await watcher.next_event("progress", timeout=2)
        assert isinstance(event, Progress) and event.seat == 1
        seen.append(event)
    # the first move shows at once, the rest as the latest state, a few times a second
    assert seen[0].moves == 1 and seen[-1].moves == 12
    assert len(seen) < 12
    assert [e.seq for e in seen] == sorted(e.seq for e in seen)
    assert [e.moves for e in seen] == sorted(e.moves for e in seen)


async def test_a_status_change_is_not_held_back(server: ServerHandle) -> None:
    (ann, bob), watcher = await room_with(server)
    await start(server, [ann, bob], watcher)
    for _ in range(3):
        assert isinstance(await ann.move("s"), Ack)
    await ann.resign()
    # the resignation arrives before the held progress would have (0.2 s)
    while True:
        event = await watcher.next_event("progress", "player_finished", timeout=0.15)
        if isinstance(event, Progress) and event.status == "resigned":
            break
    assert event.moves == 3
    done = await watcher.next_event("player_finished", timeout=1)
    assert isinstance(done, PlayerFinished) and done.status == "resigned"
    # the held progress of the third move is not sent after the final state (the scenario:
    # past the progress interval, when it would have gone out)
    await asyncio.sleep(0.3)
    assert all(
        not (isinstance(m, Progress) and m.seat == 1 and m.status == "playing")
        for m in watcher.drain()
    )


async def test_a_player_who_leaves_is_shown_with_every_move(server: ServerHandle) -> None:
    """The progress of quick moves is held back (and stored with its event); a player who
    drops mid-flurry is shown disconnected with all their moves, and a spectator who joins
    then sees the same in the room's snapshot."""
    (ann, bob), watcher = await room_with(server)
    await start(server, [ann, bob], watcher)
    for _ in range(7):
        assert isinstance(await ann.move("s"), Ack)
    await ann.close()  # within the progress interval of the last moves
    while True:
        event = await watcher.next_event("progress", timeout=2)
        if isinstance(event, Progress) and event.status == "disconnected":
            break
    assert event.seat == 1 and event.moves == 7
    late = await server.client()
    joined = await late.join(ann.room or "", role="spectator")
    assert joined.snapshot is not None
    assert [s.moves for s in joined.snapshot.seats if s.seat == 1] == [7]
    await late.close()


async def test_a_steady_player_is_shown_a_few_times_a_second_and_when_they_stop(
    server: ServerHandle,
) -> None:
    """Moves every 40 ms for a second: the room sees the player about five times (the move
    after each interval carries the latest state), then their last state soon after they
    stop (the outbox timer)."""
    (ann, bob), watcher = await room_with(server)
    await start(server, [ann, bob], watcher)
    loop = asyncio.get_running_loop()
    for _ in range(25):
        assert isinstance(await ann.move("s"), Ack)
        await asyncio.sleep(0.04)  # the scenario: a steady player's pace
    stopped = loop.time()
    seen: list[Progress] = []
    while not seen or seen[-1].moves < 25:
        event = await watcher.next_event("progress", timeout=2)
        assert isinstance(event, Progress) and event.seat == 1
        seen.append(event)
    assert loop.time() - stopped < 1.0
    assert 3 <= len(seen) <= 10, [e.moves for e in seen]
    assert [e.moves for e in seen] == sorted({e.moves for e in seen})
