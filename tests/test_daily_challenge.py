"""The daily challenge (issue 15) through a real server: a secret deal per day and game, a
commitment that the reveal opens, the first attempt counts, a leaderboard.

Days are chosen with the server clock moved (``on_day``) and the fair-deals test key, so a
day's proof costs the same every run: 2026-04-16 and 2026-04-17 prove both games at once.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import until, until_race_starts, until_server_clock
from server_fixtures import (
    DAILY_TEST_KEY,
    ServerHandle,
    StartServer,
    free_port,
    get_json,
    worker_process,
)

from clients.client import RaceClient, RequestError
from engine.fair import secret_daily, verify_daily
from protocol import Ack, PlayerFinished, RaceEnded, RaceStarting
from server.records.daily import rank_key
from server.records.store import SqlRecordsStore

DAY = "2026-04-16"
NEXT = "2026-04-17"


async def get(server: ServerHandle, path: str) -> tuple[int, Any]:
    return await get_json(server.port, path)


async def daily_server(
    start_server: StartServer, kind: str, tmp_path: Path, **options: Any
) -> ServerHandle:
    return await start_server(
        kind,
        records_url=f"sqlite:///{tmp_path / 'records.db'}",
        daily_key=DAILY_TEST_KEY,
        **options,
    )


async def player(server: ServerHandle, name: str) -> tuple[RaceClient, Any]:
    client = await server.client()
    me = await client.new_player(name)
    return client, me


async def race_daily(host: RaceClient, *guests: RaceClient, game: str = "klondike") -> Any:
    joined = await host.create(game, deal="daily")
    for guest in guests:
        await guest.join(joined.room)
    await host.start()
    return joined, await until_race_starts(host)


def test_the_leaderboard_order_is_score_then_moves_then_time() -> None:
    table = [  # (label, score, moves, elapsed)
        ("fast winner", 1200, 150, 200_000),
        ("slow winner", 1200, 150, 300_000),
        ("fewer moves", 1200, 140, 900_000),
        ("unfinished high", 1300, 400, None),
        ("low", 100, 10, None),
    ]
    order = sorted(table, key=lambda row: rank_key(row[1], row[2], row[3]))
    assert [row[0] for row in order] == [
        "unfinished high",
        "fewer moves",
        "fast winner",
        "slow winner",
        "low",
    ]
    assert rank_key(0, 0, None) > rank_key(1, 9_999, None)  # any score beats none


async def test_the_deal_is_secret_during_its_day_and_verifies_after(
    start_server: StartServer, tmp_path: Path, on_day: Any, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    on_day(DAY, at="23:59:53")
    server = await daily_server(start_server, "memory", tmp_path)
    secret = secret_daily(DAILY_TEST_KEY, "klondike", DAY)
    code = str(secret.code)
    ann, _ = await player(server, "Ann")
    ann.frames = []
    bob, _ = await player(server, "Bob")
    bob.frames = []
    joined, start = await race_daily(ann, bob)
    assert start.deal is None and joined.snapshot is not None and joined.snapshot.deal is None
    assert await server.deal(joined.room) == code  # the server plays the day's deal
    assert secret.code.sealed  # a new store has no past: every day is a sealed deal
    await bob.resign()  # a finished player is not told it either
    finished = await bob.next_event("player_finished")
    assert isinstance(finished, PlayerFinished) and finished.deal is None
    status, today = await get(server, "/api/daily")
    assert status == 200 and today["today"]["day"] == DAY  # (proved: a room plays it)
    game = next(g for g in today["today"]["games"] if g["game"] == "klondike")
    assert game["commitment"] == secret.commitment and game["code"] is None
    assert game["salt"] is None
    # nothing sent, served or logged so far names the code
    for client in (ann, bob):
        assert not [f for f in client.frames or [] if code in str(f)]
    assert code not in str(today)
    assert not [r for r in caplog.records if code in r.getMessage()]
    # the day ends: the race times out at 00:00 UTC, and the code may be told from then on
    ended = await ann.next_event("race_ended", timeout=10)
    assert isinstance(ended, RaceEnded) and ended.deal == code
    status, day = await get(server, f"/api/daily/{DAY}")
    assert status == 200 and day["over"]
    game = next(g for g in day["games"] if g["game"] == "klondike")
    assert game["code"] == code and game["proven"]
    assert verify_daily(game["code"], game["salt"], game["commitment"])

    # a new day: a new commitment (once its proof is done), its code secret again
    async def committed() -> Any:
        _, today = await get(server, "/api/daily")
        new = next(g for g in today["today"]["games"] if g["game"] == "klondike")
        return (today, new) if new["commitment"] is not None else None

    today, new = await until(committed, 10)
    assert today["today"]["day"] == NEXT and today["yesterday"]["day"] == DAY
    assert new["code"] is None and new["commitment"] not in (None, secret.commitment)


async def test_the_first_attempt_counts_and_later_plays_are_practice(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    on_day("2026-04-15")  # the identities are made the day before
    server = await daily_server(start_server, "redis", tmp_path)
    other = await daily_server(start_server, "redis", tmp_path)  # a second worker
    ann, ann_id = await player(server, "Ann")
    bob, _bob_id = await player(server, "Bob")
    late_start = await server.client()
    on_day(DAY)
    newcomer, _ = await player(server, "New")
    del late_start
    # Ann and Bob race the day's deal: their ranked attempts; the newcomer watches first
    _, start = await race_daily(ann, bob)
    assert start.attempts == {"1": "ranked", "2": "ranked"}
    # a second tab of Ann's, on the other worker: no practice while the attempt is played
    # (it would show the deal's cards meanwhile); the tab and its room stay
    tab = await RaceClient.connect(other.url)
    await tab.identify(ann_id.player, ann_id.secret or "")
    await tab.create("klondike", deal="daily")
    with pytest.raises(RequestError) as refused:
        await tab.start()
    assert refused.value.code == "attempt_in_progress"
    # a newcomer (an identity made today) plays unranked
    _, fresh = await race_daily(newcomer)
    assert fresh.attempts == {"1": "unranked"}
    # Ann wins nothing, resigns after a few moves; Bob resigns at once
    for _ in range(3):
        await ann.move("s")
    await ann.resign()
    await bob.resign()
    await ann.next_event("race_ended", timeout=10)
    # "again" in the attempt's own room is practice at once (its race is over), written or not
    await ann.rematch("same")
    await bob.rematch_reply(2)
    again = await ann.next_event("race_starting")
    assert isinstance(again, RaceStarting) and again.attempts == {"1": "practice", "2": "practice"}

    async def on_the_board() -> Any:
        status, board = await get(server, f"/api/daily/{DAY}/klondike?player={ann_id.player}")
        return board if status == 200 and len(board["entries"]) == 2 else None

    board = await until(on_the_board, 5)
    # once the attempt is written, the other tab practises too
    await tab.start()
    practice = await tab.next_event("race_starting")
    assert isinstance(practice, RaceStarting) and practice.attempts == {"1": "practice"}
    # the same score (drawing from the stock scores nothing): fewer moves rank first
    assert [e["name"] for e in board["entries"]] == ["Bob", "Ann"]
    assert [e["moves"] for e in board["entries"]] == [0, 3]
    assert [e["rank"] for e in board["entries"]] == [1, 2]
    assert board["you"]["name"] == "Ann" and board["you"]["rank"] == 2
    # the deal, and the replays, only once the day is over
    assert board["deal"]["code"] is None and board["you"]["game_id"] is None
    # the newcomer's attempt is not on the board (unranked), nor the practice
    assert len(board["entries"]) == 2


async def test_a_guest_cannot_play_the_days_deal(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    """Today's deal is played by players only (a guest's play would cost nothing and show
    every card before their real attempt): a guest cannot make a room on it, take a seat
    in one, or be in the race a host starts; made a player, their first race is their
    attempt. Nothing of it closes the connection."""
    on_day("2026-04-15")
    server = await daily_server(start_server, "memory", tmp_path)
    host, _ = await player(server, "Ann")
    on_day(DAY)
    guest = await server.client()
    with pytest.raises(RequestError) as info:
        await guest.create("klondike", deal="daily")
    assert info.value.code == "daily_needs_player"
    joined = await host.create("klondike", deal="daily")
    with pytest.raises(RequestError) as info:
        await guest.join(joined.room)
    assert info.value.code == "daily_needs_player"
    await host.request({"type": "add_bot", "strength": "greedy", "pace": 2})  # robots race
    me = await guest.new_player("Gus")  # one tap: the same connection, a player now
    assert me.player
    await guest.join(joined.room)
    await host.start()
    start = await host.next_event("race_starting")
    assert isinstance(start, RaceStarting)
    # Gus's identity is today's: their attempt is unranked (the robot is nobody's)
    assert start.attempts == {"1": "ranked", "2": "guest", "3": "unranked"}


async def test_watching_the_days_deal_shows_no_board_and_costs_nothing(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    """A spectator who has not finished their attempt today sees the racers' progress but
    no board — not the opening cards, not a finish's board, no ``follow`` — so watching
    is not their attempt; once they have played it out they may see the boards."""
    on_day("2026-04-15")
    server = await daily_server(start_server, "memory", tmp_path)
    ann, _ = await player(server, "Ann")
    watcher, watcher_id = await player(server, "Wat")
    on_day(DAY)
    joined = await ann.create("klondike", deal="daily")
    watcher.frames = []
    await watcher.join(joined.room, role="spectator")
    await ann.start()
    seen = await watcher.next_event("race_starting")
    assert isinstance(seen, RaceStarting) and seen.view is None
    with pytest.raises(RequestError) as info:
        await watcher.request({"type": "follow", "seats": [1]})
    assert info.value.code == "boards_hidden"
    await until_server_clock(seen.start_at, seen.now)
    assert isinstance(await ann.move("s"), Ack)
    await watcher.next_event("progress")  # progress is shown
    await ann.resign()
    finished = await watcher.next_event("player_finished")
    assert isinstance(finished, PlayerFinished)
    assert finished.board is None and finished.move_list is None
    await watcher.ping()  # the connection is as it was
    # watching was no attempt: their own race is their ranked attempt
    again = await server.client()
    await again.identify(watcher_id.player, watcher_id.secret or "")
    _, start = await race_daily(again)
    assert start.attempts == {"1": "ranked"}
    await again.resign()
    await again.next_event("race_ended")
    # played out: now they may follow the boards of another race on the day's deal
    bob, _ = await player(server, "Bob")
    other = await bob.create("klondike", deal="daily")
    await bob.start()
    await bob.next_event("race_starting")
    late = await server.client()
    await late.identify(watcher_id.player, watcher_id.secret or "")
    await late.join(other.room, role="spectator")

    async def follows() -> bool:  # the attempt's end reaches the records store soon after
        try:
            await late.request({"type": "follow", "seats": [1]})
        except RequestError as exc:
            assert exc.code == "boards_hidden"
            return False
        return True

    await until(follows)  # a player who finished their attempt may follow


async def test_spectators_of_a_delayed_room_are_not_told_the_days_deal(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    """A room with a spectator delay shows its spectators the room through its feed:
    neither its events nor the snapshot of a spectator joining after the race hold the
    day's code (or the workers' own fields), while the day lasts."""
    on_day(DAY)
    server = await daily_server(start_server, "memory", tmp_path)
    code = str(secret_daily(DAILY_TEST_KEY, "klondike", DAY).code)
    ann, _ = await player(server, "Ann")
    joined = await ann.create("klondike", deal="daily", spectator_delay=1)
    early = await server.client()
    early.frames = []
    await early.join(joined.room, role="spectator")
    await ann.start()
    await until_race_starts(ann)
    await ann.resign()
    await ann.next_event("race_ended")
    ended = await early.next_event("race_ended", timeout=5)  # the delay later
    assert isinstance(ended, RaceEnded) and ended.deal is None
    late = await server.client()
    late.frames = []
    snap = (await late.join(joined.room, role="spectator")).snapshot
    assert snap is not None and snap.phase == "ended" and snap.deal is None
    seen = " ".join(str(f) for f in [*early.frames, *late.frames])
    assert "race_starting" in seen and "race_ended" in seen
    assert code not in seen and "secret_until" not in seen and "typed_by" not in seen


async def test_days_drawn_before_sealed_deals_keep_their_numbered_deal(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    """A store that kept days before this server drew sealed deals: today, whose commitment
    may be out already, keeps version 1's numbered deal; from tomorrow each day is sealed.
    The day is set once and holds for every worker and start after."""
    url = f"sqlite:///{tmp_path / 'records.db'}"
    old = await SqlRecordsStore.open(url)
    try:
        await old.daily.key()  # a server drawing version 1 days kept its key here
    finally:
        await old.close()
    on_day(DAY)
    first = await start_server("memory", records_url=url, daily_key=DAILY_TEST_KEY)
    host = await first.client()
    await host.new_player("Ann")
    numbered = secret_daily(DAILY_TEST_KEY, "klondike", DAY, fair=1)
    assert numbered.code.number is not None
    room = (await host.create("klondike", deal="daily")).room
    assert await first.deal(room) == str(numbered.code)
    on_day(NEXT)
    client = await first.client()
    await client.new_player("Bob")
    room = (await client.create("klondike", deal="daily")).room
    sealed = secret_daily(DAILY_TEST_KEY, "klondike", NEXT)
    assert sealed.code.sealed and await first.deal(room) == str(sealed.code)

    # yesterday's reveal is the numbered deal its commitment was made of
    async def revealed_yesterday() -> Any:  # the API never waits for a proof: once proved
        status, today = await get(first, "/api/daily")
        assert status == 200
        found = next(g for g in today["yesterday"]["games"] if g["game"] == "klondike")
        return found if found["code"] is not None else None

    revealed = await until(revealed_yesterday, 20)
    assert revealed["code"] == str(numbered.code)
    assert revealed["commitment"] == numbered.commitment
    # a worker started later reads the same first sealed day, not a day of its own
    second = await start_server("memory", records_url=url, daily_key=DAILY_TEST_KEY)
    assert second.app.daily.sealed_since == dt.date.fromisoformat(NEXT)
    assert second.app.daily.fair_of(dt.date.fromisoformat(DAY)) == 1


async def test_no_solver_bot_on_the_days_deal(
    start_server: StartServer, tmp_path: Path, on_day: Any
) -> None:
    on_day(DAY)
    server = await daily_server(start_server, "memory", tmp_path)
    host, _ = await player(server, "Ann")
    await host.create("klondike", deal="daily")
    with pytest.raises(RequestError) as info:
        await host.request({"type": "add_bot", "strength": "solver", "pace": 2})
    assert info.value.code == "no_solver_daily"
    await host.request({"type": "add_bot", "strength": "greedy", "pace": 2})  # allowed


@pytest.mark.parametrize(
    ("path", "status", "error"),
    [
        ("/api/daily/not-a-day", 400, "bad_day"),
        ("/api/daily/2099-01-01", 404, "future_day"),
        ("/api/daily/2025-06-01", 404, "before_day_one"),
        ("/api/daily/2025-12-31/klondike", 404, "before_day_one"),
        (f"/api/daily/{DAY}/klondike-3", 404, "no_daily"),
        (f"/api/daily/{DAY}/klondike?limit=x", 400, "bad_query"),
    ],
)
async def test_bad_daily_requests(
    start_server: StartServer, tmp_path: Path, on_day: Any, path: str, status: int, error: str
) -> None:
    on_day(DAY)
    server = await daily_server(start_server, "memory", tmp_path)
    got, body = await get(server, path)
    assert got == status and body["error"] == error


@pytest.mark.slow
async def test_a_worker_killed_mid_game_gives_no_second_attempt(
    redis_url: str, tmp_path: Path
) -> None:
    """The attempt is made in the records database before the race shows a card: the
    worker that started it may die, another never gives the player a second one."""
    key_file = tmp_path / "daily.key"
    key_file.write_text(DAILY_TEST_KEY.hex())
    offset = dt.datetime.fromisoformat(f"{DAY}T12:00:00+00:00").timestamp() - time.time()
    common = [
        "--redis",
        redis_url,
        "--database",
        f"sqlite:///{tmp_path / 'records.db'}",
        "--daily-key-file",
        str(key_file),
        "--clock-offset",
        str(offset),
        "--countdown",
        "0.05",
    ]
    p1, p2 = free_port(), free_port()
    with worker_process(*common, port=p1) as w1, worker_process(*common, port=p2):
        ann = await RaceClient.connect(f"ws://127.0.0.1:{p1}")
        me = await ann.new_player("Ann")
        _, start = await race_daily(ann)
        assert start.attempts == {"1": "unranked"}  # made today: plays unranked
        await ann.move("s")
        os.kill(w1.pid, signal.SIGKILL)
        w1.wait()
        again = await RaceClient.connect(f"ws://127.0.0.1:{p2}")
        await again.identify(me.player, me.secret or "")
        # no second attempt, and no practice while the first is still being played (its
        # room lives on in Redis: the seat is resumed, or freed once the grace is over)
        await again.create("klondike", deal="daily")
        with pytest.raises(RequestError) as refused:
            await again.start()
        assert refused.value.code == "attempt_in_progress"
        await again.close()
