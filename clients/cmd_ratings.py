"""``samedeal ratings rebuild``: every rating computed again from the rated races kept.

The ratings and their changes are written with each rated race; this command replays the
rated races in the order they were rated (docs/ratings.md) and stores what it computes
instead, the same numbers when nothing was lost or changed by hand — it says how many
standings differed. ``--dry-run`` only compares. The database is the one of ``samedeal db``
(``--data DIR`` or ``--database URL``) and must be up to date. Exit status: 0 done (with
``--dry-run``: nothing differed), 1 ``--dry-run`` found differences, 2 a bad option value
or a database that cannot be used.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from .cmd_db import add_database_options, unreachable

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``ratings`` and its subcommand to the subcommand parser."""
    ratings = sub.add_parser("ratings", help="the players' ratings: rebuild them from the races")
    verbs = ratings.add_subparsers(dest="ratings_command", required=True, metavar="COMMAND")
    rebuild = verbs.add_parser(
        "rebuild", help="compute every rating again from the rated races and store it"
    )
    add_database_options(rebuild)
    rebuild.add_argument(
        "--dry-run", action="store_true", help="compare with the stored ratings, store nothing"
    )
    rebuild.set_defaults(run=run_rebuild)


def _fail(message: str) -> int:
    print(f"samedeal ratings: {message}", file=sys.stderr)
    return 2


async def _rebuild(url: str, write: bool) -> Any:
    from server.records.migrate import status
    from server.records.models import BadDatabase
    from server.records.store import SqlRecordsStore

    if not (await status(url)).up_to_date:
        raise BadDatabase("the database needs `samedeal db upgrade` first")
    store = await SqlRecordsStore.open(url, migrate=False, pool_size=1)
    try:
        return await store.ratings.rebuild(write=write)
    finally:
        await store.close()


def run_rebuild(args: argparse.Namespace) -> int:
    """Rebuild (or, with ``--dry-run``, check) the ratings."""
    from server.records.db import database_url, safe_url
    from server.records.models import RecordsError

    try:
        url = database_url(data=args.data, database=args.database)
        report = asyncio.run(_rebuild(url, write=not args.dry_run))
    except RecordsError as exc:
        return _fail(str(exc))
    except Exception as exc:  # driver errors have no common base
        return _fail(unreachable(exc))
    verb = "would differ" if args.dry_run else "differed and were replaced"
    print(
        f"{safe_url(url)}: {report.races} rated races, {report.standings} ratings; "
        f"{report.differing} {verb}"
    )
    return 1 if args.dry_run and report.differing else 0
