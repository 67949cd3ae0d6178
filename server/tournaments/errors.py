"""The one exception of tournaments: an act or settings the tournament refuses."""

from __future__ import annotations

__all__ = ["TournamentError"]


class TournamentError(Exception):
    """An act the tournament refuses. ``error_code`` is the error code sent to the client (and
    the key of its text in the message catalogues); ``message`` an English sentence for logs
    and tools. A refused act changes nothing."""

    def __init__(self, error_code: str, message: str) -> None:
        super().__init__(message)
        self.error_code = error_code
        self.message = message
