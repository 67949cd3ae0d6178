"""protocol.frames builds the server's frames without pydantic: each builder's output must be
the message its model describes — it decodes with the model, and carries exactly the model's
fields — so the fast path cannot drift from the schema."""

from __future__ import annotations

from typing import Any

import orjson
import pytest
from pydantic import BaseModel

from engine import new_game
from protocol import (
    Ack,
    Board,
    BoardsOpen,
    Error,
    IdentityReply,
    Joined,
    LiveRooms,
    Ok,
    PlayerFinished,
    Pong,
    PoolCounts,
    Progress,
    RaceEnded,
    RaceRecordDelayed,
    RaceRecorded,
    RaceStarting,
    Reactions,
    Rejected,
    RematchOffered,
    Resync,
    SeatEvent,
    Seeking,
    SeekOffer,
    Spectators,
    Welcome,
    decode_server,
    frames,
)
from server.rooms.room import ProgressState as StoredProgress
from server.rooms.room import RematchOffer, RoomState, SeatState, progress_event
from server.rooms.view import snapshot
from server.watching.entries import live_entry

VIEW = new_game("KL1-1-AAAAAAF").player_view()


def _room() -> tuple[RoomState, dict[int, StoredProgress]]:
    room = RoomState(
        code="K7QF2M",
        game="klondike",
        options={"max_players": 4},  # type: ignore[arg-type]
        deal="KL1-1-AAAAAAF",
        seats=[SeatState(seat=1, name="Ann", token_hash="x")],
        host=1,
        phase="running",
        race=1,
        start_at=1000,
        participants=[1],
    )
    return room, {1: StoredProgress(race=1, seat=1, total=52, moves=3, score=10)}


ROOM, PROGRESS = _room()
SNAPSHOT = snapshot(ROOM, PROGRESS, 7, 5000, "http://h/r/K7QF-2M", viewer=1)
ENTRY = live_entry(snapshot(ROOM, PROGRESS, 7, 5000, "", viewer=None), 900, "live")
assert ENTRY is not None

REPLIES: list[tuple[bytes, type[BaseModel]]] = [
    (frames.welcome(id=None, worker="w", max_frame=1, rate=1.0, burst=1, bots=True), Welcome),
    (
        frames.joined(
            id=1, room="K7QF-2M", link="l", role="player", seat=1, token="t", snapshot=SNAPSHOT
        ),
        Joined,
    ),
    (frames.joined(id=None, room="K7QF-2M", link="l", role="spectator"), Joined),
    (frames.resync(SNAPSHOT), Resync),
    (frames.ack(id=2, move="s", revealed=["9C"], changes={"stock": 3}), Ack),
    (frames.rejected(id=3, move="x", rule="notation", reminder="r"), Rejected),
    (frames.error(id=None, code="c", message="m"), Error),
    (frames.ok(4), Ok),
    (frames.pong(id=5, now=6), Pong),
    (frames.board(room="K7QF-2M", seat=1, race=1, view=VIEW), Board),
    (frames.boards_open(room="K7QF-2M"), BoardsOpen),
    (
        frames.identity(
            id=6, player="p", name="Ann", handle=None, created_at=1, secret="s", recovery_code="r"
        ),
        IdentityReply,
    ),
    (
        frames.live_rooms(
            sort="closest",
            game=None,
            total=1,
            now=5,
            rooms=orjson.dumps([ENTRY]),
            featured=[{"game": "klondike", "room": "K7QF-2M"}],
        ),
        LiveRooms,
    ),
    (
        frames.reactions(
            room="K7QF-2M", counts=[{"seat": None, "reaction": "gg", "by": "spectator", "n": 2}]
        ),
        Reactions,
    ),
    (
        frames.seeking(
            id=7,
            pool="klondike:2:300:rated",
            game="klondike",
            players=2,
            time_limit=300,
            rated=True,
            since=1,
            offer_at=20_001,
            now=2,
            rating=1500,
            provisional=True,
        ),
        Seeking,
    ),
    (frames.seek_offer(pool="klondike:4:0:casual", offers=["bot", "smaller"]), SeekOffer),
    (
        frames.pool_counts(
            [
                {
                    "pool": "easy-harp:4:600:rated",
                    "game": "easy-harp",
                    "players": 4,
                    "time_limit": 600,
                    "rated": True,
                    "seeking": 3,
                }
            ]
        ),
        PoolCounts,
    ),
]

EVENTS: list[tuple[Any, type[BaseModel]]] = [
    (
        frames.seat(room="K7QF-2M", seat=1, name="Ann", connected=True, left=False, host=True),
        SeatEvent,
    ),
    (
        frames.seat(
            room="K7QF-2M",
            seat=2,
            name="Bob",
            connected=True,
            left=False,
            host=False,
            rating=1520,
            provisional=True,
        ),
        SeatEvent,
    ),
    (frames.spectators(room="K7QF-2M", count=3), Spectators),
    (frames.race_recorded(room="K7QF-2M", race=1, game_id="0123456789ab"), RaceRecorded),
    (frames.race_record_delayed(room="K7QF-2M", race=1), RaceRecordDelayed),
    (
        frames.race_recorded(
            room="K7QF-2M",
            race=1,
            game_id="0123456789ab",
            ratings=[
                {
                    "seat": 1,
                    "player": "0123456789abcdef",
                    "rating": 1520,
                    "change": 12,
                    "rd": 180,
                    "provisional": True,
                    "abandoned": False,
                }
            ],
        ),
        RaceRecorded,
    ),
    (
        frames.rematch_offered(room="K7QF-2M", race=2, deal="daily", deadline=9, now=1, by=1),
        RematchOffered,
    ),
    (progress_event(ROOM, PROGRESS[1], 5000), Progress),
]

# stored with fields for the workers that the fair-play filter removes before sending
STORED: list[tuple[Any, type[BaseModel], set[str]]] = [
    (
        frames.race_starting(
            room="K7QF-2M",
            race=1,
            deal="KL1-1-AAAAAAF",
            start_at=1,
            deadline=None,
            now=0,
            seats=[1],
            view=VIEW,
            daily=True,
            typed_by=None,
        ),
        RaceStarting,
        {"typed_by", "secret_until"},
    ),
    (
        frames.player_finished(
            room="K7QF-2M",
            race=1,
            seat=1,
            status="resigned",
            elapsed_ms=1,
            move_list="s",
            board=VIEW,
            deal="KL1-1-AAAAAAF",
            times_ms=[1],
        ),
        PlayerFinished,
        {"secret_until"},
    ),
    (
        frames.race_ended(
            room="K7QF-2M",
            race=1,
            deal="KL1-1-AAAAAAF",
            results=[
                {
                    "rank": 1,
                    "seat": 1,
                    "name": "Ann",
                    "status": "won",
                    "on_foundations": 52,
                    "score": 9,
                    "moves": 9,
                    "elapsed_ms": 9,
                }
            ],
        ),
        RaceEnded,
        {"secret_until"},
    ),
]


@pytest.mark.parametrize(("data", "model"), REPLIES, ids=lambda x: getattr(x, "__name__", ""))
def test_each_reply_is_its_model(data: bytes, model: type[BaseModel]) -> None:
    message = decode_server(data)
    assert isinstance(message, model)
    assert set(orjson.loads(data)) == set(model.model_fields)


@pytest.mark.parametrize(("body", "model"), EVENTS, ids=lambda x: getattr(x, "__name__", ""))
def test_each_event_is_its_model_once_stamped(body: Any, model: type[BaseModel]) -> None:
    data = frames.stamp_event(41, orjson.dumps(body))
    assert frames.event_seq(data) == 41
    message = decode_server(data)
    assert isinstance(message, model) and message.model_dump()["seq"] == 41
    assert set(orjson.loads(data)) == set(model.model_fields)


@pytest.mark.parametrize(
    ("body", "model", "internal"), STORED, ids=lambda x: getattr(x, "__name__", "")
)
def test_stored_events_hold_the_model_and_what_the_filter_removes(
    body: Any, model: type[BaseModel], internal: set[str]
) -> None:
    sent = {k: v for k, v in body.items() if k not in internal}
    message = decode_server(frames.stamp_event(2, orjson.dumps(sent)))
    assert isinstance(message, model)
    assert set(body) - internal | {"seq"} == set(model.model_fields)


def test_the_snapshot_is_a_room_snapshot() -> None:
    reply = decode_server(frames.resync(SNAPSHOT))
    assert isinstance(reply, Resync)
    assert set(SNAPSHOT) == set(type(reply.snapshot).model_fields)
    assert reply.snapshot.seats[0].status == "playing"
    assert reply.snapshot.deal is None  # racing: fair play withholds the deal code


def test_a_rated_rooms_seats_show_their_ratings_in_the_snapshot() -> None:
    room, progress = _room()
    room.seats[0].rating, room.seats[0].provisional = 1612, False
    reply = decode_server(frames.resync(snapshot(room, progress, 8, 5000, "", viewer=None)))
    assert isinstance(reply, Resync)
    (seat,) = reply.snapshot.seats
    assert (seat.rating, seat.provisional) == (1612, False)
    casual = decode_server(frames.resync(SNAPSHOT))
    assert isinstance(casual, Resync) and casual.snapshot.seats[0].rating is None


def test_a_non_event_has_no_seq() -> None:
    assert frames.event_seq(b'{"ctl":"kick"}') is None
    assert frames.event_seq(frames.stamp_event(7, b'{"type":"x"}')) == 7


def test_a_snapshot_tells_the_daily_flag_and_a_pending_offer_but_not_its_deal() -> None:
    room, progress = _room()
    room.phase, room.daily = "ended", True
    room.offer = RematchOffer(
        race=2, kind="random", deal="KL1-1-AAAAAAB", by=1, deadline=9, countdown_ms=0
    )
    body = snapshot(room, progress, 8, 5000, "http://h/r/K7QF-2M", viewer=None)
    reply = decode_server(frames.resync(body))
    assert isinstance(reply, Resync)
    assert reply.snapshot.daily is True
    offer = reply.snapshot.rematch_offer
    assert offer is not None and (offer.race, offer.deal, offer.by) == (2, "random", 1)
    assert "KL1-1-AAAAAAB" not in orjson.dumps(body).decode()  # the offered deal's code


def test_a_live_entry_is_a_live_room() -> None:
    reply = decode_server(
        frames.live_rooms(
            sort="newest", game="klondike", total=1, now=5, rooms=orjson.dumps([ENTRY]), featured=[]
        )
    )
    assert isinstance(reply, LiveRooms)
    (room,) = reply.rooms
    assert ENTRY is not None and set(ENTRY) == set(type(room).model_fields)
    assert set(ENTRY["players"][0]) == set(type(room.players[0]).model_fields)
    assert room.phase == "running" and room.players[0].moves == 3


# --------------------------------------------------------------------- tournaments


def _tournament_frames() -> list[tuple[bytes, type[BaseModel]]]:
    """A tournament with a round ended and one being played, as the server sends it."""
    from tournament_fixtures import begin_round, new, play_round, with_players

    from protocol import TournamentEvent, TournamentReply, TournamentSeat, TournamentStandings
    from server.tournaments import standings
    from server.tournaments.api import page_of
    from server.tournaments.live import RoundRoom, new_live
    from server.tournaments.updates import live_round

    state = with_players(new(rounds=2), "ann", "bob")
    play_round(state, ["ann", "bob"], {"ann": ["s"], "bob": ["s", "s"]})
    begin_round(state, ["ann", "bob"])
    live = new_live(state)
    live.rooms["2"] = [RoundRoom(code="M4PX9Q", created_at=1, seats={"ann": 1, "bob": 2})]
    seat = frames.tournament_seat(
        tournament="K7QF-2M",
        round=2,
        room="M4PX-9Q",
        seat=1,
        token="t",
        start_at=1,
        deadline=2,
        now=0,
    )
    you = {"player": "ann", "role": "player", "status": "entered", "reason": None, "seat": seat}
    rows = [row.as_json() for row in standings(state)]
    shared, mine = live_round(state) or ({}, {})
    return [
        (
            frames.tournament_reply(id=3, page=page_of(live, "http://h/t/K7QF-2M"), you=you, seq=7),
            TournamentReply,
        ),
        (
            frames.tournament_event(
                tournament="K7QF-2M", seq=8, kind="announcement", data={"text": "hi"}
            ),
            TournamentEvent,
        ),
        (
            frames.tournament_standings(
                tournament="K7QF-2M",
                version=state.version,
                players=len(rows),
                top=orjson.dumps(rows),
                you=rows[0],
                live={**shared, "you": mine.get("ann")},
            ),
            TournamentStandings,
        ),
        (orjson.dumps(seat), TournamentSeat),
    ]


def test_each_tournament_message_is_its_model() -> None:
    for data, model in _tournament_frames():
        message = decode_server(data)
        assert isinstance(message, model)
        assert set(orjson.loads(data)) == set(model.model_fields)
