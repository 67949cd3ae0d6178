"""The live directory as the store keeps it: one entry per listed room, written by a worker
that has the room, and the featured race of each game. Every change is told to every
worker (its writer included), which keeps a copy (:mod:`server.watching.directory`).

Messages told: ``{"by": WORKER, "put": [ENTRY, …], "drop": [[ROOM_CODE, SEQ], …]}`` (the
entries as written: :mod:`server.watching.entries`'s) and ``{"tv": GAME, "room":
ROOM_CODE}``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

__all__ = ["Directory", "DirectoryListener"]

DirectoryListener = Callable[[bytes], None]
"""Called with every change of the live directory (:meth:`Directory.listen`)."""


class Directory(Protocol):
    """The stored live directory. A method that cannot reach the store raises
    :class:`~server.store.errors.StoreUnavailable` (nothing changed)."""

    async def listen(self, listener: DirectoryListener) -> None:
        """Tell ``listener`` every change from now on; returns once listening (read
        :meth:`entries` after, and nothing is missed)."""
        ...

    async def write(self, puts: list[tuple[str, int, bytes]], drops: list[tuple[str, int]]) -> None:
        """Store each entry of ``puts`` (room code, the room event it is as of, entry) and
        remove the rooms of ``drops`` (room code, event) — each unless the store holds an
        entry of a later event — and tell what was done in one message."""
        ...

    async def entries(self) -> list[bytes]:
        """Every stored entry."""
        ...

    async def featured(self) -> dict[str, str]:
        """The featured race of each game that has one: game → room code."""
        ...

    async def feature(self, game: str, old: str | None, new: str | None) -> str | None:
        """Make ``new`` the featured race of ``game`` if ``old`` still is (compare and set:
        the workers that see a featured race end agree on the next one), and tell it;
        returns the featured race now."""
        ...

    async def close(self) -> None:
        """Stop listening."""
        ...
