"""Small builders for the tournament tests: a tournament, players, a round played out."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from engine import new_game
from server.tournaments import (
    SYSTEM,
    RoundResult,
    TournamentState,
    create,
    end_round,
    join,
    next_round_deal,
    parse_settings,
    round_result,
    start,
    start_round,
)

SEED = bytes(range(32))
TID = "K7QF2M"
#: the id as printed in the tournament's link: what its version 2 rounds are derived from
LINK_ID = "K7QF-2M"
T0 = 1_750_000_000_000
HOST = "host"
KEY = "LINKKEY"


def new(**settings: Any) -> TournamentState:
    """A tournament in phase ``created`` (Klondike, "any deal" unless told)."""
    data: dict[str, Any] = {"name": "Cup", "game": "klondike", "deals": "any", **settings}
    state, _ = create(
        tournament_id=TID, host=HOST, settings=parse_settings(data), seed=SEED, key=KEY, now=T0
    )
    return state


def with_players(state: TournamentState, *players: str) -> TournamentState:
    """``state`` with ``players`` joined."""
    for p in players:
        join(state, actor=p, name=p.upper(), now=T0, key=KEY)
    return state


def played(code: str, moves: Iterable[str], player: str, elapsed_ms: int = 60_000) -> RoundResult:
    """The result of playing ``moves`` on ``code``: won if they win, else resigned."""
    game = new_game(code)
    moves = list(moves)
    for m in moves:
        game.push(m)
    return RoundResult(
        player=player,
        status="won" if game.won else "resigned",
        on_foundations=game.on_foundations,
        total=game.total,
        score=game.score,
        moves=game.moves,
        elapsed_ms=elapsed_ms if game.won else None,
        move_list=moves,
    )


def begin_round(state: TournamentState, connected: Iterable[str]) -> int:
    """Start the next round by the system timer; returns its start time."""
    if state.phase == "created":
        start(state, actor=HOST, now=T0)
    assert state.next_round_at is not None, "the next round must be due"
    start_round(
        state,
        actor=SYSTEM,
        deal=next_round_deal(state),
        now=state.next_round_at,
        connected=set(connected),
    )
    return state.rounds[-1].start_at


Moves = list[str] | Callable[[str], list[str]]


def play_round(state: TournamentState, connected: Iterable[str], moves: dict[str, Moves]) -> None:
    """Start a round, report each player's ``moves`` (a list, or a function of the deal
    code; a win if they win the deal, with finishing times 60 s, 61 s, … in order), and end
    it."""
    start_at = begin_round(state, connected)
    deal = state.rounds[-1].deal
    for i, (player, line) in enumerate(moves.items()):
        result = played(deal, line(deal) if callable(line) else line, player, 60_000 + 1000 * i)
        round_result(state, actor=SYSTEM, result=result, now=start_at + result_time(result))
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)


def a_result(
    player: str, kind: int, cards: int, moves: int, move_list: list[str] | None = None
) -> RoundResult:
    """A round's result by kind: 0 won (60 s and a second a card), 1 resigned, 2 out of
    time, with ``cards`` home; ``move_list`` as a worker reports it (the state leaves it
    out)."""
    extra: dict[str, Any] = {} if move_list is None else {"move_list": move_list}
    if kind == 0:
        return RoundResult(
            player=player,
            status="won",
            on_foundations=52,
            total=52,
            score=520,
            moves=40 + moves,
            elapsed_ms=60_000 + 1000 * cards,
            **extra,
        )
    return RoundResult(
        player=player,
        status="resigned" if kind == 1 else "timeout",
        on_foundations=cards,
        total=52,
        score=10 * cards,
        moves=moves,
        **extra,
    )


def result_time(result: RoundResult) -> int:
    """When a result reaches the server, after the round's start."""
    return result.elapsed_ms or 1000
