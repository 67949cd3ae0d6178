"""The connection gate: mutual exclusion of a connection's move and its held progress."""

from __future__ import annotations

import asyncio

from server.edge.connection import Gate


async def _take(gate: Gate) -> None:
    if gate.busy:
        await gate.wait()
    else:
        gate.busy = True


async def test_one_holder_at_a_time_in_arrival_order() -> None:
    gate = Gate()
    inside: list[int] = []
    log: list[str] = []

    async def worker(n: int) -> None:
        await _take(gate)
        try:
            inside.append(n)
            assert len(inside) == 1, "two holders at once"
            log.append(f"in {n}")
            await asyncio.sleep(0.01)
        finally:
            inside.remove(n)
            gate.release()

    await asyncio.gather(*(worker(n) for n in range(4)))
    assert log == ["in 0", "in 1", "in 2", "in 3"]
    assert not gate.busy


async def test_a_cancelled_waiter_does_not_wake_or_block_the_others() -> None:
    gate = Gate()
    await _take(gate)
    cancelled = asyncio.create_task(_take(gate))
    other = asyncio.create_task(_take(gate))
    await asyncio.sleep(0)
    cancelled.cancel()
    await asyncio.sleep(0.01)
    assert not other.done()  # still waiting: the holder has not released
    gate.release()
    await asyncio.wait_for(other, 1)
    assert gate.busy  # the other waiter holds it now
    assert cancelled.cancelled()
