"""The server's own pure parts of tournaments: rooms of a round, seat tokens, the summary the
timers read, and a text for every refusal. No event loop."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from tournament_fixtures import T0, begin_round, new, with_players

from server.tournaments import SYSTEM, due
from server.tournaments.live import (
    ROOM_SIZE,
    new_live,
    plan_rooms,
    seat_token,
    summary_due,
    summary_of,
    wake_at,
)

ROOT = Path(__file__).resolve().parent.parent


@given(st.integers(min_value=0, max_value=1000))
def test_rooms_hold_everyone_once_at_most_16_and_even(n: int) -> None:
    players = [f"p{i}" for i in range(n)]
    rooms = plan_rooms(players)
    assert [p for room in rooms for p in room] == players  # join order kept
    assert all(1 <= len(room) <= ROOM_SIZE for room in rooms)
    assert len(rooms) == -(-n // ROOM_SIZE)
    if rooms:
        assert max(map(len, rooms)) - min(map(len, rooms)) <= 1


@given(st.lists(st.sampled_from(["w1", "w2", "w3", "w4"]), max_size=300))
def test_rooms_group_the_players_of_a_worker(workers: list[str]) -> None:
    players = [f"p{i}" for i in range(len(workers))]
    worker_of = dict(zip(players, workers, strict=True))
    rooms = plan_rooms(players, worker_of=worker_of)
    # the same shape as without workers: everyone once, at most 16, even sizes
    assert sorted(p for room in rooms for p in room) == sorted(players)
    assert [len(r) for r in rooms] == [len(r) for r in plan_rooms(players)]
    # a room's players on one worker, but for one room at most per boundary between two
    straddling = [r for r in rooms if len({worker_of[p] for p in r}) > 1]
    assert len(straddling) <= max(0, len(set(workers)) - 1)
    # join order within a worker
    for worker in set(workers):
        mine = [p for room in rooms for p in room if worker_of[p] == worker]
        assert mine == [p for p in players if worker_of[p] == worker]


def test_players_joined_in_turns_from_two_workers_play_in_a_room_per_worker() -> None:
    players = [f"p{i}" for i in range(20)]
    worker_of = {p: f"w{i % 2}" for i, p in enumerate(players)}
    rooms = plan_rooms(players, worker_of=worker_of)
    assert [{worker_of[p] for p in room} for room in rooms] == [{"w0"}, {"w1"}]
    # a player whose worker is not known is seated all the same
    rooms = plan_rooms(players, worker_of={p: w for p, w in worker_of.items() if p != "p3"})
    assert sorted(p for room in rooms for p in room) == sorted(players)


def test_a_field_of_1000_plays_in_63_rooms() -> None:
    rooms = plan_rooms([str(i) for i in range(1000)])
    assert len(rooms) == 63 and {len(r) for r in rooms} == {15, 16}


def test_seat_tokens_differ_by_round_and_player_and_by_secret() -> None:
    state = with_players(new(), "ann", "bob")
    live, other = new_live(state), new_live(state)
    tokens = {seat_token(live, r, p) for r in (1, 2) for p in ("ann", "bob")}
    assert len(tokens) == 4
    assert seat_token(live, 1, "ann") == seat_token(live, 1, "ann")
    assert seat_token(other, 1, "ann") != seat_token(live, 1, "ann")
    assert all(len(t) == 32 for t in tokens)


def test_the_summary_tells_what_the_whole_state_tells() -> None:
    state = with_players(new(rounds=2, starts_at=T0 + 1000), "ann", "bob")
    for now in (T0, T0 + 1000):
        assert summary_due(summary_of(new_live(state)), now) == due(state, now)
    assert wake_at(summary_of(new_live(state))) == T0 + 1000
    begin_round(state, ["ann", "bob"])
    summary = summary_of(new_live(state))
    current = state.rounds[-1]
    assert summary.participants == 2 and summary.deadline == current.deadline
    for now in (current.start_at, current.deadline - 1, current.deadline):
        assert summary_due(summary, now) == due(state, now)
    assert SYSTEM not in state.players


def test_every_refusal_of_a_tournament_has_a_text_in_every_language() -> None:
    sources = "\n".join(p.read_text() for p in (ROOT / "server" / "tournaments").glob("*.py"))
    codes = set(re.findall(r'TournamentError\(\s*"([a-z_]+)"', sources))
    codes |= {"bad_settings", "unknown_tournament"}
    assert len(codes) > 20
    for lang in ("en", "ru", "sv"):
        catalogue = json.loads((ROOT / "clients" / "web" / "i18n" / f"{lang}.json").read_text())
        assert sorted(c for c in codes if f"error.{c}" not in catalogue) == [], lang
