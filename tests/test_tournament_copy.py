"""The parsed copy of a tournament a worker pushes the standings from
(server.tournaments.table.LiveCopy): kept current by the stored events where an event
tells the whole change, dropped otherwise — never a state the store does not hold."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_fixtures import HOST, a_result, begin_round, new, with_players

from server.tournaments import (
    SYSTEM,
    RoundResult,
    TournamentError,
    ban,
    disqualify,
    end_round,
    join,
    kick,
    next_round_deal,
    restore,
    start,
    start_round,
    withdraw,
)
from server.tournaments.live import LiveSnapshot, LiveTournament, new_live
from server.tournaments.state import Event
from server.tournaments.table import LiveCopy, add_result
from server.tournaments.updates import RecordResults

PLAYERS = [f"p{i}" for i in range(6)]


def reported(player: str, kind: int, cards: int) -> RoundResult:
    """A result as a worker reports it (with its move list, which the state leaves out)."""
    return a_result(player, kind, cards, cards, ["s"] * 3 if kind == 0 else ["s"])


def step(live: LiveTournament, op: tuple[str, list[int], int, int]) -> list[Event]:
    """One write of the tournament, by name, as a store applies it; its events (none when
    refused: nothing changed)."""
    name, who, kind, cards = op
    state = live.state
    now = state.rounds[-1].start_at + 1000 if state.rounds else 1_750_000_001_000
    player = PLAYERS[who[0]]
    try:
        if name == "results":
            number = state.rounds[-1].number if state.rounds else 1
            batch = tuple(reported(PLAYERS[i], (kind + i) % 3, cards) for i in who)
            return RecordResults(number, batch, now)(live)[0]
        if name == "round":
            if state.phase == "round":
                return end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
            if state.phase == "created":
                return start(state, actor=HOST, now=now)
            if state.round < state.settings.rounds and state.next_round_at is not None:
                connected = {p for p in PLAYERS if p != player}
                deal = next_round_deal(state)
                at = state.next_round_at
                return start_round(state, actor=SYSTEM, deal=deal, now=at, connected=connected)
            return []
        if name == "join":
            return join(state, actor=player, name=player.upper(), now=now, key="LINKKEY")
        if name == "withdraw":
            return withdraw(state, actor=player, now=now)
        if name == "kick":
            return kick(state, actor=HOST, player=player, reason="r", now=now)
        if name == "ban":
            return ban(state, actor=HOST, player=player, reason="r", now=now)
        if name == "disqualify":
            number = max(1, state.round)
            return disqualify(state, actor=HOST, player=player, round=number, reason="r", now=now)
        number = max(1, state.round)
        return restore(state, actor=HOST, player=player, round=number, now=now)
    except TournamentError:
        return []


def stored(events: list[Event], seq: int) -> list[dict[str, Any]]:
    """The events as the store numbers and delivers them (JSON, ``seq`` first)."""
    return [{"seq": seq + i, **orjson.loads(orjson.dumps(e))} for i, e in enumerate(events, 1)]


def read(live: LiveTournament, seq: int) -> LiveSnapshot:
    """A read of the store: a parsed copy of what it holds."""
    return LiveSnapshot(LiveTournament.model_validate_json(live.model_dump_json()), seq)


OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["results"] * 6
            + ["round"] * 2
            + ["join", "withdraw", "kick", "ban", "disqualify", "restore"]
        ),
        st.lists(st.integers(0, len(PLAYERS) - 1), min_size=1, max_size=3),
        st.integers(0, 2),
        st.integers(0, 52),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(ops=OPS, late=st.booleans())
def test_the_copy_is_the_stored_state_or_none(
    ops: list[tuple[str, list[int], int, int]], late: bool
) -> None:
    """Whatever is written (results in batches, duplicates and strangers among them, rounds
    ending, players leaving, struck and restored results), the copy kept by the events is
    either exactly the stored state or dropped (and read again); reads that arrive after
    their events (``late``) are refused rather than kept behind."""
    live = new_live(with_players(new(rounds=3, late_join_until=3), *PLAYERS[:4]))
    seq = 0
    copy = LiveCopy()
    copy.take(read(live, seq))
    for op in ops:
        before = read(live, seq)
        events = step(live, op)
        delivered = stored(events, seq)
        seq += len(events)
        if late and copy.live is None:
            # a read made before these events, its answer arriving after them
            for e in delivered:
                copy.delivered(e)
            copy.take(before)
            if delivered:
                assert copy.live is None
        else:
            for e in delivered:
                copy.delivered(e)
        if copy.live is not None:
            assert copy.live.state == live.state
            assert copy.seq == seq
        else:
            copy.take(read(live, seq))
            assert copy.live is not None and copy.live.state == live.state


def test_results_recorded_in_a_round_keep_the_copy() -> None:
    """The change of a round's results is applied, not read again: a thousand results cost
    no read of the state."""
    players = [f"q{i}" for i in range(1000)]
    live = new_live(with_players(new(max_players=1000), *players))
    begin_round(live.state, players)
    copy = LiveCopy()
    copy.take(read(live, 5))
    seq = 5
    for i in range(0, 1000, 7):
        batch = tuple(reported(p, i % 3, i % 52) for p in players[i : i + 7])
        events, new_count = RecordResults(1, batch, 0)(live)
        assert new_count == len(batch)
        for e in stored(events, seq):
            copy.delivered(e)
        seq += len(events)
        assert copy.live is not None, "a result dropped the copy"
    assert copy.live is not None and copy.live.state == live.state
    assert len(copy.live.state.rounds[-1].results) == 1000
    assert all(r.move_list == [] for r in copy.live.state.rounds[-1].results.values())


def test_a_gap_or_another_event_drops_the_copy() -> None:
    live = new_live(with_players(new(rounds=2), *PLAYERS))
    begin_round(live.state, PLAYERS)
    number = live.state.rounds[-1].number
    events = stored(RecordResults(number, (reported("p0", 1, 3),), 0)(live)[0], 10)
    copy = LiveCopy()
    copy.take(read(live, 9))  # the store is at 11 by now: event 10 was missed
    copy.delivered({**events[0], "seq": 11})
    assert copy.live is None
    copy.take(read(live, 11))
    assert copy.live is not None
    copy.delivered({"seq": 12, "type": "player_kicked", "tournament": live.state.id})
    assert copy.live is None
    copy.take(read(live, 11))  # an older read than what was delivered: not kept
    assert copy.live is None


def test_add_result_refuses_what_does_not_fit() -> None:
    """An event that is not a new result of the round being played leaves the state."""
    state = with_players(new(rounds=2), *PLAYERS)
    begin_round(state, PLAYERS[:3])
    body = orjson.loads(
        orjson.dumps(RecordResults(1, (reported("p0", 1, 3),), 0)(new_live(state))[0][0])
    )
    fresh = with_players(new(rounds=2), *PLAYERS)
    begin_round(fresh, PLAYERS[:3])
    version = fresh.version
    assert add_result(fresh, {**body, "round": 2}) is False
    assert add_result(fresh, {**body, "player": "p5"}) is False  # not a participant
    assert add_result(fresh, {**body, "on_foundations": -1}) is False
    assert add_result(fresh, {**body, "type": "round_ended"}) is False
    assert fresh.version == version and not fresh.rounds[-1].results
    assert add_result(fresh, body) is True
    assert add_result(fresh, body) is False  # recorded already
    assert fresh.version == version + 1
