"""Who the quick-play pools pair, by hand-worked cases: the rating window and how it widens,
the longest waiter first with the nearest ratings, rooms of 4, and that after a pass nobody
is left waiting with enough others within reach to fill a room. Pure: the fast tier."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.quickplay.pairing import (
    POOLS,
    Pool,
    PoolError,
    Seeker,
    compatible,
    groups,
    pool_of,
    waiting_with_match,
    window,
)

T0 = 1_000_000


def seeker(name: str, rating: float, waited_s: float = 0.0, now: int = T0) -> Seeker:
    """A seeker called ``name`` who has waited ``waited_s`` seconds at ``now``."""
    return Seeker(
        key=f"p:{name}",
        name=name,
        rating=rating,
        rd=100.0,
        since=now - int(waited_s * 1000),
        worker="w",
        conn=f"w/{name}",
        token_hash="h",
        player=name,
    )


def names(rooms: list[tuple[Seeker, ...]]) -> list[list[str]]:
    return [[s.name for s in room] for room in rooms]


def test_the_window_starts_at_150_points_and_widens_by_50_a_second() -> None:
    assert window(0) == 150
    assert window(1000) == 200
    assert window(10_000) == 650
    assert window(-5) == 150  # a clock a hair behind: no narrower than at once


def test_two_seekers_within_the_window_race_at_once() -> None:
    ann, bob = seeker("ann", 1500), seeker("bob", 1650)
    assert compatible(ann, bob, T0)
    assert names(groups([ann, bob], 2, T0)) == [["ann", "bob"]]


def test_two_seekers_too_far_apart_wait_until_the_longer_waiters_window_reaches() -> None:
    ann = seeker("ann", 1500, waited_s=2)  # window 250 at T0
    bob = seeker("bob", 1800)  # 300 points away
    assert groups([ann, bob], 2, T0) == []
    # one second later ann's window is 300: it reaches bob, whose own is still 200
    later = T0 + 1000
    assert compatible(ann, bob, later)
    assert names(groups([ann, bob], 2, later)) == [["ann", "bob"]]


def test_the_longest_waiter_is_paired_first_with_the_nearest_rating() -> None:
    # at T0: ann has waited 6 s (window 450); bob 1 s; cid at once
    ann = seeker("ann", 1500, waited_s=6)
    bob = seeker("bob", 1520, waited_s=1)
    cid = seeker("cid", 1490)
    dan = seeker("dan", 1300)  # 200 from ann: within her window, but not the nearest
    # ann takes cid (10 points) over bob (20) and dan (200); then bob, 1 s in (window 200),
    # reaches dan at 220? no: bob waits
    assert names(groups([dan, cid, bob, ann], 2, T0)) == [["ann", "cid"]]
    # with dan at 1330 bob reaches him (190 <= 200)
    dan = seeker("dan", 1330)
    assert names(groups([dan, cid, bob, ann], 2, T0)) == [["ann", "cid"], ["bob", "dan"]]


def test_equal_distances_go_to_the_longer_waiter() -> None:
    ann = seeker("ann", 1500, waited_s=5)
    bob = seeker("bob", 1550, waited_s=1)
    cid = seeker("cid", 1450, waited_s=3)
    assert names(groups([bob, cid, ann], 2, T0)) == [["ann", "cid"]]


def test_a_room_of_four_needs_three_others_within_the_first_ones_window() -> None:
    ann = seeker("ann", 1500, waited_s=2)  # window 250
    bob = seeker("bob", 1600)
    cid = seeker("cid", 1400)
    dan = seeker("dan", 1800)  # 300 away: outside
    assert groups([ann, bob, cid, dan], 4, T0) == []
    eve = seeker("eve", 1700)  # 200 away: the third
    assert names(groups([ann, bob, cid, dan, eve], 4, T0)) == [["ann", "bob", "cid", "eve"]]
    # 2 s later ann's window is 350: dan is in reach, but eve and bob are nearer
    assert names(groups([ann, bob, cid, dan, eve], 4, T0 + 2000)) == [["ann", "bob", "cid", "eve"]]


def test_a_room_lists_its_seekers_in_the_order_they_sought() -> None:
    ann = seeker("ann", 1500, waited_s=1)
    bob = seeker("bob", 1510, waited_s=3)
    cid = seeker("cid", 1490, waited_s=2)
    dan = seeker("dan", 1505)
    (room,) = groups([ann, bob, cid, dan], 4, T0)
    assert [s.name for s in room] == ["bob", "cid", "ann", "dan"]


def test_nobody_is_in_two_rooms() -> None:
    crowd = [seeker(f"p{i}", 1500 + i, waited_s=i % 7) for i in range(41)]
    rooms = groups(crowd, 4, T0)
    keys = [s.key for room in rooms for s in room]
    assert len(keys) == len(set(keys)) == 40  # ten rooms; one left over


ratings = st.floats(min_value=800, max_value=2600, allow_nan=False)
waits = st.floats(min_value=0, max_value=30)


@given(
    st.lists(st.tuples(ratings, waits), min_size=0, max_size=30),
    st.sampled_from([2, 4]),
)
def test_after_a_pass_nobody_waits_with_a_room_to_fill(
    crowd: list[tuple[float, float]], size: int
) -> None:
    seekers = [seeker(f"p{i}", r, w) for i, (r, w) in enumerate(crowd)]
    rooms = groups(seekers, size, T0)
    taken = {s.key for room in rooms for s in room}
    for room in rooms:
        assert len(room) == size
        # the seeker the room was made for has every other within their window
        assert any(
            all(abs(s.rating - a.rating) <= window(T0 - a.since) for s in room) for a in room
        )
    left = [s for s in seekers if s.key not in taken]
    assert waiting_with_match(left, size, T0) == []


def test_the_pools_are_every_game_size_and_time_limit_rated_only_with_a_time_limit() -> None:
    assert len(POOLS) == 3 * 2 * (3 + 2)
    assert Pool("klondike", 2, None, False) in POOLS
    assert all(p.time_limit is not None for p in POOLS if p.rated)
    for pool in POOLS:
        assert Pool.parse(pool.id) == pool
        assert eval(repr(pool)) == pool  # the parse call
    assert Pool("klondike-3", 4, 600, True).id == "klondike-3:4:600:rated"
    assert Pool("easy-harp", 4, 300, True).smaller() == Pool("easy-harp", 2, 300, True)
    assert Pool("easy-harp", 2, 300, True).smaller() is None


@pytest.mark.parametrize(
    ("game", "players", "time_limit", "rated", "code"),
    [
        ("chess", 2, None, None, "no_such_pool"),
        ("klondike", 3, None, None, "no_such_pool"),
        ("klondike", 2, 301, None, "bad_time_limit"),
        ("klondike", 2, -1, False, "bad_time_limit"),
        ("klondike", 2, None, True, "rated_needs_time_limit"),
    ],
)
def test_a_pool_that_does_not_exist_is_refused_by_name(
    game: str, players: int, time_limit: int | None, rated: bool | None, code: str
) -> None:
    with pytest.raises(PoolError) as info:
        pool_of(game, players, time_limit, rated, identified=True)
    assert info.value.code == code


@pytest.mark.parametrize(
    "text", ["", "klondike", "klondike:2:0", "klondike:2:0:ranked", "k:x:0:rated"]
)
def test_a_malformed_pool_id_is_refused(text: str) -> None:
    with pytest.raises(PoolError):
        Pool.parse(text)


def test_a_seek_is_rated_by_default_for_an_identity_with_a_time_limit() -> None:
    assert pool_of("klondike", 2, 300, None, identified=True).rated
    assert not pool_of("klondike", 2, 300, None, identified=False).rated
    assert not pool_of("klondike", 2, None, None, identified=True).rated  # untimed: casual
    assert not pool_of("klondike", 2, 300, False, identified=True).rated


def test_a_seeker_round_trips_through_its_stored_form() -> None:
    ann = seeker("ann", 1523.5, waited_s=3)
    assert Seeker.from_json(ann.to_json()) == ann


def test_the_pairing_module_is_pure() -> None:
    """It imports the standard library's pure parts and orjson only (the fast tier may use
    it, tests/conftest.py)."""
    path = Path(__file__).resolve().parent.parent / "server" / "quickplay" / "pairing.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    imported = {
        (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported <= {"__future__", "collections.abc", "dataclasses", "typing", "orjson"}
