"""Pieces shared by the solvers: card tables, the budget, the search driver and the result.

Nothing here knows a game's rules; :mod:`._klondike` and :mod:`._harp` hold those.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Generator
from typing import Any, Final

__all__ = [
    "CHILDREN",
    "OPPOSITE",
    "PARENTS",
    "RANK",
    "RED",
    "SAME_COLOUR",
    "SUIT",
    "Budget",
    "ColumnSearch",
    "OutOfBudget",
    "Search",
    "closed_levels",
    "drive",
]

RANK: Final = tuple(c % 13 for c in range(52))
SUIT: Final = tuple(c // 13 for c in range(52))
RED: Final = tuple(c // 13 in (1, 2) for c in range(52))
#: the two suits of the other colour, and the other suit of the same colour (C D H S = 0 1 2 3)
OPPOSITE: Final = ((1, 2), (0, 3), (0, 3), (1, 2))
SAME_COLOUR: Final = (3, 2, 1, 0)
#: PARENTS[c]: the cards ``c`` may be built on; CHILDREN[c]: the cards that may be built on ``c``
PARENTS: Final = tuple(
    tuple(t * 13 + RANK[c] + 1 for t in OPPOSITE[SUIT[c]]) if RANK[c] < 12 else ()
    for c in range(52)
)
CHILDREN: Final = tuple(
    tuple(t * 13 + RANK[c] - 1 for t in OPPOSITE[SUIT[c]]) if RANK[c] > 0 else () for c in range(52)
)
_CHECK_EVERY: Final = 512


class OutOfBudget(Exception):
    """Raised inside a search when its node or time budget is spent."""


class Budget:
    """A node budget (deterministic) and a wall-clock budget (not), either optional."""

    __slots__ = ("deadline", "max_nodes", "nodes", "started")

    def __init__(self, nodes: int | None, seconds: float | None) -> None:
        self.max_nodes = nodes
        self.started = time.perf_counter()
        self.deadline = None if seconds is None else self.started + seconds
        self.nodes = 0

    def elapsed(self) -> float:
        """Seconds since the budget started."""
        return time.perf_counter() - self.started


def closed_levels(heights: list[int]) -> list[int]:
    """The levels ``λ`` of the largest *closed* set of foundation cards, per suit.

    ``heights[s]`` is how many cards of suit ``s`` are home in every foundation pile of that
    suit (the lowest pile of the suit in Easy Harp). The set "ranks below ``λ[s]`` of suit
    ``s``, every copy" is closed when nothing outside it can ever be built on one of its
    cards: the cards built on rank ``k`` are the other colour's rank ``k − 1``, so we need
    ``λ[t] ≥ λ[s] − 1`` for every suit ``t`` of the other colour. The largest such levels
    under the heights are found by lowering to a fixed point. See :mod:`engine.solver` for
    why cards in this set never need to leave the foundations.
    """
    lam = list(heights)
    changed = True
    while changed:
        changed = False
        for s in range(4):
            a, b = OPPOSITE[s]
            m = min(lam[s], lam[a] + 1, lam[b] + 1)
            if m < lam[s]:
                lam[s] = m
                changed = True
    return lam


class Search:
    """Best-first search with a transposition set over a game's abstract positions.

    A subclass provides ``forced()`` (apply the provably safe moves, return what to undo),
    ``unforce(token)``, ``goal()``, ``key()``, ``moves()`` (every move to try),
    ``apply(move)`` (return an undo token), ``undo(move, token)``, ``snapshot()`` /
    ``restore(snapshot)`` and ``priority(depth)``; it appends the primitive actions it plays
    to ``trail`` and truncates ``trail`` on undo.

    Every position is entered into ``seen`` once and expanded at most once, the open one of
    lowest priority first. In a finite graph this reaches a goal whenever one is reachable,
    whatever the order, so a search that runs out of open positions proves there is none.
    """

    trail: list[Any]
    positions: int = 0
    #: the primitive actions that led to the position being expanded (None at the root)
    entered: tuple[Any, ...] | None = None

    seen: Any

    def admit(self, key: Any) -> bool:
        """Enter the position ``key`` into ``seen``; False if it was there already (or, in
        a game that knows a dominance between positions, if a stored position can do
        everything it can)."""
        seen = self.seen
        if key in seen:
            return False
        seen.add(key)
        return True

    # the hooks a game provides
    def forced(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def unforce(self, token: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def goal(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def key(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def moves(self) -> list[Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, move: Any) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def undo(self, move: Any, token: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def snapshot(self) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError

    def restore(self, snap: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def priority(self, depth: int) -> tuple[Any, ...]:  # pragma: no cover - abstract
        """One or more priorities of the current position (lower first): with several,
        the search takes them in turns."""
        raise NotImplementedError

    def finish(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    #: how the search runs: ``"best"`` best-first, ``"depth"`` depth-first (see ``search``)
    mode: str = "best"
    #: the node count past which the search pauses (``yield``s) for ``drive``
    limit: int = 0
    #: nodes generated so far (up to date whenever the search pauses or ends)
    nodes: int = 0

    def new_seen(self) -> Any:
        """An empty transposition set for ``admit``."""
        return set()

    def search(self) -> Generator[None, None, bool]:
        """The search, as a generator that pauses each time its node count passes ``limit``
        (see :func:`drive`); it returns True if a goal was reached (``trail`` then holds the
        way there from the start), False if the search space is exhausted.

        Best-first (``mode`` ``"best"``) or depth-first (``"depth"``): either admits every
        position once and expands every admitted one exactly once before it gives up, so
        exhausting either proves the same thing. Depth-first plays moves forward and back
        (``apply``/``undo``) and needs no ``snapshot``/``restore``, which makes a node
        cheaper; it also commits to a line, which finds some wins the best-first search
        does not (and misses others)."""
        self.seen = self.new_seen()
        self.positions = 0
        self.entered = None
        self.nodes = 0
        self.forced()
        if self.goal():
            return True
        self.admit(self.key())
        try:
            if self.mode == "depth":
                return (yield from self._dive())
            return (yield from self._best_first())
        finally:
            self.positions = len(self.seen)

    def _best_first(self) -> Generator[None, None, bool]:
        admit = self.admit
        apply = self.apply
        undo = self.undo
        forced = self.forced
        unforce = self.unforce
        goal = self.goal
        key = self.key
        gen = self.moves
        priority = self.priority
        snapshot = self.snapshot
        nodes = self.nodes
        limit = self.limit
        # the tree of positions: (parent, primitive actions from the parent, depth)
        tree: list[tuple[int, tuple[Any, ...], int]] = [(-1, tuple(self.trail), 0)]
        # one heap per priority of the game; they take turns (a position is expanded once,
        # when it first comes out of any of them)
        snap = snapshot()
        heaps: list[list[tuple[Any, int, Any]]] = [[(p, 0, snap)] for p in priority(0)]
        turns = len(heaps)
        expanded = bytearray(1)
        turn = 0
        try:
            while True:
                heap = heaps[turn]
                turn = (turn + 1) % turns
                while heap and expanded[heap[0][1]]:
                    heapq.heappop(heap)
                if not heap:
                    if any(heaps):
                        continue
                    return False
                _, node, snap = heapq.heappop(heap)
                expanded[node] = 1
                self.restore(snap)
                self.trail = []
                parent, self.entered, depth = tree[node]
                if parent < 0:
                    self.entered = None
                for move in gen():
                    utok = apply(move)
                    nodes += 1
                    if nodes > limit:
                        self.nodes = nodes
                        yield
                        limit = self.limit
                    ftok = forced()
                    if goal():
                        self.trail = self._path(tree, node) + self.trail
                        return True
                    k = key()
                    if admit(k):
                        child = len(tree)
                        segment = tuple(self.trail)
                        tree.append((node, segment, depth + len(segment)))
                        expanded.append(0)
                        snap = snapshot()
                        for h, p in zip(heaps, priority(depth + len(segment)), strict=True):
                            heapq.heappush(h, (p, child, snap))
                    unforce(ftok)
                    undo(move, utok)
        finally:
            self.nodes = nodes

    @staticmethod
    def _path(tree: list[tuple[int, tuple[Any, ...], int]], node: int) -> list[Any]:
        """The primitive actions from the start to the tree position ``node``."""
        path: list[Any] = []
        while node >= 0:
            parent, segment, _ = tree[node]
            path[:0] = segment
            node = parent
        return path

    def _dive(self) -> Generator[None, None, bool]:
        """Expand the current (admitted) position and everything new below it, depth first;
        True with ``trail`` extended by the way to a goal, False when nothing is new."""
        admit = self.admit
        apply = self.apply
        undo = self.undo
        forced = self.forced
        unforce = self.unforce
        goal = self.goal
        key = self.key
        gen = self.moves
        trail = self.trail
        nodes = self.nodes
        limit = self.limit
        # frames: the moves left to try, and the move (with its undo tokens) that led here
        stack: list[tuple[Any, Any, Any, Any]] = [(iter(gen()), None, None, None)]
        try:
            while stack:
                move = next(stack[-1][0], None)
                if move is None:
                    _, move, utok, ftok = stack.pop()
                    if stack:
                        unforce(ftok)
                        undo(move, utok)
                    continue
                mark = len(trail)
                utok = apply(move)
                nodes += 1
                if nodes > limit:
                    self.nodes = nodes
                    yield
                    limit = self.limit
                ftok = forced()
                if goal():
                    return True
                if admit(key()):
                    self.entered = tuple(trail[mark:])
                    stack.append((iter(gen()), move, utok, ftok))
                    continue
                unforce(ftok)
                undo(move, utok)
            return False
        finally:
            self.nodes = nodes

    def covered_something(self) -> bool:
        """True unless the position was reached from an expanded one by foundation moves
        only (which can only make the ``dead`` test of Klondike more optimistic)."""
        entered = self.entered
        if entered is None:
            return True
        for step in entered:
            if step[0] != "colf" and not (step[0] == "talon" and step[3] < 0):
                return True
        return False


def drive(searches: list[tuple[Search, int, int]], budget: Budget) -> tuple[Search, bool]:
    """Run several independent searches of one position in turns, each ``(search, share,
    start)`` getting ``share`` slices of nodes per round once ``start`` nodes have been
    spent in all. Each keeps its own transposition set and is complete on its own, so the
    first to finish decides: a goal reached, or its search space exhausted (the position is
    lost). Returns that search and whether it reached a goal. Raises :class:`OutOfBudget`
    when the budget is spent; the node count (``budget.nodes``) is exact, so a node budget
    gives a deterministic answer."""
    max_nodes = budget.max_nodes
    deadline = budget.deadline
    runs = [(s, s.search(), share, start) for s, share, start in searches]
    total = 0
    try:
        while True:
            for s, steps, share, start in runs:
                if total < start:
                    continue
                room = share * _CHECK_EVERY
                if max_nodes is not None:
                    room = min(room, max_nodes - total)
                before = s.nodes
                s.limit = before + room
                try:
                    next(steps)
                except StopIteration as stop:
                    total += s.nodes - before
                    return s, bool(stop.value)
                total += s.nodes - before
                if max_nodes is not None and total > max_nodes:
                    raise OutOfBudget
                if deadline is not None and time.perf_counter() > deadline:
                    raise OutOfBudget
    finally:
        budget.nodes = total
        for _, steps, _, _ in runs:
            steps.close()


class ColumnSearch(Search):
    """A search over columns of cards (bottom → top, ``down[i]`` face down at the bottom),
    each keyed by its bytes in ``ck`` so that a position's key sorts them (the symmetry of
    columns): lifting cards off a column (turning the card they uncover) and dropping them
    on one, and the way back, each re-keying the column it changed."""

    cols: list[list[int]]
    down: list[int]
    ndown: int
    ck: list[bytes]

    def _rekey(self, i: int) -> None:
        self.ck[i] = bytes((self.down[i], *self.cols[i], 255))

    def _lift(self, x: int, count: int) -> tuple[list[int], bool]:
        col = self.cols[x]
        cards = col[-count:]
        del col[-count:]
        flipped = bool(col) and self.down[x] == len(col)
        if flipped:
            self.down[x] -= 1
            self.ndown -= 1
        self._rekey(x)
        return cards, flipped

    def _unlift(self, x: int, cards: list[int], flipped: bool) -> None:
        if flipped:
            self.down[x] += 1
            self.ndown += 1
        self.cols[x].extend(cards)
        self._rekey(x)

    def _drop(self, y: int, cards: list[int]) -> None:
        self.cols[y].extend(cards)
        self._rekey(y)

    def _undrop(self, y: int, count: int) -> None:
        del self.cols[y][-count:]
        self._rekey(y)
