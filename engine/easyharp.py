"""Easy Harp: two decks, nine columns, one card at a time (``easy-harp.md``)."""

from __future__ import annotations

from typing import ClassVar, Final

from .cards import _FITS, RANK_OF, SUIT_OF, Card
from .game import KING, Game, register

__all__ = ["SLOT_SUITS", "EasyHarp"]

#: **R** foundation slot i (0-based) is reserved for suit S H C D S H C D (suit index C=0 … S=3).
SLOT_SUITS: Final = (3, 2, 0, 1, 3, 2, 0, 1)


class EasyHarp(Game):
    """Easy Harp. Only single cards move, except a king-led sequence into an empty column;
    foundation slots are reserved by suit; no automatic moves; undo 100 deep, free."""

    name: ClassVar[str] = "easy-harp"
    prefix: ClassVar[str] = "EH"
    copies: ClassVar[int] = 2
    n_columns: ClassVar[int] = 9
    n_foundations: ClassVar[int] = 8
    undo_depth: ClassVar[int | None] = 100

    __slots__ = ()

    def _foundation_refusal(self, card: Card, slot: int) -> str | None:
        if SLOT_SUITS[slot] != SUIT_OF[card]:
            return "wrong-suit-slot"
        return super()._foundation_refusal(card, slot)

    # moves.md: any multi-card attempt other than a king-led sequence into an empty column
    # is rejected under the one-card rule (rule 2), a king-led sequence onto a card included.
    MULTI_ONTO_CARD_RULE: ClassVar[str | None] = "one-card-at-a-time"

    def _multi_refusal(self, column: list[Card], down: int, count: int) -> str | None:
        if (
            count > len(column) - down
            or RANK_OF[column[-count]] != KING
            or not _is_run(column, count)
        ):
            return "one-card-at-a-time"
        return None

    def _multi_to_foundation_rule(self) -> str:
        return "one-card-at-a-time"


def _is_run(column: list[Card], count: int) -> bool:
    """True if the top ``count`` cards descend by one rank in alternating colours."""
    for i in range(len(column) - count, len(column) - 1):
        if not _FITS[column[i + 1]][column[i]]:
            return False
    return True


register(EasyHarp, "easy-harp")
