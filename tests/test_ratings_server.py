"""Rated races through a real server: a rated room seats identified players only, no
robots, never the deal of the day."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from server_fixtures import ServerHandle, StartServer

from clients.client import RaceClient, RequestError


async def with_records(start_server: StartServer, url: str, **options: Any) -> ServerHandle:
    return await start_server("memory", records_url=url, **options)


async def identified(server: ServerHandle, name: str) -> RaceClient:
    client = await server.client()
    await client.new_player(name)
    return client


async def refused(code: str, request: Any) -> None:
    with pytest.raises(RequestError) as info:
        await request
    assert info.value.code == code


async def test_a_rated_room_seats_identified_people_only(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await with_records(start_server, f"sqlite:///{tmp_path / 'r.db'}")
    guest = await server.client()
    await refused("rated_needs_identity", guest.create("klondike", rated=True))
    ann = await identified(server, "Ann")
    await refused("rated_daily", ann.create("klondike", deal="daily", rated=True))
    joined = await ann.create("klondike", rated=True)
    assert joined.snapshot is not None and joined.snapshot.options.rated
    await refused("rated_needs_identity", guest.join(joined.room))
    await refused("rated_no_robots", ann.request({"type": "add_bot"}))
    await refused("rated_daily", ann.rematch("daily"))
    bob = await identified(server, "Bob")
    assert (await bob.join(joined.room)).seat == 2
    casual = await (await server.client()).create("klondike")
    assert casual.snapshot is not None and not casual.snapshot.options.rated
