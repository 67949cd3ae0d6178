"""The live directory's entries, pure: a room's entry from its spectators' snapshot, the
form every worker keeps and the store tells, the directory's orders and the rule of the
featured race (:mod:`server.watching` is the layer that keeps and serves them)."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from protocol import Phase
from protocol.frames import LivePlayerBody, LiveRoomBody, SnapshotBody

from ..rooms.room import FINAL_STATUSES
from ..rooms.view import Boards

__all__ = [
    "FEATURED_POOL",
    "Entry",
    "Listing",
    "encode_entry",
    "live_entry",
    "ordered",
    "pick_featured",
    "top",
]

FEATURED_POOL = 5
"""The featured race is the closest of this many most watched races."""


def live_entry(body: SnapshotBody, created_at: int, boards: Boards) -> LiveRoomBody | None:
    """A room's directory entry from its spectators' snapshot, or None when it is not
    listed: private, closed to spectators, ended, or waiting with nobody in it. ``boards``:
    what the board rule shows a spectator nobody knows of (``rooms.view.NOBODY``)."""
    options = body["options"]
    if options.get("private") or not options.get("spectators", True):
        return None
    phase = body["phase"]
    seats = body["seats"]
    if phase == "ended" or (phase == "lobby" and not any(s["connected"] for s in seats)):
        return None
    players: list[LivePlayerBody] = []
    shares: list[float] = []
    for s in seats:
        status = s["status"]
        total = s.get("total", 0)
        done = s.get("on_foundations", 0)
        players.append(
            {
                "seat": s["seat"],
                "name": s["name"],
                "connected": s["connected"],
                "status": status,
                "on_foundations": done,
                "total": total,
                "score": s.get("score", 0),
                "moves": s.get("moves", 0),
                "elapsed_ms": s.get("elapsed_ms") if status in FINAL_STATUSES else None,
            }
        )
        if phase == "running" and status != "waiting":
            shares.append(done / total if total else 0.0)
    shares.sort(reverse=True)
    return {
        "room": body["room"],
        "game": body["game"],
        "phase": phase,
        "race": body["race"],
        "start_at": body["start_at"] if phase == "running" else None,
        "deadline": body["deadline"] if phase == "running" else None,
        "created_at": created_at,
        "spectators": body["spectators"],
        "spectator_delay": int(options.get("spectator_delay", 0)),
        "players": players,
        "gap": round(shares[0] - shares[1], 4) if len(shares) >= 2 else None,
        "boards": boards,
    }


@dataclass(slots=True)
class Entry:
    """A listed room as every worker keeps it: what it is sorted by, and the entry encoded
    once (thousands change every second: no more is kept of them)."""

    code: str
    game: str
    phase: Phase
    spectators: int
    gap: float | None
    started: int  # its race's start, or the room's creation while it waits
    data: bytes = b"{}"
    seq: int = 0
    at: int = 0  # when it was written, server ms
    by: str = ""  # the worker that wrote it ("": not known, read from the store)

    @classmethod
    def of(
        cls, room_code: str, room: LiveRoomBody, data: bytes, seq: int, at: int, by: str = ""
    ) -> Entry:
        """The entry of a room's :class:`LiveRoomBody`."""
        started = room["start_at"] or room["created_at"]
        game, phase, spectators, gap = room["game"], room["phase"], room["spectators"], room["gap"]
        return cls(room_code, game, phase, spectators, gap, started, data, seq, at, by)

    @classmethod
    def told(cls, item: list[Any], by: str = "") -> Entry:
        """The entry of an item of a store's message (see :func:`encode_entry`), written by
        worker ``by``."""
        room_code, seq, at, game, phase, spectators, gap, started, room = item
        return cls(room_code, game, phase, spectators, gap, started, room.encode(), seq, at, by)


# The orders' keys, computed for every listed room at every push: no calls inside them.
# The tier: 0 a race of two racers or more (it has a gap), 1 a race of one, 2 waiting.


def _closest(e: Entry) -> tuple[int, float, int, int, str]:
    tier = 2 if e.phase == "lobby" else 0 if e.gap is not None else 1
    return (tier, e.gap or 0.0, -e.spectators, -e.started, e.code)


def _watched(e: Entry) -> tuple[int, int, float, int, int, str]:
    tier = 2 if e.phase == "lobby" else 0 if e.gap is not None else 1
    return (-e.spectators, tier, e.gap or 0.0, -e.spectators, -e.started, e.code)


def _newest(e: Entry) -> tuple[int, str]:
    return (-e.started, e.code)


_KEYS: dict[str, Callable[[Entry], tuple[Any, ...]]] = {
    "closest": _closest,
    "watched": _watched,
    "newest": _newest,
}


def ordered(entries: Iterable[Entry], sort: str, game: str | None = None) -> list[Entry]:
    """The entries of ``game`` (all, when None) in ``sort`` order:

    * ``closest``: races of two or more racers, smallest gap first; then races of one
      racer; then rooms waiting to start. Ties: most watched, newest;
    * ``watched``: most spectators first; ties as ``closest``;
    * ``newest``: latest start (creation, for a room waiting to start) first.

    The room code breaks every remaining tie, so every worker lists the same order."""
    chosen = [e for e in entries if game is None or e.game == game]
    chosen.sort(key=_KEYS.get(sort, _closest))
    return chosen


def top(
    entries: Iterable[Entry], sort: str, game: str | None, limit: int
) -> tuple[int, list[Entry]]:
    """How many entries are of ``game``, and the first ``limit`` of them in ``sort`` order
    (:func:`ordered`'s): a push picks 20 of thousands a few times a second, a partial
    selection and not a sort of them all."""
    chosen = [e for e in entries if game is None or e.game == game]
    return len(chosen), heapq.nsmallest(limit, chosen, key=_KEYS.get(sort, _closest))


@dataclass(slots=True)
class _Chosen:
    """The first rooms of one order, as last chosen (with their keys), and whether they must
    be chosen again."""

    rooms: list[Entry] = field(default_factory=list)
    keys: dict[str, tuple[Any, ...]] = field(default_factory=dict)  # each chosen room's
    #: the key of the last room when ``limit`` were chosen (a room sorting before it enters);
    #: None when fewer were (any room of the game enters)
    last: tuple[Any, ...] | None = None
    stale: bool = True


class Listing:
    """Every listed room, and the first rooms of each subscribed order kept chosen as the
    entries change: a change can alter an order's first rooms only when it is about one of
    them or sorts before the last of them, so a push re-chooses only then (with thousands
    of rooms changing, the pushes walked every entry a few times a second: the largest part
    of a worker's push, in a profile of bench/watch.py). Only :meth:`put` and
    :meth:`remove` change :attr:`entries`."""

    def __init__(self) -> None:
        #: every listed room, by store code (read it; change it through put and remove)
        self.entries: dict[str, Entry] = {}
        self._counts: dict[str, int] = {}  # listed rooms per game
        self._chosen: dict[tuple[str, str | None, int], _Chosen] = {}

    def put(self, entry: Entry) -> None:
        """List ``entry``, in place of the room's entry if it had one."""
        room_code = entry.code
        if self.entries.get(room_code) is None:
            self._counts[entry.game] = self._counts.get(entry.game, 0) + 1
        self.entries[room_code] = entry
        for (sort, game, _), chosen in self._chosen.items():
            if chosen.stale or (game is not None and entry.game != game):
                continue
            key = _KEYS[sort](entry)
            kept = chosen.keys.get(room_code)
            if kept is not None:
                if key != kept:  # it may move: chosen again
                    chosen.stale = True
                    continue
                # the same place (a room's progress, mostly): its entry replaced there
                for i, e in enumerate(chosen.rooms):
                    if e.code == room_code:
                        chosen.rooms[i] = entry
                        break
            elif chosen.last is None or key < chosen.last:
                chosen.stale = True

    def remove(self, room_code: str) -> None:
        """Stop listing the room of ``room_code`` (nothing when it is not listed)."""
        entry = self.entries.pop(room_code, None)
        if entry is None:
            return
        self._counts[entry.game] -= 1
        for chosen in self._chosen.values():
            if room_code in chosen.keys:
                chosen.stale = True

    def total(self, game: str | None) -> int:
        """How many rooms are listed (of ``game``)."""
        return len(self.entries) if game is None else self._counts.get(game, 0)

    def first(self, sort: str, game: str | None, limit: int) -> list[Entry]:
        """The first ``limit`` rooms of ``game`` in ``sort`` order (:func:`ordered`'s),
        kept chosen from now on (until :meth:`forget`): for the orders pushed to
        subscribers, not for one-off requests (:func:`top`)."""
        sort = sort if sort in _KEYS else "closest"
        chosen = self._chosen.setdefault((sort, game, limit), _Chosen())
        if chosen.stale:
            _, rooms = top(self.entries.values(), sort, game, limit)
            key = _KEYS[sort]
            chosen.rooms = rooms
            chosen.keys = {e.code: key(e) for e in rooms}
            chosen.last = chosen.keys[rooms[-1].code] if rooms and len(rooms) == limit else None
            chosen.stale = False
        return chosen.rooms

    def forget(self, sort: str, game: str | None, limit: int) -> None:
        """Stop keeping an order's first rooms chosen (nobody subscribes to it any more)."""
        self._chosen.pop((sort if sort in _KEYS else "closest", game, limit), None)


def pick_featured(entries: Iterable[Entry], game: str) -> str | None:
    """The featured race of ``game``: of its running races with two racers or more, the
    :data:`FEATURED_POOL` most watched (and any as watched as the last of them: a tie
    does not leave a closer race out), and of those the closest (ties: most watched, then
    the room code); when no race has two racers, the most watched running race (ties: the
    newest, then the code). None when no race of the game is running."""
    running = [e for e in entries if e.game == game and e.phase == "running"]
    contested = [e for e in running if e.gap is not None]
    if contested:
        counts = sorted((e.spectators for e in contested), reverse=True)
        least = counts[min(FEATURED_POOL, len(counts)) - 1]
        pool = [e for e in contested if e.spectators >= least]
        return min(pool, key=lambda e: (e.gap or 0.0, -e.spectators, e.code)).code
    if running:
        return min(running, key=lambda e: (-e.spectators, -e.started, e.code)).code
    return None


def encode_entry(room_code: str, seq: int, at: int, entry: LiveRoomBody, data: bytes) -> bytes:
    """An entry as stored and told: a JSON array of the room's code, the event it is as of,
    when it was written (server ms), what it is sorted by (game, phase, spectators, gap,
    start) and the entry itself (``data``) as one JSON string — every worker decodes
    thousands of entries a second, and a string is one object to make, not dozens."""
    started = entry["start_at"] or entry["created_at"]
    sort_by = [entry["game"], entry["phase"], entry["spectators"], entry["gap"], started]
    return orjson.dumps([room_code, seq, at, *sort_by, data.decode()])
