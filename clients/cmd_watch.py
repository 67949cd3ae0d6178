"""``samedeal watch``: the live races of a server, to pick one and watch it.

``URL`` is the server (``http://host:8765``, ``ws://host:8765``, or any room link of it).
The list is the server's live directory, kept live (the ``live`` subscription): Enter
watches the race under the cursor in the terminal client (``samedeal spectate``), ``o``
changes the order. ``--list`` prints the list once and exits, for scripts.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

from .i18n import LANGUAGES

__all__ = ["register"]

SORTS = ("closest", "watched", "newest")
GAMES = ("easy-harp", "klondike", "klondike-3")


def register(sub: Any) -> None:
    """Add ``watch`` to the subcommand parser."""
    watch = sub.add_parser("watch", help="pick a live race of a server and watch it")
    watch.add_argument("url", metavar="URL", help="the server (http://host:port or ws://host:port)")
    watch.add_argument(
        "--sort", choices=SORTS, default="closest", help="the order (default: closest race)"
    )
    watch.add_argument("--game", choices=GAMES, help="races of this game only")
    watch.add_argument("--list", action="store_true", help="print the races once and exit")
    watch.add_argument(
        "--lang",
        choices=list(LANGUAGES),
        help="the language to speak (default: the terminal's locale, else English)",
    )
    watch.set_defaults(run=run_watch)


def run_watch(args: argparse.Namespace) -> int:
    """List the live races; watch the one picked."""
    from .links import RoomLink, parse_link

    try:
        link = parse_link(args.url)
    except ValueError as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return 2
    if args.list:
        return asyncio.run(_print_list(link.url, args.sort, args.game, args.lang))
    from .tui import RaceApp, WatchApp

    picker = WatchApp(link.url, sort=args.sort, game=args.game, lang=args.lang)
    room = picker.run()
    if room is None:
        return 0
    app = RaceApp(RoomLink(link.url, room), role="spectator", lang=args.lang)
    app.run()
    return app.return_code or 0


async def _print_list(url: str, sort: str, game: str | None, lang: str | None) -> int:
    from rich.console import Console

    from protocol import LiveRooms

    from .client import RaceClient, RequestError
    from .i18n import Catalogue, detect_lang
    from .tui import live_lines

    cat = Catalogue(lang or detect_lang())
    try:
        client = await RaceClient.connect(url)
    except (RequestError, OSError) as exc:
        print(f"samedeal: cannot reach {url}: {exc}", file=sys.stderr)
        return 1
    try:
        await client.live(sort, game, 50)
        rooms = await client.next_event("live_rooms")
    except (RequestError, ConnectionError, TimeoutError) as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return 1
    finally:
        await client.close()
    assert isinstance(rooms, LiveRooms)
    console = Console(highlight=False, soft_wrap=True)
    lines = live_lines(rooms, cat)
    if not lines:
        console.print(cat.t("live.none"))
    for line in lines:
        console.print(line)
    return 0
