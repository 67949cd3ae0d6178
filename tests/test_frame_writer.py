"""FrameWriter: one write per connection per turn, players first, a crowd over several turns.

The connections are websockets' own protocol (sans-I/O, in the open state) over a transport
that keeps what it was given, so what each connection was sent can be read back in order.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from websockets.protocol import CLOSED, OPEN
from websockets.server import ServerProtocol

from protocol import Role
from server.bucket import TokenBucket
from server.edge.connection import Conn, FrameWriter


class KeptTransport:
    """The transport's side that FrameWriter uses; every write kept."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return False


class Wire:
    """What FrameWriter reads of a websocket connection: its protocol and transport."""

    def __init__(self) -> None:
        self.protocol = ServerProtocol()
        self.protocol.state = OPEN
        self.transport = KeptTransport()


def conn(writer: FrameWriter, role: Role | None) -> Conn:
    c = Conn(cast(Any, Wire()), TokenBucket(10.0, 10), worker="w", frames=writer)
    c.role = role
    return c


def frames(c: Conn) -> list[bytes]:
    """The text frames written to ``c``, in order (server frames: unmasked, short)."""
    out = []
    data = b"".join(c.websocket.transport.writes)  # type: ignore[attr-defined]
    while data:
        size = data[1]
        out.append(data[2 : 2 + size])
        data = data[2 + size :]
    return out


async def turns(count: int) -> None:
    """Let the event loop run ``count`` turns: the writer's schedule is counted in them."""
    for _ in range(count):
        await asyncio.sleep(0)


async def test_players_first_and_a_crowd_over_several_turns() -> None:
    writer = FrameWriter()
    slice_ = FrameWriter.CROWD_SLICE
    crowd = [conn(writer, "spectator") for _ in range(2 * slice_ + 1)]
    players = [conn(writer, "player") for _ in range(3)]
    for c in crowd:
        writer.write(c, b"progress 1")
    for p in players:
        writer.write(p, b"ack")
        writer.write(p, b"progress 1")  # same turn: one write with both
    await turns(1)
    assert all(frames(p) == [b"ack", b"progress 1"] for p in players)
    assert all(len(p.websocket.transport.writes) == 1 for p in players)  # type: ignore[attr-defined]
    written = [c for c in crowd if frames(c)]
    assert written == crowd[:slice_]  # in the order they were queued
    # a player's frame of the next turn is not held behind the rest of the crowd
    writer.write(players[0], b"ack 2")
    for c in crowd[:3]:
        writer.write(c, b"progress 2")
    await turns(1)
    assert frames(players[0])[-1] == b"ack 2"
    assert [c for c in crowd if frames(c)] == crowd[: 2 * slice_]
    await turns(2)
    assert all(frames(c)[0] == b"progress 1" for c in crowd)
    assert [frames(c) for c in crowd[:3]] == [[b"progress 1", b"progress 2"]] * 3
    assert all(frames(c) == [b"progress 1"] for c in crowd[3:])


async def test_a_closed_connection_is_skipped_and_the_others_written() -> None:
    writer = FrameWriter()
    a, b = conn(writer, "player"), conn(writer, None)
    writer.write(a, b"one")
    a.websocket.protocol.state = CLOSED  # nothing more is queued
    writer.write(a, b"two")
    writer.write(b, b"lobby")
    await turns(1)
    assert frames(a) == [b"one"]
    assert frames(b) == [b"lobby"]
