"""What a room's spectators see: the room as they are shown it, kept up to date by its
events and released to them after the room's spectator delay.

A worker keeps one :class:`Feed` per room it has (``LocalRoom.feed``). Every event of the
room reaches it (:meth:`Feed.take`); with no delay each is applied and released at once,
with a delay of ``D`` seconds each is released ``D`` seconds after the worker received it,
in ``seq`` order. Whatever a spectator is sent comes out of this one queue, or is judged by
its clock: the room's events (:mod:`server.rooms`), the followed boards
(:mod:`server.spectate`, which replays the move log up to the same moment), reactions and
the live directory (:mod:`server.watching`). So a spectator's boards, player list,
finishes and results agree with each other, and none is sent earlier than the delay.

A spectator joining a delayed room gets the feed's snapshot: the room as it was ``D``
seconds ago. A worker that has just subscribed to the room did not see those seconds, so
the feed starts from the store (:meth:`Feed.load`): the snapshot rolled back ``D`` seconds
by the times in the move logs (:func:`rolled_back`), and the events the store still keeps
from those seconds queued for their time + ``D``.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from engine import GameError, replay
from protocol.frames import SnapshotBody

from ..config import now_ms
from ..store.errors import StoreUnavailable
from ..store.rooms import RoomStore, Snapshot, entry_move, entry_time, recent_events
from .room import FINAL_STATUSES, RoomState
from .view import snapshot

__all__ = [
    "LOADED",
    "EndedEarly",
    "Feed",
    "Release",
    "apply_event",
    "event_time",
    "rolled_back",
    "round_over",
    "secret_for_race",
    "secret_of",
]

logger = logging.getLogger("samedeal.server")

Event = dict[str, Any]
EndedEarly = tuple[int, int]
"""A tournament round that ended before its deadline, as a room's workers are told it: its
room's race, and when the round ended (server ms) — the secret of that race's deal ends
then, though its events carry the deadline (:func:`secret_of`)."""
Release = Callable[["Feed", Event | None, bytes], None]
"""Called with each released item: the event (None for a frame that is not one) and its
bytes; and once with :data:`LOADED` and no bytes when the feed has loaded."""

LOADED: Event = {"type": "loaded"}
"""The pseudo-event released when a feed has loaded (the layers may read it then)."""

_TOTALS = {"easy-harp": 104}
_TIMED = frozenset({"race_starting", "progress", "player_finished", "race_ended"})


def _total(game: str) -> int:
    return _TOTALS.get(game, 52)


def secret_of(event: Event, ended: EndedEarly | None) -> int | None:
    """Until when (server ms) the deal of a deal event (``race_starting``,
    ``player_finished``, ``race_ended``) is secret: as stored with it for the workers
    (``secret_until``: the day's end, a round's deadline), or — its race a round that
    ``ended`` early — the round's end."""
    return secret_for_race(event.get("race"), event.get("secret_until"), ended)


def secret_for_race(race: int | None, stored: int | None, ended: EndedEarly | None) -> int | None:
    """Until when (server ms) the deal of race ``race`` is secret: ``stored`` (the day's end,
    a round's deadline), or the round's end if its round ``ended`` early."""
    if stored is None or ended is None or race != ended[0]:
        return stored if stored is None else int(stored)
    return min(int(stored), ended[1])


def round_over(room: RoomState, now: int) -> EndedEarly | None:
    """A stored tournament round's room whose secret is over at ``now``: its race and the
    round's end, which may be before the deadline its events carry; None for any other."""
    until = room.secret_until
    if room.tournament is None or until is None or now < until:
        return None
    return room.race, until


def apply_event(body: SnapshotBody, event: Event, ended: EndedEarly | None = None) -> None:
    """Change a spectator's snapshot ``body`` as ``event`` tells (its ``seq`` is the
    caller's to keep; ``ended``: the room's round ended early, :func:`secret_of`)."""
    kind = event.get("type")
    seats = body["seats"]
    if kind == "seat":
        n = event["seat"]
        found = next((s for s in seats if s["seat"] == n), None)
        if event["left"]:
            body["seats"] = [s for s in seats if s["seat"] != n]
        elif found is None:
            seats.append({"seat": n, "name": event["name"], "connected": event["connected"]})
            seats[-1]["status"] = "waiting"
            seats.sort(key=lambda s: s["seat"])
        else:
            found["name"], found["connected"] = event["name"], event["connected"]
        if event["host"]:
            body["host"] = n
    elif kind == "spectators":
        body["spectators"] = event["count"]
    elif kind == "race_starting":
        racing = set(event["seats"])
        _fields(body).update(
            phase="running",
            race=event["race"],
            start_at=event["start_at"],
            deadline=event["deadline"],
            deal=None,
        )
        total = _total(body["game"])
        for s in seats:
            for key in ("on_foundations", "total", "score", "moves", "elapsed_ms"):
                _fields(s).pop(key, None)
            if s["seat"] in racing:
                _fields(s).update(status="playing", on_foundations=0, total=total, score=0, moves=0)
                s["elapsed_ms"] = None
            else:
                s["status"] = "waiting"
    elif kind == "progress" and event["race"] == body["race"]:
        for s in seats:
            if s["seat"] == event["seat"]:
                _fields(s).update(
                    status=event["status"],
                    on_foundations=event["on_foundations"],
                    total=event["total"],
                    score=event["score"],
                    moves=event["moves"],
                )
                final = event["status"] in FINAL_STATUSES
                s["elapsed_ms"] = event["elapsed_ms"] if final else None
    elif kind == "player_finished" and event["race"] == body["race"]:
        for s in seats:
            if s["seat"] == event["seat"]:
                s["status"], s["elapsed_ms"] = event["status"], event["elapsed_ms"]
    elif kind == "race_ended" and event["race"] == body["race"]:
        secret_until = secret_of(event, ended)  # the day's deal, a round: secret until then
        secret = secret_until is not None and now_ms() < secret_until
        _fields(body).update(
            phase="ended", results=event["results"], deal=None if secret else event["deal"]
        )


def event_time(event: Event, start_at: int | None) -> int | None:
    """When (server ms) an event happened, as its content tells: ``race_starting`` its
    ``now``, a ``progress`` or ``player_finished`` the race's start + ``elapsed_ms``, a
    ``race_ended`` its last finisher's time; None for the others (and when unknown)."""
    kind = event.get("type")
    if kind == "race_starting":
        return int(event["now"])
    if start_at is None:
        return None
    if kind in ("progress", "player_finished"):
        return start_at + int(event["elapsed_ms"])
    if kind == "race_ended":
        times = [r["elapsed_ms"] for r in event["results"] if r.get("elapsed_ms") is not None]
        return start_at + max(times) if times else None
    return None


def rolled_back(
    snap: Snapshot, logs: dict[int, list[str]], cutoff: int, begun: int | None
) -> SnapshotBody:
    """A spectator's snapshot of the room as it was at ``cutoff`` (server ms), from the
    room now (``snap``) and its racers' move logs with their times (``logs``: seat →
    entries). ``begun``: when the current race was started (its ``race_starting``), if
    known. Seats and the spectator count are today's (they tell nothing of the race)."""
    room, progress = snap.room, snap.progress
    body = snapshot(room, progress, snap.seq, cutoff, "", viewer=None)
    start = room.start_at
    if room.race == 0 or start is None:
        return body
    if (begun if begun is not None else start) > cutoff:
        # the race had not been started then: the room waited for it
        ended = room.phase == "ended"
        _fields(body).update(
            phase="ended" if room.race > 1 else "lobby",
            race=room.race - 1,
            start_at=None,
            deadline=None,
            deal=None,
            # the results kept are this race's once it has ended: the last race's are gone
            results=None if ended else room.results,
        )
        body["seats"] = [
            {"seat": s["seat"], "name": s["name"], "connected": s["connected"], "status": "waiting"}
            for s in body["seats"]
        ]
        return body
    if room.phase == "ended":
        finish = [r["elapsed_ms"] for r in room.results or [] if r["elapsed_ms"] is not None]
        if not finish or start + max(finish) > cutoff:
            _fields(body).update(phase="running", results=None, deal=None)
    at = cutoff - start
    for s in body["seats"]:
        p = progress.get(s["seat"])
        if p is None or p.race != room.race:
            continue
        if p.status in FINAL_STATUSES and start + (p.elapsed_ms or 0) <= cutoff:
            continue
        entries = logs.get(s["seat"], [])
        moves = [entry_move(e) for e in entries if (entry_time(e) or 0) <= at]
        try:
            game = replay(room.deal, moves)
        except GameError:
            logger.warning("feed: log does not replay room=%s seat=%s", room.code, s["seat"])
            continue
        _fields(s).update(
            status="playing" if s["connected"] else "disconnected",
            on_foundations=game.on_foundations,
            total=game.total,
            score=game.score,
            moves=game.moves,
        )
        s["elapsed_ms"] = max(0, at)
    return body


@dataclass(slots=True)
class _Item:
    due: float  # loop time
    seq: int | None
    event: Event | None
    data: bytes


class Feed:
    """One worker's spectators' view of a room, and the queue that delays it."""

    def __init__(self, room_code: str, release: Release) -> None:
        self.room_code = room_code
        self._release = release
        #: the room as spectators are shown it now (None until loaded)
        self.body: SnapshotBody | None = None
        #: the last event applied to ``body``
        self.seq = 0
        #: the room's spectator delay, seconds
        self.delay = 0
        self.created_at = 0
        #: the deal code and racers of ``body``'s race (for the followed boards)
        self.deal = ""
        self.participants: list[int] = []
        #: racing seat → the race time (ms) up to which its moves have been shown: the
        #: ``elapsed_ms`` of its last progress released (a followed board replays no
        #: later move, so a board is never ahead of the player list)
        self.shown: dict[int, int] = {}
        #: the room's round ended before its deadline (:meth:`end_secret`)
        self.ended: EndedEarly | None = None
        self.loaded = asyncio.Event()
        self._taken = 0  # the last event queued
        self._early: list[tuple[float, int, Event, bytes]] = []
        self._queue: deque[_Item] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self.closed = False

    # ------------------------------------------------------------------ loading

    async def load(self, rooms: RoomStore) -> None:
        """Start from the store (see the module's docstring); events taken meanwhile are
        kept and applied after. Raises what the store raises (nothing is started then:
        call it again)."""
        snap = await rooms.snapshot(self.room_code)
        if self.closed:
            return
        if snap is None:  # the room is gone: nothing to show
            self.loaded.set()
            return
        self.delay = snap.room.options.spectator_delay
        self.created_at = snap.room.created_at
        now = now_ms()
        self.ended = self.ended or round_over(snap.room, now)
        queued: list[_Item] = []
        if not self.delay:
            body = snapshot(snap.room, snap.progress, snap.seq, now, "", viewer=None)
        else:
            body, queued = await self._delayed_start(rooms, snap, now)
        if not self.closed:
            self._start(snap, body, queued)

    async def _delayed_start(
        self, rooms: RoomStore, snap: Snapshot, now: int
    ) -> tuple[SnapshotBody, list[_Item]]:
        room = snap.room
        cutoff = now - self.delay * 1000
        logs = {}
        if room.race and room.phase != "lobby":
            for seat in room.participants:
                logs[seat] = await rooms.log(self.room_code, room.race, seat)
        kept = await recent_events(rooms, self.room_code, snap.seq)
        begun = None
        queued = []
        clock = asyncio.get_running_loop().time()
        for data in kept:
            event = _loads(data)
            seq = int(event["seq"])
            if seq > snap.seq or event.get("type") not in _TIMED:
                continue
            if event["type"] == "race_starting" and event["race"] == room.race:
                begun = int(event["now"])
            when = event_time(event, room.start_at if event.get("race") == room.race else None)
            if when is not None and when > cutoff:
                queued.append(_Item(clock + (when - cutoff) / 1000, seq, event, data))
        body = rolled_back(snap, logs, cutoff, begun)
        start = body["start_at"]
        if start is not None and body["race"] == room.race:
            # the rolled-back room shows every move made before the cutoff
            self.shown = dict.fromkeys(room.participants, cutoff - start)
        queued.sort(key=lambda item: item.seq or 0)
        return body, queued

    def _start(self, snap: Snapshot, body: SnapshotBody, queued: list[_Item]) -> None:
        room = snap.room
        self.body = body
        race = body["race"]
        self.deal = room.race_deals[race - 1] if 0 < race <= len(room.race_deals) else room.deal
        self.participants = list(room.participants) if race == room.race else []
        self.seq = (queued[0].seq or 1) - 1 if queued else snap.seq
        self._taken = snap.seq
        self._queue.extend(queued)
        early, self._early = self._early, []
        for received, seq, event, data in early:
            self._take(seq, event, data, received)
        self.loaded.set()
        self._arm()
        self._release(self, LOADED, b"")

    # ------------------------------------------------------------------ events

    def take(self, seq: int, event: Event, data: bytes) -> None:
        """An event of the room, as received: applied and released at once, or queued for
        the delay."""
        if self.closed:
            return
        now = asyncio.get_running_loop().time()
        if not self.loaded.is_set():
            self._early.append((now, seq, event, data))
            return
        self._take(seq, event, data, now)
        self._arm()

    def _take(self, seq: int, event: Event, data: bytes, received: float) -> None:
        if seq <= self._taken:
            return
        self._taken = seq
        if self.delay:
            self._queue.append(_Item(received + self.delay, seq, event, data))
        else:
            self._apply(seq, event)
            self._release(self, event, data)

    def push(self, data: bytes) -> None:
        """A frame for the spectators that is not a room event (a reaction): sent after the
        delay like the events around it."""
        if self.closed:
            return
        if not self.delay:
            self._release(self, None, data)
            return
        self._queue.append(_Item(asyncio.get_running_loop().time() + self.delay, None, None, data))
        self._arm()

    def _apply(self, seq: int, event: Event) -> None:
        self.seq = seq
        if self.body is None:
            return
        apply_event(self.body, event, self.ended)
        kind = event.get("type")
        if kind == "progress" and event["race"] == self.body["race"]:
            self.shown[event["seat"]] = int(event["elapsed_ms"])
        elif kind == "race_starting":
            self.deal = event.get("deal") or self.deal
            self.participants = list(event["seats"])
            self.shown = {}

    def _arm(self) -> None:
        if self._timer is not None or not self._queue or self.closed:
            return
        self._timer = asyncio.get_running_loop().call_at(self._queue[0].due, self._fire)

    def _fire(self) -> None:
        self._timer = None
        now = asyncio.get_running_loop().time()
        while self._queue and self._queue[0].due <= now and not self.closed:
            item = self._queue.popleft()
            try:
                if item.event is not None and item.seq is not None:
                    self._apply(item.seq, item.event)
                self._release(self, item.event, item.data)
            except Exception:
                logger.exception("feed: could not release an item room=%s", self.room_code)
        self._arm()

    def end_secret(self, ended: EndedEarly) -> None:
        """The room's round ended early (``ended``): the deal of the race the spectators are
        shown is told from then — now, if they are shown it has ended (its ``race_ended``
        hid the deal), else with the ``race_ended`` still to come."""
        self.ended = ended
        body = self.body
        if body is not None and body["race"] == ended[0] and body["phase"] == "ended":
            body["deal"] = self.deal

    # ------------------------------------------------------------------ reading

    async def wait_loaded(self, timeout: float = 10.0) -> None:
        """Wait until loaded; :class:`StoreUnavailable` when that takes longer than
        ``timeout`` (the store cannot be reached: the feed is loaded once it is back)."""
        try:
            await asyncio.wait_for(self.loaded.wait(), timeout)
        except TimeoutError:
            raise StoreUnavailable("the room's spectators' view is not loaded yet") from None

    def spectator_snapshot(self, now: int, link: str) -> SnapshotBody | None:
        """A copy of the spectators' snapshot, to send (None until loaded)."""
        if self.body is None:
            return None
        body: SnapshotBody = {
            **self.body,
            "seats": [dict(s) for s in self.body["seats"]],  # type: ignore[misc]
            "seq": self.seq,
            "now": now,
            "link": link,
        }
        return body

    def close(self) -> None:
        """Stop: nothing more is released."""
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._queue.clear()
        self._early.clear()


def _fields(typed: Any) -> dict[str, Any]:
    """A typed dict, to change several of its keys in one call."""
    fields: dict[str, Any] = typed
    return fields


def _loads(data: bytes) -> Event:
    event: Event = orjson.loads(data)
    return event
