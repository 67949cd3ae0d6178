"""The live directory: the public races being played now and those about to start, their
orders, the featured race of each game, and the connections subscribed to them.

Computed from what already flows, never by looking through the rooms. A worker writes
the entry of a room it has (:func:`live_entry`, from the room's feed: what its spectators
see, after the spectator delay) to the store when the feed releases a change that the
entry shows — each room at most once a :data:`ROOM_EVERY` (a paced room changes several
times a second: written twice a second at most, the directory's cost grows with its
rooms, not with their moves), the rooms due all in one write, at most every
:data:`WRITE_EVERY` seconds — and the store tells every worker each write
(``Directory.listen``), so each worker keeps a copy of the whole directory and
answers ``GET /api/live`` and the ``live`` subscriptions from it: the same on every
worker.

One worker writes a room: the one whose write the directory shows last (the store orders
the writes, so every worker agrees which). Another worker with the room stands by: it
writes only a change the room's writer has not written within :data:`TAKE_OVER_AFTER`
(the writer left the room, or died), and is the writer from then on. Two that take over
at once write the same entry (the one of the later event stays). An entry nobody has
written for :data:`STALE_AFTER` seconds (its workers left the room, or died) is dropped —
while a room is listed, its writer writes it again every :data:`REFRESH_EVERY` seconds.


A room's entry and the directory's orders are pure functions, in :mod:`server.watching.entries`.
The featured race of a game (``GET /tv``) is chosen by :func:`pick_featured` when there is
none and when the featured one leaves the directory (its race ended): it stays until then.
The workers agree through the store (``Directory.feature``: compare and set).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import typing
from dataclasses import dataclass, field
from http import HTTPStatus

import orjson
from websockets.http11 import Response

from protocol import LIVE_LIMIT, GameName, Live, LiveSort, frames
from protocol.frames import FeaturedBody

from ..codes import display_code, normalize_code
from ..config import now_ms
from ..context import Context
from ..edge.connection import Conn
from ..edge.http import HttpRequest, error_response, json_response
from ..rooms.registry import Event, LocalRoom
from ..rooms.view import NOBODY, boards_shown
from ..store.errors import StoreUnavailable
from .entries import Entry, Listing, encode_entry, live_entry, pick_featured, top

__all__ = [
    "GAMES",
    "REFRESH_EVERY",
    "ROOM_EVERY",
    "SORTS",
    "STALE_AFTER",
    "TAKE_OVER_AFTER",
    "WRITE_EVERY",
    "Watching",
]

logger = logging.getLogger("samedeal.server")

GAMES: tuple[str, ...] = typing.get_args(GameName)
SORTS: tuple[str, ...] = typing.get_args(LiveSort)
WRITE_EVERY = 0.1
"""A worker writes the entries of its rooms that changed at most this often (seconds): one
write for them all, each the room's latest state."""
ROOM_EVERY = 0.5
"""A room's entry is written at most this often (seconds): its changes meanwhile are
coalesced, as the rooms' spectator counts are. With WRITE_EVERY and PUSH_EVERY, a change
reaches the subscribers within ROOM_EVERY + WRITE_EVERY + PUSH_EVERY = 0.85 s and the
store's round trip (issue 17: ≤ 1 s), however often the room changes."""
TAKE_OVER_AFTER = 1.5
"""A change of a room that its writer has not written after this long (seconds) is
written by another worker with the room (the writer left it, or died)."""
PUSH_EVERY = 0.25
"""A subscriber is sent the directory at most this often (seconds)."""
REFRESH_EVERY = 5.0
"""A listed room's entry is written again this often by each worker with the room."""
STALE_AFTER = 15.0
"""An entry nobody wrote for this long is dropped."""
_CHANGES = frozenset(
    {"loaded", "seat", "spectators", "race_starting", "progress", "player_finished", "race_ended"}
)


# --------------------------------------------------------------------- the layer


ViewKey = tuple[str, str | None, int]


@dataclass(slots=True)
class _View:
    """The subscribers of one (sort, game, limit), and what they were sent last."""

    subscribers: set[Conn] = field(default_factory=set)
    sent: bytes = b""


class Watching:
    """The live directory layer of a worker."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: every listed room, as the store told it, and the first rooms of each view
        self.listing = Listing()
        #: every listed room, by store code (read only: the listing changes it)
        self.mirror: dict[str, Entry] = self.listing.entries
        #: game → the featured race's store code
        self.featured: dict[str, str] = {}
        self._views: dict[ViewKey, _View] = {}
        self._written: dict[str, float] = {}  # local room → when this worker last wrote it
        #: local room → its changes not written yet: the seq of the first, when it came
        #: (loop time), the seq of the last
        self._dirty_rooms: dict[str, tuple[int, float, int]] = {}
        self._own = b'{"by":' + orjson.dumps(ctx.worker_id) + b","  # this worker's messages
        self._write_due: asyncio.TimerHandle | None = None
        self._wrote = float("-inf")
        self._push_due: asyncio.TimerHandle | None = None
        self._pushed = float("-inf")
        self._swapping: set[str] = set()
        self._closed = False
        ctx.rooms.release_hooks.append(self._on_release)
        ctx.rooms.drop_hooks.append(self._on_drop)
        ctx.http.get("/api/live", self._api_live)

    async def start(self) -> None:
        """Listen to the directory's changes, then read what is stored (nothing missed)."""
        directory = self.ctx.store.directory
        await directory.listen(self._on_live)
        for data in await directory.entries():
            self._take(Entry.told(orjson.loads(data)))
        self.featured.update(await directory.featured())
        self.ctx.tasks.spawn(self._refresh_loop(), "live directory")

    def close(self) -> None:
        """Cancel the timers, and set no more (shutdown)."""
        self._closed = True
        if self._write_due is not None:
            self._write_due.cancel()
        if self._push_due is not None:
            self._push_due.cancel()

    # ------------------------------------------------------------------ local rooms → store

    def _on_release(self, local: LocalRoom, event: Event) -> None:
        if event.get("type") in _CHANGES and local.feed is not None:
            self._dirty(local.room_code, local.feed.seq)

    def _dirty(self, room_code: str, seq: int) -> None:
        """The room changed as of event ``seq``: written when due."""
        kept = self._dirty_rooms.get(room_code)
        if kept is None:
            self._dirty_rooms[room_code] = (seq, asyncio.get_running_loop().time(), seq)
        elif seq > kept[2]:
            self._dirty_rooms[room_code] = (kept[0], kept[1], seq)
        self._schedule()

    def _schedule(self) -> None:
        if self._write_due is not None or self._closed or not self._dirty_rooms:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._wrote + WRITE_EVERY - loop.time())
        self._write_due = loop.call_later(
            wait, lambda: self.ctx.tasks.spawn(self._write(), "live directory write")
        )

    def _due(
        self, room_code: str, first: int, since: float, last: int, loop_now: float, now: int
    ) -> bool:
        """Whether this worker is to write a changed room now: as the room's writer (or
        when none is known), once ROOM_EVERY has passed since it last wrote the room; when
        another worker is the writer, only once that one has left a change unwritten for
        TAKE_OVER_AFTER, or not refreshed the entry (what it wrote is forgotten here)."""
        kept = self.mirror.get(room_code)
        if kept is None or kept.by in ("", self.ctx.worker_id):
            return loop_now - self._written.get(room_code, float("-inf")) >= ROOM_EVERY
        fresh = now - kept.at < (REFRESH_EVERY + TAKE_OVER_AFTER) * 1000
        if fresh and kept.seq >= last:
            del self._dirty_rooms[room_code]  # the writer wrote it all
            return False
        if fresh and kept.seq >= first:  # it wrote some: the rest is waited for from now
            self._dirty_rooms[room_code] = (last, loop_now, last)
            return False
        return not fresh or loop_now - since >= TAKE_OVER_AFTER

    async def _write(self) -> None:
        """Write the entries of the changed rooms that are due (removed when no longer
        listed); a room whose entry would show nothing new is not written."""
        loop = asyncio.get_running_loop()
        self._write_due = None
        self._wrote = loop_now = loop.time()
        me = self.ctx.worker_id
        puts: list[tuple[str, int, bytes]] = []
        drops: list[tuple[str, int]] = []
        taken: list[Entry] = []
        now = now_ms()
        for room_code, (first, since, last) in list(self._dirty_rooms.items()):
            local = self.ctx.rooms.get(room_code)
            feed = local.feed if local is not None else None
            if feed is None or feed.body is None:
                del self._dirty_rooms[room_code]
                continue
            if not self._due(room_code, first, since, last, loop_now, now):
                continue
            del self._dirty_rooms[room_code]
            kept = self.mirror.get(room_code)
            assert local is not None
            facts = local.facts(feed.body["phase"])
            entry = live_entry(feed.body, feed.created_at, boards_shown(NOBODY, facts, now))
            if entry is not None:
                data = orjson.dumps(entry)
                if kept is not None and kept.data == data and now - kept.at < REFRESH_EVERY * 1000:
                    continue  # the directory shows it already
                self._written[room_code] = loop_now
                puts.append(
                    (room_code, feed.seq, encode_entry(room_code, feed.seq, now, entry, data))
                )
                taken.append(Entry.of(room_code, entry, data, feed.seq, now, me))
            elif kept is not None:
                self._written[room_code] = loop_now
                drops.append((room_code, feed.seq))
        if puts or drops:
            try:
                await self.ctx.store.directory.write(puts, drops)
            except StoreUnavailable:
                # written again once the store is back (the refresh loop would, at the
                # latest): this worker's copy is left as the store has it
                for room_code, seq, _ in puts:
                    self._dirty_rooms.setdefault(room_code, (seq, loop_now, seq))
                for room_code, seq in drops:
                    self._dirty_rooms.setdefault(room_code, (seq, loop_now, seq))
                loop.call_later(1.0, self._schedule)
                return
            # the store tells the other workers; this one's copy is kept here
            for e in taken:
                self._take(e)
            for room_code, seq in drops:
                self._untake(room_code, seq)
            self._changed()
        self._schedule()  # the rooms not due yet

    def _on_drop(self, local: LocalRoom) -> None:
        # the room's entry stays until another worker with the room writes it, or it is
        # stale; this worker stops writing it
        self._dirty_rooms.pop(local.room_code, None)
        self._written.pop(local.room_code, None)

    async def _refresh_loop(self) -> None:
        """Write the listed rooms again now and then, and drop stale entries."""
        while True:
            await asyncio.sleep(REFRESH_EVERY / 2)
            try:
                self._refresh()
            except Exception:
                logger.exception("live directory refresh failed")

    def _refresh(self) -> None:
        now = now_ms()
        old = now - int(REFRESH_EVERY * 1000)
        for room_code, local in self.ctx.rooms.rooms.items():
            kept = self.mirror.get(room_code)
            if kept is not None and kept.at <= old and local.feed is not None:
                # written again by its writer; by this worker once it is not (TAKE_OVER_AFTER)
                self._dirty(room_code, kept.seq)
        oldest = now - int(STALE_AFTER * 1000)
        stale = [e for e in self.mirror.values() if e.at < oldest]
        for e in stale:
            self.listing.remove(e.code)
        if stale:
            self.ctx.tasks.spawn(self._drop_stale(stale), "live stale")
            self._changed()

    async def _drop_stale(self, entries: list[Entry]) -> None:
        with contextlib.suppress(StoreUnavailable):  # another refresh tries again
            await self.ctx.store.directory.write([], [(e.code, e.seq) for e in entries])

    # ------------------------------------------------------------------ store → copy

    def _on_live(self, data: bytes) -> None:
        """A change of the directory, from any worker (this one's own writes are in the
        copy already)."""
        if data.startswith(self._own):
            return
        message = orjson.loads(data)
        by = message.get("by", "")
        if "tv" in message:
            game, room = message["tv"], message.get("room")
            if room:
                self.featured[game] = room
            else:
                self.featured.pop(game, None)
        elif by == self.ctx.worker_id:
            return
        for item in message.get("put", ()):
            self._take(Entry.told(item, by))
        for room_code, seq in message.get("drop", ()):
            self._untake(room_code, seq)
        self._changed()

    def _take(self, entry: Entry) -> None:
        """Keep ``entry`` unless the one kept is of a later event (the store's rule)."""
        kept = self.mirror.get(entry.code)
        if kept is None or kept.seq <= entry.seq:
            self.listing.put(entry)

    def _untake(self, room_code: str, seq: int) -> None:
        kept = self.mirror.get(room_code)
        if kept is not None and kept.seq <= seq:
            self.listing.remove(room_code)

    def _changed(self) -> None:
        """The directory changed: the featured races are looked at and the subscribers
        get it, at most every PUSH_EVERY (not at each change: thousands a second)."""
        if self._push_due is not None or self._closed:
            return
        loop = asyncio.get_running_loop()
        wait = max(0.0, self._pushed + PUSH_EVERY - loop.time())
        self._push_due = loop.call_later(wait, self._push)

    # ------------------------------------------------------------------ featured races

    def _check_featured(self) -> None:
        for game in GAMES:
            current = self.featured.get(game)
            kept = self.mirror.get(current) if current is not None else None
            if kept is not None and kept.phase == "running":
                continue
            chosen = pick_featured(self.mirror.values(), game)
            if chosen != current and game not in self._swapping:
                self._swapping.add(game)
                self.ctx.tasks.spawn(self._feature(game, current, chosen), "featured race")

    async def _feature(self, game: str, old: str | None, new: str | None) -> None:
        try:
            now = await self.ctx.store.directory.feature(game, old, new)
        except StoreUnavailable:
            now = old
        finally:
            self._swapping.discard(game)
        if now is None:
            self.featured.pop(game, None)
        else:
            self.featured[game] = now
        if now != new:  # another worker chose first, or the store was away: look again
            self._changed()

    def featured_list(self) -> list[FeaturedBody]:
        """The featured race of each game (display codes)."""
        out: list[FeaturedBody] = []
        for game in GAMES:
            room_code = self.featured.get(game)
            out.append({"game": game, "room": display_code(room_code) if room_code else None})
        return out

    # ------------------------------------------------------------------ subscribers

    def directory(self, sort: str, game: str | None, limit: int) -> tuple[int, bytes]:
        """How many rooms are listed (of ``game``), and the first ``limit`` in ``sort``
        order as a JSON array."""
        total, rooms = top(self.mirror.values(), sort, game, limit)
        return total, b"[" + b",".join(e.data for e in rooms) + b"]"

    def _frame(self, key: ViewKey) -> tuple[bytes, bytes]:
        """The ``live_rooms`` frame of a view, and what it says (to compare)."""
        sort, game, limit = key
        total = self.listing.total(game)
        rooms = b"[" + b",".join(e.data for e in self.listing.first(sort, game, limit)) + b"]"
        featured = self.featured_list()
        content = b"%d" % total + rooms + orjson.dumps(featured)
        frame = frames.live_rooms(
            sort=sort, game=game, total=total, now=now_ms(), rooms=rooms, featured=featured
        )
        return frame, content

    def _push(self) -> None:
        self._push_due = None
        self._pushed = asyncio.get_running_loop().time()
        self._check_featured()
        for key, view in list(self._views.items()):
            if not view.subscribers:
                del self._views[key]
                self.listing.forget(*key)
                continue
            frame, content = self._frame(key)
            if content != view.sent:
                view.sent = content
                self.ctx.rooms.send(view.subscribers, frame)

    async def on_live(self, conn: Conn, msg: Live) -> None:
        """``live``: subscribe to the directory (``limit: 0`` ends it); the list is sent at
        once, then whenever it changes."""
        self.forget(conn)
        if msg.limit == 0:
            return
        key: ViewKey = (msg.sort, msg.game, msg.limit)
        view = self._views.setdefault(key, _View())
        frame, content = self._frame(key)
        view.subscribers.add(conn)
        conn.live = key
        self.ctx.metrics.live_subscribers += 1
        if not view.sent:
            view.sent = content
        self.ctx.rooms.send([conn], frame)

    def forget(self, conn: Conn) -> None:
        """End ``conn``'s subscription, if any (it closed, or asked)."""
        key, conn.live = conn.live, None
        if key is None:
            return
        self.ctx.metrics.live_subscribers -= 1
        view = self._views.get(key)
        if view is not None:
            view.subscribers.discard(conn)

    # ------------------------------------------------------------------ HTTP

    async def _api_live(self, request: HttpRequest) -> Response:
        """``GET /api/live?sort=&game=&limit=``: the directory (``protocol.api``'s
        ``LiveDirectory``)."""
        query = request.query
        sort = query.get("sort") or "closest"
        game = query.get("game") or None
        if sort not in SORTS:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_sort", f"sort: one of {SORTS}")
        if game is not None and game not in GAMES:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_game", f"game: one of {GAMES}")
        try:
            limit = int(query.get("limit") or 20)
        except ValueError:
            limit = 0
        if not 1 <= limit <= LIVE_LIMIT:
            return error_response(
                HTTPStatus.BAD_REQUEST, "bad_limit", f"limit: from 1 to {LIVE_LIMIT}"
            )
        total, rooms = self.directory(sort, game, limit)
        head = orjson.dumps(
            {
                "sort": sort,
                "game": game,
                "total": total,
                "now": now_ms(),
                "featured": self.featured_list(),
            }
        )
        return json_response(head[:-1] + b',"rooms":' + rooms + b"}")

    def room_listed(self, text: str) -> bool:
        """Whether the room a code names is in the directory (for tests and tools)."""
        room_code = normalize_code(text)
        return room_code is not None and room_code in self.mirror
