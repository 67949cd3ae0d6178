"""The spoiler-free share text of a race on the deal of the day, and what it is built from.

The browser writes the same text (``clients/web/daily.js``: ``dailyShareText``), from the
same catalogues; a browser test compares the two. It tells the day's number, the game,
whether this was the ranked attempt, won or not, score, moves, deck turns (Klondike), time,
the days in a row the player has played the game's daily (from two), a line of marks — one
per foundation, filled in proportion — and the link to the day's page ``/daily/DATE``.
Never the deal code, never a card, never a ``/d/DEAL`` link: the deal of the day is secret
until its day is over, and a shared result must not spoil it.

The marks are characters every font has (the WGL4 set: an empty square and the shades),
never emoji, which a machine without a colour-emoji font draws as empty boxes; the line
above them says how many cards went home.

>>> foundation_line([13, 9, 4, 0])
'█▓░□'
>>> day_number("2026-04-16")
106
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .i18n import Catalogue

__all__ = [
    "DAILY_GAMES",
    "DAY_ONE",
    "DailyResult",
    "daily_share_text",
    "daily_url",
    "daily_watch_text",
    "day_number",
    "day_of_race",
    "deck_turn_step",
    "format_time",
    "foundation_line",
]

DAILY_GAMES = ("klondike", "easy-harp")
DAY_ONE = dt.date(2026, 1, 1)
"""Day 1 of the daily challenge (the server's ``server.daily.DAY_ONE``)."""

_FULL = 13  # a foundation holds ace to king, in both games
# empty, then a quarter-ish, a half-ish, most, full: what a glance at a chat message tells
_SQUARES = ("\u25a1", "\u2591", "\u2592", "\u2593", "\u2588")


@dataclass(frozen=True, slots=True)
class DailyResult:
    """One player's race on the deal of the day, as the share text tells it.

    ``attempt`` is what the race was for the player (``race_starting.attempts``:
    ``ranked``, ``unranked``, ``practice``, ``guest``; ``None`` when unknown);
    ``foundations`` how many cards each foundation of their final board holds (``None``:
    the board is not known, and the squares are left out); ``url`` the day's page;
    ``streak`` the days in a row the player has played the game's daily (said from two).
    """

    number: int
    game: str
    attempt: str | None
    won: bool
    on_foundations: int
    total: int
    score: int
    moves: int
    deck_turns: int
    elapsed_ms: int | None
    foundations: tuple[int, ...] | None
    url: str
    streak: int | None = None


def day_number(day: str | dt.date) -> int:
    """The day's number: 1 on 2026-01-01 (as the server counts)."""
    date = dt.date.fromisoformat(day) if isinstance(day, str) else day
    return (date - DAY_ONE).days + 1


def day_of_race(deadline_ms: int) -> str:
    """The UTC day of a race on the deal of the day, from its ``deadline``: the server ends
    such a race at its day's end at the latest (and starts it within the day), so the
    moment before the deadline is always inside the day."""
    moment = dt.datetime.fromtimestamp((deadline_ms - 1) / 1000, dt.UTC)
    return moment.date().isoformat()


def daily_url(server_url: str, day: str) -> str:
    """The day's page on the server: ``http://HOST:PORT/daily/DATE``."""
    base = server_url.replace("wss://", "https://", 1).replace("ws://", "http://", 1)
    return f"{base.rstrip('/')}/daily/{day}"


def format_time(ms: int | None) -> str:
    """A duration as the browser writes it: m:ss, h:mm:ss past an hour; "–" unknown."""
    if ms is None or ms < 0:
        return "–"
    total = ms // 1000
    h, m, s = total // 3600, total % 3600 // 60, total % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def foundation_line(counts: Sequence[int]) -> str:
    """One square per foundation: empty, a few cards, about half, most, full (13)."""
    out = []
    for n in counts:
        level = 4 if n >= _FULL else 3 if n >= 9 else 2 if n >= 5 else 1 if n >= 1 else 0
        out.append(_SQUARES[level])
    return "".join(out)


def deck_turn_step(before: Mapping[str, Any] | None, after: Mapping[str, Any], move: str) -> int:
    """How an acknowledged action changed the deck turns (passes through the stock after
    the first), read from the player's boards before and after it: a stock action that
    refilled an empty stock is a turn (+1); an undo that emptied the stock took one back
    (−1: undoing a draw always leaves a card in the stock, undoing a card move leaves the
    stock as it was). The server counts them the same way, with the engine."""
    if before is None:
        return 0
    was, now = int(before["stock"]), int(after["stock"])
    if move.startswith("s") and was == 0 and now > 0:
        return 1
    if move == "u" and was > 0 and now == 0:
        return -1
    return 0


def daily_share_text(cat: Catalogue, result: DailyResult) -> str:
    """The share text, in ``cat``'s language."""
    game = cat.t(f"game.{result.game}")
    head = [cat.t("share.daily_title", n=result.number, game=game)]
    if result.attempt is not None and result.attempt != "ranked":
        head.append(cat.t(f"attempt.{result.attempt}"))
    if result.won:
        outcome = cat.t("share.daily_won")
    else:
        outcome = cat.t("share.daily_not_won", cards=result.on_foundations, total=result.total)
    facts = [outcome, cat.t("share.daily_score", score=result.score)]
    facts.append(cat.tn("stats.moves", result.moves))
    if result.game == "klondike":
        facts.append(cat.tn("share.deck_turns", result.deck_turns))
    facts.append(cat.t("share.daily_time", time=format_time(result.elapsed_ms)))
    if result.streak is not None and result.streak >= 2:  # a streak is two days or more
        facts.append(cat.tn("share.daily_streak", result.streak))
    lines = [" · ".join(head), " · ".join(facts)]
    if result.foundations is not None:
        lines.append(foundation_line(result.foundations))
    lines.append(cat.t("share.daily_link", url=result.url))
    return "\n".join(lines)


def daily_watch_text(cat: Catalogue, number: int, game: str, racers: int, url: str) -> str:
    """A spectator's share text of a race on the deal of the day: the day, the game, how
    many raced, the day's page."""
    return "\n".join(
        [
            cat.t("share.daily_title", n=number, game=cat.t(f"game.{game}")),
            cat.tn("share.racing", racers),
            cat.t("share.daily_link", url=url),
        ]
    )
