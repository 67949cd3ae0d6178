"""The tournament state machine: every act accepted and refused (role, phase, range), the
round cycle, absences, the audit log, and what may be shown."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_fixtures import (
    HOST,
    KEY,
    LINK_ID,
    SEED,
    T0,
    TID,
    begin_round,
    new,
    play_round,
    played,
    with_players,
)

from engine import DealCode
from engine.fair import RoundDeal, commitment, round_candidate, round_deal
from server.tournaments import (
    SYSTEM,
    RoundResult,
    TournamentError,
    TournamentState,
    announce,
    ban,
    create,
    disqualify,
    due,
    edit_settings,
    end_early,
    end_round,
    join,
    kick,
    next_round_deal,
    parse_settings,
    pause,
    public_view,
    rejoin,
    restore,
    resume,
    round_result,
    standings,
    start,
    start_round,
    withdraw,
)

ROOT = Path(__file__).resolve().parent.parent


def refused(code: str, act: Callable[..., Any], state: TournamentState, **kwargs: Any) -> None:
    """``act`` is refused with ``code`` and changes nothing."""
    before = state.model_dump()
    with pytest.raises(TournamentError) as info:
        act(state, **kwargs)
    assert info.value.error_code == code, info.value.message
    assert info.value.message
    assert state.model_dump() == before


def audit_acts(state: TournamentState) -> list[tuple[str, str, str | None]]:
    return [(a.actor, a.act, a.player) for a in state.audit]


# ---------------------------------------------------------------------- create


def test_create_commits_to_the_seed() -> None:
    settings_ = parse_settings({"name": "Cup", "game": "klondike"})
    state, events = create(
        tournament_id=TID, host=HOST, settings=settings_, seed=SEED, key=KEY, now=T0
    )
    assert state.phase == "created" and state.commitment == commitment(SEED)
    assert events == [
        {
            "type": "tournament_created",
            "tournament": TID,
            "commitment": commitment(SEED),
            "at": T0,
        }
    ]
    assert (state.node_budget, state.max_candidates) == (200_000, 32)


@pytest.mark.parametrize(
    ("data", "host", "field"),
    [
        ({"co_hosts": [HOST]}, HOST, "co_hosts"),
        ({"starts_at": T0 - 1}, HOST, "starts_at"),
        ({}, SYSTEM, None),
    ],
)
def test_create_refuses(data: dict[str, Any], host: str, field: str | None) -> None:
    cfg = parse_settings({"name": "Cup", "game": "klondike", **data})
    with pytest.raises(TournamentError) as info:
        create(tournament_id=TID, host=host, settings=cfg, seed=SEED, key=KEY, now=T0)
    if field:
        assert info.value.error_code == "bad_settings" and info.value.message.startswith(field)


# ---------------------------------------------------------------------- join, withdraw, rejoin


def test_join_and_its_refusals() -> None:
    state = new(max_players=2)
    events = join(state, actor="a", name="  Ann\x00 ", now=T0)
    assert events == [
        {"type": "player_joined", "tournament": TID, "player": "a", "name": "Ann", "late": False}
    ]
    assert state.players["a"].status == "entered" and state.version == 1
    refused("already_entered", join, state, actor="a", name="Ann", now=T0)
    refused("bad_identity", join, state, actor=SYSTEM, name="x", now=T0)
    refused("bad_identity", join, state, actor="", name="x", now=T0)
    join(state, actor="b", name="Bo", now=T0)
    refused("full", join, state, actor="c", name="Cy", now=T0)


def test_a_private_tournament_needs_its_link() -> None:
    state = new(private=True, co_hosts=["co"])
    refused("bad_key", join, state, actor="a", name="A", now=T0)
    refused("bad_key", join, state, actor="a", name="A", now=T0, key="WRONG")
    join(state, actor="a", name="A", now=T0, key=KEY)
    join(state, actor=HOST, name="Host", now=T0)  # hosts need no link
    join(state, actor="co", name="Co", now=T0)
    assert list(state.players) == ["a", HOST, "co"]


def test_late_join_until_round_k() -> None:
    state = with_players(new(rounds=4, late_join_until=2), "a")
    assert state.settings.late_join_round == 2
    begin_round(state, ["a"])  # round 1 being played
    assert join(state, actor="b", name="B", now=T0)[0]["late"] is True
    assert state.players["b"].joined_round == 1
    assert "b" not in state.rounds[-1].participants  # plays from round 2
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    join(state, actor="c", name="C", now=T0)  # between rounds 1 and 2: still in time
    begin_round(state, ["a", "b", "c"])
    refused("late_join_closed", join, state, actor="d", name="D", now=T0)


@pytest.mark.parametrize(("rounds", "k"), [(1, 1), (2, 1), (3, 2), (20, 10)])
def test_late_join_defaults_to_half_the_rounds(rounds: int, k: int) -> None:
    assert new(rounds=rounds).settings.late_join_round == k


def test_withdraw_keeps_results_and_rejoin() -> None:
    state = with_players(new(rounds=3), "a", "b")
    play_round(state, ["a", "b"], {"a": [], "b": []})
    refused("not_entered", withdraw, state, actor="zed", now=T0)
    refused("not_withdrawn", rejoin, state, actor="a", now=T0)
    assert withdraw(state, actor="a", now=T0) == [
        {
            "type": "player_withdrawn",
            "tournament": TID,
            "player": "a",
            "in_round": False,
            "by": "self",
        }
    ]
    refused("withdrawn", join, state, actor="a", name="A", now=T0)
    refused("not_entered", withdraw, state, actor="a", now=T0)
    begin_round(state, ["a", "b"])
    assert state.rounds[-1].participants == ["b"]
    rows = {r.player: r for r in standings(state)}
    assert rows["a"].status == "withdrawn" and rows["a"].rounds[0].place is not None
    rejoin(state, actor="a", now=T0)
    assert state.players["a"].status == "entered"
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    begin_round(state, ["a", "b"])
    assert state.rounds[-1].participants == ["a", "b"]


def test_withdrawing_during_a_round_ends_the_race() -> None:
    state = with_players(new(), "a", "b")
    begin_round(state, ["a", "b"])
    assert withdraw(state, actor="a", now=T0)[0]["in_round"] is True


def test_rejoin_needs_room() -> None:
    state = with_players(new(max_players=2), "a", "b")
    withdraw(state, actor="a", now=T0)
    join(state, actor="c", name="C", now=T0)
    refused("full", rejoin, state, actor="a", now=T0)


# ---------------------------------------------------------------------- kick, ban


def test_kick_and_ban_by_hosts_only() -> None:
    state = with_players(new(co_hosts=["co", "co2"]), "a", "b", "co")
    refused("not_allowed", kick, state, actor="a", player="b", reason="x", now=T0)
    refused("not_allowed", ban, state, actor="a", player="b", reason="x", now=T0)
    refused("not_allowed", kick, state, actor="co", player=HOST, reason="x", now=T0)
    refused("not_allowed", kick, state, actor="co2", player="co", reason="x", now=T0)
    refused("bad_text", kick, state, actor="co", player="a", reason="  ", now=T0)
    refused("bad_text", kick, state, actor="co", player="a", reason="x" * 201, now=T0)
    refused("no_such_player", kick, state, actor="co", player="nobody", reason="x", now=T0)
    events = kick(state, actor="co", player="a", reason="rude in chat", now=T0 + 1)
    assert events[0]["type"] == "player_kicked" and events[0]["reason"] == "rude in chat"
    refused("already_out", kick, state, actor=HOST, player="a", reason="x", now=T0)
    refused("kicked", join, state, actor="a", name="A", now=T0)
    refused("not_withdrawn", rejoin, state, actor="a", now=T0)
    kick(state, actor=HOST, player="co", reason="the host may", now=T0 + 2)
    assert audit_acts(state) == [("co", "kick", "a"), (HOST, "kick", "co")]
    assert state.audit[0].reason == "rude in chat" and state.audit[0].at == T0 + 1


def test_a_ban_strikes_results_and_bars_the_identity() -> None:
    state = with_players(new(rounds=2), "a", "b")
    play_round(state, ["a", "b"], {"a": [], "b": ["s"]})
    assert {r.player for r in standings(state)} == {"a", "b"}
    ban(state, actor=HOST, player="a", reason="cheating", now=T0)
    assert [r.player for r in standings(state)] == ["b"]
    assert state.players["a"].reason == "cheating"
    refused("banned", join, state, actor="a", name="A", now=T0)
    # an identity that never joined can be banned before it does
    ban(state, actor=HOST, player="troll", reason="known troll", now=T0, name="Troll")
    refused("banned", join, state, actor="troll", name="T", now=T0)
    refused("already_out", ban, state, actor=HOST, player="troll", reason="again", now=T0)
    refused("bad_identity", ban, state, actor=HOST, player=SYSTEM, reason="x", now=T0)


# ---------------------------------------------------------------------- start and rounds


def test_start_refusals() -> None:
    state = new(co_hosts=["co"])
    refused("no_players", start, state, actor=HOST, now=T0)
    with_players(state, "a")
    refused("not_allowed", start, state, actor="a", now=T0)
    refused("not_due", start, state, actor=SYSTEM, now=T0)  # no scheduled start
    assert start(state, actor="co", now=T0)[0]["type"] == "tournament_started"
    refused("wrong_phase", start, state, actor=HOST, now=T0)
    assert audit_acts(state) == [("co", "start", None)]
    assert due(state, T0) == "start_round"


def test_a_scheduled_start() -> None:
    state = with_players(new(starts_at=T0 + 60_000), "a")
    assert due(state, T0 + 59_999) is None
    refused("not_due", start, state, actor=SYSTEM, now=T0 + 59_999)
    assert due(state, T0 + 60_000) == "start"
    start(state, actor=SYSTEM, now=T0 + 60_000)
    assert state.audit == []  # the timer is not a host


def test_start_round_checks_the_deal_and_the_time() -> None:
    state = with_players(new(round_start="manual", co_hosts=["co"]), "a")
    start(state, actor=HOST, now=T0)
    deal = next_round_deal(state)
    assert deal == RoundDeal(round_candidate(SEED, LINK_ID, "klondike", 1, 0), 0, None, ())
    assert deal.code.sealed
    wrong = deal._replace(code=round_candidate(SEED, LINK_ID, "klondike", 2, 0))
    kw: dict[str, Any] = {"now": T0, "connected": {"a"}}
    refused("bad_deal", start_round, state, actor=SYSTEM, deal=wrong, **kw)
    refused("not_allowed", start_round, state, actor="a", deal=deal, **kw)
    refused("not_due", start_round, state, actor=SYSTEM, deal=deal, now=T0 - 1, connected={"a"})
    events = start_round(state, actor=SYSTEM, deal=deal, **kw, countdown_ms=3000)
    assert events == [
        {
            "type": "round_starting",
            "tournament": TID,
            "round": 1,
            "start_at": T0 + 3000,
            "deadline": T0 + 3000 + 600_000,
            "now": T0,
            "participants": ["a"],
            "absent": [],
        }
    ]
    assert "deal" not in events[0]  # the deal goes to the players with their race only
    refused("wrong_phase", start_round, state, actor=HOST, deal=deal, **kw)
    # by hand: after round 1 nothing is due until a host starts round 2
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    assert state.next_round_at is None and due(state, T0 + 10**9) is None
    deal2 = next_round_deal(state)
    refused("not_due", start_round, state, actor=SYSTEM, deal=deal2, **kw)
    start_round(state, actor="co", deal=deal2, **kw)
    assert state.round == 2 and audit_acts(state)[-1] == ("co", "start_round", None)


@pytest.mark.slow  # a long search: three rounds' deals proven
def test_winnable_only_rounds_record_their_proof() -> None:
    state = with_players(new(game="easy-harp", deals="winnable"), "a")
    state.node_budget, state.max_candidates = 2_000, 4
    start(state, actor=HOST, now=T0)
    for r in (1, 2, 3):
        begin_round(state, ["a"])
        end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
        # the round plays what the derivation (sealed deals, the id as in the link) picks
        expected = round_deal(
            SEED, LINK_ID, "easy-harp", r, winnable_only=True, node_budget=2_000, max_candidates=4
        )
        played_ = state.rounds[-1]
        assert played_.deal == str(expected.code) and DealCode.parse(played_.deal).sealed
        assert (played_.candidate, played_.skipped) == (expected.candidate, list(expected.skipped))
        assert played_.solution == (None if expected.solution is None else list(expected.solution))


def test_a_tournament_stored_before_sealed_deals_keeps_its_numbered_rounds() -> None:
    """A state stored without ``fair`` was drawn by version 1: its next round is version 1's
    numbered candidate (the id without its dash), so rounds already played and its export
    stay consistent."""
    state = with_players(new(), "a")
    assert state.fair == 2
    stored = state.model_dump(mode="json")
    del stored["fair"]
    old = TournamentState.model_validate(stored)
    assert old.fair == 1
    start(old, actor=HOST, now=T0)
    deal = next_round_deal(old)
    assert deal.code == round_candidate(SEED, TID, "klondike", 1, 0, fair=1)
    assert deal.code.number is not None
    start_round(old, actor=SYSTEM, deal=deal, now=T0, connected={"a"})
    assert old.rounds[0].deal == str(deal.code)


def test_round_results() -> None:
    state = with_players(new(), "a", "b", "c")
    start_at = begin_round(state, ["a", "b"])
    deal = state.rounds[-1].deal
    won = played(deal, next_round_deal_solution(deal), "a")
    kw: dict[str, Any] = {"now": start_at + 70_000}
    refused("not_allowed", round_result, state, actor=HOST, result=won, **kw)
    refused(
        "not_participant",
        round_result,
        state,
        actor=SYSTEM,
        result=played(deal, [], "c"),
        **kw,
    )
    untimed = won.model_copy(update={"elapsed_ms": None})
    refused("bad_result", round_result, state, actor=SYSTEM, result=untimed, **kw)
    short = won.model_copy(update={"on_foundations": 40})
    refused("bad_result", round_result, state, actor=SYSTEM, result=short, **kw)
    events = round_result(state, actor=SYSTEM, result=won, **kw)
    assert events[0]["type"] == "round_result" and "move_list" not in events[0]
    version = state.version
    assert round_result(state, actor=SYSTEM, result=won, **kw) == []  # a retry
    assert state.version == version
    other = won.model_copy(update={"elapsed_ms": 1})
    refused("result_recorded", round_result, state, actor=SYSTEM, result=other, **kw)
    assert due(state, start_at + 70_000) is None
    refused("not_due", end_round, state, actor=SYSTEM, now=start_at + 70_000)
    refused("not_allowed", end_round, state, actor=HOST, now=state.rounds[-1].deadline)
    round_result(state, actor=SYSTEM, result=played(deal, ["s"], "b"), **kw)
    assert due(state, start_at + 70_000) == "end_round"  # everyone is done


def next_round_deal_solution(code: str) -> list[str]:
    """A winning line of ``code`` (the solver's)."""
    from engine.solver import solve

    result = solve(code, nodes=50_000)
    assert result.solution is not None
    return list(result.solution)


def test_end_round_at_the_deadline_and_the_last_round() -> None:
    state = with_players(new(rounds=2, pause=30), "a", "b")
    start_at = begin_round(state, ["a", "b"])
    round_result(
        state,
        actor=SYSTEM,
        result=played(state.rounds[-1].deal, ["s"], "a"),
        now=start_at + 5000,
    )
    deadline = state.rounds[-1].deadline
    assert due(state, deadline - 1) is None and due(state, deadline) == "end_round"
    events = end_round(state, actor=SYSTEM, now=deadline)
    assert [e["type"] for e in events] == ["round_ended", "between_rounds"]
    assert events[0]["deal"] == state.rounds[0].deal
    missing = state.rounds[0].results["b"]
    assert (missing.status, missing.on_foundations, missing.total) == ("timeout", 0, 52)
    assert state.next_round_at == deadline + 30_000
    begin_round(state, ["a", "b"])
    events = end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    assert events[-1]["type"] == "tournament_finished"
    assert events[-1]["seed"] == SEED.hex() and events[-1]["early"] is False
    assert state.phase == "finished"
    refused("wrong_phase", join, state, actor="z", name="Z", now=T0)
    refused("wrong_phase", withdraw, state, actor="a", now=T0)
    refused("wrong_phase", kick, state, actor=HOST, player="a", reason="x", now=T0)


def test_absences_withdraw_after_n_in_a_row() -> None:
    state = with_players(new(rounds=5), "a", "b", "c")
    state_never = with_players(new(rounds=5, absences_to_withdraw=0), "a")
    begin_round(state, ["a", "b"])  # c absent (1)
    assert state.rounds[-1].absent == ["c"] and state.players["c"].absences == 1
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    begin_round(state, ["a", "b", "c"])  # c present: the count starts again
    assert state.players["c"].absences == 0
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    begin_round(state, ["a", "b"])
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    assert state.players["c"].status == "entered"
    state.next_round_at = state.next_round_at or T0
    start_round(
        state,
        actor=SYSTEM,
        deal=next_round_deal(state),
        now=state.next_round_at,
        connected={"a"},
    )
    c = state.players["c"]
    assert (c.status, c.withdrawn_by) == ("withdrawn", "absences")
    assert state.players["b"].status == "entered"  # b's first absence
    for _ in range(3):
        begin_round(state_never, [])
        end_round(state_never, actor=SYSTEM, now=state_never.rounds[-1].deadline)
    assert state_never.players["a"].status == "entered"
    assert state_never.players["a"].absences == 3


# ---------------------------------------------------------------------- host controls


def test_pause_and_resume() -> None:
    state = with_players(new(rounds=3), "a")
    refused("wrong_phase", pause, state, actor=HOST, now=T0)
    begin_round(state, ["a"])
    refused("wrong_phase", pause, state, actor=HOST, now=T0)
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    refused("not_allowed", pause, state, actor="a", now=T0)
    refused("wrong_phase", resume, state, actor=HOST, now=T0)
    pause(state, actor=HOST, now=T0 + 5)
    assert state.phase == "paused" and due(state, T0 + 10**9) is None
    deal = next_round_deal(state)
    refused("wrong_phase", start_round, state, actor=HOST, deal=deal, now=T0 + 6, connected={"a"})
    assert resume(state, actor=HOST, now=T0 + 7)[0]["next_round_at"] == T0 + 7
    assert due(state, T0 + 7) == "start_round"
    assert audit_acts(state)[-2:] == [(HOST, "pause", None), (HOST, "resume", None)]


def test_end_early() -> None:
    created = new()
    refused("not_allowed", end_early, created, actor="a", now=T0)
    assert end_early(created, actor=HOST, now=T0)[-1]["early"] is True
    refused("wrong_phase", end_early, created, actor=HOST, now=T0)
    state = with_players(new(rounds=3), "a", "b")
    start_at = begin_round(state, ["a", "b"])
    deal = state.rounds[-1].deal
    round_result(state, actor=SYSTEM, result=played(deal, ["s"], "a"), now=start_at + 1)
    events = end_early(state, actor=HOST, now=start_at + 2, reason="server maintenance")
    assert [e["type"] for e in events] == ["round_ended", "tournament_finished"]
    assert state.phase == "finished" and state.rounds[-1].ended_at == start_at + 2
    assert state.audit[-1].act == "end_early" and state.audit[-1].round == 1
    # b was still playing: stopped by the host, which the round says (not out of time)
    assert state.rounds[-1].results["b"].status == "timeout" and state.rounds[-1].stopped_early
    ended = with_players(new(rounds=3), "a", "b")
    begin_round(ended, ["a", "b"])
    assert not ended.rounds[-1].stopped_early


def test_edit_settings_before_the_start_only() -> None:
    state = with_players(new(co_hosts=["co"]), "a", "b", "c")
    refused("not_allowed", edit_settings, state, actor="a", changes={"rounds": 5}, now=T0)
    refused("bad_settings", edit_settings, state, actor=HOST, changes={"rounds": 25}, now=T0)
    refused("bad_settings", edit_settings, state, actor=HOST, changes={"nope": 1}, now=T0)
    refused("bad_settings", edit_settings, state, actor=HOST, changes={}, now=T0)
    refused("bad_settings", edit_settings, state, actor=HOST, changes={"max_players": 2}, now=T0)
    refused("bad_settings", edit_settings, state, actor=HOST, changes={"co_hosts": [HOST]}, now=T0)
    changes = {"starts_at": T0 - 1}
    refused("bad_settings", edit_settings, state, actor=HOST, changes=changes, now=T0)
    refused("not_allowed", edit_settings, state, actor="co", changes={"co_hosts": []}, now=T0)
    events = edit_settings(state, actor="co", changes={"rounds": 5, "scoring": "time"}, now=T0)
    assert events[0]["changes"] == {"rounds": 5, "scoring": "time"}
    assert state.settings.rounds == 5 and state.audit[-1].detail == {
        "rounds": [3, 5],
        "scoring": ["points", "time"],
    }
    assert edit_settings(state, actor=HOST, changes={"rounds": 5}, now=T0) == []
    start(state, actor=HOST, now=T0)
    refused("wrong_phase", edit_settings, state, actor=HOST, changes={"rounds": 4}, now=T0)


def test_disqualify_and_restore() -> None:
    state = with_players(new(rounds=2, co_hosts=["co"]), "a", "b")
    play_round(state, ["a", "b"], {"a": ["s", "s"], "b": ["s"]})
    first = [r.player for r in standings(state)]
    kw: dict[str, Any] = {"player": first[0], "round": 1, "now": T0}
    refused("not_allowed", disqualify, state, actor="b", reason="x", **kw)
    refused("bad_text", disqualify, state, actor=HOST, reason="", **kw)
    refused("no_such_result", disqualify, state, actor=HOST, reason="x", **{**kw, "round": 2})
    refused("no_such_result", disqualify, state, actor=HOST, reason="x", **{**kw, "player": "z"})
    refused("not_disqualified", restore, state, actor=HOST, **kw)
    disqualify(state, actor="co", reason="used a solver", **kw)
    assert [r.player for r in standings(state)] == first[::-1]
    refused("already_disqualified", disqualify, state, actor=HOST, reason="x", **kw)
    restore(state, actor=HOST, **kw)
    assert [r.player for r in standings(state)] == first
    assert audit_acts(state)[-2:] == [("co", "disqualify", first[0]), (HOST, "restore", first[0])]


def test_announce() -> None:
    state = with_players(new(), "a")
    refused("not_allowed", announce, state, actor="a", text="hi", now=T0)
    refused("bad_text", announce, state, actor=HOST, text=" ", now=T0)
    refused("bad_text", announce, state, actor=HOST, text="x" * 501, now=T0)
    refused("bad_text", announce, state, actor=HOST, text="bell\x07", now=T0)
    events = announce(state, actor=HOST, text="Round 2 in five minutes.\nGood luck!", now=T0)
    assert events[0]["text"] == "Round 2 in five minutes.\nGood luck!"
    assert state.audit[-1].act == "announce"


# ---------------------------------------------------------------------- what may be shown


def test_public_view_hides_the_seed_the_key_and_the_live_round() -> None:
    state = with_players(new(rounds=2), "a", "b")
    start_at = begin_round(state, ["a", "b"])
    deal = state.rounds[-1].deal
    round_result(state, actor=SYSTEM, result=played(deal, ["s"], "a"), now=start_at + 1)
    view = public_view(state)
    text = str(view)
    assert view["seed"] is None and "key" not in view
    assert SEED.hex() not in text and KEY not in text and deal not in text
    assert view["rounds"][0]["results"]["a"]["move_list"] is None
    assert view["commitment"] == commitment(SEED)
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    view = public_view(state)
    assert view["rounds"][0]["deal"] == deal  # the round has ended: its replays open
    assert view["rounds"][0]["results"]["a"]["move_list"] == ["s"]
    assert view["seed"] is None
    begin_round(state, ["a", "b"])
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    assert public_view(state)["seed"] == SEED.hex()


def test_a_host_list_of_deals_stays_hidden_until_the_end() -> None:
    codes = ["KL1-1-AAAAAAB", "KL1-1-AAAAAAC"]
    later = ["KL1-1-AAAAAAD", "KL1-1-AAAAAAE"]
    state = with_players(new(rounds=2, deals="list", deal_codes=codes), "a")
    events = edit_settings(state, actor=HOST, changes={"deal_codes": later}, now=T0)
    assert events[0]["changes"] == {} and events[0]["fields"] == ["deal_codes"]
    for code in (*codes, *later):
        assert code not in str(events) and code not in str(public_view(state))
    assert state.settings.deal_codes == tuple(later)
    begin_round(state, ["a"])
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    view = public_view(state)
    assert view["settings"]["deal_codes"] is None and later[1] not in str(view)
    assert view["rounds"][0]["deal"] == later[0]  # a round that has ended shows its deal
    begin_round(state, ["a"])
    end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    assert public_view(state)["settings"]["deal_codes"] == later


# ---------------------------------------------------------------------- property


ACTORS = st.sampled_from([HOST, "co", "a", "b", "c", SYSTEM, ""])
# the round cycle weighs more, so that sequences get through rounds and reach the end
ACTS = st.sampled_from(
    [
        *("join", "start", "start_round", "result", "result", "end_round") * 4,
        "withdraw",
        "rejoin",
        "kick",
        "ban",
        "pause",
        "resume",
        "end_early",
        "edit",
        "disqualify",
        "restore",
        "announce",
    ]
)
SYSTEM_ACTS = ("start_round", "end_round", "result")
PLAYER_ACTS = ("join", "withdraw", "rejoin")


def natural_actor(act: str, target: str) -> str:
    """Who would normally do ``act`` (acts that end things: a player, who is refused, so
    that they do not end most sequences early)."""
    if act in SYSTEM_ACTS:
        return SYSTEM
    return target if act in (*PLAYER_ACTS, "end_early", "ban", "kick") else HOST


def _do(state: TournamentState, act: str, actor: str, target: str, now: int) -> None:
    live = state.rounds[-1] if state.phase == "round" else None
    if act == "join":
        join(state, actor=actor, name=actor, now=now, key=KEY)
    elif act == "withdraw":
        withdraw(state, actor=actor, now=now)
    elif act == "rejoin":
        rejoin(state, actor=actor, now=now)
    elif act in ("kick", "ban"):
        (kick if act == "kick" else ban)(
            state, actor=actor, player=target, reason="reason", now=now
        )
    elif act == "start":
        start(state, actor=actor, now=now)
    elif act == "start_round":
        deal = next_round_deal(state) if state.round < state.settings.rounds else None
        if deal is None:
            raise TournamentError("wrong_phase", "no round left")
        start_round(state, actor=actor, deal=deal, now=now, connected={"a", "b", "co"})
    elif act == "end_round":
        end_round(state, actor=actor, now=now)
    elif act in ("pause", "resume"):
        (pause if act == "pause" else resume)(state, actor=actor, now=now)
    elif act == "end_early":
        end_early(state, actor=actor, now=now)
    elif act == "edit":
        edit_settings(state, actor=actor, changes={"rounds": 2 + now % 3}, now=now)
    elif act in ("disqualify", "restore"):
        if act == "disqualify":
            disqualify(state, actor=actor, player=target, round=1, reason="r", now=now)
        else:
            restore(state, actor=actor, player=target, round=1, now=now)
    elif act == "announce":
        announce(state, actor=actor, text="hello", now=now)
    elif act == "result":
        result = RoundResult(
            player=target, status="resigned", on_foundations=0, total=52, score=0, moves=0
        )
        if live is None:
            raise TournamentError("wrong_phase", "no round")
        round_result(state, actor=actor, result=result, now=now)


@settings(max_examples=120, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            ACTS,
            st.one_of(st.none(), st.none(), ACTORS),
            st.sampled_from(["a", "b"] * 3 + ["c", "co"]),
        ),
        max_size=60,
    )
)
def test_any_sequence_of_acts_keeps_the_rules(steps: list[tuple[str, str | None, str]]) -> None:
    """Acts by anyone in any order (the usual actor half the time): refusals change
    nothing, and the invariants hold after every accepted act."""
    state = new(rounds=3, max_players=2, co_hosts=["co"], private=True)
    now = T0
    for act, chosen, target in steps:
        actor = natural_actor(act, target) if chosen is None else chosen
        now += 120_000  # a round lasts about five steps, a pause one
        before = state.model_dump()
        version = state.version
        try:
            _do(state, act, actor, target, now)
        except TournamentError as exc:
            assert exc.error_code and exc.message
            assert state.model_dump() == before  # a refused act changes nothing
            continue
        assert state.version in (version, version + 1)
        entered = [p for p in state.players.values() if p.status == "entered"]
        assert len(entered) <= state.settings.max_players
        assert state.round == len(state.rounds) <= state.settings.rounds
        if state.phase == "round":
            assert state.rounds[-1].ended_at is None
        assert all(r.ended_at is not None for r in state.rounds[: -1 or None])
        rows = standings(state)
        assert {r.player for r in rows} == {
            p.id for p in state.players.values() if p.status != "banned"
        }
        hosts = {HOST, "co"}
        assert all(entry.actor in hosts for entry in state.audit)


# ---------------------------------------------------------------------- purity

# the tournament as a state machine (its services — service, rounds, deals, presence,
# standings, api, recording — sit beside it in the same package and do the I/O)
PURE_TOURNAMENT = (
    "__init__",
    "_checks",
    "acts",
    "errors",
    "export",
    "host",
    "live",
    "scoring",
    "settings",
    "state",
    "updates",
)
PURE = [
    *(ROOT / "server" / "tournaments" / f"{name}.py" for name in PURE_TOURNAMENT),
    ROOT / "server" / "rooms" / "ranking.py",
]
IO_MODULES = {"asyncio", "websockets", "redis", "socket", "subprocess", "os", "pathlib", "time"}
IO_SERVER = ("server.app", "server.store", "server.edge")


@pytest.mark.parametrize("path", PURE, ids=lambda p: p.name)
def test_tournaments_are_pure(path: Path) -> None:
    """No I/O library, no server layer with I/O, no ``open()`` and no clock: time comes in
    as ``now`` (``style.md``: the server only feeds them events)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        for name in names:
            assert name.split(".")[0] not in IO_MODULES, (path.name, name)
            assert not any(name == m or name.startswith(f"{m}.") for m in IO_SERVER), name
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            assert node.func.id != "open", path.name
