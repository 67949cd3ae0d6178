"""Helpers of the watching tests: rooms with races, timelines of what a client received and
when, the HTTP JSON of a server on the test's own event loop."""

from __future__ import annotations

import asyncio
from typing import Any

from helpers import until, until_server_clock
from server_fixtures import ServerHandle

from clients.client import RaceClient
from protocol import RaceStarting, ServerMessage

__all__ = ["ACE_DEAL", "LoopLag", "Timeline", "race_room"]

ACE_DEAL = "KL1-1-AAAAAAM"  # Klondike draw one: column 3 shows an ace ("t3-f" is legal)


async def race_room(
    servers: list[ServerHandle],
    *,
    players: int = 2,
    watchers: list[ServerHandle] | None = None,
    start: bool = True,
    game: str = "klondike",
    **options: Any,
) -> tuple[str, list[RaceClient], list[RaceClient]]:
    """A room whose players connect to ``servers`` in turn (the first is the host), with a
    spectator on each server of ``watchers``; the race started (and its countdown over)
    when ``start``. Returns (room, players, spectators)."""
    options.setdefault("deal", "code")
    options.setdefault("code", ACE_DEAL)
    host = await servers[0].client()
    joined = await host.create(game, name="P1", **options)
    clients = [host]
    for i in range(1, players):
        c = await servers[i % len(servers)].client()
        await c.join(joined.room, name=f"P{i + 1}", key=host.key)
        clients.append(c)
    spectators = []
    for server in watchers or []:
        s = await server.client()
        await s.join(joined.room, role="spectator", key=host.key)
        spectators.append(s)
    if start:
        await host.start()
        event = await host.next_event("race_starting")
        assert isinstance(event, RaceStarting)
        await until_server_clock(event.start_at, event.now)
    return joined.room, clients, spectators


class Timeline:
    """Everything a client receives unasked, with the loop time it arrived."""

    def __init__(self, client: RaceClient) -> None:
        self.client = client
        self.items: list[tuple[float, ServerMessage]] = []
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        async for message in self.client.events():
            self.items.append((loop.time(), message))

    def of(self, kind: type, **fields: Any) -> list[tuple[float, Any]]:
        """The (time, message) of ``kind`` whose fields have the values given."""
        return [
            (t, m)
            for t, m in self.items
            if isinstance(m, kind) and all(getattr(m, k) == v for k, v in fields.items())
        ]

    async def wait(self, kind: type, timeout: float = 5.0, **fields: Any) -> tuple[float, Any]:
        """The first (time, message) of ``kind`` with those fields, waiting for it."""
        found = await until(lambda: self.of(kind, **fields), timeout)
        first: tuple[float, Any] = found[0]
        return first

    def stop(self) -> None:
        """Stop recording."""
        self._task.cancel()


class LoopLag:
    """How late this event loop ran its timers at worst while it was watched: a client
    reads frames on the loop, so a frame may be read that much after it arrived (a loaded
    machine, a crowd connecting on the same loop)."""

    def __init__(self, every: float = 0.01) -> None:
        self.every = every
        self.worst = 0.0
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            # the sleep is the probe: how much later than asked it wakes is the lag
            await asyncio.sleep(self.every)
            self.worst = max(self.worst, loop.time() - before - self.every)

    def stop(self) -> None:
        """Stop watching."""
        self._task.cancel()
