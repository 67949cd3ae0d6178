"""The acts of players and of the round cycle: one pure function each (the host's acts are
in :mod:`.host`).

Every act takes the state, the ``actor`` (an identity, or :data:`~.state.SYSTEM` for what
the server does on its own) and ``now`` (ms since the epoch, server time); it checks who may
do it and in which phase, raising :class:`~.errors.TournamentError` (a code and a sentence)
before it changes anything, then changes the state in place and returns the events to
publish. Every host act — by the host or a co-host — appends to the audit log.

Who may do what:

=================  ============================  =====================================
act                actor                         phase
=================  ============================  =====================================
join               the player                    created; later until round k starts
withdraw, rejoin   the player                    any but finished
kick               host, co-host                 any but finished
ban                host, co-host                 any
start              host, co-host; system at      created
                   the scheduled time
start_round        host, co-host; system when    between
                   the pause is over
round_result       system                        round
end_round          system, when every            round
                   participant is done or at
                   the deadline
pause / resume     host, co-host                 between / paused
end_early          host, co-host                 any but finished
edit_settings      host, co-host (co-hosts:      created
                   only the host)
disqualify,        host, co-host                 once the round has the result
restore
announce           host, co-host                 any
=================  ============================  =====================================

Nobody may kick or ban the host, and only the host may kick or ban a co-host.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from engine import DealCode
from engine.fair import RoundDeal, parse_secret, round_deal, round_deal_problems
from server.codes import clean_name, display_code

from ._checks import (
    HOSTS,
    allow,
    audit,
    close_round,
    done,
    entered,
    finish,
    in_phase,
    left_event,
    room_for_one,
)
from .errors import TournamentError
from .state import (
    SYSTEM,
    Event,
    PlayerState,
    RoundResult,
    RoundState,
    TournamentState,
    due,
    event,
    role_of,
)

__all__ = [
    "COUNTDOWN_MS",
    "end_round",
    "join",
    "next_round_deal",
    "rejoin",
    "round_result",
    "start",
    "start_round",
    "withdraw",
]

#: the countdown of a round, as races have
COUNTDOWN_MS: Final = 5_000


# --------------------------------------------------------------------- players


def join(
    state: TournamentState, *, actor: str, name: str, now: int, key: str | None = None
) -> list[Event]:
    """Enter ``actor`` under ``name``: before the start, or until round ``k`` (the late-join
    round) has started; a private tournament needs its link ``key`` (hosts need none)."""
    if not actor or actor == SYSTEM:
        raise TournamentError("bad_identity", "an identity is needed to join")
    known = state.players.get(actor)
    if known is not None:
        if known.status in ("kicked", "banned"):
            raise TournamentError(known.status, f"you were {known.status}: {known.reason}")
        if known.status == "withdrawn":
            raise TournamentError("withdrawn", "you withdrew: rejoin instead")
        raise TournamentError("already_entered", "you have already joined")
    in_phase(state, ("created", "round", "between", "paused"), "join")
    k = state.settings.late_join_round
    if state.phase != "created" and state.round >= k:
        raise TournamentError("late_join_closed", f"late joining closed when round {k} started")
    if state.settings.private and role_of(state, actor) not in HOSTS and key != state.key:
        raise TournamentError("bad_key", "this tournament is private: its link is needed")
    room_for_one(state)
    player = PlayerState(
        id=actor,
        name=clean_name(name, f"Player {len(state.players) + 1}"),
        joined_at=now,
        joined_round=state.round,
    )
    state.players[actor] = player
    return done(
        state,
        [event(state, "player_joined", player=actor, name=player.name, late=state.round > 0)],
    )


def withdraw(state: TournamentState, *, actor: str, now: int) -> list[Event]:
    """The player leaves; their results so far stay. During a round, ``in_round`` tells the
    server to end their race (and report its result)."""
    player = state.players.get(actor)
    if player is None or player.status != "entered":
        raise TournamentError("not_entered", "you are not entered")
    in_phase(state, ("created", "round", "between", "paused"), "withdraw")
    player.status, player.withdrawn_by = "withdrawn", "self"
    return done(state, [left_event(state, actor, "player_withdrawn", by="self")])


def rejoin(state: TournamentState, *, actor: str, now: int) -> list[Event]:
    """A withdrawn player (by themself or by absences) enters again, any time before the
    end; kicked and banned players cannot."""
    player = state.players.get(actor)
    if player is None or player.status != "withdrawn":
        raise TournamentError("not_withdrawn", "only a withdrawn player can rejoin")
    in_phase(state, ("created", "round", "between", "paused"), "rejoin")
    room_for_one(state)
    player.status, player.withdrawn_by, player.absences = "entered", None, 0
    return done(state, [event(state, "player_rejoined", player=actor)])


def start(state: TournamentState, *, actor: str, now: int) -> list[Event]:
    """Start the tournament: round 1 is due at once (:func:`start_round`)."""
    role = allow(state, actor, {*HOSTS, "system"}, "start the tournament")
    in_phase(state, ("created",), "start")
    if role == "system" and (state.settings.starts_at is None or now < state.settings.starts_at):
        raise TournamentError("not_due", "the scheduled start has not come")
    if not entered(state):
        raise TournamentError("no_players", "nobody has joined")
    state.phase, state.started_at, state.next_round_at = "between", now, now
    if role != "system":
        audit(state, actor, "start", now)
    return done(state, [event(state, "tournament_started", at=now, by=actor)])


def _deal_id(state: TournamentState) -> str:
    """The tournament's id as its rounds' derivation takes it: version 2 as printed in the
    link (``K7QF-2M``, ``fair-deals.md``); version 1 as it was stored (its derivation drops
    the dash either way)."""
    return display_code(state.id) if state.fair == 2 else state.id


def next_round_deal(state: TournamentState) -> RoundDeal:
    """The deal of the next round: the host's listed code, candidate 0, or (winnable only)
    the first candidate proven within the tournament's node budget — slow: run it off the
    event loop, then pass it to :func:`start_round`."""
    r = state.round + 1
    settings = state.settings
    if settings.deals == "list" and settings.deal_codes is not None:
        return RoundDeal(DealCode.parse(settings.deal_codes[r - 1]), 0, None, ())
    return round_deal(
        parse_secret(state.seed),
        _deal_id(state),
        settings.game,
        r,
        winnable_only=settings.deals == "winnable",
        node_budget=state.node_budget,
        max_candidates=state.max_candidates,
        fair=state.fair,
    )


def _check_deal(state: TournamentState, r: int, deal: RoundDeal) -> None:
    settings = state.settings
    if settings.deals == "list" and settings.deal_codes is not None:
        problems = [] if str(deal.code) == settings.deal_codes[r - 1] else ["not the listed deal"]
    else:
        problems = round_deal_problems(
            parse_secret(state.seed),
            _deal_id(state),
            settings.game,
            r,
            deal,
            winnable_only=settings.deals == "winnable",
            max_candidates=state.max_candidates,
            fair=state.fair,
        )
    if problems:
        raise TournamentError("bad_deal", f"not round {r}'s deal: {'; '.join(problems)}")


def start_round(
    state: TournamentState,
    *,
    actor: str,
    deal: RoundDeal,
    now: int,
    connected: Collection[str],
    countdown_ms: int = COUNTDOWN_MS,
) -> list[Event]:
    """Start the next round on ``deal`` (from :func:`next_round_deal`, checked again here).
    Entered players in ``connected`` play; the others are absent, and ``N`` absences in a row
    withdraw them. The round starts at ``now + countdown_ms`` for everyone."""
    role = allow(state, actor, {*HOSTS, "system"}, "start a round")
    in_phase(state, ("between",), "start a round")
    if role == "system" and (state.next_round_at is None or now < state.next_round_at):
        raise TournamentError("not_due", "the next round is not due yet")
    r = state.round + 1
    _check_deal(state, r, deal)
    limit = state.settings.absences_to_withdraw
    participants, absent, events = [], [], []
    for player in entered(state):
        if player.id in connected:
            participants.append(player.id)
            player.absences = 0
            continue
        absent.append(player.id)
        player.absences += 1
        if limit and player.absences >= limit:
            player.status, player.withdrawn_by = "withdrawn", "absences"
            events.append(event(state, "player_withdrawn", player=player.id, by="absences"))
    start_at = now + countdown_ms
    listed = state.settings.deals == "list"
    state.rounds.append(
        RoundState(
            number=r,
            deal=str(deal.code),
            candidate=None if listed else deal.candidate,
            solution=None if deal.solution is None else list(deal.solution),
            skipped=list(deal.skipped),
            start_at=start_at,
            deadline=start_at + state.settings.round_time_limit * 1000,
            participants=participants,
            absent=absent,
        )
    )
    state.phase, state.round, state.next_round_at = "round", r, None
    if role != "system":
        audit(state, actor, "start_round", now, round=r)
    current = state.rounds[-1]
    starting = event(
        state,
        "round_starting",
        round=r,
        start_at=start_at,
        deadline=current.deadline,
        now=now,
        participants=participants,
        absent=absent,
    )
    return done(state, [starting, *events])


def round_result(
    state: TournamentState, *, actor: str, result: RoundResult, now: int
) -> list[Event]:
    """Record a participant's finished race (won, resigned or out of time). The same result
    reported twice is accepted once (a retry after a worker failed); a different one is
    refused."""
    allow(state, actor, {"system"}, "report a result")
    in_phase(state, ("round",), "report a result")
    current = state.rounds[-1]
    if result.player not in current.participants:
        raise TournamentError("not_participant", f"{result.player!r} does not play this round")
    if result.on_foundations > result.total or (
        result.status == "won"
        and (result.elapsed_ms is None or result.on_foundations != result.total)
    ):
        raise TournamentError("bad_result", "a won race has every card home and a time")
    if result.disqualified:
        raise TournamentError("bad_result", "a new result is not disqualified")
    recorded = current.results.get(result.player)
    if recorded is not None:
        if recorded.model_copy(update={"disqualified": False, "disqualify_reason": None}) == result:
            return []
        raise TournamentError("result_recorded", "this player's result is already recorded")
    current.results[result.player] = result
    fields = result.model_dump(exclude={"move_list", "disqualified", "disqualify_reason"})
    return done(state, [event(state, "round_result", round=current.number, **fields)])


def end_round(state: TournamentState, *, actor: str, now: int) -> list[Event]:
    """End the round once every participant is done or the deadline has passed; then the
    pause (or the host) starts the next, or the tournament finishes after the last."""
    allow(state, actor, {"system"}, "end a round")
    in_phase(state, ("round",), "end a round")
    if due(state, now) != "end_round":
        raise TournamentError("not_due", "the round is still being played")
    events = close_round(state, now)
    if state.round >= state.settings.rounds:
        events.append(finish(state, now, early=False))
    else:
        state.phase = "between"
        auto = state.settings.round_start == "auto"
        state.next_round_at = now + state.settings.pause * 1000 if auto else None
        events.append(event(state, "between_rounds", next_round_at=state.next_round_at))
    return done(state, events)
