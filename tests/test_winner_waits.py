"""The winner does not wait (issue 31, item 9), over the wire: a player who has finished
may follow the boards of those still racing, as a spectator does; no board is ever sent to a
player while they race — not even one who followed before their next race began — and a
racer still may not follow."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from helpers import until_race_starts
from server_fixtures import LiveServer, live_server

from clients.client import RaceClient, RequestError
from protocol import Board

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.2) as live:
        yield live


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
        await until_race_starts(ann)
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
        await until_race_starts(ann)
        ann.drain()
        assert (await bob.move("s")).type == "ack"
        await board(sam, 1)  # the spectator is shown the move: a board went out
        assert not [m for m in ann.drain() if isinstance(m, Board)]  # to Ann, racing: none


async def test_a_player_not_racing_follows_by_the_board_rule(server: LiveServer) -> None:
    """A player who may follow is still shown boards only as the board rule says
    (``boards_shown``, issue 29): in a room whose host shows spectators progress only, a
    racer who finished follows the others, while a player sitting the race out is a
    spectator to the rule and is refused (``boards_hidden``)."""
    async with (
        await RaceClient.connect(server.url) as ann,
        await RaceClient.connect(server.url) as bob,
        await RaceClient.connect(server.url) as cy,
    ):
        joined = await ann.create(
            "klondike", name="Ann", deal="code", code="KL1-1-AAAAAAM", spectator_boards=False
        )
        await bob.join(joined.room, name="Bob")
        await cy.join(joined.room, name="Cy")
        await ann.start()
        await bob.next_event("race_starting")
        await until_race_starts(ann)
        await ann.resign()
        await ann.follow(2)  # finished: the rule shows a racer who finished the boards
        await board(ann, 0)
        await cy.resign()
        await bob.resign()
        await ann.next_event("race_ended")
        await ann.rematch("same")
        await bob.next_event("rematch_offered")
        await cy.next_event("rematch_offered")
        await bob.rematch_reply(2, accept=True)
        await cy.rematch_reply(2, accept=False)
        await until_race_starts(ann)
        with pytest.raises(RequestError) as sitting_out:
            await cy.follow(2)
        assert sitting_out.value.code == "boards_hidden"
