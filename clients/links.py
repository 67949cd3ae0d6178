"""Room links: what a person pastes (``http://host:8765/r/K7QF-2M``) → where to connect.

>>> parse_link("http://127.0.0.1:8765/r/K7QF-2M?key=abc")
RoomLink(url='ws://127.0.0.1:8765', room='K7QF-2M', key='abc')
>>> parse_link("ws://127.0.0.1:8765", room="K7QF2M")
RoomLink(url='ws://127.0.0.1:8765', room='K7QF2M', key=None)

A connection made for a known room says so in its address, ``?room=CODE``: a routing hint
for the load balancer, which sends every connection of one room to the same worker
(docs/scaling.md, "Room affinity"). The server neither needs nor trusts it.

>>> routed_url("ws://127.0.0.1:8765", "k7qf-2m")
'ws://127.0.0.1:8765/?room=K7QF2M'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["RoomLink", "parse_link", "room_hint", "routed_url"]

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
_PATH_ROOM = re.compile(r"^/r/([A-Za-z0-9-]{1,16})/?$")
_HASH_ROOM = re.compile(r"^/room/([A-Za-z0-9-]{1,16})(?:\?(.*))?$")


@dataclass(frozen=True, slots=True)
class RoomLink:
    """A websocket URL, the room code in it (if any) and a private room's key."""

    url: str
    room: str | None
    key: str | None = None


def parse_link(text: str, *, room: str | None = None, key: str | None = None) -> RoomLink:
    """Read a room link (``/r/CODE`` or the server's ``/#/room/CODE``) or a plain server URL;
    ``room`` and ``key`` given apart win over the link's. Raises ``ValueError``."""
    parts = urlsplit(text.strip())
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ValueError(f"not a server URL or room link: {text!r}")
    found_room: str | None = None
    found_key = parse_qs(parts.query).get("key", [None])[0]
    m = _PATH_ROOM.match(parts.path)
    if m:
        found_room = m.group(1)
    h = _HASH_ROOM.match(parts.fragment)
    if h:
        found_room = h.group(1)
        if h.group(2):
            found_key = parse_qs(h.group(2)).get("key", [found_key])[0]
    return RoomLink(f"{scheme}://{parts.netloc}", room or found_room, key or found_key)


def room_hint(room: str | None) -> str | None:
    """A room code in the one form every client hashes alike (upper case, letters and
    digits only: ``k7qf-2m`` → ``K7QF2M``), or None when there is nothing to route by."""
    if room is None:
        return None
    code = "".join(char for char in room.upper() if char.isascii() and char.isalnum())
    return code if 0 < len(code) <= 16 else None


def routed_url(url: str, room: str | None) -> str:
    """``url`` with the routing hint for ``room`` (``?room=CODE``, replacing any hint it
    had); ``url`` without a hint when ``room`` gives none."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "room"]
    hint = room_hint(room)
    if hint is not None:
        query.append(("room", hint))
    return urlunsplit(parts._replace(path=parts.path or "/", query=urlencode(query)))
