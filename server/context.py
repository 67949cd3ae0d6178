"""What every layer of a worker shares: settings, the backend, the local rooms, metrics and
background tasks. Built once by :mod:`server.app` and handed to each layer."""

from __future__ import annotations

from dataclasses import dataclass

from .backend import Backend
from .config import Config
from .metrics import Metrics
from .room import display_code
from .rooms import Rooms
from .tasks import Tasks

__all__ = ["Context"]


@dataclass(slots=True)
class Context:
    """One worker's shared parts."""

    config: Config
    backend: Backend
    metrics: Metrics
    tasks: Tasks
    rooms: Rooms
    #: the port the server listens on, once it does
    port: int | None = None

    @property
    def worker_id(self) -> str:
        """This worker's id (the backend's)."""
        return self.backend.worker_id

    def link(self, room_code: str, key: str | None) -> str:
        """The join link of a room."""
        base = self.config.public_url or f"http://{self.config.host}:{self.port or 0}"
        return f"{base}/r/{display_code(room_code)}" + (f"?key={key}" if key else "")
