"""The host's acts: kick, ban, pause, resume, end early, edit settings, disqualify,
restore, announce. The host or a co-host may do each (see the table in :mod:`.acts`); every
one is kept in the audit log the tournament page shows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from server.codes import clean_name

from ._checks import (
    HOSTS,
    allow,
    audit,
    check_text,
    close_round,
    done,
    entered,
    finish,
    host_target,
    in_phase,
    left_event,
)
from .errors import TournamentError
from .settings import SettingsError, parse_settings
from .state import SYSTEM, Event, PlayerState, RoundResult, TournamentState, event

__all__ = [
    "ANNOUNCEMENT_LENGTH",
    "REASON_LENGTH",
    "announce",
    "ban",
    "disqualify",
    "edit_settings",
    "end_early",
    "kick",
    "pause",
    "restore",
    "resume",
]

REASON_LENGTH: Final = 200
ANNOUNCEMENT_LENGTH: Final = 500
_LIVE: Final = ("created", "round", "between", "paused")


def kick(state: TournamentState, *, actor: str, player: str, reason: str, now: int) -> list[Event]:
    """Put a player out for the rest of the tournament (their results stay); they see the
    ``reason`` and cannot rejoin with the same identity."""
    allow(state, actor, HOSTS, "kick a player")
    in_phase(state, _LIVE, "kick a player")
    reason = check_text(reason, "the reason", REASON_LENGTH)
    target = host_target(state, actor, player, "kick")
    if target is None:
        raise TournamentError("no_such_player", f"{player!r} has not joined")
    target.status, target.reason, target.withdrawn_by = "kicked", reason, None
    audit(state, actor, "kick", now, player=player, reason=reason)
    return done(state, [left_event(state, player, "player_kicked", reason=reason)])


def ban(
    state: TournamentState,
    *,
    actor: str,
    player: str,
    reason: str,
    now: int,
    name: str | None = None,
) -> list[Event]:
    """Put a player out and strike all their results (a banned player is left out of the
    standings); an identity that has not joined can be banned before it does. Allowed after
    the end too, like disqualifying."""
    allow(state, actor, HOSTS, "ban a player")
    reason = check_text(reason, "the reason", REASON_LENGTH)
    target = host_target(state, actor, player, "ban")
    if not player or player == SYSTEM:
        raise TournamentError("bad_identity", f"cannot ban {player!r}")
    if target is None:
        target = PlayerState(
            id=player,
            name=clean_name(name or "", player[:24]),
            status="banned",
            joined_at=now,
            joined_round=state.round,
        )
        state.players[player] = target
    target.status, target.reason, target.withdrawn_by = "banned", reason, None
    audit(state, actor, "ban", now, player=player, reason=reason)
    return done(state, [left_event(state, player, "player_banned", reason=reason)])


def pause(state: TournamentState, *, actor: str, now: int) -> list[Event]:
    """Hold the tournament between rounds: no round starts until :func:`resume`."""
    allow(state, actor, HOSTS, "pause the tournament")
    in_phase(state, ("between",), "pause")
    state.phase, state.next_round_at = "paused", None
    audit(state, actor, "pause", now)
    return done(state, [event(state, "tournament_paused", at=now)])


def resume(state: TournamentState, *, actor: str, now: int) -> list[Event]:
    """Go on after a pause: the next round is due at once (by hand if rounds start by hand)."""
    allow(state, actor, HOSTS, "resume the tournament")
    in_phase(state, ("paused",), "resume")
    state.phase = "between"
    state.next_round_at = now if state.settings.round_start == "auto" else None
    audit(state, actor, "resume", now)
    return done(state, [event(state, "tournament_resumed", next_round_at=state.next_round_at)])


def end_early(
    state: TournamentState, *, actor: str, now: int, reason: str | None = None
) -> list[Event]:
    """Finish now. A round being played ends as at its deadline (the server reports each
    unfinished race's progress first); the rounds not played are not played; the seed is
    revealed as after a last round."""
    allow(state, actor, HOSTS, "end the tournament")
    in_phase(state, _LIVE, "end the tournament")
    if reason is not None:
        reason = check_text(reason, "the reason", REASON_LENGTH)
    if state.phase == "round":
        state.rounds[-1].stopped_early = True  # its unfinished races were stopped, not slow
    events = close_round(state, now) if state.phase == "round" else []
    audit(state, actor, "end_early", now, reason=reason, round=state.round or None)
    events.append(finish(state, now, early=True))
    return done(state, events)


def edit_settings(
    state: TournamentState, *, actor: str, changes: Mapping[str, Any], now: int
) -> list[Event]:
    """Change settings before the start: the changed fields are checked with the rest, and
    refused whole if any is out of range (never clamped). Only the host changes co-hosts."""
    role = allow(state, actor, HOSTS, "edit the settings")
    in_phase(state, ("created",), "edit the settings")
    if not isinstance(changes, Mapping) or not changes:
        raise SettingsError("settings", "no change given")
    if "co_hosts" in changes and role != "host":
        raise TournamentError("not_allowed", "only the host may name co-hosts")
    old = state.settings.model_dump()
    new = parse_settings({**old, **changes})
    if state.host in new.co_hosts:
        raise SettingsError("co_hosts", "the host is named as a co-host")
    if len(entered(state)) > new.max_players:
        raise SettingsError(
            "max_players", f"{len(entered(state))} players have joined, more than {new.max_players}"
        )
    if new.starts_at is not None and new.starts_at < now and new.starts_at != old["starts_at"]:
        raise SettingsError("starts_at", "the scheduled start is in the past")
    dumped = new.model_dump()
    changed = {k: dumped[k] for k in dumped if dumped[k] != old[k]}
    if not changed:
        return []
    state.settings = new
    # the audit log and the event are public: a host's list of deals is not shown in them
    shown = new.model_dump(mode="json", include=set(changed) - {"deal_codes"})
    detail = {k: [old[k], v] for k, v in changed.items() if k != "deal_codes"}
    if "deal_codes" in changed:
        detail["deal_codes"] = ["(hidden)", "(hidden)"]
    audit(state, actor, "edit_settings", now, detail=detail)
    return done(state, [event(state, "settings_edited", changes=shown, fields=sorted(changed))])


def _result(state: TournamentState, player: str, number: int) -> RoundResult:
    if (
        isinstance(number, bool)
        or not isinstance(number, int)
        or not 1 <= number <= len(state.rounds)
    ):
        raise TournamentError("no_such_result", f"there is no round {number!r}")
    result = state.rounds[number - 1].results.get(player)
    if result is None:
        raise TournamentError("no_such_result", f"{player!r} has no result in round {number}")
    return result


def disqualify(
    state: TournamentState, *, actor: str, player: str, round: int, reason: str, now: int
) -> list[Event]:
    """Strike a result: it scores nothing and leaves the round's field (see
    :mod:`.scoring`); it stays in the export, marked, and can be restored."""
    allow(state, actor, HOSTS, "disqualify a result")
    reason = check_text(reason, "the reason", REASON_LENGTH)
    result = _result(state, player, round)
    if result.disqualified:
        raise TournamentError("already_disqualified", "this result is already disqualified")
    result.disqualified, result.disqualify_reason = True, reason
    audit(state, actor, "disqualify", now, player=player, round=round, reason=reason)
    return done(
        state, [event(state, "result_disqualified", player=player, round=round, reason=reason)]
    )


def restore(
    state: TournamentState, *, actor: str, player: str, round: int, now: int
) -> list[Event]:
    """Undo a disqualification."""
    allow(state, actor, HOSTS, "restore a result")
    result = _result(state, player, round)
    if not result.disqualified:
        raise TournamentError("not_disqualified", "this result is not disqualified")
    result.disqualified, result.disqualify_reason = False, None
    audit(state, actor, "restore", now, player=player, round=round)
    return done(state, [event(state, "result_restored", player=player, round=round)])


def announce(state: TournamentState, *, actor: str, text: str, now: int) -> list[Event]:
    """Send every player and spectator a message from the host (lines allowed)."""
    allow(state, actor, HOSTS, "announce")
    text = check_text(text, "an announcement", ANNOUNCEMENT_LENGTH, lines=True)
    audit(state, actor, "announce", now, detail={"text": text})
    return done(state, [event(state, "announcement", text=text, by=actor, at=now)])
