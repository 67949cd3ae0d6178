"""Winnable-only random deals in casual rooms (issue 31, item 16): ``create`` with
``winnable`` proves the room's random deal — and a random rematch's — with the solver, in
the solver process, before the race starts; the deals are told at each race's end, and the
solver here proves each winnable. No unproven deal is ever played instead: when none can be
proven, the request is refused and nothing changes. A rematch's ``code`` counts only for
kind ``code``: a "random" deal is never one the host chose."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from helpers import until_race_starts
from server_fixtures import LiveServer, live_server

from clients.client import RaceClient, RequestError
from engine.daily import random_winnable
from engine.fair import TOURNAMENT_CANDIDATES, TOURNAMENT_NODES
from engine.solver import solve
from protocol import PlayerFinished, RaceEnded
from server.proving.deals import ProvenDeals
from server.proving.process import Prover
from server.rooms.deals import RandomDeals

in_module = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.2) as live:
        yield live


def proven(code: str) -> bool:
    game = {"EH1-N": "easy-harp", "KL1-1": "klondike", "KL1-3": "klondike-3"}[code[:5]]
    result = solve(code, nodes=TOURNAMENT_NODES[game])
    return result.verdict == "winnable"


@pytest.mark.slow  # full budgets: seconds of solving for some deals
@pytest.mark.parametrize("game", ["klondike", "klondike-3", "easy-harp"])
def test_the_rooms_budget_proves_a_sealed_deal_of_each_game(game: str) -> None:
    """The budget a winnable room's deal is drawn with (a winnable tournament round's)
    proves a sealed deal of every game."""
    rng = random.Random(31)  # seeded: the same deals, and the same time, every run
    nodes, attempts = TOURNAMENT_NODES[game], TOURNAMENT_CANDIDATES[game]
    code, result = random_winnable(game, nodes=nodes, attempts=attempts, rng=rng)
    assert code.sealed and result.verdict == "winnable" and result.solution


async def ended(client: RaceClient) -> RaceEnded:
    await client.next_event("race_starting")
    await client.resign()
    end = await client.next_event("race_ended")
    assert isinstance(end, RaceEnded) and end.deal is not None
    return end


@in_module
async def test_a_winnable_room_proves_its_deals(server: LiveServer) -> None:
    async with await RaceClient.connect(server.url) as ann:
        joined = await ann.create("klondike", name="Ann", winnable=True, solo=True)
        assert joined.snapshot is not None and joined.snapshot.options.winnable
        first = await ended(ann)
        assert proven(first.deal or "")
        await ann.rematch("random")
        second = await ended(ann)
        assert second.deal != first.deal and proven(second.deal or "")


@in_module
async def test_a_random_rematch_ignores_a_code(server: LiveServer) -> None:
    async with await RaceClient.connect(server.url) as ann:
        await ann.create("klondike", name="Ann", deal="code", code="KL1-1-AAAAAAK", solo=True)
        await ended(ann)
        await ann.request({"type": "rematch", "deal": "random", "code": "KL1-1-AAAAAAM"})
        assert (await ended(ann)).deal != "KL1-1-AAAAAAM"


async def test_no_unproven_deal_is_played_instead() -> None:
    """When no deal can be proven within the budget (here one node, two tries: none ever
    is), a winnable-only request is refused with ``no_winnable_deal`` and nothing changes:
    no room is made, and a solo game's new deal asked mid-race leaves its race going."""
    async with (
        live_server(countdown=0.2) as live,
        await RaceClient.connect(live.url) as ann,
        await RaceClient.connect(live.url) as bob,
    ):
        await ann.create("klondike", name="Ann", winnable=True, solo=True)
        start = await until_race_starts(ann)  # its deal proven with the rooms' budget
        # a pool whose budget proves nothing: it stays empty, so each request is proven
        # on demand, and refused
        starved = ProvenDeals(live.app.ctx.tasks, Prover(), size=4, nodes=1, tries=2)
        live.app.races.deals = RandomDeals(starved)
        made = live.app.ctx.metrics.rooms_created_total
        with pytest.raises(RequestError) as refused:
            await bob.create("klondike", name="Bob", winnable=True)
        assert refused.value.code == "no_winnable_deal" and refused.value.message
        assert live.app.ctx.metrics.rooms_created_total == made
        await bob.create("klondike", name="Bob")  # in no room: the refused one was not made
        with pytest.raises(RequestError) as mid_race:
            await ann.rematch("random")
        assert mid_race.value.code == "no_winnable_deal"
        await ann.resign()  # still racing: the refused new deal resigned nothing
        finished = await ann.next_event("player_finished")
        assert isinstance(finished, PlayerFinished)
        assert (finished.race, finished.status) == (start.race, "resigned")
        assert starved.ready("klondike") == 0 and starved.counts["klondike"].proven == 0
        starved.close()
