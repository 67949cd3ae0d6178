"""What a worker knows of a room it has, and the fair-play filter of the room's events.

:class:`LocalRoom` keeps the race facts that the room's events tell (the race layer checks
moves against them) and decides, in one place, what each connection is sent of an event:
whether it sees it at all (:meth:`LocalRoom.may_see`: a racer never sees another racer's
finish while racing), and the frame it gets (:meth:`LocalRoom.frame_for`,
:func:`spectator_frame`): the deal code only to who may know it, the boards only to who
the board rule (:func:`server.rooms.view.boards_shown`) lets see them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import orjson

from protocol import Phase

from ..config import now_ms
from ..edge.connection import Conn, Player
from ..store.rooms import Snapshot
from .feed import EndedEarly, Feed, round_over, secret_for_race, secret_of
from .room import RoomState
from .view import BoardFacts, Viewer, boards_shown

__all__ = [
    "BOARD_FIELDS",
    "DEAL_EVENTS",
    "Event",
    "LocalRoom",
    "secret_ends",
    "shown_event",
    "spectator_frame",
]

DEAL_EVENTS = frozenset({"race_starting", "player_finished", "race_ended"})
"""Events whose stored form may hold the deal code (and, for the workers, who typed it and
until when the day's deal is secret)."""
_INTERNAL = frozenset({"typed_by", "secret_until"})
BOARD_FIELDS: dict[str, tuple[str, ...]] = {
    "race_starting": ("view",),
    "player_finished": ("board", "move_list"),
}
"""The fields of the room events that hold a board (every one of them is a deal event)."""

Event = dict[str, Any]
"""A room event as a worker receives it: a :data:`~.room.RoomEvent` numbered by the store
(``seq``), decoded from the broker's bytes — read as a plain mapping, since the bytes are
what is forwarded."""


@dataclass(slots=True)
class LocalRoom:
    """What this worker knows of a room it has connections (or robots) in."""

    room_code: str
    conns: set[Conn] = field(default_factory=set)
    #: seats played by robots on this worker (they keep the room here without a socket)
    robots: dict[int, Player] = field(default_factory=dict)
    phase: Phase = "lobby"
    race: int = 0
    deal_code: str = ""
    start_at: int | None = None
    deadline: int | None = None
    participants: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)
    typed_by: int | None = None
    #: the day's secret deal, a tournament round: nobody is told its code before this (ms);
    #: None otherwise
    secret_until: int | None = None
    #: the round this room plays ended before its deadline (:meth:`end_secret`)
    ended: EndedEarly | None = None
    delay: int = 0
    #: the room's races are rated: a racer leaving abandons (``left``) rather than resigns
    rated: bool = False
    #: a tournament round's room; the host's ``spectator_boards`` option (the board rule)
    tournament: bool = False
    spectator_boards: bool = True
    #: the race's time-out (armed by the race layer on every worker with the room)
    timer: asyncio.TimerHandle | None = None
    subscribed: asyncio.Event = field(default_factory=asyncio.Event)
    #: what the room's spectators see (set by :meth:`Rooms.ensure`)
    feed: Feed | None = None
    #: this race's ``player_finished`` events by seat (seq, event, bytes): sent to a racer
    #: once they finish, who could not see them while racing
    finishes: dict[int, tuple[int, Event, bytes]] = field(default_factory=dict)

    def learn(self, snap: Snapshot) -> None:
        """Take the race facts from a fresh snapshot."""
        room = snap.room
        if room.race != self.race:
            self.finished = set()
        self.phase, self.race, self.deal_code = room.phase, room.race, room.deal
        self.typed_by = room.deal_typed_by
        self.secret_until = self._secret(room.race, room.secret_until)
        self.start_at, self.deadline = room.start_at, room.deadline
        self.participants = set(room.participants)
        self.delay = room.options.spectator_delay
        self.rated = room.options.rated
        self.tournament = room.tournament is not None
        self.spectator_boards = room.options.spectator_boards
        if self.ended is None and (over := round_over(room, now_ms())) is not None:
            self.end_secret(over)  # the feed too: a secret_ends this worker was not given
        self.finished |= {
            s for s, p in snap.progress.items() if p.race == room.race and p.status != "playing"
        }

    def learn_event(self, event: Event) -> None:
        """Take the race facts an event tells."""
        kind = event.get("type")
        if kind == "race_starting":
            self.phase, self.race, self.deal_code = "running", event["race"], event["deal"]
            self.typed_by = event.get("typed_by")
            self.secret_until = self._secret(event["race"], event.get("secret_until"))
            self.start_at, self.deadline = event["start_at"], event["deadline"]
            self.participants, self.finished = set(event["seats"]), set()
        elif kind == "race_ended" and event.get("race") == self.race:
            self.phase = "ended"
        elif kind == "player_finished" and event.get("race") == self.race:
            self.finished.add(event["seat"])

    def end_secret(self, ended: EndedEarly) -> None:
        """The round this room plays ended (``ended``: the room's race, the end of its
        secret — the round's end, or the deadline if that came first), told by the worker
        that ended it (:func:`secret_ends`): the race's deal and boards are secret only until
        then — on this worker as in the store, though the race's events carry the deadline
        (:meth:`secret_of`). Kept for a snapshot or event learnt after it."""
        self.ended = ended
        self.secret_until = self._secret(self.race, self.secret_until)
        if self.feed is not None:
            self.feed.end_secret(ended)

    def missed_end(self, room: RoomState, now: int) -> EndedEarly | None:
        """The end of the round this room plays, when the stored ``room`` shows it over at
        ``now`` (server ms) though this copy still keeps its secret: this worker missed the
        ``secret_ends`` message (a control message is not stored: its subscription was being
        restored). None otherwise — and for the day's deal, whose secret ends at the time
        its events carry."""
        if self.secret_until is None or now >= self.secret_until:
            return None
        ended = round_over(room, now)
        return ended if ended is not None and ended[0] == self.race else None

    def _secret(self, race: int, until: int | None) -> int | None:
        """``until`` for race ``race``, or the end of its round if that ended early."""
        return secret_for_race(race, until, self.ended)

    def secret_of(self, event: Event) -> int | None:
        """Until when (ms) the deal of a deal event is secret (:func:`~.feed.secret_of`)."""
        return secret_of(event, self.ended)

    def may_see(self, conn: Conn, event: Event) -> bool:
        """Fair play: a player still racing never gets another player's move list/board."""
        if event.get("type") != "player_finished":
            return True
        return not (
            conn.role == "player"
            and event.get("race") == self.race
            and self.phase == "running"
            and conn.seat in self.participants
            and conn.seat not in self.finished
        )

    def facts(self, phase: Phase | None = None) -> BoardFacts:
        """What the board rule reads of the room (``phase``: as the viewer is shown it, a
        delayed spectator the feed's)."""
        return BoardFacts(
            phase=self.phase if phase is None else phase,
            secret_until=self.secret_until,
            tournament=self.tournament,
            delay=self.delay,
            spectator_boards=self.spectator_boards,
        )

    def viewer(self, conn: Conn) -> Viewer:
        """``conn`` as the board rule reads it: its seat in the race, and what was looked up
        of its identity when it came into the room (:attr:`Conn.entered`,
        :attr:`Conn.attempt_done`)."""
        seat = conn.seat if conn.role == "player" else None
        racer = seat is not None and seat in self.participants and self.phase != "lobby"
        done = racer and (self.phase == "ended" or seat in self.finished)
        return Viewer(
            racing=racer and not done,
            finished=done,
            # a seat of a round's room is an entered player's
            entered=conn.entered or (self.tournament and seat is not None),
            attempt_done=conn.attempt_done,
        )

    def hides_boards(self, conn: Conn, event: Event, phase: Phase | None = None) -> bool:
        """Whether the boards an event holds (:data:`BOARD_FIELDS`) must be withheld from
        ``conn``: never its own (its race's opening cards, its own finish), else as the
        board rule says."""
        kind = event.get("type")
        if kind not in BOARD_FIELDS:
            return False
        seat = conn.seat if conn.role == "player" else None
        if seat is not None and (
            (kind == "race_starting" and seat in event.get("seats", ()))
            or (kind == "player_finished" and seat == event.get("seat"))
        ):
            return False
        return boards_shown(self.viewer(conn), self.facts(phase), now_ms()) == "progress"

    def frame_for(self, conn: Conn, event: Event, data: bytes) -> bytes:
        """Fair play: the frame of a stored event for ``conn``. The deal code of a race goes
        to the player who typed it, to a player in their own ``player_finished``, and to
        everyone once the race has ended — but the day's secret deal to nobody before its
        day is over; the rest get the event with ``deal: null``. Its boards go to whom the
        board rule lets see them (:meth:`hides_boards`); the others get them ``null``."""
        if event.get("type") not in DEAL_EVENTS:
            return data
        race = event.get("race", 0)
        seat = conn.seat if conn.role == "player" else None
        secret_until = self.secret_of(event)
        knows = not (secret_until is not None and now_ms() < secret_until) and (
            race < self.race
            or (race == self.race and self.phase == "ended")
            or (seat is not None and seat in (event.get("typed_by"), self.typed_by))
            or (
                seat is not None
                and event.get("type") == "player_finished"
                and seat == event.get("seat")
            )
        )
        hidden = self.hides_boards(conn, event)
        if knows and not hidden and not _INTERNAL & event.keys():
            return data
        return shown_event(event, knows=knows, boards=not hidden)


def shown_event(event: Event, *, knows: bool, boards: bool) -> bytes:
    """A deal event as a viewer is sent it: without the workers' own fields, its deal code
    only if they may ``knows`` it, its boards only if they may see ``boards``."""
    shown = {k: v for k, v in event.items() if k not in _INTERNAL}
    if not knows:
        shown["deal"] = None
    if not boards:
        for name in BOARD_FIELDS.get(str(event.get("type")), ()):
            shown[name] = None
    return orjson.dumps(shown)


def spectator_frame(feed: Feed, event: Event, data: bytes, *, boards: bool) -> bytes:
    """Fair play for spectators of a delayed room: the deal code once the race they are
    shown has ended (by the feed's clock, not the room's) — the day's secret deal not before
    its day is over — and never the workers' own fields (``typed_by``, ``secret_until``);
    its boards if the board rule lets this spectator see them (``boards``)."""
    if event.get("type") not in DEAL_EVENTS:
        return data
    body = feed.body
    race = event.get("race", 0)
    secret_until = secret_of(event, feed.ended)
    knows = (
        body is not None
        and not (secret_until is not None and now_ms() < secret_until)
        and (race < body["race"] or (race == body["race"] and body["phase"] == "ended"))
    )
    return shown_event(event, knows=knows, boards=boards)


def secret_ends(ended: EndedEarly) -> bytes:
    """The control message that tells a room's workers its round ended (``ended``: the
    room's race, the end of its secret): see :meth:`LocalRoom.end_secret`; each tells its
    connections in the room (``boards_open``)."""
    race, at = ended
    return orjson.dumps({"ctl": "secret_ends", "race": race, "at": at})
