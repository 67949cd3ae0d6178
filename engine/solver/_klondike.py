"""The Klondike search (draw one and draw three) on its own compact position.

See :mod:`engine.solver` for the reductions and why each is sound; the comments here point
back to them by name.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import product
from operator import itemgetter
from typing import Any, Final, TypeVar

from ._common import (
    CHILDREN,
    OPPOSITE,
    PARENTS,
    RANK,
    RED,
    SAME_COLOUR,
    SUIT,
    ColumnSearch,
    closed_levels,
)

__all__ = ["KlondikeSearch"]

_KING: Final = 12
_BY_SCORE: Final = itemgetter(0)
# bit masks of cards for ``dead``: card c is bit c, suit s the bits 13s … 13s + 12
_ALL: Final = (1 << 52) - 1
_KINGS: Final = sum(1 << (13 * s + _KING) for s in range(4))
_ACES: Final = sum(1 << (13 * s) for s in range(4))
_BASES: Final = (0, 13, 26, 39)


_Pairs = tuple[tuple[int, int], ...]
_Masks = tuple[int, int, int, int, int, int, _Pairs, _Pairs]


#: the twins of rule 9 ("dead ends", twins): each pair of cards of one rank and colour, and
#: the two cards both fit on (kings fit on none)
_TWINS: Final = tuple(
    (x, y, PARENTS[x]) for r in range(_KING) for x, y in ((r, 39 + r), (13 + r, 26 + r))
)


def _column_masks(col: list[int], down: int) -> _Masks:
    """One column's share of the masks of ``KlondikeSearch.dead``: its cards, the cards lying
    on another, the face-down cards, the cards lying on their first or second parent, its top,
    the pairs (card, the card under it), and the twins (both cards that fit on a card) that
    lie in the column above one they fit on, each face down or not on a card it fits on (so
    that no run can carry it off without it leaving the card under it)."""
    incol = onstack = hid = ex1 = ex2 = top = 0
    pairs = []
    twins = []
    where = {c: i for i, c in enumerate(col)}
    for i, c in enumerate(col):
        kids = CHILDREN[c]
        if not kids:
            continue
        j, k = where.get(kids[0], -1), where.get(kids[1], -1)
        if j > i and k > i and _stays(col, down, j) and _stays(col, down, k):
            twins.append((kids[0], kids[1]))
    prev = -1
    for i, c in enumerate(col):
        bit = 1 << c
        incol |= bit
        if i < down:
            hid |= bit
        if prev >= 0:
            pairs.append((c, prev))
            onstack |= bit
            if RANK[prev] == RANK[c] + 1 and RED[prev] != RED[c]:
                if SUIT[prev] == OPPOSITE[SUIT[c]][0]:
                    ex1 |= bit
                else:
                    ex2 |= bit
        prev = c
    if prev >= 0:
        top = 1 << prev
    return incol, onstack, hid, ex1, ex2, top, tuple(pairs), tuple(twins)


def _stays(col: list[int], down: int, i: int) -> bool:
    """The card at index ``i`` of a column can move only by leaving the card under it: it is
    face down, or does not fit on that card (so no run carries it)."""
    if i < down:
        return True
    c, under = col[i], col[i - 1]
    return not (RANK[under] == RANK[c] + 1 and RED[under] != RED[c])


def _built_before(log: list[int], frozen: int) -> int:
    """The cards that the relaxation that left ``log`` (see ``KlondikeSearch._relax``) shows
    can be built on with the card ``frozen`` frozen as well: those it could build on at the
    start of the round in which ``frozen`` first moved (or at its last round). Up to that
    round the relaxation with ``frozen`` frozen goes exactly the same way, as nothing it
    found had needed that card to move; the sets only grow from round to round."""
    for i in range(0, len(log) - 2, 3):
        if log[i + 2] & frozen:
            return log[i]
    return log[-3] if len(log) >= 3 else 0


def _home_before(log: list[int], card: int, pinned: int) -> bool:
    """Whether the relaxation that left ``log`` shows that ``card`` can go home with the
    card ``pinned`` pinned as well: ``card`` could go home at the start of a round before
    the one in which ``pinned`` first moved, or of that round itself. Up to that round the
    relaxation with ``pinned`` pinned goes exactly the same way (pinning only stops that
    card leaving the card under it other than for home); the sets only grow."""
    for i in range(0, len(log) - 2, 3):
        if log[i + 1] & card:
            return True
        if log[i + 2] & pinned:
            return False
    return False


#: ``_column_masks`` by column key (the columns recur from position to position)
_COLUMN_MASKS: Final[dict[bytes, _Masks]] = {}


def _blockers(ck: bytes) -> int:
    """How many cards of the column keyed ``ck`` lie above a lower card of their suit."""
    lowest = [13, 13, 13, 13]
    count = 0
    for c in ck[1:-1]:
        s, r = SUIT[c], RANK[c]
        if r > lowest[s]:
            count += 1
        else:
            lowest[s] = r
    return count


# talon positions (bit j: the (j+1)-th card) reached once one, two, three cards before them
# have left the talon: see ``_relax``
_AFTER_ONE: Final = sum(1 << j for j in range(3, 64, 3))
_AFTER_TWO: Final = sum(1 << j for j in range(4, 64, 3))
_AFTER_THREE: Final = sum(1 << j for j in range(3, 64))

#: per suit (13 bits, ace first), the run of cards from the ace
_RUN: Final = [
    (((~v & 0x1FFF) & -(~v & 0x1FFF)) - 1) if ~v & 0x1FFF else 0x1FFF for v in range(1 << 13)
]


def _talon_cards(seq: list[int], positions: int) -> int:
    """The cards (as bits) at the talon ``positions`` (bit ``j``: ``seq[j]``)."""
    cards = 0
    while positions:
        low = positions & -positions
        cards |= 1 << seq[low.bit_length() - 1]
        positions ^= low
    return cards


#: ``closed_levels`` by foundation heights
_LEVELS: Final[dict[tuple[int, ...], list[int]]] = {}

#: per suit, the cards home (bits of ranks) at each foundation height
_HOME_BITS: Final = tuple((1 << h) - 1 for h in range(14))

#: by column key (``ck``): the column's part of the arrangement-free key and the
#: mask of its fixed cards (see ``_fixed_part``)
_FIXED: Final[dict[bytes, tuple[bytes, int]]] = {}


def _fixed_part(ck: bytes) -> tuple[bytes, int]:
    """The part of the column keyed ``ck`` (``ColumnSearch._rekey``) that fixes
    its place in the arrangement-free key (reduction "arrangement"): its face-down cards and
    its *base*, the lowest face-up card, as bytes (the count of face-down cards first, so
    that the parts can be joined), and those cards as a mask. An empty column, or a king at
    the bottom of a column with nothing under it, has no part: its cards are loose."""
    down = ck[0]
    if len(ck) == 2 or (down == 0 and RANK[ck[1]] == _KING):
        return b"", 0
    mask = 0
    for c in ck[1 : down + 2]:
        mask |= 1 << c
    return ck[: down + 2], mask


#: ``KlondikeSearch.reachable`` by talon length and waste size, and as bits
_REACHABLE: Final[dict[tuple[int, int], tuple[list[int], int]]] = {}

#: ``_blockers`` by column key
_BLOCKERS: Final[dict[bytes, int]] = {}

_T = TypeVar("_T")


def _by_column(table: dict[bytes, _T], ck: bytes, make: Callable[[bytes], _T]) -> _T:
    """``make(ck)`` for the column keyed ``ck``, kept in ``table`` (emptied when it grows
    past 200,000 columns: the columns recur from position to position, but not forever)."""
    got = table.get(ck)
    if got is None:
        if len(table) > 200_000:
            table.clear()
        got = table[ck] = make(ck)
    return got


#: called with every answer of ``KlondikeSearch.dead`` (the search, ``with_talon``, the
#: answer) when set: the tests check each against the plain statement of the rule (a module
#: setting, as the compiled build's classes cannot be patched)
DEAD_WATCH: Callable[[KlondikeSearch, bool, bool], None] | None = None


class KlondikeSearch(ColumnSearch):
    """Search one Klondike position.

    ``columns`` bottom → top with ``down`` face-down cards each, ``found[s]`` cards of suit
    ``s`` home, the talon as ``waste`` (bottom → top) and ``stock`` (bottom → top, its last
    card drawn next), and ``draw`` 1 or 3.
    """

    def __init__(
        self,
        columns: list[list[int]],
        down: list[int],
        found: list[int],
        waste: list[int],
        stock: list[int],
        draw: int,
    ) -> None:
        self.n = len(columns)
        self.cols = [list(c) for c in columns]
        self.down = list(down)
        self.found = list(found)
        self.draw = draw
        self.ndown = sum(down)
        # talon order: waste bottom → top, then the stock in drawing order
        seq = list(waste) + list(reversed(stock))
        self.seq = seq
        self.p = self._canon(len(waste), len(seq))
        self.tal = bytearray(52)
        self.tkey = 0
        for c in seq:
            self.tal[c] = 1
            self.tkey |= 1 << c
        self._key_columns()
        self.trail: list[Any] = []
        self._below = [-1] * 52  # scratch for ``dead``
        #: ``dead`` answers by columns (shared by searches of the same position)
        self.dead_cache: dict[Any, bool] = {}
        #: ``dead(True)`` answers by columns and talon: (talon positions in reach, lost)
        self.talon_cache: dict[Any, list[tuple[int, bool]]] = {}

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _canon(p: int, length: int) -> int:
        # Draw three: the talon pointer positions 0, 3, 6, … and the end are one cycle of
        # stock actions, mutually reachable, hence one position (reduction "talon").
        return 0 if p % 3 == 0 or p == length else p

    def key(self) -> Any:
        """The position up to the order of the columns (reduction "symmetry"). The
        foundations are implied: every card not in a column or the talon is home. The talon
        is the set of its cards (``tkey``): they keep the order of the deal, as a card only
        leaves it or comes back to its place; draw three adds the waste size.

        The columns are keyed up to the arrangement of their face-up cards (reduction
        "arrangement"): each column's face-down cards and base (``_fixed_part``), sorted,
        and the set of the other cards on the table (*loose*: every card not fixed, not in
        the talon and not home)."""
        parts = []
        fixed = 0
        for ck in self.ck:
            part, mask = _by_column(_FIXED, ck, _fixed_part)
            if mask:
                parts.append(part)
                fixed |= mask
        f0, f1, f2, f3 = self.found
        home = _HOME_BITS[f0] | _HOME_BITS[f1] << 13 | _HOME_BITS[f2] << 26 | _HOME_BITS[f3] << 39
        parts.sort()
        loose = _ALL ^ home ^ self.tkey ^ fixed
        if self.draw == 1:
            return (b"".join(parts), loose, self.tkey)
        return (b"".join(parts), loose, self.tkey, self.p)

    def admit(self, key: Any) -> bool:
        """Draw three: positions that differ only in the waste size ``p`` are compared
        (reduction "talon"). From size ``p`` the stock reaches ``p + 3``, ``p + 6``, … and the
        cycle; so a stored position with size ``p'`` ≤ ``p``, ``p' ≡ p (mod 3)``, or any
        stored size when ``p`` is the cycle (0), has every move this one has, the same
        results, and is (or will be) expanded: this one is not needed."""
        if self.draw == 1:
            return super().admit(key)
        cols, loose, talon, p = key
        seen = self.seen
        mask = seen.get((cols, loose, talon), 0)
        if mask:
            if not p:
                return False
            lower = mask & ((1 << (p + 1)) - 1)
            q = p
            while q > 0:
                if lower >> q & 1:
                    return False
                q -= 3
        seen[cols, loose, talon] = mask | (1 << p)
        return True

    def new_seen(self) -> Any:
        """Draw one: a set of keys; draw three: the waste sizes stored per columns and
        talon, as a bit mask (see ``admit``)."""
        return set() if self.draw == 1 else {}

    def goal(self) -> bool:
        """Draw one: no face-down card left, which always wins (see ``finish``). Draw three:
        no face-down card and an empty talon, the same argument."""
        if self.ndown:
            return False
        return self.draw == 1 or not self.seq

    def reachable(self) -> list[int]:
        """Draw three: the talon positions ``q`` (waste sizes) whose top card, ``seq[q-1]``,
        can be brought to the waste top by stock actions alone."""
        return self._positions_in_reach()[0]

    def _reach_bits(self) -> int:
        """``reachable`` as bits, position ``q`` at bit ``q - 1``."""
        return self._positions_in_reach()[1]

    def _positions_in_reach(self) -> tuple[list[int], int]:
        n = len(self.seq)
        p = self.p
        got = _REACHABLE.get((n, p))
        if got is not None:
            return got
        out = []
        if n:
            if p:
                q = p
                while q < n:
                    out.append(q)
                    q += 3
            out.extend(range(3, n, 3))
            out.append(n)
        positions = sorted(set(out))
        got = _REACHABLE[n, p] = (positions, sum(1 << (q - 1) for q in positions))
        return got

    # ------------------------------------------------------------------ best-first hooks

    #: best-first weights (face-down cards, cards home, line length, blockers), tuned on
    #: deals 1-200 (draw one, draw three); two orders taken in turns
    WEIGHTS = (((5, 1, 1, 0), (3, 1, 1, 0)), ((10, 2, 1, 0), (2, 2, 1, 5)))

    def snapshot(self) -> Any:
        """The position in a compact form for ``restore``."""
        return (
            self._columns_snapshot(),
            self.tkey,
            bytes(self.tal),
            bytes(self.found),
            bytes(self.seq),
            self.p,
        )

    def restore(self, snap: Any) -> None:
        """Return to a position saved by ``snapshot``."""
        joined, self.tkey, tal, found, seq, self.p = snap
        self._restore_columns(joined)
        self.tal = bytearray(tal)
        self.found = list(found)
        self.seq = list(seq)

    def priority(self, depth: int) -> tuple[int, ...]:
        """Best-first orders: fewer face-down cards, more cards home, shorter lines and (the
        second order of draw three) fewer *blockers* first — cards lying above a lower card
        of their suit in their column, which must move before that one can go home."""
        ndown = self.ndown
        home = sum(self.found)
        if self.draw == 1:
            return tuple(wd * ndown - wh * home + wl * depth for wd, wh, wl, _ in self.WEIGHTS[0])
        blockers = 0
        for ck in self.ck:
            blockers += _by_column(_BLOCKERS, ck, _blockers)
        return tuple(
            wd * ndown - wh * home + wl * depth + wb * blockers
            for wd, wh, wl, wb in self.WEIGHTS[1]
        )

    # ------------------------------------------------------------------ talon

    def _take(self, card: int, q: int) -> Any:
        self.tal[card] = 0
        self.tkey ^= 1 << card
        if self.draw == 1:
            return None
        old = self.p
        del self.seq[q - 1]
        self.p = self._canon(q - 1, len(self.seq))
        return old

    def _untake(self, card: int, q: int, token: Any) -> None:
        self.tal[card] = 1
        self.tkey |= 1 << card
        if self.draw == 1:
            return
        self.seq.insert(q - 1, card)
        self.p = token

    # ------------------------------------------------------------------ columns

    # ------------------------------------------------------------------ moves

    # (0, X, count, Y)  run of `count` cards from column X onto column Y
    # (1, X)            top of column X to its foundation
    # (2, card, q)      talon card to its foundation
    # (3, card, q, Y)   talon card onto column Y (draw three)
    # (4, suit, Y)      take the top of a foundation back onto column Y
    # (5, chain, X, m)  draw one: talon cards `chain` onto column X, then move m onto them
    # (6, chain, m)     draw one: talon cards `chain` home, then the move m (1 or 7) home
    # (7, X, count, Y)  draw three: the `count` cards on the card next home in column X
    #                   onto column Y (its twin), then that card home

    def apply(self, m: tuple[Any, ...]) -> Any:
        """Play one move; return what ``undo`` needs."""
        kind = m[0]
        trail = self.trail
        if kind == 0:
            _, x, count, y = m
            cards, flipped = self._lift(x, count)
            self._drop(y, cards)
            trail.append(("run", x, count, y))
            self._fresh = x
            return flipped
        self._fresh = -1
        if kind == 1:
            x = m[1]
            cards, flipped = self._lift(x, 1)
            self.found[SUIT[cards[0]]] += 1
            trail.append(("colf", x))
            return (cards[0], flipped)
        if kind == 2:
            _, card, q = m
            token = self._take(card, q)
            self.found[SUIT[card]] += 1
            trail.append(("talon", card, q, -1))
            return token
        if kind == 3:
            _, card, q, y = m
            token = self._take(card, q)
            self._drop(y, [card])
            trail.append(("talon", card, q, y))
            self._fresh = y
            return token
        if kind == 4:
            _, suit, y = m
            self.found[suit] -= 1
            card = suit * 13 + self.found[suit]
            self._drop(y, [card])
            trail.append(("back", card, y))
            self._fresh = y
            return None
        if kind == 5:
            _, chain, x, purpose = m
            for card in chain:
                self._take(card, 0)
                trail.append(("talon", card, 0, x))
            self._drop(x, list(chain))
            # (the talon cards lie under the card of ``purpose``: the new top, if any, is
            # the one ``purpose`` gives, and a talon card leaving makes no card safe)
            return self.apply(purpose)
        if kind == 7:
            _, x, count, y = m
            self.apply((0, x, count, y))  # (turns nothing over: the card stays)
            return self.apply((1, x))
        _, chain, then = m
        for card in chain:
            self._take(card, 0)
            self.found[SUIT[card]] += 1
            trail.append(("talon", card, 0, -1))
        return self.apply(then)

    def undo(self, m: tuple[Any, ...], token: Any) -> None:
        """Take back a move played by ``apply``."""
        kind = m[0]
        if kind < 5:
            self.trail.pop()
        if kind == 0:
            _, x, count, y = m
            cards = self.cols[y][-count:]
            self._undrop(y, count)
            self._unlift(x, cards, token)
        elif kind == 1:
            card, flipped = token
            self.found[SUIT[card]] -= 1
            self._unlift(m[1], [card], flipped)
        elif kind == 2:
            _, card, q = m
            self.found[SUIT[card]] -= 1
            self._untake(card, q, token)
        elif kind == 3:
            _, card, q, y = m
            self._undrop(y, 1)
            self._untake(card, q, token)
        elif kind == 4:
            _, suit, y = m
            self._undrop(y, 1)
            self.found[suit] += 1
        elif kind == 7:
            _, x, count, y = m
            self.undo((1, x), token)
            self.undo((0, x, count, y), False)
        elif kind == 5:
            _, chain, x, purpose = m
            self.undo(purpose, token)
            self._undrop(x, len(chain))
            for card in reversed(chain):
                self.trail.pop()
                self._untake(card, 0, None)
        else:
            _, chain, then = m
            self.undo(then, token)
            for card in reversed(chain):
                self.trail.pop()
                self.found[SUIT[card]] -= 1
                self._untake(card, 0, None)

    # ------------------------------------------------------------------ safe moves

    def forced(self) -> list[tuple[Any, ...]]:
        """Play every safe foundation move (column tops; in draw one also talon cards) and
        return them, with their undo tokens, for ``unforce``.

        Reduction "safe foundation moves": the next card of a suit, rank ``r``, is safe when
        both suits of the other colour hold ``r`` cards or more and the other suit of its
        colour ``r - 1`` or more (see engine.solver). A streamlined search (see
        engine.solver) plays every column top that can go home."""
        played: list[Any] = []
        cols, found, tal = self.cols, self.found, self.tal
        top = self._fresh_top()
        if top is not None and (top < 0 or found[SUIT[top]] != RANK[top]):
            return played  # (the one card that could be safe is not next on its foundation)
        draw_one = self.draw == 1
        streamline = self.streamline
        progress = True
        while progress:
            progress = False
            # (C D H S = suits 0-3) the suits whose next card is safe, lowest suit first
            f0, f1, f2, f3 = found
            safe = []
            if streamline:
                safe = [s * 13 + h for s, h in enumerate(found) if h < 13]
            else:
                if f0 < 13 and f0 <= f1 and f0 <= f2 and f0 <= f3 + 1:
                    safe.append(f0)
                if f1 < 13 and f1 <= f0 and f1 <= f3 and f1 <= f2 + 1:
                    safe.append(13 + f1)
                if f2 < 13 and f2 <= f0 and f2 <= f3 and f2 <= f1 + 1:
                    safe.append(26 + f2)
                if f3 < 13 and f3 <= f1 and f3 <= f2 and f3 <= f0 + 1:
                    safe.append(39 + f3)
            if not safe:
                break
            tops = None
            for card in safe:
                m: tuple[Any, ...]
                if tal[card]:
                    if not draw_one:
                        continue
                    m = (2, card, 0)
                else:
                    if tops is None:
                        tops = [col[-1] if col else -1 for col in cols]
                    if card not in tops:
                        continue
                    m = (1, tops.index(card))
                # (a column's new top is looked at in the next round)
                played.append((m, self.apply(m)))
                progress = True
        return played

    def unforce(self, played: list[tuple[tuple[Any, ...], Any]]) -> None:
        """Undo what ``forced`` played."""
        for i in range(len(played) - 1, -1, -1):
            m, token = played[i]
            self.undo(m, token)

    # ------------------------------------------------------------------ generating moves

    def _run_score(self, x: int, i: int) -> int:
        d = self.down[x]
        if i == d:
            return 1000 + 10 * d if d else 300
        below = self.cols[x][i - 1]
        return 100 if self.found[SUIT[below]] == RANK[below] else 10

    def _prepare(self, empty: int) -> None:
        """Per-node tables for the usefulness checks: face-up cards and column tops by card,
        talon cards by rank and colour (draw one) or the cards in reach (draw three)."""
        cols, down = self.cols, self.down
        self._up = {c: z for z, col in enumerate(cols) for c in col[down[z] :]}
        self._tops = {col[-1]: z for z, col in enumerate(cols) if col}
        self._empty = empty
        if self.draw == 1:
            tal = self.tal
            self._talrc = [
                (bool(tal[r] or tal[39 + r]), bool(tal[13 + r] or tal[26 + r])) for r in range(13)
            ]
        else:
            seq = self.seq
            self._reachable = self.reachable()
            self._reach = {seq[q - 1] for q in self._reachable}

    def _in_reach(self, card: int) -> bool:
        """``card`` can be played from the talon now (draw three: it is within reach)."""
        if not self.tal[card]:
            return False
        return self.draw == 1 or card in self._reach

    def _chain_from(self, top: int, first: int, exclude: int) -> bool:
        """Draw one: talon cards chained onto ``top``, starting with the talon card
        ``first``, then a face-up card from a column other than ``exclude`` (or a foundation
        top) built on the chain — is there such a block?"""
        up, found, talrc = self._up, self.found, self._talrc
        red = RED[first]
        r = RANK[first]
        while r > 0:
            # the purpose: a card of rank r-1 and the other colour
            for s in (0, 3) if red else (1, 2):
                e = s * 13 + r - 1
                z = up.get(e, -1)
                if (z >= 0 and z != exclude) or found[s] == r:
                    return True
            r -= 1
            red = not red
            if not talrc[r][red]:
                return False
        return False

    def _chain_to(self, e: int, exclude: int) -> bool:
        """Can the run based on ``e`` move now onto a column top (of a column other than
        ``exclude``), directly or (draw one) onto talon cards chained onto that top, or onto
        a chain led by a talon king in an empty column?"""
        tops = self._tops
        for p in PARENTS[e]:
            z = tops.get(p, -1)
            if z >= 0 and z != exclude:
                return True
        if self.draw != 1 or not self.tkey:
            return False
        talrc = self._talrc
        r = RANK[e] + 1
        red = not RED[e]
        while r <= _KING and talrc[r][red]:
            if r == _KING:
                return self._empty >= 0
            r += 1
            red = not red
            for s in (1, 2) if red else (0, 3):
                z = tops.get(s * 13 + r, -1)
                if z >= 0 and z != exclude:
                    return True
        return False

    def _back_useful(self, card: int) -> bool:
        """Reduction "postponement": a card taken back from a foundation is useful only when
        a card can be built on it at once, or the card under it can be taken back too (that
        one checked loosely, as another move may have to make room for it first)."""
        # Nothing worth building goes on a two (an ace would rather go home), and an ace is
        # never taken back (reduction "closed foundations"): a two is never taken back.
        if RANK[card] < 2:
            return False
        found, up = self.found, self._up
        for child in CHILDREN[card]:
            if child in up or found[SUIT[child]] == RANK[child] + 1:
                return True
            if self.tal[child]:
                if self.draw == 1:
                    if self._chain_from(card, child, -1):
                        return True
                elif child in self._reach:
                    return True
        pred = card - 1
        if RANK[pred]:
            for p in PARENTS[pred]:
                if p in up or found[SUIT[p]] == RANK[p] + 1:
                    return True
            if self._chain_to(pred, -1):
                return True
        return False

    def _covered_home_moves(self, add: Any) -> None:
        """Reduction "arrangement": a face-up card next on its foundation but covered, whose
        twin (the other card of its rank and colour) is a column top, goes home in one move
        of two steps: the cards on it move onto the twin, then it goes home. Tried as a card
        going home from a column top is."""
        found, tops = self.found, self._tops
        for s in range(4):
            h = found[s]
            if h == 13:
                continue
            y = tops.get(SAME_COLOUR[s] * 13 + h, -1)
            if y >= 0:
                got = self._covered_home(s * 13 + h, y)
                if got is not None:
                    add(got)

    def _covered_home(self, c: int, y: int) -> tuple[int, tuple[Any, ...]] | None:
        """The move "the cards on ``c``, a face-up card next on its foundation but covered,
        onto column ``y``, then ``c`` home", with its score; None if ``c`` is not such a card
        or the move can wait (reduction "postponement")."""
        x = self._up.get(c, -1)
        if x < 0:
            return None
        col = self.cols[x]
        if col[-1] == c:
            return None  # (a column top: tried as such)
        d = self.down[x]
        i = d + RANK[col[d]] - RANK[c]
        score = self._home_score(x, i, c)
        return (score, (7, x, len(col) - i - 1, y)) if score else None

    def _home_score(self, x: int, i: int, c: int) -> int:
        """The score of ``c``, at index ``i`` of column ``x``, going home (the cards on it, if
        any, moved onto its twin first): high when it turns a card over or empties the
        column, 0 when it can wait (reduction "postponement", ``_loose_home_useful``)."""
        d = self.down[x]
        if i == d:
            return 1100 + 10 * d if d else 500
        return 400 if self._loose_home_useful(x, i, c) else 0

    def _loose_home_useful(self, x: int, i: int, c: int) -> bool:
        """Reduction "postponement" in the arrangement-free graph (reduction
        "arrangement"): the face-up card ``c`` at index ``i`` of column ``x``, not its base,
        goes home (with the cards on it moved onto its twin first, if any), which turns
        nothing over. Is there a move that uses this right after? Its successor goes home
        (a column top, a covered card whose twin is a top, or a talon card in reach); a card
        of the rank and colour of ``a``, the card under it, goes home (``a`` now free, and
        its twin by way of ``a``), or its predecessor first (loosely: any face-up or
        reachable one; in draw one all its predecessors not home, each face up or in the
        talon); or the twin of ``c`` is put onto ``a``: from its foundation, from
        the talon, or as the base of its column with the cards on it. (Moving a card that is
        not a base changes nothing in that graph.)"""
        found, tops, up = self.found, self._tops, self._up
        if RANK[c] < _KING:
            succ = c + 1
            if succ in tops or self._in_reach(succ):
                return True
            if succ in up and SAME_COLOUR[SUIT[succ]] * 13 + RANK[succ] in tops:
                return True
        a = self.cols[x][i - 1]
        for b in (a, SAME_COLOUR[SUIT[a]] * 13 + RANK[a]):
            if b not in up:
                continue
            h = found[SUIT[b]]
            if h == RANK[b]:
                return True
            if h == RANK[b] - 1 and (b - 1 in up or self._in_reach(b - 1)):
                # its predecessor can go home first (a move that waits for this one)
                return True
            if self.draw == 1 and all(d in up or self.tal[d] for d in range(b - RANK[b] + h, b)):
                # draw one: its predecessors can go home first, from the talon in a block
                # that must come right before a table card goes home (reduction "talon
                # chains"): this move cannot wait past them
                return True
        twin = SAME_COLOUR[SUIT[c]] * 13 + RANK[c]
        if RANK[twin] == 0:
            return False  # an ace is never built on a two: it would rather go home
        if found[SUIT[twin]] == RANK[twin] + 1 or self._in_reach(twin):
            return True
        z = up.get(twin, -1)
        return z >= 0 and self.cols[z][self.down[z]] == twin

    def dead(self, with_talon: bool = False) -> bool:
        """Reduction "dead ends": True if some card can provably never go home (see
        ``_dead``); each answer is shown to ``DEAD_WATCH`` when it is set."""
        lost = self._dead(with_talon)
        watch = DEAD_WATCH
        if watch is not None:
            watch(self, with_talon, lost)
        return lost

    def _dead(self, with_talon: bool) -> bool:
        """Reduction "dead ends": True if some card can provably never go home.

        An optimistic relaxation of the game, computed as a least fixed point: a card *can go
        home* if its predecessor can and it can be reached (it is in the talon, a column top,
        or the card on it can leave); a card *can leave* the card under it if, once free
        (nothing on it, or that can leave), it can go home, or whenever a card it fits on can
        be built on, or if it is a king (once a column can be emptied: see ``_relax``); a
        face-down card moves only once free. A card *can be built on* if it lies in a column
        and is or can get free, or — a talon card, or a card home at the start, which must
        first be put back on the table — if it is a king or a card it fits on can be built
        on. Every card that goes
        home or is built on in a real line does so after what it needed, so it is in the
        fixed point; a card that is not can never go home, and the position is lost.

        Twins (reduction "dead ends", twins): for two cards ``x``, ``y`` of one rank and
        colour, both in columns, and a card ``p`` they fit on, the relaxation is run with
        ``x`` *frozen* (it never moves) to see whether ``p`` can still be built on, and with
        ``y`` frozen; if it cannot either time, it is run with ``y`` *pinned* (it leaves the
        card under it only to go home) to see whether ``x`` can still go home, and the other
        way round; if neither can, the position is lost. Draw three tests only the twins that
        lie above ``p`` in its column, each face down or on a card it does not fit on (then
        ``p`` waits for both without a relaxation to say so).

        ``with_talon`` (draw three): a talon card counts only once it can be reached (see
        ``_relax``); the twins are not tested again then. Only for a position the test
        without the talon found alive: once every talon card can be reached, the two tests
        are the same and the answer is known (otherwise "alive" may come too early, which
        is safe: it only prunes less).

        The sets are bit masks (bit ``c`` for card ``c``) and each round applies the rules to
        every card at once, until nothing changes.
        """
        below = self._below
        tops = onstack = hid = ex1 = ex2 = incol = 0
        parts = _COLUMN_MASKS
        twins: list[tuple[int, int]] = []
        for x in range(self.n):
            ck = self.ck[x]
            part = parts.get(ck)
            if part is None:
                if len(parts) > 200_000:
                    parts.clear()
                part = parts[ck] = _column_masks(self.cols[x], self.down[x])
            c_in, c_on, c_hid, c_ex1, c_ex2, c_top, pairs, c_twins = part
            incol |= c_in
            onstack |= c_on
            hid |= c_hid
            ex1 |= c_ex1
            ex2 |= c_ex2
            tops |= c_top
            for c, prev in pairs:
                below[c] = prev
            if c_twins:
                twins.extend(c_twins)
        # kings can move off a card only once a column can be emptied (see ``_relax``)
        kings = _KINGS if not all(self.cols) else 0
        masks = (incol, onstack, hid, ex1, ex2, tops, kings)
        if with_talon:
            # (the twins were tested without the talon, which is dearer)
            return not self._relax(masks, 0, _ALL, self._reach_bits())
        if self.draw != 1:
            # draw three: only twins lying above a card they fit on where no run can carry
            # them off (testing every pair costs more there than it finds: about 14 % more
            # time per node for 1 % fewer nodes, docs/benchmarks.md)
            if not self._relax(masks, 0, _ALL):
                return True
            return any(self._twins_lost(masks, 1 << x, 1 << y) for x, y in twins)
        log: list[int] = []
        if not self._relax(masks, 0, _ALL, None, 0, 0, log):
            return True
        place: list[int] = []
        for x, y, parents in _TWINS:
            if not (incol >> x & 1 and incol >> y & 1):
                continue
            bx, by = 1 << x, 1 << y
            anyway = _built_before(log, bx) | _built_before(log, by)
            waiting = [p for p in parents if not anyway >> p & 1]
            # (the pinned tests first: they are the same for both cards the twins fit on,
            # and most often a single relaxation shows a twin can go home)
            if not waiting or not self._twins_lost(masks, bx, by, log):
                continue
            if not place:
                place = self._places()
            for p in waiting:
                bp = 1 << p
                # p waits for both twins: each lies above it where no run can carry it off,
                # or the relaxation with it frozen cannot build on p (the one that does not
                # lie above p first, as it is the likelier to let p be built on)
                order = (y, x) if self._above(place, p, x) else (x, y)
                if any(
                    not self._holds_down(place, p, c)
                    and self._relax(masks, 0, _ALL, None, 1 << c, bp)
                    for c in order
                ):
                    continue
                return True
        return False

    def _twins_lost(
        self,
        masks: tuple[int, int, int, int, int, int, int],
        bx: int,
        by: int,
        log: list[int] | None = None,
    ) -> bool:
        """The pinned tests of rule 9 (twins): neither twin can go home while the other is
        pinned. ``log``, the log of the relaxation of the same position without a pinned
        card, answers most of them without a relaxation of their own (``_home_before``)."""
        if log is not None and (_home_before(log, bx, by) or _home_before(log, by, bx)):
            return False
        return not self._relax(masks, by, bx) and not self._relax(masks, bx, by)

    def _holds_down(self, place: list[int], p: int, c: int) -> bool:
        """Whether ``c`` lies above ``p`` in its column, face down or on a card it does not
        fit on, so that no run can carry it off: then ``p`` cannot be built on before ``c``
        moves (the relaxation with ``c`` frozen finds the same, at more cost)."""
        if not self._above(place, p, c):
            return False
        x, i = place[c] >> 6, place[c] & 63
        return _stays(self.cols[x], self.down[x], i)

    @staticmethod
    def _above(place: list[int], p: int, c: int) -> bool:
        """Whether ``c`` lies above ``p`` in the same column (``place``: see ``_places``)."""
        at, i = place[p], place[c]
        return at >= 0 and at >> 6 == i >> 6 and at < i

    def _places(self) -> list[int]:
        """Where each card lies: its column times 64 plus its index there, or -1."""
        place = [-1] * 52
        for x, col in enumerate(self.cols):
            for i, c in enumerate(col):
                place[c] = x * 64 + i
        return place

    def _relax(
        self,
        masks: tuple[int, int, int, int, int, int, int],
        pinned: int,
        want: int,
        talon: int | None = None,
        frozen: int = 0,
        built: int = 0,
        log: list[int] | None = None,
    ) -> bool:
        """The fixed point of ``dead``: can every card of ``want`` go home, when the cards of
        ``pinned`` leave the card under them only to go home and those of ``frozen`` never
        move? With ``built``: can a card of ``built`` be built on, instead? ``log``, when
        given, receives three masks per round: the cards that could be built on and those
        that could go home when the round began, and the cards that had moved (gone home,
        left the card under them, or emptied their column) when it ended (see
        ``_built_before``, ``_home_before``).

        ``kings`` is the mask of the kings when a column is empty now, else 0: then a king
        (from a card, or from the talon) can move only once some column can be emptied, and
        the first column to be emptied is emptied by its bottom card of today leaving for
        home, or for a card if it is not a king (a king moves only into an empty column).

        With ``talon`` (the positions in reach now, as bits from position 1 up; the cards
        are ``seq``), a talon card can go home or be built on only
        once it can be reached: in reach now, or the card after it can leave the talon, or
        ``k`` cards before it can (for some ``k``, its position less ``k`` a multiple of 3: one
        card before it reaches positions 4, 7, …, two also 5, 8, …, three every position from
        4 on). A talon card can leave if it can be reached and go home or onto a card."""
        incol, onstack, hid, ex1, ex2, tops, kings = masks
        bottoms = incol & ~onstack if not kings else 0
        below = self._below
        loose = _ALL & ~incol  # talon cards and cards home at the start
        treach = last_out = rpos = full = opos = 0
        seq = self.seq
        if talon is not None:
            rpos = talon
            full = (1 << len(seq)) - 1
            if rpos == full:
                return True  # (the test without the talon, as below)
            loose &= ~self.tkey
            treach = _talon_cards(seq, rpos)
        shown = ~hid
        free = tops  # column cards that are or can get free
        leave = 0  # column cards that can leave the card under them
        reach = free  # cards that can be built on
        unpinned = ~pinned & ~frozen
        stay = ~frozen
        last_able = -1
        home = predhome = moved = 0
        while True:
            if log is not None:
                log.append(reach)
            # the cards a reachable card of the other colour, one rank up, fits: all but the
            # one a card lies on
            # (C D H S = suits 0-3: clubs and spades fit on diamonds and hearts, and back)
            diamonds = (reach >> 14) & 0xFFF
            hearts = (reach >> 27) & 0xFFF
            clubs = (reach >> 1) & 0xFFF
            spades = (reach >> 40) & 0xFFF
            par1 = diamonds | (clubs << 13) | (clubs << 26) | (diamonds << 39)
            par2 = hearts | (spades << 13) | (spades << 26) | (hearts << 39)
            movable = ((par1 & ~ex1) | (par2 & ~ex2) | kings) & unpinned
            # per suit, the longest run of ranks from the ace that can all go home
            able = (free | loose | treach) & stay
            if able != last_able:
                last_able = able
                home = (
                    _RUN[able & 0x1FFF]
                    | _RUN[able >> 13 & 0x1FFF] << 13
                    | _RUN[able >> 26 & 0x1FFF] << 26
                    | _RUN[able >> 39 & 0x1FFF] << 39
                )
                if not built and home & want == want:
                    if log is not None:
                        log.append(home)
                        log.append(moved | home)
                    return True
                predhome = ((home << 1) | _ACES) & _ALL & stay
            if log is not None:
                log.append(home)
            # cards leaving free the cards under them, which may leave in turn: as far as
            # this round's tables allow
            before = leave
            while True:
                grew = onstack & ((free & predhome) | ((free | shown) & movable)) & ~leave
                if not grew:
                    break
                leave |= grew
                while grew:
                    low = grew & -grew
                    free |= 1 << below[low.bit_length() - 1]
                    grew ^= low
            new = free | ((loose | treach) & movable)
            if new & built:
                return True
            grown = False
            if talon is not None:
                out = treach & (home | movable)
                if out != last_out:
                    # (``out`` only grows: map its new cards to their positions)
                    fresh = out & ~last_out
                    last_out = out
                    while fresh:
                        low = fresh & -fresh
                        opos |= 1 << seq.index(low.bit_length() - 1)
                        fresh ^= low
                    npos = rpos | (opos >> 1)
                    if opos:
                        low = opos & -opos
                        npos |= ~((low << 1) - 1) & _AFTER_ONE
                        rest = opos ^ low
                        if rest:
                            low = rest & -rest
                            npos |= ~((low << 1) - 1) & _AFTER_TWO
                            rest ^= low
                            if rest:
                                low = rest & -rest
                                npos |= ~((low << 1) - 1) & _AFTER_THREE
                        npos &= full
                    if npos != rpos:
                        if npos == full:
                            # every talon card can be reached: from here on, the test
                            # without the talon, which found every card home
                            return True
                        treach |= _talon_cards(seq, npos & ~rpos)
                        rpos = npos
                        grown = True
            if log is not None:
                moved |= home | leave
                moved |= bottoms & ((free & predhome) | ((free | shown) & movable))
                log.append(moved)
            if bottoms and bottoms & ((free & predhome) | ((free | shown) & movable)):
                # a column can be emptied: kings can move from now on
                kings = _KINGS
                bottoms = 0
            elif new == reach and leave == before and not grown:
                return False
            reach = new

    def pruned(self, key: Any) -> bool:
        """The ``dead`` test of the current position: True if it is provably lost.

        ``key`` given (a position just admitted, see ``Search.pruned``): the test on the
        columns alone, cached by them — its answer does not depend on their order, and every
        card not in a column counts alike whether in the talon or home. ``key`` None (a
        position being expanded): in draw three, if that says alive, also the test that
        knows which talon cards can be reached, cached by columns and talon: with more talon
        positions in reach it can only be more optimistic (``_relax``), so a position alive
        with fewer of them in reach is alive, one lost with more of them is lost.

        The columns are keyed up to the arrangement of their face-up cards: an answer found
        for one arrangement is sound for every other (reduction "arrangement": they
        are won or lost alike), though the test itself may prune one and not another."""
        if not self.covered_something():
            return False
        cache = self.dead_cache
        full = self.key() if key is None else key
        draw_one = self.draw == 1
        k = full[:2]
        lost = cache.get(k)
        if lost is None:
            lost = cache[k] = self.dead()
        if lost or key is not None or draw_one or not self.seq:
            return lost
        # (the test that knows the talon is dearer: only for positions being expanded)
        rpos = self._reach_bits()
        tk = full[:3]
        known = self.talon_cache.get(tk)
        if known is None:
            known = self.talon_cache[tk] = []
        for other, lost in known:
            if (rpos & ~other == 0) if lost else (other & ~rpos == 0):
                return lost
        lost = self.dead(True)
        known.append((rpos, lost))
        return lost

    def moves(self) -> list[tuple[Any, ...]]:
        """Every move worth trying here, best first (a heuristic order; completeness does
        not depend on it)."""
        if self.pruned(None):
            return []
        cols, down, found = self.cols, self.down, self.found
        n = self.n
        out: list[tuple[int, tuple[Any, ...]]] = []
        add = out.append
        empty = self._first_empty()
        self._prepare(empty)
        draw_one = self.draw == 1
        # columns to the foundations
        for x in range(n):
            col = cols[x]
            if col:
                c = col[-1]
                if found[SUIT[c]] == RANK[c]:
                    score = self._home_score(x, len(col) - 1, c)
                    if score:
                        add((score, (1, x)))
        self._covered_home_moves(add)
        tops = self._tops
        for x in range(n):
            col = cols[x]
            if not col:
                continue
            d = down[x]
            hi = RANK[col[d]]
            top = len(col)
            if hi < _KING:
                # Reduction "arrangement": only the whole face-up part moves, onto one card
                # it fits (onto the other the key would be the same)
                p1, p2 = PARENTS[col[d]]
                y = tops.get(p1, -1)
                if y < 0:
                    y = tops.get(p2, -1)
                if y >= 0:
                    add((self._run_score(x, d), (0, x, top - d, y)))
            # a king run into an empty column; from the bottom of a column it would only
            # swap two columns (reduction "symmetry")
            if empty >= 0 and hi == _KING and d:
                add((1000 + 10 * d, (0, x, top - d, empty)))
        # (reduction "arrangement": onto one card it fits, either is as good)
        backs = self._back_moves(add, empty, True)
        if draw_one:
            self._talon_moves_draw_one(add, backs)
        else:
            self._talon_moves_draw_three(add, empty)
        if self.dive:
            out = self._shuffled(out)
        out.sort(key=_BY_SCORE, reverse=True)
        return [m for _, m in out]

    def _back_moves(self, add: Any, empty: int, one: bool) -> list[int]:
        """Add the moves of foundation tops back onto the table (reduction "closed
        foundations"; onto the first card it fits only, with ``one``); return their suits."""
        cols, found = self.cols, self.found
        heights = tuple(found)
        lam = _LEVELS.get(heights)
        if lam is None:
            lam = _LEVELS[heights] = closed_levels(found)
        backs = []
        for s in range(4):
            h = found[s]
            # (a streamlined search takes nothing back)
            if h and h - 1 >= lam[s] and not self.streamline and self._back_useful(s * 13 + h - 1):
                backs.append(s)
                card = s * 13 + h - 1
                if h - 1 == _KING:
                    if empty >= 0:
                        add((0, (4, s, empty)))
                    continue
                for y in range(self.n):
                    tgt = cols[y]
                    if tgt and RANK[tgt[-1]] == h and RED[tgt[-1]] != RED[card]:
                        add((0, (4, s, y)))
                        if one:
                            break
        return backs

    def _talon_moves_draw_one(self, add: Any, backs: list[int]) -> None:
        cols, down, found, tal, tops = self.cols, self.down, self.found, self.tal, self._tops
        if not self.tkey:
            return
        # Reduction "talon chains" (foundations): a talon card goes home only together with
        # the card from the table that is then played onto it (a column top, or a covered
        # card whose twin is a top, reduction "arrangement").
        for s in range(4):
            h = r = found[s]
            while r < 13 and tal[s * 13 + r]:
                r += 1
            if r == h or r == 13:
                continue
            c = s * 13 + r
            x = tops.get(c, -1)
            got: tuple[int, tuple[Any, ...]] | None = None
            if x >= 0:
                score = self._home_score(x, len(cols[x]) - 1, c)
                if score:
                    got = (score, (1, x))
            else:
                y = tops.get(SAME_COLOUR[s] * 13 + r, -1)
                if y >= 0:
                    got = self._covered_home(c, y)
            if got is not None:
                score, m = got
                add((score - 20 * (r - h), (6, tuple(range(s * 13 + h, c)), m)))
        # Reduction "talon chains": a talon card goes onto the table only with the move it
        # was put there for, a move other than a rearrangement (reduction "arrangement") that
        # needs it: a base with the cards on it, or a foundation top, built on it; or the
        # cards on a covered card next home moved onto it, its twin, and that card home.
        talrc = self._talrc
        for z in range(self.n):
            col = cols[z]
            if col:
                d = down[z]
                b = col[d]
                if RANK[b] < _KING and talrc[RANK[b] + 1][not RED[b]]:
                    self._chains_under(add, b, z, (0, z, len(col) - d), self._run_score(z, d))
        for s in backs:
            self._chains_under(add, s * 13 + found[s] - 1, -1, (4, s), 0)
        # (the covered card may be next home once talon cards of its suit have gone home: a
        # block of both kinds)
        up = self._up
        for s in range(4):
            h = r = found[s]
            while r < 13 and tal[s * 13 + r]:
                r += 1
            if r == 13 or not tal[SAME_COLOUR[s] * 13 + r]:
                continue
            c = s * 13 + r
            x = up.get(c, -1)
            if x < 0 or cols[x][-1] == c:
                continue
            col = cols[x]
            i = down[x] + RANK[col[down[x]]] - r
            score = self._home_score(x, i, c)
            if score:
                purpose = (7, x, len(col) - i - 1)
                home = tuple(range(s * 13 + h, c))
                self._chains_under(add, col[i + 1], x, purpose, score - 20 * (r - h), home)

    def _chains_under(
        self,
        add: Any,
        b: int,
        z: int,
        purpose: tuple[Any, ...],
        score: int,
        home: tuple[int, ...] = (),
    ) -> None:
        """Add every block "talon cards onto a column top (or a king into an empty column),
        then ``purpose`` — the run based on ``b`` from column ``z``, a foundation top, or
        the cards on a covered card onto its twin and that card home — onto them" (onto one
        card the top talon card fits: reduction "arrangement"); with ``home``, those talon
        cards go home just before ``purpose``."""
        talrc, tops, tal = self._talrc, self._tops, self.tal
        r = RANK[b] + 1
        red = not RED[b]
        levels: list[list[int]] = []
        while r <= _KING and talrc[r][red]:
            levels.append([s * 13 + r for s in ((1, 2) if red else (0, 3)) if tal[s * 13 + r]])
            y = -1
            if r == _KING:
                y = self._empty
            else:
                for s in (0, 3) if red else (1, 2):
                    y = tops.get(s * 13 + r + 1, -1)
                    if y >= 0 and y != z:
                        break
                    y = -1
            if y >= 0:
                k = len(levels)
                m: tuple[Any, ...] = (*purpose, y)
                if home:
                    m = (6, home, m)
                for chain in product(*reversed(levels)):
                    add((score - 20 * k, (5, chain, y, m)))
            r += 1
            red = not red

    def _talon_moves_draw_three(self, add: Any, empty: int) -> None:
        found, seq, tops = self.found, self.seq, self._tops
        for q in self._reachable:  # (from ``_prepare``)
            c = seq[q - 1]
            r = RANK[c]
            if found[SUIT[c]] == r:
                add((450, (2, c, q)))
            if r == 0:
                continue  # an ace goes home rather than onto a two
            if r == _KING:
                if empty >= 0:
                    add((150, (3, c, q, empty)))
                continue
            # (reduction "arrangement": onto one of the two cards it fits, either is as good)
            p1, p2 = PARENTS[c]
            y = tops.get(p1, -1)
            if y < 0:
                y = tops.get(p2, -1)
            if y >= 0:
                add((200, (3, c, q, y)))

    # ------------------------------------------------------------------ the end

    def finish(self) -> None:
        """From a goal position play every card home, lowest first, appending to ``trail``.

        With no face-down card every column's face-up part is a run, so the lowest card not
        yet home is a column top or in the talon (in draw one every talon card is within
        reach), and its predecessor is home: the loop always finishes the game.
        """
        found, cols = self.found, self.cols
        while sum(found) < 52:
            best = None
            for s in range(4):
                h = found[s]
                if h == 13:
                    continue
                card = s * 13 + h
                if best is None or h < RANK[best]:
                    best = card
            assert best is not None
            for x in range(self.n):
                if cols[x] and cols[x][-1] == best:
                    self.apply((1, x))
                    break
            else:
                if self.draw != 1 or not self.tal[best]:
                    raise AssertionError("finish: lowest card is out of reach")
                self.apply((2, best, 0))
