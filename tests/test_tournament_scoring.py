"""Tournament standings and tie-breaks: hand-worked tables, and properties of the rules."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.rooms.ranking import race_key
from server.rooms.room import ProgressState, rank
from server.tournaments.scoring import (
    CARD_PENALTY_MS,
    TIEBREAKS,
    WIN_BONUS,
    Standing,
    round_ranking,
    standings_of,
)
from server.tournaments.settings import TournamentSettings, parse_settings
from server.tournaments.state import PlayerState, RoundResult, RoundState

LIMIT_MS = 600_000  # the default round time limit
MISSED_MS = LIMIT_MS + 52 * CARD_PENALTY_MS


def result(player: str, spec: str) -> RoundResult:
    """``W60`` won in 60 s (``W60/90``: in 90 moves), ``T30`` out of time with 30 cards home,
    ``R30`` resigned with 30 home (score 10 per card, 100 moves unless ``/m``)."""
    kind, _, rest = spec.partition("/")
    moves = int(rest) if rest else 100
    value = int(kind[1:])
    if kind[0] == "W":
        return RoundResult(
            player=player,
            status="won",
            on_foundations=52,
            total=52,
            score=520,
            moves=moves,
            elapsed_ms=value * 1000,
        )
    return RoundResult(
        player=player,
        status="timeout" if kind[0] == "T" else "resigned",
        on_foundations=value,
        total=52,
        score=10 * value,
        moves=moves,
        elapsed_ms=None,
    )


def table(
    rounds: list[dict[str, str]], *, mode: str = "points", banned: tuple[str, ...] = ()
) -> list[Standing]:
    """Standings of hand-written rounds: per round ``{player: spec}``, ``"-"`` for absent;
    players not named in a round missed it. Players join in the order first named."""
    players: dict[str, PlayerState] = {}
    states = []
    for number, line in enumerate(rounds, 1):
        for p in line:
            player = PlayerState(id=p, name=p, joined_at=0)
            if p in banned:
                player.status = "banned"
            players.setdefault(p, player)
        states.append(
            RoundState(
                number=number,
                deal="KL1-1-AAAAAAB",
                candidate=0,
                start_at=0,
                deadline=LIMIT_MS,
                participants=[p for p, s in line.items() if s != "-"],
                absent=[p for p, s in line.items() if s == "-"],
                results={p: result(p, s) for p, s in line.items() if s != "-"},
                ended_at=LIMIT_MS,
            )
        )
    cfg = parse_settings(
        {"name": "t", "game": "klondike", "rounds": max(1, len(rounds)), "scoring": mode}
    )
    return standings_of(cfg, players, states)


def summary(rows: list[Standing], *fields: str) -> list[tuple[Any, ...]]:
    """(rank, player, points or time, chosen tie-break values) per row."""
    return [
        (
            r.rank,
            r.player,
            r.points if "time" not in fields else r.time_ms,
            *(r.tiebreaks[f] for f in fields if f != "time"),
        )
        for r in rows
    ]


# ---------------------------------------------------------------------- points mode


def test_one_round_places_points_and_shared_ranks() -> None:
    rows = table(
        [
            {
                "A": "W60",
                "B": "W60",  # same time and moves as A: shares first place
                "C": "W90",
                "D": "T30",
                "E": "R30",  # resigned with D's cards, score, moves: tied with D
                "F": "-",
            }
        ]
    )
    entries = {r.player: (r.rounds[0].status, r.rounds[0].place, r.rounds[0].points) for r in rows}
    assert entries == {
        # one point per player beaten, plus WIN_BONUS for finishing the deal
        "A": ("won", 1, 3 + WIN_BONUS),
        "B": ("won", 1, 3 + WIN_BONUS),
        "C": ("won", 3, 2 + WIN_BONUS),
        "D": ("timeout", 4, 0),
        "E": ("resigned", 4, 0),
        "F": ("absent", None, 0),
    }
    assert [(r.rank, r.player, r.points) for r in rows] == [
        (1, "A", 5),
        (1, "B", 5),
        (3, "C", 4),
        (4, "D", 0),
        (4, "E", 0),
        (6, "F", 0),  # tied with D and E down to cards home, which they have and F has not
    ]
    assert rows[3].tiebreaks == {
        "round_wins": 0,
        "deals_won": 0,
        "best_round": 0,
        "won_time_ms": 0,
        "cards_home": 30,
    }


def test_race_order_within_a_round() -> None:
    # winners by time then moves; the others by cards, then score, then fewer moves
    rows = table(
        [
            {
                "slow": "W90/50",
                "fast": "W60/200",
                "fast_fewer": "W60/150",
                "cards": "T40",
                "moves": "T30/50",
                "more_moves": "T30/60",
            }
        ]
    )
    assert [(r.player, r.rounds[0].place) for r in rows] == [
        ("fast_fewer", 1),
        ("fast", 2),
        ("slow", 3),
        ("cards", 4),
        ("moves", 5),
        ("more_moves", 6),
    ]


def test_tiebreak_round_wins() -> None:
    rows = table(
        [
            {"A": "W60", "Z": "T10", "B": "-", "X": "-", "Y": "-"},
            {"X": "W60", "B": "W70", "Y": "T10", "A": "-"},
        ]
    )
    assert summary(rows, "round_wins", "cards_home") == [
        (1, "X", 4, 1, 52),
        (2, "A", 3, 1, 52),  # 3 points like B, but a round won
        (3, "B", 3, 0, 52),
        (4, "Z", 0, 0, 10),  # Z (missed round 2) and Y (absent in round 1) tie all the way
        (4, "Y", 0, 0, 10),
    ]


def test_tiebreak_deals_won() -> None:
    rows = table(
        [
            {"W": "W50", "C": "W80", "D": "T40", "V": "T10", "U": "-", "S": "-"},
            {"W": "W50", "U": "W55", "D": "T45", "V": "T30", "S": "T20", "C": "T5"},
        ]
    )
    assert summary(rows, "round_wins", "deals_won") == [
        (1, "W", 12, 2, 2),
        (2, "U", 6, 0, 1),
        (3, "C", 4, 0, 1),  # C won a deal, D did not
        (4, "D", 4, 0, 0),
        (5, "V", 2, 0, 0),
        (6, "S", 1, 0, 0),
    ]


def test_tiebreak_best_round() -> None:
    rows = table(
        [
            {"G": "W50", "E": "T45", "H": "T40", "I": "T35", "F": "T30", "J": "T20"},
            {"G": "W50", "F": "T45", "H": "T40", "I": "T35", "E": "T10", "J": "-"},
        ]
    )
    assert summary(rows, "round_wins", "deals_won", "best_round") == [
        (1, "G", 13, 2, 2, 7),
        (2, "H", 5, 0, 0, 3),
        (3, "E", 4, 0, 0, 4),  # 4 + 0 against F's 1 + 3: E's best round is better
        (4, "F", 4, 0, 0, 3),
        (5, "I", 3, 0, 0, 2),
        (6, "J", 0, 0, 0, 0),
    ]


def test_tiebreak_time_of_the_deals_won() -> None:
    rows = table(
        [
            {"M": "W30", "K": "W60", "L": "W70", "N": "T10"},
            {"M": "W30", "L": "W60", "K": "W80", "N": "T10"},
        ]
    )
    assert summary(rows, "round_wins", "deals_won", "best_round", "won_time_ms") == [
        (1, "M", 10, 2, 2, 5, 60_000),
        (2, "L", 7, 0, 2, 4, 130_000),  # same points, wins, deals and best round as K: faster
        (3, "K", 7, 0, 2, 4, 140_000),
        (4, "N", 0, 0, 0, 0, 0),
    ]


def test_tiebreak_cards_home() -> None:
    rows = table([{"Q": "W30", "O": "T30", "P": "-"}, {"Q": "W30", "P": "T20", "O": "-"}])
    assert summary(rows, "cards_home") == [(1, "Q", 6, 104), (2, "O", 0, 30), (3, "P", 0, 20)]


def test_a_disqualified_result_leaves_the_field() -> None:
    rounds = [{"A": "W60", "B": "W70", "C": "T30"}]
    assert summary(table(rounds)) == [(1, "A", 4), (2, "B", 3), (3, "C", 0)]
    players = {p: PlayerState(id=p, name=p, joined_at=0) for p in "ABC"}
    state = RoundState(
        number=1,
        deal="KL1-1-AAAAAAB",
        candidate=0,
        start_at=0,
        deadline=LIMIT_MS,
        participants=list("ABC"),
        results={p: result(p, s) for p, s in rounds[0].items()},
        ended_at=LIMIT_MS,
    )
    state.results["A"].disqualified = True
    cfg = TournamentSettings(name="t", game="klondike")
    rows = standings_of(cfg, players, [state])
    # A scores nothing and nobody scores for beating A: B is first, C is still beaten by B
    assert [(r.rank, r.player, r.points, r.rounds[0].status) for r in rows] == [
        (1, "B", 1 + WIN_BONUS, "won"),
        (2, "C", 0, "timeout"),
        (3, "A", 0, "disqualified"),
    ]
    assert rows[0].tiebreaks["round_wins"] == 1


def test_a_banned_player_is_struck_and_left_out() -> None:
    rows = table([{"A": "W60", "B": "W70", "C": "T30"}], banned=("A",))
    assert summary(rows) == [(1, "B", 3), (2, "C", 0)]


def test_rounds_in_progress_do_not_count() -> None:
    rows = table([{"A": "W60", "B": "T10"}])
    assert rows[0].points == 3
    players = {p: PlayerState(id=p, name=p, joined_at=0) for p in "AB"}
    live = RoundState(
        number=1,
        deal="KL1-1-AAAAAAB",
        candidate=0,
        start_at=0,
        deadline=LIMIT_MS,
        participants=["A", "B"],
        results={"A": result("A", "W60")},
    )
    cfg = TournamentSettings(name="t", game="klondike")
    assert [(r.rank, r.points, r.rounds) for r in standings_of(cfg, players, [live])] == [
        (1, 0, ()),
        (1, 0, ()),
    ]


# ---------------------------------------------------------------------- time mode


def test_time_mode_totals_and_round_wins() -> None:
    rows = table(
        [
            {"A": "W100", "B": "W150", "C": "-", "D": "W50"},
            {"A": "W200", "B": "T42", "C": "W100", "D": "W250"},
        ],
        mode="time",
    )
    assert [(r.rank, r.player, r.time_ms, r.tiebreaks["round_wins"]) for r in rows] == [
        (1, "D", 300_000, 1),  # same total as A, but won round 1
        (2, "A", 300_000, 0),
        (3, "B", 150_000 + LIMIT_MS + 10 * CARD_PENALTY_MS, 0),
        (4, "C", MISSED_MS + 100_000, 1),
    ]


def test_time_mode_deals_won_then_best_round() -> None:
    rows = table(
        [
            {"E": "W580", "F": "W595", "G": "W100", "H": "W300"},
            {"E": "T51", "F": "W595", "G": "W500", "H": "W300"},
        ],
        mode="time",
    )
    assert summary(rows, "time", "deals_won", "round_wins", "best_round_ms") == [
        (1, "G", 600_000, 2, 1, 100_000),  # G and H: same time, deals, round wins: best round
        (2, "H", 600_000, 2, 1, 300_000),
        (3, "F", 1_190_000, 2, 0, 595_000),  # F and E: same time, F won more deals
        (4, "E", 1_190_000, 1, 0, 580_000),
    ]


def test_tiebreaks_are_listed_in_order() -> None:
    assert [t.key for t in TIEBREAKS["points"]] == [
        "round_wins",
        "deals_won",
        "best_round",
        "won_time_ms",
        "cards_home",
    ]
    assert [t.key for t in TIEBREAKS["time"]] == [
        "deals_won",
        "round_wins",
        "best_round_ms",
        "cards_home",
    ]


# ---------------------------------------------------------------------- properties

SPECS = st.one_of(
    st.builds(lambda t, m: f"W{t}/{m}", st.integers(1, 8), st.integers(80, 82)),
    st.builds(lambda c, m: f"T{c}/{m}", st.integers(0, 3), st.integers(80, 82)),
    st.builds(lambda c: f"R{c}", st.integers(0, 3)),
    st.just("-"),
)
NAMES = st.sampled_from([f"p{i}" for i in range(8)])
ROUNDS = st.lists(st.dictionaries(NAMES, SPECS, min_size=1, max_size=8), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(rounds=ROUNDS, mode=st.sampled_from(["points", "time"]))
def test_standings_are_a_ranking_of_everyone(rounds: list[dict[str, str]], mode: str) -> None:
    rows = table(rounds, mode=mode)
    names = {p for line in rounds for p in line}
    assert sorted(r.player for r in rows) == sorted(names)  # a permutation
    assert rows[0].rank == 1
    for i, (a, b) in enumerate(pairwise(rows), 2):
        assert b.rank in (a.rank, i)  # shared or the next place by count
        better = (-a.points, a.time_ms) if mode == "points" else (a.time_ms, -a.points)
        worse = (-b.points, b.time_ms) if mode == "points" else (b.time_ms, -b.points)
        assert better[0] <= worse[0]
        if b.rank == a.rank:
            assert better[0] == worse[0] and a.tiebreaks == b.tiebreaks
    for row in rows:
        assert row.points == sum(e.points for e in row.rounds)
        assert row.time_ms == sum(e.time_ms for e in row.rounds)
        assert len(row.rounds) == len(rounds)


@settings(max_examples=150, deadline=None)
@given(line=st.dictionaries(NAMES, SPECS.filter(lambda s: s != "-"), min_size=1, max_size=8))
def test_points_fall_as_places_rise(line: dict[str, str]) -> None:
    state = RoundState(
        number=1,
        deal="KL1-1-AAAAAAB",
        candidate=0,
        start_at=0,
        deadline=LIMIT_MS,
        participants=list(line),
        results={p: result(p, s) for p, s in line.items()},
    )
    placed = round_ranking(state)
    assert [p.place for p in placed] == sorted(p.place for p in placed)
    for a, b in pairwise(placed):
        assert a.points >= b.points or (a.result.status != "won" and b.result.status == "won")
        if a.place < b.place:
            # b beats fewer players than a; only the win bonus can make up for it
            bonus_b = WIN_BONUS if b.result.status == "won" else 0
            bonus_a = WIN_BONUS if a.result.status == "won" else 0
            assert a.points - bonus_a > b.points - bonus_b
    n = len(placed)
    assert sum(p.points for p in placed) == sum(
        sum(1 for q in placed if q.place > p.place) for p in placed
    ) + WIN_BONUS * sum(1 for p in placed if p.result.status == "won")
    assert all(0 <= p.points <= n - 1 + WIN_BONUS for p in placed)


PROGRESS = st.builds(
    lambda seat, status, cards, score, moves, elapsed: ProgressState(
        race=1,
        seat=seat,
        status=status,
        on_foundations=52 if status == "won" else cards,
        total=52,
        score=score,
        moves=moves,
        elapsed_ms=elapsed if status == "won" else None,
    ),
    st.integers(1, 16),
    st.sampled_from(["won", "resigned", "timeout", "playing"]),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 3),
)


@given(rows=st.lists(PROGRESS, max_size=12, unique_by=lambda p: p.seat))
def test_a_room_places_by_the_one_rule(rows: list[ProgressState]) -> None:
    """A room's results are placed as a round's are: one more than the results with a
    better race key (``server.rooms.ranking``)."""
    for place, p in rank(rows):
        assert place == 1 + sum(race_key(q) < race_key(p) for q in rows)


@pytest.mark.parametrize("mode", ["points", "time"])
def test_no_rounds_no_order(mode: str) -> None:
    assert table([], mode=mode) == []
