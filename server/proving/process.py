"""The worker's one solver process for proving deals: niced, memory-bounded, replaced when
it grows.

A search of 200,000 nodes holds up to about 200 MB while it runs (Easy Harp, the compiled
engine, a candidate left undecided; those proven, up to about 110 MB: docs/benchmarks.md),
and CPython keeps much of it after the search ends. Two bounds
keep the process in check:

* **resident memory, between jobs**: the process tells its resident size with each job's
  answer; past ``rss_limit`` it is replaced before the next job (the next one waits for a
  new process to start, about a second);
* **data, during a job**: the process may hold at most ``memory`` bytes of data
  (RLIMIT_DATA) during a pool's job; a search that would need more fails with MemoryError
  (its candidate is given up: measured, such searches are those that end undecided anyway)
  and the process is replaced too. A day's or a round's proof is not bounded while it runs:
  its answer must not depend on the memory a server gives it.

Jobs run one at a time, in the order asked, *urgent* ones (someone waits for them: a room's
deal proven on demand, the day's deal, a tournament round's) before those done ahead of need
(the pool's candidates). A job under way is never interrupted: a pool's job is one candidate's
search, a few seconds at most, so an urgent job waits at most that long behind the pool; a
day's or a round's proof tries candidates until one is proven (the first, most days).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import resource
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..tasks import retrieved, solver_pool, stop_pool

__all__ = ["Prover", "resident_bytes"]

T = TypeVar("T")

logger = logging.getLogger("samedeal.server")

MB = 1 << 20


def resident_bytes() -> int:
    """This process's resident memory (bytes), from /proc; 0 where there is none."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _measured(fn: Callable[..., T], args: tuple[Any, ...], memory: int | None) -> tuple[T, int]:
    """In the solver's process: ``fn(*args)`` holding at most ``memory`` bytes of data (None:
    as much as the system lets it), and the process's resident bytes after it."""
    # RLIMIT_DATA, not RLIMIT_AS: the address space counts every thread's malloc arena
    # reserved (64 MB each, untouched), the data limit only what can be written to. The soft
    # limit is set per job, under the hard one, which is left as it was.
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if memory is None or (hard != resource.RLIM_INFINITY and memory > hard):
        memory = hard
    resource.setrlimit(resource.RLIMIT_DATA, (memory, hard))
    return fn(*args), resident_bytes()


@dataclass(slots=True, eq=False)
class _Job:
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    bounded: bool
    future: asyncio.Future[Any] = field(repr=False)


class Prover:
    """One solver process, started on first use, niced by ``nice``; replaced once its
    resident memory passes ``rss_limit`` bytes after a job, and allowed ``memory`` bytes of
    data during a bounded job (default: ``rss_limit``). Used from the event loop only."""

    def __init__(self, *, nice: int = 19, rss_limit: int = 150 * MB, memory: int | None = None):
        self.nice = nice
        self.rss_limit = rss_limit
        self.memory = memory if memory is not None else rss_limit
        #: the process's resident bytes after its last job (0 before any, or when replaced)
        self.rss = 0
        #: processes replaced: grown past the bound, out of memory, or died
        self.restarts = 0
        #: called after each job and each replacement (the metrics read the process)
        self.on_change: Callable[[], None] | None = None
        self._pool: ProcessPoolExecutor | None = None
        self._urgent: deque[_Job] = deque()
        self._ahead: deque[_Job] = deque()
        self._running: _Job | None = None
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The running process's id (None before it starts)."""
        processes = getattr(self._pool, "_processes", None) or {}
        return next(iter(processes), None)

    async def run(
        self, fn: Callable[..., T], *args: Any, urgent: bool = False, bounded: bool = True
    ) -> T:
        """``fn(*args)`` in the solver's process (``fn`` and ``args`` picklable), after the
        jobs asked before it (``urgent``: after the urgent ones only). Raises what ``fn``
        raised; MemoryError past the data bound (``bounded``; a proof whose answer must not
        depend on memory — a day's, a round's: every server must choose the same candidate —
        is not, and is bounded after it only); BrokenProcessPool if the process died."""
        if self._closed:
            raise RuntimeError("the prover is closed")
        job = _Job(fn, args, bounded, asyncio.get_running_loop().create_future())
        job.future.add_done_callback(retrieved)  # its asker may have gone
        (self._urgent if urgent else self._ahead).append(job)
        self._next()
        try:
            return await asyncio.shield(job.future)
        except asyncio.CancelledError:
            for queue in (self._urgent, self._ahead):
                if job in queue:
                    queue.remove(job)
            raise

    def _next(self) -> None:
        """Start the next job if none runs."""
        if self._running is not None or self._closed:
            return
        queue = self._urgent or self._ahead
        if not queue:
            return
        job = self._running = queue.popleft()
        if self._pool is None:
            self._pool = solver_pool(nice=self.nice)
        loop = asyncio.get_running_loop()
        try:
            memory = self.memory if job.bounded else None
            inner = self._pool.submit(_measured, job.fn, job.args, memory)
        except (BrokenProcessPool, RuntimeError) as exc:  # died while idle
            self._finish(job, None, exc, replace="the process died")
            return

        def done(inner: Future[tuple[Any, int]]) -> None:
            # the pool's thread: over to the loop (gone already when the worker stopped)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._done, job, inner)

        inner.add_done_callback(done)

    def _done(self, job: _Job, inner: Future[tuple[Any, int]]) -> None:
        if self._closed:
            return
        if inner.cancelled():
            self._finish(job, None, asyncio.CancelledError(), replace=None)
            return
        exc = inner.exception()
        if exc is None:
            self._finish(job, inner.result(), None, replace=None)
        elif isinstance(exc, MemoryError):
            why = f"a search needed more than {self.memory // MB} MB"
            self._finish(job, None, exc, replace=why)
        elif isinstance(exc, BrokenProcessPool):
            self._finish(job, None, exc, replace="the process died")
        else:
            self._finish(job, None, exc, replace=None)

    def _finish(
        self,
        job: _Job,
        answer: tuple[Any, int] | None,
        exc: BaseException | None,
        *,
        replace: str | None,
    ) -> None:
        self._running = None
        if answer is not None:
            result, self.rss = answer
            if not job.future.done():
                job.future.set_result(result)
            if self.rss > self.rss_limit:
                replace = f"resident {self.rss // MB} MB, past {self.rss_limit // MB} MB"
        elif exc is not None and not job.future.done():
            job.future.set_exception(exc)
        if replace is not None:
            self._replace(replace)
        if self.on_change is not None:
            self.on_change()
        self._next()

    def _replace(self, why: str) -> None:
        """Let the process go (the next job starts another)."""
        logger.warning("solver process replaced: %s", why)
        self.restarts += 1
        self.rss = 0
        self._stop()

    def _stop(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            # idle or dead: it ends at once, but stop_pool waits for the pool's thread, so
            # not on the event loop
            threading.Thread(target=stop_pool, args=(pool,), name="prover stop").start()

    def close(self) -> None:
        """Stop the process (a job under way is cut short) and refuse new jobs."""
        self._closed = True
        for queue in (self._urgent, self._ahead):
            while queue:
                queue.popleft().future.cancel()
        if self._running is not None:
            self._running.future.cancel()
            self._running = None
        pool, self._pool = self._pool, None
        if pool is not None:
            stop_pool(pool)
