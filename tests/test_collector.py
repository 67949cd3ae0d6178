"""The worker's collector tuning (server/collector.py): survivors leave the collector's sight,
a sweep reclaims what died frozen, and serving makes nothing that would need one."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import subprocess
import sys
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import until

from server.collector import Collector

ROOT = Path(__file__).resolve().parent.parent


class Node:
    """Something the collector tracks, that can be in a cycle and be watched."""

    def __init__(self) -> None:
        self.other: Node | None = None


def tracked(obj: object) -> bool:
    """Whether the collector would walk ``obj`` (frozen objects are not in get_objects)."""
    return any(o is obj for o in gc.get_objects())


@pytest.fixture
def collector() -> Iterator[Collector]:
    collector = Collector()
    collector.install()
    try:
        yield collector
    finally:
        collector.uninstall()


@pytest.mark.parametrize("generation", [0, 1, 2])
def test_survivors_of_a_collection_leave_the_collectors_sight(
    collector: Collector, generation: int
) -> None:
    young = Node()
    assert tracked(young)
    gc.collect(generation)
    assert not tracked(young)
    after = Node()
    assert tracked(after)  # what comes later is walked as usual


def test_a_sweep_reclaims_a_cycle_that_died_frozen(collector: Collector) -> None:
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    gc.collect(1)
    del a, b
    gc.collect()  # a full collection does not walk frozen objects
    assert gone() is not None
    assert collector.sweep() >= 2
    assert gone() is None


def test_young_garbage_is_collected_before_anything_is_frozen(collector: Collector) -> None:
    a, b = Node(), Node()
    a.other, b.other = b, a
    gone = weakref.ref(a)
    del a, b
    gc.collect(1)
    assert gone() is None


async def test_the_worker_collects_its_young_generation_itself(collector: Collector) -> None:
    # Python's own collections are off: only the worker's timer collects here
    collector.young_every = 0.005
    gc.disable()
    try:
        kept = Node()
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        sweeping = asyncio.create_task(collector.sweeping())
        # the young cycle is collected: a collection is due every 5 ms
        await until(lambda: gone() is None, 2, every=0.005)
        assert not tracked(kept)  # and what survived it frozen
        sweeping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeping
        a, b = Node(), Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
        # the scenario: ten of the collector's periods go by, in which a timer left behind
        # would have collected the cycle
        await asyncio.sleep(0.05)
        assert gone() is not None
    finally:
        gc.enable()


def test_uninstall_gives_everything_back() -> None:
    collector = Collector()
    collector.install()
    node = Node()
    gc.collect(1)
    assert gc.get_freeze_count() > 0
    collector.uninstall()
    assert gc.get_freeze_count() == 0
    assert tracked(node)


# Races played end to end (create, join, spectate, start, moves, resigns, the end, every
# connection closed) on a worker set up as `samedeal serve` sets itself up: uvloop and the
# collector installed. What a collection froze and later died in a cycle is what
# only a sweep would reclaim: none of it may be a connection, a room, a game or anything
# else of ours or of the libraries serving them. (An exception in flight when a collection
# froze it, with its traceback's frames, may be: a timer's timeout, a script loaded on its
# first call — the sweep's, and rare.)
SCENARIO = """
import asyncio, gc, json, sys
import uvloop
sys.path.insert(0, "tests")
from helpers import until, until_race_starts
from clients.client import RaceClient
from protocol import Ack
from server.app import running
from server.collector import Collector
from server.config import Config


async def race(url):
    host = await RaceClient.connect(url)
    joined = await host.create("klondike", name="Ann")
    other = await RaceClient.connect(url)
    await other.join(joined.room, name="Bo", key=host.key)
    spectators = [await RaceClient.connect(url) for _ in range(3)]
    for s in spectators:
        await s.join(joined.room, role="spectator", key=host.key)
    await host.start()
    await until_race_starts(host)
    for _ in range(5):
        for c in (host, other):
            assert isinstance(await c.move("s"), Ack)
    await other.resign()
    await host.resign()
    await host.next_event("race_ended")
    for c in (other, *spectators, host):
        await c.close()


async def main(redis):
    if redis:
        from server.store.redis import redis_store
        store = redis_store(redis)
    else:
        from server.store.memory import memory_store
        store = memory_store()
    collector = Collector()
    collector.install()
    # a collection (and a freeze) every 50 allocations, a middle one every other: the most
    # chances for an object in flight, that dies in a cycle later, to be frozen
    gc.set_threshold(50, 1, 10)
    async with running(store, Config(port=0, countdown=0.05, grace=0.2)) as (app, _):
        url = f"ws://127.0.0.1:{app.port}/ws"

        def connection_tasks():
            # the connections' own tasks, at both ends (the clients run on this loop too)
            return [
                t for t in asyncio.all_tasks()
                if "websockets" in t.get_coro().cr_code.co_filename
                or t.get_coro().__qualname__.startswith("RaceClient.")
            ]

        async def idle():
            # every connection of the races closed at both ends, and its tasks ended
            await until(lambda: not app.ctx.rooms.conns and not connection_tasks())

        await race(url)  # what is made once, lazily (caches, scripts loaded), made here
        await idle()
        gc.collect(1)
        collector.sweep()
        for _ in range(3):
            await race(url)
        await idle()
        gc.collect(1)
        # the sweep, with what it found kept to be named
        gc.unfreeze()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        names = [
            f"{type(o).__module__}.{type(o).__qualname__}"
            for o in gc.garbage
            if not issubclass(type(o), BaseException)
        ]
        print(json.dumps(names))

uvloop.run(main(sys.argv[1] if len(sys.argv) > 1 else ""))
"""


OURS = ("server.", "clients.", "protocol.", "engine.", "websockets.", "redis.", "uvloop.")


def _frozen_garbage(*args: str) -> list[str]:
    """The types of what the races left frozen in cycles, of our code and its libraries."""
    done = subprocess.run(
        [sys.executable, "-c", SCENARIO, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    names: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return [name for name in names if name.startswith(OURS)]


@pytest.mark.integration
def test_serving_leaves_no_cycle_for_a_sweep_memory() -> None:
    assert _frozen_garbage() == []


@pytest.mark.integration
def test_serving_leaves_no_cycle_for_a_sweep_redis(redis_url: str) -> None:
    assert _frozen_garbage(redis_url) == []
