"""A serving worker's cyclic garbage collector: pauses that do not grow with its connections.

Python's collector walks, in a full collection, every object it tracks; a connection keeps
about 90 of them, so at 10,000 connections a full collection stopped the event loop for
0.6–0.7 s of CPU (bench/capacity.py). Rarer collections (a young generation of 10,000
allocations instead of 700) made those rarer but every young one long: a collection of the
middle generation then walked some 100,000 objects, 55–220 ms of CPU. Here, whatever has
survived a collection is moved out of the collector's sight at once (``gc.freeze``, a
constant-time list splice): the collection just showed it reachable. Each object is walked
once, while young, then never again, however many connections the worker holds.

A young collection can still be long: Python counts a young generation's size as
allocations less deallocations *of any age*, so while many frozen objects die (a thousand
players' pending reads replaced every move) the young list grows past its 700 before it is
collected (tens of thousands of objects, 10–20 ms, in bench/capacity.py's probe; 10–35 ms
in bench/watch.py's, where every worker replaces thousands of directory entries a second).
Freezing after every collection keeps such a list from being walked a second time in the
middle generation (35–70 ms with a freeze after middle collections only); and the worker
collects its young generation itself every ``YOUNG_EVERY`` as well, so the list holds at
most that long's survivors whatever the count says. Each object is still walked once: the
collections are more, each shorter, for about the same work.

Its CPU: under bench/race.py's paced load (1,000 players, steady) the collector takes
3–4 % of the worker's CPU, with the timer (some 400 young collections in 10 s, 0.2 ms
each) as without it (15, 5–9 ms each), and as much with Python's own tuning or with a
freeze after middle collections only; a young generation of 10,000 with these freezes
(no timer) takes it to 0.4–1.6 %, but its longest collections at bench/capacity.py's 11,000
connections then take 43–70 ms (move p99 18–55 ms against 15–17 ms).
docs/benchmarks/history.md, Race server, "Session 10".

What this costs otherwise: an object moved out of sight that later dies *in a reference
cycle* is not reclaimed until the next sweep (one full collection of everything,
``SWEEP_EVERY``). Nothing on the serving path makes such cycles with uvloop (the loop
``samedeal serve`` runs): tests/test_collector.py plays races on memory and one Redis,
collecting every 50 allocations, and finds none. One known source is outside it: on a Redis
Cluster, a read of the slot map again (after a connection error or a failover) drops
redis-py connections that are cycles (a few dozen objects each time). The sweep logs what
it found, so a leak would show; it is one pause of the old kind an hour.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import time
from typing import Any

__all__ = ["SWEEP_EVERY", "YOUNG_EVERY", "Collector"]

logger = logging.getLogger("samedeal.collector")

SWEEP_EVERY = 3600.0
"""Seconds between full collections of everything, frozen objects included."""
YOUNG_EVERY = 0.025
"""Seconds between the worker's own collections of the young generation (besides Python's,
by its count): a young collection walks what was made since the last one and survives."""


class Collector:
    """Install on a worker process before it serves (``install``), run ``sweeping`` beside
    it; ``uninstall`` gives everything back (tests)."""

    def __init__(self, sweep_every: float = SWEEP_EVERY, young_every: float = YOUNG_EVERY) -> None:
        self.sweep_every = sweep_every
        self.young_every = young_every
        self._installed = False
        self._young_timer: asyncio.TimerHandle | None = None

    def install(self) -> None:
        """Freeze what exists now (modules, models), and from now on the survivors of every
        collection."""
        if self._installed:
            return
        self._installed = True
        gc.collect()
        gc.freeze()
        gc.callbacks.append(self._after_collection)

    def uninstall(self) -> None:
        """Stop freezing, give every frozen object back to the collector."""
        if not self._installed:
            return
        self._installed = False
        gc.callbacks.remove(self._after_collection)
        gc.unfreeze()

    def _after_collection(self, phase: str, info: dict[str, Any]) -> None:
        # Called by the collector itself, with collections held off: the splice is safe.
        if phase == "stop":
            gc.freeze()

    def sweep(self) -> int:
        """One full collection of everything, frozen objects included; the objects it freed."""
        gc.unfreeze()
        started = time.perf_counter()
        found = gc.collect()
        gc.freeze()
        took = time.perf_counter() - started
        level = logging.WARNING if found else logging.INFO
        logger.log(
            level,
            "sweep found=%d took_ms=%.1f frozen=%d",
            found,
            took * 1000,
            gc.get_freeze_count(),
        )
        return found

    async def sweeping(self) -> None:
        """Until cancelled: collect the young generation every ``young_every`` seconds (a
        timer, not a task's wake-up), and sweep every ``sweep_every``."""
        loop = asyncio.get_running_loop()
        self._young_timer = loop.call_later(self.young_every, self._young, loop)
        try:
            while True:
                await asyncio.sleep(self.sweep_every)
                self.sweep()
        finally:
            if self._young_timer is not None:
                self._young_timer.cancel()
                self._young_timer = None

    def _young(self, loop: asyncio.AbstractEventLoop) -> None:
        gc.collect(0)
        self._young_timer = loop.call_later(self.young_every, self._young, loop)
