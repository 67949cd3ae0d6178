"""Klondike draw one as the solver searched it before reduction 10 ("arrangement") reached
draw one: the search the day's proof is pinned to (``engine.daily.DAILY_PORTFOLIO``, members
with ``arranged=False``).

Every worker derives the day itself, so a day must not move when the solver learns; a new
reduction changes which candidates a search proves within the day's node budget. This module
keeps the draw one search of 2026-12-06 move for move: the position keyed with its whole
columns, runs moved from any card of a column's face-up part onto every card they fit,
reduction "postponement" as it stood for that graph (``_exposed_useful``), and talon chains
under any face-up card. Nothing else should use it; a change here moves past days.

It keeps a gap the solver has since closed: a run moved off a card that can go home only
after talon cards of its suit (a block that must come right before a table card goes home)
is postponed for good, so a few winnable deals are proven lost (deal 535 of 1-1,000). For a
day that only skips a candidate: a day's deal is always one proven winnable by a line that
replays.
"""

from __future__ import annotations

from itertools import product
from typing import Any

from ._common import RANK, RED, SAME_COLOUR, SUIT
from ._klondike import _BY_SCORE, _KING, KlondikeSearch

__all__ = ["PinnedDrawOneSearch"]


class PinnedDrawOneSearch(KlondikeSearch):
    """The draw one search without reduction "arrangement" (see the module)."""

    def key(self) -> Any:
        """The position up to the order of the columns, each column whole: the same three
        parts as the arranged key (columns, loose cards, talon), with no loose cards, as the
        columns hold every card on the table."""
        return (b"".join(sorted(self.ck)), 0, self.tkey)

    def moves(self) -> list[tuple[Any, ...]]:
        """Every move worth trying here, best first."""
        if self.pruned(None):
            return []
        cols, down, found = self.cols, self.down, self.found
        n = self.n
        out: list[tuple[int, tuple[Any, ...]]] = []
        add = out.append
        empty = self._first_empty()
        self._prepare(empty)
        # columns to the foundations
        for x in range(n):
            col = cols[x]
            if col:
                c = col[-1]
                if found[SUIT[c]] == RANK[c]:
                    score = self._plain_home_score(x, c)
                    if score:
                        add((score, (1, x)))
        # runs between columns: (column, rank that fits on its top, its top's colour)
        targets = [(y, RANK[col[-1]] - 1, RED[col[-1]]) for y, col in enumerate(cols) if col]
        for x in range(n):
            col = cols[x]
            if not col:
                continue
            d = down[x]
            hi = RANK[col[d]]
            lo = RANK[col[-1]]
            top = len(col)
            for y, need, red in targets:
                if lo <= need <= hi and y != x:
                    i = d + hi - need
                    if RED[col[i]] != red and (i == d or self._exposed_useful(x, i, col[i])):
                        add((self._run_score(x, i), (0, x, top - i, y)))
            # a king run into an empty column; from the bottom of a column it would only
            # swap two columns (reduction "symmetry")
            if empty >= 0 and hi == _KING and d:
                add((1000 + 10 * d, (0, x, top - d, empty)))
        backs = self._back_moves(add, empty, False)
        self._plain_talon_moves(add, backs)
        if self.dive:
            out = self._shuffled(out)
        out.sort(key=_BY_SCORE, reverse=True)
        return [m for _, m in out]

    def _exposed_useful(self, x: int, i: int, gone: int) -> bool:
        """Reduction "postponement": the cards from index ``i`` of column ``x`` up leave
        (``gone`` is the one that lay on the card ``a`` below), without uncovering anything.
        Is there a move that uses ``a`` right after — ``a`` home (or its predecessor first),
        or the other card that fits on ``a`` onto it? If not, the move can wait until ``a`` is
        used, so it is not tried now. (``a`` moving on with the run under it is no use: that
        run could have carried the block along; see engine.solver.)"""
        found = self.found
        col = self.cols[x]
        a = col[i - 1]
        h = found[SUIT[a]]
        if h == RANK[a]:
            return True
        if h == RANK[a] - 1 and (a - 1 in self._tops or self._in_reach(a - 1)):
            # its predecessor can go home first (a move that waits for this one)
            return True
        twin = SAME_COLOUR[SUIT[gone]] * 13 + RANK[gone]
        z = self._up.get(twin, -1)
        if RANK[twin] == 0:
            return False  # an ace is never built on a two: it would rather go home
        if (z >= 0 and z != x) or found[SUIT[twin]] == RANK[twin] + 1:
            return True
        return bool(self.tal[twin]) and self._chain_from(a, twin, x)

    def _plain_home_score(self, x: int, c: int) -> int:
        """The score of the top ``c`` of column ``x`` going home; 0 when it can wait."""
        col = self.cols[x]
        d = self.down[x]
        if len(col) == 1:
            return 500
        if len(col) - 1 == d:
            return 1100 + 10 * d
        return 400 if self._home_useful(x, c) else 0

    def _home_useful(self, x: int, card: int) -> bool:
        """Reduction "postponement": a top card that goes home without uncovering anything
        is useful only when its successor can follow it home at once (a column top, or in
        reach in the talon), or the card under it can be used at once."""
        if RANK[card] < _KING:
            succ = card + 1
            if succ in self._tops or self._in_reach(succ):
                return True
        return self._exposed_useful(x, len(self.cols[x]) - 1, card)

    def _plain_talon_moves(self, add: Any, backs: list[int]) -> None:
        cols, down, found, tal = self.cols, self.down, self.found, self.tal
        n = self.n
        if not self.tkey:
            return
        # Reduction "talon chains" (foundations): a talon card goes home only together with
        # the card from the table that is then played onto it.
        for x in range(n):
            col = cols[x]
            if not col:
                continue
            c = col[-1]
            s = SUIT[c]
            h = found[s]
            r = RANK[c]
            if h < r and all(tal[s * 13 + k] for k in range(h, r)):
                score = self._plain_home_score(x, c)
                if not score:
                    continue
                add((score - 20 * (r - h), (6, tuple(range(s * 13 + h, s * 13 + r)), (1, x))))
        # Reduction "talon chains": a talon card goes onto the table only with the move it
        # was put there for — a card from another column (or a foundation) built on it.
        talrc = self._talrc
        for z in range(n):
            col = cols[z]
            for i in range(down[z], len(col)):
                b = col[i]
                if RANK[b] < _KING and talrc[RANK[b] + 1][not RED[b]]:
                    self._plain_chains_under(add, b, z, (0, z, len(col) - i), i)
        for s in backs:
            self._plain_chains_under(add, s * 13 + found[s] - 1, -1, (4, s), -1)

    def _plain_chains_under(
        self, add: Any, b: int, z: int, purpose: tuple[Any, ...], i: int
    ) -> None:
        """Add every block "talon cards onto a column top (or a king into an empty column),
        then ``purpose`` — the run based on ``b`` from column ``z`` (index ``i``), or a
        foundation top — onto them"."""
        talrc, tops, tal = self._talrc, self._tops, self.tal
        r = RANK[b] + 1
        red = not RED[b]
        levels: list[list[int]] = []
        useful: bool | None = None
        while r <= _KING and talrc[r][red]:
            levels.append([s * 13 + r for s in ((1, 2) if red else (0, 3)) if tal[s * 13 + r]])
            if r == _KING:
                targets = [self._empty] if self._empty >= 0 else []
            else:
                targets = []
                for s in (0, 3) if red else (1, 2):
                    y = tops.get(s * 13 + r + 1, -1)
                    if y >= 0 and y != z:
                        targets.append(y)
            if targets:
                if useful is None:
                    if z < 0:
                        score = 0
                        useful = True
                    else:
                        d = self.down[z]
                        useful = i == d or self._exposed_useful(z, i, b)
                        score = self._run_score(z, i)
                if not useful:
                    return
                k = len(levels)
                for y in targets:
                    m = (*purpose, y)
                    for chain in product(*reversed(levels)):
                        add((score - 20 * k, (5, chain, y, m)))
            r += 1
            red = not red
