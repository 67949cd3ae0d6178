"""Bots: players that join a room and play their race to the end.

:func:`run_bot` is a coroutine, so a server could run a bot seat in-process ("race a bot")
as well as ``samedeal bot`` running one from the command line; the race benchmark uses bots
as its load.

Strengths:

- ``greedy`` plays fair: :class:`engine.strategy.GreedyPlayer` chooses among the legal
  actions by what it can see, on the board the server sends (the starting board in
  ``race_starting``, then each ``ack``'s), and resigns when stuck.
- ``solver`` asks :func:`engine.solver.solve` for a winning line from the deal code (so it
  knows every card: a benchmark and practice opponent, not a fair player) and plays it;
  when no line is found in its budget it plays greedy. The server tells the deal code only
  to the player who typed it, so a bot that was not told it plays greedy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any, Literal

from engine import new_game
from engine.strategy import GreedyPlayer, greedy_line, sight_game
from protocol import Ack, RaceEnded, RaceStarting, Rejected, RematchOffered

from .client import RaceClient, RequestError

__all__ = [
    "BotResult",
    "BotStatus",
    "GreedyPlayer",
    "Strength",
    "greedy_line",
    "play_race",
    "run_bot",
    "run_bot_client",
]

logger = logging.getLogger("samedeal.bot")

Strength = Literal["greedy", "solver"]
BotStatus = Literal["won", "resigned", "finished"]
"""How a bot's race ended: won, resigned, or ``finished`` by the server (its time-out)."""


@dataclass(slots=True)
class BotResult:
    """How the bot's race went."""

    room: str
    seat: int
    deal: str | None  # told once the bot has finished (or by race_ended)
    status: BotStatus
    moves: list[str]
    won: bool
    results: list[dict[str, Any]] | None = None


def _solution(deal: str, budget: float) -> list[str] | None:
    try:
        from engine.solver import solve

        result = solve(deal, seconds=budget)
    except Exception:  # a game the solver does not know yet: play by sight
        logger.warning("no solver line for deal=%s: playing greedy", deal, exc_info=True)
        return None
    return list(result.solution) if result.solution is not None else None


async def _wait_start(client: RaceClient, timeout: float | None) -> RaceStarting:
    """The next race this client races; a rematch offered meanwhile is accepted (a bot
    joined to race)."""

    async def wait() -> RaceStarting:
        async for event in client.events():
            if isinstance(event, RematchOffered) and event.by != client.seat:
                with contextlib.suppress(RequestError):  # the offer was settled meanwhile
                    await client.rematch_reply(event.race, True)
            if isinstance(event, RaceStarting) and client.seat in event.seats:
                return event
        raise ConnectionError("the connection closed before the race started")

    return await asyncio.wait_for(wait(), timeout)


async def _wait_end(
    client: RaceClient, race: int, timeout: float
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """The race's results and deal code (told at its end)."""

    async def wait() -> tuple[list[dict[str, Any]] | None, str | None]:
        async for event in client.events():
            if isinstance(event, RaceEnded) and event.race == race:
                return [row.model_dump() for row in event.results], event.deal
        return None, None

    try:
        return await asyncio.wait_for(wait(), timeout)
    except TimeoutError:
        return None, None


async def play_race(
    client: RaceClient,
    start: RaceStarting,
    *,
    pace: float = 4.0,
    strength: Strength = "greedy",
    solver_seconds: float = 5.0,
) -> tuple[BotStatus, list[str], bool]:
    """Play one race from its ``race_starting`` event to the bot's finish; returns the final
    status (``won``, ``resigned`` or ``finished`` when the server ended it), the accepted
    moves and whether the bot won."""
    game_name = client.game or "klondike"
    if start.view is not None:
        game = sight_game(game_name, start.view)
    else:  # a server of before the starting board: only the deal code tells it
        assert start.deal is not None, "race_starting without a board or a deal code"
        game = new_game(start.deal)
    player = GreedyPlayer(game)
    plan: list[str] = []
    if strength == "solver" and start.deal is not None:
        line = await asyncio.to_thread(_solution, start.deal, solver_seconds)
        plan = list(reversed(line or []))
    elif strength == "solver":
        logger.info("the deal code is not known: the solver bot plays greedy")
    delay = start.start_at - start.now  # ms to go, by the server's clock
    await asyncio.sleep(max(0.0, delay / 1000))
    gap = 1.0 / pace if pace > 0 else 0.0
    moves: list[str] = []
    next_at = time.monotonic()
    while not player.game.won:
        text = plan.pop() if plan else player.choose()
        if text is None:
            await client.resign()
            return "resigned", moves, False
        next_at += gap
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        reply = await client.move(text)
        if isinstance(reply, Rejected):
            if reply.rule == "not-started":
                await asyncio.sleep(0.05)
                continue
            if reply.rule in ("finished", "time-up", "no-race"):
                return "finished", moves, False
            raise RuntimeError(f"the server refused {text!r}: {reply.rule}: {reply.reminder}")
        assert isinstance(reply, Ack)
        assert client.view is not None  # the client merged the ack's changes into it
        player.played(reply.move, sight_game(game_name, client.view))
        moves.append(reply.move)
        if strength == "solver" and not plan and not player.game.won:
            strength = "greedy"  # the line ran out: go on by sight
    return "won", moves, True


async def run_bot_client(
    client: RaceClient,
    *,
    pace: float = 4.0,
    strength: Strength = "greedy",
    start_timeout: float | None = None,
    wait_results: float = 0.0,
    solver_seconds: float = 5.0,
) -> BotResult:
    """Play the next race of the room ``client`` holds a seat in."""
    assert client.room is not None and client.seat is not None
    start = await _wait_start(client, start_timeout)
    status, moves, won = await play_race(
        client, start, pace=pace, strength=strength, solver_seconds=solver_seconds
    )
    results, deal = (
        await _wait_end(client, start.race, wait_results) if wait_results else (None, None)
    )
    logger.info(
        "bot finished room=%s seat=%s status=%s moves=%d",
        client.room,
        client.seat,
        status,
        len(moves),
    )
    return BotResult(client.room, client.seat, start.deal or deal, status, moves, won, results)


async def run_bot(
    url: str,
    room: str,
    *,
    name: str = "Bot",
    key: str | None = None,
    pace: float = 4.0,
    strength: Strength = "greedy",
    races: int = 1,
    start_timeout: float | None = None,
    wait_results: float = 5.0,
    solver_seconds: float = 5.0,
) -> list[BotResult]:
    """Join ``room`` on the server at ``url`` as a player called ``name`` and play ``races``
    races to the end (each waits for the host to start it)."""
    client = await RaceClient.connect(url, room=room)
    try:
        await client.join(room, name=name, key=key)
        out = []
        for _ in range(races):
            out.append(
                await run_bot_client(
                    client,
                    pace=pace,
                    strength=strength,
                    start_timeout=start_timeout,
                    wait_results=wait_results,
                    solver_seconds=solver_seconds,
                )
            )
        return out
    finally:
        await client.close()
