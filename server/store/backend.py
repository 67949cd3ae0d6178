"""The store the server runs on: a handful of small parts (rooms, the broker, the live
directory, pending writes, beats, tournaments, presence), with two implementations chosen at
start-up: :class:`~server.store.memory.backend.MemoryBackend` (one process) and
:class:`~server.store.redis.backend.RedisBackend` (several workers sharing rooms).
"""

from __future__ import annotations

import abc

from .beats import Beats
from .broker import Broker, Listener
from .directory import Directory
from .health import Health, HealthHook
from .pending import PendingWrites
from .presence import PresenceMarks
from .rooms import RoomStore
from .tournaments import TournamentStore

__all__ = ["Backend"]


class Backend(abc.ABC):
    """The store's parts, and its health and lifecycle. A part's method that cannot reach
    the store raises :class:`~server.store.errors.StoreUnavailable` (nothing changed)."""

    worker_id: str
    #: rooms and their move logs
    rooms: RoomStore
    #: room channels
    broker: Broker
    #: several workers share the store (so some of them may die while others run)
    shared: bool = False
    #: records writes not confirmed yet
    pending: PendingWrites
    #: every worker's beat, for liveness
    beats: Beats
    #: the live directory
    directory: Directory
    #: tournaments' live state
    tournaments: TournamentStore
    #: who is present in each tournament
    presence: PresenceMarks

    def __init__(self) -> None:
        self.health_hooks: list[HealthHook] = []

    def health(self) -> Health:
        """Whether the store can be reached now."""
        return Health(True)

    @abc.abstractmethod
    async def start(self, listener: Listener) -> None:
        """Connect, and deliver messages of subscribed rooms to ``listener`` from now on."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Stop listening and release connections."""

    @abc.abstractmethod
    async def ping(self) -> float:
        """Round trip to the store in seconds (0 for memory)."""
