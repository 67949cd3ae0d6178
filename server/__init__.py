"""samedeal's asyncio websocket race server, one package per capability (docs/architecture.md).

:mod:`server.edge` — the network's edge: the gateway, HTTP routes, static files,
connections, per-address limits; :mod:`server.rooms` — rooms and races: the room's state
and its named updates (sans-I/O), the local registry with the fair-play filter, and the
services that create, race, finish and rematch; :mod:`server.watching` — the live
directory, followed boards, reactions; :mod:`server.daily` — the deal of the day;
:mod:`server.tournaments` — tournaments (the pure state machine and its services);
:mod:`server.quickplay` — Play now: pools that pair strangers of close ratings (the pure
pairing rule, the pools' deals, the service); :mod:`server.proving` — proven deals: one
solver process and one pool of proven deals per game, for winnable-only rooms and quick play;
:mod:`server.players` — identities and finished races; :mod:`server.ratings` — Glicko-2
ratings from rated races (the pure rules and the routes); :mod:`server.store` — the store's
small interfaces (rooms, broker, live directory, pending writes, beats, tournaments,
presence, pools), in memory, on Redis and on a Redis Cluster; :mod:`server.records` — the
records database; :mod:`server.app` — wiring them and ``running()``.
"""

from __future__ import annotations

__all__: list[str] = []
