"""The background writer: finished races queue up and are written in batches.

A race server ends races one at a time, from many connection handlers; writing each in its
own transaction would cost a commit (an fsync on SQLite) per race. :class:`RaceWriter`
takes them off the handlers at once (:meth:`RaceWriter.submit` never waits for the
database) and one task writes whatever has queued up in one transaction — at most
``max_batch`` races — so the commit rate stays low however fast races end.

A batch that fails for a passing reason (the database restarting, a lock timeout) is
retried with capped back-off; writing a race twice is harmless (its natural key). A race
the database refuses for good is dropped with a log line and its future gets the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from .models import RaceRecord
from .store import RecordsStore

__all__ = ["RaceWriter"]

logger = logging.getLogger(__name__)

_Item = tuple[RaceRecord, "asyncio.Future[str]"]


class RaceWriter:
    """Writes submitted races to ``store`` in batches, in the background.

    ``async with RaceWriter(store) as writer:`` starts it and, on exit, writes everything
    still queued before returning.
    """

    def __init__(
        self, store: RecordsStore, *, max_batch: int = 500, max_backoff: float = 10.0
    ) -> None:
        self.store = store
        self.max_batch = max_batch
        self.max_backoff = max_backoff
        self.written = 0
        self.batches = 0
        self._queue: asyncio.Queue[_Item] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> RaceWriter:
        self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    @property
    def pending(self) -> int:
        """Races submitted and not yet written."""
        return self._queue.qsize()

    def start(self) -> None:
        """Start the writing task (on the running loop)."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="records-writer")

    def submit(self, race: RaceRecord) -> asyncio.Future[str]:
        """Queue a finished race; the future gets its public race id once it is stored.
        Nobody needs to await it: the race is written either way."""
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_consume)
        self._queue.put_nowait((race, future))
        return future

    async def flush(self) -> None:
        """Wait until every race submitted so far is written (or refused)."""
        await self._queue.join()

    async def close(self) -> None:
        """Write what is queued, then stop."""
        if self._task is None:
            return
        await self.flush()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def _run(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while len(batch) < self.max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                await self._write(batch)
            finally:
                for _ in batch:
                    self._queue.task_done()

    async def _write(self, batch: list[_Item]) -> None:
        delay = 0.1
        while True:
            try:
                race_ids = await self.store.record_races([race for race, _ in batch])
            except asyncio.CancelledError:
                raise
            except (OperationalError, InterfaceError) as exc:
                logger.warning("records: writing %d races failed (%s); retrying", len(batch), exc)
            except DBAPIError:
                if len(batch) == 1:
                    race, future = batch[0]
                    logger.exception("records: race %s/%s refused", race.room, race.race)
                    if not future.done():
                        future.set_exception(RuntimeError("the race could not be stored"))
                    return
                # find the race the database refuses: write them one by one
                for item in batch:
                    await self._write([item])
                return
            else:
                self.written += len(batch)
                self.batches += 1
                for (_, future), race_id in zip(batch, race_ids, strict=True):
                    if not future.done():
                        future.set_result(race_id)
                return
            await asyncio.sleep(delay)
            delay = min(self.max_backoff, delay * 2)


def _consume(future: asyncio.Future[str]) -> None:
    # a refused race is logged by the writer: asyncio need not warn that nobody awaited it
    if not future.cancelled():
        future.exception()
