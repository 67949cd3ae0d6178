"""What every layer of a worker shares: settings, the store, the local rooms, metrics and
background tasks. Built once by :mod:`server.app` and handed to each layer."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from .codes import display_code
from .config import Config
from .edge.connection import FrameWriter
from .edge.http import Router
from .metrics import Metrics
from .records.store import SqlRecordsStore
from .rooms.registry import Rooms
from .store import Store
from .store.errors import StoreUnavailable
from .store.health import Health
from .tasks import Tasks

__all__ = ["Context"]


@dataclass(slots=True)
class Context:
    """One worker's shared parts."""

    config: Config
    store: Store
    metrics: Metrics
    tasks: Tasks
    rooms: Rooms
    #: the port the server listens on, once it does
    port: int | None = None
    #: set while the store can be reached
    store_up: asyncio.Event = field(default_factory=asyncio.Event)
    #: the HTTP GET routes served on the websocket port
    http: Router = field(default_factory=Router)
    #: every connection's frames, written once per loop turn
    frames: FrameWriter = field(default_factory=FrameWriter)
    #: the records store (players, finished races), once open; None: none is kept
    records: SqlRecordsStore | None = None
    #: what ``/healthz`` looks at, by name: the store's health, the records database's
    health: dict[str, Callable[[], Health]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.store_up.set()
        self.store.health_hooks.append(self._on_health)
        self.health["store"] = self.store.health

    def _on_health(self, health: Health) -> None:
        self.metrics.store_up = int(health.ok)
        if health.ok:
            self.store_up.set()
        else:
            self.store_up.clear()

    def when_store_is_back(self, act: Callable[[], Awaitable[None]], what: str) -> None:
        """Do ``act`` once the store can be reached again (it could not just now); tried
        again after each outage until it is done."""

        async def retry() -> None:
            while True:
                await self.store_up.wait()
                try:
                    await act()
                    return
                except StoreUnavailable:
                    await asyncio.sleep(0.2)  # the health watch has not seen it yet

        self.tasks.spawn(retry(), what)

    @property
    def worker_id(self) -> str:
        """This worker's id (the store's)."""
        return self.store.worker_id

    def link(self, room_code: str, key: str | None) -> str:
        """The join link of a room."""
        base = self.config.public_url or f"http://{self.config.host}:{self.port or 0}"
        return f"{base}/r/{display_code(room_code)}" + (f"?key={key}" if key else "")
