"""``samedeal db upgrade`` and ``samedeal db status``: the records database's migrations.

The database is the SQLite file ``samedeal.db`` in ``--data DIR`` (``./samedeal-data`` by
default) or the PostgreSQL database of ``--database URL`` — the same options as
``samedeal serve``. Exit status: 0 done (``status``: up to date), 1 ``status`` of a database
that needs ``upgrade``, 2 a bad option value or a database that cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

__all__ = ["add_database_options", "register", "unreachable"]


def add_database_options(parser: argparse.ArgumentParser) -> None:
    """``--data DIR`` and ``--database URL`` (also for ``samedeal serve``)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--data",
        metavar="DIR",
        help="directory of the SQLite database samedeal.db (default ./samedeal-data)",
    )
    where.add_argument(
        "--database", metavar="URL", help="a database URL instead: postgresql://USER@HOST/DB"
    )


def register(sub: Any) -> None:
    """Add ``db`` and its subcommands to the subcommand parser."""
    db = sub.add_parser("db", help="the records database: migrations")
    verbs = db.add_subparsers(dest="db_command", required=True, metavar="COMMAND")
    up = verbs.add_parser("upgrade", help="apply the migrations the database lacks")
    add_database_options(up)
    up.set_defaults(run=run_upgrade)
    status = verbs.add_parser("status", help="show the database's revision and the newest one")
    add_database_options(status)
    status.set_defaults(run=run_status)


def _fail(message: str) -> int:
    print(f"samedeal db: {message}", file=sys.stderr)
    return 2


def _url(args: argparse.Namespace) -> str | None:
    from server.records.db import database_url
    from server.records.models import BadDatabase

    try:
        return database_url(data=args.data, database=args.database)
    except BadDatabase as exc:
        _fail(str(exc))
        return None


def unreachable(exc: BaseException) -> str:
    """A database error in one line, without the driver's traceback or the URL's password."""
    text = str(getattr(exc, "orig", None) or exc).strip().splitlines()
    return f"cannot use the database: {text[0] if text else type(exc).__name__}"


def run_upgrade(args: argparse.Namespace) -> int:
    """Bring the database to the newest revision."""
    from server.records.db import safe_url
    from server.records.migrate import status, upgrade
    from server.records.models import RecordsError

    url = _url(args)
    if url is None:
        return 2
    try:
        asyncio.run(upgrade(url))
        now = asyncio.run(status(url))
    except RecordsError as exc:
        return _fail(str(exc))
    except Exception as exc:  # driver errors have no common base
        return _fail(unreachable(exc))
    print(f"{safe_url(url)}: at revision {now.current} (head)")
    return 0


def run_status(args: argparse.Namespace) -> int:
    """Print the current and the head revision."""
    from server.records.db import safe_url
    from server.records.migrate import status
    from server.records.models import RecordsError

    url = _url(args)
    if url is None:
        return 2
    try:
        now = asyncio.run(status(url))
    except RecordsError as exc:
        return _fail(str(exc))
    except Exception as exc:  # driver errors have no common base
        return _fail(unreachable(exc))
    state = "up to date" if now.up_to_date else "needs `samedeal db upgrade`"
    print(f"{safe_url(url)}\ncurrent revision: {now.current or 'none (empty)'}")
    print(f"head revision:    {now.head}\n{state}")
    return 0 if now.up_to_date else 1
