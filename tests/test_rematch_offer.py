"""Rematch by invitation and leaving, as pure room updates (issue 18, items 13 and 17): who
is asked, who races, when the race starts — once — and what leaving frees. No event loop."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import DealKind
from server.rooms.offers import offer_racers, offer_waiting
from server.rooms.room import (
    ProgressState,
    Refusal,
    RoomOptions,
    RoomState,
    SeatState,
)
from server.rooms.updates import (
    AnswerRematch,
    Disconnect,
    LeaveSeat,
    OfferDeadline,
    Rematch,
    Retake,
    SeatRobot,
    TakeSeat,
)
from server.rooms.view import snapshot

DEAL = "KL1-1-AAAAAAK"
WAIT = 20_000


def ended_room(players: int = 3, **room: Any) -> tuple[RoomState, dict[int, ProgressState]]:
    """A room whose first race is over; seat n is held by connection ``cn``."""
    r = RoomState(
        code="K7QF2M",
        game="klondike",
        options=RoomOptions(),
        deal=DEAL,
        host=1,
        phase="ended",
        race=1,
        seats=[
            SeatState(seat=n, name=f"P{n}", token_hash=f"h{n}", conn=f"c{n}")
            for n in range(1, players + 1)
        ],
        next_seat=players + 1,
        participants=list(range(1, players + 1)),
        **room,
    )
    return r, {}


def offer(
    r: RoomState, progress: dict[int, ProgressState], kind: DealKind = "same", **kw: Any
) -> list[Any]:
    events, started = Rematch(1, kind, kw.get("code"), kw.get("now", 0), 100, WAIT)(r, progress)
    assert started == (events[0]["type"] == "race_starting")
    return list(events)


def answer(
    r: RoomState, progress: dict[int, ProgressState], seat: int, accept: bool, now: int = 10
) -> list[Any]:
    events, started = AnswerRematch(seat, f"c{seat}", r.race + 1, accept, now)(r, progress)
    assert started == bool(events)
    return list(events)


def test_the_host_offers_and_everyone_else_is_asked_without_the_code() -> None:
    r, progress = ended_room(3, deal_typed_by=1)
    (event,) = offer(r, progress)
    assert event["type"] == "rematch_offered"
    assert (event["race"], event["deal"], event["deadline"], event["by"]) == (2, "same", WAIT, 1)
    assert DEAL not in str(event)  # the kind, never the code
    assert r.phase == "ended" and r.race == 1 and offer_waiting(r) == [2, 3]
    body = snapshot(r, progress, 5, 1, "l", viewer=2)
    assert body["rematch_offer"] == {"race": 2, "deal": "same", "deadline": WAIT, "by": 1}


def test_the_race_starts_once_everyone_answered_with_those_who_accepted() -> None:
    r, progress = ended_room(3)
    offer(r, progress, "random")
    assert answer(r, progress, 2, True) == []
    assert offer_waiting(r) == [3]
    (start,) = answer(r, progress, 3, False)
    assert start["type"] == "race_starting" and start["race"] == 2
    assert start["seats"] == [1, 2] and r.participants == [1, 2]
    assert set(progress) == {1, 2} and r.offer is None
    assert r.seat(3) is not None  # the one who declined stays seated
    assert r.deal != DEAL and start["deal"] == r.deal  # the stored event, for the workers


def test_an_answer_can_change_and_a_late_or_wrong_one_is_refused() -> None:
    r, progress = ended_room(3)
    offer(r, progress)
    answer(r, progress, 2, False)
    answer(r, progress, 2, True)  # changed their mind before the start
    with pytest.raises(Refusal) as info:
        AnswerRematch(3, "c3", 5, True, 10)(r, progress)
    assert info.value.error_code == "no_offer"
    with pytest.raises(Refusal) as info:
        AnswerRematch(3, "someone-else", 2, True, 10)(r, progress)
    assert info.value.error_code == "replaced"
    answer(r, progress, 3, True)
    assert r.participants == [1, 2, 3]
    with pytest.raises(Refusal) as info:
        answer(r, progress, 3, True)  # the race has started: nothing is offered
    assert info.value.error_code == "no_offer"


def test_the_deadline_starts_it_with_those_who_accepted_and_only_after_the_deadline() -> None:
    r, progress = ended_room(3)
    offer(r, progress)
    answer(r, progress, 3, True)
    assert OfferDeadline(2, WAIT - 1)(r, progress) == ([], False)  # not yet
    assert OfferDeadline(1, WAIT)(r, progress) == ([], False)  # another offer's
    events, started = OfferDeadline(2, WAIT)(r, progress)
    starting = events[0]
    assert started and starting["type"] == "race_starting"
    assert starting["seats"] == [1, 3]  # seat 2 never answered: sits out
    assert starting["start_at"] == WAIT + 100
    assert OfferDeadline(2, WAIT + 5)(r, progress) == ([], False)  # once


def test_refusals_of_an_offer() -> None:
    r, progress = ended_room(2)
    with pytest.raises(Refusal) as info:
        Rematch(2, "same", None, 0, 100, WAIT)(r, progress)
    assert info.value.error_code == "not_host"
    offer(r, progress)
    with pytest.raises(Refusal) as info:
        offer(r, progress, "random")
    assert info.value.error_code == "rematch_pending"
    lobby, p = ended_room(2, deal_typed_by=None)
    lobby.phase = "lobby"
    with pytest.raises(Refusal) as info:
        offer(lobby, p)
    assert info.value.error_code == "no_race_yet"
    bad, p = ended_room(2)
    with pytest.raises(Refusal) as info:
        offer(bad, p, "code", code="EH1-N-AAAAAAF")
    assert info.value.error_code == "bad_deal" and bad.offer is None


def test_nobody_to_ask_starts_at_once_robots_accept_and_a_late_joiner_is_not_pulled_in() -> None:
    r, progress = ended_room(1)
    SeatRobot(1, "Bot (greedy)", "hb", "robot", 0)(r, progress)
    (start,) = offer(r, progress)  # the host and a robot: no offer to wait for
    assert start["type"] == "race_starting" and start["seats"] == [1, 2]

    r, progress = ended_room(2)
    offer(r, progress)
    _, late = TakeSeat("Late", "hl", "c3", 5)(r, progress)
    assert late == 3 and offer_waiting(r) == [2]  # not waited for …
    (start,) = answer(r, progress, 2, True)
    assert start["seats"] == [1, 2]  # … nor pulled in unasked


def test_a_late_joiner_may_accept() -> None:
    r, progress = ended_room(2)
    offer(r, progress)
    TakeSeat("Late", "hl", "c3", 5)(r, progress)
    answer(r, progress, 3, True)
    (start,) = answer(r, progress, 2, True)
    assert start["seats"] == [1, 2, 3]


def test_a_player_who_leaves_or_goes_away_is_not_waited_for() -> None:
    r, progress = ended_room(3)
    offer(r, progress)
    answer(r, progress, 2, True)
    events, held = Disconnect(3, "c3", 50)(r, progress)
    assert held and [e["type"] for e in events] == ["seat", "race_starting"]
    starting = events[1]
    assert starting["type"] == "race_starting" and starting["seats"] == [1, 2]

    r, progress = ended_room(3)
    offer(r, progress)
    answer(r, progress, 3, True)
    events, freed = LeaveSeat(2, "c2", 50)(r, progress)
    left, starting = events
    assert freed and left["type"] == "seat" and starting["type"] == "race_starting"
    assert left["left"] and starting["seats"] == [1, 3]


def test_one_away_when_offered_is_asked_and_may_come_back_to_accept() -> None:
    r, progress = ended_room(3)
    Disconnect(3, "c3", 1)(r, progress)
    offer(r, progress)
    assert offer_waiting(r) == [2]  # away: not waited for, but asked
    Retake(3, "h3", "c3b", 5)(r, progress)
    assert offer_waiting(r) == [2, 3]
    AnswerRematch(3, "c3b", 2, True, 6)(r, progress)
    (start,) = answer(r, progress, 2, False)
    assert start["seats"] == [1, 3]


def test_the_offer_lapses_when_nobody_can_race() -> None:
    r, progress = ended_room(2)
    offer(r, progress)
    Disconnect(1, "c1", 5)(r, progress)  # the host went away
    assert answer(r, progress, 2, False) == []
    assert r.offer is None and r.phase == "ended" and r.race == 1
    offer_again, _ = ended_room(2)
    assert offer_racers(offer_again) == []  # nothing offered: nobody races


def test_the_daily_label_follows_the_race_s_deal() -> None:
    # a room on the day's deal, within its day (it ends at 10**12 ms; offers are at 0)
    r, progress = ended_room(1, daily=True, daily_day="2026-04-16", secret_until=10**12)
    (start,) = offer(r, progress, "same")
    assert start["daily"] is True and r.daily and start["secret_until"] == 10**12
    r.phase = "ended"
    (start,) = offer(r, progress, "random")
    assert start["daily"] is False and not r.daily
    body = snapshot(r, progress, 1, 1, "l")
    assert body["daily"] is False


def test_leaving() -> None:
    r, progress = ended_room(3)
    events, freed = LeaveSeat(1, "c1", 5)(r, progress)
    assert freed and r.seat(1) is None and r.host == 2
    left, host = events
    assert left["type"] == host["type"] == "seat"
    assert (left["seat"], left["left"], host["seat"], host["left"]) == (1, True, 2, False)
    assert host["host"]  # the host passed on
    with pytest.raises(Refusal) as info:
        LeaveSeat(2, "c-old", 5)(r, progress)  # a connection that no longer holds it
    assert info.value.error_code == "replaced"
    r.phase, r.participants = "running", [2, 3]
    progress[2] = ProgressState(race=1, seat=2, status="playing")
    progress[3] = ProgressState(race=1, seat=3, status="resigned")
    assert LeaveSeat(2, "c2", 5)(r, progress) == ([], False)  # still racing: resign first
    _, freed = LeaveSeat(3, "c3", 5)(r, progress)
    assert freed and r.seat(3) is None


# the acts a room may see while an offer waits, in any order
ACTS = st.lists(
    st.one_of(
        st.tuples(st.just("answer"), st.integers(2, 4), st.booleans()),
        st.tuples(st.just("leave"), st.integers(1, 4), st.just(False)),
        st.tuples(st.just("away"), st.integers(1, 4), st.just(False)),
        st.tuples(st.just("back"), st.integers(1, 4), st.just(False)),
        st.tuples(st.just("deadline"), st.integers(0, 1), st.just(False)),
    ),
    max_size=14,
)


@settings(max_examples=300, deadline=None)
@given(ACTS)
def test_whatever_happens_the_race_starts_at_most_once_with_only_those_who_accepted(
    acts: list[tuple[str, int, bool]],
) -> None:
    r, progress = ended_room(4)
    offer(r, progress)
    accepted: dict[int, bool] = {}
    starts = []
    for act, seat, accept in acts:
        conn = r.seat(seat).conn if r.seat(seat) is not None else None  # type: ignore[union-attr]
        events: list[Any] = []
        try:
            if act == "answer":
                events, _ = AnswerRematch(seat, conn or "-", 2, accept, 10)(r, progress)
                accepted[seat] = accept
            elif act == "leave":
                events, _ = LeaveSeat(seat, conn or "-", 10)(r, progress)
            elif act == "away":
                events, _ = Disconnect(seat, conn, 10)(r, progress)
            elif act == "back":
                events, _ = Retake(seat, f"h{seat}", f"c{seat}", 10)(r, progress)
            else:
                events, _ = OfferDeadline(2, WAIT * seat)(r, progress)
        except Refusal:
            continue
        starts += [e for e in events if e["type"] == "race_starting"]
    assert len(starts) <= 1
    assert r.race == 1 + len(starts)
    if starts:
        seats = starts[0]["seats"]
        assert all(seat == 1 or accepted.get(seat) for seat in seats)
        assert all(r.seat(s) is not None for s in seats) and r.offer is None
    else:
        assert r.phase == "ended"
