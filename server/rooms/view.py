"""What a viewer of a room is shown of it: the snapshot, and whether they may know the deal.

Pure, as :mod:`server.room`: the fair-play rule of the snapshot (the deal code told to
whom, and when) lives here beside the snapshot that applies it.
"""

from __future__ import annotations

from protocol import frames
from protocol.frames import SnapshotBody

from ..codes import display_code
from .room import FINAL_STATUSES, ProgressState, RoomState, progress_event

__all__ = ["may_know_deal", "snapshot"]


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
        if p is not None and p.race == room.race and room.race > 0:
            ev = progress_event(room, p, now, s)
            info["status"] = ev["status"]
            info["on_foundations"] = p.on_foundations
            info["total"] = p.total
            info["score"] = p.score
            info["moves"] = p.moves
            info["elapsed_ms"] = ev["elapsed_ms"]
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
