"""Counters for ``GET /metrics`` (Prometheus text exposition format)."""

from __future__ import annotations

from dataclasses import dataclass, fields

__all__ = ["Metrics"]


@dataclass(slots=True)
class Metrics:
    """One worker's counters and gauges."""

    connections: int = 0
    connections_total: int = 0
    rooms: int = 0
    rooms_created_total: int = 0
    messages_total: int = 0
    moves_accepted_total: int = 0
    moves_rejected_total: int = 0
    errors_total: int = 0
    abuse_closes_total: int = 0
    store_rtt_seconds: float = 0.0

    def render(self, worker: str) -> str:
        """The exposition text; every sample labelled with the worker id."""
        kinds = {"connections": "gauge", "rooms": "gauge", "store_rtt_seconds": "gauge"}
        lines = []
        label = worker.replace("\\", "\\\\").replace('"', '\\"')
        for f in fields(self):
            name = f"samedeal_{f.name}"
            lines.append(f"# TYPE {name} {kinds.get(f.name, 'counter')}")
            lines.append(f'{name}{{worker="{label}"}} {getattr(self, f.name)}')
        return "\n".join(lines) + "\n"
