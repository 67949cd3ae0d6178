"""The store in one process: every part in memory, no Redis. The same semantics as Redis —
rooms expire, event lists are capped — so nothing grows without bound; publishing calls the
listener directly."""

from __future__ import annotations

from .. import Store
from .beats import MemoryBeats
from .broker import MemoryBroker
from .directory import MemoryDirectory
from .link import MemoryLink
from .pending import MemoryPending
from .presence import MemoryPresence
from .rooms import MemoryRooms
from .tournaments import MemoryTournaments

__all__ = ["memory_store"]


def memory_store(
    *,
    worker_id: str = "memory",
    event_cap: int = 500,
    active_ttl: float = 6 * 3600,
    finished_ttl: float = 3600,
    sweep_interval: float = 30.0,
) -> Store:
    """A store of one process (see :func:`~server.store.open_store`); expired rooms are
    swept every ``sweep_interval`` seconds."""
    broker = MemoryBroker()
    rooms = MemoryRooms(
        broker.publish, event_cap=event_cap, active_ttl=active_ttl, finished_ttl=finished_ttl
    )
    tournaments = MemoryTournaments(broker.publish, event_cap)
    return Store(
        worker_id=worker_id,
        shared=False,
        link=MemoryLink(rooms.sweep, sweep_interval),
        rooms=rooms,
        broker=broker,
        directory=MemoryDirectory(worker_id),
        pending=MemoryPending(),
        beats=MemoryBeats(),
        tournaments=tournaments,
        presence=MemoryPresence(tournaments, worker_id),
    )
