"""Tournament links: what a person pastes (``http://host:8765/t/K7QF-2M``) → where to
connect, which tournament, and a private one's key."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

__all__ = ["TournamentLink", "parse_tournament_link"]

_SCHEMES = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}
_PATH = re.compile(r"^/t/([A-Za-z0-9-]{1,16})/?$")


@dataclass(frozen=True, slots=True)
class TournamentLink:
    """A server's websocket URL, its HTTP base, a tournament code in it, a private key."""

    url: str
    http: str
    tournament: str | None
    key: str | None = None


def parse_tournament_link(text: str, *, key: str | None = None) -> TournamentLink:
    """Read a tournament link (``/t/CODE``) or a server address; raises ``ValueError``.

    >>> parse_tournament_link("http://127.0.0.1:8765/t/K7QF-2M?key=abc").tournament
    'K7QF-2M'
    >>> parse_tournament_link("https://example.org/t/K7QF-2M").url
    'wss://example.org'
    """
    parts = urlsplit(text.strip())
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.netloc:
        raise ValueError(f"not a server address or tournament link: {text!r}")
    found = _PATH.match(parts.path)
    http = ("https" if scheme == "wss" else "http") + f"://{parts.netloc}"
    return TournamentLink(
        f"{scheme}://{parts.netloc}",
        http,
        found.group(1) if found else None,
        key or parse_qs(parts.query).get("key", [None])[0],
    )
