"""A finished race's replay in the terminal (``samedeal replay http://HOST/g/ID``).

The race comes from the server's ``GET /api/games/ID`` (:mod:`clients.api`); every board is
computed here by the engine from the deal and each racer's actions. The racers' actions
are merged into one timeline in the order the server accepted them (its times), so a step
is one action of one racer and the boards side by side show the race as it stood then —
as the browser's replay page does. ←/→ step, Home/End go to the start or the end, space
plays (at the real pace times the chosen speed, ``+``/``-``; a pause longer than
:data:`MAX_PAUSE_MS` is shortened to it), Ctrl+L switches the language, ``q`` quits.
"""

from __future__ import annotations

import bisect
import contextlib
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import HorizontalScroll
from textual.timer import Timer
from textual.widgets import Static

from engine import new_game
from protocol.api import GameReplay, SeatReplay

from .i18n import LANGUAGES, Catalogue, detect_lang
from .tui import render_board

__all__ = ["MAX_PAUSE_MS", "SPEEDS", "ReplayApp", "Step", "Timeline"]

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)
"""Play speeds, times the real pace."""
MAX_PAUSE_MS = 3000
"""Playing, the wait between two steps is the real one (over the speed), at most this."""


@dataclass(frozen=True, slots=True)
class Step:
    """One action of the timeline: whose, which of theirs (0-based), when (ms after the
    race's start, server clock) and the action as the engine resolved it."""

    seat: int
    index: int
    at_ms: int
    move: str


class Timeline:
    """A finished race's actions in the order they happened, and each racer's board after
    any number of them. Raises :class:`engine.GameError` if a racer's actions do not
    replay on the deal."""

    def __init__(self, game: GameReplay) -> None:
        self.game = game
        self.racers: list[SeatReplay] = list(game.seats)  # in the order of the results
        self.views: dict[int, list[dict[str, Any]]] = {}
        steps: list[tuple[int, int, int, Step]] = []
        for order, racer in enumerate(self.racers):
            engine_game = new_game(game.deal)
            views = [engine_game.player_view()]
            for index, action in enumerate(racer.actions):
                resolved = str(engine_game.push(action).move)
                views.append(engine_game.player_view())
                at = racer.action_times_ms[index] if index < len(racer.action_times_ms) else 0
                steps.append((at, order, index, Step(racer.seat, index, at, resolved)))
            self.views[racer.seat] = views
        steps.sort(key=lambda s: s[:3])
        self.steps: list[Step] = [s[3] for s in steps]
        # how many of each racer's actions the first k steps hold: one list per racer of
        # the step numbers after which their count rises
        self._marks: dict[int, list[int]] = {r.seat: [] for r in self.racers}
        for k, step in enumerate(self.steps, start=1):
            self._marks[step.seat].append(k)

    def __len__(self) -> int:
        """The number of steps (actions of all racers)."""
        return len(self.steps)

    def done(self, seat: int, k: int) -> int:
        """How many of ``seat``'s actions the first ``k`` steps hold."""
        return bisect.bisect_right(self._marks[seat], k)

    def board(self, seat: int, k: int) -> dict[str, Any]:
        """``seat``'s board after the first ``k`` steps (the engine's player view)."""
        return self.views[seat][self.done(seat, k)]

    def at_ms(self, k: int) -> int:
        """The race time of step ``k`` (0 before the first)."""
        return self.steps[k - 1].at_ms if k > 0 else 0


def _clock(ms: int | None, *, tenths: bool = False) -> str:
    if ms is None:
        return "–"
    s = max(0, ms) // 1000
    text = f"{s // 60}:{s % 60:02d}"
    # actions a fraction of a second apart stay apart on the race's clock
    return f"{text}.{max(0, ms) % 1000 // 100}" if tenths else text


class ReplayApp(App[int]):
    """Step through a finished race, the racers' boards side by side."""

    CSS = """
    Screen { background: #0b5d33; }
    #title { height: auto; background: #064826; color: white; padding: 0 1; }
    #racers { height: 1fr; }
    .racer { width: auto; min-width: 38; padding: 1 1; background: #0b6b3a; color: white;
             margin-right: 1; }
    #last { height: 1; color: #ffe98a; padding: 0 1; }
    #keys { height: auto; background: #064826; color: #dce9df; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right", "step(1)", show=False),
        Binding("left", "step(-1)", show=False),
        Binding("home", "go(0)", show=False),
        Binding("end", "go(-1)", show=False),
        Binding("space", "play", show=False),
        Binding("plus,equals_sign", "speed(1)", show=False),
        Binding("minus", "speed(-1)", show=False),
        Binding("ctrl+l", "switch_lang", show=False),
        Binding("q,ctrl+q,escape", "quit", show=False),
    ]

    def __init__(self, timeline: Timeline, *, page: str = "", lang: str | None = None) -> None:
        super().__init__()
        self.timeline = timeline
        self.page = page
        self.cat = Catalogue(lang or detect_lang())
        self.step = 0
        self.speed = SPEEDS.index(1.0)
        self.playing = False
        self._timer: Timer | None = None

    def compose(self) -> ComposeResult:
        """Title, the racers side by side, the last action, the keys."""
        yield Static(id="title", markup=False)
        with HorizontalScroll(id="racers"):
            for racer in self.timeline.racers:
                yield Static(id=f"racer-{racer.seat}", classes="racer", markup=False)
        yield Static(id="last", markup=False)
        yield Static(id="keys", markup=False)

    def on_mount(self) -> None:
        """Draw the start."""
        self.refresh_all()

    # ------------------------------------------------------------------ actions

    def go(self, k: int) -> None:
        """Show step ``k`` (clamped to the timeline)."""
        self.step = max(0, min(len(self.timeline), k))
        if self.step == len(self.timeline):
            self._stop()
        self.refresh_all()

    def action_step(self, delta: int) -> None:
        """←/→: one step back or forward (stops playing)."""
        self._stop()
        self.go(self.step + delta)

    def action_go(self, k: int) -> None:
        """Home / End: the start, or the end (``-1``)."""
        self._stop()
        self.go(len(self.timeline) if k < 0 else k)

    def action_play(self) -> None:
        """Space: play from here (from the start when at the end), or pause."""
        if self.playing:
            self._stop()
        else:
            if self.step >= len(self.timeline):
                self.step = 0
            self.playing = True
            self._schedule()
        self.refresh_all()

    def action_speed(self, delta: int) -> None:
        """``+`` / ``-``: play faster or slower."""
        self.speed = max(0, min(len(SPEEDS) - 1, self.speed + delta))
        self.refresh_all()

    def action_switch_lang(self) -> None:
        """Ctrl+L: the next language."""
        self.cat = Catalogue(LANGUAGES[(LANGUAGES.index(self.cat.lang) + 1) % len(LANGUAGES)])
        self.refresh_all()

    def wait_ms(self) -> int:
        """The wait before the next step when playing: the real one over the speed."""
        gap = self.timeline.at_ms(self.step + 1) - self.timeline.at_ms(self.step)
        return int(min(max(gap, 0), MAX_PAUSE_MS) / SPEEDS[self.speed])

    def _schedule(self) -> None:
        if self.step >= len(self.timeline):
            self._stop()
            return
        # Textual's timers divide by their interval: actions at one time still wait 1 ms
        self._timer = self.set_timer(max(self.wait_ms(), 1) / 1000, self._advance)

    def _advance(self) -> None:
        if not self.playing:
            return
        self.go(self.step + 1)
        if self.playing:
            self._schedule()

    def _stop(self) -> None:
        self.playing = False
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    # ------------------------------------------------------------------ drawing

    def refresh_all(self) -> None:
        """Redraw everything for the current step."""
        with contextlib.suppress(Exception):
            self._draw()

    def _draw(self) -> None:
        cat, timeline, k = self.cat, self.timeline, self.step
        game = timeline.game
        title = Text()
        title.append(cat.t("replay.title", game=cat.t(f"game.{game.game}")) + "  ", style="bold")
        title.append(cat.t("replay.deal", deal=game.deal) + "  ")
        title.append(cat.t("replay.step", k=k, n=len(timeline)) + "  ", style="bold yellow")
        title.append(f"{_clock(timeline.at_ms(k), tenths=True)}  ")
        title.append(cat.t("replay.speed_now", speed=f"{SPEEDS[self.speed]:g}"))
        if self.playing:
            title.append("  ▶", style="bold")
        if self.page:
            title.append(f"\n{self.page}", style="grey70")
        self.query_one("#title", Static).update(title)
        last = timeline.steps[k - 1] if k else None
        for racer in timeline.racers:
            self.query_one(f"#racer-{racer.seat}", Static).update(self._racer(racer, last))
        line = Text()
        if last is not None:
            name = next(r.name for r in timeline.racers if r.seat == last.seat)
            line.append(cat.t("replay.last_move", name=name, move=last.move))
        self.query_one("#last", Static).update(line)
        self._draw_keys()

    def _racer(self, racer: SeatReplay, last: Step | None) -> Text:
        cat, k = self.cat, self.step
        view = self.timeline.board(racer.seat, k)
        head = Text()
        head.append(Text(racer.name, style="bold"))
        status = cat.t(f"status.{racer.status}")
        if racer.status == "won":
            status = cat.t("status.won_in", time=_clock(racer.elapsed_ms))
        head.append(f"  {cat.ordinal('share.place', racer.rank, n=len(self.timeline.racers))}")
        head.append(f" · {status}\n")
        done = self.timeline.done(racer.seat, k)
        head.append(
            f"{cat.tn('stats.points', view['score'])} · {cat.tn('stats.moves', view['moves'])}"
            f" · {cat.t('replay.actions', done=done, n=len(racer.actions))}\n",
            style="grey85",
        )
        if last is not None and last.seat == racer.seat:
            head.append(f"▶ {last.move}\n", style="bold yellow")
        else:
            head.append("\n")
        head.append_text(render_board(view))
        return head

    def _draw_keys(self) -> None:
        t = self.cat.t
        keys = [
            ("←→", t("replay.keys_step")),
            ("Home End", t("replay.keys_ends")),
            ("Space", t("replay.keys_pause") if self.playing else t("replay.keys_play")),
            ("+ -", t("replay.keys_speed")),
            ("^L", t("tui.lang")),
            ("q", t("tui.quit")),
        ]
        text = Text()
        for i, (key, what) in enumerate(keys):
            if i:
                text.append("  ")
            text.append(key, style="bold #ffd34d")
            text.append(f" {what}")
        self.query_one("#keys", Static).update(text)
