"""HTTP on the websocket port: a small router for the server's GET routes.

The websocket server answers plain HTTP requests before the handshake (its
``process_request`` hook), and it speaks GET only: every HTTP route here reads; whatever
changes state goes over the websocket. Layers register their routes on the worker's
:class:`Router` (``ctx.http``), with ``{name}`` placeholders for one path segment each::

    ctx.http.get("/api/games/{race_id}", self.game)

A handler gets the request, the placeholders' values (URL-decoded) and the query, and
returns a response (:func:`json_response`, :func:`text_response`, :func:`error_response`),
or ``None`` to let the next route or the static files answer. JSON bodies are the
``protocol.api`` models' (the OpenAPI document is generated from them). A layer whose
calls may fail for a passing reason registers the answer once (:meth:`Router.on_error`:
a store that cannot be reached is a 503, never a 500 from every route); anything else a
handler raises is logged and answered ``500 server_error`` in JSON.
"""

from __future__ import annotations

import email.utils
import logging
import re
import urllib.parse
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http import HTTPStatus

import orjson
from pydantic import BaseModel
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

__all__ = [
    "HttpRequest",
    "Router",
    "error_response",
    "json_response",
    "respond",
    "text_response",
]


@dataclass(frozen=True, slots=True)
class HttpRequest:
    """A GET request as a route sees it; ``address`` is the client's (the TCP peer's IP
    address, ``""`` when unknown), for limits per client."""

    path: str
    params: dict[str, str]
    query: dict[str, str]
    headers: Headers
    address: str = ""


logger = logging.getLogger("samedeal.server")

Handler = Callable[[HttpRequest], Awaitable[Response | None]]
ErrorAnswer = Callable[[BaseException], Response]


def respond(status: HTTPStatus, body: bytes, headers: list[tuple[str, str]]) -> Response:
    """A response with the headers every answer of this server carries."""
    all_headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Content-Length", str(len(body))),
            ("Connection", "close"),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            *headers,
        ]
    )
    return Response(status.value, status.phrase, all_headers, body)


def json_response(body: BaseModel | bytes, status: HTTPStatus = HTTPStatus.OK) -> Response:
    """A JSON answer (a ``protocol.api`` model, or JSON already encoded)."""
    data = body if isinstance(body, bytes) else body.model_dump_json().encode()
    return respond(
        status,
        data,
        [("Content-Type", "application/json"), ("Cache-Control", "no-store")],
    )


def text_response(text: str, status: HTTPStatus = HTTPStatus.OK) -> Response:
    """A plain-text answer."""
    return respond(
        status,
        text.encode(),
        [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")],
    )


def error_response(status: HTTPStatus, error_code: str, message: str) -> Response:
    """A JSON error: ``{"error": code, "message": message}``."""
    return json_response(orjson.dumps({"error": error_code, "message": message}), status)


class Router:
    """GET routes, tried in the order they were registered."""

    def __init__(self) -> None:
        self._routes: list[tuple[re.Pattern[str], Handler]] = []
        self._errors: dict[type[BaseException], ErrorAnswer] = {}
        #: the patterns registered, in order (the OpenAPI document must list the /api ones)
        self.patterns: list[str] = []

    def on_error(self, kind: type[BaseException], answer: ErrorAnswer) -> None:
        """Answer a route that raises ``kind`` (or a subclass) with ``answer(exc)``."""
        self._errors[kind] = answer

    def get(self, pattern: str, handler: Handler) -> None:
        """Answer GET requests whose path matches ``pattern`` (``{name}``: one segment)."""
        parts = re.split(r"\{(\w+)\}", pattern)
        regex = "".join(
            re.escape(part) if i % 2 == 0 else f"(?P<{part}>[^/]+)" for i, part in enumerate(parts)
        )
        self._routes.append((re.compile(f"^{regex}$"), handler))
        self.patterns.append(pattern)

    async def dispatch(self, request: Request, address: str = "") -> Response | None:
        """The response of the first route that answers, or None (``address``: the
        client's)."""
        path, _, query = request.path.partition("?")
        path = path.split("#", 1)[0]
        for regex, handler in self._routes:
            match = regex.match(path)
            if match is None:
                continue
            params = {k: urllib.parse.unquote(v) for k, v in match.groupdict().items()}
            http_request = HttpRequest(
                path,
                params,
                dict(urllib.parse.parse_qsl(query, keep_blank_values=True)),
                request.headers,
                address,
            )
            try:
                found = await handler(http_request)
            except Exception as exc:
                return self._answer(exc, path)
            if found is not None:
                return found
        return None

    def _answer(self, exc: Exception, path: str) -> Response:
        for kind, answer in self._errors.items():
            if isinstance(exc, kind):
                return answer(exc)
        logger.exception("request failed path=%s", path)
        return error_response(
            HTTPStatus.INTERNAL_SERVER_ERROR, "server_error", "the server could not do that now"
        )
