"""Races: start, moves, resigning, finishing, the time limit, coalesced progress (a
rematch is offered and answered in :mod:`server.rematch`).

A move takes one path whoever makes it, a person's connection or a robot
(:class:`~server.connection.Player`): :meth:`Race.move` checks it with the seat's game (the
engine), stores it with its ``progress`` event in one backend call (``Backend.append``)
and only then answers :class:`MoveAccepted`. The event reaches every worker's connections
through :meth:`server.rooms.Rooms.deliver`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from engine import GameError, IllegalMoveError, card_name, replay
from engine.game import Game
from protocol import MoveRequest, Resign, Start, frames

from .backend import Fenced, Health, LogConflict, OutcomeUnknown, Snapshot, StoreUnavailable
from .config import now_ms
from .connection import Conn, HeldProgress, Player
from .context import Context
from .daily import Daily
from .room import (
    ProgressState,
    Refusal,
    RoomState,
    display_code,
    logged_deal,
    progress_body,
)
from .rooms import Event, LocalRoom
from .updates import (
    EndIfDone,
    StartRace,
)

__all__ = ["REMINDERS", "MoveAccepted", "MoveRejected", "Race"]

logger = logging.getLogger("samedeal.server")

REMINDERS: dict[str, str] = {
    "no-race": "you are not racing: wait for the host to start the next race",
    "finished": "your race is over",
    "not-started": "the race has not started yet",
    "time-up": "the time limit has passed",
    "stale": "your board changed elsewhere: look again",
}
"""The reminders of the rule ids a move gets for its timing (the engine has the rest)."""


@dataclass(slots=True, frozen=True)
class MoveAccepted:
    """A move was stored: as resolved, the cards it turned up, the board's changes."""

    move: str
    revealed: list[str]
    changes: dict[str, Any]


@dataclass(slots=True, frozen=True)
class MoveRejected:
    """A move was refused: the rule it broke and its reminder."""

    rule: str
    reminder: str


def _rejected(rule: str) -> MoveRejected:
    return MoveRejected(rule, REMINDERS[rule])


def progress_state(
    race: int, seat: int, status: str, game: Game, elapsed: int | None
) -> ProgressState:
    """A seat's progress as its game stands."""
    return ProgressState(
        race=race,
        seat=seat,
        status=status,
        on_foundations=game.on_foundations,
        total=game.total,
        score=game.score,
        moves=game.moves,
        elapsed_ms=elapsed,
    )


def finished_body(
    room_code: str,
    race: int,
    seat: int,
    status: str,
    elapsed: int,
    game: Game,
    times: list[int | None],
    secret_until: int | None,
) -> frames.PlayerFinishedBody:
    """The ``player_finished`` event of a seat whose game is ``game`` (``secret_until``:
    the day's secret deal is told to nobody before then)."""
    known = len(times) == len(game.actions) and None not in times
    return frames.player_finished(
        room=display_code(room_code),
        race=race,
        seat=seat,
        status=status,
        elapsed_ms=elapsed,
        move_list=game.move_list(),
        board=game.player_view(),
        deal=str(game.code),  # delivered to the finished player only
        times_ms=[t for t in times if t is not None] if known else None,
        secret_until=secret_until,
    )


class Race:
    """The race layer of a worker."""

    def __init__(self, ctx: Context, daily: Daily) -> None:
        self.ctx = ctx
        self.daily = daily
        #: players whose held progress could not be stored (the store was unreachable):
        #: sent again once it is back
        self._unsent: set[Player] = set()
        #: told of each race that ends, once, by the worker that ended it
        self.end_hooks: list[Callable[[str, Snapshot], Coroutine[Any, Any, None]]] = []
        ctx.rooms.event_hooks.append(self._on_event)
        ctx.backend.health_hooks.append(self._on_health)

    def _on_health(self, health: Health) -> None:
        if not health.ok:
            return
        unsent, self._unsent = self._unsent, set()
        for player in unsent:
            if player.outbox.held is not None:
                self.ctx.tasks.spawn(self.send_held(player, leaving=True), "progress again")

    # ------------------------------------------------------------------ state

    def host_seat(self, player: Player) -> tuple[str, int]:
        """The room and seat of ``player``, who must hold a seat (the host checks it)."""
        if player.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        if player.role != "player" or player.seat is None:
            raise Refusal("not_host", "only the host can do that")
        return player.room_code, player.seat

    async def load_game(self, player: Player, race: int, deal_code: str) -> Game:
        """Rebuild the seat's game from its stored move log."""
        assert player.room_code is not None and player.seat is not None
        moves = await self.ctx.backend.moves(player.room_code, race, player.seat)
        player.game = replay(deal_code, moves)
        player.game_race = race
        return player.game

    def _racing(self, player: Player) -> tuple[str, int, LocalRoom] | str:
        """The room, seat and local room of a player allowed to act now, or the rule id that
        refuses the action."""
        if player.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        if player.role != "player" or player.seat is None:
            raise Refusal("spectator", "spectators cannot play")
        lr = self.ctx.rooms[player.room_code]
        if lr.race == 0 or player.seat not in lr.participants:
            return "no-race"
        if lr.phase != "running" or player.seat in lr.finished:
            return "finished"
        now = now_ms()
        if lr.start_at is not None and now < lr.start_at:
            return "not-started"
        if lr.deadline is not None and now >= lr.deadline:
            self.ctx.tasks.spawn(self.expire(player.room_code, lr.race), "expire")
            return "time-up"
        return player.room_code, player.seat, lr

    # ------------------------------------------------------------------ requests

    async def on_start(self, conn: Conn, msg: Start) -> None:
        """``start``: the host starts the first race (on the day's deal, the racers'
        attempts are recorded first: the race shows its cards)."""
        room_code, seat = self.host_seat(conn)
        countdown = int(self.ctx.config.countdown * 1000)
        attempts = await self._first_attempts(room_code, seat)
        snap, _ = await self.ctx.backend.update_room(
            room_code, StartRace(seat, now_ms(), countdown, attempts)
        )
        logger.info(
            "race started room=%s race=%s deal=%s",
            room_code,
            snap.room.race,
            logged_deal(snap.room),
        )

    async def _first_attempts(self, room_code: str, host: int) -> dict[str, str] | None:
        """Before the first race of a room on the day's deal starts: the racers' attempts
        of the day (the race shows its cards). None for any other room."""
        snap = await self.ctx.backend.snapshot(room_code)
        if snap is None:
            raise Refusal("unknown_room", "no such room (it may have expired)")
        room = snap.room
        if room.secret_until is None or now_ms() >= room.secret_until:
            return None
        # what the start would refuse is refused before any attempt is made
        if room.host != host:
            raise Refusal("not_host", "only the host can start the race")
        if room.phase == "running":
            raise Refusal("race_running", "the race is already running")
        if room.phase == "ended":
            raise Refusal("race_over", "the race is over: ask for a rematch")
        racers = [(s.seat, s.player_id) for s in room.seats if s.connected]
        return await self.daily.begin_attempts(room, racers, race_no=room.race + 1)

    async def on_move(self, conn: Conn, msg: MoveRequest) -> None:
        """``move``: answered with ``ack`` or ``rejected``."""
        result = await self.move(conn, msg.move)
        if isinstance(result, MoveAccepted):
            await conn.send(
                frames.ack(
                    id=msg.id, move=result.move, revealed=result.revealed, changes=result.changes
                )
            )
        else:
            await conn.send(
                frames.rejected(
                    id=msg.id, move=msg.move, rule=result.rule, reminder=result.reminder
                )
            )

    async def on_resign(self, conn: Conn, msg: Resign) -> None:
        """``resign``: answered with ``ok``."""
        await self.resign(conn)

    # ------------------------------------------------------------------ moves

    async def move(self, player: Player, text: str) -> MoveAccepted | MoveRejected:
        """Check, store and (once stored) accept one action of ``player``; raises
        :class:`Refusal` when it cannot be stored (nothing was applied then)."""
        racing = self._racing(player)
        if isinstance(racing, str):
            self.ctx.metrics.moves_rejected_total += 1
            return _rejected(racing)
        room_code, seat, lr = racing
        race = lr.race
        game = player.game
        if game is None or player.game_race != race:
            game = await self.load_game(player, race, lr.deal_code)
        try:
            outcome = game.push(text)
        except IllegalMoveError as exc:
            self.ctx.metrics.moves_rejected_total += 1
            return MoveRejected(exc.rule, exc.reminder)
        except GameError as exc:
            self.ctx.metrics.moves_rejected_total += 1
            return MoveRejected("notation", str(exc))
        backend = self.ctx.backend
        elapsed = now_ms() - lr.start_at if lr.start_at is not None else 0
        outbox = player.outbox
        clock = asyncio.get_running_loop().time()
        progress: ProgressState | None = None
        events: list[frames.EventBody]
        if game.won:
            progress = progress_state(race, seat, "won", game, elapsed)
            times = [*await backend.times(room_code, race, seat), elapsed]
            won = finished_body(room_code, race, seat, "won", elapsed, game, times, lr.secret_until)
            events = [progress_body(room_code, progress, "won", elapsed), won]
        elif clock - outbox.sent_at >= self.ctx.config.progress_interval:
            # the first move after a quiet spell, or after the interval: shows at once, and
            # its state supersedes a held one (the outbox timer then has nothing to send)
            if outbox.timer is not None:
                outbox.timer.cancel()
                outbox.timer = None
            outbox.held = None
            progress = progress_state(race, seat, "playing", game, None)
            events = [progress_body(room_code, progress, "playing", elapsed)]
            outbox.sent_at = clock
        else:
            events = []  # held: the outbox timer sends the latest state
        try:
            async with outbox.gate:  # the outbox timer may be storing a held progress
                stored = await backend.append(
                    room_code,
                    race,
                    seat,
                    move=str(outcome.move),
                    # stored with its event: a held one goes with the outbox's
                    progress=progress,
                    events=events,
                    index=len(game.actions) - 1,
                    at=elapsed,
                    epoch=player.epoch,
                )
                if stored is not None and not events:
                    self._hold(
                        player,
                        HeldProgress(
                            room_code,
                            race,
                            seat,
                            game.on_foundations,
                            game.total,
                            game.score,
                            game.moves,
                            elapsed,
                        ),
                    )
        except LogConflict:
            player.game = None  # another connection of this seat moved: reload from the log
            self.ctx.metrics.moves_rejected_total += 1
            return _rejected("stale")
        except Fenced:
            self._replaced(player)
            raise Refusal("replaced", "a newer connection took this seat") from None
        except OutcomeUnknown:
            # stored or not, nobody can tell until the store answers again: the client must
            # not be told either way; it resumes and sees its board as stored
            player.game = None
            self.ctx.metrics.moves_unknown_total += 1
            if isinstance(player, Conn):
                self.ctx.rooms.close(player, 1011, "store unreachable: resume")
            raise Refusal("storage", "the store did not answer: resume to see your board") from None
        except StoreUnavailable:
            player.game = None  # the local game is ahead of the log: rebuild it
            self.ctx.metrics.moves_unstored_total += 1
            raise Refusal(
                "storage", "the move was not stored (the store cannot be reached): send it again"
            ) from None
        except Exception:
            player.game = None  # the local game is ahead of the log: rebuild it
            logger.exception("could not store move room=%s seat=%s", room_code, seat)
            raise Refusal("storage", "the move was not stored: send it again") from None
        if stored is None:
            player.game = None
            lr.finished.add(seat)
            self.ctx.metrics.moves_rejected_total += 1
            return _rejected("finished")
        self.ctx.metrics.moves_accepted_total += 1
        if game.won:
            logger.info("player won room=%s seat=%s moves=%s", room_code, seat, game.moves)
            self.ctx.tasks.spawn(self.check_end(room_code), f"race end {room_code}")
        return MoveAccepted(
            str(outcome.move),
            [card_name(c) for c in outcome.revealed],
            game.view_changes(outcome.move),
        )

    def _replaced(self, player: Player) -> None:
        """The store refused ``player``'s write: a resume gave the seat a newer epoch. The
        old holder is done (closed with 4000, as a ``kick`` would have done)."""
        logger.info(
            "write of a replaced connection refused room=%s seat=%s conn=%s",
            player.room_code,
            player.seat,
            player.id,
        )
        player.game = None
        player.seat = None
        player.role = None
        if isinstance(player, Conn):
            self.ctx.rooms.close(player, 4000, "replaced by a new connection")

    async def resign(self, player: Player) -> None:
        """Give up the race; raises :class:`Refusal` when the player is not racing."""
        racing = self._racing(player)
        if isinstance(racing, str):
            if racing == "not-started":
                racing = "no-race"
            raise Refusal(racing.replace("-", "_"), REMINDERS[racing])
        room_code, seat, lr = racing
        game = player.game
        if game is None or player.game_race != lr.race:
            game = await self.load_game(player, lr.race, lr.deal_code)
        elapsed = now_ms() - (lr.start_at or 0)
        try:
            done = await self.finish(
                room_code,
                lr.race,
                seat,
                "resigned",
                elapsed,
                game,
                epoch=player.epoch,
                secret_until=lr.secret_until,
            )
        except Fenced:
            self._replaced(player)
            raise Refusal("replaced", "a newer connection took this seat") from None
        except StoreUnavailable:
            raise Refusal("storage", "the store cannot be reached: try again") from None
        if not done:
            raise Refusal("finished", "your race is over")
        logger.info("player resigned room=%s seat=%s", room_code, seat)
        await self.check_end(room_code)

    async def forfeit(self, player: Player) -> None:
        """Resign ``player`` if they race (the countdown included): they are leaving the
        room. Nothing happens for a player who is not racing or has finished."""
        room_code, seat = player.room_code, player.seat
        lr = self.ctx.rooms.get(room_code or "")
        if room_code is None or seat is None or lr is None:
            return
        if lr.phase != "running" or seat not in lr.participants or seat in lr.finished:
            return
        game = player.game
        if game is None or player.game_race != lr.race:
            game = await self.load_game(player, lr.race, lr.deal_code)
        elapsed = max(0, now_ms() - (lr.start_at or 0))
        try:
            done = await self.finish(
                room_code, lr.race, seat, "resigned", elapsed, game, epoch=player.epoch
            )
        except Fenced:
            self._replaced(player)
            raise Refusal("replaced", "a newer connection took this seat") from None
        if done:
            logger.info("player resigned leaving room=%s seat=%s", room_code, seat)
            await self.check_end(room_code)

    # ------------------------------------------------------------------ held progress

    def _hold(self, player: Player, held: HeldProgress) -> None:
        """Keep the latest progress of a player for the outbox timer."""
        outbox = player.outbox
        outbox.held = held
        if outbox.timer is None:
            # a little after the interval: a player still moving then sends the progress
            # with that move; the timer is for one who stopped (one store call less, and no
            # move waiting at the gate behind a held progress)
            outbox.timer = asyncio.get_running_loop().call_at(
                outbox.sent_at + self.ctx.config.progress_interval * 1.25,
                lambda: self.ctx.tasks.spawn(self.send_held(player), "progress"),
            )

    async def flush_held(self, player: Player) -> None:
        """Send a held progress now (the player leaves: their last moves are shown before
        they are shown disconnected)."""
        outbox = player.outbox
        if outbox.held is None:
            return
        if outbox.timer is not None:
            outbox.timer.cancel()
            outbox.timer = None
        await self.send_held(player, leaving=True)

    async def send_held(self, player: Player, *, leaving: bool = False) -> None:
        """Store and publish the latest held ``progress`` of a player (a move of theirs may
        be in flight: the gate lets it land first, so the event is its latest state). A
        status change meanwhile (won, resigned, disconnected) makes the store refuse it."""
        outbox = player.outbox
        async with outbox.gate:
            outbox.timer = None
            held, outbox.held = outbox.held, None
            if held is None or player.room_code != held.room_code or player.seat != held.seat:
                return
            if player.closing and not leaving:
                return
            progress = ProgressState(
                race=held.race,
                seat=held.seat,
                status="playing",
                on_foundations=held.on_foundations,
                total=held.total,
                score=held.score,
                moves=held.moves,
            )
            outbox.sent_at = asyncio.get_running_loop().time()
            body = progress_body(held.room_code, progress, "playing", held.elapsed)
            try:
                await self.ctx.backend.append(
                    held.room_code,
                    held.race,
                    held.seat,
                    move=None,
                    progress=progress,
                    events=[body],
                    epoch=player.epoch,
                )
            except Fenced:
                self._replaced(player)
            except StoreUnavailable:
                # kept, to be sent once the store is back (unless a newer one is held)
                if outbox.held is None:
                    outbox.held = held
                self._unsent.add(player)
            except Exception:
                logger.warning(
                    "could not send progress room=%s seat=%s",
                    held.room_code,
                    held.seat,
                    exc_info=True,
                )

    # ------------------------------------------------------------------ finishing

    async def finish(
        self,
        room_code: str,
        race: int,
        seat: int,
        status: str,
        elapsed: int,
        game: Game,
        *,
        epoch: int | None = None,
        secret_until: int | None = None,
    ) -> bool:
        """Store a seat's final status with its last progress and ``player_finished``;
        False if the seat was no longer racing. ``epoch``: the holder's (a player's own
        act); None for the server's (time-out, grace period)."""
        progress = progress_state(race, seat, status, game, elapsed)
        times = await self.ctx.backend.times(room_code, race, seat)
        events: list[frames.EventBody] = [
            progress_body(room_code, progress, status, elapsed),
            finished_body(room_code, race, seat, status, elapsed, game, times, secret_until),
        ]
        stored = await self.ctx.backend.append(
            room_code, race, seat, move=None, progress=progress, events=events, epoch=epoch
        )
        return stored is not None

    async def finish_from_log(
        self, room_code: str, room: RoomState, seat: int, status: str, at: int
    ) -> bool:
        """Finish a seat whose game is not on this worker (time-out, a player gone), from
        its stored move log."""
        moves = await self.ctx.backend.moves(room_code, room.race, seat)
        game = replay(room.deal, moves)
        elapsed = max(0, min(at, room.deadline or at) - (room.start_at or at))
        return await self.finish(
            room_code, room.race, seat, status, elapsed, game, secret_until=room.secret_until
        )

    async def check_end(self, room_code: str) -> None:
        """End the race if every participant has finished."""
        snap, ended = await self.ctx.backend.update_room(room_code, EndIfDone(now_ms()))
        if ended:
            logger.info("race ended room=%s race=%s", room_code, snap.room.race)
            for hook in self.end_hooks:
                self.ctx.tasks.spawn(hook(room_code, snap), f"race ended {room_code}")

    # ------------------------------------------------------------------ time limit

    def _on_event(self, lr: LocalRoom, event: Event) -> None:
        kind = event.get("type")
        if kind == "race_starting":
            self.arm_timer(lr)
        elif kind == "race_ended" and lr.timer is not None and lr.phase == "ended":
            lr.timer.cancel()
            lr.timer = None

    def arm_timer(self, lr: LocalRoom) -> None:
        """Time the race out at its deadline (every worker with a connection in the room
        does; the store makes the outcome the same)."""
        if lr.timer is not None:
            lr.timer.cancel()
            lr.timer = None
        if lr.phase != "running" or lr.deadline is None:
            return
        delay = max(0.0, (lr.deadline - now_ms()) / 1000)
        room_code, race = lr.room_code, lr.race
        lr.timer = asyncio.get_running_loop().call_later(
            delay + 0.01,
            lambda: self.ctx.tasks.spawn(self.expire(room_code, race), f"expire {room_code}"),
        )

    async def expire(self, room_code: str, race: int) -> None:
        """The time limit of race ``race`` has passed: time out whoever still plays."""
        snap = await self.ctx.backend.snapshot(room_code)
        if snap is None or snap.room.race != race or snap.room.phase != "running":
            return
        room = snap.room
        if room.deadline is None or now_ms() < room.deadline:
            return
        for seat, p in sorted(snap.progress.items()):
            if p.race == race and p.status == "playing":
                await self.finish_from_log(room_code, room, seat, "timeout", room.deadline)
        await self.check_end(room_code)
