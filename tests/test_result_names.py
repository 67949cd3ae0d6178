"""Issue 18, item 3: a player who left before the race ended keeps their name in the
results (seen in the terminal client as "Player 2").

The cause is on the server: every progress state ``server/app.py`` writes during a race
(``_progress_state`` and the coalesced progress in ``_flush``) is built without the seat's
``name``, so once the seat is gone ``room.check_race_end`` falls back to "Player N". The
clients keep the names they saw as a stopgap; this test asks the server itself.
"""

from __future__ import annotations

import asyncio

import pytest
from server_fixtures import live_server

from clients.client import RaceClient

DEAL = "KL1-1-AAAAAAM"


@pytest.mark.xfail(
    strict=True,
    reason="server: progress states written by server/app.py carry no name (see docstring)",
)
async def test_a_player_who_left_keeps_their_name_in_the_results() -> None:
    async with live_server(countdown=0.1, grace=0.2) as server:
        host = await RaceClient.connect(server.url)
        joined = await host.create("klondike", name="Ann", deal="code", code=DEAL)
        bob = await RaceClient.connect(server.url)
        await bob.join(joined.room, name="Bob")
        await host.start()
        await bob.next_event("race_starting")
        await asyncio.sleep(0.15)  # the countdown
        await bob.move("s")
        await bob.resign()
        await bob.close()  # Bob leaves; his seat is released after the grace period
        await asyncio.sleep(0.6)
        await host.resign()
        ended = await host.next_event("race_ended")
        names = {row.seat: row.name for row in ended.results}
        await host.close()
        assert names[2] == "Bob"
