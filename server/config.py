"""The server's settings, and its clock."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Config", "now", "now_ms", "set_clock_offset"]

_offset = 0.0


def now() -> float:
    """The server clock: seconds since the epoch."""
    return time.time() + _offset


def now_ms() -> int:
    """The server clock: ms since the epoch."""
    return int((time.time() + _offset) * 1000)


def set_clock_offset(seconds: float) -> None:
    """Move the server clock of this process by ``seconds`` (it goes on at the real pace):
    a test's way to be just before a day's end. 0 puts it back."""
    global _offset
    _offset = seconds


@dataclass(slots=True)
class Config:
    """Server settings; every duration in seconds. ``samedeal serve --help`` gives the
    same defaults."""

    host: str = "127.0.0.1"
    port: int = 8765
    max_frame: int = 16 * 1024
    #: message credits per connection: ``rate`` a second, at most ``burst`` saved up
    rate: float = 20.0
    burst: int = 40
    #: messages over the credits before a connection is closed (1008)
    max_strikes: int = 40
    #: frames that are not messages before a connection is closed (1008)
    max_bad_messages: int = 20
    hello_timeout: float = 10.0
    countdown: float = 3.0
    #: how long the players have to answer a rematch the host offers
    rematch_wait: float = 20.0
    #: how long a disconnected player keeps the seat
    grace: float = 30.0
    public_url: str | None = None
    reuse_port: bool = False
    #: a worker's heartbeat period; a worker silent this long counts as dead
    liveness: float = 10.0
    #: bytes waiting to be written to one connection before it is closed as too slow
    max_backlog: int = 1 << 20
    # permessage-deflate costs CPU per connection and defeats sending one encoded frame to
    # many connections; messages are small, so it is off unless asked for
    compression: bool = False
    # a racing player's ``progress`` goes out at most this often (seconds; the latest state,
    # the first after a quiet spell at once); a status change always goes out at once
    progress_interval: float = 0.2
    # ``GET /api/rooms/<CODE>`` (an invitation's room summary) per client address: this
    # many a second, at most ``room_info_burst`` at once (each reads the store)
    room_info_rate: float = 1.0
    room_info_burst: int = 20
    #: connections one client address may hold on this worker (an IPv6 address counts
    #: by its /64): a household, or a school behind one NAT, with a tab or two each
    max_per_address: int = 1000
    #: networks (CIDR) of the proxies whose word on the client's address is believed
    #: (a PROXY protocol header, X-Forwarded-For); from others it is ignored
    trusted_proxies: tuple[str, ...] = ()
    #: ``identify`` attempts per client address: this many a second, ``identify_burst``
    #: at once (every connection of a known player identifies once, right after hello)
    identify_rate: float = 10.0
    identify_burst: int = 300
    #: ``recover`` attempts per client address: this many a second (one a minute),
    #: ``recover_burst`` at once — a recovery code is a secret, not to be guessed at speed
    recover_rate: float = 1 / 60
    recover_burst: int = 10
    # a directory of files served over HTTP on the websocket port (``samedeal serve``
    # gives the browser client's); None serves none
    static_dir: Path | None = None
    #: the records store (players, finished races): a database URL (``sqlite:///…``,
    #: ``postgresql://…``); None keeps no records (no identities, no history)
    records_url: str | None = None
    #: days casual races are kept in the records (results of dailies and tournaments and
    #: identities are kept)
    retention_days: float = 90.0
    #: identities one client address may create per ``identity_window`` seconds
    identity_limit: int = 10
    identity_window: float = 3600.0
    #: seconds a finished race's record may wait for its writer before any worker writes
    #: it again (its worker died, or the database was away)
    records_retry_after: float = 60.0
    #: finished races a worker holds in memory while the records database cannot take
    #: them; more wait in the backend only (written by whichever worker finds them due)
    records_queue: int = 2000
    #: the secret key of the daily challenge's deals (32 bytes); None: the one kept in the
    #: records database (or, without records, one made by this process)
    daily_key: bytes | None = None
    #: prove each day's deals when the day begins (``samedeal serve``), not when first asked
    daily_warm: bool = False
    #: a tournament's timers are run by the worker holding its lease, taken for this long
    #: and renewed three times as often: a worker that dies is replaced within this time
    tournament_lease: float = 2.0
    #: seconds from a round's start to its first move (every participant's countdown)
    tournament_countdown: float = 5.0
    #: fill the pool of proven deals (winnable-only rooms, quick play) of every game from
    #: the start (``samedeal serve``), not when a game is first asked for
    pools_warm: bool = False
    #: proven deals kept ready per game, dealt to nobody yet (server.proving)
    proven_deals: int = 4
    #: the solver process's resident bytes past which it is replaced after a job, and the
    #: data it may hold during a search for the pool (None: ``prover_rss``)
    prover_rss: int = 150 << 20
    prover_memory: int | None = None
    #: the solver's node budget per candidate deal of a winnable-only round, and how many
    #: candidates it tries (None: the defaults of ``engine.fair``); fixed at creation
    tournament_nodes: int | None = None
    tournament_candidates: int | None = None
