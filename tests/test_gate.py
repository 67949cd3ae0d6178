"""The connection gate: mutual exclusion of a connection's move and its held progress."""

from __future__ import annotations

import asyncio

from server.edge.connection import Gate


async def turns(count: int) -> None:
    """Let the event loop run ``count`` turns (the gate's waiters wake on the next)."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_one_holder_at_a_time_in_arrival_order() -> None:
    gate = Gate()
    inside: list[int] = []
    log: list[str] = []

    async def worker(n: int) -> None:
        async with gate:
            inside.append(n)
            assert len(inside) == 1, "two holders at once"
            log.append(f"in {n}")
            await turns(3)  # held while the others try to enter
            inside.remove(n)

    await asyncio.gather(*(worker(n) for n in range(4)))
    assert log == ["in 0", "in 1", "in 2", "in 3"]
    assert not gate.busy


async def test_a_cancelled_waiter_does_not_wake_or_block_the_others() -> None:
    gate = Gate()
    entered: list[str] = []
    inside = asyncio.Event()
    leave = asyncio.Event()

    async def enter(name: str) -> None:
        async with gate:
            entered.append(name)
            inside.set()
            await leave.wait()

    async with gate:
        cancelled = asyncio.create_task(enter("cancelled"))
        other = asyncio.create_task(enter("other"))
        await turns(1)  # both wait
        cancelled.cancel()
        await turns(3)
        assert cancelled.cancelled()
        assert not entered  # the other still waits: the holder has not left
    await asyncio.wait_for(inside.wait(), 1)
    assert entered == ["other"] and gate.busy  # the other waiter holds it now
    leave.set()
    await asyncio.wait_for(other, 1)
    assert not gate.busy
