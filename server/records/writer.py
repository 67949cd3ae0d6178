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

A batch that fails for a passing reason (the database restarting, a lock timeout) is
retried with capped back-off; writing a race twice is harmless (its natural key). A race
the database refuses for good is dropped with a log line and its future gets the error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from typing import Any

from sqlalchemy.engine import URL
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from .models import RaceRecord
from .store import SqlRecordsStore

__all__ = ["RaceWriter"]

logger = logging.getLogger(__name__)

_Item = tuple[RaceRecord, "asyncio.Future[str]"]


class RaceWriter:
    """Writes submitted races to the database at ``url`` in batches, on its own thread.

    ``async with RaceWriter(url) as writer:`` starts it and, on exit, writes everything
    still queued before returning. The database must be migrated already (the server's
    :class:`~server.records.store.SqlRecordsStore` does it when it opens).
    """

    def __init__(
        self,
        url: str | URL,
        *,
        max_batch: int = 200,
        max_backoff: float = 10.0,
        **store_options: Any,
    ) -> None:
        self.url = url
        self.max_batch = max_batch
        self.max_backoff = max_backoff
        self.written = 0
        self.batches = 0
        self._store_options = {"migrate": False, "pool_size": 1, **store_options}
        self._unsettled = 0
        self._settled = asyncio.Event()
        self._settled.set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._thread_loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Item | None] | None = None

    async def __aenter__(self) -> RaceWriter:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @property
    def pending(self) -> int:
        """Races submitted and not yet written (or refused)."""
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

    def submit(self, race: RaceRecord) -> asyncio.Future[str]:
        """Queue a finished race; the future gets its public race id once it is stored.
        Nobody needs to await it: the race is written either way."""
        if self._loop is None or self._thread_loop is None or self._queue is None:
            raise RuntimeError("the writer is not started")
        future: asyncio.Future[str] = self._loop.create_future()
        future.add_done_callback(_consume)
        self._unsettled += 1
        self._settled.clear()
        self._thread_loop.call_soon_threadsafe(self._queue.put_nowait, (race, future))
        return future

    async def flush(self) -> None:
        """Wait until every race submitted so far is written (or refused)."""
        await self._settled.wait()

    async def close(self) -> None:
        """Write what is queued, then stop the thread."""
        if self._thread is None or self._thread_loop is None or self._queue is None:
            return
        await self.flush()
        self._thread_loop.call_soon_threadsafe(self._queue.put_nowait, None)
        await asyncio.to_thread(self._thread.join)
        self._thread = None

    # ---------------------------------------------------------------- on the writer thread

    async def _main(self, ready: concurrent.futures.Future[None]) -> None:
        try:
            store = await SqlRecordsStore.open(self.url, **self._store_options)
        except BaseException as exc:
            ready.set_exception(exc)
            return
        self._queue = asyncio.Queue()
        self._thread_loop = asyncio.get_running_loop()
        ready.set_result(None)
        try:
            while True:
                item = await self._queue.get()
                if item is None:
                    return
                batch = [item]
                while len(batch) < self.max_batch and not self._queue.empty():
                    more = self._queue.get_nowait()
                    if more is None:  # close() flushed first: nothing follows
                        self._queue.put_nowait(None)
                        break
                    batch.append(more)
                await self._write(store, batch)
        finally:
            await store.close()

    async def _write(self, store: SqlRecordsStore, batch: list[_Item]) -> None:
        delay = 0.1
        while True:
            try:
                race_ids = await store.record_races([race for race, _ in batch])
            except (OperationalError, InterfaceError) as exc:
                logger.warning("records: writing %d races failed (%s); retrying", len(batch), exc)
            except DBAPIError:
                if len(batch) == 1:
                    race, future = batch[0]
                    logger.exception("records: race %s/%s refused", race.room, race.race)
                    self._settle(future, None)
                    return
                # find the race the database refuses: write them one by one
                for item in batch:
                    await self._write(store, [item])
                return
            else:
                self.written += len(batch)
                self.batches += 1
                for (_, future), race_id in zip(batch, race_ids, strict=True):
                    self._settle(future, race_id)
                return
            await asyncio.sleep(delay)
            delay = min(self.max_backoff, delay * 2)

    def _settle(self, future: asyncio.Future[str], race_id: str | None) -> None:
        assert self._loop is not None
        self._loop.call_soon_threadsafe(self._settle_on_loop, future, race_id)

    # ---------------------------------------------------------------- back on the caller's loop

    def _settle_on_loop(self, future: asyncio.Future[str], race_id: str | None) -> None:
        if not future.done():
            if race_id is None:
                future.set_exception(RuntimeError("the race could not be stored"))
            else:
                future.set_result(race_id)
        self._unsettled -= 1
        if self._unsettled == 0:
            self._settled.set()


def _consume(future: asyncio.Future[str]) -> None:
    # a refused race is logged by the writer: asyncio need not warn that nobody awaited it
    if not future.cancelled():
        with contextlib.suppress(BaseException):
            future.exception()
