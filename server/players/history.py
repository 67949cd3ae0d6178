"""History: every finished race goes to the records store, and the HTTP routes read it back.

When a race ends (the one worker whose ``EndIfDone`` ended it), its record is built from
the room — results, the racers' names and identities as the race started — and every
racer's move log with the server time of each move. It is first kept in the store's
pending writes (``pending.keep``), then handed to the records writer (:class:`RaceWriter`,
batched, off the event loop); once the database has it, the kept copy is dropped. If the
worker dies in between, any worker finds the kept copy (``pending.due``) and writes it
again: the store takes a race once (its natural key), so a retry never duplicates it, and
one transaction writes a race whole.

Once the database has the race, the room is told where its replay is: a
``race_recorded`` room event with the race's public id (the results a player is looking at
link to ``/g/ID``) and, for a rated race, each racer's new rating and its change (written
with the race, in its transaction), unless the room has moved on to another race or is gone.

The database may be away for a while: the writer tries again until it is back, holding at
most ``records_queue`` races in memory (the rest wait in the backend, where any worker's
retry loop finds them). The room of a race whose first write could not reach the database
is told so (``race_record_delayed``); ``race_recorded`` follows once it is written. The
records database's health — every call of this worker's store and of its writer, probed
once a second while it is down — is ``/healthz``'s and ``samedeal_records_up``'s; a
record read it cannot answer is ``503 records_unavailable``.

Routes (``protocol.api`` models; ``protocol/openapi.json``): ``GET /api/games/{id}``,
``GET /api/games/{id}/seats/{seat}/moves`` (plain text, ``samedeal replay DEAL -`` reads
it), ``GET /api/games/{id}/seats/{seat}/boards`` (each board of one racer's game, computed
by the engine: the browser's replay page has none), ``GET /api/players/{handle}``. Only
finished races are stored, so a replay never shows a race still being played.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import datetime as dt
import logging
import re
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import orjson
from websockets.http11 import Response

from engine import GameError, new_game, replay
from protocol import frames
from protocol.api import RACE_ID_PATTERN, SeatBoards
from protocol.frames import RatingChangeBody

from ..codes import display_code
from ..config import now_ms
from ..context import Context
from ..daily.challenge import Daily, day_start_ms
from ..edge.http import HttpRequest, error_response, json_response, text_response
from ..ratings.rules import is_rated
from ..records.models import BadRecord, RaceRecord, RecordsUnavailable, SeatRecord, StoredRace
from ..records.views import game_replay, player_page, rating_change, seat_moves_text
from ..records.writer import RaceWriter
from ..rooms.room import Events, ProgressState, RoomState
from ..rooms.view import NOBODY, BoardFacts, boards_shown
from ..store.errors import StoreUnavailable
from ..store.health import HealthWatch
from ..store.rooms import Snapshot, UnknownRoom

__all__ = [
    "History",
    "TellRecordDelayed",
    "TellRecorded",
    "record_from_json",
    "record_to_json",
    "seat_boards",
]

logger = logging.getLogger("samedeal.server")

_RACE_ID = re.compile(RACE_ID_PATTERN)


def record_to_json(record: RaceRecord) -> bytes:
    """A race record as JSON (kept in the store's pending writes until it is written)."""
    return orjson.dumps(dataclasses.asdict(record))


def record_from_json(data: bytes) -> RaceRecord:
    """The race record :func:`record_to_json` wrote."""
    raw: dict[str, Any] = orjson.loads(data)
    seats = tuple(
        SeatRecord(
            **{**s, "actions": tuple(s["actions"]), "action_times": tuple(s["action_times"])}
        )
        for s in raw.pop("seats")
    )
    return RaceRecord(**raw, seats=seats)


def _pending_key(record: RaceRecord) -> str:
    return f"race:{record.room}:{record.room_created_at}:{record.race}"


@dataclass(frozen=True, slots=True)
class TellRecorded:
    """A room update: race ``race`` of the room made at ``created_at`` is recorded as
    ``game_id`` (with its racers' ``ratings`` changes when it was rated: the seats of the
    racers still seated show their new rating); value: whether the room was told
    (``race_recorded``). A room whose code now names another room, or
    that has started a later race, is left alone."""

    created_at: int
    race: int
    game_id: str
    ratings: tuple[RatingChangeBody, ...] | None = None

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        if room.created_at != self.created_at or room.race != self.race:
            return [], False
        for change in self.ratings or ():
            # the seats show the ratings as they are now (a snapshot, the next race)
            seat = room.seat(change["seat"])
            if seat is not None and seat.player_id == change["player"]:
                seat.rating, seat.provisional = change["rating"], change["provisional"]
        event = frames.race_recorded(
            room=display_code(room.code),
            race=self.race,
            game_id=self.game_id,
            ratings=list(self.ratings) if self.ratings is not None else None,
        )
        return [event], True


@dataclass(frozen=True, slots=True)
class TellRecordDelayed:
    """A room update: race ``race`` of the room made at ``created_at`` could not be
    recorded yet (``race_record_delayed``); value: whether the room was told. Left alone
    as :class:`TellRecorded` leaves a room."""

    created_at: int
    race: int

    def __call__(self, room: RoomState, progress: dict[int, ProgressState]) -> tuple[Events, bool]:
        if room.created_at != self.created_at or room.race != self.race:
            return [], False
        return [frames.race_record_delayed(room=display_code(room.code), race=self.race)], True


def seat_boards(stored: StoredRace, seat: int) -> SeatBoards | None:
    """Every board of one racer's game (``None``: no such seat), replayed by the engine
    from the deal and the racer's actions. Raises :class:`engine.GameError` if an action
    does not replay (a record the engine cannot follow)."""
    record = stored.record
    racer = next((s for s in record.seats if s.seat == seat), None)
    if racer is None:
        return None
    game = new_game(record.deal)
    start = game.player_view()
    moves: list[str] = []
    changes: list[dict[str, Any]] = []
    for action in racer.actions:
        outcome = game.push(action)
        moves.append(str(outcome.move))
        changes.append(game.view_changes(outcome.move))
    return SeatBoards.model_validate(
        {
            "id": stored.race_id,
            "game": record.game,
            "seat": seat,
            "start": start,
            "moves": moves,
            "changes": changes,
        }
    )


def _seat_number(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) < 5 else None


class History:
    """The history layer of a worker."""

    def __init__(self, ctx: Context, daily: Daily) -> None:
        self.ctx = ctx
        self.daily = daily
        self.writer: RaceWriter | None = None
        #: the records database as this worker last found it (its reads, its writer)
        self.health = HealthWatch("records database", [])
        self._trouble: dict[str, str | None] = {}
        #: races handed to the writer and not settled (a retry does not queue them twice)
        self._in_flight: set[str] = set()
        #: those of them whose room was not told yet that they wait
        self._untold: set[str] = set()
        ctx.http.get("/api/games/{race_id}", self._game)
        ctx.http.get("/api/games/{race_id}/seats/{seat}/moves", self._moves)
        ctx.http.get("/api/games/{race_id}/seats/{seat}/boards", self._boards)
        ctx.http.get("/api/players/{handle}", self._player)
        ctx.http.on_error(RecordsUnavailable, _unavailable)

    async def start(self) -> None:
        """Start the records writer (if the worker keeps records), the retry loop and the
        health probe."""
        records, config = self.ctx.records, self.ctx.config
        if records is None or config.records_url is None:
            return
        self.ctx.health["records database"] = lambda: self.health.state
        records.db.observers.append(lambda reason: self._seen("reads", reason))
        writer = RaceWriter(
            config.records_url,
            max_queued=config.records_queue,
            observer=lambda reason: self._seen("writer", reason),
            on_delay=self._delayed,
        )
        await writer.start()
        self.writer = writer
        self.ctx.tasks.spawn(self._retry_loop(), "records retry")
        self.ctx.tasks.spawn(self._probe_loop(), "records probe")

    async def close(self, timeout: float) -> None:
        """Stop the writer: what it holds is written for ``timeout`` seconds at most, not
        at all while the database cannot be reached (it is kept in the backend)."""
        if self.writer is not None:
            await self.writer.close(timeout)

    def _seen(self, source: str, reason: str | None) -> None:
        """A call of ``source`` (the worker's reads, its writer) reached the database, or
        could not (``reason``): down while either could not."""
        self._trouble[source] = reason
        trouble = next((r for r in self._trouble.values() if r is not None), None)
        if trouble is None:
            self.health.up()
        else:
            self.health.down(trouble)
        self.ctx.metrics.records_up = int(self.health.state.ok)

    async def _probe_loop(self) -> None:
        """While the database is down, try it once a second (nobody else may call it:
        ``/healthz`` would say it is away long after it is back)."""
        assert self.ctx.records is not None
        while True:
            await asyncio.sleep(1.0)
            if not self.health.state.ok:
                with contextlib.suppress(RecordsUnavailable):
                    await self.ctx.records.ping()

    # ------------------------------------------------------------------ recording

    async def race_ended(self, room_code: str, snap: Snapshot) -> None:
        """Record the race that just ended in ``snap`` (called once per race). A tournament
        round's races are recorded once the round is over (their replays tell the deal):
        the tournament layer calls :meth:`record` then."""
        if snap.room.tournament is None:
            await self.record(room_code, snap)

    async def record(self, room_code: str, snap: Snapshot) -> None:
        """Keep the record of the race ended in ``snap`` and hand it to the writer (a race
        written twice is written once)."""
        if self.writer is None:
            return
        record = await self.build(room_code, snap)
        if record is None:
            return
        key = _pending_key(record)
        try:
            await self.ctx.store.pending.keep(key, record_to_json(record))
        except StoreUnavailable:
            logger.warning("race not kept for its record room=%s race=%s", room_code, record.race)
        self._submit(key, record, first=True)

    async def build(self, room_code: str, snap: Snapshot) -> RaceRecord | None:
        """The record of the room's last race, from the room and the racers' move logs."""
        room = snap.room
        if room.phase != "ended" or not room.results:
            return None
        store = self.ctx.store
        seats = []
        for row in room.results:
            seat = row["seat"]
            moves = await store.rooms.moves(room_code, room.race, seat)
            times = await store.rooms.times(room_code, room.race, seat)
            try:
                deck_turns = replay(room.deal, moves).deck_turns
            except GameError:
                deck_turns = 0
            seats.append(
                SeatRecord(
                    seat=seat,
                    name=row["name"],
                    status=row["status"],  # type: ignore[arg-type]
                    rank=row["rank"],
                    score=row["score"],
                    moves=row["moves"],
                    on_foundations=row["on_foundations"],
                    elapsed_ms=row["elapsed_ms"],
                    actions=tuple(moves),
                    action_times=tuple(t if t is not None else 0 for t in times),
                    player_id=room.racer_ids.get(seat),
                    deck_turns=deck_turns,
                )
            )
        rated = is_rated(room)
        return RaceRecord(
            room=room.code,
            room_created_at=room.created_at,
            race=room.race,
            game=room.game,
            deal=room.deal,
            started_at=room.start_at or room.created_at,
            ended_at=now_ms(),
            seats=tuple(seats),
            # races on a day's deal, tournament rounds and rated races are kept for good
            casual=room.daily_day is None and room.tournament is None and not rated,
            daily_day=room.daily_day,
            rated=rated,
        )

    def _submit(self, key: str, record: RaceRecord, *, first: bool = False) -> None:
        """Hand a kept record to the writer (``first``: the race just ended here, its room
        not told anything yet), unless it holds it already or is full."""
        writer = self.writer
        assert writer is not None
        if self.ctx.tasks.closed or key in self._in_flight:
            return  # stopping (the kept copy is written later), or queued already
        future = writer.submit(record)
        self.ctx.metrics.records_queued = writer.pending
        if future is None:
            # the writer holds as many races as it may (the database is away): this one
            # waits in the backend, where a retry loop finds it
            if first:
                self._tell_delayed(record)
            return
        self._in_flight.add(key)
        if first:
            self._untold.add(key)

        def done(f: asyncio.Future[str]) -> None:
            self._in_flight.discard(key)
            self._untold.discard(key)
            self.ctx.metrics.records_queued = writer.pending
            if f.cancelled():
                return
            error = f.exception()
            if isinstance(error, BadRecord):
                # refused for good (the writer logged why): trying again would not help
                self.ctx.tasks.spawn(self._drop(key), "record refused")
            if error is not None:
                return  # kept: written again later by whoever finds it due
            self.ctx.tasks.spawn(self._drop(key), "record written")
            if record.daily_day is None:  # a daily's replay opens only once its day is over
                self.ctx.tasks.spawn(self._tell(record, f.result()), "race recorded")

        future.add_done_callback(done)

    def _delayed(self, record: RaceRecord) -> None:
        """The writer could not reach the database with this race (on its first try)."""
        key = _pending_key(record)
        if key in self._untold:
            self._untold.discard(key)
            self._tell_delayed(record)

    def _tell_delayed(self, record: RaceRecord) -> None:
        if record.daily_day is not None:
            return  # race_recorded is not sent for these either
        update = TellRecordDelayed(record.room_created_at, record.race)

        async def tell() -> None:
            with contextlib.suppress(UnknownRoom, StoreUnavailable):
                await self.ctx.store.rooms.update(record.room, update)

        self.ctx.tasks.spawn(tell(), "race record delayed")

    async def _tell(self, record: RaceRecord, game_id: str) -> None:
        """Tell the race's room where its replay is, and how the ratings changed
        (``race_recorded``)."""
        ratings = None
        if record.rated and self.ctx.records is not None:
            try:
                changes = await self.ctx.records.ratings.of_race(game_id)
            except Exception as exc:  # the changes are on the replay (GET /api/games/ID)
                logger.warning("rating changes not read race=%s: %s", game_id, exc)
            else:
                ratings = tuple(rating_change(c) for c in changes)
        # nobody left to tell, or the store is away: the player page links the race too
        with contextlib.suppress(UnknownRoom, StoreUnavailable):
            await self.ctx.store.rooms.update(
                record.room, TellRecorded(record.room_created_at, record.race, game_id, ratings)
            )

    async def _drop(self, key: str) -> None:
        try:
            await self.ctx.store.pending.drop(key)
        except StoreUnavailable:
            self.ctx.when_store_is_back(lambda: self.ctx.store.pending.drop(key), "drop")

    async def _retry_loop(self) -> None:
        """Write again the records a worker kept and did not confirm (it died, or the
        database refused for a while)."""
        retry_after = self.ctx.config.records_retry_after
        while True:
            await asyncio.sleep(retry_after / 4)
            try:
                due = await self.ctx.store.pending.due(retry_after)
            except StoreUnavailable:
                continue
            except Exception:
                logger.exception("could not read the records to write again")
                continue
            for key, data in due:
                try:
                    record = record_from_json(data)
                except Exception:
                    logger.exception("a kept record does not read: dropped key=%s", key)
                    await self._drop(key)
                    continue
                logger.info("writing a kept record again key=%s", key)
                self._submit(key, record)

    # ------------------------------------------------------------------ HTTP

    async def _game(self, request: HttpRequest) -> Response:
        stored = await self._stored(request.params["race_id"])
        if isinstance(stored, Response):
            return stored
        records = self.ctx.records
        ratings = []
        if stored.record.rated and records is not None:
            ratings = await records.ratings.of_race(stored.race_id)
        return json_response(game_replay(stored, ratings))

    async def _moves(self, request: HttpRequest) -> Response:
        stored = await self._stored(request.params["race_id"])
        if isinstance(stored, Response):
            return stored
        seat = _seat_number(request.params["seat"])
        text = seat_moves_text(stored, seat) if seat is not None else None
        if text is None:
            return _unknown_seat()
        return text_response(text)

    async def _boards(self, request: HttpRequest) -> Response:
        stored = await self._stored(request.params["race_id"])
        if isinstance(stored, Response):
            return stored
        seat = _seat_number(request.params["seat"])
        try:
            boards = seat_boards(stored, seat) if seat is not None else None
        except GameError as exc:
            logger.warning("a recorded game does not replay race=%s: %s", stored.race_id, exc)
            return error_response(
                HTTPStatus.INTERNAL_SERVER_ERROR, "bad_record", "this game does not replay"
            )
        if boards is None:
            return _unknown_seat()
        return json_response(boards)

    async def _player(self, request: HttpRequest) -> Response:
        records = self.ctx.records
        handle = request.params["handle"]
        if records is None:
            return _no_records()
        if len(handle) > 64:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_handle", "not a handle")
        try:
            limit = min(100, max(1, int(request.query.get("limit", "20"))))
            offset = max(0, int(request.query.get("offset", "0")))
        except ValueError:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_query", "limit and offset: numbers")
        profile = await records.profile(handle, limit=limit, offset=offset)
        if profile is None:
            return error_response(
                HTTPStatus.NOT_FOUND, "unknown_player", "no player has this handle"
            )
        today = self.daily.today().isoformat()
        daily = await records.daily.stats(profile.player.player_id, today)
        ratings = await records.ratings.standings(profile.player.player_id)
        return json_response(player_page(profile, today, daily, ratings))

    async def _stored(self, race_id: str) -> Any:
        records = self.ctx.records
        if records is None:
            return _no_records()
        if not _RACE_ID.match(race_id):
            return error_response(HTTPStatus.BAD_REQUEST, "bad_game_id", "not a game id")
        stored = await records.race(race_id)
        if stored is None:
            return error_response(
                HTTPStatus.NOT_FOUND, "unknown_game", "no finished game has this id"
            )
        if boards_shown(NOBODY, _recorded_facts(stored.record), now_ms()) == "progress":
            return error_response(
                HTTPStatus.FORBIDDEN,
                "not_yet",
                "a game on the deal of the day opens when the day is over (00:00 UTC)",
            )
        return stored


def _unavailable(exc: BaseException) -> Response:
    return error_response(
        HTTPStatus.SERVICE_UNAVAILABLE,
        RecordsUnavailable.error_code,
        RecordsUnavailable.for_players,
    )


def _recorded_facts(record: RaceRecord) -> BoardFacts:
    """A recorded race as the board rule reads it: over, and — on the day's deal — secret
    until its day ends (a round's races are recorded once the round is over)."""
    day = record.daily_day
    until = day_start_ms(dt.date.fromisoformat(day) + dt.timedelta(days=1)) if day else None
    return BoardFacts(
        phase="ended", secret_until=until, tournament=False, delay=0, spectator_boards=True
    )


def _no_records() -> Response:
    return error_response(HTTPStatus.NOT_FOUND, "no_records", "this server keeps no records")


def _unknown_seat() -> Response:
    return error_response(HTTPStatus.NOT_FOUND, "unknown_seat", "no such seat in this game")
