"""A tournament's state as plain values: no sockets, no asyncio, no storage.

One JSON-able pydantic model, :class:`TournamentState`, holds everything — settings, players,
rounds with their results, the audit log and the fair-deal seed — so that a store can keep
it as it is and change it inside one atomic update, as rooms are kept. The acts that change
it live in :mod:`server.tournaments.acts`; scoring reads it (:mod:`.scoring`).

Phases::

    created ──start──▶ between ──start_round──▶ round ──end_round──▶ between … ──▶ finished
                       ▲     │                                        (after the last round)
                       └─resume── paused ◀─pause─┘          end_early: any phase ──▶ finished

``round`` counts the rounds started; in ``round`` the current one is ``rounds[-1]``.
The seed stays in the state from creation (the server must draw each round's deal from it)
but :func:`public_view` shows only its commitment until the tournament has finished.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from engine.fair import FAIR_VERSION, TOURNAMENT_CANDIDATES, TOURNAMENT_NODES, commitment
from protocol.api import EntrantStatus, ResultStatus, RoundStatus
from protocol.api import TournamentPhase as Phase

from .errors import TournamentError
from .settings import SettingsError, TournamentSettings

__all__ = [
    "FINAL_STATUSES",
    "SYSTEM",
    "AuditEntry",
    "EntrantStatus",
    "Event",
    "Phase",
    "PlayerState",
    "Role",
    "RoundResult",
    "RoundState",
    "RoundStatus",
    "TournamentError",
    "TournamentState",
    "create",
    "current_round",
    "due",
    "event",
    "public_view",
    "role_of",
]

#: the actor of acts the server does on its own (timers, race results)
SYSTEM: Final = "@system"
#: the statuses a round's race ends in (a result's)
FINAL_STATUSES: Final[tuple[ResultStatus, ...]] = get_args(ResultStatus)

Role = Literal["host", "co_host", "player", "system"]
Event = dict[str, Any]


class _State(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlayerState(_State):
    """An entrant. ``status``: ``entered``, ``withdrawn`` (``withdrawn_by`` ``self`` or
    ``absences``), ``kicked`` (results stay) or ``banned`` (results struck); ``reason`` is
    the host's, shown to the player. ``absences`` counts absences in a row; ``joined_round``
    the rounds already started when they joined (0: before the start)."""

    id: str
    name: str
    status: EntrantStatus = "entered"
    withdrawn_by: Literal["self", "absences"] | None = None
    reason: str | None = None
    joined_at: int
    joined_round: int = 0
    absences: int = 0


class RoundResult(_State):
    """One player's race in a round, as the server reports it when the race is over for
    them. ``move_list`` is every accepted action (``u`` included), so the result can be
    replayed; ``disqualified`` results are struck by the host (and may be restored)."""

    player: str
    status: ResultStatus
    on_foundations: Annotated[int, Field(ge=0)]
    total: Annotated[int, Field(ge=1)]
    score: Annotated[int, Field(ge=0)]
    moves: Annotated[int, Field(ge=0)]
    elapsed_ms: Annotated[int, Field(ge=0)] | None = None
    move_list: list[str] = []
    disqualified: bool = False
    disqualify_reason: str | None = None


class RoundState(_State):
    """One round: its deal and how it was drawn (``candidate`` ``None`` for a host's list;
    ``solution`` the recorded winning line, ``skipped`` the candidates not proven), who
    plays (``participants``) and who was ``absent``, and the ``results`` by player."""

    number: int
    deal: str
    candidate: int | None
    solution: list[str] | None = None
    skipped: list[int] = []
    start_at: int
    deadline: int
    participants: list[str]
    absent: list[str] = []
    results: dict[str, RoundResult] = {}
    ended_at: int | None = None
    #: the host ended the tournament during this round: its races still under way were
    #: stopped then (recorded out of time, as at the deadline), not run out of time
    stopped_early: bool = False


class AuditEntry(_State):
    """One host act, as the tournament page shows it."""

    at: int
    actor: str
    act: str
    player: str | None = None
    round: int | None = None
    reason: str | None = None
    detail: dict[str, Any] = {}


class TournamentState(_State):
    """Everything about one tournament (see the module's docstring for the phases)."""

    id: str
    host: str
    settings: TournamentSettings
    created_at: int
    key: str
    seed: str
    commitment: str
    node_budget: int
    max_candidates: int
    #: the version of ``fair-deals.md`` its rounds are drawn by: 2 (sealed deals, ``T2``) for
    #: every new tournament; a state stored before version 2 has none and is 1 (numbered
    #: deals, ``T1``), so its rounds and its export derive and verify as they were drawn
    fair: Literal[1, 2] = 1
    phase: Phase = "created"
    round: int = 0
    next_round_at: int | None = None
    started_at: int | None = None
    finished_at: int | None = None
    players: dict[str, PlayerState] = {}
    rounds: list[RoundState] = []
    audit: list[AuditEntry] = []
    version: int = 0


def create(
    *,
    tournament_id: str,
    host: str,
    settings: TournamentSettings,
    seed: bytes,
    key: str,
    now: int,
    node_budget: int | None = None,
    max_candidates: int | None = None,
) -> tuple[TournamentState, list[Event]]:
    """A new tournament in phase ``created``. The server draws ``seed``
    (:func:`engine.fair.new_seed`) and the private link ``key``; ``node_budget`` and
    ``max_candidates`` (default: :data:`engine.fair.TOURNAMENT_NODES`, ``…_CANDIDATES``)
    fix how winnable-only rounds are chosen, and are shown with the commitment. Its rounds
    are drawn by the current version of ``fair-deals.md`` (sealed deals)."""
    if host == SYSTEM or not host:
        raise TournamentError("bad_identity", f"{host!r} cannot host a tournament")
    if host in settings.co_hosts:
        raise SettingsError("co_hosts", "the host is named as a co-host")
    if settings.starts_at is not None and settings.starts_at < now:
        raise SettingsError("starts_at", "the scheduled start is in the past")
    state = TournamentState(
        id=tournament_id,
        host=host,
        settings=settings,
        created_at=now,
        key=key,
        seed=seed.hex(),
        commitment=commitment(seed),
        node_budget=TOURNAMENT_NODES[settings.game] if node_budget is None else node_budget,
        max_candidates=(
            TOURNAMENT_CANDIDATES[settings.game] if max_candidates is None else max_candidates
        ),
        fair=FAIR_VERSION,
    )
    return state, [
        event(state, "tournament_created", commitment=state.commitment, at=now),
    ]


# --------------------------------------------------------------------- queries


def role_of(state: TournamentState, actor: str) -> Role | None:
    """What ``actor`` is in this tournament (host first: a host who also plays is host)."""
    if actor == SYSTEM:
        return "system"
    if actor == state.host:
        return "host"
    if actor in state.settings.co_hosts:
        return "co_host"
    if actor in state.players:
        return "player"
    return None


def current_round(state: TournamentState) -> RoundState | None:
    """The round being played (phase ``round``), else ``None``."""
    return state.rounds[-1] if state.phase == "round" and state.rounds else None


def due(state: TournamentState, now: int) -> str | None:
    """What the server's timer must do at ``now``: ``start`` (the scheduled start has come),
    ``start_round`` (the pause is over), ``end_round`` (every participant is done, or the
    deadline has passed), or ``None``."""
    start_at = state.settings.starts_at
    if state.phase == "created" and start_at is not None and now >= start_at:
        return "start"
    if state.phase == "between" and state.next_round_at is not None and now >= state.next_round_at:
        return "start_round"
    current = current_round(state)
    if current is not None and (
        now >= current.deadline or all(p in current.results for p in current.participants)
    ):
        return "end_round"
    return None


def public_view(state: TournamentState) -> dict[str, Any]:
    """The state as everyone may see it: no link key, no seed before the end (only its
    commitment), no deal of the host's list before the end (``deal_codes`` is ``None``), and
    nothing of the round being played that would tell its cards — its deal, winning line and
    move lists are shown once the round has ended."""
    view = state.model_dump(mode="json", exclude={"key", "seed"})
    finished = state.phase == "finished"
    view["seed"] = state.seed if finished else None
    if not finished:
        view["settings"]["deal_codes"] = None
    current = current_round(state)
    if current is not None:
        live = view["rounds"][-1]
        live["deal"] = None
        live["solution"] = None
        for result in live["results"].values():
            result["move_list"] = None
    return view


def event(state: TournamentState, kind: str, **fields: Any) -> Event:
    """An event to publish: ``{"type": kind, "tournament": id, **fields}``."""
    return {"type": kind, "tournament": state.id, **fields}
