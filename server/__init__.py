"""samedeal's asyncio websocket race server, in layers (see docs/architecture.md).

:mod:`server.room` — rooms and races as plain values and named updates (sans-I/O);
:mod:`server.backend` — the store + broker interface, with :mod:`server.memory` and
:mod:`server.redis_backend`; :mod:`server.gateway`, :mod:`server.lobby`, :mod:`server.race`,
:mod:`server.spectate`, :mod:`server.bots`, :mod:`server.liveness` — the layers of a
worker; :mod:`server.app` — wiring them and ``running()``.
"""

from __future__ import annotations

__all__: list[str] = []
