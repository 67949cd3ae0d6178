"""Pieces shared by the solvers: card tables, the budget, the search driver and the result.

Nothing here knows a game's rules; :mod:`._klondike` and :mod:`._harp` hold those.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Generator
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
    "Shared",
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
#: ``"restart"`` mode: the node cap of the first dive (a module setting, not a class one, so
#: that tests can lower it in the compiled build too, whose classes cannot be patched)
RESTART_NODES = 5_000
#: called with each best-first position a depth-first search takes over (``Shared.take``)
#: when set, for the tests
TAKE_WATCH: Callable[[int], None] | None = None


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


class Shared:
    """A transposition set shared by the searches of a portfolio (see :func:`drive`), with
    the positions a best-first search has admitted but not expanded yet, so that a
    depth-first search that meets one can expand it itself (``steal``; the best-first
    search then skips it), or, having nothing new left, can take over the best of them and
    dive from there (``take``)."""

    __slots__ = ("expanded", "heaps", "opened", "seen", "tree")

    def __init__(self) -> None:
        self.seen: Any = None
        #: best-first: admitted position -> its node; ``expanded[node]`` once expanded
        self.opened: dict[Any, int] = {}
        self.expanded = bytearray()
        #: best-first: its open positions (heaps of ``(priority, node, snapshot)``) and its
        #: tree of positions (see ``Search._best_first``)
        self.heaps: list[list[tuple[Any, int, Any]]] = []
        self.tree: list[tuple[int, tuple[Any, ...], int]] = []

    def steal(self, key: Any) -> bool:
        """Take over the position ``key`` if a best-first search admitted it and has not
        expanded it yet: it is marked expanded there, and the caller expands it."""
        node = self.opened.pop(key, -1)
        if node < 0 or self.expanded[node]:
            return False
        self.expanded[node] = 1
        return True

    def take(self) -> tuple[Any, int] | None:
        """Take over the best open position of the best-first search (by its first order):
        it is marked expanded there, and its snapshot and node returned; None if it has no
        open position."""
        expanded = self.expanded
        for heap in self.heaps:
            while heap:
                _, node, snap = heapq.heappop(heap)
                if not expanded[node]:
                    expanded[node] = 1
                    watch = TAKE_WATCH
                    if watch is not None:
                        watch(node)
                    return snap, node
        return None


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

    def pruned(self, key: Any) -> bool:
        """True if the current position (keyed ``key``), just admitted, is provably lost:
        the best-first search then does not queue it. The default knows of no such test."""
        return False

    #: how the search runs: ``"best"`` best-first, ``"depth"`` depth-first (see ``search``)
    mode: str = "best"
    #: the node count past which the search pauses (``yield``s) for ``drive``
    limit: int = 0
    #: nodes generated so far (up to date whenever the search pauses or ends)
    nodes: int = 0
    #: a search of part of the graph only (which part is the game's choice: see
    #: ``KlondikeSearch.forced`` and ``moves``), which finds wins but proves nothing when it
    #: runs dry
    streamline: bool = False
    #: ``"restart"`` mode: every ``streamline_every``-th dive is streamlined (0: none)
    streamline_every: int = 0

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
        shared = self.shared
        if shared is None:
            self.seen = self.new_seen()
        else:
            if shared.seen is None:
                shared.seen = self.new_seen()
            self.seen = shared.seen
        self.positions = 0
        self.entered = None
        self.nodes = 0
        self.forced()
        if self.goal():
            return True
        self.admit(self.key())
        try:
            if self.mode == "depth":
                return (yield from self._dives())
            if self.mode == "restart":
                return (yield from self._restarts())
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
        pruned = self.pruned
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
        shared = self.shared
        opened: dict[Any, int] | None = None
        if shared is not None:
            shared.expanded = expanded
            shared.heaps = heaps
            shared.tree = tree
            opened = shared.opened
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
                        segment = tuple(self.trail)
                        # (a position that is lost already is stored, never queued)
                        self.entered = segment
                        if pruned(k):
                            unforce(ftok)
                            undo(move, utok)
                            continue
                        child = len(tree)
                        if opened is not None:
                            opened[k] = child
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

    def _dives(self) -> Generator[None, None, bool]:
        """Depth-first from the start; then, when the search shares its transposition set
        with a best-first search, from each open position of that search in turn (taken
        over, see ``Shared.take``) until one leads to a goal or none is left. Positions are
        still admitted once and expanded once between the two, and depth-first nodes are
        cheaper, which speeds up the proofs of lost deals."""
        found = yield from self._dive()
        shared = self.shared
        while not found and shared is not None:
            taken = shared.take()
            if taken is None:
                return False
            snap, node = taken
            self.restore(snap)
            self.trail = []
            parent, segment, _ = shared.tree[node]
            self.entered = segment if parent >= 0 else None
            found = yield from self._dive()
            if found:
                self.trail[:0] = self._path(shared.tree, node)
        return bool(found)

    def _dive(self, stop: int | None = None) -> Generator[None, None, bool | None]:
        """Expand the current (admitted) position and everything new below it, depth first;
        True with ``trail`` extended by the way to a goal, False when nothing is new; None
        (every move taken back) when the node count passes ``stop``."""
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
        steal = None if self.shared is None else self.shared.steal
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
                if stop is not None and nodes > stop:
                    undo(move, utok)
                    while len(stack) > 1:
                        _, move, utok, ftok = stack.pop()
                        unforce(ftok)
                        undo(move, utok)
                    return None
                ftok = forced()
                if goal():
                    return True
                k = key()
                if admit(k) or (steal is not None and steal(k)):
                    self.entered = tuple(trail[mark:])
                    stack.append((iter(gen()), move, utok, ftok))
                    continue
                unforce(ftok)
                undo(move, utok)
            return False
        finally:
            self.nodes = nodes

    #: the transposition set shared with the other searches of a portfolio, or None
    shared: Shared | None = None

    #: ``"restart"`` mode: the factor by which each dive's node cap grows (the first's is
    #: ``RESTART_NODES``)
    restart_growth: float = 1.2
    #: ``"restart"`` mode: the dive number (from 1; 0 in the other modes), which a game uses
    #: to vary its move order from one dive to the next
    dive: int = 0

    def _restarts(self) -> Generator[None, None, bool]:
        """Depth-first dives from the start, each with a fresh transposition set, a node
        cap that grows from dive to dive, and (through ``dive``) its own move order: a
        portfolio member that only looks for wins (a dive that ends below its cap has
        exhausted the graph, which proves the position lost as well as any search)."""
        root_key = self.key()
        cap = float(RESTART_NODES)
        # (dive 0 would repeat the plain depth-first order)
        self.dive = 1
        every = self.streamline_every
        while True:
            self.seen = self.new_seen()
            self.admit(root_key)
            self.entered = None
            mark = len(self.trail)
            stop = self.nodes + int(cap)
            partial = self.streamline = bool(every) and self.dive % every == 0
            found = yield from self._dive(stop)
            if found or (found is not None and not partial):
                return found
            if found is not None:
                # a streamlined dive that runs dry proves nothing, but it has seen the whole
                # streamlined graph: only complete dives from now on
                every = 0
            del self.trail[mark:]
            self.dive += 1
            cap *= self.restart_growth

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


def drive(
    searches: list[tuple[Search, int, int, int | None]], budget: Budget
) -> tuple[Search, bool]:
    """Run several searches of one position in turns, each ``(search, share, start, stop)``
    getting ``share`` slices of nodes per round once ``start`` nodes have been spent in all,
    until ``stop`` nodes have been spent in all (None: no end). A search with a transposition
    set of its own is complete on its own, so the first to finish decides: a goal reached,
    or its search space exhausted (the position is lost). Searches that share one
    (``Search.shared``) have each expanded their own part when they run out, and the
    position is lost when all of them have. Returns the search that decided and whether it
    reached a goal. Raises :class:`OutOfBudget` when the budget is spent (or no search is
    left to run); the node count (``budget.nodes``) is exact, so a node budget gives a
    deterministic answer."""
    max_nodes = budget.max_nodes
    deadline = budget.deadline
    runs = [(s, s.search(), share, start, stop) for s, share, start, stop in searches]
    sharing = {i for i, (s, *_) in enumerate(runs) if s.shared is not None}
    total = 0
    done: set[int] = set()
    try:
        while True:
            ran = False
            for index, (s, steps, share, start, stop) in enumerate(runs):
                if index in done or (total < start and not done):
                    continue
                if stop is not None and total >= stop:
                    continue
                ran = True
                room = share * _CHECK_EVERY
                if max_nodes is not None:
                    room = min(room, max_nodes - total)
                before = s.nodes
                s.limit = before + room
                try:
                    next(steps)
                except StopIteration as result:
                    total += s.nodes - before
                    if not result.value and s.streamline:
                        # a search of part of the graph (looking for wins only) ran dry
                        done.add(index)
                        continue
                    if result.value or index not in sharing:
                        return s, bool(result.value)
                    # a search that shares its transposition set has expanded only its own
                    # part of the graph: the position is lost when every one has finished
                    done.add(index)
                    if done >= sharing:
                        return s, False
                    continue
                total += s.nodes - before
                if max_nodes is not None and total > max_nodes:
                    raise OutOfBudget
                if deadline is not None and time.perf_counter() > deadline:
                    raise OutOfBudget
            if not ran:
                raise OutOfBudget
    finally:
        budget.nodes = total
        for run in runs:
            run[1].close()


class ColumnSearch(Search):
    """A search over columns of cards (bottom → top, ``down[i]`` face down at the bottom),
    each keyed by its bytes in ``ck`` so that a position's key sorts them (the symmetry of
    columns): lifting cards off a column (turning the card they uncover) and dropping them
    on one, and the way back, each re-keying the column it changed."""

    cols: list[list[int]]
    down: list[int]
    ndown: int
    ck: list[bytes]

    #: the keys the last changes replaced, for the way back (``_unlift``, ``_undrop``)
    _old_keys: list[bytes]
    #: the column whose new top alone ``forced`` needs to look at, set by a move that left
    #: the foundations alone (-1: look at everything)
    _fresh: int

    #: restart dives: how far a random term may move a move up the order
    JITTER = 400
    _rng: random.Random | None = None
    _rng_dive = 0

    def _shuffled(self, scored: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """A restart dive's order (see ``Search._restarts``): the scored moves with a random
        term of the dive's own fixed seed added, which shuffles them but keeps the broad
        preferences (uncovering a card first, ...)."""
        rng = self._rng
        if rng is None or self._rng_dive != self.dive:
            rng = self._rng = random.Random(self.dive)
            self._rng_dive = self.dive
        jitter = self.JITTER
        return [(score + rng.randrange(jitter), m) for score, m in scored]

    def _key_columns(self) -> None:
        """Key every column (a new search)."""
        self.ck = [b""] * len(self.cols)
        for i in range(len(self.cols)):
            self._rekey(i)
        self._old_keys = []
        self._fresh = -1

    def _fresh_top(self) -> int | None:
        """For ``forced``, after a move: None if every card must be looked at; else the one
        card that can have become safe (-1: none). A move that left the foundations alone and
        gave only one column a new top can make only that top safe, as every other safe card
        was played before it — except from the start of a search, which a streamlined
        restart dive takes as it is, forced by the other rule."""
        x = self._fresh
        self._fresh = -1
        if x < 0 or self.entered is None:
            return None
        col = self.cols[x]
        return col[-1] if col else -1

    def _first_empty(self) -> int:
        """The first empty column, or -1."""
        for y, col in enumerate(self.cols):
            if not col:
                return y
        return -1

    def _rekey(self, i: int) -> None:
        self.ck[i] = bytes((self.down[i], *self.cols[i], 255))

    def _columns_snapshot(self) -> bytes:
        """The columns for ``_restore_columns``."""
        return b"".join(self.ck)

    def _restore_columns(self, joined: bytes) -> None:
        parts = joined.split(b"\xff")[:-1]
        self.ck = [part + b"\xff" for part in parts]
        self.cols = [list(part[1:]) for part in parts]
        self.down = [part[0] for part in parts]
        self.ndown = sum(self.down)
        self._old_keys = []
        self._fresh = -1

    def _lift(self, x: int, count: int) -> tuple[list[int], bool]:
        col = self.cols[x]
        cards = col[-count:]
        del col[-count:]
        flipped = bool(col) and self.down[x] == len(col)
        if flipped:
            self.down[x] -= 1
            self.ndown -= 1
        self._old_keys.append(self.ck[x])
        self._rekey(x)
        return cards, flipped

    def _unlift(self, x: int, cards: list[int], flipped: bool) -> None:
        if flipped:
            self.down[x] += 1
            self.ndown += 1
        self.cols[x].extend(cards)
        self.ck[x] = self._old_keys.pop()

    def _drop(self, y: int, cards: list[int]) -> None:
        self.cols[y].extend(cards)
        self._old_keys.append(self.ck[y])
        self._rekey(y)

    def _undrop(self, y: int, count: int) -> None:
        del self.cols[y][-count:]
        self.ck[y] = self._old_keys.pop()
