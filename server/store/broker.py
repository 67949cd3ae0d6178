"""The broker: how room events and control messages reach every worker with the room.

Every worker, the publishing one included, receives a subscribed room's messages from the
broker — stamped events in ``seq`` order (stored and published by the room store in one
step) and control messages (not stored, no seq) — so there is one path to the connections.
A tournament's events travel the same way, on the channel ``T:<id>``
(:data:`~server.store.tournaments.TOURNAMENT_CHANNEL`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Broker", "Listener"]

Listener = Callable[[str, bytes], None]
"""Called with (room code, message bytes) for every message on a subscribed room."""


class Broker(Protocol):
    """Room channels. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable`."""

    async def listen(self, listener: Listener) -> None:
        """Deliver the messages of subscribed rooms to ``listener`` from now on."""
        ...

    async def subscribe(self, room_code: str) -> None:
        """Receive the messages of room ``room_code``; returns once the subscription is live."""
        ...

    async def unsubscribe(self, room_code: str) -> None:
        """Stop receiving the messages of room ``room_code``."""
        ...

    async def publish_control(self, room_code: str, data: bytes) -> None:
        """Send a control message (not a room event, not stored) to every subscribed worker."""
        ...

    async def close(self) -> None:
        """Stop listening."""
        ...
