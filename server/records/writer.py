"""The background writer: finished races queue up and are written in batches, on a thread
of their own.

A race server ends races one at a time, from many connection handlers; writing each in its
own transaction would cost a commit (an fsync) per race. :class:`RaceWriter` takes them off
the handlers at once — :meth:`RaceWriter.submit` only hands the race to another thread —
and that thread writes whatever has queued up in one transaction, at most ``max_batch``
races, so the commit rate stays low however fast races end.

The thread runs its own event loop with its own store connections: turning a batch into
rows and statements is Python work of a few milliseconds, and on the server's loop it would
delay every move by that much. On its own thread it shares only the interpreter lock, which
the server's loop gets back within the switch interval (5 ms).

The database may go away for a while (a restart, a failover, a network cut): a batch that
cannot reach it (:func:`~.db.trouble`: refused, reset, a name that does not resolve, a
timeout, an administrator's shutdown, read-only) is tried again with capped back-off, for
as long as it takes — the thread never gives up and never dies of it; writing a race twice
is harmless (its natural key). Meanwhile races wait in memory, at most ``max_queued`` of
them: past that :meth:`RaceWriter.submit` takes no more (the caller keeps them elsewhere,
the server in its backend) and the memory stays bounded however long the outage. A race
the database refuses for good is dropped with a log line and its future gets
:class:`~.models.BadRecord`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.engine import URL

from .db import Observer
from .models import BadRecord, RaceRecord, RecordsUnavailable
from .store import SqlRecordsStore

__all__ = ["RaceWriter"]

logger = logging.getLogger(__name__)


@dataclass(slots=True, eq=False)
class _Item:
    """A race waiting for the database, its future, and whether its wait was told."""

    race: RaceRecord
    future: asyncio.Future[str]
    delayed: bool = False


_CLOSE_STORE = 2.0
"""Seconds the stopping thread waits for its connections to close (a database that does
not answer must not hold a worker's shutdown)."""


class RaceWriter:
    """Writes submitted races to the database at ``url`` in batches, on its own thread.

    ``async with RaceWriter(url) as writer:`` starts it and, on exit, writes everything
    still queued before returning. The database must be migrated already (the server's
    :class:`~server.records.store.SqlRecordsStore` does it when it opens).

    ``observer`` is told, on the caller's loop, after each attempt whether the database
    answered (see :data:`~.db.Observer`); ``on_delay`` is called there, once, with each
    race that could not be written at once — submitted while the database is away, or in
    a batch that could not reach it (it is written later, when the database is back).
    """

    def __init__(
        self,
        url: str | URL,
        *,
        max_batch: int = 200,
        max_queued: int = 2000,
        max_backoff: float = 5.0,
        observer: Observer | None = None,
        on_delay: Callable[[RaceRecord], None] | None = None,
        **store_options: Any,
    ) -> None:
        self.url = url
        self.max_batch = max_batch
        self.max_queued = max_queued
        self.max_backoff = max_backoff
        self.observer = observer
        self.on_delay = on_delay
        self.written = 0
        self.batches = 0
        #: whether the last attempt reached the database
        self.healthy = True
        self._store_options = {"migrate": False, "pool_size": 1, **store_options}
        self._unsettled = 0
        self._settled = asyncio.Event()
        self._settled.set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Item | None] | None = None
        self._work: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RaceWriter:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @property
    def pending(self) -> int:
        """Races submitted and not yet written (or refused): the ones held in memory."""
        return self._unsettled

    async def start(self) -> None:
        """Start the thread and open its store; raises what opening the store raises."""
        if self._thread is not None:
            return
        self._loop = asyncio.get_running_loop()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(
            target=asyncio.run, args=(self._main(ready),), name="records-writer", daemon=True
        )
        self._thread.start()
        try:
            await asyncio.wrap_future(ready)
        except BaseException:
            await asyncio.to_thread(self._thread.join)
            self._thread = None
            raise

    def submit(self, race: RaceRecord) -> asyncio.Future[str] | None:
        """Queue a finished race; the future gets its public race id once it is stored.
        Nobody needs to await it: the race is written either way. ``None``: ``max_queued``
        races are waiting already, this one was not taken (keep it elsewhere and submit it
        again later)."""
        if self._loop is None or self._thread_loop is None or self._queue is None:
            raise RuntimeError("the writer is not started")
        if self._unsettled >= self.max_queued:
            return None
        future: asyncio.Future[str] = self._loop.create_future()
        future.add_done_callback(_consume)
        self._unsettled += 1
        self._settled.clear()
        item = _Item(race, future, delayed=not self.healthy)
        if item.delayed:
            self._loop.call_soon(self._delayed, race)
        self._thread_loop.call_soon_threadsafe(self._queue.put_nowait, item)
        return future

    async def flush(self) -> None:
        """Wait until every race submitted so far is written (or refused)."""
        await self._settled.wait()

    async def close(self, timeout: float | None = None) -> None:
        """Write what is queued (for ``timeout`` seconds at most; not at all while the
        database cannot be reached), then stop the thread. Races left unwritten stay
        unsettled: their futures never end."""
        if self._thread is None or self._thread_loop is None or self._queue is None:
            return
        if self.healthy:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.flush(), timeout)
        if self._unsettled:
            logger.warning("records writer stopping with %d races unwritten", self._unsettled)
        with contextlib.suppress(RuntimeError):  # its loop ended already
            self._thread_loop.call_soon_threadsafe(self._stop)
        await asyncio.to_thread(self._thread.join)
        self._thread = None

    # ---------------------------------------------------------------- on the writer thread

    async def _main(self, ready: concurrent.futures.Future[None]) -> None:
        try:
            store = await SqlRecordsStore.open(self.url, **self._store_options)
        except BaseException as exc:
            ready.set_exception(exc)
            return
        store.db.observers.append(self._observe)
        self._queue = asyncio.Queue()
        self._thread_loop = asyncio.get_running_loop()
        self._work = asyncio.create_task(self._drain(store))
        ready.set_result(None)
        try:
            with contextlib.suppress(asyncio.CancelledError):
                await self._work
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(store.close(), _CLOSE_STORE)

    def _stop(self) -> None:
        assert self._work is not None
        self._work.cancel()

    async def _drain(self, store: SqlRecordsStore) -> None:
        assert self._queue is not None
        while True:
            item = await self._queue.get()
            if item is None:
                return
            batch = [item]
            self._take_queued(batch)
            try:
                await self._write(store, batch)
            except Exception:
                # a mistake of ours, not the database's: the races stay with the caller
                logger.exception("records: a batch of %d races failed", len(batch))
                for each in batch:
                    self._settle(each.future, RuntimeError("the records writer failed"))

    def _take_queued(self, batch: list[_Item]) -> None:
        """Add what is queued to ``batch``, up to ``max_batch`` races."""
        assert self._queue is not None
        while len(batch) < self.max_batch and not self._queue.empty():
            more = self._queue.get_nowait()
            if more is None:  # close() flushed first: nothing follows
                self._queue.put_nowait(None)
                return
            batch.append(more)

    async def _write(self, store: SqlRecordsStore, batch: list[_Item]) -> None:
        delay = 0.1
        logged = False
        while True:
            try:
                race_ids = await store.record_races([item.race for item in batch])
            except RecordsUnavailable as exc:
                if not logged:
                    logged = True
                    logger.warning(
                        "records: writing %d races failed (%s); trying again until the "
                        "database is back",
                        len(batch),
                        exc.reason,
                    )
            except Exception:
                if len(batch) == 1:
                    race = batch[0].race
                    logger.exception("records: race %s/%s refused", race.room, race.race)
                    self._settle(batch[0].future, BadRecord("the database refuses this race"))
                    return
                # find the race the database refuses: write them one by one
                for item in batch:
                    await self._write(store, [item])
                return
            else:
                self.written += len(batch)
                self.batches += 1
                for item, race_id in zip(batch, race_ids, strict=True):
                    self._settle(item.future, race_id)
                return
            for item in batch:
                if not item.delayed:
                    item.delayed = True
                    self._to_caller(self._delayed, item.race)
            await asyncio.sleep(delay)
            delay = min(self.max_backoff, delay * 2)
            self._take_queued(batch)  # what ended meanwhile goes with the next try

    def _observe(self, reason: str | None) -> None:
        self.healthy = reason is None
        if self.observer is not None:
            self._to_caller(self.observer, reason)

    def _settle(self, future: asyncio.Future[str], outcome: str | Exception) -> None:
        self._to_caller(self._settle_on_loop, future, outcome)

    def _to_caller(self, work: Callable[..., None], *args: Any) -> None:
        assert self._loop is not None
        with contextlib.suppress(RuntimeError):  # the caller's loop is closed: it stopped
            self._loop.call_soon_threadsafe(work, *args)

    # ---------------------------------------------------------------- back on the caller's loop

    def _delayed(self, race: RaceRecord) -> None:
        if self.on_delay is not None:
            self.on_delay(race)

    def _settle_on_loop(self, future: asyncio.Future[str], outcome: str | Exception) -> None:
        if not future.done():
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)
        self._unsettled -= 1
        if self._unsettled == 0:
            self._settled.set()


def _consume(future: asyncio.Future[str]) -> None:
    # a refused race is logged by the writer: asyncio need not warn that nobody awaited it
    if not future.cancelled():
        with contextlib.suppress(BaseException):
            future.exception()
