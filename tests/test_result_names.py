"""Issue 18, item 3: a player who left before the race ended keeps their name in the
results (seen in the terminal client as "Player 2").

The progress states written during a race carry no name, so once the seat was gone the
results fell back to "Player N"; the room now keeps the racers' names as the race started
(``RoomState.racer_names``). The clients keep the names they saw too; this test asks the
server itself.
"""

from __future__ import annotations

from helpers import until_race_starts
from server_fixtures import live_server

from clients.client import RaceClient
from protocol import RaceEnded, SeatEvent

DEAL = "KL1-1-AAAAAAM"


async def test_a_player_who_left_keeps_their_name_in_the_results() -> None:
    async with live_server(countdown=0.1, grace=0.2) as server:
        host = await RaceClient.connect(server.url)
        joined = await host.create("klondike", name="Ann", deal="code", code=DEAL)
        bob = await RaceClient.connect(server.url)
        await bob.join(joined.room, name="Bob")
        await host.start()
        await until_race_starts(bob)
        await bob.move("s")
        await bob.resign()
        await bob.close()  # Bob leaves; his seat is released after the grace period
        released = await host.next_event("seat")
        while not (isinstance(released, SeatEvent) and released.seat == 2 and released.left):
            released = await host.next_event("seat")
        await host.resign()
        ended = await host.next_event("race_ended")
        assert isinstance(ended, RaceEnded)
        names = {row.seat: row.name for row in ended.results}
        await host.close()
        assert names[2] == "Bob"
