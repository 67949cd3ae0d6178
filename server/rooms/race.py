"""Races: start, moves, resigning (finishing and the time limit are in
:mod:`server.race_end`, coalesced progress in :mod:`server.progress`, a rematch is offered and
answered in :mod:`server.rematch`).

A move takes one path whoever makes it, a person's connection or a robot
(:class:`~server.connection.Player`): :meth:`Race.move` checks it with the seat's game (the
engine), stores it with its ``progress`` event in one store call (``RoomStore.append``)
and only then answers :class:`MoveAccepted`. The event reaches every worker's connections
through :meth:`server.rooms.Rooms.deliver`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from engine import GameError, IllegalMoveError, card_name, replay
from engine.game import Game
from protocol import FinalStatus, MoveRequest, Resign, Start, frames

from ..config import now_ms
from ..context import Context
from ..daily.challenge import Daily
from ..edge.connection import Conn, Player
from ..store.errors import OutcomeUnknown, StoreUnavailable
from ..store.rooms import Fenced, LogConflict
from .deals import RandomDeals
from .finish import RaceEnd, finished_body, progress_state
from .progress import Progress
from .registry import LocalRoom
from .room import Refusal, logged_deal, progress_body
from .updates import StartRace

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


class Race:
    """The race layer of a worker."""

    def __init__(
        self,
        ctx: Context,
        daily: Daily,
        end: RaceEnd,
        progress: Progress,
        deals: RandomDeals,
    ) -> None:
        self.ctx = ctx
        self.daily = daily
        self.end = end
        self.progress = progress
        #: random deals, proven winnable for a room that asks (the lobby's, rematches')
        self.deals = deals

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
        moves = await self.ctx.store.rooms.moves(player.room_code, race, player.seat)
        player.game = replay(deal_code, moves)
        player.game_race = race
        return player.game

    def _racing(
        self, player: Player, *, countdown: bool = False
    ) -> tuple[str, int, LocalRoom] | str:
        """The room, seat and local room of a player allowed to act now, or the rule id that
        refuses the action (``countdown``: allowed before the start too)."""
        if player.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        if player.role != "player" or player.seat is None:
            raise Refusal("spectator", "spectators cannot play")
        local = self.ctx.rooms[player.room_code]
        if local.race == 0 or player.seat not in local.participants:
            return "no-race"
        if local.phase != "running" or player.seat in local.finished:
            return "finished"
        now = now_ms()
        if local.start_at is not None and now < local.start_at and not countdown:
            return "not-started"
        if local.deadline is not None and now >= local.deadline:
            self.ctx.tasks.spawn(self.end.expire(player.room_code, local.race), "expire")
            return "time-up"
        return player.room_code, player.seat, local

    # ------------------------------------------------------------------ requests

    async def on_start(self, conn: Conn, msg: Start) -> None:
        """``start``: the host starts the first race."""
        await self.start(conn, int(self.ctx.config.countdown * 1000))

    async def start(self, player: Player, countdown_ms: int) -> None:
        """The host starts the room's first race ``countdown_ms`` from now (on the day's
        deal, the racers' attempts are recorded first: the race shows its cards)."""
        room_code, seat = self.host_seat(player)
        attempts = await self._first_attempts(room_code, seat)
        snap, _ = await self.ctx.store.rooms.update(
            room_code, StartRace(seat, now_ms(), countdown_ms, attempts)
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
        snap = await self.ctx.store.rooms.snapshot(room_code)
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
        self.daily.require_players(s.player_id for s in room.seats if s.connected and not s.robot)
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
        room_code, seat, local = racing
        race = local.race
        game = player.game
        if game is None or player.game_race != race:
            game = await self.load_game(player, race, local.deal_code)
        try:
            outcome = game.push(text)
        except IllegalMoveError as exc:
            self.ctx.metrics.moves_rejected_total += 1
            return MoveRejected(exc.rule, exc.reminder)
        except GameError as exc:
            self.ctx.metrics.moves_rejected_total += 1
            return MoveRejected("notation", str(exc))
        store = self.ctx.store
        elapsed = now_ms() - local.start_at if local.start_at is not None else 0
        events: list[frames.EventBody]
        if game.won:
            progress = progress_state(race, seat, "won", game, elapsed)
            times = [*await store.rooms.times(room_code, race, seat), elapsed]
            won = finished_body(
                room_code, race, seat, "won", elapsed, game, times, local.secret_until
            )
            events = [progress_body(room_code, progress, "won", elapsed), won]
        else:
            progress = progress_state(race, seat, "playing", game, None)
            shown = self.progress.due(player)
            # held otherwise: the outbox timer sends the latest state
            events = [progress_body(room_code, progress, "playing", elapsed)] if shown else []
        try:
            async with player.outbox.gate:  # the outbox timer may be storing a held progress
                stored = await store.rooms.append(
                    room_code,
                    race,
                    seat,
                    move=str(outcome.move),
                    # stored with its event: a held one goes with the outbox's
                    progress=progress if events else None,
                    events=events,
                    index=len(game.actions) - 1,
                    at=elapsed,
                    epoch=player.epoch,
                )
                if stored is not None and not events:
                    self.progress.hold(player, room_code, progress, elapsed)
        except LogConflict:
            player.game = None  # another connection of this seat moved: reload from the log
            self.ctx.metrics.moves_rejected_total += 1
            return _rejected("stale")
        except Fenced:
            self.ctx.rooms.replaced(player)
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
            game.pop()  # certainly not stored: the game goes back to the log
            self.ctx.metrics.moves_unstored_total += 1
            raise Refusal(
                "storage", "the move was not stored (the store cannot be reached): send it again"
            ) from None
        except Exception:
            player.game = None  # the local game is ahead of the log: rebuild it
            logger.exception("could not store move room=%s seat=%s", room_code, seat)
            raise Refusal("storage", "the move was not stored: send it again") from None
        if stored is None:
            game.pop()  # the seat no longer races: nothing was stored
            local.finished.add(seat)
            self.ctx.metrics.moves_rejected_total += 1
            return _rejected("finished")
        self.ctx.metrics.moves_accepted_total += 1
        if game.won:
            logger.info("player won room=%s seat=%s moves=%s", room_code, seat, game.moves)
            self.ctx.tasks.spawn(self.end.check_end(room_code), f"race end {room_code}")
        return MoveAccepted(
            str(outcome.move),
            [card_name(c) for c in outcome.revealed],
            game.view_changes(outcome.move),
        )

    async def resign(self, player: Player) -> None:
        """Give up the race, the countdown included (a page shows the board by its estimate
        of the server's clock: a resign may arrive an instant before the start, and a player
        may give up before it as leaving does); raises :class:`Refusal` when the player is
        not racing."""
        racing = self._racing(player, countdown=True)
        if isinstance(racing, str):
            raise Refusal(racing.replace("-", "_"), REMINDERS[racing])
        room_code, seat, local = racing
        game = player.game
        if game is None or player.game_race != local.race:
            game = await self.load_game(player, local.race, local.deal_code)
        elapsed = max(0, now_ms() - (local.start_at or 0))
        try:
            done = await self.end.finish(
                room_code,
                local.race,
                seat,
                "resigned",
                elapsed,
                game,
                epoch=player.epoch,
                secret_until=local.secret_until,
            )
        except Fenced:
            self.ctx.rooms.replaced(player)
            raise Refusal("replaced", "a newer connection took this seat") from None
        except StoreUnavailable:
            raise Refusal("storage", "the store cannot be reached: try again") from None
        if not done:
            raise Refusal("finished", "your race is over")
        logger.info("player resigned room=%s seat=%s", room_code, seat)
        await self.end.check_end(room_code)

    async def forfeit(self, player: Player) -> None:
        """Resign ``player`` if they race (the countdown included): they are leaving the
        room — in a rated room they have ``left``, abandoning the race (docs/ratings.md).
        Nothing happens for a player who is not racing or has finished."""
        room_code, seat = player.room_code, player.seat
        local = self.ctx.rooms.get(room_code or "")
        if room_code is None or seat is None or local is None:
            return
        if local.phase != "running" or seat not in local.participants or seat in local.finished:
            return
        game = player.game
        if game is None or player.game_race != local.race:
            game = await self.load_game(player, local.race, local.deal_code)
        elapsed = max(0, now_ms() - (local.start_at or 0))
        status: FinalStatus = "left" if local.rated else "resigned"
        try:
            done = await self.end.finish(
                room_code, local.race, seat, status, elapsed, game, epoch=player.epoch
            )
        except Fenced:
            self.ctx.rooms.replaced(player)
            raise Refusal("replaced", "a newer connection took this seat") from None
        if done:
            logger.info("player %s leaving room=%s seat=%s", status, room_code, seat)
            await self.end.check_end(room_code)
