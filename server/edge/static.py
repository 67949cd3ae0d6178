"""Static files served on the websocket port (no separate web server): the browser client.

The server serves the directory given as ``Config.static_dir`` (``samedeal serve`` gives
the ``clients/web`` directory) with a :class:`StaticFiles` from its ``process_request``
hook, after its own routes (``/healthz``, ``/metrics``): the app's pages — ``/``,
``/r/<ROOMCODE>`` (a room), ``/d/<DEALCODE>`` (a shared deal), ``/g/<GAMEID>`` (a
finished race's replay), ``/p/<HANDLE>`` (a player's page), ``/daily`` and
``/daily/<YYYY-MM-DD>`` (the daily challenge), ``/t/<CODE>`` (a tournament; ``/t/new`` its
form), ``/rules`` and ``/rules/<game>``, ``/watch`` (the live directory), ``/tv`` and
``/tv/<game>`` (the featured race), ``/leaderboard`` and ``/leaderboard/<game>`` — answer
``index.html`` (the app reads ``location``), the other files answer themselves, and any
other address answers ``404 Not Found`` with ``index.html``, which shows a "no such page"
screen leading back to the lobby.
:meth:`StaticFiles.response` alone answers ``None`` for an unknown address, for a caller with
routes of its own.

Only files found under the directory when the table is built can be served: request paths
are looked up in that table, never joined to a directory, so ``..`` and encoded tricks have
nothing to reach. A websocket upgrade request is never answered here.
"""

from __future__ import annotations

import hashlib
import re
from http import HTTPStatus
from pathlib import Path
from typing import Any

from websockets.http11 import Request, Response

from .http import respond

__all__ = ["StaticFiles"]

_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".webmanifest": "application/manifest+json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".txt": "text/plain; charset=utf-8",
}

# The app's own pages: one HTML file reads the address and shows the page.
_PAGE_PATH = re.compile(
    r"^/(?:index\.html"
    r"|r/[A-Za-z0-9-]{1,16}/?"
    r"|t/[A-Za-z0-9-]{1,16}/?"
    r"|d/[A-Za-z0-9-]{1,32}/?"
    r"|g/[A-Za-z0-9]{1,16}/?"
    # a handle is letters of any script: percent-encoded in the path
    r"|p/[A-Za-z0-9%_-]{1,200}/?"
    r"|daily(?:/\d{4}-\d{2}-\d{2})?/?"
    r"|rules(?:/(?:easy-harp|klondike))?/?"
    r"|watch/?"
    r"|leaderboard(?:/(?:easy-harp|klondike|klondike-3))?/?"
    r"|tv(?:/(?:easy-harp|klondike|klondike-3))?/?)?$"
)

# The page never needs inline scripts, other origins or frames: a name that slipped through
# as markup still could not run anything.
_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self' ws: wss:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


class _File:
    __slots__ = ("body", "content_type", "etag")

    def __init__(self, body: bytes, content_type: str) -> None:
        self.body = body
        self.content_type = content_type
        self.etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'


def _read_table(directory: Path) -> dict[str, _File]:
    """URL path → file, for every servable file under ``directory``."""
    table: dict[str, _File] = {}
    if not directory.is_dir():
        return table
    root = directory.resolve()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.name.startswith("."):
            continue
        content_type = _TYPES.get(path.suffix.lower())
        if content_type is None:
            continue
        resolved = path.resolve()
        if root not in resolved.parents:
            continue
        table["/" + resolved.relative_to(root).as_posix()] = _File(
            resolved.read_bytes(), content_type
        )
    return table


class StaticFiles:
    """The files of one directory, read once, answered from memory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.files = _read_table(directory)

    def response(self, path: str, if_none_match: str | None = None) -> Response | None:
        """The response for a GET of ``path`` (query string allowed), or ``None`` when no
        file answers it.

        Every file is sent with ``no-cache`` and an ``ETag``: browsers keep it but
        revalidate, so a new version is seen at once and an unchanged one costs a ``304``
        (``if_none_match`` gives the request's ``If-None-Match``).
        """
        path = path.split("?", 1)[0].split("#", 1)[0]
        name = "/index.html" if _PAGE_PATH.match(path) else path
        file = self.files.get(name)
        if file is None:
            return None
        return self._send(HTTPStatus.OK, file, if_none_match)

    def not_found(self) -> Response | None:
        """``404 Not Found`` with the app's page (it tells the reader and leads back to the
        lobby), or ``None`` without one."""
        file = self.files.get("/index.html")
        return None if file is None else self._send(HTTPStatus.NOT_FOUND, file, None)

    @staticmethod
    def _send(status: HTTPStatus, file: _File, if_none_match: str | None) -> Response:
        headers = [("Cache-Control", "no-cache"), ("ETag", file.etag)]
        if (
            status == HTTPStatus.OK
            and if_none_match is not None
            and file.etag in [t.strip() for t in if_none_match.split(",")]
        ):
            return respond(HTTPStatus.NOT_MODIFIED, b"", headers)
        headers.append(("Content-Type", file.content_type))
        if file.content_type.startswith("text/html"):
            headers.append(("Content-Security-Policy", _CSP))
        return respond(status, file.body, headers)

    def serve(self, connection: Any, request: Request) -> Response | None:
        """A ``process_request`` hook for ``websockets.asyncio.server.serve``, the last of the
        server's routes: a file, the 404 page for any other address, or ``None`` to go on
        to the handshake (a websocket upgrade is always left to it)."""
        del connection  # the signature is the hook's
        if "websocket" in request.headers.get("Upgrade", "").lower():
            return None
        found = self.response(request.path, request.headers.get("If-None-Match"))
        return found if found is not None else self.not_found()
