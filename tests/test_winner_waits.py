"""The winner does not wait (issue 31, item 9), over the wire: a player who has finished
may follow the boards of those still racing, as a spectator does; no board is ever sent to a
player while they race — not even one who followed before their next race began — and a
racer still may not follow."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from server_fixtures import LiveServer, live_server

from clients.client import RaceClient, RequestError
from protocol import Board, RaceStarting

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.2) as live:
        yield live


async def started(client: RaceClient) -> None:
    """Wait for the next race to start, its countdown included."""
    start = await client.next_event("race_starting")
    assert isinstance(start, RaceStarting)
    await asyncio.sleep(max(0, start.start_at - start.now) / 1000)


async def board(client: RaceClient, moves: int) -> Board:
    """The next board of seat 2 showing ``moves`` moves."""
    while True:
        found = await client.next_event("board")
        assert isinstance(found, Board) and found.seat == 2
        if found.view["moves"] == moves:
            return found


async def test_a_finished_player_watches_the_others_until_they_race_again(
    server: LiveServer,
) -> None:
    async with (
        await RaceClient.connect(server.url) as ann,
        await RaceClient.connect(server.url) as bob,
        await RaceClient.connect(server.url) as sam,
    ):
        joined = await ann.create("klondike", name="Ann", deal="code", code="KL1-1-AAAAAAM")
        await bob.join(joined.room, name="Bob")
        await sam.join(joined.room, role="spectator")
        await ann.start()
        await bob.next_event("race_starting")
        await started(ann)
        with pytest.raises(RequestError) as racing:
            await ann.follow(2)
        assert racing.value.code == "not_spectator"
        await ann.resign()
        await ann.follow(2)  # finished: Bob's board, as a spectator sees it
        await board(ann, 0)
        assert (await bob.move("s")).type == "ack"
        await board(ann, 1)
        await bob.resign()
        await ann.next_event("race_ended")
        await ann.rematch("same")
        await bob.next_event("rematch_offered")
        await bob.rematch_reply(2, accept=True)
        await sam.follow(2)
        await started(ann)
        ann.drain()
        assert (await bob.move("s")).type == "ack"
        await board(sam, 1)  # the spectator is shown the move: a board went out
        assert not [m for m in ann.drain() if isinstance(m, Board)]  # to Ann, racing: none
