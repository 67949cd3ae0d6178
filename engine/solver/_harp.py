"""The Easy Harp search on its own compact position.

Two decks, nine columns, one card at a time, the whole talon always within reach (draw one,
free passes). See :mod:`engine.solver` for the reductions and why each is sound.
"""

from __future__ import annotations

from itertools import product
from operator import itemgetter
from typing import Any, Final

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

__all__ = ["HarpSearch"]

_KING: Final = 12
_BY_SCORE: Final = itemgetter(0)
#: foundation slot i (0-based) takes suit S H C D S H C D; the two slots of each suit
_SLOT_SUITS: Final = (3, 2, 0, 1, 3, 2, 0, 1)
_SLOTS_OF: Final = ((2, 6), (3, 7), (1, 5), (0, 4))
_SUITS_OF_COLOUR: Final = ((0, 3), (1, 2))  # black, red


class HarpSearch(ColumnSearch):
    """Search one Easy Harp position: ``columns`` bottom → top with ``down`` face-down cards
    each, ``slots[i]`` cards on foundation slot ``i``, and the talon's cards (any order)."""

    def __init__(
        self, columns: list[list[int]], down: list[int], slots: list[int], talon: list[int]
    ) -> None:
        self.n = len(columns)
        self.cols = [list(c) for c in columns]
        self.down = list(down)
        self.slots = list(slots)
        self.ndown = sum(down)
        self.tal = bytearray(52)
        self.tkey = 0
        for c in talon:
            self.tal[c] += 1
            self.tkey += 1 << (2 * c)
        self._key_columns()
        self.trail: list[Any] = []

    # ------------------------------------------------------------------ position

    def key(self) -> Any:
        """The position up to the order of the columns; the talon as a multiset; the
        foundations are implied by the cards that are neither in a column nor the talon."""
        return (b"".join(sorted(self.ck)), self.tkey)

    def goal(self) -> bool:
        """No face-down card left: the rest always goes home (see ``finish``)."""
        return not self.ndown

    def _slot_for(self, card: int) -> int:
        """A foundation slot that takes ``card`` now, or -1."""
        r = RANK[card]
        a, b = _SLOTS_OF[SUIT[card]]
        slots = self.slots
        if slots[a] == r:
            return a
        if slots[b] == r:
            return b
        return -1

    def _levels(self) -> list[int]:
        slots = self.slots
        return [min(slots[a], slots[b]) for a, b in _SLOTS_OF]

    # ------------------------------------------------------------------ best-first hooks

    #: best-first weights (face-down cards, cards home, line length), tuned on deals 1-20
    WEIGHTS = ((5, 1, 1),)

    def snapshot(self) -> Any:
        """The position in a compact form for ``restore``."""
        return (self._columns_snapshot(), self.tkey, bytes(self.tal), bytes(self.slots))

    def restore(self, snap: Any) -> None:
        """Return to a position saved by ``snapshot``."""
        joined, self.tkey, tal, slots = snap
        self._restore_columns(joined)
        self.tal = bytearray(tal)
        self.slots = list(slots)

    #: the search's order: 0 the usual, 1 aimed at the face-down cards (see ``priority``
    #: and ``moves``); a portfolio member's own (``Member.order``)
    order: int = 0
    #: order 1's best-first weights (face-down cards, cards home, line length, buried
    #: cards), chosen on the deals the other orders leave unknown
    AIMED_WEIGHTS = ((5, 1, 2, 8),)
    #: order 1's move order: how much a card's move to a column loses per face-down card of
    #: that column
    AIM = 3

    def priority(self, depth: int) -> tuple[int, ...]:
        """Best-first orders: fewer face-down cards, more cards home, shorter lines first;
        order 1 also fewer *buried* cards (face up on a face-down card: each must leave
        before that card turns)."""
        ndown = self.ndown
        home = sum(self.slots)
        if not self.order:
            return tuple(wd * ndown - wh * home + wl * depth for wd, wh, wl in self.WEIGHTS)
        buried = 0
        cols, down = self.cols, self.down
        for x in range(self.n):
            d = down[x]
            if d:
                buried += len(cols[x]) - d
        return tuple(
            wd * ndown - wh * home + wl * depth + wb * buried
            for wd, wh, wl, wb in self.AIMED_WEIGHTS
        )

    # ------------------------------------------------------------------ primitive changes

    def _take(self, card: int) -> None:
        self.tal[card] -= 1
        self.tkey -= 1 << (2 * card)

    def _untake(self, card: int) -> None:
        self.tal[card] += 1
        self.tkey += 1 << (2 * card)

    # ------------------------------------------------------------------ moves

    # (0, X, Y)          top card of column X onto column Y
    # (1, X)             top card of column X home
    # (4, slot, Y)       top of a foundation slot back onto column Y
    # (5, chain, X, m)   talon cards `chain` onto column X, then move m (0 or 4) onto them
    # (6, chain, X)      talon cards `chain` home (one suit, rising), then the top of X home
    # (7, X, count, Y)   a king-led sequence of `count` cards from X into the empty column Y
    # (8, card)          a talon card home (forced moves and the finish only)

    def apply(self, m: tuple[Any, ...]) -> Any:
        """Play one move; return what ``undo`` needs."""
        kind = m[0]
        trail = self.trail
        if kind == 0:
            _, x, y = m
            cards, flipped = self._lift(x, 1)
            self._drop(y, cards)
            trail.append(("run", x, 1, y))
            self._fresh = x
            return flipped
        self._fresh = -1
        if kind == 1:
            x = m[1]
            cards, flipped = self._lift(x, 1)
            slot = self._slot_for(cards[0])
            self.slots[slot] += 1
            trail.append(("colf", x))
            return (cards[0], flipped, slot)
        if kind == 4:
            _, slot, y = m
            self.slots[slot] -= 1
            card = _SLOT_SUITS[slot] * 13 + self.slots[slot]
            self._drop(y, [card])
            trail.append(("back", card, y))
            return None
        if kind == 5:
            _, chain, x, purpose = m
            for card in chain:
                self._take(card)
                trail.append(("talon", card, 0, x))
            self._drop(x, list(chain))
            # (the talon cards lie under the card of ``purpose``: the new top, if any, is
            # the one ``purpose`` gives, and a talon card leaving makes no card safe)
            return self.apply(purpose)
        if kind == 6:
            _, chain, x = m
            slots = []
            for card in chain:
                self._take(card)
                slot = self._slot_for(card)
                self.slots[slot] += 1
                slots.append(slot)
                trail.append(("talon", card, 0, -1))
            return (slots, self.apply((1, x)))
        if kind == 7:
            _, x, count, y = m
            cards, flipped = self._lift(x, count)
            self._drop(y, cards)
            trail.append(("run", x, count, y))
            self._fresh = x
            return flipped
        card = m[1]
        self._take(card)
        slot = self._slot_for(card)
        self.slots[slot] += 1
        trail.append(("talon", card, 0, -1))
        return slot

    def undo(self, m: tuple[Any, ...], token: Any) -> None:
        """Take back a move played by ``apply``."""
        kind = m[0]
        trail = self.trail
        if kind == 0 or kind == 7:
            trail.pop()
            x, y = m[1], m[-1]
            count = 1 if kind == 0 else m[2]
            cards = self.cols[y][-count:]
            self._undrop(y, count)
            self._unlift(x, cards, token)
        elif kind == 1:
            trail.pop()
            card, flipped, slot = token
            self.slots[slot] -= 1
            self._unlift(m[1], [card], flipped)
        elif kind == 4:
            trail.pop()
            _, slot, y = m
            self._undrop(y, 1)
            self.slots[slot] += 1
        elif kind == 5:
            _, chain, x, purpose = m
            self.undo(purpose, token)
            self._undrop(x, len(chain))
            for card in reversed(chain):
                trail.pop()
                self._untake(card)
        elif kind == 6:
            _, chain, x = m
            slots, inner = token
            self.undo((1, x), inner)
            for card, slot in zip(reversed(chain), reversed(slots), strict=True):
                trail.pop()
                self.slots[slot] -= 1
                self._untake(card)
        else:
            trail.pop()
            self.slots[token] -= 1
            self._untake(m[1])

    # ------------------------------------------------------------------ safe moves

    def forced(self) -> list[tuple[Any, ...]]:
        """Play every safe foundation move (column tops and talon cards) and return them
        with their undo tokens.

        Reduction "safe foundation moves": a card of rank ``r`` is safe when every pile of the
        other colour holds ``r`` cards or more, the other pile of its suit ``r`` or more and
        both piles of the other suit of its colour ``r - 1`` or more (see engine.solver). So
        ``r`` is the lower pile of its suit: each suit has at most one candidate.
        """
        played: list[Any] = []
        cols, tal, slots = self.cols, self.tal, self.slots
        top = self._fresh_top()
        streamline = self.streamline
        if top is not None:
            # (the one card that could be safe: not unless next on the lower pile of its suit,
            # or in a streamlined search on either pile)
            if top < 0:
                return played
            a, b = _SLOTS_OF[SUIT[top]]
            if streamline:
                if RANK[top] != slots[a] and RANK[top] != slots[b]:
                    return played
            elif RANK[top] != min(slots[a], slots[b]):
                return played
        if streamline:
            self._home_all(played)
            return played
        n = self.n
        progress = True
        while progress:
            progress = False
            lev = [min(slots[a], slots[b]) for a, b in _SLOTS_OF]
            for s in range(4):
                r = lev[s]
                o1, o2 = OPPOSITE[s]
                if r == 13 or r > lev[o1] or r > lev[o2] or r > lev[SAME_COLOUR[s]] + 1:
                    continue
                card = s * 13 + r
                for x in range(n):
                    col = cols[x]
                    if col and col[-1] == card:
                        m: tuple[Any, ...] = (1, x)
                        break
                else:
                    if not tal[card]:
                        continue
                    m = (8, card)
                played.append((m, self.apply(m)))
                progress = True
                lev = [min(slots[a], slots[b]) for a, b in _SLOTS_OF]
        return played

    def _home_all(self, played: list[Any]) -> None:
        """A streamlined search (see engine.solver): every column top and talon card that
        can go home goes home, until none can."""
        cols, tal, slots = self.cols, self.tal, self.slots
        progress = True
        while progress:
            progress = False
            for x in range(self.n):
                col = cols[x]
                if col and self._slot_for(col[-1]) >= 0:
                    m: tuple[Any, ...] = (1, x)
                    played.append((m, self.apply(m)))
                    progress = True
            for slot in range(8):
                h = slots[slot]
                if h < 13:
                    card = _SLOT_SUITS[slot] * 13 + h
                    if tal[card]:
                        m = (8, card)
                        played.append((m, self.apply(m)))
                        progress = True

    def unforce(self, played: list[tuple[tuple[Any, ...], Any]]) -> None:
        """Undo what ``forced`` played."""
        for i in range(len(played) - 1, -1, -1):
            m, token = played[i]
            self.undo(m, token)

    # ------------------------------------------------------------------ usefulness checks

    def _prepare(self, empty: int) -> None:
        """Per-node tables: columns holding each card face up, and as top."""
        up: dict[int, list[int]] = {}
        tops: dict[int, list[int]] = {}
        cols, down = self.cols, self.down
        for z in range(self.n):
            col = cols[z]
            if col:
                for k in range(down[z], len(col)):
                    up.setdefault(col[k], []).append(z)
                tops.setdefault(col[-1], []).append(z)
        self._up = up
        self._tops = tops
        self._empty = empty
        tal = self.tal
        self._talrc = [
            (bool(tal[r] or tal[39 + r]), bool(tal[13 + r] or tal[26 + r])) for r in range(13)
        ]

    def _top_elsewhere(self, card: int, exclude: tuple[int, ...]) -> bool:
        return any(z not in exclude for z in self._tops.get(card, ()))

    def _on_top_home(self, card: int) -> bool:
        """``card`` lies on top of one of its foundation slots."""
        a, b = _SLOTS_OF[SUIT[card]]
        r = RANK[card] + 1
        return self.slots[a] == r or self.slots[b] == r

    def _chain_from(self, top: int, first: int) -> bool:
        """Talon cards chained onto ``top`` starting with the talon card ``first``, then a
        card face up in some column (or a foundation top) built on them — possible?
        (Loose: the last card need only be face up, another move may free it first.)"""
        talrc = self._talrc
        red = RED[first]
        r = RANK[first]
        while r > 0:
            for s in _SUITS_OF_COLOUR[not red]:
                e = s * 13 + r - 1
                if e in self._up or self._on_top_home(e):
                    return True
            r -= 1
            red = not red
            if not talrc[r][red]:
                return False
        return False

    def _chain_to(self, e: int, exclude: tuple[int, ...]) -> bool:
        """Can ``e`` go now onto a column top (not in ``exclude``), directly or onto talon
        cards chained onto that top, or onto a chain led by a talon king in an empty
        column?"""
        for p in PARENTS[e]:
            if self._top_elsewhere(p, exclude):
                return True
        talrc = self._talrc
        r = RANK[e] + 1
        red = not RED[e]
        while r <= _KING and talrc[r][red]:
            if r == _KING:
                return self._empty >= 0
            r += 1
            red = not red
            for s in _SUITS_OF_COLOUR[red]:
                if self._top_elsewhere(s * 13 + r, exclude):
                    return True
        return False

    def _exposed_useful(self, x: int, gone: int) -> bool:
        """Reduction "postponement": the top card ``gone`` of column ``x`` leaves and uncovers
        nothing; ``a``, the face-up card under it, is
        exposed. Is there a use for ``a`` at once — ``a`` home (or its predecessor first),
        a card built on ``a``, or ``a`` moving on? The checks of a card built on ``a`` are
        loose (the card need only be face up), so that two such moves that wait for each
        other are still tried (see engine.solver)."""
        col = self.cols[x]
        a = col[-2]
        r = RANK[a]
        if self._slot_for(a) >= 0:
            return True
        if r and self._slot_for(a - 1) >= 0 and (a - 1 in self._tops or self.tal[a - 1]):
            return True
        if r > 1:  # an ace is never built on a two: it would rather go home
            for child in CHILDREN[a]:
                ups = self._up.get(child, ())
                if child == gone:
                    if len(ups) > 1:
                        return True  # the other copy is face up somewhere else
                elif any(z != x for z in ups):
                    return True
                if self._on_top_home(child):
                    return True
                if self.tal[child] and self._chain_from(a, child):
                    return True
        if r == _KING:
            return bool(self.down[x]) and self._empty >= 0 and len(col) - 1 == self.down[x] + 1
        return self._chain_to(a, (x,))

    def _home_useful(self, x: int, card: int) -> bool:
        """Reduction "postponement": a top card going home without uncovering anything is
        useful only if its successor can follow at once, or the card under it has a use."""
        if RANK[card] < _KING:
            succ = card + 1
            if succ in self._tops or self.tal[succ]:
                return True
        return self._exposed_useful(x, card)

    def _back_useful(self, card: int) -> bool:
        """Reduction "postponement": a card taken back from a foundation is useful only when
        a card can be built on it at once, or the card under it be taken back too (both
        checked loosely)."""
        if RANK[card] < 2:
            return False
        up, tal = self._up, self.tal
        for child in CHILDREN[card]:
            if child in up or self._on_top_home(child):
                return True
            if tal[child] and self._chain_from(card, child):
                return True
        pred = card - 1
        if RANK[pred]:
            for p in PARENTS[pred]:
                if p in up or self._on_top_home(p):
                    return True
            if self._chain_to(pred, ()):
                return True
        return False

    # ------------------------------------------------------------------ generating moves

    def _leave_score(self, x: int) -> int:
        """How good it is to take the top card off column ``x``: uncovering scores high
        (more so with many face-down cards left under it), emptying a column less."""
        col = self.cols[x]
        d = self.down[x]
        if len(col) - 1 == d:
            return 1000 + 10 * d if d else 300
        below = col[-2]
        return 100 if self._slot_for(below) >= 0 else 10

    def moves(self) -> list[tuple[Any, ...]]:
        """Every move worth trying here, best first (the order is a heuristic; the
        completeness of the search does not depend on it)."""
        cols, down, slots, tal = self.cols, self.down, self.slots, self.tal
        n = self.n
        out: list[tuple[int, tuple[Any, ...]]] = []
        add = out.append
        empty = self._first_empty()
        self._prepare(empty)
        tops = self._tops
        # (order 1: a card is rather put on a column with fewer face-down cards to bury)
        aim = self.AIM if self.order else 0
        restricted: list[bool] = [False] * n  # the top leaves without uncovering anything
        for x in range(n):
            col = cols[x]
            restricted[x] = len(col) - 1 > down[x]
        # tops home, with the talon cards of their suit that must go first
        for x in range(n):
            col = cols[x]
            if not col:
                continue
            c = col[-1]
            s = SUIT[c]
            r = RANK[c]
            for slot in _SLOTS_OF[s]:
                h = slots[slot]
                if h > r or (h < r and not all(tal[s * 13 + k] for k in range(h, r))):
                    continue
                if restricted[x] and not self._home_useful(x, c):
                    break
                score = self._leave_score(x) + (50 if h == r else -20 * (r - h))
                if h == r:
                    add((score, (1, x)))
                else:
                    add((score, (6, tuple(range(s * 13 + h, s * 13 + r)), x)))
                if slots[_SLOTS_OF[s][0]] == slots[_SLOTS_OF[s][1]]:
                    break  # the two slots are alike (reduction "symmetry")
        # tops onto other columns
        for x in range(n):
            col = cols[x]
            if not col:
                continue
            c = col[-1]
            if RANK[c] == _KING:
                d = down[x]
                if empty >= 0 and d:
                    count = len(col) - d
                    add((1000 + 10 * d, (0, x, empty) if count == 1 else (7, x, count, empty)))
            ok: bool | None = None
            for p in PARENTS[c]:
                for y in tops.get(p, ()):
                    if y == x:
                        continue
                    if ok is None:
                        ok = not restricted[x] or self._exposed_useful(x, c)
                    if not ok:
                        break
                    add((self._leave_score(x) - aim * down[y], (0, x, y)))
            # a king-led sequence whose king lies on face-down cards
            d = down[x]
            if RANK[c] != _KING and empty >= 0 and d and RANK[col[d]] == _KING:
                add((1000 + 10 * d, (7, x, len(col) - d, empty)))
        # foundation tops back onto the table (reductions "closed foundations", "postponement")
        lam = closed_levels(self._levels())
        backs: list[int] = []
        for s in range(4 if not self.streamline else 0):
            a, b = _SLOTS_OF[s]
            for slot in (a, b) if slots[a] != slots[b] else (a,):
                h = slots[slot]
                if not h or h - 1 < lam[s]:
                    continue
                card = s * 13 + h - 1
                if not self._back_useful(card):
                    continue
                backs.append(slot)
                if h - 1 == _KING:
                    if empty >= 0:
                        add((0, (4, slot, empty)))
                    continue
                for p in PARENTS[card]:
                    for y in tops.get(p, ()):
                        add((-aim * down[y], (4, slot, y)))
        # talon chains onto the table with the card they are for (reduction "talon chains")
        if self.tkey:
            talrc = self._talrc
            for z in range(n):
                col = cols[z]
                if col:
                    b = col[-1]
                    if RANK[b] < _KING and talrc[RANK[b] + 1][not RED[b]]:
                        self._chains_under(add, b, z, restricted[z])
            for slot in backs:
                b = _SLOT_SUITS[slot] * 13 + slots[slot] - 1
                if RANK[b] < _KING and talrc[RANK[b] + 1][not RED[b]]:
                    self._chains_under(add, b, -1, False, slot)
        if self.dive:
            out = self._shuffled(out)
        out.sort(key=_BY_SCORE, reverse=True)
        return [m for _, m in out]

    def _chains_under(self, add: Any, b: int, z: int, restricted: bool, slot: int = -1) -> None:
        """Add every block "talon cards onto a column top (or a king into an empty column),
        then ``b`` — the top of column ``z``, or of foundation ``slot`` — onto them"."""
        talrc, tops, tal = self._talrc, self._tops, self.tal
        aim = self.AIM if self.order else 0
        r = RANK[b] + 1
        red = not RED[b]
        levels: list[list[int]] = []
        useful: bool | None = None
        score = 0
        while r <= _KING and talrc[r][red]:
            levels.append([s * 13 + r for s in _SUITS_OF_COLOUR[red] if tal[s * 13 + r]])
            if r == _KING:
                targets = [self._empty] if self._empty >= 0 else []
            else:
                targets = []
                for s in _SUITS_OF_COLOUR[not red]:
                    for y in tops.get(s * 13 + r + 1, ()):
                        if y != z:
                            targets.append(y)
            if targets:
                if useful is None:
                    if z < 0:
                        useful = True
                    else:
                        useful = not restricted or self._exposed_useful(z, b)
                        score = self._leave_score(z)
                if not useful:
                    return
                k = len(levels)
                purpose = (0, z) if z >= 0 else (4, slot)
                for y in targets:
                    m = (*purpose, y)
                    for chain in product(*reversed(levels)):
                        add((score - 20 * k - aim * self.down[y], (5, chain, y, m)))
            r += 1
            red = not red

    # ------------------------------------------------------------------ the end

    def finish(self) -> None:
        """From a goal position play every card home, lowest first (see the goal test in
        engine.solver for why this always succeeds), appending to ``trail``."""
        cols, tal, slots = self.cols, self.tal, self.slots
        while sum(slots) < 104:
            best = -1
            for slot in range(8):
                h = slots[slot]
                if h < 13:
                    card = _SLOT_SUITS[slot] * 13 + h
                    if best < 0 or h < RANK[best]:
                        best = card
            for x in range(self.n):
                if cols[x] and cols[x][-1] == best:
                    self.apply((1, x))
                    break
            else:
                if not tal[best]:
                    raise AssertionError("finish: lowest card is out of reach")
                self.apply((8, best))
