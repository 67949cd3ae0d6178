"""samedeal's rules engine: cards, deal codes, Easy Harp, Klondike, notation — no I/O.

>>> from engine import new_game
>>> game = new_game("KL1-1-AAAAAAF")
>>> outcome = game.push("s")
"""

from __future__ import annotations

from .cards import Card, card_name, parse_card
from .dealcode import GAME_NAMES, DealCode
from .easyharp import EasyHarp
from .errors import GameError, IllegalMoveError, InvalidDealCodeError, InvalidMoveError
from .game import GAMES, Game, LegalMoves, Outcome, game_class, new_game, replay
from .klondike import Klondike
from .moves import Move, parse_move_list

__all__ = [
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
