"""samedeal's rules engine: cards, deal codes, Easy Harp, Klondike, notation — no I/O.

>>> from engine import new_game
>>> game = new_game("KL1-1-AAAAAAF")
>>> outcome = game.push("s")
"""

from __future__ import annotations

# (first: it decides whether the compiled modules or their sources are loaded)
from . import _build
from .cards import Card, card_name, parse_card
from .dealcode import GAME_NAMES, DealCode
from .easyharp import EasyHarp
from .errors import GameError, IllegalMoveError, InvalidDealCodeError, InvalidMoveError
from .game import GAMES, Game, LegalMoves, Outcome, game_class, new_game, replay
from .klondike import Klondike
from .moves import Move, parse_move_list

__all__ = [
    "BUILD",
    "COMPILED",
    "GAMES",
    "GAME_NAMES",
    "Card",
    "DealCode",
    "EasyHarp",
    "Game",
    "GameError",
    "IllegalMoveError",
    "InvalidDealCodeError",
    "InvalidMoveError",
    "Klondike",
    "LegalMoves",
    "Move",
    "Outcome",
    "card_name",
    "game_class",
    "new_game",
    "parse_card",
    "parse_move_list",
    "replay",
]

#: whether the engine's compiled modules are loaded (``pip install`` builds them with mypyc
#: where a C compiler exists; ``SAMEDEAL_PURE=1`` loads the sources instead: see ``_build``)
COMPILED: bool = "engine.game" in _build.compiled_modules()
#: which build is loaded, in words (for ``--version`` lines and benchmark output)
BUILD: str = "compiled (mypyc)" if COMPILED else f"pure Python ({_build.REASON or 'not built'})"
