"""The terminal client on a tournament: its standings beside the board, each round's race.

:class:`TournamentApp` is the race client (:class:`clients.tui.RaceApp`) plus a tournament:
it identifies (the terminal's identity for the server), opens the tournament (or joins it),
shows the standings as they are pushed, and when a round starts with this player in it,
takes the seat it is handed and plays the race like any other. Between rounds the side
panel shows the standings and the last round's results.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.widgets import Static

from protocol import (
    ServerMessage,
    TournamentEvent,
    TournamentReply,
    TournamentSeat,
    TournamentStandings,
)

from .links import RoomLink
from .tui import RaceApp

if TYPE_CHECKING:
    from .tournament_link import TournamentLink

__all__ = ["TournamentApp"]


class TournamentApp(RaceApp):
    """Follow (``join``: and play) a tournament from the terminal."""

    def __init__(
        self, link: TournamentLink, *, join: bool = False, name: str = "", lang: str | None = None
    ) -> None:
        super().__init__(RoomLink(link.url, None, link.key), role="spectator", name=name, lang=lang)
        self.tlink = link
        self.join = join
        self.tname = ""
        self.tphase = "created"
        self.rounds = 0
        self.round_no = 0
        self.me: str | None = None
        self.standings: list[dict[str, Any]] = []
        self.mine: dict[str, Any] | None = None
        self.live: dict[str, Any] | None = None

    async def _run(self) -> None:
        from .client import RequestError, identified

        assert self.tlink.tournament is not None
        try:
            client = await identified(self.tlink.url, self.player_name)
            self.client = client
            self.me = client.player_id
            if self.join:
                reply = await client.tournament_join(
                    self.tlink.tournament, name=self.player_name, key=self.tlink.key
                )
            else:
                reply = await client.tournament_open(self.tlink.tournament, key=self.tlink.key)
        except RequestError as exc:
            self.say(
                self.cat.t("tui.could_not_join", error=self.cat.error_text(exc.code, exc.message))
            )
            return
        except (OSError, ConnectionError) as exc:
            self.say(self.cat.t("tui.could_not_join", error=exc))
            return
        self.take_page(reply)
        if reply.you.seat is not None:
            await self._sit(reply.you.seat)
        self.refresh_all()
        async for message in client.events():
            await self.take_message(message)
            self.refresh_all()
        self.say(self.cat.t("tui.disconnected"))

    def take_page(self, reply: TournamentReply) -> None:
        """Take the tournament as of its page."""
        page = reply.page
        self.tname, self.tphase = page.settings.name, page.phase
        self.rounds, self.round_no = page.settings.rounds, page.round
        self.standings = [row.model_dump() for row in page.standings]
        self.mine = next((r for r in self.standings if r["player"] == self.me), None)

    async def _sit(self, seat: TournamentSeat) -> None:
        """Take this round's seat: the race view follows it."""
        assert self.client is not None
        joined = await self.client.take_seat(seat)
        self.role, self.seat = "player", joined.seat
        if joined.snapshot is not None:
            self.apply_snapshot(joined.snapshot)
        self.view = joined.view
        self.results = None

    async def take_message(self, message: ServerMessage) -> None:
        """A tournament's message, or the room's."""
        t = self.cat.t
        if isinstance(message, TournamentSeat):
            self.say(t("tournament.round_starting", n=message.round))
            await self._sit(message)
        elif isinstance(message, TournamentStandings):
            self.standings = [row.model_dump() for row in message.top]
            self.mine = message.you.model_dump() if message.you is not None else None
            self.live = message.live.model_dump() if message.live is not None else None
        elif isinstance(message, TournamentEvent):
            self.take_event(message)
        else:
            self.apply_event(message)

    def take_event(self, event: TournamentEvent) -> None:
        """Say what happened in the tournament."""
        t, data = self.cat.t, event.data
        if event.kind == "round_starting":
            self.tphase, self.round_no = "round", int(data["round"])
            if self.me in data.get("absent", ()):
                self.say(t("tournament.absent", n=data["round"]))
        elif event.kind == "round_ended":
            self.tphase, self.live = "between", None
            self.say(t("tournament.round_ended", n=data["round"], deal=data["deal"]))
        elif event.kind == "tournament_finished":
            self.tphase = "finished"
            self.say(t("tournament.finished"))
        elif event.kind == "announcement":
            self.say(t("tournament.announcement", text=data["text"]))
        elif event.kind in ("player_kicked", "player_banned") and data.get("player") == self.me:
            key = "tournament.kicked" if event.kind == "player_kicked" else "tournament.banned"
            self.say(t(key, reason=data["reason"]))
        elif event.kind in ("tournament_paused", "tournament_resumed", "tournament_started"):
            self.tphase = {"tournament_paused": "paused"}.get(event.kind, "between")

    def refresh_side(self) -> None:
        """The standings (top rows and your own), the round being played, the room."""
        cat, t = self.cat, self.cat.t
        text = Text()
        text.append(f"{self.tname}\n", style="bold")
        text.append(t(f"tournament.phase.{self.tphase}", n=self.round_no, total=self.rounds))
        text.append("\n\n" + t("tournament.standings") + "\n", style="bold")
        rows = list(self.standings[:10])
        if self.mine is not None and self.mine not in rows:
            rows.append(self.mine)
        for row in rows:
            mine = row["player"] == self.me
            line = f"{row['rank']:>3}. {str(row['name'])[:18]:<18} "
            line += cat.tn("stats.points", int(row["points"])) + "\n"
            text.append(line, style="bold yellow" if mine else None)
        if self.live is not None:
            text.append(
                "\n" + t("tournament.round_live", n=self.live["round"],
                         finished=self.live["finished"], players=self.live["participants"]),
                style="bold",
            )  # fmt: skip
            text.append("\n")
            for row in self.live["top"]:
                text.append(f"{row['place']:>3}. {str(row['name'])[:18]:<18} ")
                text.append(self._status(row["status"]) + "\n")
        if self.seats and self.role == "player":
            text.append("\n" + t("players.title") + "\n", style="bold")
            for n in sorted(self.seats):
                s = self.seats[n]
                done = int(s.get("on_foundations") or 0)
                text.append(f"{str(s.get('name', ''))[:16]:<16} {done:>3} ")
                text.append(self._status(s.get("status")) + "\n")
        with contextlib.suppress(Exception):
            self.query_one("#side", Static).update(text)
