"""The broker in one process: publishing calls the listener directly, for the rooms this
worker subscribed to."""

from __future__ import annotations

from ..broker import Listener

__all__ = ["MemoryBroker"]


class MemoryBroker:
    """:class:`~server.store.broker.Broker` of one process; the memory room and tournament
    stores publish through :meth:`publish`."""

    def __init__(self) -> None:
        self._subscribed: set[str] = set()
        self._listener: Listener | None = None

    async def listen(self, listener: Listener) -> None:
        """Remember the listener."""
        self._listener = listener

    def publish(self, room_code: str, data: bytes) -> None:
        """Deliver a message of room ``room_code`` now, if it is subscribed."""
        if room_code in self._subscribed and self._listener is not None:
            self._listener(room_code, data)

    async def subscribe(self, room_code: str) -> None:
        """Deliver this room's messages to the listener."""
        self._subscribed.add(room_code)

    async def unsubscribe(self, room_code: str) -> None:
        """Stop delivering this room's messages."""
        self._subscribed.discard(room_code)

    async def publish_control(self, room_code: str, data: bytes) -> None:
        """Deliver a control message to the listener."""
        self.publish(room_code, data)

    async def close(self) -> None:
        """Nothing to stop: the listener is called directly."""
