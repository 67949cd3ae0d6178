"""The standings a worker pushes (server.tournament_standings): ranked again only when what
they count changed, and always what a full ranking gives."""

from __future__ import annotations

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_fixtures import HOST, a_result, begin_round, new, with_players

from server.tournaments import (
    SYSTEM,
    TournamentError,
    TournamentState,
    ban,
    disqualify,
    end_round,
    join,
    kick,
    rejoin,
    restore,
    round_result,
    standings,
    withdraw,
)
from server.tournaments.table import (
    SLICE,
    SLICE_PAUSE,
    SPREAD,
    WATCHER_ROWS,
    Table,
    pause_between,
    slices,
)
from server.tournaments.updates import PLAYER_ROWS

PLAYERS = [f"p{i}" for i in range(6)]


def assert_full_ranking(table: Table, state: TournamentState) -> None:
    """``table`` holds what ranking the whole field now gives."""
    rows = [row.as_json() for row in standings(state)]
    assert table.count == len(rows)
    assert table.top_players == orjson.dumps(rows[:PLAYER_ROWS])
    assert table.top_watchers == orjson.dumps(rows[:WATCHER_ROWS])
    assert table.by_player == {row["player"]: row for row in rows}


def act(state: TournamentState, op: tuple[str, int, int, int, int]) -> None:
    """One act of a tournament's life, by name; a refused act changes nothing."""
    name, who, kind, cards, moves = op
    player = PLAYERS[who]
    now = state.rounds[-1].start_at + 1000 if state.rounds else 1_750_000_001_000
    try:
        if name == "result":
            round_result(state, actor=SYSTEM, result=a_result(player, kind, cards, moves), now=now)
        elif name == "round":
            if state.phase == "round":
                end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
            elif state.round < state.settings.rounds:
                begin_round(state, [p for p in PLAYERS if p != PLAYERS[kind]])
        elif name == "join":
            join(state, actor=player, name=player.upper(), now=now, key="LINKKEY")
        elif name == "withdraw":
            withdraw(state, actor=player, now=now)
        elif name == "rejoin":
            rejoin(state, actor=player, now=now)
        elif name == "kick":
            kick(state, actor=HOST, player=player, reason="r", now=now)
        elif name == "ban":
            ban(state, actor=HOST, player=player, reason="r", now=now)
        elif name == "disqualify":
            disqualify(state, actor=HOST, player=player, round=1 + kind, reason="r", now=now)
        elif name == "restore":
            restore(state, actor=HOST, player=player, round=1 + kind, now=now)
    except TournamentError:
        pass


OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["result"] * 4
            + ["round"] * 2
            + ["join", "withdraw", "rejoin", "kick", "ban", "disqualify", "restore"]
        ),
        st.integers(0, len(PLAYERS) - 1),
        st.integers(0, 2),
        st.integers(0, 52),
        st.integers(0, 3),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(ops=OPS, mode=st.sampled_from(["points", "time"]))
def test_the_table_is_always_the_full_ranking(
    ops: list[tuple[str, int, int, int, int]], mode: str
) -> None:
    """Whatever happened (results, rounds ending, players leaving, struck and restored
    results), the table kept up to date act by act equals ranking the field from scratch."""
    state = with_players(new(rounds=3, scoring=mode, late_join_until=3), *PLAYERS[:4])
    table = Table()
    table.update(state)
    assert_full_ranking(table, state)
    for op in ops:
        act(state, op)
        table.update(state)
        assert_full_ranking(table, state)


def test_results_in_a_round_do_not_rank_the_field_again() -> None:
    """The standings count ended rounds: the round's results leave them as they were, so
    the table is not ranked again until the round ends."""
    state = with_players(new(rounds=2), *PLAYERS)
    begin_round(state, PLAYERS)
    table = Table()
    assert table.update(state) is True  # the first ranking
    for i in range(len(PLAYERS)):
        act(state, ("result", i, i % 3, 10 + i, i))
        assert table.update(state) is False
    assert_full_ranking(table, state)
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    assert table.update(state) is True
    assert_full_ranking(table, state)
    assert table.by_player[PLAYERS[0]]["points"] > 0  # the won deal counts now


def test_a_disqualified_result_of_an_ended_round_ranks_again() -> None:
    state = with_players(new(rounds=2), *PLAYERS[:3])
    begin_round(state, PLAYERS[:3])
    for i in range(3):
        act(state, ("result", i, 0, i, 0))
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    table = Table()
    table.update(state)
    first = table.top_players
    disqualify(
        state, actor=HOST, player=PLAYERS[0], round=1, reason="r", now=state.rounds[-1].deadline
    )
    assert table.update(state) is True
    assert table.top_players != first
    assert_full_ranking(table, state)
    restore(state, actor=HOST, player=PLAYERS[0], round=1, now=state.rounds[-1].deadline)
    assert table.update(state) is True
    assert table.top_players == first


@given(items=st.lists(st.integers(), max_size=200), size=st.integers(1, 60))
def test_slices_cover_everything_in_order(items: list[int], size: int) -> None:
    parts = list(slices(items, size))
    assert [x for part in parts for x in part] == items
    assert all(1 <= len(part) <= size for part in parts)


@given(followers=st.integers(0, 100_000))
def test_a_push_is_spread_over_at_most_the_spread(followers: int) -> None:
    """However many follow, a push's pauses add up to at most SPREAD (less than the 0.5 s
    between pushes), each at most SLICE_PAUSE."""
    pause = pause_between(followers)
    gaps = max(0, len(list(slices(range(followers), SLICE))) - 1)
    assert 0 < pause <= SLICE_PAUSE
    assert gaps * pause <= SPREAD + 1e-9
