"""What an invitation link shows before joining: ``GET /api/rooms/<CODE>[?key=KEY]``.

The room's game, phase, host, players, size and whether it may be watched or plays the
deal of the day (:class:`protocol.api.RoomSummary`) — never the deal code (fair play) nor
anything of a seat but its name. A private room without its right key gets the answer an
unknown room gets (404), so room codes cannot be probed; each address may ask
``room_info_rate`` times a second (``room_info_burst`` at once), since each answer reads
the store.
"""

from __future__ import annotations

import logging
from http import HTTPStatus

import orjson
from websockets.http11 import Response

from protocol.api import RoomSummary

from ..codes import display_code, normalize_code
from ..context import Context
from ..edge.http import HttpRequest, error_response, json_response, respond
from ..edge.limits import AddressBuckets
from ..store.errors import StoreUnavailable
from .room import RoomState, key_fits

__all__ = ["Invitations", "room_summary"]

logger = logging.getLogger("samedeal.server")


def room_summary(room: RoomState) -> RoomSummary:
    """The summary of ``room`` an invitation shows."""
    host = room.seat(room.host) if room.host is not None else None
    return RoomSummary(
        room=display_code(room.code),
        game=room.game,  # type: ignore[arg-type]  # a GameName: the room was made with one
        phase=room.phase,
        host_name=host.name if host is not None else None,
        players=[s.name for s in sorted(room.seats, key=lambda s: s.seat)],
        max_players=room.options.max_players,
        spectators=room.options.spectators,
        daily=room.daily,
        solo=room.solo,
        rated=room.options.rated,
    )


class Invitations:
    """The room summary route of a worker."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.buckets = AddressBuckets(ctx.config.room_info_rate, ctx.config.room_info_burst)
        ctx.http.get("/api/rooms/{code}", self.summary)

    async def summary(self, request: HttpRequest) -> Response:
        """``GET /api/rooms/<CODE>[?key=KEY]``: 200 with the summary, 404 for an unknown
        room or a private one without its key, 429 past the address's rate, 503 while the
        store cannot be reached."""
        wait = self.buckets.take(request.address)
        if wait > 0:
            body = orjson.dumps({"error": "rate_limited", "message": "too many requests"})
            return respond(
                HTTPStatus.TOO_MANY_REQUESTS,
                body,
                [
                    ("Content-Type", "application/json"),
                    ("Cache-Control", "no-store"),
                    ("Retry-After", AddressBuckets.retry_after(wait)),
                ],
            )
        room_code = normalize_code(request.params["code"])
        try:
            snap = await self.ctx.store.rooms.snapshot(room_code) if room_code is not None else None
        except StoreUnavailable:
            return error_response(
                HTTPStatus.SERVICE_UNAVAILABLE, "storage", "the store cannot be reached now"
            )
        if snap is None or not key_fits(snap.room, request.query.get("key")):
            return error_response(HTTPStatus.NOT_FOUND, "unknown_room", "no such room")
        return json_response(room_summary(snap.room))
