"""Cards as small integers.

A card is ``suit * 13 + rank`` with suits in the order ``C D H S`` and ranks ``A 2 … K`` as
0 … 12, so ``AC`` is 0 and ``KS`` is 51. The two copies of a card in Easy Harp are the same
integer: they are indistinguishable. Integers keep the hot path (every move of every race)
free of object allocation; the lookup tables below replace arithmetic in inner loops.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "CARDS",
    "CARD_NAMES",
    "IS_RED",
    "RANKS",
    "RANK_OF",
    "SUITS",
    "SUIT_OF",
    "Card",
    "card_name",
    "fits_on",
    "parse_card",
]

Card = int

SUITS: Final = "CDHS"
RANKS: Final = "A23456789TJQK"
CARDS: Final = tuple(range(52))
CARD_NAMES: Final = tuple(r + s for s in SUITS for r in RANKS)
RANK_OF: Final = tuple(c % 13 for c in CARDS)
SUIT_OF: Final = tuple(c // 13 for c in CARDS)
IS_RED: Final = tuple(SUIT_OF[c] in (1, 2) for c in CARDS)
_BY_NAME: Final = {name: i for i, name in enumerate(CARD_NAMES)}

# FITS[c][d]: card c may be built on card d (one rank lower, opposite colour).
_FITS: Final = tuple(
    tuple(RANK_OF[d] == RANK_OF[c] + 1 and IS_RED[c] != IS_RED[d] for d in CARDS) for c in CARDS
)


def card_name(card: Card) -> str:
    """The card's text form, e.g. ``"TD"``."""
    return CARD_NAMES[card]


def parse_card(text: str) -> Card:
    """Parse ``"7h"`` / ``"TD"`` (any case) into a card; raises ``ValueError``."""
    card = _BY_NAME.get(text.strip().upper())
    if card is None:
        raise ValueError(f"not a card: {text!r}")
    return card


def fits_on(card: Card, target: Card) -> bool:
    """True if ``card`` may be built on ``target``: one rank lower and the other colour."""
    return _FITS[card][target]
