"""samedeal's asyncio websocket race server.

:mod:`server.room` — rooms and races as plain values (sans-I/O);
:mod:`server.broker` — the store + broker interface, with :mod:`server.memory` and
:mod:`server.redis_backend`; :mod:`server.app` — the connection handler and ``running()``.
"""

from __future__ import annotations

__all__: list[str] = []
