"""Moves: small frozen values in the text notation of ``moves.md``.

``Move.parse("t6:4-t2")`` reads a move, ``str(move)`` prints its canonical form and the two
round-trip. Parsing checks syntax only; whether a column or slot exists is checked by the game
(:meth:`engine.game.Game.parse_move`), and whether the position allows the move by
:meth:`engine.game.Game.push`.
"""

from __future__ import annotations

import re
from dataclasses import FrozenInstanceError
from functools import lru_cache
from typing import ClassVar, Final

from .errors import InvalidMoveError

__all__ = [
    "AUTO",
    "FOUNDATION",
    "STOCK",
    "TABLEAU",
    "UNDO",
    "WASTE",
    "Frozen",
    "Move",
    "parse_move_list",
]

WASTE: Final = "w"
TABLEAU: Final = "t"
FOUNDATION: Final = "f"

_MOVE_RE: Final = re.compile(
    r"(?P<src>w|t(?P<sn>[1-9][0-9]*)(?::(?P<count>[1-9][0-9]*))?|f(?P<fn>[1-9][0-9]*))"
    r" *- *"
    r"(?P<dst>t|f)(?P<dn>[1-9][0-9]*)?"
)
_MAX_TEXT: Final = 32


class Frozen:
    """A value whose fields are each set once, by its ``__init__``: any later assignment or
    deletion is refused, as in a frozen dataclass. (Compiled, ``__init__`` sets the fields
    directly and never comes here.)"""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        if hasattr(self, name):
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


class Move(Frozen):
    """One action.

    ``kind`` is ``"s"`` (stock), ``"u"`` (undo), ``"a"`` (auto-finish) or ``"m"`` (move cards).
    For ``"m"``: ``source`` is ``"w"``, ``"t"`` or ``"f"`` with the 1-based ``source_index``
    (0 for the waste), ``count`` cards (only a column may give more than one), and ``target``
    ``"t"`` or ``"f"`` with the 1-based ``target_index``; ``target_index`` 0 is the shorthand
    destination (``f`` "tap", ``t`` "double tap") that the game resolves.

    Frozen, compared and hashed by its fields. (Written out rather than a frozen dataclass:
    mypyc, which compiles this module, cannot build a dataclass with the class variables
    below.)
    """

    __slots__ = ("count", "kind", "source", "source_index", "target", "target_index")

    kind: str
    source: str
    source_index: int
    count: int
    target: str
    target_index: int

    STOCK: ClassVar[Move]
    UNDO: ClassVar[Move]
    AUTO: ClassVar[Move]

    def __init__(
        self,
        kind: str,
        source: str = "",
        source_index: int = 0,
        count: int = 1,
        target: str = "",
        target_index: int = 0,
    ) -> None:
        self.kind = kind
        self.source = source
        self.source_index = source_index
        self.count = count
        self.target = target
        self.target_index = target_index

    def __reduce__(self) -> tuple[type[Move], tuple[str, str, int, int, str, int]]:
        return (Move, self._fields())

    def _fields(self) -> tuple[str, str, int, int, str, int]:
        return (
            self.kind,
            self.source,
            self.source_index,
            self.count,
            self.target,
            self.target_index,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    @staticmethod
    def parse(text: object) -> Move:
        """Parse one action (case-insensitive, spaces allowed around ``-``).

        Raises :class:`~engine.errors.InvalidMoveError` quoting the input, also for input
        that is not text (typed ``object`` so that the compiled build says so too, rather
        than raising ``TypeError`` at the call).
        """
        if not isinstance(text, str):
            raise InvalidMoveError(repr(text), "a move must be text")
        return _parse(text)

    @classmethod
    def cards(
        cls, source: str, source_index: int, target: str, target_index: int = 0, count: int = 1
    ) -> Move:
        """A card move; ``target_index`` 0 means the shorthand destination."""
        return cls("m", source, source_index, count, target, target_index)

    @property
    def is_shorthand(self) -> bool:
        """True for the ``-f`` / ``-t`` destinations that the game resolves."""
        return self.kind == "m" and self.target_index == 0

    def __str__(self) -> str:
        if self.kind != "m":
            return self.kind
        if self.source == WASTE:
            src = "w"
        elif self.count > 1:
            src = f"t{self.source_index}:{self.count}"
        else:
            src = f"{self.source}{self.source_index}"
        dst = self.target + (str(self.target_index) if self.target_index else "")
        return f"{src}-{dst}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"


Move.STOCK = Move("s")
Move.UNDO = Move("u")
Move.AUTO = Move("a")
STOCK: Final = Move.STOCK
UNDO: Final = Move.UNDO
AUTO: Final = Move.AUTO
_SIMPLE: Final = {"s": STOCK, "u": UNDO, "a": AUTO}


@lru_cache(maxsize=4096)
def _parse(text: str) -> Move:
    # The notation has only a few hundred distinct spellings, so a cache makes parsing on the
    # hot path a dictionary lookup.
    if len(text) > _MAX_TEXT:
        raise InvalidMoveError(text[:_MAX_TEXT] + "…", "too long to be a move")
    norm = text.strip().lower()
    simple = _SIMPLE.get(norm)
    if simple is not None:
        return simple
    m = _MOVE_RE.fullmatch(norm)
    if m is None:
        raise InvalidMoveError(text, _why_not(norm))
    src = m["src"]
    if src == "w":
        source, index, count = WASTE, 0, 1
    elif src[0] == "t":
        source, index, count = TABLEAU, int(m["sn"]), int(m["count"] or 1)
    else:
        source, index, count = FOUNDATION, int(m["fn"]), 1
    target_index = int(m["dn"]) if m["dn"] else 0
    return Move("m", source, index, count, m["dst"], target_index)


def _why_not(norm: str) -> str:
    if not norm:
        return "empty"
    if re.search(r"[tf]0", norm):
        return "columns and slots are numbered from 1, without leading zeros"
    if re.search(r":0", norm):
        return "a card count must be at least 1"
    if "-" not in norm:
        return "expected s, u, a or SOURCE-DESTINATION such as w-t3 or t2-f"
    src, _, dst = norm.partition("-")
    if not re.fullmatch(r" *(w|t[1-9][0-9]*(:[1-9][0-9]*)?|f[1-9][0-9]*) *", src):
        return f"bad source {src.strip()!r}: expected w, tN, tN:K or fN"
    return f"bad destination {dst.strip()!r}: expected tN, fN, t or f"


def parse_move_list(text: str) -> list[Move]:
    """Parse a move list written as one line of actions separated by white space."""
    return [Move.parse(part) for part in text.split()]
