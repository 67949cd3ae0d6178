"""Robot seats: bots ("race a bot") and ghosts ("race a ghost"), played by the server.

A robot holds a player seat like a person does, through a :class:`~server.connection.Player`
without a socket, and plays through the same door: :meth:`server.rooms.race.Race.move` checks
each action with the engine, stores it in the move log and broadcasts its ``progress``;
races rank it like anyone. It plays every race of the room it is seated for, on the worker
that seated it, and leaves when the room has had nobody on that worker for the grace
period; its seat is then freed like any disconnected seat.

What it plays comes from a :class:`Driver`: :class:`BotDriver` (the engine's greedy policy
at a pace, or a solver line) or :class:`GhostDriver` (a recorded run at its recorded times).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from engine import Game
from engine.strategy import GreedyPlayer
from protocol import AddBot, AddGhost

from ..codes import hash_token, new_token
from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn, Player, new_conn_id
from ..tasks import solver_pool, stop_pool
from .lobby import Lobby
from .race import MoveAccepted, Race
from .registry import LocalRoom
from .room import Refusal, logged_code
from .updates import (
    SeatRobot,
)

__all__ = ["BotDriver", "Driver", "GhostDriver", "RobotSeat", "Robots", "Strength"]

logger = logging.getLogger("samedeal.bots")

Strength = Literal["greedy", "solver"]
POLL = 0.05  # seconds between looks at the room while waiting for a race


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
    #: the process id where the last plan was searched (None: none was)
    planned_in: int | None = None
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
                line, self.planned_in = await loop.run_in_executor(
                    self.executor, _solution, deal, self.solver_seconds
                )
            except Exception:  # the pool is gone (shutting down) or broken: play greedy
                logger.warning(
                    "no solver line deal=%s: playing greedy", logged_code(deal), exc_info=True
                )
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
    _next: int = 0

    async def begin(self, game: Game, deal: str) -> None:
        """Replay from the first action; on another deal the run means nothing: give up."""
        self._next = 0 if deal == self.deal else len(self.moves)
        if deal != self.deal:
            self.elapsed_ms = 0

    def next(self, game: Game) -> tuple[str | None, float]:
        """The run's next action at its time; at the end, resign at the finishing time."""
        if self._next >= len(self.moves):
            return None, self.elapsed_ms / 1000
        move, at = self.moves[self._next], self.times_ms[self._next]
        self._next += 1
        return move, at / 1000

    def played(self, move: str, game: Game) -> None:
        """Nothing to follow: the run is fixed."""


def _solution(deal: str, budget: float) -> tuple[list[str] | None, int]:
    """A winning line for ``deal`` found within ``budget`` seconds (None: none), and the id
    of the process that searched it."""
    try:
        from engine.solver import solve

        result = solve(deal, seconds=budget)
    except Exception:  # a game the solver does not know: play greedy
        logger.warning("no solver line deal=%s: playing greedy", logged_code(deal), exc_info=True)
        return None, os.getpid()
    return (list(result.solution) if result.solution is not None else None), os.getpid()


@dataclass
class RobotSeat:
    """A seat played by the server: who holds it, its driver, name and task."""

    player: Player
    driver: Driver
    name: str
    task: asyncio.Task[None] | None = None


class Robots:
    """The robot layer of a worker: seats robots and plays them."""

    def __init__(self, ctx: Context, races: Race, lobby: Lobby) -> None:
        self.ctx = ctx
        self.races = races
        self.lobby = lobby
        self.solver_pool: ProcessPoolExecutor | None = None

    def _pool(self) -> ProcessPoolExecutor:
        """The process that plans solver bots' races, started on first use."""
        if self.solver_pool is None:
            self.solver_pool = solver_pool()
        return self.solver_pool

    def close(self) -> None:
        """Stop the solver process."""
        if self.solver_pool is not None:
            stop_pool(self.solver_pool)
            self.solver_pool = None

    async def on_add_bot(self, conn: Conn, msg: AddBot) -> None:
        """``add_bot``: the host seats a bot (no solver bot on the day's secret deal: it
        would be told the code)."""
        if msg.strength == "solver":
            room_code, _ = self.races.host_seat(conn)
            local = self.ctx.rooms.get(room_code)
            if (
                local is not None
                and local.secret_until is not None
                and now_ms() < local.secret_until
            ):
                raise Refusal("no_solver_daily", "the deal of the day is secret: race a greedy bot")
        executor = self._pool() if msg.strength == "solver" else None
        driver = BotDriver(strength=msg.strength, pace=msg.pace, executor=executor)
        await self.seat(conn, f"Bot ({msg.strength})", driver)

    async def on_add_ghost(self, conn: Conn, msg: AddGhost) -> None:
        """``add_ghost``: the host seats the ghost of a kept run on the same deal."""
        room_code, _ = self.races.host_seat(conn)
        store = self.ctx.store
        snap = await store.rooms.snapshot(room_code)
        if snap is None:
            raise Refusal("unknown_room", "no such room (it may have expired)")
        room = snap.room
        if not 1 <= msg.race <= len(room.race_deals) or room.race_deals[msg.race - 1] != room.deal:
            raise Refusal("no_run", f"race {msg.race} is not a race of this room on its deal")
        moves = await store.rooms.moves(room_code, msg.race, msg.seat)
        times = await store.rooms.times(room_code, msg.race, msg.seat)
        if not moves or any(t is None for t in times):
            raise Refusal("no_run", f"no run of seat {msg.seat} in race {msg.race} is kept")
        known = [t for t in times if t is not None]
        rows = room.results if msg.race == room.race and room.results else []
        row = next((r for r in rows if r.get("seat") == msg.seat), None)
        elapsed = row.get("elapsed_ms") if row else None
        seat = room.seat(msg.seat)
        who = seat.name if seat else row["name"] if row else f"Player {msg.seat}"
        driver = GhostDriver(room.deal, moves, known, max(elapsed or known[-1], known[-1]))
        await self.seat(conn, f"Ghost of {who}", driver)

    async def seat(self, conn: Conn, name: str, driver: Driver) -> RobotSeat:
        """Seat a robot for the host ``conn`` between races; it plays on this worker."""
        room_code, host = self.races.host_seat(conn)
        local = self.ctx.rooms[room_code]
        player = Player(new_conn_id(self.ctx.worker_id))
        update = SeatRobot(host, name, hash_token(new_token()), player.id, now_ms())
        snap, seat = await self.ctx.store.rooms.update(room_code, update)
        local.learn(snap)
        player.room_code, player.role, player.seat = room_code, "player", seat
        robot = RobotSeat(player, driver, name)
        local.robots[seat] = player
        robot.task = self.ctx.tasks.spawn(self._run(robot), f"robot {room_code}:{seat}")
        logger.info("robot seated room=%s seat=%s name=%s", room_code, seat, name)
        return robot

    async def _run(self, robot: RobotSeat) -> None:
        """Play every race of the robot's room until nobody has been on this worker for
        the grace period (or the task is cancelled); then leave the seat."""
        player = robot.player
        room_code = player.room_code
        assert room_code is not None and player.seat is not None
        played_race = 0
        alone_since: float | None = None
        try:
            while True:
                local = self.ctx.rooms.get(room_code)
                if local is None:
                    return
                if any(c.role is not None for c in local.conns):
                    alone_since = None
                elif alone_since is None:
                    alone_since = time.monotonic()
                elif (
                    local.phase != "running"
                    and time.monotonic() - alone_since > self.ctx.config.grace
                ):
                    return
                if (
                    local.phase == "running"
                    and local.race > played_race
                    and player.seat in local.participants
                    and player.seat not in local.finished
                ):
                    played_race = local.race
                    await self._play_race(robot, local)
                else:
                    await asyncio.sleep(POLL)
        finally:
            self._left(robot)

    def _left(self, robot: RobotSeat) -> None:
        """A robot stopped playing: free its seat like a disconnected one's."""
        player = robot.player
        local = self.ctx.rooms.get(player.room_code or "")
        if local is not None and local.robots.get(player.seat or 0) is player:
            del local.robots[player.seat or 0]
        if not self.ctx.tasks.closed:
            self.ctx.tasks.spawn(self._leave(player, local), f"robot leaves {player.room_code}")

    async def _leave(self, player: Player, local: LocalRoom | None) -> None:
        await self.lobby.leave(player)
        if local is not None:
            self.ctx.rooms.drop_if_empty(local)

    async def _play_race(self, robot: RobotSeat, local: LocalRoom) -> None:
        player, race = robot.player, local.race
        game = await self.races.load_game(player, race, local.deal_code)
        await robot.driver.begin(game, local.deal_code)
        start = (local.start_at or 0) / 1000  # server clock, seconds
        while local.race == race and local.phase == "running":
            game = player.game or await self.races.load_game(player, race, local.deal_code)
            if game.won:
                return
            move, at = robot.driver.next(game)
            await asyncio.sleep(max(0.0, start + at - time.time()))
            if local.race != race or local.phase != "running" or player.seat in local.finished:
                return
            if move is None:
                with contextlib.suppress(Refusal):
                    await self.races.resign(player)
                return
            try:
                result = await self.races.move(player, move)
                while not isinstance(result, MoveAccepted) and result.rule == "not-started":
                    await asyncio.sleep(POLL)
                    result = await self.races.move(player, move)
            except Refusal as exc:
                reason = exc.error_code
            else:
                if isinstance(result, MoveAccepted):
                    if player.game is not None:
                        robot.driver.played(result.move, player.game)
                    continue
                if result.rule in ("finished", "time-up", "no-race"):
                    return
                reason = result.rule
            # a refused action (a ghost whose run no longer fits) or a storage error: give up
            logger.warning(
                "robot action refused room=%s seat=%s move=%s reply=%s",
                player.room_code,
                player.seat,
                move,
                reason,
            )
            with contextlib.suppress(Refusal):
                await self.races.resign(player)
            return
