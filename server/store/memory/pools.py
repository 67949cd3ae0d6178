"""The quick-play pools in one process: dicts with the same semantics as Redis (leases that
run out, taken seats kept a while, one claim per identity); the pairing message goes to the
broker's listener at once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ...quickplay.pairing import Seeker
from ..pools import POOL_CHANNEL, TAKEN_KEPT_MS, Taken, paired_message

__all__ = ["MemoryPools"]


@dataclass(slots=True)
class _Pool:
    seekers: dict[str, Seeker] = field(default_factory=dict)
    #: worker → when its lease runs out (ms)
    leases: dict[str, int] = field(default_factory=dict)
    #: key → (the seat, when it was taken)
    taken: dict[str, tuple[Taken, int]] = field(default_factory=dict)

    def prune(self, now: int) -> None:
        """Drop the seekers of workers whose lease ran out, and old taken seats."""
        dead = {w for w, until in self.leases.items() if until < now}
        if dead:
            for worker in dead:
                del self.leases[worker]
            self.seekers = {k: s for k, s in self.seekers.items() if s.worker not in dead}
        self.taken = {k: t for k, t in self.taken.items() if t[1] >= now - TAKEN_KEPT_MS}


class MemoryPools:
    """:class:`~server.store.pools.PoolStore` in dicts for worker ``worker_id``; ``publish``
    is the broker's, ``clock`` the server's (ms)."""

    def __init__(
        self, worker_id: str, publish: Callable[[str, bytes], None], clock: Callable[[], int]
    ) -> None:
        self.worker_id = worker_id
        self._publish = publish
        self._clock = clock
        self._pools: dict[str, _Pool] = {}
        #: player → (holder, until)
        self._claims: dict[str, tuple[str, int]] = {}

    def _pool(self, pool: str) -> _Pool:
        found = self._pools.get(pool)
        if found is None:
            found = self._pools[pool] = _Pool()
        return found

    async def claim(self, player: str, holder: str, lease_ms: int) -> str | None:
        """Take or renew the claim, unless another holder's still holds."""
        now = self._clock()
        current = self._claims.get(player)
        if current is not None and current[0] != holder and current[1] >= now:
            return current[0]
        self._claims[player] = (holder, now + lease_ms)
        return None

    async def hold_claims(self, claims: list[tuple[str, str]], lease_ms: int) -> None:
        """Renew each claim its holder holds."""
        for player, holder in claims:
            await self.claim(player, holder, lease_ms)

    async def unclaim(self, player: str, holder: str) -> None:
        """Drop the claim if ``holder``'s."""
        current = self._claims.get(player)
        if current is not None and current[0] == holder:
            del self._claims[player]

    async def add(self, pool: str, seeker: Seeker, lease_ms: int, now: int) -> bool:
        """Keep the seeker unless their key is there."""
        kept = self._pool(pool)
        kept.prune(now)
        if seeker.key in kept.seekers:
            return False
        kept.seekers[seeker.key] = seeker
        kept.leases[seeker.worker] = now + lease_ms
        kept.taken.pop(seeker.key, None)
        return True

    async def remove(self, pool: str, key: str, conn: str) -> bool:
        """Drop the seeker if ``conn``'s."""
        kept = self._pool(pool)
        seeker = kept.seekers.get(key)
        if seeker is None or seeker.conn != conn:
            return False
        del kept.seekers[key]
        return True

    async def seekers(self, pool: str, now: int) -> list[Seeker]:
        """The live seekers."""
        kept = self._pool(pool)
        kept.prune(now)
        return list(kept.seekers.values())

    async def take(self, pool: str, seats: dict[str, int], room: str, now: int) -> bool:
        """All or nothing; the message to the listener."""
        kept = self._pool(pool)
        kept.prune(now)
        if any(key not in kept.seekers for key in seats):
            return False
        for key, seat in seats.items():
            del kept.seekers[key]
            kept.taken[key] = (Taken(room, seat), now)
        self._publish(POOL_CHANNEL + pool, paired_message(room, seats))
        return True

    async def renew(
        self, pool: str, keys: list[str], lease_ms: int, now: int
    ) -> dict[str, Taken | None]:
        """Hold the lease; those no longer seeking."""
        kept = self._pool(pool)
        kept.leases[self.worker_id] = now + lease_ms
        out: dict[str, Taken | None] = {}
        for key in keys:
            if key in kept.seekers:
                continue
            found = kept.taken.get(key)
            out[key] = found[0] if found is not None else None
        return out

    async def counts(self, pools: list[str], now: int) -> dict[str, int]:
        """Live seekers per pool."""
        out = {}
        for pool in pools:
            kept = self._pools.get(pool)
            if kept is not None:
                kept.prune(now)
            out[pool] = len(kept.seekers) if kept is not None else 0
        return out
