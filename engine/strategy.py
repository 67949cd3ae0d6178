"""Move choice for computer players: a greedy policy that plays by sight.

The policy chooses among the legal actions by what a player can see (face-up cards, the
number of cards in the stock), never by a face-down card. It prefers the foundations, then
uncovering cards, then playing from the waste, and otherwise turns the stock; it never
returns to a position it has seen, and gives up after a whole pass through the stock brings
nothing.

A player who is not told the deal code (fair play) has only the board the server sends:
:func:`sight_game` turns such a board into a game to choose moves on, with the cards it
cannot see put in the hidden places in an arbitrary order — a guess the policy never relies
on.

>>> from engine import new_game
>>> greedy_move(new_game("KL1-1-AAAAAAF")) is not None
True
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from .cards import Card, parse_card
from .dealcode import DealCode
from .game import Game, new_game
from .moves import Move

__all__ = ["GreedyPlayer", "greedy_line", "greedy_move", "sight_game"]


def _sight_key(game: Game) -> Hashable:
    """What a player sees, without the counters: the position as far as choices go."""
    return (
        tuple((*col[d:], d) for col, d in zip(game.columns, game.down, strict=True)),
        len(game.stock),
        len(game.waste),
        tuple(game.waste[-game.draw :]),
        tuple(tuple(pile) for pile in game.foundations),
    )


@dataclass
class GreedyPlayer:
    """Chooses the next action for a game from what a player can see."""

    game: Game
    seen: set[Hashable] = field(default_factory=set)
    idle: int = 0  # stock actions in a row with nothing else played

    def __post_init__(self) -> None:
        self.seen.add(_sight_key(self.game))

    def _value(self, move: Move) -> int | None:
        """How much the move is worth, or ``None`` to never play it."""
        g = self.game
        if move.kind == "a":
            return 1000
        if move.kind != "m":
            return None
        if move.source == "f":
            return None  # taking back from a foundation: never needed by this policy
        if move.target == "f":
            return 100
        if move.source == "w":
            return 30
        column = move.source_index - 1
        up = len(g.columns[column]) - g.down[column]
        if move.count < up:
            # Splitting a built run is worth it when it frees a card for a foundation, or
            # (one card at a time, as Easy Harp wants) digs towards a face-down card.
            trial = g.copy()
            trial.push(move)
            exposed = f"t{move.source_index}-f"
            if trial.is_legal(exposed):
                return 40
            if g.down[column] > 0 and move.count == 1 and up <= 4:
                return 20 - up
            return None
        if g.down[column] > 0:
            return 60 + g.down[column]  # uncovers a card
        if not g.columns[move.target_index - 1]:
            return None  # a whole column into an empty one changes nothing
        return 5  # empties a column: room for a king

    def choose(self) -> str | None:
        """The next action in notation, or ``None`` when stuck (time to resign)."""
        g = self.game
        if g.won:
            return None
        best: tuple[int, str] | None = None
        for move in g.legal_moves:
            value = self._value(move)
            if value is None or (best is not None and value <= best[0]):
                continue
            trial = g.copy()
            trial.push(move)
            if _sight_key(trial) in self.seen:
                continue
            best = (value, str(move))
        if best is not None:
            return best[1]
        # Only the stock is left. After a whole pass through it with nothing to play, stop.
        if self.idle > len(g.stock) + len(g.waste) + 1 or not g.is_legal(Move.STOCK):
            return None
        return "s"

    def played(self, move: str, board: Game | None = None) -> None:
        """Record an accepted action (as the server resolved it). ``board``: the position
        after it when known from elsewhere (a :func:`sight_game` of the server's board);
        otherwise the action is played on :attr:`game`."""
        if board is None:
            self.game.push(move)
        else:
            self.game = board
        self.idle = self.idle + 1 if move == "s" else 0
        if move != "s":
            self.seen.add(_sight_key(self.game))


def greedy_move(game: Game) -> str | None:
    """The greedy policy's action for ``game`` with no memory of earlier positions, or
    ``None`` when it would give up."""
    return GreedyPlayer(game).choose()


def greedy_line(deal: DealCode | str, limit: int = 5000) -> list[str]:
    """The actions the greedy player would take alone on ``deal`` (for tests and tools)."""
    player = GreedyPlayer(new_game(deal))
    line: list[str] = []
    while len(line) < limit:
        move = player.choose()
        if move is None:
            break
        outcome = player.game.copy().push(move)
        player.played(str(outcome.move))
        line.append(str(outcome.move))
    return line


def sight_game(game_name: str, view: dict[str, Any]) -> Game:
    """A game of ``game_name`` whose face-up cards are those of ``view`` (a player view,
    with or without its ``code``); the cards not in sight fill the hidden places (face-down
    cards, the stock, the waste below its top) in an arbitrary order.

    Good for choosing a move by sight; what it turns up next is a guess.
    """
    game = new_game(DealCode.for_game(game_name, 1))
    cls = type(game)
    columns = [[parse_card(n) for n in col["up"]] for col in view["tableau"]]
    foundations = [[parse_card(n) for n in pile] for pile in view["foundations"]]
    top = [parse_card(n) for n in view["waste"]["top"]]
    unseen: Counter[Card] = Counter({c: cls.copies for c in range(52)})
    for pile in (*columns, *foundations, top):
        unseen.subtract(pile)
    hidden = sorted(unseen.elements())
    hidden.reverse()

    def take(n: int) -> list[Card]:
        out = [hidden.pop() for _ in range(n)]
        return out

    game.down = [int(col["down"]) for col in view["tableau"]]
    game.columns = [take(d) + up for d, up in zip(game.down, columns, strict=True)]
    game.waste = take(int(view["waste"]["count"]) - len(top)) + top
    game.stock = take(int(view["stock"]))
    game.foundations = foundations
    game.score = int(view["score"])
    game.moves = int(view["moves"])
    game.won = bool(view["won"])
    game.on_foundations = sum(len(p) for p in foundations)
    return game
