"""Standings as pure functions of the results: the rules a tournament page explains.

**A round's ranking** is the race's (:func:`server.ranking.race_key`): winners by finishing
time (ties: fewer moves), then the others by cards home, then score, then fewer moves.
Players with equal keys share the place (1, 2, 2, 4). The field of a round is its
participants with a result that is not struck: a disqualified result, or any result of a
banned player, leaves the field (it scores nothing and nobody scores for beating it).

**``points`` mode** (the default): in each round a player scores one point for every player
of the field they beat (ranked strictly below them), plus :data:`WIN_BONUS` for finishing the
deal. A missed round — absent, not yet entered, withdrawn, or a struck result — scores 0.
In a field of N the winner of the deal who beats everyone scores N − 1 + 2 and the last 0, so
every place is worth something in a field of any size, and the same rule serves every round.

**``time`` mode**: the sum over the rounds of the round's time — the finishing time of a won
deal, else the round's time limit plus :data:`CARD_PENALTY_MS` for each card not home; a
missed round counts as the limit plus the penalty for every card of the game. Lower is
better.

**Tie-breaks**, in order, listed in :data:`TIEBREAKS` with their values on every row:

* ``points``: more round wins (rounds placed first), then more deals won, then the best
  single round (most points), then the lower total time of the deals won, then more cards
  home over all rounds;
* ``time``: more deals won, then more round wins, then the best single round (lowest time),
  then more cards home over all rounds.

(Cards home count only results that stand: a struck or missed round adds none.)

Players still tied share the rank, shown in the order they joined. Only rounds that have
ended count; banned players are left out of the standings.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Literal

from engine import DealCode, new_game
from server.rooms.ranking import places, race_key

from .settings import TournamentSettings
from .state import EntrantStatus, PlayerState, RoundResult, RoundState, RoundStatus, TournamentState

__all__ = [
    "CARD_PENALTY_MS",
    "TIEBREAKS",
    "WIN_BONUS",
    "Placed",
    "RoundEntry",
    "Standing",
    "Tiebreak",
    "cards_in_game",
    "round_ranking",
    "standings",
    "standings_key",
    "standings_of",
]

#: points for finishing the deal, on top of one per player beaten
WIN_BONUS: Final = 2
#: ``time`` mode: added to the time limit for each card not home
CARD_PENALTY_MS: Final = 10_000


@dataclass(frozen=True, slots=True)
class Tiebreak:
    """One tie-break: the ``key`` of its value in :attr:`Standing.tiebreaks`, and whether
    ``more`` or ``less`` is better."""

    key: str
    better: Literal["more", "less"]


TIEBREAKS: Final[dict[str, tuple[Tiebreak, ...]]] = {
    "points": (
        Tiebreak("round_wins", "more"),
        Tiebreak("deals_won", "more"),
        Tiebreak("best_round", "more"),
        Tiebreak("won_time_ms", "less"),
        Tiebreak("cards_home", "more"),
    ),
    "time": (
        Tiebreak("deals_won", "more"),
        Tiebreak("round_wins", "more"),
        Tiebreak("best_round_ms", "less"),
        Tiebreak("cards_home", "more"),
    ),
}


@dataclass(frozen=True, slots=True)
class Placed:
    """A result in its round's ranking: ``place`` shared by equal keys, ``points`` scored."""

    result: RoundResult
    place: int
    points: int


@dataclass(frozen=True, slots=True)
class RoundEntry:
    """A player's line for one round. ``status``: the race's (``won``, ``resigned``,
    ``timeout``), or ``absent``, ``missed`` (not entered then) or ``disqualified``."""

    round: int
    status: RoundStatus
    place: int | None
    points: int
    time_ms: int
    score: int = 0
    moves: int = 0
    on_foundations: int = 0
    elapsed_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    """A row of the standings: ``rank`` (shared by ties), the totals of both modes, every
    counted round, and the tie-break values (``TIEBREAKS[mode]`` gives their order)."""

    rank: int
    player: str
    name: str
    status: EntrantStatus
    points: int
    time_ms: int
    rounds: tuple[RoundEntry, ...]
    tiebreaks: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The row as JSON (what the page and the export show)."""
        return {
            "rank": self.rank,
            "player": self.player,
            "name": self.name,
            "status": self.status,
            "points": self.points,
            "time_ms": self.time_ms,
            "rounds": [
                {
                    "round": e.round,
                    "status": e.status,
                    "place": e.place,
                    "points": e.points,
                    "time_ms": e.time_ms,
                    "score": e.score,
                    "moves": e.moves,
                    "on_foundations": e.on_foundations,
                    "elapsed_ms": e.elapsed_ms,
                }
                for e in self.rounds
            ],
            "tiebreaks": dict(self.tiebreaks),
        }


@lru_cache(maxsize=8)
def cards_in_game(game: str) -> int:
    """How many cards a deal of ``game`` has (52, or 104 in Easy Harp)."""
    return new_game(DealCode.for_game(game, 1)).total


def round_ranking(
    round_: RoundState, struck: Collection[str] = (), order: Sequence[str] = ()
) -> list[Placed]:
    """The round's ranking of the results so far, struck ones (disqualified results, and the
    players in ``struck``) left out; equal race keys share a place and are listed in
    ``order`` (the join order; others after, by id)."""
    position = {player: i for i, player in enumerate(order)}
    field_ = [r for r in round_.results.values() if not r.disqualified and r.player not in struck]
    field_.sort(key=lambda r: (race_key(r), position.get(r.player, len(position)), r.player))
    shared = places([race_key(r) for r in field_])
    count = len(field_)
    placed = []
    # everyone after a group of equal keys ranks strictly below it: its size, counted from
    # the end (one pass, not one per result: a field of 1,000 is ranked on every push)
    behind = 0
    for i in range(count - 1, -1, -1):
        result = field_[i]
        if i + 1 < count and shared[i + 1] != shared[i]:
            behind = count - i - 1
        bonus = WIN_BONUS if result.status == "won" else 0
        placed.append(Placed(result, shared[i], behind + bonus))
    placed.reverse()
    return placed


def _unplayed(number: int, status: RoundStatus, limit_ms: int, cards: int) -> RoundEntry:
    """The line of a round a player has no placed result in: the time limit and every card
    count against them."""
    return RoundEntry(number, status, None, 0, limit_ms + CARD_PENALTY_MS * cards)


def _played(number: int, limit_ms: int, placed: Placed) -> RoundEntry:
    r = placed.result
    time_ms = (
        (r.elapsed_ms or 0)
        if r.status == "won"
        else limit_ms + CARD_PENALTY_MS * (r.total - r.on_foundations)
    )
    return RoundEntry(
        number,
        r.status,
        placed.place,
        placed.points,
        time_ms,
        r.score,
        r.moves,
        r.on_foundations,
        r.elapsed_ms,
    )


def standings_of(
    settings: TournamentSettings,
    players: Mapping[str, PlayerState],
    rounds: Sequence[RoundState],
) -> list[Standing]:
    """The standings after the rounds that have ended (see the module's docstring)."""
    struck = {p.id for p in players.values() if p.status == "banned"}
    order = list(players)
    limit_ms = settings.round_time_limit * 1000
    cards = cards_in_game(settings.game)
    lines: dict[str, list[RoundEntry]] = {p: [] for p in order if p not in struck}
    for round_ in rounds:
        if round_.ended_at is None:
            continue
        placed = {p.result.player: p for p in round_ranking(round_, struck, order)}
        absent = set(round_.absent)
        for player, line in lines.items():
            if player in placed:
                line.append(_played(round_.number, limit_ms, placed[player]))
            elif player in round_.results:
                line.append(_unplayed(round_.number, "disqualified", limit_ms, cards))
            else:
                status: RoundStatus = "absent" if player in absent else "missed"
                line.append(_unplayed(round_.number, status, limit_ms, cards))
    rows = []
    for player, line in lines.items():
        won = [e for e in line if e.status == "won"]
        played = [e for e in line if e.place is not None]
        values = {
            "round_wins": sum(1 for e in played if e.place == 1),
            "deals_won": len(won),
            "best_round": max((e.points for e in line), default=0),
            "won_time_ms": sum(e.elapsed_ms or 0 for e in won),
            "best_round_ms": min((e.time_ms for e in line), default=0),
            "cards_home": sum(e.on_foundations for e in line),
        }
        rows.append((player, line, values))
    mode = settings.scoring

    def key(row: tuple[str, list[RoundEntry], dict[str, int]]) -> tuple[int, ...]:
        _, line, values = row
        main = -sum(e.points for e in line) if mode == "points" else sum(e.time_ms for e in line)
        breaks = [-values[t.key] if t.better == "more" else values[t.key] for t in TIEBREAKS[mode]]
        return (main, *breaks)

    # each key computed once (a field of 1,000 is ranked after every change); the sort is
    # stable: equal keys stay in join order
    keyed = sorted(((key(row), row) for row in rows), key=lambda pair: pair[0])
    out: list[Standing] = []
    for rank, (_, row) in zip(places([k for k, _ in keyed]), keyed, strict=True):
        player, line, values = row
        p = players[player]
        out.append(
            Standing(
                rank,
                player,
                p.name,
                p.status,
                sum(e.points for e in line),
                sum(e.time_ms for e in line),
                tuple(line),
                {t.key: values[t.key] for t in TIEBREAKS[mode]},
            )
        )
    return out


def standings(state: TournamentState) -> list[Standing]:
    """The tournament's standings now (rounds that have ended)."""
    return standings_of(state.settings, state.players, state.rounds)


def standings_key(state: TournamentState) -> tuple[Any, ...]:
    """Everything :func:`standings` reads, as one comparable value: states with equal keys
    have equal standings. Much cheaper than the standings (no ranking, nothing made per
    player but a tuple): a worker pushing the standings ranks the field again only when
    the key changed — in a round, the results being recorded change the round's live
    ranking, not the standings, which count ended rounds only."""
    settings = state.settings
    return (
        settings.scoring,
        settings.round_time_limit,
        settings.game,
        tuple((p.id, p.name, p.status) for p in state.players.values()),
        tuple(
            (
                r.number,
                tuple(r.absent),
                tuple(
                    (
                        player,
                        x.player,
                        x.status,
                        x.on_foundations,
                        x.total,
                        x.score,
                        x.moves,
                        x.elapsed_ms,
                        x.disqualified,
                    )
                    for player, x in r.results.items()
                ),
            )
            for r in state.rounds
            if r.ended_at is not None
        ),
    )
