"""Deal codes and the deal algorithm of ``deal-codes.md`` — a frozen public contract.

A :class:`DealCode` names one deal of one game forever: ``EH1-N-AAAAAAF`` is Easy Harp deal 5.
:meth:`DealCode.layout` turns it into columns and a stock with the SHA-256 seed, the
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
    "MAX_NUMBER",
    "DealCode",
    "Layout",
    "Xoshiro128",
]

MAX_NUMBER: Final = 999_999
_DIGITS: Final = 7
_MASK: Final = 0xFFFFFFFF
_WHITESPACE: Final = " \t\r\n"

# (game letters, ruleset) -> allowed variants; name -> (letters, variant)
_RULESETS: Final = {("EH", 1): ("N",), ("KL", 1): ("1", "3")}
GAME_NAMES: Final = {"easy-harp": ("EH", "N"), "klondike": ("KL", "1"), "klondike-3": ("KL", "3")}
_NAME_OF: Final = {v: k for k, v in GAME_NAMES.items()}


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


@dataclass(frozen=True, slots=True, order=True)
class DealCode:
    """One deal of one game: ``DealCode.parse("EH1-N-AAAAAAF")``.

    ``game`` is ``"EH"`` or ``"KL"``, ``variant`` ``"N"``, ``"1"`` or ``"3"``, and ``number``
    the deal number 1 … 999,999.
    """

    game: str
    ruleset: int
    variant: str
    number: int

    def __post_init__(self) -> None:
        variants = _RULESETS.get((self.game, self.ruleset))
        text = f"{self.game}{self.ruleset}-{self.variant}-#{self.number}"
        if variants is None:
            raise InvalidDealCodeError(text, "game", "unknown game or ruleset")
        if self.variant not in variants:
            raise InvalidDealCodeError(text, "variant", f"must be one of {', '.join(variants)}")
        if not 1 <= self.number <= MAX_NUMBER:
            raise InvalidDealCodeError(text, "number", f"must be 1 … {MAX_NUMBER:,}")

    @classmethod
    def parse(cls, text: str) -> DealCode:
        """Parse a code, ignoring surrounding white space and letter case.

        Raises :class:`InvalidDealCodeError` naming the wrong part.
        """
        if not isinstance(text, str):
            raise InvalidDealCodeError(repr(text), "code", "must be text")
        if not text.isascii():
            raise InvalidDealCodeError(text, "code", "contains a non-ASCII character")
        code = text.strip(_WHITESPACE).upper()
        if not code:
            raise InvalidDealCodeError(text, "code", "is empty")
        parts = code.split("-")
        if len(parts) != 3:
            raise InvalidDealCodeError(
                text, "format", "expected GAME+RULESET-VARIANT-NUMBER, e.g. EH1-N-AAAAAAF"
            )
        head, variant, digits = parts
        letters, ruleset = head[:2], head[2:]
        if letters not in ("EH", "KL"):
            raise InvalidDealCodeError(text, "game", f"unknown game {letters!r} (EH or KL)")
        if not ruleset.isdigit() or (letters, int(ruleset)) not in _RULESETS:
            raise InvalidDealCodeError(text, "ruleset", f"unknown ruleset {ruleset!r} (1)")
        variants = _RULESETS[letters, int(ruleset)]
        if variant not in variants:
            raise InvalidDealCodeError(
                text,
                "variant",
                f"{variant!r} is not a variant of {letters} (one of {', '.join(variants)})",
            )
        if len(digits) != _DIGITS:
            raise InvalidDealCodeError(
                text, "number", f"must be exactly {_DIGITS} letters A-Z, got {len(digits)}"
            )
        number = 0
        for ch in digits:
            if not "A" <= ch <= "Z":
                raise InvalidDealCodeError(text, "number", f"{ch!r} is not a letter A-Z")
            number = number * 26 + (ord(ch) - 65)
        if not 1 <= number <= MAX_NUMBER:
            raise InvalidDealCodeError(
                text, "number", f"deal number {number:,} is outside 1 … {MAX_NUMBER:,}"
            )
        return cls(letters, int(ruleset), variant, number)

    @classmethod
    def for_game(cls, name: str, number: int) -> DealCode:
        """The code of deal ``number`` of ``name`` (``easy-harp``, ``klondike``, ``klondike-3``)."""
        try:
            letters, variant = GAME_NAMES[name]
        except KeyError:
            raise InvalidDealCodeError(
                name, "game", f"unknown game {name!r} (one of {', '.join(GAME_NAMES)})"
            ) from None
        return cls(letters, 1, variant, number)

    @classmethod
    def random(cls, name: str) -> DealCode:
        """A deal of ``name`` picked uniformly with the system's secure random source."""
        return cls.for_game(name, 1 + secrets.randbelow(MAX_NUMBER))

    @property
    def game_name(self) -> str:
        """``easy-harp``, ``klondike`` or ``klondike-3``."""
        return _NAME_OF[self.game, self.variant]

    @property
    def digits(self) -> str:
        """The deal number as 7 letters, base 26."""
        n, out = self.number, []
        for _ in range(_DIGITS):
            n, d = divmod(n, 26)
            out.append(chr(65 + d))
        return "".join(reversed(out))

    def __str__(self) -> str:
        return f"{self.game}{self.ruleset}-{self.variant}-{self.digits}"

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
