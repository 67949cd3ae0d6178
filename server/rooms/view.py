"""What a viewer of a room is shown of it: the snapshot, whether they may know the deal,
and whether they may see the racers' boards.

Pure, as :mod:`server.rooms.room`: the fair-play rules — the deal code told to whom, and
when (:func:`may_know_deal`); the boards shown to whom, and when (:func:`boards_shown`) —
live here beside the snapshot that applies them.

**Who may see a board** (``fair-deals.md``, "Who may see a sealed deal's cards"). A board
is any of a racer's cards: a followed ``board``, the opening cards of ``race_starting``, the
final board and move list of ``player_finished``, a replay. A viewer always has their own
board; another racer's, by :func:`boards_shown`:

* a racer still racing: none (they see the others' progress);
* the day's secret deal, until its day is over: none, but to a viewer who has finished
  their own attempt at that game today;
* a tournament round, until it ends: none to a viewer entered in the tournament (by any
  identity it holds); the other spectators see them after the host's spectator delay, or
  once the round is over when the host set none;
* any other room: as its host set it — live, after the spectator delay, or (no
  ``spectator_boards``) progress only while a race runs.

Every path that sends a board asks it: the room's events (:mod:`.registry`), followed boards
(:mod:`server.watching.follow`), the live directory (:mod:`server.watching.entries`), replays
(:mod:`server.players.history`). Progress — cards home, score, moves, status — is never
withheld.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from protocol import Phase, frames
from protocol.frames import SnapshotBody

from ..codes import display_code
from .room import FINAL_STATUSES, ProgressState, RoomState, progress_event

__all__ = ["NOBODY", "BoardFacts", "Boards", "Viewer", "boards_shown", "may_know_deal", "snapshot"]

Boards = Literal["live", "delayed", "progress"]
"""What a viewer is shown of the other racers' boards: ``live``, ``delayed`` (by the room's
spectator delay, as everything its spectators are shown) or ``progress`` (no board)."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who looks at a room, as the board rule reads them: facts the server gathered.

    ``racing``: in the room's race and not finished; ``finished``: in it and finished;
    ``entered``: entered in the room's tournament by an identity the viewer holds (on this
    connection or in the room); ``attempt_done``: has finished their own attempt at the
    room's daily game today."""

    racing: bool = False
    finished: bool = False
    entered: bool = False
    attempt_done: bool = False


NOBODY = Viewer()
"""A spectator the server knows nothing of (the live directory, a replay's reader)."""


@dataclass(frozen=True, slots=True)
class BoardFacts:
    """What the board rule reads of a room: its ``phase`` (as the viewer is shown it),
    ``secret_until`` (the day's deal or a tournament round: its code is nobody's before, ms),
    whether it is a ``tournament`` round's room, its spectator ``delay`` (s) and its host's
    ``spectator_boards`` option."""

    phase: Phase
    secret_until: int | None
    tournament: bool
    delay: int
    spectator_boards: bool

    @classmethod
    def of(cls, room: RoomState) -> BoardFacts:
        """The facts of a stored room."""
        return cls(
            phase=room.phase,
            secret_until=room.secret_until,
            tournament=room.tournament is not None,
            delay=room.options.spectator_delay,
            spectator_boards=room.options.spectator_boards,
        )


def boards_shown(viewer: Viewer, room: BoardFacts, now: int) -> Boards:
    """What ``viewer`` may see of the other racers' boards of ``room`` at ``now`` (server
    ms): the rule of who may see a board (see the module's docstring), written once."""
    shown: Boards = "delayed" if room.delay else "live"
    if viewer.racing:
        return "progress"
    if room.secret_until is not None and now < room.secret_until:
        if room.tournament:
            # the host's delay, or the round's end; never to anyone entered (its racers are)
            hidden = viewer.entered or viewer.finished or not room.delay
            return "progress" if hidden else "delayed"
        # the day's deal: seen only by who has played it out today
        return shown if viewer.attempt_done or viewer.finished else "progress"
    if room.phase == "running" and not room.spectator_boards and not viewer.finished:
        return "progress"
    return shown


def may_know_deal(
    room: RoomState, progress: dict[int, ProgressState], viewer: int | None, now: int
) -> bool:
    """Fair play: whether the player at seat ``viewer`` (``None``: a spectator) may be told
    the current deal code. The day's secret deal: nobody before its day is over. Otherwise
    everyone once the race has ended; before that only the player who typed it, and a
    player who has finished their race."""
    if room.secret_until is not None and now < room.secret_until:
        return False
    if room.phase == "ended":
        return True
    if viewer is None:
        return False
    if viewer == room.deal_typed_by:
        return True
    p = progress.get(viewer)
    return (
        room.phase == "running"
        and p is not None
        and p.race == room.race
        and (p.status in FINAL_STATUSES)
    )


def snapshot(
    room: RoomState,
    progress: dict[int, ProgressState],
    seq: int,
    now: int,
    link: str,
    *,
    viewer: int | None = None,
) -> SnapshotBody:
    """The ``RoomSnapshot`` payload (see ``protocol.messages``) for the player at seat
    ``viewer`` (``None``: a spectator): ``deal`` is ``None`` unless they may know it."""
    seats: list[frames.SeatInfoBody] = []
    for s in room.seats:
        p = progress.get(s.seat)
        info: frames.SeatInfoBody = {
            "seat": s.seat,
            "name": s.name,
            "connected": s.connected,
            "status": "waiting",
        }
        if s.rating is not None:
            info["rating"] = s.rating
            info["provisional"] = s.provisional
        if p is not None and p.race == room.race and room.race > 0:
            shown = progress_event(room, p, now, s)
            info["status"] = shown["status"]
            info["on_foundations"] = p.on_foundations
            info["total"] = p.total
            info["score"] = p.score
            info["moves"] = p.moves
            info["elapsed_ms"] = shown["elapsed_ms"]
        seats.append(info)
    return {
        "room": display_code(room.code),
        "link": link,
        "game": room.game,
        "options": room.options.model_dump(),
        "host": room.host,
        "phase": room.phase,
        "race": room.race,
        "deal": room.deal if may_know_deal(room, progress, viewer, now) else None,
        "start_at": room.start_at,
        "deadline": room.deadline,
        "seats": seats,
        "results": room.results,
        "seq": seq,
        "now": now,
        "spectators": room.spectators,
        "daily": room.daily,
        "rematch_offer": (
            {
                "race": room.offer.race,
                "deal": room.offer.kind,
                "deadline": room.offer.deadline,
                "by": room.offer.by,
            }
            if room.offer is not None
            else None
        ),
        "solo": room.solo,
    }
