"""Rematch offers, pure: the host offers the next race, who is asked, who is waited for,
who races, and the one step that starts the race once nobody is waited for (or the time is
up). The room updates of :mod:`server.updates` call these; the store applies each update
atomically, so the race starts exactly once.
"""

from __future__ import annotations

from engine import new_game
from protocol import DealKind, frames

from ..codes import display_code
from .room import Events, ProgressState, Refusal, RematchOffer, RoomState, begin_race

__all__ = ["offer_racers", "offer_rematch", "offer_waiting", "settle"]


def offer_rematch(
    room: RoomState,
    by: int,
    kind: DealKind,
    deal: str,
    now: int,
    wait_ms: int,
    countdown_ms: int,
    *,
    typed: bool = False,
    daily: bool = False,
    secret: tuple[str | None, int | None] = (None, None),
    attempts: dict[str, str] | None = None,
) -> Events:
    """The host ``by`` offers the next race on ``deal`` (of kind ``kind``) after a race:
    every other seat but robots is asked. The ``rematch_offered`` event tells the kind, never
    the code (fair play). Refused while the race runs, before the first race, and while an
    offer waits."""
    if room.host != by:
        raise Refusal("not_host", "only the host can offer a rematch")
    if room.phase == "running":
        raise Refusal("race_running", "a rematch follows a finished race")
    if room.phase == "lobby":
        raise Refusal("no_race_yet", "a rematch follows a finished race: use start")
    if room.offer is not None:
        raise Refusal("rematch_pending", "a rematch is already offered: wait for the answers")
    room.offer = RematchOffer(
        race=room.race + 1,
        kind=kind,
        deal=deal,
        typed=typed,
        daily=daily,
        by=by,
        deadline=now + wait_ms,
        countdown_ms=countdown_ms,
        # a player away now is asked too: back before the start, they may still accept
        asked=sorted(s.seat for s in room.seats if s.seat != by and not s.robot),
        daily_day=secret[0],
        secret_until=secret[1],
        attempts=dict(attempts or {}),
    )
    return [
        frames.rematch_offered(
            room=display_code(room.code),
            race=room.offer.race,
            deal=kind,
            deadline=room.offer.deadline,
            now=now,
            by=by,
        )
    ]


def offer_waiting(room: RoomState) -> list[int]:
    """The seats the pending offer still waits for: asked, seated, connected, no answer."""
    offer = room.offer
    if offer is None:
        return []
    return [
        s.seat
        for s in room.seats
        if s.seat in offer.asked and s.connected and s.seat not in offer.answers
    ]


def offer_racers(room: RoomState) -> list[int]:
    """Who races the pending offer's race if it starts now: connected seats that accepted —
    the seat that offered it and robots unless they said no; nobody is pulled in unasked."""
    offer = room.offer
    if offer is None:
        return []
    return [
        s.seat
        for s in room.seats
        if s.connected and offer.answers.get(s.seat, s.seat == offer.by or s.robot)
    ]


def settle(
    room: RoomState, progress: dict[int, ProgressState], now: int, *, force: bool = False
) -> Events:
    """Start the offered race once nobody is waited for (``force``: the time is up), with
    those who accepted. With nobody to race (the host gone, nobody accepted) the offer
    lapses: no race starts."""
    offer = room.offer
    if offer is None or (not force and offer_waiting(room)):
        return []
    racers = offer_racers(room)
    room.offer = None
    if not racers:
        return []
    room.deal = offer.deal
    room.deal_typed_by = offer.by if offer.typed else None
    room.daily = offer.daily
    room.daily_day, room.secret_until = offer.daily_day, offer.secret_until
    if room.secret_until is not None and now >= room.secret_until:
        room.daily = False  # the day is over meanwhile: an ordinary deal now
        room.daily_day = room.secret_until = None
    attempts = (
        {str(seat): offer.attempts.get(str(seat), "guest") for seat in racers}
        if room.daily_day is not None
        else None
    )
    first = new_game(offer.deal)
    return begin_race(
        room,
        progress,
        racers,
        now,
        offer.countdown_ms,
        first.total,
        first.player_view(),
        attempts,
    )
