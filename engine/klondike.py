"""Klondike, draw one and draw three, Windows-style scoring (``klondike.md``)."""

from __future__ import annotations

from typing import ClassVar, Final

from .cards import RANK_OF, Card
from .easyharp import _is_run
from .game import Game, Outcome, register
from .moves import AUTO

__all__ = ["Klondike"]

WIN_BONUS: Final = 700


class Klondike(Game):
    """Klondike. Runs move together; foundations take any suit; unlimited undo at −10 that
    counts as a move; redeals cost points; a win earns 700 − 2 × moves; auto-finish once
    nothing is hidden."""

    name: ClassVar[str] = "klondike"
    prefix: ClassVar[str] = "KL"
    copies: ClassVar[int] = 1
    n_columns: ClassVar[int] = 7
    n_foundations: ClassVar[int] = 4
    undo_depth: ClassVar[int | None] = None
    FOUNDATION_TO_TABLEAU_POINTS: ClassVar[int] = -15
    REDEAL_POINTS: ClassVar[tuple[int, int]] = (-50, -20)
    UNDO_POINTS: ClassVar[int] = -10
    UNDO_COUNTS_AS_MOVE: ClassVar[bool] = True

    __slots__ = ()

    def _multi_refusal(self, column: list[Card], down: int, count: int) -> str | None:
        if not column:
            return "empty-source"
        if count > len(column):
            return "not-enough-cards"
        if count > len(column) - down:
            return "face-down-card"
        return None if _is_run(column, count) else "not-a-run"

    def _multi_to_foundation_rule(self) -> str:
        return "foundation-one-card"

    def _win(self) -> None:
        self.won = True
        bonus = WIN_BONUS - 2 * self.moves
        if bonus > 0:
            self.score += bonus

    def auto_finish_offered(self) -> bool:
        return not (self.won or self.stock or self.waste or any(self.down))

    def _auto(self) -> Outcome:
        if not self.auto_finish_offered():
            raise self._illegal(AUTO, "auto-finish-not-offered")
        score_before = self.score
        columns, foundations = self.columns, self.foundations
        plays: list[tuple[int, int]] = []
        # The face-up part of every column is a run, so the lowest top card always has its
        # predecessor on a foundation already: the loop always finishes the game.
        while self.on_foundations < self.total:
            best = -1
            for i, column in enumerate(columns):
                if column and (best < 0 or RANK_OF[column[-1]] < RANK_OF[columns[best][-1]]):
                    best = i
            card = columns[best][-1]
            slot = next(s for s in range(4) if self._foundation_refusal(card, s) is None)
            foundations[slot].append(columns[best].pop())
            self.on_foundations += 1
            self.moves += 1
            self.score += self.FOUNDATION_POINTS
            plays.append((best, slot))
        self._record(("a", tuple(plays), score_before))
        self._win()
        return Outcome(AUTO)


register(Klondike, "klondike", "klondike-3")
