"""Fair play: nobody racing or watching is told the deal code before the race ends.

The deal code tells every face-down card and the stock order (``samedeal deal CODE``), so
the server withholds it from every frame a racer or a spectator receives until the race is
over — except from the player who typed it, and from a player who has finished (in their
own ``player_finished``).
"""

from __future__ import annotations

from helpers import until_server_clock
from server_fixtures import ServerHandle

from clients.client import RaceClient
from engine import new_game
from protocol import PlayerFinished, RaceEnded, RaceStarting, RematchOffered

CODE = "KL1-1-AAAAAAB"


def told(client: RaceClient, deal: str) -> list[str | bytes]:
    """The frames ``client`` received that contain ``deal``."""
    assert client.frames is not None
    return [f for f in client.frames if deal in (f if isinstance(f, str) else f.decode())]


async def recording(server: ServerHandle) -> RaceClient:
    client = await server.client()
    client.frames = []
    return client


async def test_nobody_racing_or_watching_is_told_the_deal(server: ServerHandle) -> None:
    ann, bob, watcher = await recording(server), await recording(server), await recording(server)
    joined = await ann.create("klondike", name="Ann", deal="random")
    await bob.join(joined.room, name="Bob")
    await watcher.join(joined.room, role="spectator")
    deal = await server.deal(joined.room)
    await ann.start()
    start = await bob.next_event("race_starting")
    assert isinstance(start, RaceStarting) and start.deal is None
    assert start.view == new_game(deal).player_view()  # the starting board instead
    # the key is there, null, as documented (not left out)
    (frame,) = [f for f in bob.frames or [] if '"race_starting"' in str(f)]
    assert '"deal":null' in str(frame) and "typed_by" not in str(frame)
    await until_server_clock(start.start_at, start.now)
    await watcher.follow(2)
    for client in (ann, bob):
        for text in ("s", "s", "s"):
            await client.move(text)
    await watcher.next_event("board")
    # a late spectator and a resumed player are not told it either
    late = await recording(server)
    snap = (await late.join(joined.room, role="spectator")).snapshot
    assert snap is not None and snap.deal is None
    bob2 = await bob.reconnect()
    bob2.frames = []
    # Bob gives up: he is told the deal in his own player_finished; Ann races on
    await bob2.resign()
    mine = await bob2.next_event("player_finished")
    assert isinstance(mine, PlayerFinished) and mine.deal == deal
    theirs = await watcher.next_event("player_finished")
    assert isinstance(theirs, PlayerFinished) and theirs.deal is None
    for client in (ann, bob, watcher, late):
        assert not told(client, deal), client.frames
    # the race ends: everybody is told
    await ann.resign()
    for client in (ann, bob2, watcher, late):
        ended = await client.next_event("race_ended")
        assert isinstance(ended, RaceEnded) and ended.deal == deal
    after = await server.client()
    snap = (await after.join(joined.room, role="spectator")).snapshot
    assert snap is not None and snap.deal == deal
    # the same deal again: the racers are not told it before the end
    ann.frames, watcher.frames = [], []
    await ann.rematch("same")
    offer = await bob2.next_event("rematch_offered")
    assert isinstance(offer, RematchOffered) and offer.deal == "same"  # the kind, no code
    await bob2.rematch_reply(offer.race)
    again = await watcher.next_event("race_starting")
    assert isinstance(again, RaceStarting) and again.deal is None
    assert again.view == start.view
    assert not told(ann, deal) and not told(watcher, deal)


async def test_the_player_who_typed_the_code_is_told_it(server: ServerHandle) -> None:
    ann, bob, watcher = await recording(server), await recording(server), await recording(server)
    joined = await ann.create("klondike", name="Ann", deal="code", code=CODE)
    assert joined.snapshot is not None and joined.snapshot.deal == CODE
    await bob.join(joined.room, name="Bob")
    await watcher.join(joined.room, role="spectator")
    await ann.start()
    for client in (ann, bob, watcher):
        start = await client.next_event("race_starting")
        assert isinstance(start, RaceStarting)
        assert start.deal == (CODE if client is ann else None)
    assert isinstance(start, RaceStarting)
    await until_server_clock(start.start_at, start.now)
    reply = await ann.move("s")
    assert "code" not in getattr(reply, "view", {})
    assert not told(bob, CODE) and not told(watcher, CODE)
    await ann.resign()
    await bob.resign()
    await watcher.next_event("race_ended")
