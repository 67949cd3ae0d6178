"""The base game: one mutable position with push / undo, views and legal moves.

:class:`Game` holds everything the two rule books share — columns with face-down cards
underneath, stock, waste, foundations, the move counter and the score — and the subclasses in
:mod:`engine.easyharp` and :mod:`engine.klondike` fill in where they differ (which foundation a
card may go to, what moves as a unit, what scores what, how undo counts).

The hot path of a race is ``push()``: resolve the move (shorthands included), check it
against the rules, apply it and remember how to take it back. Undo pops an inverse record; no
position is ever copied or re-validated from scratch. ``pop()`` takes back the last push
itself, an undo included (python-chess's ``Board.pop``): the same inverse records, and the
few counters each push changed.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any, ClassVar, Final

from .cards import _FITS, CARD_NAMES, RANK_OF, SUIT_OF, Card
from .dealcode import DealCode, Layout
from .errors import IllegalMoveError, InvalidMoveError
from .moves import AUTO, FOUNDATION, STOCK, TABLEAU, UNDO, WASTE, Frozen, Move

__all__ = ["GAMES", "Game", "Outcome", "game_class", "new_game", "replay"]

KING: Final = 12
ACE: Final = 0

# Undo records: tuples whose first item says what was done.
#   ("m", source, source_index, count, target, target_index, uncovered, score_before)
#   ("s", cards_drawn, score_before)
#   ("r", score_before)                      redeal / new pass
#   ("a", ((column, slot), ...), score_before)  auto-finish
_Record = tuple[Any, ...]
# What pop() restores besides the piles, one per push: (score, moves, won, deck_turns,
# on_foundations, undo_dropped, the record a full undo history dropped, the record an undo
# took back).
_Pushed = tuple[int, int, bool, int, int, bool, _Record | None, _Record | None]
_SIMPLE_MOVES: Final[dict[str, Move]] = {"s": STOCK, "u": UNDO, "a": AUTO}


@lru_cache(maxsize=256)
def _layout(code: DealCode) -> Layout:
    # Every racer of a room starts a game of the same deal, and tools copy games: the layout
    # (a hash and a shuffle) is computed once per deal.
    return code.layout()


class Outcome(Frozen):
    """What an accepted action did: the ``move`` as resolved (shorthands replaced by the
    chosen pile, or the action itself) and the cards it ``revealed`` — a card uncovered on a
    column, cards turned from the stock — which a player's view did not show before.

    Frozen, compared and hashed by its fields. (Written out rather than a frozen dataclass:
    one is made for every action, and a compiled dataclass's ``__init__`` stays Python.)
    """

    __slots__ = ("move", "revealed")

    move: Move
    revealed: tuple[Card, ...]

    def __init__(self, move: Move, revealed: tuple[Card, ...] = ()) -> None:
        self.move = move
        self.revealed = revealed

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        return self.move == other.move and self.revealed == other.revealed

    def __hash__(self) -> int:
        return hash((self.move, self.revealed))

    def __repr__(self) -> str:
        return f"Outcome(move={self.move!r}, revealed={self.revealed!r})"

    def __reduce__(self) -> tuple[type[Outcome], tuple[Move, tuple[Card, ...]]]:
        return (Outcome, (self.move, self.revealed))


#: the outcomes that reveal nothing (values, so one of each serves every game)
_REDEALT: Final = Outcome(STOCK)
_UNDONE: Final = Outcome(UNDO)


class Game:
    """A game in progress. Subclasses fix the rules; create one with :func:`new_game`.

    Piles are lists bottom → top: ``columns[i][-1]`` is the top card of column ``i + 1``,
    ``down[i]`` the number of face-down cards at its bottom, ``stock[-1]`` the next card to
    be drawn, ``waste[-1]`` the playable waste card.
    """

    name: ClassVar[str]
    prefix: ClassVar[str]
    copies: ClassVar[int]
    n_columns: ClassVar[int]
    n_foundations: ClassVar[int]
    undo_depth: ClassVar[int | None] = None
    # scoring (Windows-style table; the subclasses override)
    FOUNDATION_POINTS: ClassVar[int] = 10
    WASTE_TO_TABLEAU_POINTS: ClassVar[int] = 5
    UNCOVER_POINTS: ClassVar[int] = 5
    FOUNDATION_TO_TABLEAU_POINTS: ClassVar[int] = 0
    REDEAL_POINTS: ClassVar[tuple[int, int]] = (0, 0)  # draw one, draw three
    UNDO_POINTS: ClassVar[int] = 0
    UNDO_COUNTS_AS_MOVE: ClassVar[bool] = False

    __slots__ = (
        "_history",
        "_pushes",
        "_undo_dropped",
        "actions",
        "code",
        "columns",
        "deck_turns",
        "down",
        "draw",
        "foundations",
        "moves",
        "on_foundations",
        "redeal_points",
        "score",
        "stock",
        "total",
        "waste",
        "won",
    )

    def __init__(self, code: DealCode | str) -> None:
        if isinstance(code, str):
            code = DealCode.parse(code)
        if code.game != self.prefix:
            raise ValueError(f"{code} is not a deal of {self.name}")
        self.code: DealCode = code
        layout = _layout(code)
        self.columns: list[list[Card]] = [list(col) for col in layout.columns]
        self.down: list[int] = [len(col) - 1 for col in layout.columns]
        self.stock: list[Card] = list(reversed(layout.stock))
        self.waste: list[Card] = []
        self.foundations: list[list[Card]] = [[] for _ in range(self.n_foundations)]
        self.score = 0
        self.moves = 0
        self.won = False
        self.on_foundations = 0
        self.total = 52 * self.copies
        self.draw = 3 if code.variant == "3" else 1
        self.redeal_points = self.REDEAL_POINTS[self.draw == 3]
        #: passes through the stock after the first: the redeals (an undone one unsaid)
        self.deck_turns = 0
        self._history: deque[_Record] = deque(maxlen=self.undo_depth)
        self._undo_dropped = False
        self._pushes: list[_Pushed] = []
        self.actions: list[Move] = []

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code} moves={self.moves} score={self.score}>"

    # ------------------------------------------------------------------ notation

    def parse_move(self, text: str) -> Move:
        """Parse ``text`` and check that the piles it names exist in this game."""
        move = Move.parse(text)
        self._check_range(move, text)
        return move

    def _check_move(self, move: Move) -> None:
        """Check a :class:`Move` built by hand (not parsed): the same shapes the notation
        allows, and piles that exist. A parsed move needs only :meth:`_check_range`."""
        if not isinstance(move, Move):
            raise InvalidMoveError(repr(move), "a move must be a Move or its text")
        kind = move.kind
        if kind in ("s", "u", "a"):
            if move != _SIMPLE_MOVES[kind]:
                raise InvalidMoveError(repr(move), f"{kind!r} takes no piles")
            return
        if kind != "m":
            raise InvalidMoveError(repr(move), "expected s, u, a or a card move")
        source, si, count = move.source, move.source_index, move.count
        if source == WASTE:
            shape_ok = si == 0 and count == 1
        elif source == TABLEAU:
            shape_ok = si >= 1 and count >= 1
        elif source == FOUNDATION:
            shape_ok = si >= 1 and count == 1
        else:
            shape_ok = False
        if not shape_ok or move.target not in (TABLEAU, FOUNDATION) or move.target_index < 0:
            raise InvalidMoveError(repr(move), "not a move of the notation")
        self._check_range(move, None)

    def _check_range(self, move: Move, text: str | None) -> None:
        """Check that the piles a move names exist; ``text`` (default: the move's canonical
        form) is what an error quotes."""
        if move.kind != "m":
            return
        if move.source == TABLEAU and move.source_index > self.n_columns:
            raise InvalidMoveError(text or str(move), f"there are only {self.n_columns} columns")
        if move.source == FOUNDATION and move.source_index > self.n_foundations:
            raise InvalidMoveError(
                text or str(move), f"there are only {self.n_foundations} foundations"
            )
        limit = self.n_columns if move.target == TABLEAU else self.n_foundations
        if move.target_index > limit:
            what = "columns" if move.target == TABLEAU else "foundations"
            raise InvalidMoveError(text or str(move), f"there are only {limit} {what}")

    # ------------------------------------------------------------------ playing

    def push(self, move: Move | str) -> Outcome:
        """Play one action (a :class:`Move` or its text) and return what it did.

        Raises :class:`InvalidMoveError` for bad notation and :class:`IllegalMoveError` (with
        its rule id) for a move the position refuses; the position is then unchanged.
        """
        if isinstance(move, str):
            move = self.parse_move(move)
        else:
            self._check_move(move)
        if self.won:
            raise self._illegal(move, "game-over")
        kind = move.kind
        history = self._history
        pushed: _Pushed = (
            self.score,
            self.moves,
            self.won,
            self.deck_turns,
            self.on_foundations,
            self._undo_dropped,
            history[0] if len(history) == history.maxlen else None,
            history[-1] if kind == "u" and history else None,
        )
        if kind == "m":
            source, si, count, target, ti = self._resolve(move)
            outcome = self._apply_move(source, si, count, target, ti)
        elif kind == "s":
            outcome = self._stock()
        elif kind == "u":
            outcome = self._undo()
        else:
            outcome = self._auto()
        self.actions.append(outcome.move)
        self._pushes.append(pushed)
        return outcome

    def pop(self) -> Move:
        """Take back the last accepted action, whatever it was (an undo too), as if it had
        never been pushed: the position, the score, the counters and what can be undone are
        exactly as before it. Returns the action as it was accepted; raises
        :class:`IndexError` when there is none.

        Not a player's undo (``push("u")``, which the rules count and may score): the
        server's way back when the store did not take a move the game had played."""
        if not self._pushes:
            raise IndexError("pop from a game with no actions")
        score, moves, won, deck_turns, on_foundations, undo_dropped, dropped, undone = (
            self._pushes.pop()
        )
        move = self.actions.pop()
        history = self._history
        if move.kind == "u":
            assert undone is not None
            self._redo(undone)
            history.append(undone)
        else:
            self._take_back(history.pop())
            if dropped is not None:
                history.appendleft(dropped)
        self.score, self.moves, self.won = score, moves, won
        self.deck_turns, self.on_foundations = deck_turns, on_foundations
        self._undo_dropped = undo_dropped
        return move

    def push_all(self, moves: Iterable[Move | str]) -> None:
        """Push several actions; stops at the first refused one (which raises)."""
        for move in moves:
            self.push(move)

    def undo(self) -> Outcome:
        """Undo the last action (the same as ``push("u")``)."""
        return self.push(UNDO)

    def is_legal(self, move: Move | str) -> bool:
        """True if ``push(move)`` would be accepted."""
        try:
            if isinstance(move, str):
                move = self.parse_move(move)
            else:
                self._check_move(move)
            if self.won:
                return False
            if move.kind == "m":
                self._resolve(move)
                return True
            if move.kind == "s":
                return bool(self.stock or self.waste)
            if move.kind == "u":
                return bool(self._history)
            return self.auto_finish_offered()
        except (IllegalMoveError, InvalidMoveError):
            return False

    @property
    def can_undo(self) -> bool:
        """True if there is an action to undo."""
        return bool(self._history) and not self.won

    def auto_finish_offered(self) -> bool:
        """True when ``a`` would be accepted (never in Easy Harp)."""
        return False

    # ------------------------------------------------------------------ rules (hooks)

    def _foundation_refusal(self, card: Card, slot: int) -> str | None:
        """The rule id that stops ``card`` going to foundation ``slot`` (0-based), or None."""
        pile = self.foundations[slot]
        if not pile:
            return None if RANK_OF[card] == ACE else "foundation-starts-with-ace"
        top = pile[-1]
        if SUIT_OF[top] == SUIT_OF[card] and RANK_OF[card] == RANK_OF[top] + 1:
            return None
        return "foundation-builds-up-in-suit"

    #: The rule id that stops several cards moving as a unit onto a card (not an empty
    #: column), or None if a unit may land on a card (the landing is checked apart).
    MULTI_ONTO_CARD_RULE: ClassVar[str | None] = None

    def _multi_refusal(self, column: list[Card], down: int, count: int) -> str | None:
        """The rule id that stops the top ``count`` > 1 cards of a column (``down`` of them
        face down) moving as a unit at all, or None if they may (the landing is checked
        apart)."""
        raise NotImplementedError

    def _multi_to_foundation_rule(self) -> str:
        raise NotImplementedError

    def _reminder(self, rule: str) -> str:
        return REMINDERS[rule]

    def _illegal(self, move: Move, rule: str) -> IllegalMoveError:
        return IllegalMoveError(str(move), rule, self._reminder(rule))

    # ------------------------------------------------------------------ resolving moves

    def _resolve(self, move: Move) -> tuple[str, int, int, str, int]:
        """Check a card move; return ``(source, si, count, target, ti)`` with 0-based indices
        (``si`` is 0 for the waste) or raise :class:`IllegalMoveError`."""
        source = move.source
        count = move.count
        columns = self.columns
        si = move.source_index - 1
        if source == WASTE:
            if not self.waste:
                raise self._illegal(move, "empty-source")
            card = self.waste[-1]
            si = 0
        elif source == TABLEAU:
            column = columns[si]
            if count > 1:
                refusal = self._multi_refusal(column, self.down[si], count)
                if refusal is not None:
                    raise self._illegal(move, refusal)
                card = column[-count]
            elif column:
                card = column[-1]
            else:
                raise self._illegal(move, "empty-source")
        else:
            pile = self.foundations[si]
            if not pile:
                raise self._illegal(move, "empty-source")
            if move.target == FOUNDATION:
                raise self._illegal(move, "foundation-to-foundation")
            card = pile[-1]

        if move.target == FOUNDATION:
            if count > 1:
                raise self._illegal(move, self._multi_to_foundation_rule())
            ti = move.target_index - 1
            if ti < 0:
                for slot in range(self.n_foundations):
                    if self._foundation_refusal(card, slot) is None:
                        return source, si, 1, FOUNDATION, slot
                raise self._illegal(move, "no-foundation-accepts")
            refusal = self._foundation_refusal(card, ti)
            if refusal is not None:
                raise self._illegal(move, refusal)
            return source, si, 1, FOUNDATION, ti

        # onto the table
        ti = move.target_index - 1
        if ti < 0:
            best = -1
            best_len = -1
            for i in range(self.n_columns):
                if source == TABLEAU and i == si:
                    continue
                if self._table_refusal(card, count, i) is None and len(columns[i]) > best_len:
                    best, best_len = i, len(columns[i])
            if best < 0:
                raise self._illegal(move, "no-table-destination")
            return source, si, count, TABLEAU, best
        if source == TABLEAU and ti == si:
            raise self._illegal(move, "same-column")
        refusal = self._table_refusal(card, count, ti)
        if refusal is not None:
            raise self._illegal(move, refusal)
        return source, si, count, TABLEAU, ti

    def _table_refusal(self, card: Card, count: int, ti: int) -> str | None:
        """The rule id that stops ``card`` (bottom of ``count`` moving cards, already allowed
        to move as a unit) landing on column ``ti``, or None."""
        target = self.columns[ti]
        if not target:
            return None if RANK_OF[card] == KING else "king-only-on-empty"
        if count > 1 and self.MULTI_ONTO_CARD_RULE is not None:
            return self.MULTI_ONTO_CARD_RULE
        return None if _FITS[card][target[-1]] else "build-down-alternating"

    # ------------------------------------------------------------------ applying

    def _apply_move(self, source: str, si: int, count: int, target: str, ti: int) -> Outcome:
        score_before = self.score
        columns = self.columns
        uncovered: tuple[Card, ...] = ()
        flipped = False
        # take the cards
        if source == TABLEAU:
            column = columns[si]
            if count == 1:
                cards = [column.pop()]
            else:
                cards = column[-count:]
                del column[-count:]
            if column and self.down[si] == len(column):
                self.down[si] -= 1
                flipped = True
                uncovered = (column[-1],)
        elif source == WASTE:
            cards = [self.waste.pop()]
        else:
            cards = [self.foundations[si].pop()]
            self.on_foundations -= 1
        # place them
        score = score_before
        if target == FOUNDATION:
            self.foundations[ti].append(cards[0])
            self.on_foundations += 1
            score += self.FOUNDATION_POINTS
        else:
            columns[ti].extend(cards)
            if source == WASTE:
                score += self.WASTE_TO_TABLEAU_POINTS
            elif source == FOUNDATION:
                score += self.FOUNDATION_TO_TABLEAU_POINTS
        if score < 0:
            score = 0
        if flipped:
            score += self.UNCOVER_POINTS
        self.moves += 1
        self.score = score
        self._record(("m", source, si, count, target, ti, flipped, score_before))
        if target == FOUNDATION and self.on_foundations == self.total:
            self._win()
        return Outcome(
            _mv(source, si + 1 if source != WASTE else 0, count, target, ti + 1), uncovered
        )

    def _record(self, record: _Record) -> None:
        history = self._history
        if history.maxlen is not None and len(history) == history.maxlen:
            self._undo_dropped = True
        history.append(record)

    def _win(self) -> None:
        self.won = True

    def _stock(self) -> Outcome:
        score_before = self.score
        if self.stock:
            stock, waste = self.stock, self.waste
            n = min(self.draw, len(stock))
            drawn = stock[-n:]
            drawn.reverse()
            del stock[-n:]
            waste.extend(drawn)
            self.moves += 1
            self._record(("s", n, score_before))
            return Outcome(STOCK, tuple(drawn))
        if not self.waste:
            raise self._illegal(STOCK, "stock-empty")
        self.waste.reverse()
        self.stock, self.waste = self.waste, []
        self.moves += 1
        score = self.score + self.redeal_points
        self.score = score if score > 0 else 0
        self.deck_turns += 1
        self._record(("r", score_before))
        return _REDEALT

    def _undo(self) -> Outcome:
        if not self._history:
            raise self._illegal(UNDO, "undo-limit" if self._undo_dropped else "nothing-to-undo")
        record = self._history.pop()
        self._take_back(record)
        score = record[-1] + self.UNDO_POINTS  # every record ends with the score before it
        self.score = score if score > 0 else 0
        if self.UNDO_COUNTS_AS_MOVE:
            self.moves += 1
        return _UNDONE

    def _take_back(self, record: _Record) -> None:
        """Put the cards back as they were before the action ``record`` tells of."""
        kind = record[0]
        if kind == "m":
            _, source, si, count, target, ti, flipped, _ = record
            if target == FOUNDATION:
                cards = [self.foundations[ti].pop()]
                self.on_foundations -= 1
            else:
                column = self.columns[ti]
                cards = column[-count:]
                del column[-count:]
            if source == TABLEAU:
                if flipped:
                    self.down[si] += 1
                self.columns[si].extend(cards)
            elif source == WASTE:
                self.waste.append(cards[0])
            else:
                self.foundations[si].append(cards[0])
                self.on_foundations += 1
        elif kind == "s":
            n = record[1]
            waste = self.waste
            back = waste[-n:]
            del waste[-n:]
            back.reverse()
            self.stock.extend(back)
        elif kind == "r":
            self.deck_turns -= 1
            self.stock.reverse()
            self.waste, self.stock = self.stock, []
        else:  # auto-finish; unreachable in play since it always wins, kept for solvers
            for col, slot in reversed(record[1]):
                self.columns[col].append(self.foundations[slot].pop())
                self.on_foundations -= 1
            self.won = False

    def _redo(self, record: _Record) -> None:
        """Move the cards again as the action ``record`` tells of did (an undo popped);
        the counters are the caller's."""
        kind = record[0]
        if kind == "m":
            _, source, si, count, target, ti, flipped, _ = record
            if source == TABLEAU:
                column = self.columns[si]
                cards = column[-count:]
                del column[-count:]
                if flipped:
                    self.down[si] -= 1
            elif source == WASTE:
                cards = [self.waste.pop()]
            else:
                cards = [self.foundations[si].pop()]
            if target == FOUNDATION:
                self.foundations[ti].append(cards[0])
            else:
                self.columns[ti].extend(cards)
        elif kind == "s":
            n = record[1]
            drawn = self.stock[-n:]
            drawn.reverse()
            del self.stock[-n:]
            self.waste.extend(drawn)
        elif kind == "r":
            self.waste.reverse()
            self.stock, self.waste = self.waste, []
        else:
            for col, slot in record[1]:
                self.foundations[slot].append(self.columns[col].pop())

    def _auto(self) -> Outcome:
        raise self._illegal(AUTO, "no-auto-finish")

    # ------------------------------------------------------------------ legal moves

    @property
    def legal_moves(self) -> LegalMoves:
        """A lazy view of the legal actions (explicit piles, no shorthands, no undo):
        ``move in game.legal_moves``, ``list(game.legal_moves)``."""
        return LegalMoves(self)

    def generate_legal_moves(self) -> Iterator[Move]:
        """Yield every legal action except undo, with explicit destinations."""
        if self.won:
            return
        if self.stock or self.waste:
            yield STOCK
        if self.auto_finish_offered():
            yield AUTO
        columns, down = self.columns, self.down
        n_columns, n_foundations = self.n_columns, self.n_foundations
        empties = [i for i in range(n_columns) if not columns[i]]
        tops = [col[-1] if col else -1 for col in columns]
        refusal = self._foundation_refusal
        onto_card = self.MULTI_ONTO_CARD_RULE is None

        def single(source: str, si: int, card: Card) -> Iterator[Move]:
            if source != FOUNDATION:
                for slot in range(n_foundations):
                    if refusal(card, slot) is None:
                        yield _mv(source, si + (source != WASTE), 1, FOUNDATION, slot + 1)
            if RANK_OF[card] == KING:
                for i in empties:
                    if not (source == TABLEAU and i == si):
                        yield _mv(source, si + (source != WASTE), 1, TABLEAU, i + 1)
            else:
                for i in range(n_columns):
                    top = tops[i]
                    if top >= 0 and _FITS[card][top] and not (source == TABLEAU and i == si):
                        yield _mv(source, si + (source != WASTE), 1, TABLEAU, i + 1)

        if self.waste:
            yield from single(WASTE, 0, self.waste[-1])
        for si in range(n_columns):
            column = columns[si]
            if not column:
                continue
            yield from single(TABLEAU, si, column[-1])
            for count in range(2, len(column) - down[si] + 1):
                card = column[-count]
                if not _FITS[column[-count + 1]][card]:
                    break  # the run is broken here, so no larger unit moves either
                # A face-up run: it moves into an empty column if led by a king (both games),
                # and onto a card only where units may land on cards (Klondike).
                if RANK_OF[card] == KING:
                    for i in empties:
                        if i != si:
                            yield _mv(TABLEAU, si + 1, count, TABLEAU, i + 1)
                elif onto_card:
                    for i in range(n_columns):
                        top = tops[i]
                        if i != si and top >= 0 and _FITS[card][top]:
                            yield _mv(TABLEAU, si + 1, count, TABLEAU, i + 1)
        for si in range(n_foundations):
            pile = self.foundations[si]
            if pile:
                yield from single(FOUNDATION, si, pile[-1])

    # ------------------------------------------------------------------ views

    def position(self) -> dict[str, Any]:
        """The full position JSON of ``moves.md``, face-down cards and stock order included.
        For tools, tests and finished games — never for a player during play."""
        names = CARD_NAMES
        return {
            "code": str(self.code),
            "tableau": [
                {"down": [names[c] for c in col[:d]], "up": [names[c] for c in col[d:]]}
                for col, d in zip(self.columns, self.down, strict=True)
            ],
            "stock": [names[c] for c in self.stock],
            "waste": [names[c] for c in self.waste],
            "foundations": [[names[c] for c in pile] for pile in self.foundations],
            "score": self.score,
            "moves": self.moves,
            "won": self.won,
        }

    def player_view(self) -> dict[str, Any]:
        """What the player (or a spectator) may see: face-up cards only.

        Face-down cards and the stock are given as counts. Of the waste only its top
        cards (one, or three in draw three) are shown with its count: the waste's order
        is the next pass's stock order. The deal code is left out too: it would tell every
        face-down card and the stock order.
        """
        names = CARD_NAMES
        waste = self.waste
        return {
            "tableau": [
                {"down": d, "up": [names[c] for c in col[d:]]}
                for col, d in zip(self.columns, self.down, strict=True)
            ],
            "stock": len(self.stock),
            "waste": {"count": len(waste), "top": [names[c] for c in waste[-self.draw :]]},
            "foundations": [[names[c] for c in pile] for pile in self.foundations],
            "score": self.score,
            "moves": self.moves,
            "won": self.won,
            "can_undo": self.can_undo,
            "auto_finish": self.auto_finish_offered(),
        }

    def view_changes(self, move: Move) -> dict[str, Any]:
        """The parts of :meth:`player_view` that the action ``move`` (as resolved by
        :meth:`push`, i.e. ``Outcome.move``) may have changed, in the same shape, except that
        ``tableau`` and ``foundations`` are objects keyed by the 1-based pile number (as in
        the notation: ``"3"`` is ``t3`` or ``f3``) holding only the piles that changed.

        A card move names the two piles it changes; a stock action changes the stock and the
        waste; an undo or auto-finish can change anything, so every pile is given. The
        counters (score, moves, won, can undo, auto-finish) are always given. Merging the
        result into the previous view gives the new :meth:`player_view` exactly; it costs a
        fraction of building the whole view again (the server sends it with every ``ack``).
        """
        names = CARD_NAMES
        out: dict[str, Any] = {}
        kind = move.kind
        if kind == "m":
            tableau: dict[str, Any] = {}
            foundations: dict[str, Any] = {}
            ends = ((move.source, move.source_index), (move.target, move.target_index))
            for pile, number in ends:
                if pile == TABLEAU:
                    d = self.down[number - 1]
                    tableau[str(number)] = {
                        "down": d,
                        "up": [names[c] for c in self.columns[number - 1][d:]],
                    }
                elif pile == FOUNDATION:
                    foundations[str(number)] = [names[c] for c in self.foundations[number - 1]]
                else:
                    waste = self.waste
                    out["waste"] = {
                        "count": len(waste),
                        "top": [names[c] for c in waste[-self.draw :]],
                    }
            if tableau:
                out["tableau"] = tableau
            if foundations:
                out["foundations"] = foundations
        elif kind == "s":
            waste = self.waste
            out["stock"] = len(self.stock)
            out["waste"] = {"count": len(waste), "top": [names[c] for c in waste[-self.draw :]]}
        else:
            view = self.player_view()
            view["tableau"] = {str(i + 1): col for i, col in enumerate(view["tableau"])}
            view["foundations"] = {str(i + 1): pile for i, pile in enumerate(view["foundations"])}
            return view
        out["score"] = self.score
        out["moves"] = self.moves
        out["won"] = self.won
        out["can_undo"] = self.can_undo
        out["auto_finish"] = self.auto_finish_offered()
        return out

    def hidden_cards(self) -> list[Card]:
        """Cards a player may not see now: face-down column cards, the stock, and the waste
        below its visible top."""
        hidden = [c for col, d in zip(self.columns, self.down, strict=True) for c in col[:d]]
        hidden.extend(self.stock)
        hidden.extend(self.waste[: max(0, len(self.waste) - self.draw)])
        return hidden

    def move_list(self) -> str:
        """The accepted actions as one line of notation (resolved destinations)."""
        return " ".join(str(m) for m in self.actions)

    def copy(self) -> Game:
        """An independent copy (for tools and solvers; never on a race's hot path)."""
        # (constructed, not allocated bare: a compiled class's allocation runs ``__init__``;
        # the layout comes from the cache, so this deals nothing again)
        other = type(self)(self.code)
        other.code = self.code
        other.columns = [list(c) for c in self.columns]
        other.down = list(self.down)
        other.stock = list(self.stock)
        other.waste = list(self.waste)
        other.foundations = [list(f) for f in self.foundations]
        other.score, other.moves, other.won = self.score, self.moves, self.won
        other.on_foundations, other.total, other.draw = self.on_foundations, self.total, self.draw
        other.redeal_points = self.redeal_points
        other.deck_turns = self.deck_turns
        other._history = deque(self._history, maxlen=self.undo_depth)
        other._undo_dropped = self._undo_dropped
        other._pushes = list(self._pushes)
        other.actions = list(self.actions)
        return other

    def card_count(self) -> dict[Card, int]:
        """How many of each card are anywhere in the game (for conservation checks)."""
        counts: dict[Card, int] = {}
        for pile in (*self.columns, self.stock, self.waste, *self.foundations):
            for c in pile:
                counts[c] = counts.get(c, 0) + 1
        return counts


class LegalMoves:
    """A lazy view of a game's legal moves, like python-chess's ``board.legal_moves``."""

    __slots__ = ("_game",)

    def __init__(self, game: Game) -> None:
        self._game = game

    def __iter__(self) -> Iterator[Move]:
        return self._game.generate_legal_moves()

    def __contains__(self, move: object) -> bool:
        return (
            isinstance(move, Move)
            and move.kind != "u"
            and not move.is_shorthand
            and self._game.is_legal(move)
        )

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __bool__(self) -> bool:
        return any(True for _ in self)

    def __repr__(self) -> str:
        return f"<LegalMoves ({', '.join(str(m) for m in self)})>"


_MOVES: Final[dict[tuple[str, int, int, str, int], Move]] = {}


def _mv(source: str, si: int, count: int, target: str, ti: int) -> Move:
    key = (source, si, count, target, ti)
    move = _MOVES.get(key)
    if move is None:
        move = _MOVES[key] = Move("m", source, si, count, target, ti)
    return move


REMINDERS: Final[dict[str, str]] = {
    "game-over": "The game is won: no more actions are possible.",
    "nothing-to-undo": "There is nothing to undo.",
    "undo-limit": "Only the last 100 actions can be undone.",
    "stock-empty": "The stock and the waste are both empty: there is nothing to turn.",
    "no-auto-finish": (
        "Easy Harp has no automatic moves: play every card to the foundations yourself."
    ),
    "auto-finish-not-offered": (
        "Auto-finish is offered only when no face-down card is left "
        "and the stock and the waste are empty."
    ),
    "empty-source": "There is no card there to move.",
    "not-enough-cards": "That column holds fewer cards than that.",
    "face-down-card": "Face-down cards cannot be moved.",
    "same-column": "A card cannot be moved onto its own column.",
    "foundation-to-foundation": "Cards do not move from one foundation to another.",
    "one-card-at-a-time": (
        "Only the top card of a column moves: take a built sequence apart one card at a time "
        "(only a king-led sequence moves as a whole, into an empty column)."
    ),
    "not-a-run": ("Only a run — descending by one rank in alternating colours — moves together."),
    "foundation-one-card": "Only one card at a time goes to a foundation.",
    "king-only-on-empty": "Only a king may be placed into an empty column.",
    "build-down-alternating": (
        "A card goes on a card of the opposite colour and exactly one rank higher."
    ),
    "wrong-suit-slot": "Each foundation slot takes only its own suit.",
    "foundation-starts-with-ace": "A foundation starts with an ace.",
    "foundation-builds-up-in-suit": (
        "A foundation builds up in its suit, one rank at a time, from the ace to the king."
    ),
    "no-foundation-accepts": "No foundation accepts this card yet.",
    "no-table-destination": "No column accepts this card.",
}

GAMES: Final[dict[str, type[Game]]] = {}
_BY_PREFIX: Final[dict[str, type[Game]]] = {}


def register(cls: type[Game], *names: str) -> type[Game]:
    """Register a game class under its names and its code prefix."""
    for name in names:
        GAMES[name] = cls
    _BY_PREFIX[cls.prefix] = cls
    return cls


def game_class(code: DealCode | str) -> type[Game]:
    """The game class for a deal code (``EH…`` or ``KL…``) or a game name."""
    if isinstance(code, str) and code in GAMES:
        return GAMES[code]
    if isinstance(code, str):
        code = DealCode.parse(code)
    return _BY_PREFIX[code.game]


def new_game(code: DealCode | str) -> Game:
    """A fresh game of the deal ``code``: ``new_game("EH1-N-AAAAAAF")``."""
    if isinstance(code, str):
        code = DealCode.parse(code)
    return _BY_PREFIX[code.game](code)


def replay(code: DealCode | str, moves: Iterable[Move | str]) -> Game:
    """Rebuild a game from its deal code and action list (``u`` included).

    Raises on the first refused action, like :meth:`Game.push`.
    """
    game = new_game(code)
    push = game.push
    for move in moves:
        push(move)
    return game
