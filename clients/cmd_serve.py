"""``samedeal serve``: run the race server.

One worker with an in-memory store by default; ``--redis URL --workers N`` runs N worker
processes on the same port (SO_REUSEPORT) sharing rooms through Redis — one Redis
(``redis://``) or a Redis Cluster (``redis+cluster://HOST:PORT[,HOST:PORT…]``).
``--durability`` says what Redis must confirm before a move is acknowledged.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
import subprocess
import sys
import time
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
    # tests: move the server clock (seconds), e.g. to just before a day's end
    p.add_argument("--clock-offset", type=float, default=0.0, help=argparse.SUPPRESS)
    p.add_argument("--compression", action="store_true", help="offer permessage-deflate to clients")
    p.add_argument("--public-url", help="base of join links (http://HOST:PORT)")
    p.add_argument("--log-level", default="INFO", help="DEBUG, INFO, WARNING, ERROR")
    p.add_argument("--log-format", choices=("text", "json"), default="text")
    p.add_argument("--reuse-port", action="store_true", help=argparse.SUPPRESS)
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
        public_url=args.public_url,
        reuse_port=args.reuse_port,
        static_dir=WEB_DIR,
        records_url=args.records_url,
        retention_days=args.retention_days,
        identity_limit=args.identity_limit,
        daily_key=args.daily_key,
        daily_warm=not args.no_daily_warm,
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

    from server.store.errors import StoreUnavailable

    collector = Collector()
    collector.install()
    try:
        try:
            import uvloop
        except ImportError:
            asyncio.run(run(store, config, collector))
        else:
            uvloop.run(run(store, config, collector))
    except StoreUnavailable as exc:
        print(f"samedeal serve: cannot start: {exc}", file=sys.stderr)
        return 1
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
        "liveness",
        "active_ttl",
        "finished_ttl",
        "tournament_lease",
        "tournament_countdown",
    )
    for flag in flags:
        argv += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    argv += ["--retention-days", str(args.retention_days)]
    if args.daily_key_file is not None:
        argv += ["--daily-key-file", args.daily_key_file]
    if args.clock_offset:
        argv += ["--clock-offset", str(args.clock_offset)]
    if args.no_daily_warm:
        argv.append("--no-daily-warm")
    argv += ["--identity-limit", str(args.identity_limit)]
    if args.records_url is None:
        argv.append("--no-records")
    else:
        # migrated once here, so the workers do not race each other to it
        from server.records.db import safe_url
        from server.records.migrate import upgrade

        asyncio.run(upgrade(args.records_url))
        print(f"samedeal serve: records in {safe_url(args.records_url)}", file=sys.stderr)
        argv += ["--database", args.records_url]
    argv += ["--log-level", args.log_level, "--log-format", args.log_format]
    if args.public_url:
        argv += ["--public-url", args.public_url]
    if args.durability:
        argv += ["--durability", args.durability]
    if args.compression:
        argv.append("--compression")
    children = [subprocess.Popen(argv) for _ in range(args.workers)]
    stopping = False

    def forward(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    while any(child.poll() is None for child in children):
        time.sleep(0.2)
        if not stopping and any(child.poll() is not None for child in children):
            print("samedeal serve: a worker exited; stopping the others", file=sys.stderr)
            forward(signal.SIGTERM, None)
    # a worker stopped by the SIGTERM we forwarded has stopped cleanly
    codes = [int(child.returncode or 0) for child in children]
    return max(0 if (stopping and c == -signal.SIGTERM) else abs(c) for c in codes)
