"""What an invitation shows before joining (issue 18, item 10): ``GET /api/rooms/<CODE>``
on a real server, both backends — the summary, 404 alike for an unknown room and for a
private one without its key, the limit per client address — and the limiter alone."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from helpers import until_race_starts
from server_fixtures import ServerHandle, StartServer

from protocol.api import RoomSummary

DEAL = "KL1-1-AAAAAAK"


def get(port: int, path: str) -> tuple[int, dict[str, str], Any]:
    """(status, headers, JSON body) of a GET, errors included."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, dict(r.headers), json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), json.loads(exc.read())


async def fetch(port: int, path: str) -> tuple[int, dict[str, str], Any]:
    return await asyncio.to_thread(get, port, path)


async def test_the_summary_of_a_room_through_its_life(server: ServerHandle) -> None:
    ann, bob = await server.client(), await server.client()
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL, max_players=4)
    await bob.join(joined.room, name="<b>Bob</b>")
    status, headers, body = await fetch(server.port, f"/api/rooms/{joined.room}")
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert headers["Cache-Control"] == "no-store"
    summary = RoomSummary.model_validate(body)  # the documented model, nothing more
    assert summary == RoomSummary(
        room=joined.room,
        game="klondike",
        phase="lobby",
        host_name="Ann",
        players=["Ann", "<b>Bob</b>"],
        max_players=4,
        spectators=True,
        daily=False,
    )
    assert DEAL not in json.dumps(body)  # never the deal code
    # the code as typed: lower case, no dash
    typed = joined.room.replace("-", "").lower()
    assert (await fetch(server.port, f"/api/rooms/{typed}"))[2] == body
    await ann.start()
    await until_race_starts(bob)
    assert (await fetch(server.port, f"/api/rooms/{joined.room}"))[2]["phase"] == "running"
    await ann.leave()  # resigned, the seat freed, the host passes to Bob
    await bob.resign()
    await bob.next_event("race_ended")
    _, _, body = await fetch(server.port, f"/api/rooms/{joined.room}")
    assert (body["phase"], body["host_name"], body["players"]) == (
        "ended",
        "<b>Bob</b>",
        ["<b>Bob</b>"],
    )
    assert DEAL not in json.dumps(body)  # not even once the race is over


async def test_unknown_and_private_rooms_answer_the_same_404(server: ServerHandle) -> None:
    ann = await server.client()
    joined = await ann.create("easy-harp", name="Ann", private=True, spectators=False)
    key = joined.key
    assert key is not None
    unknown = await fetch(server.port, "/api/rooms/ZZZZ-ZZ")
    assert unknown[0] == 404 and unknown[2]["error"] == "unknown_room"
    for path in (
        f"/api/rooms/{joined.room}",
        f"/api/rooms/{joined.room}?key=",
        f"/api/rooms/{joined.room}?key=wrong{key}",
        f"/api/rooms/{joined.room}?key=%C3%A9t%C3%A9",  # not ASCII: still just wrong
        "/api/rooms/not-a-code",
    ):
        status, _, body = await fetch(server.port, path)
        assert (status, body) == (unknown[0], unknown[2]), path
    status, _, body = await fetch(server.port, f"/api/rooms/{joined.room}?key={key}")
    assert status == 200 and body["game"] == "easy-harp" and body["spectators"] is False


async def test_each_address_is_limited(start_server: StartServer, store_kind: str) -> None:
    server = await start_server(store_kind, room_info_rate=0.5, room_info_burst=3)
    statuses = [(await fetch(server.port, "/api/rooms/ZZZZ-ZZ"))[:2] for _ in range(4)]
    assert [s for s, _ in statuses] == [404, 404, 404, 429]
    assert statuses[-1][1]["Retry-After"] == "2"  # one token at 0.5 a second
    _, _, body = await fetch(server.port, "/api/rooms/ZZZZ-ZZ")
    assert body["error"] == "rate_limited"
    # the websocket and the other routes are not limited by it
    assert (await fetch_text(server.port, "/healthz")) == 200
    client = await server.client()
    await client.create("klondike", name="Ann")


async def fetch_text(port: int, path: str) -> int:
    def status() -> int:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return int(r.status)

    return await asyncio.to_thread(status)
