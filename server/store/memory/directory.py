"""The live directory in one process: entries and featured races in dicts, every change
told to the listeners at once."""

from __future__ import annotations

import orjson

from ..directory import DirectoryListener

__all__ = ["MemoryDirectory"]


class MemoryDirectory:
    """:class:`~server.store.directory.Directory` in dicts: room code → (seq, entry);
    game → featured room."""

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self._entries: dict[str, tuple[int, bytes]] = {}
        self._featured: dict[str, str] = {}
        self._listeners: list[DirectoryListener] = []

    def _tell(self, message: bytes) -> None:
        for listener in list(self._listeners):
            listener(message)

    async def listen(self, listener: DirectoryListener) -> None:
        """Call ``listener`` with every change."""
        self._listeners.append(listener)

    async def write(self, puts: list[tuple[str, int, bytes]], drops: list[tuple[str, int]]) -> None:
        """Keep and forget entries unless later ones are kept; tell it in one message."""
        done_puts, done_drops = [], []
        for room_code, seq, entry in puts:
            kept = self._entries.get(room_code)
            if kept is None or kept[0] <= seq:
                self._entries[room_code] = (seq, entry)
                done_puts.append(entry)
        for room_code, seq in drops:
            kept = self._entries.get(room_code)
            if kept is None or kept[0] <= seq:
                self._entries.pop(room_code, None)
                done_drops.append([room_code, seq])
        if done_puts or done_drops:
            head = orjson.dumps({"by": self.worker_id, "drop": done_drops})[:-1]
            self._tell(head + b',"put":[' + b",".join(done_puts) + b"]}")

    async def entries(self) -> list[bytes]:
        """The kept entries."""
        return [entry for _, entry in self._entries.values()]

    async def featured(self) -> dict[str, str]:
        """The featured races."""
        return dict(self._featured)

    async def feature(self, game: str, old: str | None, new: str | None) -> str | None:
        """Compare and set the featured race of ``game``."""
        current = self._featured.get(game)
        if current != old:
            return current
        if new is None:
            self._featured.pop(game, None)
        else:
            self._featured[game] = new
        self._tell(orjson.dumps({"tv": game, "room": new}))
        return new

    async def close(self) -> None:
        """Nothing to stop: the listeners are called directly."""
