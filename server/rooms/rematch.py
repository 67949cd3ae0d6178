"""Rematch by invitation: the host offers the next race, each player answers, the race
starts with those who accepted.

The offer, the answers and the start are room updates (:mod:`server.updates`:
``Rematch``, ``AnswerRematch``, ``OfferDeadline``), so the store decides everything: the
race starts exactly once, in the update that finds nobody waited for — the last answer, a
player leaving or going away — or in the first ``OfferDeadline`` to arrive after the
deadline. Every worker with the room arms a timer for the deadline when it sees the offer
(the ``rematch_offered`` event, or a snapshot with the offer when a connection joins);
whichever fires first starts the race, the others find the offer gone.
"""

from __future__ import annotations

import asyncio
import logging

from protocol import Rematch, RematchReply

from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn
from ..store.errors import StoreUnavailable
from ..store.rooms import UnknownRoom
from .race import Race
from .registry import Event, LocalRoom
from .room import Refusal, RematchOffer, RoomState, logged_deal
from .secret import refuse_secret
from .updates import AnswerRematch, OfferDeadline
from .updates import Rematch as RematchUpdate

__all__ = ["Rematches"]

logger = logging.getLogger("samedeal.server")


class Rematches:
    """The rematch layer of a worker: offers, answers, and the deadline timers."""

    def __init__(self, ctx: Context, races: Race) -> None:
        self.ctx = ctx
        self.races = races
        #: room code → (race offered, its deadline timer)
        self._timers: dict[str, tuple[int, asyncio.TimerHandle]] = {}
        ctx.rooms.event_hooks.append(self._on_event)
        ctx.rooms.drop_hooks.append(self._on_drop)

    # ------------------------------------------------------------------ requests

    async def on_rematch(self, conn: Conn, msg: Rematch) -> None:
        """``rematch``: the host offers the next race (it starts at once when there is
        nobody to ask)."""
        room_code, seat = self.races.host_seat(conn)
        config = self.ctx.config
        snap = await self.ctx.store.rooms.snapshot(room_code)
        if snap is None:
            raise Refusal("unknown_room", "no such room (it may have expired)")
        room = snap.room
        # what the rematch would refuse is refused before a solo game's race is resigned
        if msg.deal == "daily" and room.options.rated:
            raise Refusal("rated_daily", "the deal of the day is never rated: choose another deal")
        if msg.deal == "code" and msg.code is not None:
            await refuse_secret(self.ctx, self.races.daily, msg.code)
        restart = _restart(room, seat)
        if restart and msg.deal == "daily":
            self.races.daily.require_players([_player_of(room, seat)])
        # a code is the host's only for kind code: a random deal is never one the host chose
        deal_code, secret = (msg.code if msg.deal == "code" else None), None
        if msg.deal == "random" and room.options.winnable and room.host == seat:
            # a winnable-only room's new deal is proven before it is offered (refused when
            # none can be: nothing changes, a solo game's race goes on)
            deal_code = await self.races.deals.draw(room.game, winnable=True)
        if restart:
            # a solo game's new deal or restart mid-race: the race so far is resigned (it is
            # kept as any race), then the next one is offered as after any race
            await self.races.forfeit(conn)
            snap = await self.ctx.store.rooms.snapshot(room_code)
            if snap is None:
                raise Refusal("unknown_room", "no such room (it may have expired)")
            room = snap.room
        if msg.deal == "daily":
            deal_code, day, until = await self.races.daily.todays_deal(room.game)
            secret = (day, until)
        elif msg.deal == "same" and room.secret_until is not None and now_ms() < room.secret_until:
            secret = (room.daily_day or "", room.secret_until)
        attempts = None
        if secret is not None and room.host == seat and room.phase == "ended" and not room.offer:
            # the host races the offered race unless they say no: their attempt first
            on_day = room.model_copy(update={"daily_day": secret[0], "secret_until": secret[1]})
            self.races.daily.require_players([_player_of(room, seat)])
            attempts = await self.races.daily.begin_attempts(
                on_day, [(seat, _player_of(room, seat))], race_no=room.race + 1
            )
        # alone in a solo game the next deal starts at once; anyone racing it is counted down
        alone = room.solo and all(s.seat == seat for s in room.seats)
        update = RematchUpdate(
            seat,
            msg.deal,
            deal_code,
            now_ms(),
            0 if alone else int(config.countdown * 1000),
            int(config.rematch_wait * 1000),
            secret if msg.deal == "daily" else None,
            attempts,
        )
        snap, started = await self.ctx.store.rooms.update(room_code, update)
        if started:
            logger.info(
                "rematch room=%s race=%s deal=%s", room_code, snap.room.race, logged_deal(snap.room)
            )
        else:
            logger.info("rematch offered room=%s race=%s", room_code, snap.room.race + 1)

    async def on_rematch_reply(self, conn: Conn, msg: RematchReply) -> None:
        """``rematch_reply``: a player accepts the offered race or sits it out."""
        if conn.room_code is None:
            raise Refusal("not_in_room", "join a room first")
        if conn.role != "player" or conn.seat is None:
            raise Refusal("spectator", "spectators do not race")
        room_code = conn.room_code
        attempt = None
        if msg.accept:
            snap = await self.ctx.store.rooms.snapshot(room_code)
            offer = snap.room.offer if snap is not None else None
            if snap is not None and offer is not None and offer.secret_until is not None:
                # accepting the day's deal is taking its cards: the attempt first
                on_day = snap.room.model_copy(
                    update={"daily_day": offer.daily_day, "secret_until": offer.secret_until}
                )
                self.races.daily.require_players([conn.player_id])
                made = await self.races.daily.begin_attempts(
                    on_day, [(conn.seat, conn.player_id)], race_no=offer.race
                )
                attempt = made.get(str(conn.seat))
        update = AnswerRematch(conn.seat, conn.id, msg.race, msg.accept, now_ms(), attempt)
        snap, started = await self.ctx.store.rooms.update(room_code, update)
        logger.info(
            "rematch answered room=%s race=%s seat=%s accept=%s",
            room_code,
            msg.race,
            conn.seat,
            msg.accept,
        )
        if started:
            logger.info(
                "rematch room=%s race=%s deal=%s", room_code, snap.room.race, logged_deal(snap.room)
            )

    # ------------------------------------------------------------------ the deadline

    def armed(self, room_code: str) -> int | None:
        """The race whose offer deadline this worker times for the room, if any."""
        armed = self._timers.get(room_code)
        return armed[0] if armed is not None else None

    def learn(self, local: LocalRoom, offer: RematchOffer | None) -> None:
        """A connection joined ``local`` with a snapshot: time its pending offer, if any."""
        if offer is not None:
            self._arm(local.room_code, offer.race, offer.deadline)

    def _on_event(self, local: LocalRoom, event: Event) -> None:
        kind = event.get("type")
        if kind == "rematch_offered":
            self._arm(local.room_code, int(event["race"]), int(event["deadline"]))
        elif kind == "race_starting":
            self._disarm(local.room_code)

    def _on_drop(self, local: LocalRoom) -> None:
        self._disarm(local.room_code)

    def _arm(self, room_code: str, race: int, deadline: int) -> None:
        armed = self._timers.get(room_code)
        if armed is not None and armed[0] == race:
            return
        self._disarm(room_code)
        delay = max(0.0, (deadline - now_ms()) / 1000)
        handle = asyncio.get_running_loop().call_later(
            delay + 0.01,
            lambda: self.ctx.tasks.spawn(
                self.deadline_passed(room_code, race), f"rematch deadline {room_code}"
            ),
        )
        self._timers[room_code] = (race, handle)

    def _disarm(self, room_code: str) -> None:
        armed = self._timers.pop(room_code, None)
        if armed is not None:
            armed[1].cancel()

    async def deadline_passed(self, room_code: str, race: int) -> None:
        """The time to answer the offer of race ``race`` is up: start it with those who
        accepted (once the store can be reached, if it cannot now)."""
        armed = self._timers.get(room_code)
        if armed is not None and armed[0] == race:
            del self._timers[room_code]
        try:
            snap, started = await self.ctx.store.rooms.update(
                room_code, OfferDeadline(race, now_ms())
            )
        except UnknownRoom:
            return
        except StoreUnavailable:
            self.ctx.when_store_is_back(
                lambda: self.deadline_passed(room_code, race), f"rematch deadline {room_code}"
            )
            return
        if started:
            logger.info(
                "rematch room=%s race=%s deal=%s (deadline)",
                room_code,
                snap.room.race,
                logged_deal(snap.room),
            )
            return
        offer = snap.room.offer
        if offer is not None and offer.race == race and self.ctx.rooms.get(room_code):
            # this worker's clock is behind the one that set the deadline: look again then
            self._arm(room_code, race, offer.deadline)


def _restart(room: RoomState, seat: int) -> bool:
    """Whether the host ``seat``'s rematch is a solo game's new deal or restart mid-race:
    they race alone (a player who joined meanwhile waits for this next race)."""
    return (
        room.solo and room.phase == "running" and room.host == seat and room.participants == [seat]
    )


def _player_of(room: RoomState, seat: int) -> str | None:
    found = room.seat(seat)
    return found.player_id if found is not None else None
