"""The tournament's updates and the small pure steps of its server layers.

The updates a store applies atomically to a live tournament (``TournamentStore.update``)
or to a round's room (``RoomStore.update``), the results read from a finished race, the
host act a message asks for, and the round being played as the standings show it. Pure: no
I/O (the layers are :mod:`server.tournament` and :mod:`server.tournament_rounds`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from engine import GameError, replay
from engine.fair import RoundDeal
from protocol import TournamentHost

from ..rooms.room import Events, ProgressState, RoomState, begin_race
from . import (
    SYSTEM,
    RoundResult,
    TournamentError,
    TournamentState,
    announce,
    ban,
    disqualify,
    edit_settings,
    kick,
    pause,
    restore,
    resume,
    round_ranking,
    round_result,
    start,
    start_round,
)
from .live import LiveTournament, RoundRoom, strip_moves
from .state import Event as TEvent
from .state import current_round

__all__ = [
    "PLAYER_ROWS",
    "Act",
    "BeginRoundRace",
    "EndSecret",
    "RecordResults",
    "Recorded",
    "Replan",
    "SecretEnd",
    "StartRound",
    "host_act",
    "live_round",
    "result_of_event",
    "result_of_progress",
]

logger = logging.getLogger("samedeal.server")

#: rows of the standings (and of the round being played) a player is sent
PLAYER_ROWS: Final = 10
_FINAL = {"won": "won", "resigned": "resigned", "timeout": "timeout", "left": "resigned"}


class Replan(Exception):
    """The tournament changed between planning a round and starting it: plan again."""


def result_of_event(
    player: str, deal: str, event: dict[str, Any]
) -> tuple[RoundResult, str] | None:
    """A participant's round result from their ``player_finished`` event (the move list
    replayed on the deal), and the move list as text; None if it cannot be one."""
    status = _FINAL.get(str(event.get("status")))
    text = str(event.get("move_list") or "")
    if status is None or not deal:
        return None
    try:
        game = replay(deal, text.split())
    except GameError:
        return None
    return (
        RoundResult(
            player=player,
            status=status,  # type: ignore[arg-type]
            on_foundations=game.on_foundations,
            total=game.total,
            score=game.score,
            moves=game.moves,
            elapsed_ms=event.get("elapsed_ms"),
        ),
        text,
    )


def result_of_progress(player: str, p: ProgressState) -> RoundResult | None:
    status = _FINAL.get(p.status)
    if status is None:
        return None
    return RoundResult(
        player=player,
        status=status,  # type: ignore[arg-type]
        on_foundations=p.on_foundations,
        total=p.total,
        score=p.score,
        moves=p.moves,
        elapsed_ms=p.elapsed_ms,
    )


# --------------------------------------------------------------------- updates


@dataclass(frozen=True, slots=True)
class Act:
    """A pure act as an update of the live tournament."""

    act: Callable[[TournamentState], list[TEvent]]

    def __call__(self, live: LiveTournament) -> tuple[list[TEvent], None]:
        return self.act(live.state), None


@dataclass(frozen=True, slots=True)
class StartRound:
    """Start the next round with the rooms made for it (planned for ``planned``)."""

    actor: str
    deal: RoundDeal
    now: int
    connected: frozenset[str]
    countdown_ms: int
    planned: tuple[str, ...]
    rooms: tuple[RoundRoom, ...]

    def __call__(self, live: LiveTournament) -> tuple[list[TEvent], None]:
        events = start_round(
            live.state,
            actor=self.actor,
            deal=self.deal,
            now=self.now,
            connected=self.connected,
            countdown_ms=self.countdown_ms,
        )
        current = live.state.rounds[-1]
        if tuple(current.participants) != self.planned:
            raise Replan
        live.rooms[str(current.number)] = list(self.rooms)
        return events, None


@dataclass(frozen=True, slots=True)
class RecordResults:
    """Record results of round ``number`` not recorded yet (others are skipped)."""

    number: int
    results: tuple[RoundResult, ...]
    now: int

    def __call__(self, live: LiveTournament) -> tuple[list[TEvent], int]:
        current = current_round(live.state)
        if current is None or current.number != self.number:
            return [], 0
        events: list[TEvent] = []
        for result in self.results:
            if result.player in current.results or result.player not in current.participants:
                continue
            try:
                events += round_result(
                    live.state, actor=SYSTEM, result=strip_moves(result), now=self.now
                )
            except TournamentError as exc:
                logger.warning("result refused player=%s: %s", result.player, exc.message)
        return events, len(events)


@dataclass(frozen=True, slots=True)
class Recorded:
    """The records store has the state of ``version``, and the races of the rounds up to
    ``round``."""

    version: int
    round: int

    def __call__(self, live: LiveTournament) -> tuple[list[TEvent], None]:
        live.recorded = max(live.recorded, self.version)
        live.recorded_round = max(live.recorded_round, self.round)
        return [], None


@dataclass(frozen=True, slots=True)
class BeginRoundRace:
    """Begin a round room's race, its seats all racing (once: a retry finds it begun)."""

    now: int
    countdown_ms: int
    total: int
    view: dict[str, Any]

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        if room.race:
            return [], False
        racers = [s.seat for s in room.seats]
        return begin_race(
            room, progress, racers, self.now, self.countdown_ms, self.total, self.view
        ), True


class SecretEnd(NamedTuple):
    """A round room's secret as :class:`EndSecret` leaves it: the room's ``race``, the end
    of its secret (``at``, server ms: the round's end, or the deadline the room was made
    with if that came first) and whether that is ``earlier`` than it was."""

    race: int
    at: int
    earlier: bool


@dataclass(frozen=True, slots=True)
class EndSecret:
    """A round room's round ends at ``at`` (server ms). Before the deadline its room was
    made with (everyone done, or the host's ``end_early``), its secret ends then: its deal
    and boards are anyone's from then, as after a deadline; never later (a round that ran
    to its deadline leaves the secret as it was). Value: the secret's end
    (:class:`SecretEnd`), or None for a room that is not a round's."""

    at: int

    def __call__(
        self, room: RoomState, progress: dict[int, ProgressState]
    ) -> tuple[Events, SecretEnd | None]:
        if room.tournament is None or room.secret_until is None:
            return [], None
        earlier = self.at < room.secret_until
        if earlier:
            room.secret_until = self.at
        return [], SecretEnd(room.race, room.secret_until, earlier)


def host_act(
    msg: TournamentHost, actor: str, now: int
) -> Callable[[TournamentState], list[TEvent]]:
    """The pure act a ``tournament_host`` message asks for (a missing field: refused)."""

    def need(value: Any, what: str) -> Any:
        if value is None:
            raise TournamentError("invalid_message", f"{msg.act} needs {what}")
        return value

    def run(s: TournamentState) -> list[TEvent]:
        act = msg.act
        if act == "start":
            return start(s, actor=actor, now=now)
        if act == "pause":
            return pause(s, actor=actor, now=now)
        if act == "resume":
            return resume(s, actor=actor, now=now)
        if act == "edit_settings":
            return edit_settings(s, actor=actor, changes=need(msg.settings, "settings"), now=now)
        if act == "announce":
            return announce(s, actor=actor, text=need(msg.text, "text"), now=now)
        player = need(msg.player, "player")
        if act == "kick":
            return kick(s, actor=actor, player=player, reason=need(msg.reason, "a reason"), now=now)
        if act == "ban":
            reason = need(msg.reason, "a reason")
            return ban(s, actor=actor, player=player, reason=reason, now=now, name=msg.name)
        number = need(msg.round, "round")
        if act == "disqualify":
            reason = need(msg.reason, "a reason")
            return disqualify(s, actor=actor, player=player, round=number, reason=reason, now=now)
        return restore(s, actor=actor, player=player, round=number, now=now)

    return run


def live_round(state: TournamentState) -> tuple[dict[str, Any], dict[str, dict[str, Any]]] | None:
    """The round being played as the standings show it: (shared part, each player's row)."""
    current = current_round(state)
    if current is None:
        return None
    struck = {p.id for p in state.players.values() if p.status == "banned"}
    rows: list[dict[str, Any]] = []
    for placed in round_ranking(current, struck, list(state.players)):
        r = placed.result
        player = state.players.get(r.player)
        rows.append(
            {
                "player": r.player,
                "name": player.name if player is not None else r.player,
                "place": placed.place,
                "status": r.status,
                "on_foundations": r.on_foundations,
                "score": r.score,
                "moves": r.moves,
                "elapsed_ms": r.elapsed_ms,
            }
        )
    shared = {
        "round": current.number,
        "participants": len(current.participants),
        "finished": len(current.results),
        "top": rows[:PLAYER_ROWS],
    }
    return shared, {row["player"]: row for row in rows}
