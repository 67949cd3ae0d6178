"""The spectator count: in the room snapshot, and a ``spectators`` event when it changes."""

from __future__ import annotations

from server_fixtures import ServerHandle

from protocol import Spectators


async def test_spectator_count_in_snapshot_and_events(server: ServerHandle) -> None:
    ann = await server.client()
    joined = await ann.create("klondike", name="Ann")
    assert joined.snapshot is not None and joined.snapshot.spectators == 0
    first = await server.client()
    seen = await first.join(joined.room, role="spectator")
    assert seen.snapshot is not None and seen.snapshot.spectators == 1
    event = await ann.next_event("spectators")
    assert isinstance(event, Spectators) and event.count == 1
    second = await server.client()
    await second.join(joined.room, role="spectator")
    event = await ann.next_event("spectators")
    assert isinstance(event, Spectators) and event.count == 2
    assert isinstance(await first.next_event("spectators"), Spectators)
    await second.close()
    event = await ann.next_event("spectators")
    assert isinstance(event, Spectators) and event.count == 1
    bob = await server.client()
    snap = (await bob.join(joined.room, name="Bob")).snapshot
    assert snap is not None and snap.spectators == 1
    await first.close()
    event = await bob.next_event("spectators")
    assert isinstance(event, Spectators) and event.count == 0
