"""Watching's pure rules, without a server: who may see a racer's board, which rooms the
directory lists and in what order, the featured race, a spectator's view kept by events and
rolled back by the move logs' times, spectator counts told at most once a second."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import new_game
from protocol import Phase, RaceStatus, RoomOptions
from server.config import now_ms
from server.rooms.feed import Feed, apply_event, event_time, rolled_back
from server.rooms.local import LocalRoom, spectator_frame
from server.rooms.room import ProgressState, RoomState, SeatState
from server.rooms.updates import SPECTATORS_EVERY_MS, CountSpectator, TellSpectators
from server.rooms.view import NOBODY, BoardFacts, Viewer, boards_shown, snapshot
from server.store.rooms import Snapshot, log_entry
from server.tournaments.updates import EndSecret, SecretEnd
from server.watching.entries import (
    FEATURED_POOL,
    Entry,
    Listing,
    encode_entry,
    live_entry,
    ordered,
    pick_featured,
    top,
)

DEAL = "KL1-1-AAAAAAM"  # column 3 shows an ace


def room(phase: str = "running", **options: Any) -> RoomState:
    return RoomState(
        code="K7QF2M",
        game="klondike",
        options=RoomOptions(**options),
        deal=DEAL,
        seats=[
            SeatState(seat=1, name="Ann", token_hash="a"),
            SeatState(seat=2, name="Bob", token_hash="b"),
        ],
        host=1,
        phase=phase,  # type: ignore[arg-type]
        race=1 if phase != "lobby" else 0,
        start_at=10_000 if phase != "lobby" else None,
        participants=[1, 2] if phase != "lobby" else [],
        race_deals=[DEAL] if phase != "lobby" else [],
        created_at=5_000,
    )


def body_of(r: RoomState, progress: dict[int, ProgressState] | None = None) -> Any:
    return snapshot(r, progress or {}, 3, 20_000, "", viewer=None)


def progress(seat: int, on: int, status: RaceStatus = "playing", elapsed: int | None = None) -> Any:
    return ProgressState(
        race=1, seat=seat, on_foundations=on, total=52, status=status, elapsed_ms=elapsed
    )


# --------------------------------------------------------------------- who sees boards

NOW = 1_000_000
SECRET = NOW + 60_000  # the day's end, or the round's deadline: still to come
RACING = Viewer(racing=True)
FINISHED = Viewer(finished=True)
ENTERED = Viewer(entered=True)
PLAYED_TODAY = Viewer(attempt_done=True)


def facts(
    *,
    secret_until: int | None = None,
    tournament: bool = False,
    delay: int = 0,
    spectator_boards: bool = True,
    phase: Phase = "running",
) -> BoardFacts:
    return BoardFacts(phase, secret_until, tournament, delay, spectator_boards)


@pytest.mark.parametrize(
    ("viewer", "room", "shown"),
    [
        # any room: a racer still racing sees the others' progress only
        (RACING, facts(), "progress"),
        (NOBODY, facts(), "live"),
        (NOBODY, facts(delay=30), "delayed"),
        (FINISHED, facts(), "live"),
        # the host's choice: progress only while the race runs; boards once it is over
        (NOBODY, facts(spectator_boards=False), "progress"),
        (FINISHED, facts(spectator_boards=False), "live"),
        (NOBODY, facts(spectator_boards=False, phase="ended"), "live"),
        # the day's deal: only who has finished their own attempt at it today
        (NOBODY, facts(secret_until=SECRET), "progress"),
        (ENTERED, facts(secret_until=SECRET), "progress"),
        (PLAYED_TODAY, facts(secret_until=SECRET), "live"),
        (PLAYED_TODAY, facts(secret_until=SECRET, delay=10), "delayed"),
        (FINISHED, facts(secret_until=SECRET), "live"),
        (NOBODY, facts(secret_until=SECRET, phase="ended"), "progress"),
        (NOBODY, facts(secret_until=NOW), "live"),  # the day is over
        # a tournament round: nobody entered; the others after the host's delay or the end
        (NOBODY, facts(secret_until=SECRET, tournament=True), "progress"),
        (NOBODY, facts(secret_until=SECRET, tournament=True, delay=30), "delayed"),
        (ENTERED, facts(secret_until=SECRET, tournament=True, delay=30), "progress"),
        (FINISHED, facts(secret_until=SECRET, tournament=True, delay=30), "progress"),
        (PLAYED_TODAY, facts(secret_until=SECRET, tournament=True), "progress"),
        (ENTERED, facts(secret_until=NOW, tournament=True), "live"),  # the round is over
    ],
)
def test_who_may_see_a_board(viewer: Viewer, room: BoardFacts, shown: str) -> None:
    assert boards_shown(viewer, room, NOW) == shown


def test_a_rooms_facts_come_from_its_state() -> None:
    daily = room().model_copy(update={"secret_until": SECRET, "daily_day": "2026-04-16"})
    assert boards_shown(NOBODY, BoardFacts.of(daily), NOW) == "progress"
    hidden = room(spectator_boards=False, spectator_delay=5)
    assert BoardFacts.of(hidden) == facts(delay=5, spectator_boards=False)
    round_ = room().model_copy(update={"secret_until": SECRET, "tournament": "K7QF2M"})
    assert BoardFacts.of(round_).tournament


# --------------------------------------------------------------------- a round over early


def round_room(phase: str, secret_until: int) -> RoomState:
    """A tournament round's room, secret until ``secret_until`` (its deadline, as made)."""
    return room(phase).model_copy(update={"secret_until": secret_until, "tournament": "K7QF2M"})


def race_ended(secret_until: int, race: int = 1) -> dict[str, Any]:
    """A ``race_ended`` as the workers receive it: with the secret its race started with."""
    return {"type": "race_ended", "race": race, "deal": DEAL, "results": [],
            "secret_until": secret_until}  # fmt: skip


def test_a_round_over_early_ends_its_rooms_secret_then() -> None:
    now = now_ms()
    deadline = now + 600_000
    round_ = round_room("ended", deadline)
    # ran to its deadline: as made, its secret over at the deadline
    assert EndSecret(deadline + 5)(round_, {}) == ([], SecretEnd(1, deadline, earlier=False))
    assert round_.secret_until == deadline
    assert boards_shown(ENTERED, BoardFacts.of(round_), now) == "progress"
    assert EndSecret(now - 1)(round_, {}) == ([], SecretEnd(1, now - 1, earlier=True))
    assert round_.secret_until == now - 1
    assert boards_shown(ENTERED, BoardFacts.of(round_), now) == "live"
    # never put off again: the end already written, as a second driver's catch-up finds it
    assert EndSecret(now)(round_, {}) == ([], SecretEnd(1, now - 1, earlier=False))
    assert round_.secret_until == now - 1
    # the day's deal keeps its day whatever it is told
    daily = room().model_copy(update={"secret_until": deadline, "daily_day": "2026-04-16"})
    assert EndSecret(now - 1)(daily, {}) == ([], None) and daily.secret_until == deadline


def test_a_worker_told_of_an_early_end_shows_the_race_as_after_a_deadline() -> None:
    now = now_ms()
    deadline = now + 600_000
    made = Snapshot(round_room("ended", deadline), {}, 9)
    local = LocalRoom("K7QF2M")
    local.learn(made)
    assert boards_shown(ENTERED, local.facts(), now) == "progress"
    assert local.secret_of(race_ended(deadline)) == deadline
    local.end_secret((1, now - 1))
    assert boards_shown(ENTERED, local.facts(), now) == "live"
    assert local.secret_of(race_ended(deadline)) == now - 1  # its events carry the deadline
    assert local.secret_of(race_ended(deadline, race=2)) == deadline  # another race: as told
    local.learn(made)  # a snapshot read before the end, learnt after it
    assert local.secret_until == now - 1
    # a worker that takes the room later reads the end from the store
    later = LocalRoom("K7QF2M")
    later.learn(Snapshot(round_room("ended", now - 1), {}, 9))
    assert later.secret_of(race_ended(deadline)) == now - 1
    # the day's deal: its events' secret, whatever a snapshot of it says
    day = LocalRoom("K7QF2M")
    day.learn(Snapshot(room("ended").model_copy(update={"secret_until": now - 1}), {}, 9))
    assert day.secret_of(race_ended(deadline)) == deadline


def test_a_worker_that_missed_the_rounds_end_finds_it_in_the_stored_room() -> None:
    now = now_ms()
    deadline = now + 600_000
    local = LocalRoom("K7QF2M", feed=Feed("K7QF2M", lambda *_: None))
    local.learn(Snapshot(round_room("ended", deadline), {}, 9))
    assert local.missed_end(round_room("ended", deadline), now) is None  # the round runs
    over = round_room("ended", now - 1)
    assert local.missed_end(over, now) == (1, now - 1)  # secret_ends did not come
    assert local.missed_end(over.model_copy(update={"race": 2}), now) is None
    # the day's deal: its secret ends at the time its events carry, never earlier
    on_day = {"daily_day": "2026-04-16"}
    day = LocalRoom("K7QF2M")
    day.learn(
        Snapshot(room("ended").model_copy(update={**on_day, "secret_until": deadline}), {}, 9)
    )
    assert (
        day.missed_end(room().model_copy(update={**on_day, "secret_until": now - 1}), now) is None
    )
    # a snapshot learnt ends it on this worker, its spectators' feed too: nothing missed now
    local.learn(Snapshot(over, {}, 9))
    assert local.secret_until == now - 1
    assert local.feed is not None and local.feed.ended == (1, now - 1)
    assert local.missed_end(over, now) is None


def test_spectators_shown_the_races_end_are_told_the_deal_once_the_round_is_over() -> None:
    now = now_ms()
    deadline = now + 600_000
    body = body_of(round_room("running", deadline))
    apply_event(body, race_ended(deadline))
    assert body["phase"] == "ended" and body["deal"] is None  # the round runs on
    early = body_of(round_room("running", deadline))
    apply_event(early, race_ended(deadline), (1, now - 1))
    assert early["deal"] == DEAL
    # a feed told of the end after the race's end was shown
    feed = Feed("K7QF2M", lambda *_: None)
    feed.body, feed.deal = body, DEAL
    event = race_ended(deadline)

    def sent() -> Any:
        return orjson.loads(spectator_frame(feed, event, orjson.dumps(event), boards=True))

    assert sent()["deal"] is None
    feed.end_secret((1, now - 1))
    assert body["deal"] == DEAL
    assert sent()["deal"] == DEAL and "secret_until" not in sent()


# --------------------------------------------------------------------- entries


def test_only_public_rooms_open_to_spectators_and_not_ended_are_listed() -> None:
    assert live_entry(body_of(room(private=True)), 1, "live") is None
    assert live_entry(body_of(room(spectators=False)), 1, "live") is None
    assert live_entry(body_of(room("ended")), 1, "live") is None
    lobby = room("lobby")
    assert live_entry(body_of(lobby), 1, "live") is not None
    for s in lobby.seats:
        s.connected = False
    assert live_entry(body_of(lobby), 1, "live") is None  # waiting, and nobody there


def test_an_entry_tells_the_gap_between_the_first_two() -> None:
    entry = live_entry(body_of(room(), {1: progress(1, 13), 2: progress(2, 0)}), 5_000, "live")
    assert entry is not None
    assert entry["gap"] == 0.25 and entry["phase"] == "running" and entry["created_at"] == 5_000
    assert [p["on_foundations"] for p in entry["players"]] == [13, 0]
    alone = room()
    alone.participants = [1]
    entry = live_entry(body_of(alone, {1: progress(1, 5)}), 1, "live")
    assert entry is not None and entry["gap"] is None


def test_an_entry_as_told_is_the_entry_as_written() -> None:
    body = live_entry(body_of(room(), {1: progress(1, 13), 2: progress(2, 0)}), 5_000, "live")
    assert body is not None
    data = orjson.dumps(body)
    told = Entry.told(orjson.loads(encode_entry("K7QF2M", 12, 99, body, data)))
    assert told == Entry.of("K7QF2M", body, data, 12, 99)
    assert orjson.loads(told.data) == body


def entry(code: str, *, spectators: int = 0, gap: float | None = 0.0, **room: Any) -> Entry:
    body: Any = {
        "room": code,
        "game": room.get("game", "klondike"),
        "phase": room.get("phase", "running"),
        "race": 1,
        "start_at": room.get("start_at", 1_000),
        "deadline": None,
        "created_at": room.get("created_at", 0),
        "spectators": spectators,
        "spectator_delay": 0,
        "players": [],
        "gap": gap,
    }
    return Entry.of(code, body, b"{}", 1, 0)


def codes(entries: list[Entry]) -> list[str]:
    return [e.code for e in entries]


def test_the_three_orders() -> None:
    rooms = [
        entry("A", spectators=1, gap=0.2, start_at=100),
        entry("B", spectators=5, gap=0.5, start_at=300),
        entry("C", spectators=5, gap=None, start_at=200),  # one racer
        entry("D", spectators=9, gap=None, phase="lobby", start_at=None, created_at=400),
        entry("E", spectators=1, gap=0.2, start_at=100),  # A's twin: the code decides
        entry("F", gap=0.0, game="easy-harp", start_at=50),
    ]
    assert codes(ordered(rooms, "closest")) == ["F", "A", "E", "B", "C", "D"]
    assert codes(ordered(rooms, "watched")) == ["D", "B", "C", "A", "E", "F"]
    assert codes(ordered(rooms, "newest")) == ["D", "B", "C", "A", "E", "F"]
    assert codes(ordered(rooms, "closest", "easy-harp")) == ["F"]
    assert codes(ordered(reversed(rooms), "closest")) == codes(ordered(rooms, "closest"))


@given(
    st.lists(
        st.tuples(
            st.integers(0, 5),  # spectators
            st.one_of(st.none(), st.sampled_from([0.0, 0.1, 0.5])),  # gap
            st.sampled_from(["running", "lobby"]),
            st.integers(0, 3),  # start
            st.sampled_from(["klondike", "easy-harp"]),
        ),
        max_size=30,
    ),
    st.sampled_from(["closest", "watched", "newest"]),
    st.one_of(st.none(), st.sampled_from(["klondike", "easy-harp"])),
    st.integers(1, 12),
)
def test_a_push_picks_the_first_of_the_order(
    rows: list[tuple[int, float | None, str, int, str]], sort: str, game: str | None, limit: int
) -> None:
    # a push selects the first `limit` without sorting everything: the same rooms, in the
    # same order, as the full order's first `limit`, ties included (many equal keys here)
    rooms = [
        entry(
            f"R{i:02d}",
            spectators=n,
            gap=gap,
            phase=phase,
            start_at=start if phase == "running" else None,
            created_at=start,
            game=g,
        )
        for i, (n, gap, phase, start, g) in enumerate(rows)
    ]
    full = ordered(rooms, sort, game)
    assert top(reversed(rooms), sort, game, limit) == (len(full), full[:limit])


_VIEWS = st.tuples(
    st.sampled_from(["closest", "watched", "newest"]),
    st.sampled_from([None, "klondike"]),
    st.integers(1, 3),
)


@given(
    st.lists(
        st.one_of(
            st.tuples(
                st.just("put"),
                st.integers(0, 5),  # room
                st.integers(0, 3),  # spectators
                st.one_of(st.none(), st.sampled_from([0.0, 0.25, 0.5])),
                st.sampled_from(["running", "lobby"]),
                st.sampled_from(["klondike", "easy-harp"]),
            ),
            st.tuples(st.just("remove"), st.integers(0, 5)),
            st.tuples(st.just("first"), _VIEWS),
            st.tuples(st.just("forget"), _VIEWS),
        ),
        max_size=60,
    )
)
@settings(max_examples=300)
def test_a_listing_keeps_each_views_first_rooms_as_the_full_order_has_them(
    ops: list[tuple[Any, ...]],
) -> None:
    # the first rooms of a view are chosen again only when a change may alter them: after
    # every change, each view kept chosen shows what the full order over every room says
    listing = Listing()
    games: dict[str, str] = {}  # a room keeps its game
    kept: set[tuple[str, str | None, int]] = set()
    for step, op in enumerate(ops):
        if op[0] == "put":
            _, i, n, gap, phase, game = op
            code = f"R{i}"
            game = games.setdefault(code, game)
            e = entry(code, spectators=n, gap=gap, phase=phase, start_at=i % 3, game=game)
            listing.put(dataclasses.replace(e, data=b"%d" % step))  # what it shows changes
        elif op[0] == "remove":
            listing.remove(f"R{op[1]}")
        elif op[0] == "forget":
            listing.forget(*op[1])
            kept.discard(op[1])
        else:
            kept.add(op[1])
        for sort, game, limit in kept:
            full = ordered(listing.entries.values(), sort, game)
            assert listing.first(sort, game, limit) == full[:limit]
            assert listing.total(game) == len(full)


def test_the_featured_race_is_the_closest_of_the_most_watched() -> None:
    crowd = [entry(f"W{i}", spectators=10 + i, gap=0.5) for i in range(FEATURED_POOL)]
    closer_but_less_watched = entry("X", spectators=1, gap=0.0)
    best_of_pool = entry("Y", spectators=10, gap=0.1)  # ties W0 on spectators: Y's code after
    pool = [*crowd, closer_but_less_watched]
    assert pick_featured(pool, "klondike") == "W4"  # X is not in the pool; equal gaps: W4
    assert pick_featured([*crowd[1:], best_of_pool, closer_but_less_watched], "klondike") == "Y"
    assert pick_featured([entry("S", spectators=3, gap=None)], "klondike") == "S"
    assert pick_featured([entry("L", phase="lobby", gap=None)], "klondike") is None
    assert pick_featured(pool, "easy-harp") is None


@given(
    st.lists(
        st.tuples(st.integers(0, 20), st.one_of(st.none(), st.integers(0, 52))),
        min_size=1,
        max_size=12,
    )
)
def test_the_featured_race_is_running_and_no_race_is_both_closer_and_as_watched(
    rows: list[tuple[int, int | None]],
) -> None:
    entries = [
        entry(f"R{i:02d}", spectators=s, gap=None if g is None else g / 52)
        for i, (s, g) in enumerate(rows)
    ]
    chosen = pick_featured(entries, "klondike")
    assert chosen is not None
    best = next(e for e in entries if e.code == chosen)
    contested = [e for e in entries if e.gap is not None]
    if contested:
        assert best.gap is not None
        watched_more = sum(e.spectators > best.spectators for e in contested)
        assert watched_more < FEATURED_POOL
        for e in contested:  # nobody at least as watched is strictly closer
            if e.spectators >= best.spectators:
                assert (e.gap or 0) >= best.gap


# --------------------------------------------------------------------- the spectators' view


def test_events_keep_a_spectators_snapshot() -> None:
    lobby = room("lobby")
    body = body_of(lobby)
    apply_event(body, {"type": "seat", "seat": 3, "name": "Cat", "connected": True,
                       "left": False, "host": False})  # fmt: skip
    apply_event(body, {"type": "spectators", "count": 4})
    apply_event(body, {"type": "race_starting", "race": 1, "start_at": 100, "deadline": None,
                       "seats": [1, 3], "deal": DEAL, "now": 50})  # fmt: skip
    assert [(s["seat"], s["status"]) for s in body["seats"]] == [
        (1, "playing"),
        (2, "waiting"),
        (3, "playing"),
    ]
    assert body["deal"] is None and body["spectators"] == 4
    apply_event(body, {"type": "progress", "race": 1, "seat": 3, "on_foundations": 7,
                       "total": 52, "score": 70, "moves": 20, "status": "playing",
                       "elapsed_ms": 900})  # fmt: skip
    apply_event(body, {"type": "player_finished", "race": 1, "seat": 3, "status": "resigned",
                       "elapsed_ms": 1000})  # fmt: skip
    cat = body["seats"][2]
    assert (cat["on_foundations"], cat["status"], cat["elapsed_ms"]) == (7, "resigned", 1000)
    apply_event(body, {"type": "seat", "seat": 2, "name": "Bob", "connected": False,
                       "left": True, "host": False})  # fmt: skip
    apply_event(body, {"type": "race_ended", "race": 1, "deal": DEAL, "results": []})
    assert [s["seat"] for s in body["seats"]] == [1, 3]
    assert body["phase"] == "ended" and body["deal"] == DEAL


def test_a_snapshot_rolled_back_shows_only_the_moves_made_before() -> None:
    r = room()
    start = r.start_at or 0
    logs = {
        1: [log_entry("t3-f", 1_000), log_entry("s", 2_000), log_entry("s", 9_000)],
        2: [log_entry("s", 500)],
    }
    now = {1: progress(1, 1, "won", 9_000), 2: progress(2, 0)}
    snap = Snapshot(r, now, 40)
    back = rolled_back(snap, logs, start + 2_500, begun=start - 3_000)
    game = new_game(DEAL)
    game.push_all(["t3-f", "s"])
    ann, bob = back["seats"]
    assert (ann["status"], ann["moves"], ann["on_foundations"]) == ("playing", game.moves, 1)
    assert ann["elapsed_ms"] == 2_500 and bob["moves"] == 1
    assert rolled_back(snap, logs, start + 9_500, begun=None)["seats"][0]["status"] == "won"
    # the race had not been started yet
    early = rolled_back(snap, logs, start - 5_000, begun=start - 3_000)
    assert early["phase"] == "lobby" and early["race"] == 0
    assert {s["status"] for s in early["seats"]} == {"waiting"}
    # a race that ended after the moment is still running then
    r.phase = "ended"
    r.results = [{"rank": 1, "seat": 1, "name": "Ann", "status": "won", "on_foundations": 52,
                  "score": 1, "moves": 3, "elapsed_ms": 9_000}]  # fmt: skip
    assert rolled_back(snap, logs, start + 8_000, None)["phase"] == "running"
    assert rolled_back(snap, logs, start + 9_001, None)["phase"] == "ended"


def test_event_times_come_from_their_content() -> None:
    assert event_time({"type": "race_starting", "now": 7}, None) == 7
    assert event_time({"type": "progress", "elapsed_ms": 30}, 100) == 130
    assert event_time({"type": "race_ended", "results": [{"elapsed_ms": 5}, {}]}, 100) == 105
    assert event_time({"type": "seat"}, 100) is None


# --------------------------------------------------------------------- spectator counts


@given(st.lists(st.tuples(st.integers(0, 1_500), st.sampled_from([1, -1])), max_size=40))
def test_the_count_is_told_at_most_once_a_second_and_always_in_the_end(
    steps: list[tuple[int, int]],
) -> None:
    r = room("lobby")
    r.spectators_told_at = -(10**6)
    now, told, due = 0, [], None
    for wait, change in steps:
        now += wait
        while due is not None and now >= due:  # the worker comes back when told to
            at = due
            events, due = TellSpectators(at)(r, {})
            told += [(at, e) for e in events]
        events, due = CountSpectator("w", change, now)(r, {})
        told += [(now, e) for e in events]
    if due is not None:
        at = due
        events, due = TellSpectators(at)(r, {})
        told += [(at, e) for e in events]
    assert due is None and r.spectators_told == r.spectators
    times = [t for t, _ in told]
    assert all(b - a >= SPECTATORS_EVERY_MS for a, b in itertools.pairwise(times))
    if told:
        last = told[-1][1]
        assert last["type"] == "spectators" and last["count"] == r.spectators
