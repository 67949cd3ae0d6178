"""The worker's pool of proven sealed deals, one per game, kept full ahead of need: the deals
of winnable-only rooms and of quick play (docs/architecture.md, "Proven deals").

A candidate is a sealed deal (fair-deals.md: 16 random bytes, so no other worker ever draws
the same one) that the solver tries to prove winnable within ``nodes`` (a winnable
tournament round's budget, per game); one candidate is one job of the :class:`~.process.Prover`,
so a job someone waits for never waits long behind the filler. The filler proves candidates
of the games asked for (or warmed) until each game has ``size`` deals dealt to nobody yet —
the pool's *ready* deals.

**Who takes what.** A winnable-only room takes a ready deal whole (:meth:`ProvenDeals.take`):
its players are whoever joins by the code later, so it leaves the pool and is dealt to
nobody else. With none ready, the room's deal is proven on demand, as urgent jobs: up to
``tries`` candidates, then the room is refused (``no_winnable_deal``). Quick play
(:meth:`ProvenDeals.deal_for`, the :class:`~server.quickplay.deals.DealSource` the pools
ask) shares a deal between its races: each deal keeps whom it was dealt to and is never dealt
to them again; it leaves the pool once dealt to ``max_uses`` players or ``lifetime`` seconds
after it was first dealt (a deal raced for half an hour is no longer news to anyone; one
dealt to nobody stays ready however long), and a deal that left is never dealt again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field

from engine.fair import TOURNAMENT_CANDIDATES, TOURNAMENT_NODES

from ..tasks import Tasks
from .process import Prover

__all__ = ["NoDeal", "NoWinnableDeal", "ProvenDeals", "prove_candidate"]

logger = logging.getLogger("samedeal.server")


FILL_PAUSE = 10.0
"""Seconds the filler rests after a game's candidates failed as many times in a row as an
on-demand proof tries (a budget that proves nothing must not keep a core busy)."""


class NoDeal(LookupError):
    """No proven deal new to the players could be had in time (the solver is failing, or
    far behind)."""


class NoWinnableDeal(LookupError):
    """No candidate was proven winnable within the budget (``tries`` of ``nodes`` each)."""


def prove_candidate(game: str, nodes: int) -> str | None:
    """In the solver's process: a new sealed deal of ``game``, its code if the solver proves
    it winnable within ``nodes`` (the solver replays its winning line before it says so),
    else None."""
    from engine import DealCode
    from engine.solver import solve

    code = DealCode.random(game)
    return str(code) if solve(code, nodes=nodes).verdict == "winnable" else None


@dataclass(slots=True, eq=False)
class _Proven:
    """A deal in the pool: its game, whom it was dealt to and when first (monotonic s)."""

    code: str
    game: str
    dealt_to: set[str] = field(default_factory=set)
    dealt_at: float | None = None


@dataclass(slots=True)
class GameCounts:
    """What /metrics shows of one game's pool."""

    ready: int = 0
    proven: int = 0
    given_up: int = 0


class ProvenDeals:
    """The pool (one per worker) over ``prover``. ``size``: ready deals kept per game
    (``--proven-deals``, default 4: a burst of four winnable rooms starts at once while the
    filler proves the next);
    ``nodes``/``tries``: the budget per candidate and the candidates an on-demand proof tries
    (None: a winnable tournament round's, per game); ``max_uses``, ``lifetime``: when a
    shared deal leaves; ``wait``: how long quick play waits for a deal before giving up.
    ``on_change`` is told whenever the counts change."""

    def __init__(
        self,
        tasks: Tasks,
        prover: Prover,
        *,
        size: int,
        nodes: int | None = None,
        tries: int | None = None,
        max_uses: int = 1000,
        lifetime: float = 1800.0,
        wait: float = 60.0,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.size = size
        self.nodes, self.tries = nodes, tries
        self.max_uses = max_uses
        self.lifetime = lifetime
        self.wait = wait
        self.prover = prover
        self.on_change = on_change
        #: per game: ready deals, deals proven, candidates given up
        self.counts: dict[str, GameCounts] = {}
        self._tasks = tasks
        self._deals: dict[str, list[_Proven]] = {}
        self._by_code: dict[str, _Proven] = {}
        self._wanted: list[str] = []
        #: per game, quick play's requests waiting for a deal new to their players
        self._waiting: dict[str, int] = {}
        self._more = asyncio.Event()  # set: the filler should look again
        self._proven = asyncio.Event()  # set (and cleared) each time a deal is proven
        self._filler: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ asking

    def warm(self, games: Sequence[str]) -> None:
        """Keep the pools of ``games`` full from now on."""
        for game in games:
            self._want(game)

    def ready(self, game: str) -> int:
        """How many deals of ``game`` are in the pool and dealt to nobody yet."""
        return sum(1 for p in self._fresh(game) if not p.dealt_to)

    async def take(self, game: str) -> str:
        """A proven deal of ``game`` for a winnable-only room, out of the pool for good: a
        ready one at once, else proven now (urgent jobs, up to ``tries`` candidates, a ready
        deal taken should the filler prove one first). Raises :class:`NoWinnableDeal`."""
        self._want(game)
        tries = self.tries or TOURNAMENT_CANDIDATES[game]
        for _ in range(tries):
            ready = next((p for p in self._fresh(game) if not p.dealt_to), None)
            if ready is not None:
                self._retire(ready)
                return ready.code
            code = await self._candidate(game, urgent=True)
            if code is not None:
                return code
        raise NoWinnableDeal(f"no {game} deal proven winnable in {tries} tries")

    async def deal_for(self, game: str, players: Sequence[str]) -> str:
        """The pool's deal of ``game`` dealt to the most players already that none of
        ``players`` had (so fewer deals are alive at once); waits for the filler when there
        is none. Raises :class:`NoDeal` after ``wait`` seconds."""
        self._want(game)
        deadline = time.monotonic() + self.wait
        while True:
            for proven in sorted(self._fresh(game), key=lambda p: -len(p.dealt_to)):
                if proven.dealt_to.isdisjoint(players):
                    self._deal(proven, players)
                    return proven.code
            # every deal in the pool went to one of them: another one is needed (proven
            # even past ``size``, which may be 0)
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoDeal(f"no proven {game} deal new to these players now")
            self._waiting[game] = self._waiting.get(game, 0) + 1
            self._more.set()
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._proven.wait(), left)
            finally:
                self._waiting[game] -= 1

    def deal_again(self, deal: str, players: Sequence[str], *, dry_run: bool = False) -> bool:
        """Deal a deal of the pool to ``players`` too, if none of them had it."""
        proven = self._by_code.get(deal)
        if proven is None or not self._alive(proven) or not proven.dealt_to.isdisjoint(players):
            return False
        if not dry_run:
            self._deal(proven, players)
        return True

    def _deal(self, proven: _Proven, players: Sequence[str]) -> None:
        first = not proven.dealt_to
        proven.dealt_to.update(players)
        if proven.dealt_at is None and proven.dealt_to:
            proven.dealt_at = time.monotonic()
        if len(proven.dealt_to) >= self.max_uses:
            self._retire(proven)
        elif first:
            self._changed(proven.game)

    # ------------------------------------------------------------------ the pool

    def _want(self, game: str) -> None:
        if game not in self._wanted:
            self._wanted.append(game)
            self._changed(game)
        if self.ready(game) < self.size:
            self._more.set()
        if self._filler is None or self._filler.done():
            self._filler = self._tasks.spawn(self._fill(), "proven deals")

    def _alive(self, proven: _Proven) -> bool:
        return len(proven.dealt_to) < self.max_uses and (
            proven.dealt_at is None or time.monotonic() - proven.dealt_at < self.lifetime
        )

    def _fresh(self, game: str) -> list[_Proven]:
        """The game's deals still dealt (the others leave the pool now)."""
        deals = self._deals.get(game, [])
        for proven in [p for p in deals if not self._alive(p)]:
            self._retire(proven)
        return self._deals.get(game, [])

    def _retire(self, proven: _Proven) -> None:
        deals = self._deals.get(proven.game, [])
        if proven in deals:
            deals.remove(proven)
        self._by_code.pop(proven.code, None)
        self._more.set()
        self._changed(proven.game)

    def _short(self) -> str | None:
        """A game quick play waits for, else the wanted game with the fewest ready deals if
        it has fewer than ``size``."""
        waited = next((g for g, n in self._waiting.items() if n > 0), None)
        if waited is not None:
            return waited
        counts = [(self.ready(g), g) for g in self._wanted]
        low = min(counts, default=None)
        return low[1] if low is not None and low[0] < self.size else None

    def _changed(self, game: str) -> None:
        counts = self.counts.setdefault(game, GameCounts())
        counts.ready = sum(1 for p in self._deals.get(game, []) if not p.dealt_to)
        if self.on_change is not None:
            self.on_change()

    async def _candidate(self, game: str, *, urgent: bool) -> str | None:
        """One candidate of ``game`` tried in the prover: its code if proven, else None (a
        candidate given up, or the process failed: it was replaced)."""
        nodes = self.nodes or TOURNAMENT_NODES[game]
        counts = self.counts.setdefault(game, GameCounts())
        try:
            code = await self.prover.run(prove_candidate, game, nodes, urgent=urgent)
        except (MemoryError, BrokenProcessPool):
            code = None  # the prover says why, and starts another process
        if code is None:
            counts.given_up += 1
        else:
            counts.proven += 1
        self._changed(game)
        return code

    async def _fill(self) -> None:
        """Prove candidates of the wanted games until each has ``size`` ready deals, then
        wait to be told one left; one candidate at a time, behind any urgent job."""
        misses: dict[str, int] = {}
        while True:
            game = self._short()
            if game is None:
                self._more.clear()
                await self._more.wait()
                continue
            try:
                code = await self._candidate(game, urgent=False)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("no %s deal proven this time", game, exc_info=True)
                await asyncio.sleep(1.0)
                continue
            if code is None:
                misses[game] = misses.get(game, 0) + 1
                if misses[game] % (self.tries or TOURNAMENT_CANDIDATES[game]) == 0:
                    # as many misses in a row as an on-demand proof tries: far rarer than
                    # once in 10^12 with the default budget, so the solver is failing
                    logger.warning("no %s deal proven in %s candidates", game, misses[game])
                    await asyncio.sleep(FILL_PAUSE)
                continue
            misses[game] = 0
            proven = _Proven(code, game)
            self._deals.setdefault(game, []).append(proven)
            self._by_code[code] = proven
            self._changed(game)
            self._proven.set()
            self._proven.clear()

    def close(self) -> None:
        """Stop the filler and the prover's process."""
        if self._filler is not None:
            self._filler.cancel()
        self.prover.close()
