"""The engine's exceptions: one small hierarchy under :class:`GameError`.

Bad syntax (:class:`InvalidMoveError`), a legal-looking move the position refuses
(:class:`IllegalMoveError`) and a malformed deal code (:class:`InvalidDealCodeError`) are
different errors, so that callers can tell a typo from a rule.
"""

from __future__ import annotations

__all__ = ["GameError", "IllegalMoveError", "InvalidDealCodeError", "InvalidMoveError"]


class GameError(ValueError):
    """Base class of every error the engine raises for bad input."""


class InvalidMoveError(GameError):
    """The text is not a move in the notation of ``moves.md`` (or names a pile the game lacks)."""

    def __init__(self, text: str, reason: str) -> None:
        self.text = text
        self.reason = reason
        # (set here, not on the class: compiled, an exception class keeps no class attributes)
        self.rule = "notation"
        super().__init__(f"invalid move {text!r}: {reason}")


class IllegalMoveError(GameError):
    """A well-formed move that the position refuses.

    ``rule`` is a stable machine-readable id (e.g. ``one-card-at-a-time``) and ``reminder``
    one sentence that reminds the player of the rule, like the app's "interactive rules".
    """

    def __init__(self, move: str, rule: str, reminder: str) -> None:
        self.move = move
        self.rule = rule
        self.reminder = reminder
        super().__init__(f"illegal move {move!r}: {reminder}")


class InvalidDealCodeError(GameError):
    """A deal code that does not parse; ``part`` names the wrong part."""

    def __init__(self, text: str, part: str, reason: str) -> None:
        self.text = text
        self.part = part
        self.reason = reason
        super().__init__(f"invalid deal code {text!r}: {part}: {reason}")
