"""Quick play (issue 32): "Play now" pools that pair strangers in seconds.

:mod:`.pairing` is the pools and who is paired with whom (pure); :mod:`.updates` the room
updates a pool's room is made and started with (pure); :mod:`.deals` where a pool's deals
come from (proven winnable, sealed, never dealt to a player twice); :mod:`.service` the
requests (``seek``, ``cancel_seek``, ``take_offer``, ``pools``), the pairing passes, the
leases and the offers made to those who wait. The store keeps the pools
(:mod:`server.store.pools`), so players on different workers are paired.
"""

from __future__ import annotations

__all__: list[str] = []
