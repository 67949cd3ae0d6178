"""``samedeal play --quick GAME``: Play now from the terminal.

:class:`QuickApp` is the race client (:class:`clients.tui.RaceApp`) plus a seek: it speaks
for the terminal's identity on the server (so the timed pools are rated), seeks the pool of
GAME × ``--players`` × ``--time-limit`` and waits with a clock in the title line. After the
wait the server offers something else: ``1``, ``2``, ``3`` take the offers shown (a bot, a
ghost, a room of 2); Ctrl+X stops looking. When a room is filled the seat is taken and the
race plays like any other; after it, Ctrl+G looks for the next one in the same pool.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

from rich.text import Text
from textual.widgets import Static

from protocol import Joined, Seeking, SeekOffer, ServerMessage

from .client import RaceClient, RequestError
from .identity import IdentityFile
from .links import RoomLink
from .tui import RaceApp, shown_rating

__all__ = ["QuickApp"]


class QuickApp(RaceApp):
    """Seek a race in a quick-play pool, then race it."""

    def __init__(
        self,
        url: str,
        game: str,
        *,
        players: int = 2,
        time_limit: int | None = None,
        rated: bool | None = None,
        wait: int = 20,
        name: str = "",
        lang: str | None = None,
        identity: IdentityFile | None = None,
    ) -> None:
        link = RoomLink(url, None, None)
        super().__init__(link, role=None, name=name, lang=lang, identity=identity)
        self.seek_args: dict[str, object] = {
            "game": game,
            "players": players,
            "time_limit": time_limit,
            "rated": rated,
            "wait": wait,
            "name": name,
        }
        #: the ``seeking`` reply while waiting (its ``since`` on this clock), and the offers
        self.seeking: Seeking | None = None
        self.seeking_since = 0.0
        self.offers: list[str] = []
        #: an offer being taken: its reply (a room's ``joined``) is taken before the room's
        #: events that follow it on the wire
        self._taking: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        try:
            client = await RaceClient.connect(
                self.link.url, identity=self.identity, name=self.player_name
            )
        except (OSError, ConnectionError, RequestError) as exc:
            self.say(self.cat.t("tui.could_not_join", error=exc))
            return
        self.client = client
        if client.player is not None and client.player.recovery_code:
            self.new_identity = client.player
            self.say(self.cat.t("tui.new_player", code=client.player.recovery_code))
        await self.seek()
        async for message in client.events():
            if self._taking is not None:
                await asyncio.wait({self._taking})
            self.take_message(message)
            self.refresh_all()
        self.say(self.cat.t("tui.disconnected"))

    async def seek(self) -> None:
        """Look for a race in the pool asked for."""
        assert self.client is not None
        try:
            reply = await self.client.seek(**self.seek_args)  # type: ignore[arg-type]
        except RequestError as exc:
            self.say(self.cat.error_text(exc.code, exc.message))
            return
        self.took(reply)

    def took(self, reply: Seeking) -> None:
        """Waiting in the pool of ``reply``."""
        self.seeking = reply
        self.seeking_since = time.time() - max(0, reply.now - reply.since) / 1000
        self.offers = [o for o in self.offers if o != "smaller" or reply.players == 4]
        self.say(self.cat.t("quick.seeking", pool=self.pool_text(), time="0:00"))
        self.refresh_all()

    def take_message(self, message: ServerMessage) -> None:
        """The seat a pool gave, an offer, or the room's events."""
        if isinstance(message, Joined) and self.seeking is not None:
            self.seeking, self.offers = None, []
            self.role, self.room, self.seat = "player", message.room, message.seat
            self.results = None
            if message.snapshot is not None:
                self.apply_snapshot(message.snapshot)
            self.view = message.view
            self.say(self.cat.t("quick.found"))
        elif isinstance(message, SeekOffer) and self.seeking is not None:
            self.offers = list(message.offers)
            self.say(self.offer_text())
        else:
            self.apply_event(message)

    def pool_text(self) -> str:
        """The pool waited in, in words."""
        reply = self.seeking
        if reply is None:
            return ""
        t = self.cat.t
        minutes = (reply.time_limit or 0) // 60
        limit = t("quick.minutes", n=minutes) if minutes else t("quick.no_limit")
        kind = t("quick.kind.rated" if reply.rated else "quick.kind.casual")
        return " · ".join(
            [t(f"game.{reply.game}"), self.cat.tn("quick.players_n", reply.players), limit, kind]
        )

    def offer_text(self) -> str:
        """The offers and the keys that take them."""
        choices = [f"{n}: {self.cat.t(f'quick.offer.{o}')}" for n, o in enumerate(self.offers, 1)]
        return f"{self.cat.t('quick.offer')}  " + " · ".join(choices)

    # ------------------------------------------------------------------ keys

    def column_key(self, number: int) -> None:
        """While waiting, a digit takes the offer of that number; otherwise as in a race."""
        if self.seeking is not None:
            if 1 <= number <= len(self.offers) and self._taking is None:
                self._taking = asyncio.create_task(self._take(self.offers[number - 1]))
            return
        super().column_key(number)

    async def _take(self, offer: str) -> None:
        try:
            await self._take_offer(offer)
        finally:
            self._taking = None

    async def _take_offer(self, offer: str) -> None:
        assert self.client is not None
        try:
            reply = await self.client.take_offer(offer)
        except RequestError as exc:
            self.say(self.cat.error_text(exc.code, exc.message))
            return
        if isinstance(reply, Seeking):
            self.offers = [o for o in self.offers if o != "smaller"]
            self.took(reply)
            return
        self.seeking, self.offers = None, []
        self.role, self.room, self.seat = "player", reply.room, reply.seat
        if reply.snapshot is not None:
            self.apply_snapshot(reply.snapshot)
        self.view = reply.view
        self.say("")
        self.refresh_all()

    def action_leave(self) -> None:
        """Ctrl+X while waiting: stop looking; otherwise leave the room."""
        if self.seeking is not None and self.client is not None:
            self._spawn(self._cancel())
            return
        super().action_leave()

    async def _cancel(self) -> None:
        assert self.client is not None
        with contextlib.suppress(RequestError):
            await self.client.cancel_seek()
        self.seeking, self.offers = None, []
        self.say(self.cat.t("quick.stopped"))
        self.refresh_all()

    def action_start(self) -> None:
        """Ctrl+G after a race (a pool's room has no host) or after stopping: look again."""
        if self.client is None or self.seeking is not None:
            return
        if self.room is not None and self.phase != "ended":
            return
        self._spawn(self._again())

    async def _again(self) -> None:
        assert self.client is not None
        if self.room is not None:
            with contextlib.suppress(RequestError):
                await self.client.leave()
            self.room = self.seat = None
            self.role, self.phase, self.view = None, "lobby", None
            self.seats, self.participants, self.results = {}, [], None
        await self.seek()

    # ------------------------------------------------------------------ drawing

    def refresh_title(self) -> None:
        """While waiting: the pool and the time waited; otherwise the race's title."""
        if self.seeking is None:
            super().refresh_title()
            return
        waited = max(0, int(time.time() - self.seeking_since))
        clock = f"{waited // 60}:{waited % 60:02d}"
        text = Text(self.cat.t("quick.seeking", pool=self.pool_text(), time=clock))
        reply = self.seeking
        if reply.rating is not None:
            shown = shown_rating(reply.rating, reply.provisional)
            text.append("  " + self.cat.t("quick.your_rating", rating=shown))
        with contextlib.suppress(Exception):
            self.query_one("#title", Static).update(text)

    def refresh_keys(self) -> None:
        """While waiting: the offers, stop looking; after a race: play again."""
        if self.seeking is None and not (self.room is None or self.phase == "ended"):
            super().refresh_keys()
            return
        t = self.cat.t
        keys: list[tuple[str, str]] = []
        if self.seeking is not None:
            keys += [(str(n), t(f"quick.offer.{o}")) for n, o in enumerate(self.offers, 1)]
            keys.append(("^X", t("quick.key.cancel")))
        else:
            keys.append(("^G", t("quick.key.again")))
            if self.room is not None:
                keys.append(("^X", t("tui.leave")))
        keys += [("^L", t("tui.lang")), ("^Q", t("tui.quit"))]
        self.show_keys(keys)
