"""The events of a room or a tournament kept in memory: numbered as they are stored, the
last ones kept for a client that missed some (as Redis keeps them in a capped list)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping

import orjson

from protocol.frames import stamp_event

__all__ = ["EventLog"]


class EventLog:
    """The last ``cap`` events, stamped with a rising ``seq`` (the newest's)."""

    __slots__ = ("kept", "seq")

    def __init__(self, cap: int) -> None:
        self.seq = 0
        #: the stamped events, oldest first
        self.kept: deque[bytes] = deque(maxlen=cap)

    def stamp(self, bodies: Iterable[Mapping[str, object]]) -> list[bytes]:
        """Number each body, keep it and return the stamped events, as sent to clients."""
        out = []
        for body in bodies:
            self.seq += 1
            data = stamp_event(self.seq, orjson.dumps(body))
            self.kept.append(data)
            out.append(data)
        return out
