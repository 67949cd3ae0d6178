"""``samedeal serve``: run the race server.

One worker with an in-memory store by default; ``--redis URL --workers N`` runs N worker
processes on the same port (SO_REUSEPORT) sharing rooms through Redis — one Redis
(``redis://``) or a Redis Cluster (``redis+cluster://HOST:PORT[,HOST:PORT…]``).
``--durability`` says what Redis must confirm before a move is acknowledged.

With ``--workers N`` this process supervises: it starts the workers, and when one dies
(a crash, the OOM killer, a ``kill -9``) it logs it and starts another in its place — at
once the first time, then after a back-off that doubles while replacements keep dying
young (0.5 s up to 30 s) — while the others go on serving, so the port never closes.
A worker that cannot start in the first place (a bad option, Redis unreachable) stops
them all, with its status. SIGTERM or SIGINT is passed to every worker, which drain.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

__all__ = ["WEB_DIR", "JsonFormatter", "register"]

WEB_DIR = Path(__file__).resolve().parent / "web"
"""The browser client's files, served by ``samedeal serve`` on the websocket port."""


def _number(kind: type[float] | type[int], low: float, high: float | None = None) -> Any:
    """An argparse type: a number of ``kind`` in [low, high]."""

    def parse(text: str) -> float | int:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value != value or value < low or (high is not None and value > high):
            bound = f"from {low:g} to {high:g}" if high is not None else f"at least {low:g}"
            raise argparse.ArgumentTypeError(f"{text} is out of range ({bound})")
        return value

    return parse


def _redis_url(text: str) -> str:
    from server.store.redis.shards import check_redis_url

    try:
        check_redis_url(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _network(text: str) -> str:
    """An argparse type: a network in CIDR notation (an address alone is its /32 or /128)."""
    import ipaddress

    try:
        return str(ipaddress.ip_network(text.strip(), strict=False))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an address or network: {text!r}") from None


def _daily_key(path: str) -> bytes:
    """The key in a --daily-key-file; raises ``ValueError`` with a message for people."""
    try:
        text = Path(path).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--daily-key-file: cannot read {path}: {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise ValueError(f"--daily-key-file: {path} does not hold 64 hex digits (32 bytes)")
    return key


def register(sub: Any) -> None:
    """Add ``serve`` to the subcommand parser."""
    p = sub.add_parser("serve", help="run the race server")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    p.add_argument(
        "--port", type=_number(int, 0, 65535), default=8765, help="port (8765; 0: a free one)"
    )
    p.add_argument(
        "--redis",
        metavar="URL",
        type=_redis_url,
        help="share rooms through Redis at URL (redis://HOST:PORT/DB, or a Redis Cluster: "
        "redis+cluster://HOST:PORT[,HOST:PORT...])",
    )
    p.add_argument(
        "--durability",
        choices=("memory", "aof", "replica"),
        help="acknowledge a move once Redis has it in memory, on disk (appendfsync always), "
        "or on a replica (memory on one Redis, replica on a cluster)",
    )
    p.add_argument(
        "--workers", type=_number(int, 1, 256), default=1, help="worker processes (needs --redis)"
    )
    p.add_argument(
        "--countdown",
        type=_number(float, 0, 60),
        default=3.0,
        help="seconds from start to the first move (3)",
    )
    p.add_argument(
        "--grace",
        type=_number(float, 0),
        default=30.0,
        help="seconds a disconnected player keeps the seat; then resigned, or the seat freed "
        "in the lobby (30)",
    )
    p.add_argument(
        "--active-ttl",
        type=_number(float, 1),
        default=6 * 3600,
        help="seconds an idle room is kept (21600)",
    )
    p.add_argument(
        "--finished-ttl",
        type=_number(float, 1),
        default=3600,
        help="seconds a room is kept after its race ended (3600)",
    )
    p.add_argument(
        "--rate",
        type=_number(float, 0.1),
        default=20.0,
        help="messages per second per connection (20)",
    )
    p.add_argument(
        "--burst", type=_number(int, 1), default=40, help="message burst per connection (40)"
    )
    p.add_argument(
        "--max-per-address",
        type=_number(int, 1),
        default=1000,
        help="connections one client address (an IPv6 /64) may hold on a worker: a "
        "household, or a school behind one NAT (1000); more are refused with HTTP 429",
    )
    p.add_argument(
        "--trusted-proxy",
        metavar="CIDR",
        type=_network,
        nargs="+",
        action="extend",
        default=[],
        help="proxies (addresses or networks) whose word on the client's address is "
        "believed: a PROXY protocol header or X-Forwarded-For (deploy/nginx.conf sends it); "
        "every per-address limit then counts the client, not the proxy",
    )
    p.add_argument(
        "--liveness",
        type=_number(float, 0.5),
        default=10.0,
        help="seconds without a beat after which a worker is taken for dead and its "
        "players' seats count as disconnected (10; with --redis)",
    )
    from clients.cmd_db import add_database_options

    add_database_options(p)
    p.add_argument(
        "--no-records",
        action="store_true",
        help="keep no records: no identities, no history (rooms and races work as ever)",
    )
    p.add_argument(
        "--retention-days",
        type=_number(float, 1),
        default=90.0,
        help="days casual races are kept in the records (90; results and identities stay)",
    )
    p.add_argument(
        "--identity-limit",
        type=_number(int, 1),
        default=10,
        help="identities one client address may create an hour (10)",
    )
    p.add_argument(
        "--daily-key-file",
        metavar="FILE",
        help="the daily challenge's secret key: a file holding 64 hex digits (default: one "
        "kept in the records database, the same for every worker and host using it)",
    )
    p.add_argument(
        "--tournament-lease",
        type=_number(float, 0.3, 60),
        default=2.0,
        help="seconds a worker holds a tournament's timers without renewing them; when it "
        "dies, another takes over within this time (2)",
    )
    p.add_argument(
        "--tournament-countdown",
        type=_number(float, 0, 60),
        default=5.0,
        help="seconds from a tournament round's start to its first move (5)",
    )
    p.add_argument(
        "--no-daily-warm",
        action="store_true",
        help="prove a day's deals of the day when first asked, not ahead (a solver process "
        "works a few seconds at start and at each day's end otherwise)",
    )
    p.add_argument(
        "--pools-warm",
        action="store_true",
        help="fill the pool of proven deals (winnable-only rooms, quick play) of every game "
        "at start, not when a game is first asked for (the solver process works some seconds "
        "per game)",
    )
    p.add_argument(
        "--proven-deals",
        type=_number(int, 0, 1000),
        default=4,
        help="proven deals kept ready per game, dealt to nobody yet (4)",
    )
    p.add_argument(
        "--prover-rss",
        type=_number(int, 50, 100_000),
        default=150,
        help="MB of resident memory past which the solver process proving deals is replaced "
        "after a search, and the data a search for the pool may hold before it fails (150)",
    )
    # tests: move the server clock (seconds), e.g. to just before a day's end
    p.add_argument("--clock-offset", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--compression", action="store_true", help="offer permessage-deflate to clients")
    p.add_argument("--public-url", help="base of join links (http://HOST:PORT)")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR")
    p.add_argument("--log-format", choices=("text", "json"), default="text")
    p.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
    # the supervisor's: the descriptor a worker writes to once it listens
    p.add_argument("--ready-fd", type=int, help=argparse.SUPPRESS)
    p.set_defaults(run=run_serve)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and ``key=value`` pairs of the
    message as fields (``room``, ``seat``, ``conn`` …)."""

    def format(self, record: logging.LogRecord) -> str:
        """Encode ``record`` as one JSON line."""
        message = record.getMessage()
        entry: dict[str, Any] = {
            "time": round(record.created, 3),
            "level": record.levelname,
            "logger": record.name,
            "pid": record.process,
            "message": message,
        }
        for word in message.split():
            key, sep, value = word.partition("=")
            if sep and key.isidentifier() and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def _setup_logging(args: argparse.Namespace) -> None:
    handler = logging.StreamHandler(sys.stderr)
    if args.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter("%(asctime)s %(levelname)s %(name)s pid=%(process)d %(message)s")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(args.log_level.upper())
    logging.getLogger("samedeal.ws").setLevel(logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)


def _records_url(args: argparse.Namespace) -> str | None:
    """The records database's URL (None: --no-records); raises ``BadDatabase``."""
    if args.no_records:
        return None
    from server.records.db import database_url

    return database_url(data=args.data, database=args.database)


def run_serve(args: argparse.Namespace) -> int:
    """Run one worker here, or supervise ``--workers`` worker processes."""
    from server.records.models import BadDatabase

    try:
        args.records_url = _records_url(args)
        args.daily_key = _daily_key(args.daily_key_file) if args.daily_key_file else None
    except (BadDatabase, ValueError) as exc:
        print(f"samedeal serve: {exc}", file=sys.stderr)
        return 2
    if args.workers < 1:
        print("samedeal serve: --workers must be at least 1", file=sys.stderr)
        return 2
    if args.workers > 1 and not args.redis:
        print(
            "samedeal serve: several workers share rooms through Redis: "
            "give --redis URL (or use --workers 1)",
            file=sys.stderr,
        )
        return 2
    if args.durability and not args.redis:
        print("samedeal serve: --durability needs --redis URL", file=sys.stderr)
        return 2
    if args.workers > 1 and args.port == 0:
        print("samedeal serve: --workers needs a fixed --port", file=sys.stderr)
        return 2
    if not args.reuse_port:  # a worker of a supervisor: the supervisor said it
        print(f"samedeal serve: play at {page_url(args)} (open it in a browser)", flush=True)
    if args.workers > 1:
        return _supervise(args)
    _setup_logging(args)
    return _serve_one(args)


def page_url(args: argparse.Namespace) -> str:
    """The address a person opens to play: ``--public-url``, else this host and port (one
    that listens on every address is reached at localhost here)."""
    if args.public_url:
        return str(args.public_url).rstrip("/") + "/"
    host = "localhost" if args.host in ("", "0.0.0.0", "::") else args.host
    if ":" in host:
        host = f"[{host}]"  # an IPv6 address in a URL
    return f"http://{host}:{args.port}/"


def _serve_one(args: argparse.Namespace) -> int:
    # a SIGTERM while starting up is a clean stop too (the event loop takes over below)
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    from server.app import Config, run
    from server.collector import Collector
    from server.store import Store, open_store

    worker_id = f"{socket.gethostname()}:{os.getpid()}"
    config = Config(
        host=args.host,
        port=args.port,
        countdown=args.countdown,
        grace=args.grace,
        rate=args.rate,
        liveness=args.liveness,
        compression=args.compression,
        burst=args.burst,
        max_per_address=args.max_per_address,
        trusted_proxies=tuple(args.trusted_proxy),
        public_url=args.public_url,
        reuse_port=args.reuse_port,
        static_dir=WEB_DIR,
        records_url=args.records_url,
        retention_days=args.retention_days,
        identity_limit=args.identity_limit,
        daily_key=args.daily_key,
        daily_warm=not args.no_daily_warm,
        pools_warm=args.pools_warm,
        proven_deals=args.proven_deals,
        prover_rss=args.prover_rss << 20,
        tournament_lease=args.tournament_lease,
        tournament_countdown=args.tournament_countdown,
    )
    if args.clock_offset:
        from server.config import set_clock_offset

        set_clock_offset(args.clock_offset)
    if args.records_url is not None and args.workers == 1 and not args.reuse_port:
        from server.records.db import safe_url

        print(f"samedeal serve: records in {safe_url(args.records_url)}", file=sys.stderr)

    def store() -> Store:
        return open_store(
            args.redis,
            worker_id=worker_id,
            active_ttl=args.active_ttl,
            finished_ttl=args.finished_ttl,
            durability=args.durability,
        )

    from server.records.models import RecordsUnavailable
    from server.store.errors import StoreUnavailable

    def ready() -> None:
        if args.ready_fd is not None:
            os.write(args.ready_fd, b"1")
            os.close(args.ready_fd)

    collector = Collector()
    collector.install()
    try:
        try:
            import uvloop
        except ImportError:
            asyncio.run(run(store, config, collector, on_ready=ready))
        else:
            uvloop.run(run(store, config, collector, on_ready=ready))
    except StoreUnavailable as exc:
        print(f"samedeal serve: cannot start: {exc}", file=sys.stderr)
        return 1
    except RecordsUnavailable as exc:
        return _no_records_database(args.records_url, exc)
    except OSError as exc:  # the port is taken, the address is not ours …
        print(f"samedeal serve: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        from server.records.models import RecordsError

        if not isinstance(exc, RecordsError) and "sqlalchemy" not in type(exc).__module__:
            raise
        print(f"samedeal serve: cannot use the records database: {exc}", file=sys.stderr)
        return 1
    return 0


def _no_records_database(url: str, exc: Any) -> int:
    """Say that the records database cannot be reached at start (one line), exit 1."""
    from server.records.db import safe_url

    print(
        f"samedeal serve: cannot reach the records database {safe_url(url)}: {exc.reason}",
        file=sys.stderr,
    )
    return 1


def _supervise(args: argparse.Namespace) -> int:
    """Start the workers, forward SIGTERM/SIGINT to them, wait for them all."""
    argv = [sys.executable, "-m", "clients.cli", "serve", "--workers", "1", "--reuse-port"]
    flags = (
        "host",
        "port",
        "redis",
        "countdown",
        "grace",
        "rate",
        "burst",
        "max_per_address",
        "liveness",
        "active_ttl",
        "finished_ttl",
        "tournament_lease",
        "tournament_countdown",
        "proven_deals",
        "prover_rss",
    )
    for flag in flags:
        argv += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    argv += ["--retention-days", str(args.retention_days)]
    if args.trusted_proxy:
        argv += ["--trusted-proxy", *args.trusted_proxy]
    if args.daily_key_file is not None:
        argv += ["--daily-key-file", args.daily_key_file]
    if args.clock_offset:
        argv += ["--clock-offset", str(args.clock_offset)]
    if args.no_daily_warm:
        argv.append("--no-daily-warm")
    if args.pools_warm:
        argv.append("--pools-warm")
    argv += ["--identity-limit", str(args.identity_limit)]
    if args.records_url is None:
        argv.append("--no-records")
    else:
        # migrated once here, so the workers do not race each other to it
        from server.records.db import safe_url
        from server.records.migrate import upgrade
        from server.records.models import RecordsUnavailable

        try:
            asyncio.run(upgrade(args.records_url))
        except RecordsUnavailable as exc:
            return _no_records_database(args.records_url, exc)
        print(f"samedeal serve: records in {safe_url(args.records_url)}", file=sys.stderr)
        argv += ["--database", args.records_url]
    argv += ["--log-level", args.log_level, "--log-format", args.log_format]
    if args.public_url:
        argv += ["--public-url", args.public_url]
    if args.durability:
        argv += ["--durability", args.durability]
    if args.compression:
        argv.append("--compression")
    return _Supervisor(argv, args.workers).run()


RESTART_MAX = 30.0
"""Seconds at most between two replacements of a worker that keeps dying young."""
YOUNG = 30.0
"""A worker that dies within this many seconds of its start died young: the next
replacement waits longer."""
STOP_WAIT = 30.0
"""Seconds the workers have to drain after SIGTERM before they are killed."""


def restart_delay(young_deaths: int) -> float:
    """Seconds before a worker's replacement starts, after ``young_deaths`` deaths in a row
    of workers in its place that died young: none after a worker that lived (a crash is
    news, not a loop), then 0.5 s, doubling up to :data:`RESTART_MAX`."""
    if young_deaths <= 0:
        return 0.0
    return min(RESTART_MAX, 0.5 * 2.0 ** (young_deaths - 1))


def _how(exit_code: int) -> str:
    if exit_code < 0:
        try:
            return f"killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            return f"killed by signal {-exit_code}"
    return f"exit status {exit_code}"


@dataclass(slots=True)
class _Slot:
    """A worker's place: its process, the read end of its ready pipe, and its history."""

    proc: subprocess.Popen[bytes] | None = None
    ready_fd: int | None = None
    ready: bool = False
    started: float = 0.0
    young_deaths: int = 0
    restart_at: float | None = None


class _Supervisor:
    """Runs ``count`` workers (``argv``) and keeps them running (see the module)."""

    def __init__(self, argv: list[str], count: int) -> None:
        self.argv = argv
        self.slots = [_Slot() for _ in range(count)]
        self.stopping = False
        #: every first worker started: a worker that dies from now on is replaced
        self.serving = False

    def _say(self, text: str) -> None:
        print(f"samedeal serve: {text}", file=sys.stderr, flush=True)

    def _start(self, slot: _Slot) -> None:
        read_fd, write_fd = os.pipe()
        try:
            slot.proc = subprocess.Popen(
                [*self.argv, "--ready-fd", str(write_fd)], pass_fds=(write_fd,)
            )
        finally:
            os.close(write_fd)
        slot.ready_fd, slot.ready, slot.started, slot.restart_at = (
            read_fd,
            False,
            time.monotonic(),
            None,
        )

    def _stop(self, signum: int, frame: object) -> None:
        self.stopping = True
        for slot in self.slots:
            slot.restart_at = None
            if slot.proc is not None and slot.proc.poll() is None:
                slot.proc.send_signal(signal.SIGTERM)

    def _watch_ready(self, timeout: float) -> None:
        """Wait up to ``timeout`` for a worker to say it listens (or for its pipe to close)."""
        fds = [s.ready_fd for s in self.slots if s.ready_fd is not None]
        if not fds:
            time.sleep(timeout)
            return
        try:
            readable, _, _ = select.select(fds, [], [], timeout)
        except InterruptedError:
            return
        for slot in self.slots:
            if slot.ready_fd in readable:
                said = os.read(slot.ready_fd, 1)
                os.close(slot.ready_fd)
                slot.ready_fd = None
                slot.ready = said == b"1"
                if slot.ready and self.serving and slot.proc is not None:
                    self._say(f"worker pid={slot.proc.pid} serving")

    def _reap(self, slot: _Slot, *, starting: bool) -> int | None:
        """A dead worker's status, its place set to be taken again (None: it runs)."""
        assert slot.proc is not None
        exit_code = slot.proc.poll()
        if exit_code is None:
            return None
        if slot.ready_fd is not None:
            os.close(slot.ready_fd)
            slot.ready_fd = None
        if self.stopping or starting:
            return exit_code
        pid, lived = slot.proc.pid, time.monotonic() - slot.started
        slot.proc = None
        slot.young_deaths = slot.young_deaths + 1 if lived < YOUNG else 0
        delay = restart_delay(slot.young_deaths)
        slot.restart_at = time.monotonic() + delay
        self._say(
            f"worker pid={pid} exited ({_how(exit_code)}) after {lived:.1f} s; "
            f"starting another in {delay:g} s, the others serve meanwhile"
        )
        return exit_code

    def run(self) -> int:
        """Start the workers, keep them running until SIGTERM/SIGINT, then drain them all;
        the exit status."""
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        for slot in self.slots:
            self._start(slot)
        # the first workers must start: one that cannot (its own line said why) stops all
        while not self.stopping and not all(slot.ready for slot in self.slots):
            self._watch_ready(0.2)
            for slot in self.slots:
                exit_code = self._reap(slot, starting=True)
                if exit_code is not None and not slot.ready:
                    self._stop(signal.SIGTERM, None)
                    self._wait_all()
                    return abs(exit_code) or 1
        if not self.stopping:
            pids = " ".join(str(slot.proc.pid) for slot in self.slots if slot.proc is not None)
            self._say(f"{len(self.slots)} workers serving (pids {pids})")
            self.serving = True
        while not self.stopping:
            self._watch_ready(0.2)
            now = time.monotonic()
            for slot in self.slots:
                if slot.proc is not None:
                    self._reap(slot, starting=False)
                elif slot.restart_at is not None and now >= slot.restart_at and not self.stopping:
                    self._start(slot)
        return self._wait_all()

    def _wait_all(self) -> int:
        """Wait for every worker to end (killed after :data:`STOP_WAIT`); the exit status:
        0 when each stopped cleanly on our SIGTERM."""
        deadline = time.monotonic() + STOP_WAIT
        codes = []
        for slot in self.slots:
            if slot.proc is None:
                continue
            try:
                exit_code = slot.proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self._say(f"worker pid={slot.proc.pid} did not drain in time: killed")
                slot.proc.kill()
                exit_code = slot.proc.wait()
            codes.append(0 if exit_code == -signal.SIGTERM else abs(exit_code))
            if slot.ready_fd is not None:
                os.close(slot.ready_fd)
                slot.ready_fd = None
        return max(codes, default=0)
