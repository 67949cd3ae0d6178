"""Where the pools' deals come from: sealed deals (docs/fair-deals.md: nobody can know one
before it is dealt) that the solver has proven winnable, each dealt to no player twice.

:class:`DealSource` is what the pools ask — "a proven sealed deal of GAME not yet dealt to
these players" — so a server-wide pool of proven deals (issue 34) can take the place of
:class:`ProvenBuffer`, this worker's own buffer: a few proven deals per game, kept full by
the solver in a process of its own (off the event loop), as the day's deal and a
tournament's winnable rounds are proven.

**Never twice.** A deal may start several races at once (every room of a pool may share
one), but each buffered deal keeps whom it was dealt to and is never dealt to them again.
That is enough: a sealed deal is drawn from 16 random bytes, so no other worker ever holds
the same deal, and a deal that leaves the buffer is never dealt again. The memory is
bounded: a deal leaves the buffer once dealt to :attr:`ProvenBuffer.max_uses` players, or
:attr:`ProvenBuffer.lifetime` after it was proven (a deal raced for half an hour is no
longer news to anyone).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Protocol

from ..tasks import Tasks, solver_pool, stop_pool

__all__ = ["DealSource", "NoDeal", "ProvenBuffer", "prove"]

logger = logging.getLogger("samedeal.server")


class NoDeal(LookupError):
    """No proven deal new to the players could be had in time (the solver is failing, or
    far behind)."""


class DealSource(Protocol):
    """Proven sealed deals for the pools."""

    def warm(self, games: Sequence[str]) -> None:
        """Start proving deals of ``games`` now, before anyone asks."""
        ...

    async def deal_for(self, game: str, players: Sequence[str]) -> str:
        """A proven winnable sealed deal of ``game`` dealt to none of ``players`` (their
        pool keys) before; dealt to them from now on. Raises :class:`NoDeal`."""
        ...

    def deal_again(self, deal: str, players: Sequence[str], *, dry_run: bool = False) -> bool:
        """Deal ``deal`` (one this source dealt) to ``players`` too, if it is still dealt
        and none of them had it (``dry_run``: only say whether it could be)."""
        ...

    def close(self) -> None:
        """Stop proving."""
        ...


def prove(game: str, nodes: int) -> str:
    """A sealed deal of ``game`` the solver proves winnable within ``nodes`` (run in the
    solver's process)."""
    from engine.daily import random_winnable

    code, _ = random_winnable(game, nodes=nodes)
    return str(code)


@dataclass(slots=True)
class _Proven:
    """A buffered deal: when it was proven (monotonic s) and whom it was dealt to."""

    code: str
    proven_at: float
    dealt_to: set[str] = field(default_factory=set)


class ProvenBuffer:
    """:class:`DealSource` of one worker: per game asked for (or warmed), ``size`` proven
    deals kept ready by the solver in a process of low priority (proving ahead of need
    yields the CPU to the event loop); a deal leaves once dealt to ``max_uses`` players or
    ``lifetime`` seconds after it was proven. ``tasks`` runs the filler;
    ``on_proven`` is told the game of each deal proven."""

    def __init__(
        self,
        tasks: Tasks,
        *,
        size: int = 4,
        max_uses: int = 1000,
        lifetime: float = 1800.0,
        nodes: int = 100_000,
        wait: float = 60.0,
        executor: Callable[[], ProcessPoolExecutor] = lambda: solver_pool(nice=10),
        on_proven: Callable[[str], None] | None = None,
    ) -> None:
        self.size = size
        self.max_uses = max_uses
        self.lifetime = lifetime
        self.nodes = nodes
        #: seconds ``deal_for`` waits for a deal before giving up
        self.wait = wait
        self._tasks = tasks
        self._executor = executor
        self._on_proven = on_proven
        self._pool: ProcessPoolExecutor | None = None
        self._deals: dict[str, list[_Proven]] = {}
        self._by_code: dict[str, _Proven] = {}
        self._wanted: list[str] = []
        self._more = asyncio.Event()  # set: the filler should look again
        self._proven = asyncio.Event()  # set (and cleared) each time a deal is proven
        self._filler: asyncio.Task[None] | None = None
        #: deals proven so far (a metric)
        self.proven = 0

    # ------------------------------------------------------------------ asking

    def warm(self, games: Sequence[str]) -> None:
        """Fill the buffers of ``games`` from now on."""
        for game in games:
            self._want(game)

    def ready(self, game: str) -> int:
        """How many deals of ``game`` are buffered (and still dealt)."""
        return len(self._fresh(game))

    async def deal_for(self, game: str, players: Sequence[str]) -> str:
        """The buffered deal of ``game`` dealt to the most players already that none of
        ``players`` had (so fewer deals are alive at once); waits for the solver when there
        is none."""
        self._want(game)
        deadline = time.monotonic() + self.wait
        while True:
            for proven in sorted(self._fresh(game), key=lambda p: -len(p.dealt_to)):
                if proven.dealt_to.isdisjoint(players):
                    self._deal(proven, players)
                    return proven.code
            # every buffered deal went to one of them: another one is needed
            self._more.set()
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoDeal(f"no proven {game} deal new to these players now")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._proven.wait(), left)

    def deal_again(self, deal: str, players: Sequence[str], *, dry_run: bool = False) -> bool:
        """Deal a buffered deal to ``players`` too, if none of them had it."""
        proven = self._by_code.get(deal)
        if proven is None or not self._alive(proven) or not proven.dealt_to.isdisjoint(players):
            return False
        if not dry_run:
            self._deal(proven, players)
        return True

    def _deal(self, proven: _Proven, players: Sequence[str]) -> None:
        proven.dealt_to.update(players)
        if len(proven.dealt_to) >= self.max_uses:
            self._retire(proven)

    # ------------------------------------------------------------------ the buffer

    def _want(self, game: str) -> None:
        if game not in self._wanted:
            self._wanted.append(game)
        if len(self._fresh(game)) < self.size:
            self._more.set()
        if self._filler is None or self._filler.done():
            self._filler = self._tasks.spawn(self._fill(), "proven deals")

    def _alive(self, proven: _Proven) -> bool:
        return (
            len(proven.dealt_to) < self.max_uses
            and time.monotonic() - proven.proven_at < self.lifetime
        )

    def _fresh(self, game: str) -> list[_Proven]:
        """The game's deals still dealt (the others leave the buffer now)."""
        deals = self._deals.get(game, [])
        for proven in [p for p in deals if not self._alive(p)]:
            self._retire(proven)
        return self._deals.get(game, [])

    def _retire(self, proven: _Proven) -> None:
        for deals in self._deals.values():
            if proven in deals:
                deals.remove(proven)
        self._by_code.pop(proven.code, None)
        self._more.set()

    def _short(self) -> str | None:
        """The wanted game with the fewest deals buffered, if one has fewer than ``size``."""
        counts = [(len(self._fresh(g)), g) for g in self._wanted]
        low = min(counts, default=None)
        return low[1] if low is not None and low[0] < self.size else None

    async def _fill(self) -> None:
        """Prove deals of the wanted games until each has ``size``, then wait to be told a
        deal left; in the solver's process, one at a time."""
        loop = asyncio.get_running_loop()
        while True:
            game = self._short()
            if game is None:
                self._more.clear()
                await self._more.wait()
                continue
            if self._pool is None:
                self._pool = self._executor()
            try:
                code = await loop.run_in_executor(self._pool, prove, game, self.nodes)
            except asyncio.CancelledError:
                raise
            except BrokenProcessPool:
                logger.warning("the deal prover's process died: starting another")
                self._pool = None
                continue
            except Exception:
                logger.warning("no %s deal proven this time", game, exc_info=True)
                await asyncio.sleep(1.0)
                continue
            proven = _Proven(code, time.monotonic())
            self._deals.setdefault(game, []).append(proven)
            self._by_code[code] = proven
            self.proven += 1
            if self._on_proven is not None:
                self._on_proven(game)
            self._proven.set()
            self._proven.clear()

    def close(self) -> None:
        """Stop the filler and the solver's process."""
        if self._filler is not None:
            self._filler.cancel()
        if self._pool is not None:
            stop_pool(self._pool)
            self._pool = None
