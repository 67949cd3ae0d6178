"""What the acts share: who may act, in which phase, text checks, the audit, closing a
round. Not a public interface: use :mod:`.acts` and :mod:`.host`."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from .errors import TournamentError
from .scoring import cards_in_game, round_ranking
from .state import (
    AuditEntry,
    Event,
    PlayerState,
    Role,
    RoundResult,
    TournamentState,
    current_round,
    event,
    role_of,
)

__all__ = [
    "HOSTS",
    "allow",
    "audit",
    "check_text",
    "close_round",
    "done",
    "entered",
    "finish",
    "host_target",
    "in_phase",
    "left_event",
    "room_for_one",
]

HOSTS: Final[frozenset[Role]] = frozenset({"host", "co_host"})


def allow(state: TournamentState, actor: str, roles: Collection[Role], act: str) -> Role:
    """The actor's role, if it is one of ``roles``; else refused (``not_allowed``)."""
    role = role_of(state, actor)
    if role is None or role not in roles:
        who = " or ".join(sorted(r.replace("_", "-") for r in roles))
        raise TournamentError("not_allowed", f"only the {who} may {act}")
    return role


def in_phase(state: TournamentState, phases: Collection[str], act: str) -> None:
    """Refuse (``wrong_phase``) unless the tournament is in one of ``phases``."""
    if state.phase not in phases:
        raise TournamentError("wrong_phase", f"cannot {act} while the tournament is {state.phase}")


def check_text(text: str, what: str, limit: int, *, lines: bool = False) -> str:
    """A reason or an announcement, stripped: 1 … ``limit`` printable characters."""
    text = text.strip() if isinstance(text, str) else ""
    if not text or len(text) > limit:
        raise TournamentError("bad_text", f"{what} must be 1-{limit} characters")
    if any(not (char.isprintable() or (lines and char == "\n")) for char in text):
        raise TournamentError("bad_text", f"{what} contains a control character")
    return text


def entered(state: TournamentState) -> list[PlayerState]:
    """The players entered now, in join order."""
    return [p for p in state.players.values() if p.status == "entered"]


def room_for_one(state: TournamentState) -> None:
    """Refuse (``full``) when the entered players fill the tournament."""
    if len(entered(state)) >= state.settings.max_players:
        raise TournamentError("full", f"the tournament is full ({state.settings.max_players})")


def host_target(state: TournamentState, actor: str, player: str, act: str) -> PlayerState | None:
    """The player a host acts on (``None``: not joined); nobody acts on the host, only the
    host on a co-host, and a kicked or banned player is already out."""
    if player == state.host:
        raise TournamentError("not_allowed", f"nobody may {act} the host")
    if player in state.settings.co_hosts and actor != state.host:
        raise TournamentError("not_allowed", f"only the host may {act} a co-host")
    target = state.players.get(player)
    if target is not None and target.status in ("kicked", "banned"):
        raise TournamentError("already_out", f"{target.name} is already {target.status}")
    return target


def done(state: TournamentState, events: list[Event]) -> list[Event]:
    """Count an accepted act (``version`` rises) and return its events."""
    state.version += 1
    return events


def audit(state: TournamentState, actor: str, act: str, now: int, **fields: Any) -> None:
    """Append a host act to the audit log."""
    state.audit.append(AuditEntry(at=now, actor=actor, act=act, **fields))


def left_event(state: TournamentState, player: str, kind: str, **fields: Any) -> Event:
    """The event of a player leaving; ``in_round`` tells the server to end their race."""
    current = current_round(state)
    in_round = (
        current is not None and player in current.participants and player not in current.results
    )
    return event(state, kind, player=player, in_round=in_round, **fields)


def close_round(state: TournamentState, now: int) -> list[Event]:
    """End the current round: participants with no result are out of time with nothing home
    (the server reports each unfinished race's progress before this)."""
    current = state.rounds[-1]
    total = cards_in_game(state.settings.game)
    for player in current.participants:
        if player not in current.results:
            current.results[player] = RoundResult(
                player=player, status="timeout", on_foundations=0, total=total, score=0, moves=0
            )
    current.ended_at = now
    struck = {p.id for p in state.players.values() if p.status == "banned"}
    ranking = [
        {"player": p.result.player, "place": p.place, "points": p.points}
        for p in round_ranking(current, struck, list(state.players))
    ]
    return [event(state, "round_ended", round=current.number, deal=current.deal, ranking=ranking)]


def finish(state: TournamentState, now: int, *, early: bool) -> Event:
    """Finish the tournament: the event reveals the seed."""
    state.phase, state.finished_at, state.next_round_at = "finished", now, None
    return event(
        state,
        "tournament_finished",
        at=now,
        early=early,
        seed=state.seed,
        commitment=state.commitment,
    )
