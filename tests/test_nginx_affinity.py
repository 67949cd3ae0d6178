"""deploy/nginx.conf as shipped, in front of two workers on one Redis, real nginx: every
connection of a room that says ``?room=CODE`` reaches one worker (the room's creator
moving there from the lobby's connection, a guest and a spectator connecting for it), and
the hash spreads the rooms over both workers (docs/operations.md, "Room affinity").

The configuration is the shipped file with only its addresses changed: the replicas'
``server server:8765`` lines become the two workers' loopback ports, and its ``listen`` a
free loopback port."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import until
from nginx_fixtures import NGINX, nginx
from server_fixtures import StartServer, free_port, paths_in_room

from clients.client import RaceClient

DEAL = "KL1-1-AAAAAAM"
ROOMS = 16  # all on one of two workers by chance: 1 in 32,768

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="no nginx")


async def test_a_rooms_connections_reach_one_worker_through_the_shipped_nginx(
    start_server: StartServer, tmp_path: Path
) -> None:
    workers = [await start_server("redis"), await start_server("redis")]
    port = free_port()
    with nginx(tmp_path / "nginx", port, [w.port for w in workers]):
        url = f"ws://127.0.0.1:{port}"
        rooms: list[str] = []
        clients: list[RaceClient] = []
        try:
            for _ in range(ROOMS):
                first = await RaceClient.connect(url)  # the lobby's: no room yet
                clients.append(first)
                joined = await first.create("klondike", deal="code", code=DEAL, name="Ann")
                host = await first.settle()  # to a connection that names the room
                guest = await RaceClient.connect(url, room=joined.room)
                await guest.join(joined.room, name="Bob")
                fan = await RaceClient.connect(url, room=joined.room)
                await fan.join(joined.room, role="spectator")
                clients += [host, guest, fan]
                rooms.append(joined.room)

            def each_on_one() -> bool:
                return all(
                    sorted(len(paths_in_room(w.app, room)) for w in workers) == [0, 3]
                    for room in rooms
                )

            await until(each_on_one)
            holders = {
                next(i for i, w in enumerate(workers) if paths_in_room(w.app, room))
                for room in rooms
            }
            assert holders == {0, 1}, "the hash sent every room to one worker"
        finally:
            for c in clients:
                await c.close()
