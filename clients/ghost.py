"""Ghost races: a finished player's run, raced again.

A ghost takes a seat in a room and, when a race on the run's deal starts, replays the run's
actions in real time, as a player would: its ``progress`` shows up for everyone like any
opponent's.

What the server exposes of a finished run is the ``player_finished`` event: the move list
(every accepted action, undos included, destinations resolved) and the finishing time
``elapsed_ms`` — **not** the time of each move. So a ghost built from that event spreads
the moves evenly over the run's time: move *i* of *n* is played at ``elapsed_ms * i / n``
after the start, and the last one lands exactly when the player finished. When per-move
times are known (``GhostRun.times_ms``, ms after the race's start, e.g. from a future
server field or a recording client) they are used as they are.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from typing import Any

from engine import new_game
from protocol import Ack, PlayerFinished, RaceStarting, Rejected

from .bot import BotResult, BotStatus, _wait_end, _wait_start
from .client import RaceClient

__all__ = ["GhostRun", "run_ghost", "run_ghost_client"]

logger = logging.getLogger("samedeal.ghost")


@dataclass(frozen=True, slots=True)
class GhostRun:
    """A run to replay: its deal, actions, finishing time and how it ended."""

    deal: str
    moves: tuple[str, ...]
    elapsed_ms: int
    status: str = "won"
    name: str = "Ghost"
    times_ms: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.times_ms is not None and len(self.times_ms) != len(self.moves):
            raise ValueError("times_ms needs one time per move")

    @classmethod
    def from_finished(cls, event: PlayerFinished, deal: str, name: str = "Ghost") -> GhostRun:
        """The run of a ``player_finished`` event (for the race whose deal was ``deal``);
        ``ValueError`` when its moves were withheld (the board rule hid them)."""
        if event.move_list is None:
            raise ValueError("this finish came without its moves (the race's boards are hidden)")
        return cls(
            deal=deal,
            moves=tuple(event.move_list.split()),
            elapsed_ms=event.elapsed_ms,
            status=event.status,
            name=name,
            times_ms=tuple(event.times_ms) if event.times_ms is not None else None,
        )

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GhostRun:
        """A run from JSON: ``deal``, ``moves`` (a move list, as text or a list),
        ``elapsed_ms``, and optionally ``status``, ``name`` and ``times_ms``. A saved
        ``player_finished`` event with ``deal`` added also works."""
        moves = data.get("moves", data.get("move_list", ""))
        words = moves.split() if isinstance(moves, str) else [str(m) for m in moves]
        times = data.get("times_ms")
        return cls(
            deal=str(data["deal"]),
            moves=tuple(words),
            elapsed_ms=int(data["elapsed_ms"]),
            status=str(data.get("status", "won")),
            name=str(data.get("name", "Ghost")),
            times_ms=tuple(int(t) for t in times) if times is not None else None,
        )

    def schedule(self) -> list[int]:
        """When to play each move, in ms after the race's start."""
        if self.times_ms is not None:
            return list(self.times_ms)
        n = len(self.moves)
        return [round(self.elapsed_ms * (i + 1) / n) for i in range(n)]


async def run_ghost_client(
    client: RaceClient,
    run: GhostRun,
    *,
    start_timeout: float | None = None,
    wait_results: float = 0.0,
) -> BotResult:
    """Replay ``run`` in the next race of the room ``client`` holds a seat in (its deal must
    be the run's); the ghost resigns at the run's end unless the run was won."""
    assert client.room is not None and client.seat is not None
    start: RaceStarting = await _wait_start(client, start_timeout)
    played: list[str] = []
    status: BotStatus = "resigned"
    if not _same_deal(start, run.deal):
        logger.warning("ghost: the race is not on the run's deal %s: resigning", run.deal)
        await client.resign()
    else:
        # start_at on the local monotonic clock, by the server's clock at race_starting
        started = time.monotonic() + (start.start_at - start.now) / 1000
        for move, at in zip(run.moves, run.schedule(), strict=True):
            await asyncio.sleep(max(0.0, started + at / 1000 - time.monotonic()))
            reply = await client.move(move)
            if isinstance(reply, Rejected) and reply.rule == "not-started":
                await asyncio.sleep(0.02)  # our clock ran a little ahead
                reply = await client.move(move)
            if not isinstance(reply, Ack):
                logger.warning("ghost: %s refused: %s", move, getattr(reply, "rule", reply))
                break
            played.append(reply.move)
        if played and client.view is not None and client.view.get("won"):
            status = "won"
        else:
            await asyncio.sleep(max(0.0, started + run.elapsed_ms / 1000 - time.monotonic()))
            await client.resign()
    results, deal = (
        await _wait_end(client, start.race, wait_results) if wait_results else (None, None)
    )
    return BotResult(
        client.room, client.seat, start.deal or deal, status, played, status == "won", results
    )


def _same_deal(start: RaceStarting, deal: str) -> bool:
    """Whether the race is on ``deal``. The deal code is not told to racers (fair play), so
    the starting board stands for it: its face-up cards tell deals apart."""
    if start.deal is not None:
        return start.deal == deal
    if start.view is None:
        return False
    return new_game(deal).player_view() == start.view


async def run_ghost(
    url: str,
    room: str,
    run: GhostRun,
    *,
    key: str | None = None,
    start_timeout: float | None = None,
    wait_results: float = 5.0,
) -> BotResult:
    """Join ``room`` as ``run.name`` and race ``run`` again in the room's next race."""
    client = await RaceClient.connect(url, room=room)
    try:
        await client.join(room, name=run.name, key=key)
        return await run_ghost_client(
            client, run, start_timeout=start_timeout, wait_results=wait_results
        )
    finally:
        await client.close()
