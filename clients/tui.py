"""The terminal client: a Textual app to race (or watch a race) in a room.

Moves are typed in the move notation (press ``:`` to type, Enter to send) or chosen with
the cursor: ←/→ move between piles, ↑/↓ choose how many cards of a column, Enter picks a
card and Enter again drops it; ``1``–``9`` pick a column's top card or drop the picked
cards on that column; ``f`` sends the card under the cursor to a foundation ("tap"),
``t`` to the table ("double tap"), ``s`` turns the stock, ``u`` undoes, ``a``
auto-finishes. Ctrl+R asks, then resigns on a second Ctrl+R. Ctrl+X leaves the room (a
race is given up first: asked like Ctrl+R). When the host offers a rematch, ``y`` races it
and ``n`` sits it out. Spectators follow up to four players' boards at once and switch
between them at once (``n`` the next, ``1``–``4`` one of them); boards refused while
hidden (a tournament round's) are followed again when the room says they are open
(``boards_open``). ``c``, ``o``, ``h``, ``g``
send a reaction (applause, wow, fire, gg). Ctrl+L switches the language (English, Russian,
Swedish: the browser's catalogues, :mod:`clients.i18n`).

:class:`WatchApp` is ``samedeal watch``: the live directory, kept live by a subscription,
to pick a race from.

Names and everything else from other users are drawn as plain ``rich.text.Text``, never
parsed as markup.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from protocol import (
    MAX_FOLLOWED,
    Ack,
    Board,
    BoardsOpen,
    IdentityReply,
    LiveRooms,
    Phase,
    PlayerFinished,
    Progress,
    RaceEnded,
    RaceRecordDelayed,
    RaceRecorded,
    RaceStarting,
    RatingChange,
    Reactions,
    Rejected,
    RematchOffer,
    RematchOffered,
    Resync,
    Role,
    RoomSnapshot,
    SeatEvent,
    ServerMessage,
    Spectators,
)
from protocol import Error as ErrorMessage

from .api import game_page_url, server_base
from .client import RaceClient, RequestError
from .daily_share import (
    DailyResult,
    daily_share_text,
    daily_url,
    daily_watch_text,
    day_number,
    day_of_race,
    deck_turn_step,
)
from .i18n import LANGUAGES, Catalogue, detect_lang
from .identity import IdentityFile
from .links import RoomLink

__all__ = [
    "REACTION_KEYS",
    "BoardView",
    "RaceApp",
    "WatchApp",
    "live_lines",
    "render_board",
    "share_url",
]

REACTION_KEYS = {"c": "clap", "o": "wow", "h": "fire", "g": "gg"}
"""The keys that send a reaction."""

SUIT_SYMBOLS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
EH_SLOT_SUITS = "SHCDSHCD"
RED_STYLE = "bold red3 on grey93"
BLACK_STYLE = "bold grey0 on grey93"
BACK_STYLE = "bright_white on dark_blue"
EMPTY_STYLE = "grey62 on dark_green"
CURSOR = "reverse"
PICKED = "on yellow"


def card_text(name: str) -> Text:
    """One face-up card, three cells wide, in its colour."""
    rank = "10" if name[0] == "T" else name[0]
    style = RED_STYLE if name[1] in "HD" else BLACK_STYLE
    return Text(f"{rank:>2}{SUIT_SYMBOLS[name[1]]}", style=style)


def back_text() -> Text:
    """A face-down card."""
    return Text("░░░", style=BACK_STYLE)


def empty_text(mark: str = " · ") -> Text:
    """An empty pile (a foundation shows its suit in Easy Harp)."""
    return Text(f"{mark:^3}", style=EMPTY_STYLE)


def share_url(server_url: str, deal: str) -> str:
    """The page that starts a room on ``deal``: the server's web address + ``/d/DEAL``."""
    base = server_url.replace("wss://", "https://", 1).replace("ws://", "http://", 1)
    return f"{base.rstrip('/')}/d/{deal}"


def shown_rating(rating: int, provisional: bool) -> str:
    """A rating as players see it: whole points, "?" while provisional (``1520?``)."""
    return f"{rating}{'?' if provisional else ''}"


def shown_change(change: RatingChange) -> str:
    """A racer's new rating and what the race changed: ``1520 (+12)``."""
    sign = "+" if change.change > 0 else "−" if change.change < 0 else "±"
    return f"{shown_rating(change.rating, change.provisional)} ({sign}{abs(change.change)})"


def _fmt_time(ms: int | None) -> str:
    if ms is None:
        return "–"
    s = max(0, ms) // 1000
    return f"{s // 60}:{s % 60:02d}"


def render_board(
    view: dict[str, Any],
    *,
    cursor: str | None = None,
    count: int = 1,
    picked: tuple[str, int] | None = None,
) -> Text:
    """The board as coloured text: stock, waste and foundations, then the columns."""
    harp = len(view["foundations"]) == 8  # Easy Harp: two decks
    out = Text()

    def styled(piece: Text, pile: str, index_from_top: int = 0) -> Text:
        if picked is not None and pile == picked[0] and index_from_top < picked[1]:
            piece.stylize(PICKED)
        if pile == cursor and index_from_top < (count if pile.startswith("t") else 1):
            piece.stylize(CURSOR)
        return piece

    stock = view["stock"]
    out.append("s ")
    out.append(styled(back_text() if stock else empty_text("↻"), "s"))
    out.append(f" {stock:<3} w ")
    waste = view["waste"]
    tops = waste["top"]
    if tops:
        for i, name in enumerate(tops):
            out.append(
                styled(card_text(name), "w", len(tops) - 1 - i)
                if i == len(tops) - 1
                else card_text(name)
            )
    else:
        out.append(styled(empty_text(), "w"))
    out.append(f" {waste['count']:<3}")
    out.append("\n")
    for i, pile in enumerate(view["foundations"]):
        label = f"f{i + 1}"
        out.append(f"{label} ")
        mark = SUIT_SYMBOLS[EH_SLOT_SUITS[i]] if harp else " · "
        piece = card_text(pile[-1]) if pile else empty_text(mark)
        out.append(styled(piece, label))
        out.append(" ")
    out.append("\n\n")
    columns = view["tableau"]
    out.append(" ".join(f" t{i + 1:<2}" for i in range(len(columns))))
    out.append("\n")
    height = max((c["down"] + len(c["up"]) for c in columns), default=0)
    for row in range(max(height, 1)):
        for i, col in enumerate(columns):
            pile = f"t{i + 1}"
            down, up = col["down"], col["up"]
            out.append(" ")
            if row < down:
                out.append(back_text())
            elif row < down + len(up):
                from_top = down + len(up) - 1 - row
                out.append(styled(card_text(up[row - down]), pile, from_top))
            elif row == 0:
                out.append(styled(empty_text(), pile))
            else:
                out.append("   ")
            out.append(" ")
        out.append("\n")
    return out


class BoardView(Static, can_focus=True):
    """The board; holds the cursor when the player chooses moves with the keys."""

    # The key line under the board says what the keys do, in the player's language.
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor(-1)", show=False),
        Binding("right", "cursor(1)", show=False),
        Binding("up", "count(1)", show=False),
        Binding("down", "count(-1)", show=False),
        Binding("enter,space", "pick", show=False),
        Binding("f", "tap", show=False),
        Binding("t", "double_tap", show=False),
        Binding("s", "stock", show=False),
        Binding("u", "undo", show=False),
        Binding("a", "auto", show=False),
        Binding("escape", "drop", show=False),
        Binding("n", "no", show=False),
        Binding("y", "yes", show=False),
        *(
            Binding(key, f"react('{reaction}')", show=False)
            for key, reaction in REACTION_KEYS.items()
        ),
        Binding("colon,slash", "type_move", show=False),
        *(Binding(str(n), f"column({n})", show=False) for n in range(1, 10)),
    ]

    def action_column(self, number: int) -> None:
        """A digit: pick column ``number``'s top card, or drop the picked cards there."""
        self.app_ref.column_key(number)

    def action_cursor(self, step: int) -> None:
        """Move the cursor to the previous/next pile."""
        self.app_ref.move_cursor(step)

    def action_count(self, step: int) -> None:
        """Take one card more or less of the column under the cursor."""
        self.app_ref.change_count(step)

    def action_pick(self) -> None:
        """Pick the card(s) under the cursor, or drop the picked ones there."""
        self.app_ref.pick()

    def action_tap(self) -> None:
        """Send the card under the cursor (or the picked one) to a foundation."""
        self.app_ref.shorthand("f")

    def action_double_tap(self) -> None:
        """Send the card under the cursor (or the picked one) to the table."""
        self.app_ref.shorthand("t")

    def action_stock(self) -> None:
        """Turn the stock."""
        self.app_ref.send("s")

    def action_undo(self) -> None:
        """Undo the last action."""
        self.app_ref.send("u")

    def action_auto(self) -> None:
        """Auto-finish (Klondike)."""
        self.app_ref.send("a")

    def action_drop(self) -> None:
        """Put the picked card back."""
        self.app_ref.picked = None
        self.app_ref.refresh_board()

    def action_no(self) -> None:
        """Sit out the rematch offered; spectators: show the next followed board."""
        app = self.app_ref
        if app.offer_asked():
            app.answer_rematch(False)
        else:
            app.follow_next()

    def action_yes(self) -> None:
        """Race the rematch offered."""
        if self.app_ref.offer_asked():
            self.app_ref.answer_rematch(True)

    def action_react(self, reaction: str) -> None:
        """Send a reaction."""
        self.app_ref.react(reaction)

    def action_type_move(self) -> None:
        """Focus the move entry."""
        self.app_ref.query_one("#move", Input).focus()

    @property
    def app_ref(self) -> RaceApp:
        """The app, typed."""
        app = self.app
        assert isinstance(app, RaceApp)
        return app


REFUSAL_SECONDS = 6.0
"""How long a refused move's reminder stays on the message line (as the browser's)."""


class RaceApp(App[int]):
    """Race (or watch) a room from the terminal."""

    CSS = """
    Screen { background: #0b5d33; }
    #title { height: 1; background: #064826; color: white; padding: 0 1; }
    #main { height: 1fr; }
    #board { width: 1fr; padding: 1 1; background: #0b6b3a; color: white; }
    #board:focus { border: tall #ffd34d; }
    #side { width: 36; padding: 0 1; background: #064826; color: white; }
    #message { height: auto; max-height: 3; color: #ffe98a; padding: 0 1; }
    #results { height: auto; padding: 0 1; background: #064826; color: white; }
    #keys { height: auto; background: #064826; color: #dce9df; padding: 0 1; }
    #move { dock: bottom; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", show=False),
        Binding("ctrl+r", "resign", show=False),
        Binding("ctrl+x", "leave", show=False),
        Binding("ctrl+g", "start", show=False),
        Binding("ctrl+l", "switch_lang", show=False),
    ]

    def __init__(
        self,
        link: RoomLink,
        *,
        role: Role | None = "player",
        name: str = "",
        create: str | None = None,
        create_options: dict[str, Any] | None = None,
        lang: str | None = None,
        identity: IdentityFile | None = None,
        start: bool = False,
    ) -> None:
        super().__init__()
        #: start the race as soon as the room is made (a room of one's own: the daily)
        self.start_at_once = start
        self.cat = Catalogue(lang or detect_lang())
        #: where the player's identity is kept (None: race as a guest); ``new_identity``
        #: is the reply that made one just now (its recovery code is shown this once)
        self.identity = identity
        self.new_identity: IdentityReply | None = None
        self.link = link
        #: what this app is in its room; None in no room (after leaving, or seeking a pool)
        self.role = role
        self.player_name = name
        self.create = create
        self.create_options = create_options or {}
        self.client: RaceClient | None = None
        self.room: str | None = None
        self.game: str = ""
        self.seat: int | None = None
        self.host: int | None = None
        self.phase: Phase = "lobby"
        self.race = 0
        self.deal = ""
        self.daily = False  # the room plays the deal of the day
        # a race on it: its UTC day, what it is for each racer (race_starting.attempts),
        # and this player's deck turns (for the share text: the deal itself is secret)
        self.daily_day: str | None = None
        self.attempts: dict[str, str] = {}
        self.deck_turns = 0
        self.offer: RematchOffer | RematchOffered | None = None  # a rematch awaiting answers
        self.answered: dict[int, bool] = {}  # race → this player's answer to its offer
        self.spectators = 0
        self.start_at: int | None = None
        self.clock_offset = 0
        self.participants: list[int] = []
        self.seats: dict[int, dict[str, Any]] = {}
        self.results: list[dict[str, Any]] | None = None
        #: a rated race's rating changes, by seat (race_recorded)
        self.rating_changes: dict[int, RatingChange] = {}
        #: the race's record: its replay's page once written (race_recorded), or "delayed"
        #: while the server's records database is away (race_record_delayed)
        self.record: str | None = None
        self.view: dict[str, Any] | None = None
        self.following: int | None = None  # the board shown
        self.follows: list[int] = []  # the boards followed (up to four), switched at once
        #: the boards refused as hidden (a tournament round's while it runs), followed
        #: again when the room says they are open (``boards_open``)
        self.refused: list[int] = []
        self.boards: dict[int, dict[str, Any]] = {}
        self.reactions: dict[int | None, dict[str, int]] = {}  # shown until the next race
        self.cursor = "t1"
        self.count = 1
        self.picked: tuple[str, int] | None = None
        self.message = ""
        self.room_link = ""  # the room's join link, for the host to share
        self.names: dict[int, str] = {}  # seat → the last name seen (results keep them)
        self.resign_armed = False
        self.leave_armed = False
        self._tasks: set[asyncio.Task[Any]] = set()

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        """Title line, results (after a race), board and players side by side, message line,
        move entry, the keys."""
        yield Static(id="title", markup=False)
        with Horizontal(id="main"):
            with Vertical():
                yield Static(id="results", markup=False)
                yield BoardView(id="board", markup=False)
                yield Static(id="message", markup=False)
            yield Static(id="side", markup=False)
        yield Input(placeholder=self.cat.t("tui.move_placeholder"), id="move")
        yield Static(id="keys", markup=False)

    async def on_mount(self) -> None:
        """Connect and join, then follow the room's events."""
        self.query_one("#board", BoardView).focus()
        self.refresh_all()
        self._spawn(self._run())
        self.set_interval(0.5, self.refresh_title)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def on_unmount(self) -> None:
        """Close the connection."""
        for task in list(self._tasks):
            task.cancel()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()

    # ------------------------------------------------------------------ network

    async def _run(self) -> None:
        try:
            # a room known now routes the connection to its worker (``?room=``)
            client = await RaceClient.connect(
                self.link.url,
                identity=self.identity,
                name=self.player_name,
                room=self.link.room if self.create is None else None,
            )
            self.client = client
            if client.player is not None and client.player.recovery_code:
                self.new_identity = client.player
                self.say(self.cat.t("tui.new_player", code=client.player.recovery_code))
            if self.create is not None:
                joined = await client.create(
                    self.create, name=self.player_name, **self.create_options
                )
                # the room's code is known now: on to its worker, before the race starts
                client = self.client = await client.settle()
                if self.start_at_once:
                    await client.start()
            else:
                assert self.link.room is not None
                joined = await client.join(
                    self.link.room,
                    name=self.player_name,
                    role=self.role or "player",
                    key=self.link.key,
                )
        except RequestError as exc:
            self.say(
                self.cat.t("tui.could_not_join", error=self.cat.error_text(exc.code, exc.message))
            )
            return
        except (OSError, ConnectionError) as exc:
            self.say(self.cat.t("tui.could_not_join", error=exc))
            return
        self.room, self.seat = joined.room, joined.seat
        if joined.snapshot is not None:
            self.apply_snapshot(joined.snapshot)
        if joined.view is not None:
            self.view = joined.view
        self.refresh_all()
        async for event in client.events():
            self.apply_event(event)
            self.refresh_all()
        self.say(self.cat.t("tui.disconnected"))

    def apply_snapshot(self, snap: RoomSnapshot) -> None:
        """Take the room as of a snapshot."""
        self.room, self.game, self.host = snap.room, snap.game, snap.host
        self.room_link = snap.link
        # the deal code is told only once the race is over (fair play): the game name before
        self.phase, self.race, self.deal = snap.phase, snap.race, snap.deal or ""
        self.daily, self.offer = snap.daily, snap.rematch_offer
        self.spectators = snap.spectators
        self.start_at = snap.start_at
        self.clock_offset = snap.now - int(time.time() * 1000)
        self.seats = {s.seat: s.model_dump() for s in snap.seats}
        self.names.update({s.seat: s.name for s in snap.seats})
        self.participants = [] if snap.phase == "lobby" else [s.seat for s in snap.seats]
        self.results = [r.model_dump() for r in snap.results] if snap.results else None

    def apply_event(self, event: ServerMessage) -> None:
        """Update the room from one event."""
        if isinstance(event, SeatEvent):
            if event.left:
                self.seats.pop(event.seat, None)
            else:
                seat = self.seats.setdefault(
                    event.seat,
                    {
                        "seat": event.seat,
                        "status": "waiting",
                        "on_foundations": 0,
                        "total": 0,
                        "score": 0,
                        "moves": 0,
                        "elapsed_ms": None,
                    },
                )
                seat.update(name=event.name, connected=event.connected)
                if event.rating is not None:  # a rated room's seats show the ratings
                    seat.update(rating=event.rating, provisional=event.provisional)
                self.names[event.seat] = event.name
            if event.host:
                self.host = event.seat
        elif isinstance(event, RematchOffered):
            self.offer = event
            self.clock_offset = event.now - int(time.time() * 1000)
            if self.offer_asked():
                self.say(self.offer_text())
            elif self.role == "player" and self.seat == event.by:
                self.say(self.cat.t("rematch.waiting"))
        elif isinstance(event, RaceStarting):
            self.phase, self.race, self.deal = "running", event.race, event.deal or ""
            self.daily, self.offer = event.daily, None
            self.attempts = dict(event.attempts or {}) if event.daily else {}
            self.daily_day = day_of_race(event.deadline or event.now + 1) if event.daily else None
            self.deck_turns = 0
            self.start_at = event.start_at
            self.clock_offset = event.now - int(time.time() * 1000)
            self.participants = list(event.seats)
            self.results = None
            self.rating_changes = {}
            self.record = None
            self.picked = None
            self.resign_armed = self.leave_armed = False
            for n, seat in self.seats.items():
                seat.update(
                    status="playing" if n in event.seats else "waiting",
                    on_foundations=0,
                    score=0,
                    moves=0,
                    elapsed_ms=None,
                )
            self.view = None
            self.boards = {}
            self.refused = []
            self.say("")  # what was said of the last race is not this one's
            self.reactions = {}
            if self.role == "player" and self.seat in event.seats:
                self.view = event.view  # the starting board, the same for every player
            elif self.follows:
                self._spawn(self._follow([s for s in self.follows if s in event.seats]))
        elif isinstance(event, Progress):
            racer = self.seats.get(event.seat)
            if racer is not None and event.race == self.race:
                racer.update(
                    on_foundations=event.on_foundations,
                    total=event.total,
                    score=event.score,
                    moves=event.moves,
                    status=event.status,
                    elapsed_ms=event.elapsed_ms,
                )
        elif isinstance(event, PlayerFinished):
            finisher = self.seats.get(event.seat)
            if finisher is not None:
                finisher.update(status=event.status, elapsed_ms=event.elapsed_ms)
            if event.deal:
                self.deal = event.deal  # told once this player has finished
        elif isinstance(event, RaceEnded):
            self.phase = "ended"
            self.deal = event.deal or self.deal
            self.results = [r.model_dump() for r in event.results]
        elif isinstance(event, RaceRecorded):
            if event.race == self.race:
                self.record = game_page_url(server_base(self.link.url), event.game_id)
            if event.race == self.race and event.ratings:
                self.rating_changes = {c.seat: c for c in event.ratings}
                for c in event.ratings:
                    if c.seat in self.seats:
                        self.seats[c.seat].update(rating=c.rating, provisional=c.provisional)
        elif isinstance(event, RaceRecordDelayed):
            if event.race == self.race and self.record is None:
                self.record = "delayed"  # race_recorded follows once the database is back
        elif isinstance(event, Board):
            if self.role == "spectator" and event.seat in self.follows:
                self.boards[event.seat] = event.view
                if event.seat == self.following:
                    self.view = event.view
        elif isinstance(event, BoardsOpen):
            if self.refused:  # asked once more: refused again, it is said as the first time
                seats, self.refused = self.refused, []
                self._spawn(self._follow(seats))
        elif isinstance(event, Reactions):
            for r in event.reactions:
                shown = self.reactions.setdefault(r.seat, {})
                shown[r.reaction] = shown.get(r.reaction, 0) + r.n
        elif isinstance(event, Spectators):
            self.spectators = event.count
        elif isinstance(event, Resync):
            self.apply_snapshot(event.snapshot)
        elif isinstance(event, ErrorMessage):
            self.say(self.cat.error_text(event.code, event.message))

    def send(self, text: str) -> None:
        """Send an action (in the background)."""
        if self.role != "player" or self.client is None or self.phase != "running":
            return
        self._spawn(self._send(text))

    async def _send(self, text: str) -> None:
        assert self.client is not None
        try:
            reply = await self.client.move(text)
        except RequestError as exc:
            self.say(self.cat.error_text(exc.code, exc.message))
            return
        except ConnectionError as exc:
            self.say(str(exc))
            return
        if isinstance(reply, Ack):
            before, self.view = self.view, self.client.view  # the client merged the changes
            if self.view is not None:
                step = deck_turn_step(before, self.view, reply.move)
                self.deck_turns = max(0, self.deck_turns + step)
            self.say("")
        elif isinstance(reply, Rejected):
            self.say(f"{reply.move}: {self.cat.rule_text(reply.rule, reply.reminder)}", fade=True)
        self.refresh_all()

    async def _follow(self, seats: list[int]) -> None:
        if self.client is None:
            return
        # The boards may arrive before the reply: be ready for them first.
        before = self.follows
        self.follows = seats[:MAX_FOLLOWED]
        if self.following not in self.follows:
            self.following = self.follows[0] if self.follows else None
        self.view = self.boards.get(self.following) if self.following is not None else None
        self.refresh_all()
        asked = self.follows
        try:
            await self.client.follow(asked)
        except RequestError as exc:
            self.follows = before
            self.refused = asked if exc.code == "boards_hidden" else []
            self.say(self.cat.error_text(exc.code, exc.message))
        else:
            self.refused = []

    def follow_next(self) -> None:
        """Spectators: show the next followed board — at once, it is followed already
        (the first time: follow up to four racers)."""
        if self.role != "spectator" or not self.participants:
            return
        order = sorted(self.participants)
        if not self.follows:
            self._spawn(self._follow(order[:MAX_FOLLOWED]))
            return
        shown = self.follows.index(self.following) if self.following in self.follows else -1
        if shown + 1 < len(self.follows):
            self.show_board(shown + 1)
        elif len(order) <= MAX_FOLLOWED:
            self.show_board(0)  # every racer is followed: round again
        else:  # more racers than boards: the next four
            start = order.index(self.follows[-1]) + 1 if self.follows[-1] in order else 0
            self._spawn(self._follow((order[start:] + order[:start])[:MAX_FOLLOWED]))

    def show_board(self, index: int) -> None:
        """Spectators: show the ``index``-th followed board (no request: it is followed)."""
        if 0 <= index < len(self.follows):
            self.following = self.follows[index]
            self.view = self.boards.get(self.following)
            self.refresh_all()

    def react(self, reaction: str) -> None:
        """Send a reaction (a spectator's goes beside the board shown)."""
        if self.client is None or self.role not in ("player", "spectator"):
            return
        seat = self.following if self.role == "spectator" else None
        self._spawn(self._request(self.client.react(reaction, seat)))

    def action_resign(self) -> None:
        """Give up the race: the first Ctrl+R asks, a second one resigns."""
        if self.client is None or self.role != "player" or self.phase != "running":
            return
        if not self.resign_armed:
            self.resign_armed = True
            self.say(self.cat.t("tui.resign_confirm"))
            return
        self.resign_armed = False
        self.say("")
        self._spawn(self._resign())

    def racing(self) -> bool:
        """Whether this player is in the running race and has not finished it."""
        me = self.seats.get(self.seat) if self.seat is not None else None
        return (
            self.role == "player"
            and self.phase == "running"
            and self.seat in self.participants
            and (me is None or me.get("status") in ("playing", "disconnected"))
        )

    def action_leave(self) -> None:
        """Leave the room: racing, the first Ctrl+X asks (the race is given up), a second
        one leaves; otherwise at once."""
        if self.client is None or self.room is None:
            return
        if self.racing() and not self.leave_armed:
            self.leave_armed = True
            self.say(self.cat.t("tui.leave_confirm"))
            return
        self.leave_armed = False
        self._spawn(self._leave())

    async def _leave(self) -> None:
        assert self.client is not None
        try:
            await self.client.leave()
        except RequestError as exc:
            self.say(self.cat.error_text(exc.code, exc.message))
            return
        self.room = self.seat = self.offer = None
        self.role, self.phase, self.view = None, "lobby", None  # in no room: no keys but quit
        self.seats, self.participants, self.results = {}, [], None
        self.refresh_all()
        self.say(self.cat.t("tui.left"))

    def offer_asked(self) -> bool:
        """Whether this player is asked to answer the rematch offered now."""
        offer = self.offer
        return (
            offer is not None
            and self.role == "player"
            and self.seat != offer.by
            and offer.race not in self.answered
            and self._now() <= offer.deadline
        )

    def offer_text(self) -> str:
        """The offer and the keys that answer it."""
        assert self.offer is not None
        t = self.cat.t
        name = self.names.get(self.offer.by, "")
        offer = t("rematch.offer", name=name, deal=t(f"rematch.deal.{self.offer.deal}"))
        return f"{offer}  y: {t('rematch.accept')} · n: {t('rematch.sit_out')}"

    def answer_rematch(self, accept: bool) -> None:
        """Race the offered rematch, or sit it out."""
        if self.client is None or self.offer is None:
            return
        race = self.offer.race
        self.answered[race] = accept
        self.say(self.cat.t("rematch.accepted" if accept else "rematch.sitting_out"))
        self.refresh_keys()
        self._spawn(self._answer(race, accept))

    async def _answer(self, race: int, accept: bool) -> None:
        assert self.client is not None
        try:
            await self.client.rematch_reply(race, accept)
        except RequestError as exc:
            self.answered.pop(race, None)
            self.say(self.cat.error_text(exc.code, exc.message))

    def action_switch_lang(self) -> None:
        """Ctrl+L: the next language."""
        nxt = LANGUAGES[(LANGUAGES.index(self.cat.lang) + 1) % len(LANGUAGES)]
        self.cat = Catalogue(nxt)
        self.query_one("#move", Input).placeholder = self.cat.t("tui.move_placeholder")
        self.say(self.cat.t("tui.lang_now"))
        self.refresh_all()

    def action_start(self) -> None:
        """Host: start the race, or a rematch on the same deal once it is over."""
        if self.client is None or self.role != "player" or self.seat != self.host:
            return
        if self.phase == "lobby":
            self._spawn(self._request(self.client.start()))
        elif self.phase == "ended":
            self._spawn(self._request(self.client.rematch("same")))

    async def _request(self, coro: Any) -> None:
        try:
            await coro
        except RequestError as exc:
            self.say(self.cat.error_text(exc.code, exc.message))

    async def _resign(self) -> None:
        assert self.client is not None
        try:
            await self.client.resign()
        except RequestError as exc:
            self.say(self.cat.error_text(exc.code, exc.message))

    # ------------------------------------------------------------------ cursor

    def piles(self) -> list[str]:
        """Every pile the cursor can stand on, left to right."""
        if self.view is None:
            return []
        return (
            ["s", "w"]
            + [f"f{i + 1}" for i in range(len(self.view["foundations"]))]
            + [f"t{i + 1}" for i in range(len(self.view["tableau"]))]
        )

    def move_cursor(self, step: int) -> None:
        """Move the cursor along :meth:`piles`."""
        piles = self.piles()
        if not piles:
            return
        i = piles.index(self.cursor) if self.cursor in piles else 0
        self.cursor = piles[(i + step) % len(piles)]
        self.count = 1
        self.refresh_board()

    def change_count(self, step: int) -> None:
        """More or fewer cards of the column under the cursor."""
        if self.view is None or not self.cursor.startswith("t"):
            return
        up = len(self.view["tableau"][int(self.cursor[1:]) - 1]["up"])
        self.count = max(1, min(up, self.count + step))
        self.refresh_board()

    def _source(self, pile: str, count: int) -> str:
        return f"{pile}:{count}" if pile.startswith("t") and count > 1 else pile

    def pick(self) -> None:
        """Enter: pick the card under the cursor, or drop the picked card here."""
        if self.cursor == "s":
            self.send("s")
            return
        if self.picked is None:
            self.picked = (self.cursor, self.count)
        elif self.picked[0] == self.cursor:
            self.picked = None
        else:
            pile, count = self.picked
            self.picked = None
            if self.cursor.startswith(("t", "f")):
                self.send(f"{self._source(pile, count)}-{self.cursor}")
        self.refresh_board()

    def column_key(self, number: int) -> None:
        """A digit: pick column ``number``'s top card, or drop the picked cards on it; a
        spectator's shows the ``number``-th followed board."""
        if self.role == "spectator":
            self.show_board(number - 1)
            return
        if self.view is None or number > len(self.view["tableau"]):
            return
        pile = f"t{number}"
        self.cursor, self.count = pile, 1
        if self.picked is None:
            if self.view["tableau"][number - 1]["up"]:
                self.picked = (pile, 1)
        else:
            source, count = self.picked
            self.picked = None
            if source != pile:
                self.send(f"{self._source(source, count)}-{pile}")
        self.refresh_board()

    def shorthand(self, where: str) -> None:
        """``f`` / ``t``: the picked card, or the one under the cursor, by the shorthand."""
        if self.picked is not None:
            pile, count = self.picked
            self.picked = None
        else:
            pile, count = self.cursor, 1
        if pile != "s":
            self.send(f"{self._source(pile, count)}-{where}")
        self.refresh_board()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Send a typed move."""
        text = event.value.strip()
        event.input.value = ""
        if text:
            self.send(text)

    def on_key(self, event: events.Key) -> None:
        """Escape in the move entry goes back to the board; any key but Ctrl+R takes back a
        pending resign."""
        if self.resign_armed and event.key != "ctrl+r":
            self.resign_armed = False
            self.say(self.cat.t("tui.resign_kept"))
        if self.leave_armed and event.key != "ctrl+x":
            self.leave_armed = False
            self.say(self.cat.t("tui.resign_kept"))
        if event.key == "escape" and isinstance(self.focused, Input):
            self.query_one("#board", BoardView).focus()
            event.stop()

    # ------------------------------------------------------------------ drawing

    def say(self, text: str, *, fade: bool = False) -> None:
        """Show a message (a refused move's reminder, an error); ``fade``: for a few seconds
        only (a refusal is about the board as it was: left there, it reads as a new one)."""
        self.message = text
        with contextlib.suppress(Exception):
            self.query_one("#message", Static).update(Text(text))
        if fade and text:
            with contextlib.suppress(Exception):
                self.set_timer(REFUSAL_SECONDS, lambda: self._fade(text))

    def _fade(self, text: str) -> None:
        """Clear the message line if it still says ``text``."""
        if self.message == text:
            self.say("")

    def _now(self) -> int:
        return int(time.time() * 1000) + self.clock_offset

    def refresh_title(self) -> None:
        """The title line: room, game, status, time, score, moves."""
        t = self.cat.t
        seat_no = self.seat if self.role == "player" else self.following
        me = self.seats.get(seat_no) if seat_no is not None else None
        elapsed: int | None = 0
        if self.phase != "lobby" and self.start_at is not None:
            if me is not None and me.get("status") not in ("playing", "disconnected", "waiting"):
                elapsed = me.get("elapsed_ms")
            else:
                elapsed = max(0, self._now() - self.start_at)
        if self.phase == "lobby":
            status = t("race.waiting_host")
        elif self.phase == "ended":
            status = t("race.over")
        elif self.start_at is not None and self._now() < self.start_at:
            status = t("tui.starting_in", s=(self.start_at - self._now()) // 1000 + 1)
        else:
            status = t("race.on")
        view = self.view
        game = t(f"game.{self.game}") if self.game else ""
        text = Text()
        text.append(t("tui.room", room=self.room or "…") + "  ", style="bold")
        text.append(f"{game} {self.deal}".strip() + "  ")
        if self.daily:
            number = f" {t('daily.number', n=day_number(self.daily_day))}" if self.daily_day else ""
            text.append(t("room.daily") + number + "  ", style="bold")
            kind = self.attempt()
            if kind is not None:
                what = t("attempt.this_race", kind=t(f"attempt.{kind}"))
                text.append(f"{what}  ", style="bold black on #ffd34d")
        if self.spectators:
            text.append(self.cat.tn("room.watching", self.spectators) + "  ")
        text.append(f"{status}  ", style="bold yellow")
        text.append(f"{t('race.time')} {_fmt_time(elapsed)}  ")
        text.append(f"{t('race.score')} {view['score'] if view else 0}  ")
        text.append(f"{t('race.moves')} {view['moves'] if view else 0}")
        with contextlib.suppress(Exception):
            self.query_one("#title", Static).update(text)

    def refresh_board(self) -> None:
        """Redraw the board."""
        board = self.query_one("#board", BoardView)
        if self.view is None:
            if self.role == "spectator":
                key = "tui.press_n" if self.phase != "lobby" else "tui.waiting"
            else:
                key = "tui.waiting_start"
            board.update(Text(self.cat.t(key)))
            return
        picked = self.picked
        board.update(render_board(self.view, cursor=self.cursor, count=self.count, picked=picked))

    def _status(self, status: str | None) -> str:
        return self.cat.t(f"status.{status}") if status else ""

    def reaction_text(self, counts: dict[str, int]) -> str:
        """Reactions as words of the catalogue (``Applause ×3 · gg``)."""
        return " · ".join(
            self.cat.t(f"react.{r}") + (f" ×{n}" if n > 1 else "") for r, n in counts.items()
        )

    def result_name(self, row: dict[str, Any]) -> str:
        """A result's name; a player who left keeps the name they raced under."""
        name = str(row["name"])
        seat = int(row["seat"])
        if name == f"Player {seat}" and seat in self.names:
            return self.names[seat]
        return name

    def refresh_side(self) -> None:
        """Players with their progress."""
        cat = self.cat
        text = Text()
        text.append(cat.t("players.title") + "\n", style="bold")
        for n in sorted(self.seats):
            s = self.seats[n]
            mark = " " + cat.t("players.you") if self.role == "player" and n == self.seat else ""
            host = f" [{cat.t('players.host')}]" if n == self.host else ""
            watching = " ◀" if n == self.following else " ◁" if n in self.follows else ""
            text.append(Text(str(s.get("name", "")), style="bold"))
            if s.get("rating") is not None:
                text.append(" " + shown_rating(int(s["rating"]), bool(s.get("provisional"))))
            text.append(f"{mark}{host}{watching}\n")
            if n in self.participants:
                total = s.get("total") or (104 if self.game == "easy-harp" else 52)
                done = int(s.get("on_foundations") or 0)
                filled = round(20 * done / total)
                text.append("█" * filled, style="yellow")
                text.append("░" * (20 - filled), style="grey50")
                text.append(f" {done}/{total}\n")
                points = cat.tn("stats.points", int(s.get("score") or 0))
                moves = cat.tn("stats.moves", int(s.get("moves") or 0))
                text.append(f"  {points} · {moves} · {self._status(s.get('status'))}\n")
            if n in self.reactions:
                text.append("  " + self.reaction_text(self.reactions[n]) + "\n", style="yellow")
        if None in self.reactions:
            text.append(cat.t("tui.reactions") + ": ", style="bold")
            text.append(self.reaction_text(self.reactions[None]) + "\n", style="yellow")
        if self.room_link and self.phase != "running":
            # the host shares it before a race (and between races): anyone may join by it
            text.append("\n" + cat.t("waiting.link") + "\n", style="bold")
            text.append(self.room_link + "\n", style="underline")
            text.append(cat.t("waiting.share_hint") + "\n", style="grey70")
        self.query_one("#side", Static).update(text)

    def attempt(self) -> str | None:
        """What the race is for this player on the deal of the day: ``ranked``, ``unranked``,
        ``practice``, ``guest``; ``watching`` for an identified spectator; None otherwise."""
        if not self.daily:
            return None
        if self.role == "spectator":
            # watching shows the deal's cards: an identified spectator's attempt is used up
            known = self.client is not None and self.client.player is not None
            return "watching" if known else None
        if self.phase == "lobby" or self.seat is None:
            return None
        return self.attempts.get(str(self.seat))

    def daily_share(self) -> str | None:
        """The share text of a race on the deal of the day (None: not one): the day and how
        it went, never its deal (secret until the day is over) nor a card."""
        if not self.daily:
            return None
        # the race's day; a race that started before this client came: the server's today
        day = self.daily_day or day_of_race(self._now() + 1)
        url = daily_url(self.link.url, day)
        mine = next((r for r in self.results or [] if r["seat"] == self.seat), None)
        if mine is None or self.role != "player":
            racers = len(self.results or [])
            return daily_watch_text(self.cat, day_number(day), self.game, racers, url)
        view = self.view
        result = DailyResult(
            number=day_number(day),
            game=self.game,
            attempt=self.attempt(),
            won=mine["status"] == "won",
            on_foundations=int(mine["on_foundations"]),
            total=104 if self.game == "easy-harp" else 52,
            score=int(mine["score"]),
            moves=int(mine["moves"]),
            deck_turns=self.deck_turns,
            elapsed_ms=mine["elapsed_ms"],
            foundations=tuple(len(f) for f in view["foundations"]) if view else None,
            url=url,
        )
        return daily_share_text(self.cat, result)

    def share_text(self) -> str:
        """The spoiler-free text to share, as the browser writes it: the deal, how it went,
        and the link that starts a room on the same deal (a race on the deal of the day:
        :meth:`daily_share`, whose link is the day's page)."""
        daily = self.daily_share()
        if daily is not None:
            return daily
        cat = self.cat
        game = cat.t(f"game.{self.game}") if self.game else ""
        lines = [f"samedeal · {game} · {cat.t('share.deal', deal=self.deal)}"]
        results = self.results or []
        total = 104 if self.game == "easy-harp" else 52
        mine = next((r for r in results if r["seat"] == self.seat), None)
        if self.role == "player" and mine is not None:
            if mine["status"] == "won":
                how = cat.tn("share.cleared", mine["moves"], time=_fmt_time(mine["elapsed_ms"]))
            else:
                how = cat.t("share.home", cards=mine["on_foundations"], total=total)
            lines.append(f"{cat.ordinal('share.place', mine['rank'], n=len(results))}: {how}")
        elif results:
            best = results[0]
            if best["status"] == "won":
                winner = cat.t("share.winner_time", time=_fmt_time(best["elapsed_ms"]))
            else:
                winner = cat.t("share.winner_cards", cards=best["on_foundations"], total=total)
            lines.append(f"{cat.tn('share.racing', len(results))}; {winner}")
        lines.append(cat.t("share.link", url=share_url(self.link.url, self.deal)))
        return "\n".join(lines)

    def refresh_results(self) -> None:
        """The results table and the share text, above the board, once the race is over."""
        panel = self.query_one("#results", Static)
        panel.display = bool(self.results) and self.phase == "ended"
        if not panel.display or not self.results:
            return
        t = self.cat.t
        table = Table(title=t("results.title"), title_justify="left", expand=False, box=None)
        for key in ("rank", "player", "result", "cards", "score", "moves", "time"):
            left = key in ("player", "result")
            table.add_column(t(f"results.{key}"), justify="left" if left else "right", no_wrap=True)
        rated = bool(self.rating_changes)
        if rated:
            table.add_column(t("ratings.rating"), justify="right", no_wrap=True)
        for r in self.results:
            mine = self.role == "player" and r["seat"] == self.seat
            change = self.rating_changes.get(int(r["seat"]))
            table.add_row(
                str(r["rank"]),
                Text(self.result_name(r), overflow="ellipsis"),
                self._status(r["status"]),
                str(r["on_foundations"]),
                str(r["score"]),
                str(r["moves"]),
                _fmt_time(r["elapsed_ms"]),
                *([shown_change(change) if change is not None else ""] if rated else []),
                style="bold yellow" if mine else None,
            )
        share = Text(f"\n{t('tui.share')}:\n", style="bold")
        share.append(self.share_text(), style="not bold")
        if self.record == "delayed":
            share.append(f"\n{t('results.record_delayed')}", style="not bold italic")
        elif self.record is not None:
            share.append(f"\n{t('results.replay')}: {self.record}", style="not bold")
        panel.update(Group(table, share))

    def refresh_keys(self) -> None:
        """What the keys do now, in the player's language (wrapping, never cut off)."""
        t = self.cat.t
        keys: list[tuple[str, str]] = []
        if self.role == "player" and self.phase == "running":
            keys += [
                ("←→↑↓", t("tui.pick")),
                ("1–9", t("tui.column")),
                ("f", t("tui.tap")),
                ("t", t("tui.double")),
                ("s", t("tui.stock")),
                ("u", t("tui.undo")),
                (":", t("tui.type")),
                ("^R", t("tui.resign")),
            ]
        if self.offer_asked():
            keys += [("y", t("rematch.accept")), ("n", t("rematch.sit_out"))]
        if self.role == "spectator":
            keys.append(("n", t("tui.follow")))
            keys.append(("1–4", t("tui.boards")))
        keys.append(("c o h g", t("tui.react")))
        if self.role == "player" and self.seat == self.host and self.phase != "running":
            keys.append(("^G", t("tui.start")))
        if self.room is not None and self.role in ("player", "spectator"):
            keys.append(("^X", t("tui.leave")))
        keys += [("^L", t("tui.lang")), ("^Q", t("tui.quit"))]
        self.show_keys(keys)

    def show_keys(self, keys: list[tuple[str, str]]) -> None:
        """The key line: each key and what it does."""
        text = Text()
        for i, (key, what) in enumerate(keys):
            if i:
                text.append("  ")
            text.append(key, style="bold #ffd34d")
            text.append(f" {what}")
        with contextlib.suppress(Exception):
            self.query_one("#keys", Static).update(text)

    def refresh_all(self) -> None:
        """Redraw everything."""
        with contextlib.suppress(Exception):
            self.refresh_title()
            self.refresh_results()
            self.refresh_board()
            self.refresh_side()
            self.refresh_keys()


# --------------------------------------------------------------------- samedeal watch


def live_lines(rooms: LiveRooms, cat: Catalogue) -> list[Text]:
    """The live directory, one line per race: room, game, time (or waiting), spectators,
    players with their cards home. Names are text, never markup."""
    lines = []
    for r in rooms.rooms:
        running = r.phase == "running" and r.start_at is not None
        when = _fmt_time(rooms.now - (r.start_at or 0)) if running else cat.t("live.waiting")
        line = Text()
        line.append(r.room, style="bold")
        line.append(
            f"  {cat.t(f'game.{r.game}')}  {when}  {cat.tn('room.watching', r.spectators)}  "
        )
        if r.boards == "progress":  # the board rule: its boards are not shown while it runs
            line.append(f"({cat.t('live.progress_only')})  ")
        for i, p in enumerate(r.players):
            if i:
                line.append(", ")
            line.append(Text(p.name, style="bold"))
            if running and p.status != "waiting":
                line.append(f" {p.on_foundations}/{p.total}")
        lines.append(line)
    return lines


class WatchApp(App[str | None]):
    """``samedeal watch``: the live races, kept live, to pick one to watch (the app's
    result is its room code; None when quit)."""

    CSS = """
    Screen { background: #0b5d33; }
    #title { height: 1; background: #064826; color: white; padding: 0 1; }
    #races { height: 1fr; background: #0b6b3a; color: white; }
    #keys { height: auto; background: #064826; color: #dce9df; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", show=False),
        Binding("o", "order", show=False),
    ]
    SORTS = ("closest", "watched", "newest")

    def __init__(
        self, url: str, *, sort: str = "closest", game: str | None = None, lang: str | None = None
    ) -> None:
        super().__init__()
        self.cat = Catalogue(lang or detect_lang())
        self.url = url
        self.sort = sort
        self.game = game
        self.client: RaceClient | None = None
        self.rooms: list[str] = []
        self._tasks: set[asyncio.Task[Any]] = set()

    def compose(self) -> ComposeResult:
        """Title, the races, the keys."""
        yield Static(id="title", markup=False)
        yield OptionList(id="races")
        yield Static(Text(self.cat.t("tui.watch_keys")), id="keys", markup=False)

    async def on_mount(self) -> None:
        """Connect and subscribe."""
        self.query_one("#races", OptionList).focus()
        self._title()
        task = asyncio.create_task(self._run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def on_unmount(self) -> None:
        """Close the connection."""
        for task in list(self._tasks):
            task.cancel()
        if self.client is not None:
            with contextlib.suppress(Exception):
                await self.client.close()

    def _title(self, text: str | None = None) -> None:
        title = text or self.cat.t("tui.watch_title", sort=self.cat.t(f"live.sort.{self.sort}"))
        with contextlib.suppress(Exception):
            self.query_one("#title", Static).update(Text(title))

    async def _run(self) -> None:
        try:
            self.client = await RaceClient.connect(self.url)
            await self.client.live(self.sort, self.game, 50)
        except (RequestError, OSError, ConnectionError) as exc:
            self._title(self.cat.t("tui.could_not_join", error=exc))
            return
        async for event in self.client.events():
            if isinstance(event, LiveRooms) and event.sort == self.sort:
                self.show(event)
        self._title(self.cat.t("tui.disconnected"))

    def show(self, rooms: LiveRooms) -> None:
        """Show a directory, keeping the race under the cursor under it."""
        races = self.query_one("#races", OptionList)
        chosen = races.highlighted
        keep = self.rooms[chosen] if chosen is not None and chosen < len(self.rooms) else None
        self.rooms = [r.room for r in rooms.rooms]
        races.clear_options()
        if not self.rooms:
            races.add_option(Option(Text(self.cat.t("tui.watch_none")), disabled=True))
            return
        races.add_options(live_lines(rooms, self.cat))
        races.highlighted = self.rooms.index(keep) if keep in self.rooms else 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter: watch that race."""
        if 0 <= event.option_index < len(self.rooms):
            self.exit(self.rooms[event.option_index])

    async def action_order(self) -> None:
        """``o``: the next order."""
        self.sort = self.SORTS[(self.SORTS.index(self.sort) + 1) % len(self.SORTS)]
        self._title()
        if self.client is not None:
            with contextlib.suppress(RequestError, ConnectionError):
                await self.client.live(self.sort, self.game, 50)

    async def action_quit(self) -> None:
        """Ctrl+Q: leave without watching."""
        self.exit(None)
