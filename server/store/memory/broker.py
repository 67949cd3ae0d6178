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

    def publish(self, code: str, data: bytes) -> None:
        """Deliver a message of room ``code`` now, if it is subscribed."""
        if code in self._subscribed and self._listener is not None:
            self._listener(code, data)

    async def subscribe(self, code: str) -> None:
        """Deliver this room's messages to the listener."""
        self._subscribed.add(code)

    async def unsubscribe(self, code: str) -> None:
        """Stop delivering this room's messages."""
        self._subscribed.discard(code)

    async def publish_control(self, code: str, data: bytes) -> None:
        """Deliver a control message to the listener."""
        self.publish(code, data)

    async def close(self) -> None:
        """Nothing to stop: the listener is called directly."""
