"""The worker's background tasks: started with a name, failures logged, all cancelled at
shutdown; and its solver processes, which end with it."""

from __future__ import annotations

import asyncio
import concurrent.futures.process
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Awaitable, Coroutine
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar, cast

T = TypeVar("T")

__all__ = ["Tasks", "gather_all", "retrieved", "solver_pool", "stop_pool"]

logger = logging.getLogger("samedeal.server")

_CLOSE_TIMEOUT = 3.0
"""Seconds shutdown waits for background tasks to stop after cancelling them."""


class Tasks:
    """A set of running background tasks."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self.closed = False

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> asyncio.Task[Any]:
        """Run ``coro`` in the background; its failure is logged with ``what``."""
        task = asyncio.create_task(coro, name=what)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            logger.error("background task failed: %s", task.get_name(), exc_info=task.exception())

    async def close(self) -> None:
        """Cancel every task and wait (a little) for them to stop."""
        self.closed = True
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            # A library await deep in a task may swallow one cancellation (seen with the
            # Redis client under load): never let shutdown wait on it forever.
            _, pending = await asyncio.wait(tasks, timeout=_CLOSE_TIMEOUT)
            for task in pending:
                logger.warning("background task did not stop: %s", task.get_name())
                task.cancel()


def solver_pool(nice: int = 0) -> ProcessPoolExecutor:
    """A pool of one process for the solver's searches, started on first use: spawned (a
    fork would copy the running event loop and its threads), and ending with the worker —
    a SIGKILLed worker cannot stop it, so the child watches for its parent to go. ``nice``:
    the process's niceness raised by that much (work done ahead of need yields the CPU to
    the worker's event loop)."""
    return ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_die_with_parent,
        initargs=(os.getpid(), nice),
    )


def _die_with_parent(parent: int, nice: int = 0) -> None:
    """In a pool's process: exit as soon as ``parent`` is no longer its parent (it died,
    and the process was handed to init or a subreaper); first, be ``nice`` (os.nice)."""
    if nice:
        os.nice(nice)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent watch", daemon=True).start()


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a solver process pool now: cancel what waits, and end a search under way (a
    search may run for seconds, and the interpreter would wait for it at exit)."""
    processes = list(getattr(pool, "_processes", {}).values())
    # The pool's manager thread closes its wake-up pipe as it ends; were the interpreter to
    # exit meanwhile, its exit hook would write to the closing pipe (EBADF, a traceback in
    # the log: CPython 3.11). So the thread leaves the exit hook's list first, before it is
    # told to stop: shutdown() below wakes it itself, and no later moment is safe (a thread
    # still starting on a loaded machine outlived any wait for it, and a worker stopped 60 ms
    # after its start printed the traceback).
    manager = getattr(pool, "_executor_manager_thread", None)
    wakeups = getattr(concurrent.futures.process, "_threads_wakeups", None)
    if manager is not None and wakeups is not None:
        wakeups.pop(manager, None)
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    if manager is not None:
        manager.join(2.0)  # ended by the terminations above: briefly


async def gather_all(*aws: Awaitable[T]) -> list[T]:
    """Await every one of ``aws`` at once, then raise the first failure in the order given,
    if any. A plain ``asyncio.gather`` raises at the first failure and leaves the others
    running unawaited: a second failure is then never retrieved (asyncio logs it as an error
    when the task is collected), and a caller that goes on cannot know what is still in
    flight."""
    results = await asyncio.gather(*aws, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return cast(list[T], results)


def retrieved(future: asyncio.Future[Any]) -> None:
    """A done callback: a future's failure is seen by whoever awaits it, or by nobody (it
    was cut short at shutdown, or superseded) — never "exception was never retrieved"."""
    if not future.cancelled():
        future.exception()
