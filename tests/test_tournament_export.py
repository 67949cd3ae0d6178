"""Tournament results and the full export: formats, round trips, and verification that
catches every kind of tampering."""

from __future__ import annotations

import copy
import csv
import io
import json
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from tournament_fixtures import (
    HOST,
    LINK_ID,
    SEED,
    T0,
    begin_round,
    new,
    play_round,
    with_players,
)

from engine.fair import round_candidate
from engine.solver import solve
from server.tournaments import (
    SYSTEM,
    ExportError,
    TournamentState,
    ban,
    disqualify,
    end_round,
    full_export,
    join,
    load_export,
    results_csv,
    results_json,
    results_ndjson,
    standings,
    verify,
)


def solution(code: str) -> list[str]:
    result = solve(code, nodes=50_000)
    assert result.solution is not None
    return list(result.solution)


def finished(**settings: Any) -> TournamentState:
    """A 2-round Klondike tournament on winnable deals, played to the end: ``a`` wins both
    deals, ``b`` plays a few moves, ``c`` misses round 2, ``=evil()`` is disqualified."""
    state = with_players(new(rounds=2, deals="winnable", **settings), "a", "b", "c")
    join(state, actor="e", name="=evil()", now=T0)
    state.node_budget = 20_000
    few = ["s", "s", "s"]
    play_round(state, ["a", "b", "c", "e"], {"a": solution, "b": few, "e": ["s"], "c": []})
    play_round(state, ["a", "b", "e"], {"a": solution, "b": few, "e": ["s"]})
    disqualify(state, actor=HOST, player="e", round=1, reason="two accounts", now=T0)
    assert state.phase == "finished"
    return state


@pytest.fixture(scope="module")
def done() -> TournamentState:
    return finished()


def exported(state: TournamentState) -> dict[str, Any]:
    """The full export as a verifier reads it: through JSON text."""
    return load_export(orjson.dumps(full_export(state)))


# ---------------------------------------------------------------------- results


def test_results_json_and_ndjson_are_the_standings(done: TournamentState) -> None:
    rows = [row.as_json() for row in standings(done)]
    data = json.loads(results_json(done))
    assert data["standings"] == rows
    assert data["scoring"]["tiebreaks"][0] == {"key": "round_wins", "better": "more"}
    lines = results_ndjson(done).decode().splitlines()
    assert [json.loads(line) for line in lines] == rows
    assert rows[0]["player"] == "a"
    # a beats b and c in round 1 (e's result is struck: nobody scores for beating it), and
    # b and e in round 2, winning both deals
    assert rows[0]["points"] == (2 + 2) + (2 + 2)


def test_results_csv(done: TournamentState) -> None:
    text = results_csv(done)
    reader = list(csv.DictReader(io.StringIO(text)))
    rows = standings(done)
    assert [r["player"] for r in reader] == [r.player for r in rows]
    head = text.splitlines()[0].split(",")
    assert head[:6] == ["rank", "player", "name", "status", "points", "time_ms"]
    assert "r2_cards_home" in head and head[-5:] == [
        "round_wins",
        "deals_won",
        "best_round",
        "won_time_ms",
        "cards_home",
    ]
    first = reader[0]
    assert first["r1_status"] == "won" and first["r1_place"] == "1"
    assert first["r1_cards_home"] == "52" and int(first["points"]) == rows[0].points
    evil = next(r for r in reader if r["player"] == "e")
    assert evil["name"] == "'=evil()"  # a spreadsheet must not run it
    assert evil["r1_status"] == "disqualified" and evil["r1_place"] == ""
    c = next(r for r in reader if r["player"] == "c")
    assert c["r2_status"] == "absent"


# ---------------------------------------------------------------------- full export


def test_the_export_verifies(done: TournamentState) -> None:
    export = exported(done)
    assert (export["fair"], export["id"]) == (2, LINK_ID)  # sealed deals, the id as linked
    assert export["draw"]["seed"] == SEED.hex()
    assert export["draw"]["node_budget"] == 20_000
    first = export["rounds"][0]
    assert first["deal"] == str(round_candidate(SEED, LINK_ID, "klondike", 1, first["candidate"]))
    assert export["rounds"][0]["solution"]  # the solver's winning line
    assert export["rounds"][0]["results"]["a"]["move_list"]
    assert [a["act"] for a in export["audit"]] == ["start", "disqualify"]
    assert "key" not in export and "LINKKEY" not in json.dumps(export)
    assert verify(export) == []


def test_round_trips(done: TournamentState) -> None:
    export = full_export(done)
    assert load_export(orjson.dumps(export)) == json.loads(json.dumps(export))
    assert load_export(orjson.dumps(export).decode()) == load_export(orjson.dumps(export))
    # the state itself goes through a store as JSON and comes back equal
    assert TournamentState.model_validate_json(done.model_dump_json()) == done


def test_a_host_list_verifies_and_its_change_does_not() -> None:
    codes = ["KL1-1-AAAAAAB", "KL1-1-AAAAAAC"]
    state = with_players(new(rounds=2, deals="list", deal_codes=codes), "a")
    for _ in range(2):
        begin_round(state, ["a"])
        end_round(state, actor=SYSTEM, now=state.rounds[-1].deadline)
    export = exported(state)
    assert [r["deal"] for r in export["rounds"]] == codes
    assert [r["candidate"] for r in export["rounds"]] == [None, None]
    assert verify(export) == []
    export["rounds"][1]["deal"] = "KL1-1-AAAAAAD"
    export["rounds"][1]["results"] = {}
    export["standings"] = json.loads(results_json(state))["standings"]
    assert any("listed" in p for p in verify(export))


def test_an_unfinished_export_shows_nothing_secret() -> None:
    state = with_players(new(rounds=2), "a", "b")
    begin_round(state, ["a", "b"])
    export = exported(state)
    text = json.dumps(export)
    assert export["draw"]["seed"] is None and SEED.hex() not in text
    assert export["rounds"][0]["deal"] is None and state.rounds[0].deal not in text
    problems = verify(export)
    assert any("not revealed" in p for p in problems)
    assert any("round 1 is being played" in p for p in problems)


# ---------------------------------------------------------------------- tampering


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(export: dict[str, Any]) -> None:
        *parts, last = path.split(".")
        node: Any = export
        for part in parts:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return change


def _other_deal(export: dict[str, Any]) -> None:
    first = export["rounds"][0]
    first["deal"] = str(round_candidate(SEED, LINK_ID, "klondike", 1, first["candidate"] + 1))


def _truncate_solution(export: dict[str, Any]) -> None:
    export["rounds"][1]["solution"] = export["rounds"][1]["solution"][:-3]


def _change_a_move(export: dict[str, Any]) -> None:
    export["rounds"][0]["results"]["b"]["move_list"][0] = "t1f"


def _drop_a_round(export: dict[str, Any]) -> None:
    export["rounds"].pop(0)


TAMPERING: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "another seed": (_set("draw.seed", "11" * 32), "commitment"),
    "no seed": (_set("draw.seed", None), "not revealed"),
    "a seed that is not hex": (_set("draw.seed", "zz"), "seed"),
    "another commitment": (_set("draw.commitment", "00" * 32), "commitment"),
    "version 1's derivation": (_set("fair", 1), "round 1"),
    "an unknown version": (_set("fair", 3), "version 3"),
    "another deal": (_other_deal, "round 1"),
    "another candidate": (_set("rounds.0.candidate", 1), "round 1"),
    "skipped candidates": (_set("rounds.0.skipped", [0]), "round 1"),
    "a losing winning line": (_truncate_solution, "does not win"),
    "another tournament id": (_set("id", "OTHR-1X"), "round 1"),
    "the id without its dash": (_set("id", "K7QF2M"), "dash included"),
    "a better score": (_set("rounds.0.results.b.score", 999), "score"),
    "a win that was not": (_set("rounds.0.results.b.status", "won"), "won"),
    "more cards home": (_set("rounds.1.results.b.on_foundations", 9), "on_foundations"),
    "a move changed": (_change_a_move, "does not replay"),
    "more points": (_set("standings.1.points", 99), "standings"),
    "another rank": (_set("standings.1.rank", 1), "standings"),
    "a round dropped": (_drop_a_round, "round"),
    "an unknown player's result": (_set("rounds.0.results.b.player", "zz"), "b"),
    "a result out of range": (_set("rounds.0.results.b.moves", -1), "rounds"),
    "settings out of range": (_set("settings.rounds", 99), "settings"),
}


@pytest.mark.parametrize("name", sorted(TAMPERING))
def test_a_tampered_export_fails(done: TournamentState, name: str) -> None:
    change, expected = TAMPERING[name]
    export = copy.deepcopy(exported(done))
    change(export)
    problems = verify(export)
    assert problems, name
    assert any(expected in p for p in problems), problems


def test_a_banned_player_stays_out_of_verified_standings() -> None:
    state = finished()
    ban(state, actor=HOST, player="b", reason="cheating", now=T0)
    export = exported(state)
    assert "b" not in [r["player"] for r in export["standings"]]
    assert verify(export) == []


@pytest.mark.parametrize(
    "text",
    ["", "not json", "[1, 2]", '"text"', '{"format": "other/1"}', "{}"],
)
def test_what_is_not_an_export_is_refused(text: str) -> None:
    with pytest.raises(ExportError):
        load_export(text)
    if text.startswith("{"):
        with pytest.raises(ExportError):
            verify(json.loads(text))
