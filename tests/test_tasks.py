"""``gather_all``: every awaitable awaited, the first failure raised, none left unretrieved
(a Redis health check that saw two primaries fail logged "Task exception was never
retrieved" when its task was collected, in another test's time)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from server.tasks import gather_all


class Caught(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def fails(after: float, what: str, done: list[str]) -> int:
    await asyncio.sleep(after)  # the scenario: it ends after the others or before them
    done.append(what)
    raise ConnectionError(what)


async def gives(after: float, value: int, done: list[str]) -> int:
    await asyncio.sleep(after)  # the scenario: it ends after the others or before them
    done.append(str(value))
    return value


async def test_results_in_order() -> None:
    done: list[str] = []
    assert await gather_all(gives(0.02, 1, done), gives(0.0, 2, done)) == [1, 2]
    assert await gather_all() == []


async def test_every_one_ends_before_the_first_failure_is_raised_and_none_is_lost() -> None:
    caught = Caught()
    logging.getLogger("asyncio").addHandler(caught)
    try:
        done: list[str] = []
        with pytest.raises(ConnectionError, match="first"):
            await gather_all(
                fails(0.02, "first", done), fails(0.0, "second", done), gives(0.05, 3, done)
            )
        # the slowest had ended too: nothing is still in flight once it raises
        assert sorted(done) == ["3", "first", "second"]
        gc.collect()
        await asyncio.sleep(0)  # a turn of the loop: a lost task's error would be logged in it
        assert caught.lines == []
    finally:
        logging.getLogger("asyncio").removeHandler(caught)
