"""Fixtures for the client tests: a real race server on 127.0.0.1 (port 0), serving the
browser client's files on the websocket port as ``samedeal serve`` does."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from clients.cmd_serve import WEB_DIR
from server.app import Config, RaceServer, running
from server.memory import MemoryBackend

__all__ = ["LiveServer", "live_server"]


@dataclass(slots=True)
class LiveServer:
    """A running server: ``url`` for websockets, ``http`` for the browser."""

    app: RaceServer
    port: int

    @property
    def url(self) -> str:
        """The websocket URL."""
        return f"ws://127.0.0.1:{self.port}"

    @property
    def http(self) -> str:
        """The page's URL."""
        return f"http://127.0.0.1:{self.port}"


class _Errors(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextlib.asynccontextmanager
async def live_server(**config: Any) -> AsyncIterator[LiveServer]:
    """Run a memory-backed server (which serves the web client too) on a free port of
    127.0.0.1; fail if the server or a client logged an ERROR meanwhile."""
    cfg = Config(host="127.0.0.1", port=0, static_dir=WEB_DIR, **config)
    errors = _Errors()
    root = logging.getLogger("samedeal")
    root.addHandler(errors)
    try:
        async with running(MemoryBackend(), cfg) as (app, _):
            assert app.port is not None
            yield LiveServer(app, app.port)
    finally:
        root.removeHandler(errors)
    assert not errors.records, [r.getMessage() for r in errors.records]
