"""Proven deals: the worker's one solver process for proving deals ahead of need
(:mod:`.process`: niced, memory-bounded) and its pool of proven sealed deals per game
(:mod:`.deals`), which winnable-only rooms and quick play both take from.

:class:`Proving` builds both from the settings and shows them on ``/metrics``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..config import Config
from ..metrics import Metrics
from ..tasks import Tasks
from .deals import ProvenDeals
from .process import Prover

__all__ = ["Proving"]


class Proving:
    """A worker's prover and pool of proven deals, wired to its metrics."""

    def __init__(self, config: Config, metrics: Metrics, tasks: Tasks) -> None:
        self.metrics = metrics
        self.prover = Prover(rss_limit=config.prover_rss, memory=config.prover_memory)
        self.deals = ProvenDeals(tasks, self.prover, size=config.proven_deals)
        self.prover.on_change = self.deals.on_change = self._show

    def warm(self, games: Sequence[str]) -> None:
        """Fill the pools of ``games`` from now on."""
        self.deals.warm(games)

    def _show(self) -> None:
        """The prover's and the pool's figures into the metrics."""
        metrics = self.metrics
        metrics.prover_rss_bytes = self.prover.rss
        metrics.prover_restarts_total = self.prover.restarts
        per_game = metrics.per_game
        for game, counts in self.deals.counts.items():
            per_game.setdefault("proven_deals_ready", {})[game] = counts.ready
            per_game.setdefault("proven_deals_total", {})[game] = counts.proven
            per_game.setdefault("proven_deals_given_up_total", {})[game] = counts.given_up

    def close(self) -> None:
        """Stop the filler and the solver's process."""
        self.deals.close()
