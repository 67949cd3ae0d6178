"""The sans-I/O room core: ranking, codes, names, race rules — no sockets, no event loop."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
from pydantic import ValidationError

from protocol import DealKind, RaceStatus
from server.codes import (
    CODE_ALPHABET,
    clean_name,
    display_code,
    hash_token,
    new_room_code,
    new_token,
    normalize_code,
)
from server.rooms.room import (
    ProgressState,
    Refusal,
    RoomOptions,
    RoomState,
    add_player,
    check_race_end,
    choose_deal,
    rank,
    remove_seat,
    set_connected,
    start_race,
)


def p(
    seat: int,
    status: RaceStatus,
    on: int = 0,
    score: int = 0,
    moves: int = 0,
    elapsed: int | None = None,
) -> ProgressState:
    return ProgressState(
        race=1,
        seat=seat,
        status=status,
        on_foundations=on,
        score=score,
        moves=moves,
        elapsed_ms=elapsed,
    )


def test_rank_winners_by_time_then_moves_then_the_rest() -> None:
    rows = [
        p(1, "resigned", on=20, score=300, moves=50),
        p(2, "won", on=52, moves=120, elapsed=90_000),
        p(3, "won", on=52, moves=110, elapsed=90_000),
        p(4, "won", on=52, moves=90, elapsed=80_000),
        p(5, "timeout", on=20, score=300, moves=40),
        p(6, "timeout", on=20, score=310, moves=99),
        p(7, "resigned", on=30, score=0, moves=500),
    ]
    assert [(place, r.seat) for place, r in rank(rows)] == [
        (1, 4),
        (2, 3),
        (3, 2),
        (4, 7),
        (5, 6),
        (6, 5),
        (7, 1),
    ]


def test_rank_never_puts_score_before_cards() -> None:
    rows = [p(1, "resigned", on=3, score=999), p(2, "timeout", on=4)]
    assert [r.seat for _, r in rank(rows)] == [2, 1]


def test_equal_results_share_a_place() -> None:
    """Two who resigned with the same cards, score and moves are both 1st (issue 31: they
    were "1st of 2" and "2nd of 2"); the next result is placed after both."""
    rows = [
        p(3, "resigned", on=10, score=60, moves=30),
        p(1, "resigned", on=10, score=60, moves=30),
        p(2, "timeout", on=9, score=90, moves=10),
    ]
    assert [(place, r.seat) for place, r in rank(rows)] == [(1, 1), (1, 3), (3, 2)]
    winners = [p(s, "won", on=52, moves=90, elapsed=80_000) for s in (2, 1)]
    assert [place for place, _ in rank(winners)] == [1, 1]


def room(**options: object) -> RoomState:
    return RoomState(
        code="K7QF2M",
        game="klondike",
        options=RoomOptions(**options),  # type: ignore[arg-type]
        deal="KL1-1-AAAAAAK",
    )


def test_race_lifecycle() -> None:
    r = room(max_players=2, time_limit=60)
    a, events = add_player(r, "Ann", hash_token("a"), "c1", 0)
    seated = events[0]
    assert seated["type"] == "seat"
    assert r.host == a.seat == 1 and seated["host"] is True
    b, _ = add_player(r, "", hash_token("b"), "c2", 0)
    assert b.name == "Player 2"
    with pytest.raises(Refusal) as info:
        add_player(r, "Cy", hash_token("c"), "c3", 0)
    assert info.value.error_code == "room_full"
    progress: dict[int, ProgressState] = {}
    with pytest.raises(Refusal):
        start_race(r, progress, by=2, now=0, countdown_ms=3000, total=52)
    (event,) = start_race(r, progress, by=1, now=1000, countdown_ms=3000, total=52)
    assert event["type"] == "race_starting"
    assert event["start_at"] == 4000 and event["deadline"] == 64_000 and event["seats"] == [1, 2]
    assert (set(progress), r.phase) == ({1, 2}, "running")
    with pytest.raises(Refusal):
        add_player(r, "Late", hash_token("l"), "c4", 0)
    progress[1] = replace(progress[1], status="won", elapsed_ms=5000)
    assert check_race_end(r, progress, 9000) == []
    progress[2] = replace(progress[2], status="resigned")
    (end,) = check_race_end(r, progress, 9000)
    assert end["type"] == "race_ended"
    assert [row["seat"] for row in end["results"]] == [1, 2] and r.phase == "ended"
    assert check_race_end(r, progress, 9000) == []  # once only
    with pytest.raises(Refusal) as info:
        start_race(r, progress, by=1, now=0, countdown_ms=0, total=52)
    assert info.value.error_code == "race_over"
    start_race(r, progress, by=1, now=0, countdown_ms=0, total=52, deal="KL1-1-AAAAAAB")
    assert r.race == 2 and r.deal == "KL1-1-AAAAAAB" and progress[1].status == "playing"


def test_disconnect_and_host_passing() -> None:
    r = room()
    a, _ = add_player(r, "Ann", "ha", "c1", 0)
    _b, _ = add_player(r, "Bob", "hb", "c2", 0)
    (away,) = set_connected(r, {}, a, None, 5)
    assert away["type"] == "seat"
    assert away["connected"] is False and a.disconnected_at == 5
    assert set_connected(r, {}, a, None, 6) == []
    left, host = remove_seat(r, a)
    assert left["type"] == host["type"] == "seat"
    assert left["left"] and host["seat"] == 2 and host["host"]
    assert r.host == 2


def test_room_codes() -> None:
    code = new_room_code()
    assert len(code) == 6 and set(code) <= set(CODE_ALPHABET)
    assert not set("01ILOU") & set(CODE_ALPHABET)
    assert display_code("K7QF2M") == "K7QF-2M"
    assert normalize_code(" k7qf-2m ") == "K7QF2M"
    assert normalize_code("K7QF-2") is None and normalize_code("K7QF-20") is None


def test_tokens() -> None:
    token = new_token()
    assert len(token) >= 22 and token != new_token()  # 192 bits, URL-safe
    assert hash_token(token) != token and len(hash_token(token)) == 64


@pytest.mark.parametrize(
    ("raw", "name"),
    [
        ("Ann", "Ann"),
        ("  Ann \t  Lee ", "Ann Lee"),
        ("A\x00n\x07n", "Ann"),
        ("<b>Ann</b>", "<b>Ann</b>"),  # plain text: kept, never interpreted
        ("x" * 50, "x" * 24),
        ("\u202eevil\u200b", "evil"),
        ("\n\r", "Player 3"),
    ],
)
def test_clean_name(raw: str, name: str) -> None:
    assert clean_name(raw, "Player 3") == name


def test_deal_choices() -> None:
    assert choose_deal("klondike", "code", "kl1-1-aaaaaak", None) == "KL1-1-AAAAAAK"
    assert choose_deal("klondike", "same", None, "KL1-1-AAAAAAB") == "KL1-1-AAAAAAB"
    assert choose_deal("easy-harp", "random", None, None).startswith("EH1-N-")
    refused: list[tuple[DealKind, str | None]] = [
        ("code", "EH1-N-AAAAAAF"),
        ("code", None),
        ("same", None),
        ("code", "x"),
        ("daily", None),  # the daily layer's: never chosen here
    ]
    for kind, code in refused:
        with pytest.raises(Refusal):
            choose_deal("klondike", kind, code, None)


def test_winning_lines_of_the_race_tests_still_win() -> None:
    """The race tests play these lines; a rules change shows up here first."""
    from server_fixtures import WINS

    from engine import replay

    for game, (code, moves) in WINS.items():
        assert replay(code, moves.split()).won, game


def test_progress_is_one_frozen_value_stored_as_json() -> None:
    p = ProgressState(race=12, seat=2, name='x","status":"won"', on_foundations=3, total=52)
    data = p.to_json()
    assert data.startswith(b'{"race":12,')  # the store's script reads the race from the text
    assert b'"status":"playing"' in data and b'"status":"won"' not in data  # a name cannot fake it
    assert ProgressState.from_json(data) == p
    assert ProgressState.from_json(b'{"race":1,"seat":1,"later":0}') == ProgressState(1, 1)
    with pytest.raises(ValidationError):
        ProgressState.from_json(b'{"race":1,"seat":1,"status":"disconnected"}')  # shown only
    with pytest.raises(FrozenInstanceError):
        p.status = "won"  # type: ignore[misc]
