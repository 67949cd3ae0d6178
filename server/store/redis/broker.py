"""The broker on Redis: each room's channel ``sd:{<room>}:ch`` carries its stamped events
(published by the room store's scripts) and control messages. On one Redis, classic pub/sub
read by this worker's own RESP2 subscriber connection (:class:`~.pubsub.RoomChannels`); on
a Redis Cluster, sharded pub/sub on the room's shard (:class:`~server.store.cluster.pubsub.
ShardChannels`). Either way events reach the listener in ``seq`` order, a gap filled from
the room's kept events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from ..broker import Listener
from ..cluster.pubsub import ShardChannels
from .link import RedisLink
from .pubsub import RoomChannels
from .shards import ClusterRouter

__all__ = ["RedisBroker"]


class RedisBroker:
    """:class:`~server.store.broker.Broker` on Redis, reached through ``link``;
    ``events_since`` (the room store's) fills the gaps."""

    def __init__(
        self,
        link: RedisLink,
        events_since: Callable[[str, int], Awaitable[list[bytes] | None]],
    ) -> None:
        self._link = link
        self._events_since = events_since
        self.channels: RoomChannels | ShardChannels | None = None

    async def listen(self, listener: Listener) -> None:
        """Open the channels (the link is open) and deliver their messages to
        ``listener``."""
        link = self._link
        with link.reaching():
            router = link.router
            if isinstance(router, ClusterRouter):
                self.channels = ShardChannels(
                    router, link.channel, self._events_since, link.check_health
                )
            else:
                self.channels = RoomChannels(
                    router.shard("").redis,
                    f"{link.prefix}:worker:{link.worker_id}",
                    link.channel,
                    self._events_since,
                    link.check_health,
                )
            await self.channels.start(listener)

    async def subscribe(self, room_code: str) -> None:
        """Subscribe to the room's channel (returns once Redis confirmed it)."""
        assert self.channels is not None, "not listening"
        with self._link.reaching():
            await self.channels.subscribe(room_code)

    async def unsubscribe(self, room_code: str) -> None:
        """Leave the room's channel."""
        assert self.channels is not None, "not listening"
        with self._link.reaching():
            await self.channels.unsubscribe(room_code)

    async def publish_control(self, room_code: str, data: bytes) -> None:
        """Publish a control message (not stored, no seq)."""
        publish, channel = self._link.scripts.publish, self._link.channel(room_code)
        await self._link.run(room_code, lambda r: r.execute_command(publish, channel, data))  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        """Close the channels."""
        if self.channels is not None:
            await self.channels.close()
