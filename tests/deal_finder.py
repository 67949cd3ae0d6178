"""Find the numbered deals that show a given opening board: the attack that sealed deals stop.

A player shown the opening board of a deal sees one face-up card per column (Klondike's 7,
Easy Harp's 9). With only 999,999 numbered deals per game, dealing them all and comparing
those cards picks out the deal (issue 29). :func:`find_numbered` does exactly that, so a test
can show that a deal the server chose is *not* among them — and, given a numbered deal's own
board, that it *is* found, so the search can fail a test.

The deal algorithm of ``deal-codes.md`` is run for every number at once in numpy ``uint32``
arrays: SHA-256 of each code (``hashlib``), xoshiro128** and the rejection-sampled
Fisher–Yates shuffle vectorised over all deals; only the column tops are followed through the
shuffle and kept (one small array per game, computed once per process).
:meth:`engine.DealCode.layout` stays the reference: the tests compare the two on many deals.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from engine import DealCode, new_game
from engine.cards import parse_card
from engine.dealcode import GAME_NAMES, GAME_PREFIXES, MAX_NUMBER, NUMBERED_LETTERS

__all__ = ["find_numbered", "numbered_tops", "opening_tops"]

U32 = npt.NDArray[np.uint32]
#: deals dealt at once: bounds the memory of the recorded swaps (104 bytes a deal)
_CHUNK = 1 << 17


def opening_tops(code: DealCode | str) -> tuple[str, ...]:
    """The face-up card of each column of a deal's opening board, left to right (``"AD"``),
    as a racer is shown them."""
    return tuple(column["up"][-1] for column in new_game(code).position()["tableau"])


def _shape(game: str) -> tuple[int, int]:
    """(cards in the deck, columns) of ``game``."""
    return (104, 9) if GAME_NAMES[game][0] == "EH" else (52, 7)


def _letters(numbers: npt.NDArray[np.int64]) -> list[bytes]:
    """Each number as the 7 letters of its code, base 26 (``A`` = 0)."""
    digits = np.empty((len(numbers), NUMBERED_LETTERS), dtype=np.uint8)
    rest = numbers.copy()
    for place in range(NUMBERED_LETTERS - 1, -1, -1):
        digits[:, place] = rest % 26 + ord("A")
        rest //= 26
    return [row.tobytes() for row in digits]


def _seeds(game: str, numbers: npt.NDArray[np.int64]) -> U32:
    """The xoshiro128** state (4 × n words) of each numbered deal: the first 16 bytes of
    SHA-256 of its code, read as four little-endian 32-bit words."""
    prefix = f"{GAME_PREFIXES[game]}-".encode("ascii")
    digests = b"".join(
        hashlib.sha256(prefix + letters).digest()[:16] for letters in _letters(numbers)
    )
    words = np.frombuffer(digests, dtype="<u4").reshape(len(numbers), 4)
    return np.ascontiguousarray(words.T.astype(np.uint32))


def _rotl(x: U32, k: int) -> U32:
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def _next(state: U32) -> U32:
    """One xoshiro128** output per column of ``state`` (updated in place)."""
    s0, s1, s2, s3 = state
    result = _rotl(s1 * np.uint32(5), 7) * np.uint32(9)
    t = s1 << np.uint32(9)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    state[3] = _rotl(s3, 11)
    return result


def _bounded(state: U32, m: int) -> U32:
    """An unbiased integer in ``[0, m)`` per deal, by rejection as the contract draws it:
    a deal whose draw is rejected draws again (and only its generator moves on)."""
    excess = (1 << 32) % m  # 0 when m divides 2**32: nothing is rejected
    r = _next(state)
    if excess:
        limit = np.uint32((1 << 32) - excess)
        redraw = np.flatnonzero(r >= limit)
        while redraw.size:
            sub = state[:, redraw]
            r[redraw] = _next(sub)
            state[:, redraw] = sub
            redraw = redraw[r[redraw] >= limit]
    return r % np.uint32(m)


def _deal_tops(game: str, numbers: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """The column tops (cards 0–51) of the numbered deals ``numbers`` of ``game``."""
    size, columns = _shape(game)
    state = _seeds(game, numbers)
    # the shuffle swaps deck[i] and deck[j_i] for i = size-1 … 1; keep every j_i
    swaps = np.zeros((size, len(numbers)), dtype=np.uint8)
    for i in range(size - 1, 0, -1):
        swaps[i] = _bounded(state, i + 1)
    # column c is dealt cards from row 0 to row c: its top is the card dealt at row c
    dealt_at = [sum(columns - row for row in range(c)) for c in range(columns)]
    # Follow each top's place back through the swaps, last first, to where its card lay in
    # the unshuffled deck (place p holds card p mod 52): a few small arrays instead of every
    # deal's whole deck
    place = np.repeat(np.array(dealt_at, dtype=np.uint8)[:, None], len(numbers), axis=1)
    for i in range(1, size):
        j = swaps[i]
        place = np.where(place == i, j, np.where(place == j, np.uint8(i), place))
    return (place % 52).T


@lru_cache(maxsize=3)
def numbered_tops(game: str) -> npt.NDArray[np.uint8]:
    """Row ``n - 1``: the column tops (cards 0–51) of numbered deal ``n`` of ``game``, for
    every deal 1 … 999,999."""
    if game not in GAME_NAMES:
        raise ValueError(f"unknown game {game!r} (one of {', '.join(GAME_NAMES)})")
    numbers = np.arange(1, MAX_NUMBER + 1, dtype=np.int64)
    parts = [_deal_tops(game, numbers[k : k + _CHUNK]) for k in range(0, len(numbers), _CHUNK)]
    return np.concatenate(parts)


def find_numbered(game: str, tops: Sequence[str]) -> list[int]:
    """Every numbered deal 1 … 999,999 of ``game`` whose opening board shows ``tops`` (the
    face-up card of each column, left to right, as ``"AD"``), in order."""
    table = numbered_tops(game)
    if len(tops) != table.shape[1]:
        raise ValueError(f"{game} shows {table.shape[1]} face-up cards, got {len(tops)}")
    wanted = np.array([parse_card(card) for card in tops], dtype=np.uint8)
    return [int(n) + 1 for n in np.flatnonzero((table == wanted).all(axis=1))]
