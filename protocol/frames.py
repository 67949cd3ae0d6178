"""Every server → client message, built in one place.

The pydantic models of :mod:`protocol.messages` are the contract (the JSON Schema comes from
them); building one per frame on the server's hot path would cost more than the rest of a
move. So the server builds its frames here, as typed dicts whose keys mypy checks against
these declarations, and encodes each once with orjson. ``tests/test_frames.py`` decodes
every builder's output with :func:`protocol.decode_server` and compares its keys with the
model's fields, so the two cannot drift apart.

Room events are built as bodies without ``seq``: the store numbers them
(:func:`stamp_event`) as it keeps and publishes them. Replies are returned encoded.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from typing_extensions import TypedDict

from .live import Phase, Role, SeatStatus
from .messages import PROTOCOL_VERSION, DealKind

__all__ = [
    "BoardView",
    "EventBody",
    "FeaturedBody",
    "LivePlayerBody",
    "LiveRoomBody",
    "PoolCountBody",
    "ProgressBody",
    "RaceEndedBody",
    "RaceRecordDelayedBody",
    "RaceRecordedBody",
    "RaceStartingBody",
    "RatingChangeBody",
    "ReactionCountBody",
    "RematchOfferBody",
    "RematchOfferedBody",
    "ResultRowBody",
    "SeatBody",
    "SeatInfoBody",
    "SnapshotBody",
    "SpectatorsBody",
    "ack",
    "board",
    "boards_open",
    "error",
    "event_seq",
    "identity",
    "joined",
    "live_rooms",
    "ok",
    "player_finished",
    "pong",
    "pool_counts",
    "progress",
    "race_ended",
    "race_record_delayed",
    "race_recorded",
    "race_starting",
    "reactions",
    "rejected",
    "rematch_offered",
    "resync",
    "seat",
    "seek_offer",
    "seeking",
    "spectators",
    "stamp_event",
    "tournament_event",
    "tournament_reply",
    "tournament_seat",
    "tournament_standings",
    "welcome",
]

BoardView = dict[str, Any]
"""A player's board as :meth:`engine.game.Game.player_view` gives it (face-up cards only)."""


# --------------------------------------------------------------------- room events


class SeatBody(TypedDict):
    """``seat``: a seat was taken, left, (dis)connected or became the host; in a rated
    room, the player's rating and whether it is provisional."""

    type: Literal["seat"]
    room: str
    seat: int
    name: str
    connected: bool
    left: bool
    host: bool
    rating: int | None
    provisional: bool


class SpectatorsBody(TypedDict):
    """``spectators``: how many watch the room."""

    type: Literal["spectators"]
    room: str
    count: int


class RaceStartingBody(TypedDict):
    """``race_starting`` as stored: ``deal``, ``typed_by`` and ``secret_until`` are for the
    workers; the fair-play filter removes ``typed_by`` and ``secret_until`` always and
    ``deal`` for who may not know it."""

    type: Literal["race_starting"]
    room: str
    race: int
    deal: str | None
    start_at: int
    deadline: int | None
    now: int
    seats: list[int]
    view: BoardView | None
    daily: bool
    typed_by: int | None
    attempts: dict[str, str] | None
    secret_until: int | None


class RematchOfferedBody(TypedDict):
    """``rematch_offered``: the host offers the next race (the deal's kind, never its
    code)."""

    type: Literal["rematch_offered"]
    room: str
    race: int
    deal: DealKind
    deadline: int
    now: int
    by: int


class ProgressBody(TypedDict):
    """``progress``: a player's state after their actions or a change of status."""

    type: Literal["progress"]
    room: str
    race: int
    seat: int
    on_foundations: int
    total: int
    score: int
    moves: int
    status: SeatStatus
    elapsed_ms: int


class PlayerFinishedBody(TypedDict):
    """``player_finished`` as stored (``deal`` removed for who may not know it)."""

    type: Literal["player_finished"]
    room: str
    race: int
    seat: int
    status: SeatStatus
    elapsed_ms: int
    move_list: str
    board: BoardView
    deal: str | None
    times_ms: list[int] | None
    secret_until: int | None


class ResultRowBody(TypedDict):
    """One line of a race's ranking."""

    rank: int
    seat: int
    name: str
    status: SeatStatus
    on_foundations: int
    score: int
    moves: int
    elapsed_ms: int | None


class RaceEndedBody(TypedDict):
    """``race_ended``: every player has finished."""

    type: Literal["race_ended"]
    room: str
    race: int
    deal: str
    results: list[ResultRowBody]
    secret_until: int | None


class RatingChangeBody(TypedDict):
    """A racer's new rating and its change in a rated race (whole points)."""

    seat: int
    player: str
    rating: int
    change: int
    rd: int
    provisional: bool
    abandoned: bool


class RaceRecordedBody(TypedDict):
    """``race_recorded``: the race is in the records store, its replay named ``game_id``;
    ``ratings``: each racer's rating change when the race was rated."""

    type: Literal["race_recorded"]
    room: str
    race: int
    game_id: str
    ratings: list[RatingChangeBody] | None


class RaceRecordDelayedBody(TypedDict):
    """``race_record_delayed``: the race could not be written yet; ``race_recorded``
    follows once the records database is back."""

    type: Literal["race_record_delayed"]
    room: str
    race: int


EventBody = (
    SeatBody
    | SpectatorsBody
    | RematchOfferedBody
    | RaceStartingBody
    | ProgressBody
    | PlayerFinishedBody
    | RaceEndedBody
    | RaceRecordedBody
    | RaceRecordDelayedBody
)
"""A room event before the store numbers it."""


def seat(
    *,
    room: str,
    seat: int,
    name: str,
    connected: bool,
    left: bool,
    host: bool,
    rating: int | None = None,
    provisional: bool = False,
) -> SeatBody:
    """The ``seat`` event body."""
    return {
        "type": "seat",
        "room": room,
        "seat": seat,
        "name": name,
        "connected": connected,
        "left": left,
        "host": host,
        "rating": rating,
        "provisional": provisional,
    }


def spectators(*, room: str, count: int) -> SpectatorsBody:
    """The ``spectators`` event body."""
    return {"type": "spectators", "room": room, "count": count}


def race_starting(
    *,
    room: str,
    race: int,
    deal: str,
    start_at: int,
    deadline: int | None,
    now: int,
    seats: list[int],
    view: BoardView | None,
    daily: bool,
    typed_by: int | None,
    attempts: dict[str, str] | None = None,
    secret_until: int | None = None,
) -> RaceStartingBody:
    """The ``race_starting`` event body as stored (see :class:`RaceStartingBody`)."""
    return {
        "type": "race_starting",
        "room": room,
        "race": race,
        "deal": deal,
        "start_at": start_at,
        "deadline": deadline,
        "now": now,
        "seats": seats,
        "view": view,
        "daily": daily,
        "typed_by": typed_by,
        "attempts": attempts,
        "secret_until": secret_until,
    }


def rematch_offered(
    *, room: str, race: int, deal: DealKind, deadline: int, now: int, by: int
) -> RematchOfferedBody:
    """The ``rematch_offered`` event body: ``deal`` is the kind (``same``, ``random``,
    ``daily``, ``code``), never a code."""
    return {
        "type": "rematch_offered",
        "room": room,
        "race": race,
        "deal": deal,
        "deadline": deadline,
        "now": now,
        "by": by,
    }


def progress(
    *,
    room: str,
    race: int,
    seat: int,
    on_foundations: int,
    total: int,
    score: int,
    moves: int,
    status: SeatStatus,
    elapsed_ms: int,
) -> ProgressBody:
    """The ``progress`` event body."""
    return {
        "type": "progress",
        "room": room,
        "race": race,
        "seat": seat,
        "on_foundations": on_foundations,
        "total": total,
        "score": score,
        "moves": moves,
        "status": status,
        "elapsed_ms": elapsed_ms,
    }


def player_finished(
    *,
    room: str,
    race: int,
    seat: int,
    status: SeatStatus,
    elapsed_ms: int,
    move_list: str,
    board: BoardView,
    deal: str,
    times_ms: list[int] | None,
    secret_until: int | None = None,
) -> PlayerFinishedBody:
    """The ``player_finished`` event body as stored (the deal code for the finished player
    and for those who may know it)."""
    return {
        "type": "player_finished",
        "room": room,
        "race": race,
        "seat": seat,
        "status": status,
        "elapsed_ms": elapsed_ms,
        "move_list": move_list,
        "board": board,
        "deal": deal,
        "times_ms": times_ms,
        "secret_until": secret_until,
    }


def race_ended(
    *,
    room: str,
    race: int,
    deal: str,
    results: list[ResultRowBody],
    secret_until: int | None = None,
) -> RaceEndedBody:
    """The ``race_ended`` event body as stored (``secret_until``: for the workers)."""
    return {
        "type": "race_ended",
        "room": room,
        "race": race,
        "deal": deal,
        "results": results,
        "secret_until": secret_until,
    }


def race_recorded(
    *, room: str, race: int, game_id: str, ratings: list[RatingChangeBody] | None = None
) -> RaceRecordedBody:
    """The ``race_recorded`` event body (``ratings``: a rated race's rating changes)."""
    return {
        "type": "race_recorded",
        "room": room,
        "race": race,
        "game_id": game_id,
        "ratings": ratings,
    }


def race_record_delayed(*, room: str, race: int) -> RaceRecordDelayedBody:
    """The ``race_record_delayed`` event body."""
    return {"type": "race_record_delayed", "room": room, "race": race}


def stamp_event(seq: int, body: bytes) -> bytes:
    """Put ``seq`` in front of an encoded event body (a JSON object): the stored and sent
    form of a room event, ``{"seq":12,"type":"progress",…}``."""
    return b'{"seq":%d,' % seq + body[1:]


def event_seq(data: bytes) -> int | None:
    """The ``seq`` of a stamped event, or None for anything else (a control message)."""
    if not data.startswith(b'{"seq":'):
        return None
    end = data.index(b",", 7)
    return int(data[7:end])


# --------------------------------------------------------------------- snapshots


class SeatInfoBody(TypedDict, total=False):
    """One seat in a snapshot (the progress keys only while the seat races; the rating
    keys only in a rated room)."""

    seat: int
    name: str
    connected: bool
    rating: int | None
    provisional: bool
    status: SeatStatus
    on_foundations: int
    total: int
    score: int
    moves: int
    elapsed_ms: int | None


class RematchOfferBody(TypedDict):
    """``RematchOffer``: a rematch waiting for the players' answers."""

    race: int
    deal: str
    deadline: int
    by: int


class SnapshotBody(TypedDict):
    """``RoomSnapshot``: everything a client needs to draw a room, as of event ``seq``."""

    room: str
    link: str
    game: str
    options: dict[str, Any]
    host: int | None
    phase: Phase
    race: int
    deal: str | None
    start_at: int | None
    deadline: int | None
    seats: list[SeatInfoBody]
    results: list[ResultRowBody] | None
    seq: int
    now: int
    spectators: int
    daily: bool
    rematch_offer: RematchOfferBody | None
    solo: bool


# --------------------------------------------------------------------- replies


def welcome(
    *, id: int | None, worker: str, max_frame: int, rate: float, burst: int, bots: bool
) -> bytes:
    """Reply to ``hello``."""
    return orjson.dumps(
        {
            "type": "welcome",
            "id": id,
            "v": PROTOCOL_VERSION,
            "worker": worker,
            "max_frame": max_frame,
            "rate": rate,
            "burst": burst,
            "bots": bots,
        }
    )


def joined(
    *,
    id: int | None,
    room: str,
    link: str,
    role: Role,
    seat: int | None = None,
    token: str | None = None,
    key: str | None = None,
    snapshot: SnapshotBody | None = None,
    view: BoardView | None = None,
) -> bytes:
    """Reply to ``create``, ``join`` and ``resume``."""
    return orjson.dumps(
        {
            "type": "joined",
            "id": id,
            "room": room,
            "link": link,
            "role": role,
            "seat": seat,
            "token": token,
            "key": key,
            "snapshot": snapshot,
            "view": view,
        }
    )


def resync(snapshot: SnapshotBody) -> bytes:
    """The missed events are no longer kept: start again from ``snapshot``."""
    return orjson.dumps({"type": "resync", "snapshot": snapshot})


def ack(*, id: int | None, move: str, revealed: list[str], changes: dict[str, Any]) -> bytes:
    """A move was accepted and stored."""
    return orjson.dumps(
        {"type": "ack", "id": id, "move": move, "revealed": revealed, "changes": changes}
    )


def rejected(*, id: int | None, move: str, rule: str, reminder: str) -> bytes:
    """A move was refused: the rule it broke and a reminder of it."""
    return orjson.dumps(
        {"type": "rejected", "id": id, "move": move, "rule": rule, "reminder": reminder}
    )


def error(*, id: int | None, code: str, message: str) -> bytes:
    """A request could not be served."""
    return orjson.dumps({"type": "error", "id": id, "code": code, "message": message})


def ok(id: int | None) -> bytes:
    """A request was done."""
    return orjson.dumps({"type": "ok", "id": id})


def pong(*, id: int | None, now: int) -> bytes:
    """Reply to ``ping`` with the server clock."""
    return orjson.dumps({"type": "pong", "id": id, "now": now})


def identity(
    *,
    id: int | None,
    player: str,
    name: str,
    handle: str | None,
    created_at: int,
    secret: str | None = None,
    recovery_code: str | None = None,
) -> bytes:
    """Reply to the identity requests (the secrets only when new)."""
    return orjson.dumps(
        {
            "type": "identity",
            "id": id,
            "player": player,
            "name": name,
            "handle": handle,
            "created_at": created_at,
            "secret": secret,
            "recovery_code": recovery_code,
        }
    )


def board(*, room: str, seat: int, race: int, view: BoardView) -> bytes:
    """A followed player's board, for spectators."""
    return orjson.dumps({"type": "board", "room": room, "seat": seat, "race": race, "view": view})


# --------------------------------------------------------------------- watching


class LivePlayerBody(TypedDict):
    """A player of a live race (``LivePlayer``)."""

    seat: int
    name: str
    connected: bool
    status: SeatStatus
    on_foundations: int
    total: int
    score: int
    moves: int
    elapsed_ms: int | None


class LiveRoomBody(TypedDict):
    """A race of the live directory (``LiveRoom``)."""

    room: str
    game: str
    phase: Literal["lobby", "running"]
    race: int
    start_at: int | None
    deadline: int | None
    created_at: int
    spectators: int
    spectator_delay: int
    players: list[LivePlayerBody]
    gap: float | None
    boards: str


class FeaturedBody(TypedDict):
    """The featured race of a game (``FeaturedRace``)."""

    game: str
    room: str | None


class ReactionCountBody(TypedDict):
    """A tally of one reaction beside one player (``ReactionCount``)."""

    seat: int | None
    reaction: str
    by: str
    n: int


def live_rooms(
    *,
    sort: str,
    game: str | None,
    total: int,
    now: int,
    rooms: bytes,
    featured: list[FeaturedBody],
) -> bytes:
    """The live directory for a subscription; ``rooms`` is the JSON array of the
    :class:`LiveRoomBody` entries, encoded already (each entry is kept encoded)."""
    head = orjson.dumps(
        {
            "type": "live_rooms",
            "sort": sort,
            "game": game,
            "total": total,
            "now": now,
            "featured": featured,
        }
    )
    return head[:-1] + b',"rooms":' + rooms + b"}"


def boards_open(*, room: str) -> bytes:
    """The room's hidden boards may be shown now (its tournament round is over)."""
    return orjson.dumps({"type": "boards_open", "room": room})


def reactions(*, room: str, counts: list[ReactionCountBody]) -> bytes:
    """Reactions sent in a room lately, tallied."""
    return orjson.dumps({"type": "reactions", "room": room, "reactions": counts})


# --------------------------------------------------------------------- tournaments


def tournament_reply(
    *, id: int | None, page: dict[str, Any], you: dict[str, Any], seq: int
) -> bytes:
    """Reply to ``tournament_create``, ``tournament_open`` and ``tournament_join``."""
    return orjson.dumps({"type": "tournament", "id": id, "page": page, "you": you, "seq": seq})


def tournament_event(*, tournament: str, seq: int, kind: str, data: dict[str, Any]) -> bytes:
    """Something happened in a tournament."""
    return orjson.dumps(
        {
            "type": "tournament_event",
            "tournament": tournament,
            "seq": seq,
            "kind": kind,
            "data": data,
        }
    )


def tournament_standings(
    *,
    tournament: str,
    version: int,
    players: int,
    top: bytes,
    you: dict[str, Any] | None,
    live: dict[str, Any] | None,
) -> bytes:
    """The standings pushed to one connection: ``top`` is encoded once for many (JSON
    bytes of the rows), ``you`` and ``live`` are the connection's own."""
    head = orjson.dumps(
        {
            "type": "tournament_standings",
            "tournament": tournament,
            "version": version,
            "players": players,
            "you": you,
            "live": live,
        }
    )
    return head[:-1] + b',"top":' + top + b"}"


def tournament_seat(
    *,
    tournament: str,
    round: int,
    room: str,
    seat: int,
    token: str,
    start_at: int,
    deadline: int,
    now: int,
) -> dict[str, Any]:
    """A participant's seat in a round (a dict: it is sent alone, or inside ``you``)."""
    return {
        "type": "tournament_seat",
        "tournament": tournament,
        "round": round,
        "room": room,
        "seat": seat,
        "token": token,
        "start_at": start_at,
        "deadline": deadline,
        "now": now,
    }


# --------------------------------------------------------------------- quick play


class PoolCountBody(TypedDict):
    """``PoolCount``: how many seek in one pool."""

    pool: str
    game: str
    players: int
    time_limit: int | None
    rated: bool
    seeking: int


def seeking(
    *,
    id: int | None,
    pool: str,
    game: str,
    players: int,
    time_limit: int | None,
    rated: bool,
    since: int,
    offer_at: int,
    now: int,
    rating: int | None,
    provisional: bool,
) -> bytes:
    """Reply to ``seek``: the player waits in ``pool``."""
    return orjson.dumps(
        {
            "type": "seeking",
            "id": id,
            "pool": pool,
            "game": game,
            "players": players,
            "time_limit": time_limit,
            "rated": rated,
            "since": since,
            "offer_at": offer_at,
            "now": now,
            "rating": rating,
            "provisional": provisional,
        }
    )


def seek_offer(*, pool: str, offers: list[str]) -> bytes:
    """What a player who has waited may race instead."""
    return orjson.dumps({"type": "seek_offer", "pool": pool, "offers": offers})


def pool_counts(pools: list[PoolCountBody]) -> bytes:
    """How many seek in each pool."""
    return orjson.dumps({"type": "pool_counts", "pools": pools})
