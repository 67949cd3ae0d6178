"""The server's HTTP JSON API of finished races and players, read by the terminal client.

>>> parse_game_link("http://127.0.0.1:8765/g/7k2qm9xd4ptr")
GameLink(base='http://127.0.0.1:8765', game_id='7k2qm9xd4ptr')
>>> server_base("ws://127.0.0.1:8765/r/K7QF-2M")
'http://127.0.0.1:8765'

Answers are the models of :mod:`protocol.api` (``protocol/openapi.json``). A request the
server refuses raises :class:`ApiRefusal` with its error code (``unknown_game``,
``unknown_player``, ``no_records``…); a server that cannot be reached raises ``OSError``.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

import orjson
from pydantic import ValidationError

from protocol.api import RACE_ID_PATTERN, GameReplay, PlayerPage

__all__ = [
    "ApiRefusal",
    "GameLink",
    "fetch_game",
    "fetch_player",
    "game_page_url",
    "parse_game_link",
    "player_page_url",
    "server_base",
]

_WEB_SCHEMES = {"http": "http", "https": "https", "ws": "http", "wss": "https"}
_GAME_PATH = re.compile(r"^/g/([^/]+)/?$")
_RACE_ID = re.compile(RACE_ID_PATTERN)
TIMEOUT = 10.0


class ApiRefusal(Exception):
    """The server answered with an error (``{"error": error_code, "message": …}``) or
    something that is not the answer the API documents; ``status`` is the HTTP status."""

    def __init__(self, status: int, error_code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


@dataclass(frozen=True, slots=True)
class GameLink:
    """A replay's page: the server's web address and the race's id."""

    base: str
    game_id: str


def server_base(url: str) -> str:
    """The web address of a server (``ws://``, ``http://``, a room or game link): scheme,
    host and port only. Raises ``ValueError``."""
    parts = urllib.parse.urlsplit(url.strip())
    scheme = _WEB_SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.netloc or parts.username or parts.password:
        raise ValueError(f"not a server URL: {url!r}")
    return f"{scheme}://{parts.netloc}"


def parse_game_link(text: str) -> GameLink:
    """Read a replay link ``http://HOST/g/ID``; raises ``ValueError`` (quoting it)."""
    base = server_base(text)
    m = _GAME_PATH.match(urllib.parse.urlsplit(text.strip()).path)
    if m is None or not _RACE_ID.match(m.group(1)):
        raise ValueError(f"not a replay link (http://HOST/g/ID): {text!r}")
    return GameLink(base, m.group(1))


def game_page_url(base: str, game_id: str) -> str:
    """The replay page of a race."""
    return f"{base}/g/{game_id}"


def player_page_url(base: str, handle: str) -> str:
    """A player's page."""
    return f"{base}/p/{urllib.parse.quote(handle, safe='')}"


def _get(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as reply:
            body: bytes = reply.read()
            return body
    except urllib.error.HTTPError as exc:
        try:
            error = orjson.loads(exc.read())
            error_code, message = str(error["error"]), str(error["message"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            error_code, message = "http_error", f"HTTP {exc.code}"
        raise ApiRefusal(exc.code, error_code, message) from None


def fetch_game(link: GameLink) -> GameReplay:
    """``GET /api/games/ID``: a finished race, every racer's moves."""
    body = _get(f"{link.base}/api/games/{link.game_id}")
    try:
        return GameReplay.model_validate_json(body)
    except ValidationError:
        raise ApiRefusal(200, "bad_answer", "the server's answer is not a game") from None


def fetch_player(base: str, handle: str, *, limit: int = 20) -> PlayerPage:
    """``GET /api/players/HANDLE``: a player's recent races and stats per game."""
    quoted = urllib.parse.quote(handle, safe="")
    body = _get(f"{base}/api/players/{quoted}?limit={limit}")
    try:
        return PlayerPage.model_validate_json(body)
    except ValidationError:
        raise ApiRefusal(200, "bad_answer", "the server's answer is not a player") from None
