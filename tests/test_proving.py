"""The worker's pool of proven deals (issue 34, item 3): one solver process, niced and
memory-bounded, proving sealed deals ahead of need into one pool per game that winnable-only
rooms and quick play both take from. Real processes, a real solver, a real server."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from helpers import until
from server_fixtures import LiveServer, fetch, live_server

from clients.client import RaceClient
from engine import replay
from engine.fair import TOURNAMENT_NODES
from engine.solver import solve
from protocol import RaceEnded
from server.proving.deals import ProvenDeals
from server.proving.process import MB, Prover
from server.tasks import Tasks

pytestmark = pytest.mark.asyncio(loop_scope="module")

_HOARD: list[bytes] = []


def hoard(mb: int) -> int:
    """In the solver's process: keep ``mb`` MB written to (resident) until it ends."""
    _HOARD.append(b"\x01" * (mb * MB))
    return sum(len(b) for b in _HOARD)


def priority() -> int:
    """In the solver's process: its niceness."""
    return os.getpriority(os.PRIO_PROCESS, 0)


async def test_the_prover_replaces_its_process_once_it_grows_past_its_bound() -> None:
    prover = Prover(rss_limit=200 * MB, memory=400 * MB)
    try:
        first = await prover.run(os.getpid)
        assert await prover.run(priority) == 19  # the lowest priority: moves come first
        assert 0 < prover.rss < prover.rss_limit and prover.restarts == 0
        assert await prover.run(os.getpid) == first  # small jobs: the same process
        await prover.run(hoard, 250)  # resident past 200 MB after the job
        assert prover.restarts == 1 and prover.rss == 0
        second = await prover.run(os.getpid)
        assert second != first and 0 < prover.rss < prover.rss_limit
    finally:
        prover.close()


async def test_a_search_past_the_data_bound_fails_and_the_next_runs_in_a_new_process() -> None:
    """The data bound holds a pool's job (the searches that need more are those left
    undecided anyway), not a day's or a round's proof."""
    prover = Prover(rss_limit=100 * MB, memory=200 * MB)
    try:
        first = await prover.run(os.getpid)
        with pytest.raises(MemoryError):
            await prover.run(hoard, 300)  # more than the process may hold: refused at once
        assert prover.restarts == 1
        assert await prover.run(os.getpid) != first
        assert await prover.run(hoard, 20) == 20 * MB  # a search within the bound runs
        # a proof whose answer must not depend on memory (a day's) runs unbounded, and the
        # process is replaced after it
        restarts = prover.restarts
        assert await prover.run(hoard, 280, bounded=False) >= 280 * MB
        assert prover.restarts == restarts + 1
    finally:
        prover.close()


async def test_urgent_jobs_run_before_jobs_done_ahead() -> None:
    prover = Prover()
    done: list[str] = []

    async def job(name: str, *, urgent: bool) -> None:
        await prover.run(os.getpid, urgent=urgent)
        done.append(name)

    try:
        await prover.run(os.getpid)  # started
        jobs = [
            asyncio.create_task(job("ahead 1", urgent=False)),
            asyncio.create_task(job("ahead 2", urgent=False)),
            asyncio.create_task(job("ahead 3", urgent=False)),
            asyncio.create_task(job("urgent", urgent=True)),
        ]
        await asyncio.gather(*jobs)
        # the first job asked runs at once; the urgent one is next, before the others asked
        # before it
        assert done == ["ahead 1", "urgent", "ahead 2", "ahead 3"]
    finally:
        prover.close()


async def test_a_deal_dealt_to_quick_play_is_never_taken_by_a_room_nor_dealt_twice() -> None:
    tasks = Tasks()
    pool = ProvenDeals(tasks, Prover(), size=2, nodes=TOURNAMENT_NODES["klondike"])
    try:
        pool.warm(["klondike"])
        await until(lambda: pool.ready("klondike") == 2, 120)
        shared = await pool.deal_for("klondike", ["ann", "bob"])
        assert pool.ready("klondike") == 1  # dealt to someone: no longer ready
        assert await pool.deal_for("klondike", ["cid"]) == shared  # shared by races
        other = await pool.deal_for("klondike", ["ann"])  # never twice to Ann
        assert other != shared
        await until(lambda: pool.ready("klondike") == 2, 120)  # refilled
        taken = {await pool.take("klondike"), await pool.take("klondike")}
        assert shared not in taken and other not in taken  # a room takes undealt deals only
        assert not pool.deal_again(next(iter(taken)), ["dan"], dry_run=True)  # gone for good
        assert pool.counts["klondike"].proven >= 4
    finally:
        pool.close()
        await tasks.close()


async def test_a_ready_deal_stays_however_long_and_a_dealt_one_leaves_after_its_lifetime() -> None:
    """A deal dealt to nobody is as new as when it was proven; one raced for ``lifetime``
    seconds leaves the pool (here at once: a lifetime of 0)."""
    tasks = Tasks()
    pool = ProvenDeals(tasks, Prover(), size=1, lifetime=0.0)
    try:
        pool.warm(["klondike"])
        await until(lambda: pool.ready("klondike") == 1, 120)
        assert pool.ready("klondike") == 1  # asked again: still there
        dealt = await pool.deal_for("klondike", ["ann"])
        assert not pool.deal_again(dealt, ["bob"], dry_run=True)  # left once dealt
    finally:
        pool.close()
        await tasks.close()


async def test_a_pool_of_size_0_proves_on_need_only() -> None:
    """With no deal kept ahead (``--proven-deals 0``), quick play's and a room's deals are
    still proven, when asked for."""
    tasks = Tasks()
    pool = ProvenDeals(tasks, Prover(), size=0, nodes=TOURNAMENT_NODES["klondike"])
    try:
        first = await pool.deal_for("klondike", ["ann"])
        assert await pool.deal_for("klondike", ["bob"]) == first  # shared, as always
        assert await pool.deal_for("klondike", ["ann"]) != first
        assert await pool.take("klondike") not in (first, None)
        assert pool.ready("klondike") <= 1  # at most one proven past a waiter's need
    finally:
        pool.close()
        await tasks.close()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server() -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.2, proven_deals=2) as live:
        yield live


def sample(text: str, name: str, game: str | None = None) -> int:
    labels = r'\{worker="[^"]*"' + (f',game="{game}"' if game else "") + r"\}"
    found = re.search(rf"^samedeal_{name}{labels} (\d+)$", text, re.M)
    assert found is not None, name
    return int(found.group(1))


async def test_a_winnable_room_takes_a_proven_deal_from_the_pool_which_refills(
    server: LiveServer,
) -> None:
    deals = server.app.proving.deals
    deals.warm(["klondike"])
    await until(lambda: deals.ready("klondike") == 2, 120)
    ready = {p.code for p in deals._deals["klondike"]}
    proven = deals.counts["klondike"].proven
    async with await RaceClient.connect(server.url) as ann:
        await ann.create("klondike", name="Ann", winnable=True, solo=True)
        assert deals.ready("klondike") == 1  # taken from the pool, not proven for the room
        await ann.next_event("race_starting")
        await ann.resign()
        end = await ann.next_event("race_ended")
    assert isinstance(end, RaceEnded) and end.deal in ready
    result = solve(end.deal, nodes=TOURNAMENT_NODES["klondike"])
    assert result.verdict == "winnable" and result.solution
    assert replay(end.deal, result.solution).won
    await until(lambda: deals.ready("klondike") == 2, 120)  # the filler proved another
    assert deals.counts["klondike"].proven > proven and end.deal not in deals._by_code


async def test_metrics_show_the_pool_and_the_solver_process(server: LiveServer) -> None:
    deals = server.app.proving.deals
    deals.warm(["klondike"])
    await until(lambda: deals.ready("klondike") == 2, 120)
    status, _, body = await fetch(server.app.port or 0, "/metrics")
    text = body.decode()
    assert status == 200
    assert sample(text, "proven_deals_ready", "klondike") == 2
    assert sample(text, "proven_deals_total", "klondike") >= 2
    assert sample(text, "proven_deals_given_up_total", "klondike") >= 0
    rss = sample(text, "prover_rss_bytes")
    assert 0 < rss <= server.app.config.prover_rss
    assert "# TYPE samedeal_proven_deals_ready gauge" in text


def solver_processes() -> set[int]:
    """This process's live children that are multiprocessing workers (solver processes)."""
    found = set()
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/children") as f:
            for pid in map(int, f.read().split()):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as cmd:
                        if b"spawn_main" in cmd.read() and alive(pid):
                            found.add(pid)
                except OSError:
                    pass
    return found


def alive(pid: int) -> bool:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


async def test_the_days_and_the_rooms_are_proven_in_the_one_solver_process(
    server: LiveServer,
) -> None:
    """The pool, a winnable room and the deal of the day: one solver process, niced."""
    app = server.app
    app.proving.warm(["klondike"])
    daily = await app.daily.deal_of("klondike", app.daily.today())
    assert daily.verified
    async with await RaceClient.connect(server.url) as ann:
        await ann.create("klondike", name="Ann", winnable=True, solo=True)
    pid = app.proving.prover.pid
    assert pid is not None and solver_processes() == {pid}
    assert os.getpriority(os.PRIO_PROCESS, pid) == 19  # the lowest: moves always come first
