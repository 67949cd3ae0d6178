"""Whether the store can be reached: the state every part of the server consults (the
moves held while it is lost, the seats reasserted when it is back, /healthz) and the watch
that tells them of each change."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Health", "HealthHook", "HealthWatch"]

logger = logging.getLogger("samedeal.store")


@dataclass(frozen=True, slots=True)
class Health:
    """Whether the store can be reached, why not, and since when (monotonic seconds)."""

    ok: bool
    reason: str = ""
    since: float = 0.0


HealthHook = Callable[[Health], None]
"""Called when the store's health changes (lost, or back)."""


class HealthWatch:
    """A store's health as last seen, with one log line per change ("unreachable", "back
    after 5.2 s") instead of one per failed call, and the hooks told of each change."""

    def __init__(self, name: str, hooks: list[HealthHook]) -> None:
        self.name = name
        self.hooks = hooks
        self.state = Health(True, since=time.monotonic())

    def down(self, reason: str) -> None:
        """The store could not be reached."""
        if not self.state.ok:
            return
        self.state = Health(False, reason, time.monotonic())
        logger.warning("%s unreachable: %s", self.name, reason)
        self._tell()

    def up(self) -> None:
        """The store answered."""
        if self.state.ok:
            return
        now = time.monotonic()
        logger.warning("%s back after %.1f s", self.name, now - self.state.since)
        self.state = Health(True, since=now)
        self._tell()

    def _tell(self) -> None:
        for hook in list(self.hooks):
            try:
                hook(self.state)
            except Exception:
                logger.exception("a health hook failed")
