"""What a rated race counts as: its pairwise results by hand-worked tables (ties and
abandonment included), one rating period per race, the provisional bound, the cooldown on
seeking, and which rooms' races are rated."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol import RaceStatus
from server.ratings.glicko import START, Rating, rate
from server.ratings.rules import (
    IDLE_MS,
    PROVISIONAL_RD,
    Racer,
    Standing,
    abandoned,
    is_provisional,
    is_rated,
    outcome,
    pairwise,
    rate_race,
    seek_cooldown_ms,
    shown,
)
from server.records.models import SeatRecord
from server.rooms.room import ProgressState, RoomState, rank

MIN = 60_000


def racer(seat: int, status: RaceStatus, cards: int = 52, **kw: Any) -> Racer:
    """A racer: a winner's time is ``elapsed_ms``; score 100 and 80 moves unless given."""
    return Racer(
        seat=seat,
        status=status,
        elapsed_ms=kw.get("elapsed_ms") if status == "won" else None,
        moves=kw.get("moves", 80),
        on_foundations=cards,
        score=kw.get("score", 100),
        abandoned=kw.get("abandoned", False),
    )


def test_four_racers_with_ties_count_as_six_results() -> None:
    """Seats 1 and 2 win in the same time with the same moves (a tie); 3 resigns and 4 runs
    out of time, both with 20 cards, score 150, 60 moves (a tie; 4 kept moving)."""
    table = [
        racer(1, "won", elapsed_ms=300_000, moves=140),
        racer(2, "won", elapsed_ms=300_000, moves=140),
        racer(3, "resigned", 20, score=150, moves=60),
        racer(4, "timeout", 20, score=150, moves=60),
    ]
    assert pairwise(table) == [
        (1, 2, 0.5),
        (1, 3, 1.0),
        (1, 4, 1.0),
        (2, 3, 1.0),
        (2, 4, 1.0),
        (3, 4, 0.5),
    ]
    assert pairwise(table[::-1]) == pairwise(table)  # seat order, whatever the input's


def test_the_ranking_decides_each_pair() -> None:
    """The faster win, then fewer moves; a non-winner by cards, then score, then moves."""
    assert outcome(racer(1, "won", elapsed_ms=5), racer(2, "won", elapsed_ms=6)) == 1.0
    assert outcome(racer(1, "won", elapsed_ms=5, moves=90), racer(2, "won", elapsed_ms=5)) == 0.0
    assert outcome(racer(1, "resigned", 10), racer(2, "won", elapsed_ms=9)) == 0.0
    assert outcome(racer(1, "resigned", 10), racer(2, "timeout", 11)) == 0.0
    assert outcome(racer(1, "resigned", 10, score=5), racer(2, "timeout", 10, score=4)) == 1.0
    assert outcome(racer(1, "resigned", 10, moves=3), racer(2, "timeout", 10, moves=4)) == 1.0


def test_abandoning_loses_to_everyone_still_racing() -> None:
    """1 resigns with 10 cards; 2 leaves with 30 (abandoned); 3 wins; 4 runs out of time
    with 5 cards, not having moved for the race's last minutes (abandoned); 5 runs out of
    time with 12 cards, moving to the end. Between two who abandoned, the places decide."""
    table = [
        racer(1, "resigned", 10),
        racer(2, "left", 30, abandoned=True),
        racer(3, "won", elapsed_ms=400_000),
        racer(4, "timeout", 5, abandoned=True),
        racer(5, "timeout", 12),
    ]
    assert pairwise(table) == [
        (1, 2, 1.0),
        (1, 3, 0.0),
        (1, 4, 1.0),
        (1, 5, 0.0),
        (2, 3, 0.0),
        (2, 4, 1.0),
        (2, 5, 0.0),
        (3, 4, 1.0),
        (3, 5, 1.0),
        (4, 5, 0.0),
    ]


def test_who_abandoned() -> None:
    race = 10 * MIN
    assert abandoned("left", race, race)  # left: whatever they did before
    assert abandoned("timeout", race - IDLE_MS - 1, race)  # no move in the last minute
    assert abandoned("timeout", 0, race)  # never moved
    assert not abandoned("timeout", race - IDLE_MS, race)
    assert not abandoned("resigned", 0, race)  # resigning is a result, not abandoning
    assert not abandoned("won", 0, race)
    seat = SeatRecord(
        seat=4,
        name="D",
        status="timeout",
        rank=4,
        score=0,
        moves=2,
        on_foundations=0,
        elapsed_ms=None,
        actions=("s", "s"),
        action_times=(1000, 2000),
    )
    assert Racer.of(seat, 2000, race).abandoned and not Racer.of(seat, race, race).abandoned


progress_rows = st.lists(
    st.builds(
        ProgressState,
        race=st.just(1),
        seat=st.integers(1, 16),
        status=st.sampled_from(["won", "resigned", "timeout"]),
        on_foundations=st.integers(0, 52),
        score=st.integers(-50, 200),
        moves=st.integers(0, 30),
        elapsed_ms=st.integers(1, 5),
    ),
    min_size=2,
    max_size=8,
    unique_by=lambda p: p.seat,
)


@given(progress_rows)
def test_pairs_follow_the_room_s_one_ranking(rows: list[ProgressState]) -> None:
    """Each pair is decided by the places the room's results give (one ranking rule, from
    the room's results to the ratings): the better place wins, a shared place draws."""
    racers = [
        racer(
            p.seat,
            p.status,
            p.on_foundations,
            score=p.score,
            moves=p.moves,
            elapsed_ms=p.elapsed_ms,
        )
        for p in rows
    ]
    place = {p.seat: shown for shown, p in rank(rows)}
    for a, b, score in pairwise(racers):
        if score == 1.0:
            assert place[a] < place[b]
        elif score == 0.0:
            assert place[a] > place[b]
        else:  # a draw: the room's results give both the same place
            assert score == 0.5 and place[a] == place[b]
    assert len(pairwise(racers)) == len(rows) * (len(rows) - 1) // 2


def test_a_race_is_one_rating_period_against_everyone_as_they_stood() -> None:
    """Each racer is rated once, against the others' ratings from before the race."""
    ann, bob, cid = Rating(1600, 80, 0.06), Rating(1500, 200, 0.06), START
    standings = {"ann": Standing(ann, races=9), "bob": Standing(bob, races=3)}
    racers = [
        ("bob", racer(2, "won", elapsed_ms=1000)),
        ("ann", racer(1, "resigned", 20)),
        ("cid", racer(3, "resigned", 20)),
    ]
    changes = {c.player: c for c in rate_race(racers, standings)}
    assert changes["ann"].after == rate(ann, [(bob, 0.0), (cid, 0.5)])
    assert changes["bob"].after == rate(bob, [(ann, 1.0), (cid, 1.0)])
    assert changes["cid"].after == rate(cid, [(ann, 0.5), (bob, 0.0)])
    assert changes["cid"].before == START  # unrated: 1500 ± 350
    assert [(c.won, c.drawn, c.lost) for c in changes.values()] == [(0, 1, 1), (2, 0, 0), (0, 1, 1)]
    after = changes["ann"].apply(standings["ann"], at=777)
    assert after == Standing(
        changes["ann"].after, races=10, won=0, drawn=1, lost=1, last_race_at=777
    )
    assert rate_race(racers[:1], standings) == []  # nobody to race against


def test_abandoning_is_counted_on_the_record() -> None:
    racers = [("a", racer(1, "left", 40, abandoned=True)), ("b", racer(2, "resigned", 1))]
    left, stayed = rate_race(racers, {})
    assert left.abandoned and (left.won, left.lost) == (0, 1) and stayed.won == 1
    assert left.apply(Standing(), 5).abandoned == 1 and stayed.apply(Standing(), 5).abandoned == 0


def test_provisional_until_the_rd_falls_below_the_bound() -> None:
    assert is_provisional(START) and Standing().provisional and shown(START) == "1500?"
    assert is_provisional(Rating(1500, PROVISIONAL_RD))
    assert not is_provisional(Rating(1520.4, PROVISIONAL_RD - 0.01))
    assert shown(Rating(1520.4, 60)) == "1520"
    # a newcomer racing established players leaves it, and not after one race
    me, races = START, 0
    while is_provisional(me):
        me = rate(me, [(Rating(1500, 60), float(races % 2))])
        races += 1
    assert 5 < races <= 15


def test_the_cooldown_on_seeking_grows_with_abandoned_races() -> None:
    now = 10**12
    assert seek_cooldown_ms([], now) == 0
    assert seek_cooldown_ms([now - 1000], now) == 0  # once is not a habit
    assert seek_cooldown_ms([now - 3 * MIN, now - MIN], now) == 4 * MIN  # 5 min after the last
    assert seek_cooldown_ms([now - 9 * MIN, now - 7 * MIN, now - 5 * MIN], now) == 10 * MIN
    assert seek_cooldown_ms([now - i * MIN for i in range(1, 6)], now) == 59 * MIN
    assert seek_cooldown_ms([now - 10 * MIN, now - 8 * MIN], now) == 0  # served
    day = 24 * 60 * MIN
    assert seek_cooldown_ms([now - day - 1, now - MIN], now) == 0  # the first is a day old


def _room(**kw: Any) -> RoomState:
    racers = kw.pop("racers", {1: "a" * 16, 2: "b" * 16})
    return RoomState.model_validate(
        {
            "code": "K7QF2M",
            "game": "klondike",
            "deal": "KL1-1-AAAAAAK",
            "options": {"rated": kw.pop("rated", True)},
            "participants": sorted(racers),
            "racer_ids": racers,
            **kw,
        }
    )


@pytest.mark.parametrize(
    ("room", "rated"),
    [
        (_room(), True),
        (_room(rated=False), False),
        (_room(racers={1: "a" * 16, 2: None}), False),  # a guest (or a robot)
        (_room(racers={1: "a" * 16, 2: "a" * 16}), False),  # one identity, two seats
        (_room(racers={1: "a" * 16}), False),  # nobody to race against
        (_room(daily_day="2026-01-02"), False),
        (_room(tournament="T1"), False),
    ],
)
def test_which_races_are_rated(room: RoomState, rated: bool) -> None:
    assert is_rated(room) is rated
