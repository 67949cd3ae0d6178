"""Helpers of every tier: build positions by hand, count cards, enumerate moves (engine
tests); wait on a condition or on the server's clock (tests on an event loop).

Positions are written the way ``samedeal deal`` prints them: a column is a string of cards
bottom → top, face-down cards in parentheses, e.g. ``"(9C) (3D) KS QH"``.

A test that waits for an outcome waits on the outcome (:func:`until`) or on a time the server
told (:func:`until_server_clock`), never for a fixed time: a fixed sleep is too short on a
loaded machine and too long everywhere else.
"""

from __future__ import annotations

import asyncio
import inspect
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, overload

import pytest

from engine import Game, IllegalMoveError, Move, card_name, new_game, parse_card
from engine.cards import RANKS, Card
from engine.game import REMINDERS
from protocol import RaceStarting

if TYPE_CHECKING:
    from clients.client import RaceClient

__all__ = [
    "CODES",
    "EH",
    "KL1",
    "KL3",
    "all_explicit_moves",
    "build",
    "cards",
    "names",
    "refused",
    "until",
    "until_race_starts",
    "until_server_clock",
    "upto",
    "visible_cards",
]

T = TypeVar("T")

EH = "EH1-N-AAAAAAF"
KL1 = "KL1-1-AAAAAAF"
KL3 = "KL1-3-AAAAAAF"
CODES = (EH, KL1, KL3)


def cards(text: str) -> list[Card]:
    """``"AS 2S 3S"`` → cards, in order."""
    return [parse_card(word) for word in text.split()]


def names(pile: Sequence[Card]) -> str:
    """Cards → ``"AS 2S 3S"``."""
    return " ".join(card_name(c) for c in pile)


def upto(top: str) -> str:
    """The foundation pile from the ace up to ``top``: ``upto("3S") == "AS 2S 3S"``."""
    rank, suit = top[0].upper(), top[1].upper()
    return " ".join(r + suit for r in RANKS[: RANKS.index(rank) + 1])


def _column(text: str) -> tuple[list[Card], int]:
    words = text.split()
    down = 0
    column: list[Card] = []
    for word in words:
        if word.startswith("("):
            if down != len(column):
                raise ValueError(f"face-down card above a face-up one in {text!r}")
            down += 1
            word = word.strip("()")
        column.append(parse_card(word))
    return column, down


def build(
    code: str,
    columns: Sequence[str] = (),
    *,
    stock: str = "",
    waste: str = "",
    foundations: Sequence[str] = (),
    score: int = 0,
    moves: int = 0,
) -> Game:
    """A game of ``code`` whose position is overwritten with the given piles.

    ``columns`` and ``foundations`` are padded with empty piles. ``stock`` is bottom → top:
    its last card is drawn next. Card counts are whatever the test says: such positions do
    not conserve the deck.
    """
    game = new_game(code)
    if len(columns) > game.n_columns or len(foundations) > game.n_foundations:
        raise ValueError("too many piles")
    parsed = [_column(c) for c in columns]
    parsed += [([], 0)] * (game.n_columns - len(parsed))
    game.columns = [col for col, _ in parsed]
    game.down = [d for _, d in parsed]
    game.stock = cards(stock)
    game.waste = cards(waste)
    piles = [cards(f) for f in foundations]
    piles += [[] for _ in range(game.n_foundations - len(piles))]
    game.foundations = piles
    game.on_foundations = sum(len(p) for p in piles)
    game.score = score
    game.moves = moves
    return game


def visible_cards(view: dict[str, Any]) -> Counter[str]:
    """Every card name a player view shows."""
    seen: Counter[str] = Counter()
    for column in view["tableau"]:
        seen.update(column["up"])
    seen.update(view["waste"]["top"])
    for pile in view["foundations"]:
        seen.update(pile)
    return seen


def all_explicit_moves(game: Game, max_count: int = 14) -> Iterator[Move]:
    """A fixed enumeration of every syntactically possible explicit action except undo:
    ``s``, ``a`` and every ``SRC-DST`` with numbered piles of the game."""
    yield Move.STOCK
    yield Move.AUTO
    sources = [("w", 0, 1)]
    sources += [("t", i, k) for i in range(1, game.n_columns + 1) for k in range(1, max_count + 1)]
    sources += [("f", i, 1) for i in range(1, game.n_foundations + 1)]
    targets = [("t", j) for j in range(1, game.n_columns + 1)]
    targets += [("f", j) for j in range(1, game.n_foundations + 1)]
    for source, si, count in sources:
        for target, ti in targets:
            yield Move.cards(source, si, target, ti, count)


def refused(game: Game, move: Move | str) -> str:
    """Push ``move``, expect :class:`IllegalMoveError` and an unchanged position; return the
    rule id (after checking that its reminder is the rule's one sentence)."""
    before = game.position()
    actions = list(game.actions)
    with pytest.raises(IllegalMoveError) as info:
        game.push(move)
    assert game.position() == before
    assert game.actions == actions
    error = info.value
    assert error.reminder == REMINDERS[error.rule]
    assert repr(str(Move.parse(move) if isinstance(move, str) else move)) in str(error)
    return error.rule


@overload
async def until(
    check: Callable[[], Awaitable[T]], timeout: float = 5.0, *, every: float = 0.02
) -> T: ...


@overload
async def until(check: Callable[[], T], timeout: float = 5.0, *, every: float = 0.02) -> T: ...


async def until(check: Callable[[], Any], timeout: float = 5.0, *, every: float = 0.02) -> Any:
    """Wait until ``check()`` (a function or a coroutine function) returns something truthy,
    trying every ``every`` seconds, and return it; fail the test after ``timeout`` seconds,
    naming the check."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found:
            return found
        if loop.time() > deadline:
            raise AssertionError(f"not met within {timeout} s: {_source(check)}")
        await asyncio.sleep(every)


def _source(check: Callable[..., Any]) -> str:
    """The line of the call's check, for a failure's message (its name if the source is not
    at hand)."""
    try:
        return " ".join(inspect.getsource(check).split())
    except (OSError, TypeError):
        return getattr(check, "__qualname__", repr(check))


async def until_server_clock(at: int, now: int) -> None:
    """Wait until the server's clock reads ``at`` (ms), given that it read ``now`` when it
    said so (a race's ``start_at`` and the ``now`` of its ``race_starting``, a seat's
    ``start_at`` and a ``ping``). The wait is counted from when the message was read, so it
    ends at ``at`` or later however late that was; the extra millisecond covers the server's
    clock being whole milliseconds."""
    await asyncio.sleep(max(0, at - now + 1) / 1000)


async def until_race_starts(client: RaceClient, timeout: float = 5.0) -> RaceStarting:
    """The client's next ``race_starting``, returned once its race takes moves."""
    event = await client.next_event("race_starting", timeout=timeout)
    assert isinstance(event, RaceStarting), event
    await until_server_clock(event.start_at, event.now)
    return event
