"""Counters for ``GET /metrics`` (Prometheus text exposition format)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

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
    #: moves refused because the store could not be reached (certainly not stored)
    moves_unstored_total: int = 0
    #: moves whose storing could not be confirmed (the connection was closed: resume)
    moves_unknown_total: int = 0
    errors_total: int = 0
    abuse_closes_total: int = 0
    #: connections closed (1013) because they did not read what they were sent
    slow_closes_total: int = 0
    #: TCP connections open (websockets, HTTP requests, handshakes), and how many the
    #: worker takes before only addresses holding few may use its reserve
    tcp_connections: int = 0
    connection_capacity: int = 0
    #: connections refused: their address held as many as it may (429)
    address_refusals_total: int = 0
    #: connections dropped to keep descriptors for others (the reserve, or none left)
    reserve_refusals_total: int = 0
    #: identify and recover requests refused: their address tried too often
    attempt_refusals_total: int = 0
    #: connections subscribed to the live directory
    live_subscribers: int = 0
    store_rtt_seconds: float = 0.0
    #: 1 while the store can be reached, 0 while it cannot
    store_up: int = 1
    #: finished races kept for the records store and not yet confirmed written
    records_pending: int = 0
    #: of them, those this worker's records writer holds in memory (at most records_queue)
    records_queued: int = 0
    #: 1 while the records database can be reached, 0 while it cannot
    records_up: int = 1
    #: tournaments whose timers this worker runs (it holds their lease)
    tournaments_driven: int = 0
    #: connections of this worker seeking a race in a quick-play pool
    pool_seekers: int = 0
    #: rooms this worker's pairings filled from the pools
    pool_rooms_total: int = 0
    #: rooms a pairing made and could not fill (a seeker left, or another worker took one
    #: first): left unused to expire
    pool_rooms_unused_total: int = 0
    #: the solver process's resident bytes after its last job (server.proving), and the
    #: times it was replaced (grown past its bound, out of memory, or died)
    prover_rss_bytes: int = 0
    prover_restarts_total: int = 0
    #: samples labelled by game: name -> game -> value (the pool of proven deals:
    #: proven_deals_ready, proven_deals_total, proven_deals_given_up_total)
    per_game: dict[str, dict[str, int]] = field(default_factory=dict)

    def render(self, worker: str) -> str:
        """The exposition text; every sample labelled with the worker id."""
        kinds = {
            "connections": "gauge",
            "tcp_connections": "gauge",
            "connection_capacity": "gauge",
            "rooms": "gauge",
            "live_subscribers": "gauge",
            "store_rtt_seconds": "gauge",
            "store_up": "gauge",
            "records_pending": "gauge",
            "records_queued": "gauge",
            "records_up": "gauge",
            "tournaments_driven": "gauge",
            "pool_seekers": "gauge",
            "prover_rss_bytes": "gauge",
            "proven_deals_ready": "gauge",
        }
        lines = []
        label = worker.replace("\\", "\\\\").replace('"', '\\"')
        for f in fields(self):
            if f.name == "per_game":
                continue
            name = f"samedeal_{f.name}"
            lines.append(f"# TYPE {name} {kinds.get(f.name, 'counter')}")
            lines.append(f'{name}{{worker="{label}"}} {getattr(self, f.name)}')
        for short, values in sorted(self.per_game.items()):
            name = f"samedeal_{short}"
            lines.append(f"# TYPE {name} {kinds.get(short, 'counter')}")
            for game, value in sorted(values.items()):
                lines.append(f'{name}{{worker="{label}",game="{game}"}} {value}')
        return "\n".join(lines) + "\n"
