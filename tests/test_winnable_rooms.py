"""Winnable-only random deals in casual rooms (issue 31, item 16): ``create`` with
``winnable`` proves the room's random deal — and a random rematch's — with the solver, in
the solver process, before the race starts; the deals are told at each race's end, and the
solver here proves each winnable. A rematch's ``code`` counts only for kind ``code``: a
"random" deal is never one the host chose."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from server_fixtures import LiveServer, live_server

from clients.client import RaceClient
from engine.fair import TOURNAMENT_NODES
from engine.solver import solve
from protocol import RaceEnded
from server.rooms.deals import winnable_random

in_module = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.2) as live:
        yield live


def proven(code: str) -> bool:
    game = {"EH1-N": "easy-harp", "KL1-1": "klondike", "KL1-3": "klondike-3"}[code[:5]]
    result = solve(code, nodes=TOURNAMENT_NODES[game])
    return result.verdict == "winnable"


@pytest.mark.parametrize("game", ["klondike", "klondike-3", "easy-harp"])
def test_a_winnable_random_deal_is_proven(game: str) -> None:
    code, ok = winnable_random(game, TOURNAMENT_NODES[game], 16)
    assert ok and proven(code)


def test_with_no_budget_nothing_is_proven_and_it_says_so() -> None:
    code, ok = winnable_random("klondike", 1, 3)
    assert not ok and code.startswith("KL1-1-")


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
