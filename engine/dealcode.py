"""Deal codes and the deal algorithm of ``deal-codes.md`` — a frozen public contract.

A :class:`DealCode` names one deal of one game forever. Its NUMBER part is 7 letters (a
*numbered* deal: ``EH1-N-AAAAAAF`` is Easy Harp deal 5, for deals that people type and share)
or 26 letters (a *sealed* deal, ``KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJUI``, drawn from about 2**122
deals per game, so that nobody can find it by dealing every candidate and comparing the cards
on the table; every deal the server chooses is sealed, ``fair-deals.md``). A sealed deal has
no deal number: :attr:`DealCode.number` is ``None``, and it is named by its code.
:meth:`DealCode.layout` turns either into columns and a stock with the SHA-256 seed, the
xoshiro128** generator and a Fisher–Yates shuffle, exactly as the contract says, so that
clients in other languages reproduce the same cards.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Final

from .cards import Card
from .errors import InvalidDealCodeError

__all__ = [
    "GAME_NAMES",
    "GAME_PREFIXES",
    "MAX_NUMBER",
    "NUMBERED_LETTERS",
    "SEALED_BYTES",
    "SEALED_LETTERS",
    "DealCode",
    "Layout",
    "Xoshiro128",
]

MAX_NUMBER: Final = 999_999
#: letters of a numbered deal's NUMBER part
NUMBERED_LETTERS: Final = 7
#: letters of a sealed deal's NUMBER part
SEALED_LETTERS: Final = 26
#: bytes that :meth:`DealCode.from_bytes` reads (``sealed(prefix, b)`` of ``fair-deals.md``)
SEALED_BYTES: Final = 16
_SEALED_SPACE: Final = 26**SEALED_LETTERS
_MASK: Final = 0xFFFFFFFF
_WHITESPACE: Final = " \t\r\n"
_LENGTHS: Final = (
    f"must be {NUMBERED_LETTERS} letters A-Z (a numbered deal) or {SEALED_LETTERS} (a sealed deal)"
)

# (game letters, ruleset) -> allowed variants; name -> (letters, variant)
_RULESETS: Final = {("EH", 1): ("N",), ("KL", 1): ("1", "3")}
GAME_NAMES: Final = {"easy-harp": ("EH", "N"), "klondike": ("KL", "1"), "klondike-3": ("KL", "3")}
_NAME_OF: Final = {v: k for k, v in GAME_NAMES.items()}
#: name -> the prefix of its codes (``GAME+RULESET-VARIANT``)
GAME_PREFIXES: Final = {name: f"{game}1-{variant}" for name, (game, variant) in GAME_NAMES.items()}
_PREFIX_OF: Final = {prefix: name for name, prefix in GAME_PREFIXES.items()}


def _letters_problem(letters: str) -> str | None:
    """Why ``letters`` is not a NUMBER part (upper case), or None when it is one."""
    for ch in letters:
        if not "A" <= ch <= "Z":
            return f"{ch!r} is not a letter A-Z: the number {_LENGTHS}"
    if len(letters) not in (NUMBERED_LETTERS, SEALED_LETTERS):
        return f"{_LENGTHS}, got {len(letters)} letters"
    if len(letters) == NUMBERED_LETTERS:
        number = _base26(letters)
        if not 1 <= number <= MAX_NUMBER:
            return f"deal number {number:,} is outside 1 … {MAX_NUMBER:,}"
    return None


def _base26(letters: str) -> int:
    number = 0
    for ch in letters:
        number = number * 26 + (ord(ch) - 65)
    return number


def _letters(value: int, width: int) -> str:
    out = []
    for _ in range(width):
        value, digit = divmod(value, 26)
        out.append(chr(65 + digit))
    return "".join(reversed(out))


def _game(name: str) -> tuple[str, str]:
    """(game letters, variant) of a game name; :class:`InvalidDealCodeError` else."""
    try:
        return GAME_NAMES[name]
    except (KeyError, TypeError):
        raise InvalidDealCodeError(
            str(name), "game", f"unknown game {name!r} (one of {', '.join(GAME_NAMES)})"
        ) from None


class Xoshiro128:
    """The xoshiro128** generator of the contract (all arithmetic modulo 2**32)."""

    __slots__ = ("s0", "s1", "s2", "s3")

    def __init__(self, s0: int, s1: int, s2: int, s3: int) -> None:
        self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3

    @classmethod
    def from_seed(cls, seed: bytes) -> Xoshiro128:
        """Seed from the first 16 bytes, read as four little-endian 32-bit words."""
        words = [int.from_bytes(seed[i : i + 4], "little") for i in range(0, 16, 4)]
        return cls(*words)

    def next(self) -> int:
        """The next 32-bit output."""
        s0, s1, s2, s3 = self.s0, self.s1, self.s2, self.s3
        x = (s1 * 5) & _MASK
        result = ((((x << 7) | (x >> 25)) & _MASK) * 9) & _MASK
        t = (s1 << 9) & _MASK
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = ((s3 << 11) | (s3 >> 21)) & _MASK
        self.s0, self.s1, self.s2, self.s3 = s0, s1, s2, s3
        return result

    def bounded(self, m: int) -> int:
        """An unbiased integer in ``[0, m)`` by rejection."""
        limit = (1 << 32) - ((1 << 32) % m)
        while True:
            r = self.next()
            if r < limit:
                return r % m


@dataclass(frozen=True, slots=True)
class Layout:
    """A fresh deal: ``columns`` bottom → top (only the top card face up) and ``stock``
    in drawing order (``stock[0]`` is drawn first)."""

    columns: tuple[tuple[Card, ...], ...]
    stock: tuple[Card, ...]

    def __reduce__(self) -> tuple[object, ...]:
        # (compiled, a frozen dataclass does not unpickle by itself)
        return (Layout, (self.columns, self.stock))


@dataclass(frozen=True, slots=True, order=True)
class DealCode:
    """One deal of one game: ``DealCode.parse("EH1-N-AAAAAAF")``.

    ``game`` is ``"EH"`` or ``"KL"``, ``variant`` ``"N"``, ``"1"`` or ``"3"``, and ``letters``
    the NUMBER part: 7 letters for a numbered deal, 26 for a sealed one (:attr:`sealed`).
    Only a numbered deal has a deal :attr:`number`; a sealed deal's is ``None``, so that
    nothing can show it as "deal #…".
    """

    game: str
    ruleset: int
    variant: str
    letters: str

    def __post_init__(self) -> None:
        variants = _RULESETS.get((self.game, self.ruleset))
        text = f"{self.game}{self.ruleset}-{self.variant}-{self.letters}"
        if variants is None:
            raise InvalidDealCodeError(text, "game", "unknown game or ruleset")
        if self.variant not in variants:
            raise InvalidDealCodeError(text, "variant", f"must be one of {', '.join(variants)}")
        problem = _letters_problem(self.letters) if isinstance(self.letters, str) else _LENGTHS
        if problem is not None:
            raise InvalidDealCodeError(text, "number", problem)

    def __reduce__(self) -> tuple[object, ...]:
        # (compiled, a frozen dataclass does not unpickle by itself; codes cross processes)
        return (DealCode, (self.game, self.ruleset, self.variant, self.letters))

    @classmethod
    def parse(cls, text: object) -> DealCode:
        """Parse a code, ignoring surrounding white space and letter case.

        Raises :class:`InvalidDealCodeError` naming the wrong part (or saying that ``text``
        is not text: it is typed ``object`` so that the compiled build says so too).
        """
        if not isinstance(text, str):
            raise InvalidDealCodeError(repr(text), "code", "must be text")
        code = text.strip(_WHITESPACE)
        if not code:
            raise InvalidDealCodeError(text, "code", "is empty")
        parts = code.split("-")
        if len(parts) != 3:
            raise InvalidDealCodeError(
                text, "format", "expected GAME+RULESET-VARIANT-NUMBER, e.g. EH1-N-AAAAAAF"
            )
        # upper-case ASCII only: str.upper() turns some letters into two ("ß" -> "SS"), and a
        # non-ASCII letter must be reported as itself in the part it is in
        head, variant, letters = (p.upper() if p.isascii() else p for p in parts)
        game, ruleset = head[:2], head[2:]
        if game not in ("EH", "KL"):
            raise InvalidDealCodeError(text, "game", f"unknown game {game!r} (EH or KL)")
        if not (ruleset.isascii() and ruleset.isdigit()) or (game, int(ruleset)) not in _RULESETS:
            raise InvalidDealCodeError(text, "ruleset", f"unknown ruleset {ruleset!r} (1)")
        variants = _RULESETS[game, int(ruleset)]
        if variant not in variants:
            raise InvalidDealCodeError(
                text,
                "variant",
                f"{variant!r} is not a variant of {game} (one of {', '.join(variants)})",
            )
        problem = _letters_problem(letters)
        if problem is not None:
            raise InvalidDealCodeError(text, "number", problem)
        return cls(game, int(ruleset), variant, letters)

    @classmethod
    def for_game(cls, name: str, number: object) -> DealCode:
        """The code of numbered deal ``number`` (1 … 999,999) of ``name`` (``easy-harp``,
        ``klondike``, ``klondike-3``); :class:`InvalidDealCodeError` for anything else (typed
        ``object``: compiled, an ``int`` parameter would take ``True`` for 1 unseen)."""
        game, variant = _game(name)
        if isinstance(number, bool) or not isinstance(number, int):
            raise InvalidDealCodeError(repr(number), "number", "a deal number is an integer")
        if not 1 <= number <= MAX_NUMBER:
            raise InvalidDealCodeError(
                f"{GAME_PREFIXES[name]}-#{number}", "number", f"must be 1 … {MAX_NUMBER:,}"
            )
        return cls(game, 1, variant, _letters(number, NUMBERED_LETTERS))

    @classmethod
    def from_bytes(cls, prefix: str, data: object) -> DealCode:
        """The sealed deal ``sealed(prefix, data)`` of ``fair-deals.md``: the 16 bytes read
        as a big-endian integer, reduced mod 26**26 and written as 26 letters after
        ``prefix`` (``EH1-N``, ``KL1-1`` or ``KL1-3``); ``ValueError`` for anything but 16
        bytes (typed ``object``, so that the compiled build says so too)."""
        if prefix not in _PREFIX_OF:
            raise InvalidDealCodeError(
                str(prefix), "game", f"unknown prefix {prefix!r} (one of {', '.join(_PREFIX_OF)})"
            )
        if not isinstance(data, bytes | bytearray) or len(data) != SEALED_BYTES:
            size = len(data) if isinstance(data, bytes | bytearray) else type(data).__name__
            raise ValueError(f"a sealed deal is made of {SEALED_BYTES} bytes, got {size}")
        value = int.from_bytes(data, "big") % _SEALED_SPACE
        game, variant = GAME_NAMES[_PREFIX_OF[prefix]]
        return cls(game, 1, variant, _letters(value, SEALED_LETTERS))

    @classmethod
    def random(cls, name: str) -> DealCode:
        """A sealed deal of ``name`` from 16 bytes of the system's secure random source (every
        deal the server chooses is sealed, ``fair-deals.md``)."""
        _game(name)
        return cls.from_bytes(GAME_PREFIXES[name], secrets.token_bytes(SEALED_BYTES))

    @property
    def sealed(self) -> bool:
        """Whether this is a sealed deal (26 letters, no deal number)."""
        return len(self.letters) == SEALED_LETTERS

    @property
    def number(self) -> int | None:
        """The deal number 1 … 999,999 of a numbered deal; ``None`` for a sealed deal, which
        is named by its code only."""
        return None if self.sealed else _base26(self.letters)

    @property
    def game_name(self) -> str:
        """``easy-harp``, ``klondike`` or ``klondike-3``."""
        return _NAME_OF[self.game, self.variant]

    @property
    def prefix(self) -> str:
        """``EH1-N``, ``KL1-1`` or ``KL1-3``: the code without its NUMBER part."""
        return f"{self.game}{self.ruleset}-{self.variant}"

    def __str__(self) -> str:
        return f"{self.prefix}-{self.letters}"

    def __repr__(self) -> str:
        return f"DealCode.parse({str(self)!r})"

    def layout(self) -> Layout:
        """Shuffle and deal, exactly as ``deal-codes.md`` prescribes."""
        copies, columns = (2, 9) if self.game == "EH" else (1, 7)
        deck = list(range(52)) * copies
        rng = Xoshiro128.from_seed(hashlib.sha256(str(self).encode("ascii")).digest())
        for i in range(len(deck) - 1, 0, -1):
            j = rng.bounded(i + 1)
            deck[i], deck[j] = deck[j], deck[i]
        piles: list[list[Card]] = [[] for _ in range(columns)]
        k = 0
        for row in range(columns):
            for col in range(row, columns):
                piles[col].append(deck[k])
                k += 1
        return Layout(tuple(tuple(p) for p in piles), tuple(deck[k:]))
