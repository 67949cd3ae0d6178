"""Pieces shared by the solvers: card tables, the budget, the search driver and the result.

Nothing here knows a game's rules; :mod:`._klondike` and :mod:`._harp` hold those.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
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
    "OutOfBudget",
    "Search",
    "closed_levels",
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
    tuple(t * 13 + RANK[c] - 1 for t in OPPOSITE[SUIT[c]]) if RANK[c] > 0 else ()
    for c in range(52)
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
    """Depth-first search with a transposition set over a game's abstract positions.

    A subclass provides ``forced()`` (apply the provably safe moves, return what to undo),
    ``unforce(token)``, ``goal()``, ``key()``, ``moves()`` (ordered, best first),
    ``apply(move)`` (return an undo token) and ``undo(move, token)``; it appends the
    primitive actions it plays to ``trail`` and truncates ``trail`` on undo.

    Every position is entered into ``seen`` once; a position met again is not searched
    again. In a finite graph this finds a path to a goal whenever one exists, so an
    exhausted search proves that none does.
    """

    trail: list[Any]

    def run(self, budget: Budget) -> bool:
        """True if a goal was reached (``trail`` then holds the way there); False if the
        search space is exhausted. Raises :class:`OutOfBudget`."""
        seen: set[Any] = set()
        apply: Callable[[Any], Any] = self.apply
        undo: Callable[[Any, Any], None] = self.undo
        forced = self.forced
        unforce = self.unforce
        goal = self.goal
        key = self.key
        gen = self.moves
        max_nodes = budget.max_nodes
        deadline = budget.deadline
        nodes = budget.nodes

        self.positions = 0
        token = forced()
        if goal():
            return True
        seen.add(key())
        # frames: [moves, next index, undo token of the forced moves, move, its undo token]
        stack: list[list[Any]] = [[gen(), 0, token, None, None]]
        try:
            while stack:
                frame = stack[-1]
                moves = frame[0]
                i = frame[1]
                if i == len(moves):
                    stack.pop()
                    unforce(frame[2])
                    if frame[3] is not None:
                        undo(frame[3], frame[4])
                    continue
                frame[1] = i + 1
                move = moves[i]
                utok = apply(move)
                nodes += 1
                if max_nodes is not None and nodes > max_nodes:
                    raise OutOfBudget
                if deadline is not None and not nodes % _CHECK_EVERY:
                    if time.perf_counter() > deadline:
                        raise OutOfBudget
                ftok = forced()
                if goal():
                    return True
                k = key()
                if k in seen:
                    unforce(ftok)
                    undo(move, utok)
                    continue
                seen.add(k)
                stack.append([gen(), 0, ftok, move, utok])
            return False
        finally:
            budget.nodes = nodes
            self.positions = len(seen)

    def run_best_first(self, budget: Budget) -> bool:
        """Like ``run`` but expands the position of lowest ``priority()`` first (a
        best-first search over the same graph: just as complete, usually much faster to a
        win when a greedy plunge gets stuck, but it keeps every open position in memory as a
        ``snapshot()``)."""
        seen: set[Any] = set()
        apply = self.apply
        undo = self.undo
        forced = self.forced
        unforce = self.unforce
        goal = self.goal
        key = self.key
        gen = self.moves
        priority = self.priority
        snapshot = self.snapshot
        max_nodes = budget.max_nodes
        deadline = budget.deadline
        nodes = budget.nodes
        self.positions = 0
        forced()
        if goal():
            return True
        seen.add(key())
        # tree of positions: (parent, the primitive actions from the parent, depth)
        tree: list[tuple[int, tuple[Any, ...], int]] = [(-1, tuple(self.trail), 0)]
        heap: list[tuple[Any, int, Any]] = [(priority(0), 0, snapshot())]
        try:
            while heap:
                _, node, snap = heapq.heappop(heap)
                node = -node
                self.restore(snap)
                self.trail = []
                depth = tree[node][2]
                for move in gen():
                    utok = apply(move)
                    nodes += 1
                    if max_nodes is not None and nodes > max_nodes:
                        raise OutOfBudget
                    if deadline is not None and not nodes % _CHECK_EVERY:
                        if time.perf_counter() > deadline:
                            raise OutOfBudget
                    ftok = forced()
                    if goal():
                        path = list(self.trail)
                        while node >= 0:
                            parent, segment, _ = tree[node]
                            path[:0] = segment
                            node = parent
                        self.trail = path
                        return True
                    k = key()
                    if k not in seen:
                        seen.add(k)
                        child = len(tree)
                        segment = tuple(self.trail)
                        tree.append((node, segment, depth + len(segment)))
                        heapq.heappush(
                            heap, (priority(depth + len(segment)), -child, snapshot())
                        )
                    unforce(ftok)
                    undo(move, utok)
            return False
        finally:
            budget.nodes = nodes
            self.positions = len(seen)
