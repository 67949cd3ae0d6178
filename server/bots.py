"""Server-side seats: bots ("race a bot") and ghosts ("race a ghost"), played in-process.

A :class:`RobotSeat` holds a player seat like a person does, through a :class:`Conn` whose
socket only keeps the server's last reply (:class:`ReplySocket`). Its moves go through the
server's own move handler — checked by the engine, stored in the move log, broadcast as
``progress`` and ranked — exactly like a person's. It plays every race of the room it is
seated for, on the worker that created it, and leaves when the room has had nobody on that
worker for the grace period; its seat is then freed like any disconnected seat.

What it plays comes from a :class:`Driver`: :class:`BotDriver` (the engine's greedy policy
at a pace, or a solver line) or :class:`GhostDriver` (a recorded run at its recorded times).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from engine import Game
from engine.strategy import GreedyPlayer
from protocol import Move, Resign

if TYPE_CHECKING:
    from .app import Conn, LocalRoom, RaceServer

__all__ = ["BotDriver", "Driver", "GhostDriver", "ReplySocket", "RobotSeat", "run_robot"]

logger = logging.getLogger("samedeal.bots")

Strength = Literal["greedy", "solver"]
POLL = 0.05  # seconds between looks at the room while waiting for a race


class ReplySocket:
    """Stands in for a websocket: keeps the last message the server sent, is never a
    target of a broadcast (its protocol state is never ``OPEN``)."""

    class _Protocol:
        state = None

    protocol = _Protocol()
    transport = None

    def __init__(self) -> None:
        self.last: dict[str, Any] = {}

    async def send(self, data: str | bytes, text: bool | None = None) -> None:
        """Keep the reply."""
        del text
        self.last = orjson.loads(data)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Nothing to close."""


class Driver:
    """Chooses a robot's actions and when to play them."""

    async def begin(self, game: Game, deal: str) -> None:
        """A race starts on ``deal`` (the robot's own board: ``game``)."""

    def next(self, game: Game) -> tuple[str | None, float]:
        """The next action (``None``: give up) and its time, in seconds after the race's
        start."""
        raise NotImplementedError

    def played(self, move: str, game: Game) -> None:
        """An action was accepted; ``game`` is the board after it."""


@dataclass
class BotDriver(Driver):
    """The engine's greedy policy (``strength="greedy"``), or the solver's line from the
    deal code when one is found in its budget (``"solver"``), at ``pace`` actions a
    second."""

    strength: Strength = "greedy"
    pace: float = 2.0
    solver_seconds: float = 5.0
    #: where the solver runs: the server gives a process pool, so that a search of several
    #: seconds takes neither the event loop's core nor its GIL (None: a thread)
    executor: Executor | None = None
    _player: GreedyPlayer | None = None
    _plan: list[str] = field(default_factory=list)
    _at: float = 0.0

    async def begin(self, game: Game, deal: str) -> None:
        """Make a plan for the race (the solver runs in ``executor``)."""
        self._player = GreedyPlayer(game)
        self._plan = []
        self._at = 0.0
        if self.strength == "solver":
            loop = asyncio.get_running_loop()
            try:
                line = await loop.run_in_executor(
                    self.executor, _solution, deal, self.solver_seconds
                )
            except Exception:  # the pool is gone (shutting down) or broken: play greedy
                logger.warning("no solver line deal=%s: playing greedy", deal, exc_info=True)
                line = None
            self._plan = list(reversed(line or []))

    def next(self, game: Game) -> tuple[str | None, float]:
        """The plan's next action, else the greedy one, one pace step after the last."""
        assert self._player is not None
        self._at += 1.0 / self.pace
        if self._plan:
            return self._plan.pop(), self._at
        return self._player.choose(), self._at

    def played(self, move: str, game: Game) -> None:
        """Follow the board."""
        assert self._player is not None
        self._player.played(move, game)


@dataclass
class GhostDriver(Driver):
    """A recorded run: its actions at their times (ms after the start); it gives up at
    ``elapsed_ms`` unless the run was won."""

    deal: str
    moves: list[str]
    times_ms: list[int]
    elapsed_ms: int
    _i: int = 0

    async def begin(self, game: Game, deal: str) -> None:
        """Replay from the first action; on another deal the run means nothing: give up."""
        self._i = 0 if deal == self.deal else len(self.moves)
        if deal != self.deal:
            self.elapsed_ms = 0

    def next(self, game: Game) -> tuple[str | None, float]:
        """The run's next action at its time; at the end, resign at the finishing time."""
        if self._i >= len(self.moves):
            return None, self.elapsed_ms / 1000
        move, at = self.moves[self._i], self.times_ms[self._i]
        self._i += 1
        return move, at / 1000

    def played(self, move: str, game: Game) -> None:
        """Nothing to follow: the run is fixed."""


def _solution(deal: str, budget: float) -> list[str] | None:
    try:
        from engine.solver import solve

        result = solve(deal, seconds=budget)
    except Exception:  # a game the solver does not know: play greedy
        logger.warning("no solver line deal=%s: playing greedy", deal, exc_info=True)
        return None
    return list(result.solution) if result.solution is not None else None


@dataclass
class RobotSeat:
    """A seat played by the server: its connection stand-in, driver and task."""

    conn: Conn
    socket: ReplySocket
    driver: Driver
    name: str
    task: asyncio.Task[None] | None = None


async def run_robot(server: RaceServer, robot: RobotSeat) -> None:
    """Play every race of the robot's room until nobody has been on this worker for the
    grace period (or the task is cancelled); then leave the seat."""
    conn = robot.conn
    code = conn.code
    assert code is not None and conn.seat is not None
    played_race = 0
    alone_since: float | None = None
    try:
        while True:
            lr = server.rooms.get(code)
            if lr is None:
                return
            if any(c.role is not None for c in lr.conns):
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif lr.phase != "running" and time.monotonic() - alone_since > server.config.grace:
                return
            if (
                lr.phase == "running"
                and lr.race > played_race
                and conn.seat in lr.participants
                and conn.seat not in lr.finished
            ):
                played_race = lr.race
                await _play_race(server, robot, lr)
            else:
                await asyncio.sleep(POLL)
    finally:
        with contextlib.suppress(Exception):
            server.robot_left(robot)


async def _play_race(server: RaceServer, robot: RobotSeat, lr: LocalRoom) -> None:
    conn, sock = robot.conn, robot.socket
    race = lr.race
    game = await server._load_game(conn, race, lr.deal)
    await robot.driver.begin(game, lr.deal)
    start = (lr.start_at or 0) / 1000  # server clock, seconds
    while lr.race == race and lr.phase == "running":
        game = conn.game if conn.game is not None else await server._load_game(conn, race, lr.deal)
        if game.won:
            return
        move, at = robot.driver.next(game)
        await asyncio.sleep(max(0.0, start + at - time.time()))
        if lr.race != race or lr.phase != "running" or conn.seat in lr.finished:
            return
        if move is None:
            sock.last = {}
            await server.robot_request(conn, Resign())
            return
        while True:
            sock.last = {}
            await server.robot_request(conn, Move(move=move))
            reply = sock.last
            if reply.get("type") == "rejected" and reply.get("rule") == "not-started":
                await asyncio.sleep(POLL)
                continue
            break
        if reply.get("type") == "ack":
            board = conn.game
            if board is not None:
                robot.driver.played(str(reply["move"]), board)
            continue
        if reply.get("type") == "rejected" and reply.get("rule") in (
            "finished",
            "time-up",
            "no-race",
        ):
            return
        # a refused action (a ghost whose run no longer fits) or a storage error: give up
        logger.warning(
            "robot action refused room=%s seat=%s move=%s reply=%s",
            conn.code,
            conn.seat,
            move,
            reply.get("rule") or reply.get("code"),
        )
        await server.robot_request(conn, Resign())
        return
