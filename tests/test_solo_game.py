"""A game in one tap (issue 31, item 14), over the wire: ``create`` with ``solo`` starts the
race at once with no countdown; the host deals again mid-race (``rematch``: the same deal
restarted, a new deal), the race so far resigned and kept; a friend joins by the room's
link while a race runs and races from the next deal, counted down as any race; a room
that is not a solo game refuses both as before."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from server_fixtures import LiveServer, get_json, live_server

from clients.client import RaceClient, RequestError
from protocol import Joined, PlayerFinished, RaceEnded, RaceStarting, RematchOffered

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEAL = "KL1-1-AAAAAAM"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.5) as live:
        yield live


async def started(client: RaceClient) -> RaceStarting:
    start = await client.next_event("race_starting")
    assert isinstance(start, RaceStarting)
    return start


async def test_a_solo_game_starts_at_once_and_deals_again_mid_race(server: LiveServer) -> None:
    async with await RaceClient.connect(server.url) as ann:
        joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL, solo=True)
        assert isinstance(joined, Joined) and joined.snapshot is not None
        assert joined.snapshot.solo
        first = await started(ann)
        assert first.start_at <= first.now  # no countdown
        assert first.seats == [1] and first.view is not None
        assert (await ann.move("t3-f")).type == "ack"  # playable at once

        await ann.rematch("same")  # "Same deal": a restart mid-race
        finished = await ann.next_event("player_finished")
        assert isinstance(finished, PlayerFinished)
        assert (finished.status, finished.move_list) == ("resigned", "t3-f1")
        ended = await ann.next_event("race_ended")
        assert isinstance(ended, RaceEnded) and ended.race == 1
        again = await started(ann)
        assert again.race == 2 and again.start_at <= again.now
        assert again.view == first.view  # the same deal, from its start
        assert (await ann.move("t3-f")).type == "ack"

        await ann.rematch("random")  # "New deal", mid-race too
        fresh = await started(ann)
        assert fresh.race == 3 and fresh.start_at <= fresh.now


async def test_a_friend_joins_mid_race_and_races_the_next_deal(server: LiveServer) -> None:
    async with (
        await RaceClient.connect(server.url) as ann,
        await RaceClient.connect(server.url) as bob,
    ):
        joined = await ann.create("easy-harp", name="Ann", solo=True)
        await started(ann)
        status, summary = await get_json(server.port, f"/api/rooms/{joined.room}")
        assert status == 200 and summary["solo"] and summary["phase"] == "running"
        seat = await bob.join(joined.room, name="Bob")  # by the link, while Ann plays
        assert seat.seat == 2 and seat.snapshot is not None and seat.snapshot.phase == "running"
        assert (await bob.move("s")).type == "rejected"  # not in this race: the next one
        await ann.rematch("same")
        offered = await bob.next_event("rematch_offered")
        assert isinstance(offered, RematchOffered) and offered.race == 2
        await bob.rematch_reply(2, accept=True)
        race = await started(bob)
        assert race.seats == [1, 2]
        assert race.start_at - race.now >= 400  # a race with someone: counted down


async def test_a_room_that_is_not_a_solo_game_is_unchanged(server: LiveServer) -> None:
    async with (
        await RaceClient.connect(server.url) as ann,
        await RaceClient.connect(server.url) as bob,
    ):
        joined = await ann.create("klondike", name="Ann")
        assert joined.snapshot is not None and not joined.snapshot.solo
        await ann.start()
        await started(ann)
        with pytest.raises(RequestError) as refused:
            await bob.join(joined.room, name="Bob")
        assert refused.value.code == "race_running"
        with pytest.raises(RequestError) as mid_race:
            await ann.rematch("same")
        assert mid_race.value.code == "race_running"
