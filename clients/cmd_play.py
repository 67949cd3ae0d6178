"""``samedeal play``, ``samedeal spectate`` and ``samedeal bot``: the terminal client and bots.

``URL`` is a room link (``http://host:8765/r/K7QF-2M``) or a server URL
(``ws://host:8765``) with ``--room CODE``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any

import orjson

from .i18n import LANGUAGES
from .links import RoomLink, parse_link

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``play``, ``spectate`` and ``bot`` to the subcommand parser."""
    play = sub.add_parser("play", help="race in a room from the terminal")
    _common(play)
    play.add_argument("--name", default="", help="your name in the room")
    play.add_argument(
        "--create",
        metavar="GAME",
        choices=["easy-harp", "klondike", "klondike-3"],
        help="create a room for GAME instead of joining one (you are its host)",
    )
    play.add_argument(
        "--quick",
        metavar="GAME",
        choices=["easy-harp", "klondike", "klondike-3"],
        help="play now: race whoever seeks GAME on the server (URL: the server's address)",
    )
    play.add_argument(
        "--players", type=int, choices=[2, 4], default=2, help="with --quick: room size (2)"
    )
    play.add_argument(
        "--time-limit",
        type=int,
        choices=[0, 5, 10],
        default=5,
        metavar="MINUTES",
        help="with --quick: 0 (none: casual), 5 or 10 minutes (5)",
    )
    play.add_argument(
        "--casual", action="store_true", help="with --quick: a casual race, even with an identity"
    )
    play.add_argument(
        "--wait",
        type=int,
        default=20,
        metavar="SECONDS",
        help="with --quick: seconds before a bot, a ghost or a smaller room is offered (20)",
    )
    _language(play)
    play.set_defaults(run=run_play)

    watch = sub.add_parser("spectate", help="watch a room's race from the terminal")
    _common(watch)
    _language(watch)
    watch.set_defaults(run=run_spectate)

    bot = sub.add_parser("bot", help="join a room as a bot player and play to the end")
    _common(bot)
    bot.add_argument("--name", default="Bot", help="the bot's name (default: Bot)")
    bot.add_argument(
        "--pace",
        type=float,
        default=4.0,
        metavar="MOVES_PER_S",
        help="actions per second (0: as fast as the server allows; default 4)",
    )
    bot.add_argument(
        "--strength",
        choices=["greedy", "solver"],
        default="greedy",
        help="greedy (plays by sight) or solver (plays a solver's line); default greedy",
    )
    bot.add_argument("--races", type=int, default=1, help="races to play (default 1)")
    bot.add_argument(
        "--ghost",
        metavar="RUN.json",
        help="instead of playing, replay a finished run in real time (a ghost): JSON with "
        "deal, moves, elapsed_ms (and optionally times_ms, name)",
    )
    bot.set_defaults(run=run_bot_command)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("url", metavar="URL", help="a room link, or ws://host:port with --room")
    parser.add_argument("--room", help="the room code (when URL is not a room link)")
    parser.add_argument("--key", help="a private room's key (when URL is not a room link)")


def _language(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang",
        choices=list(LANGUAGES),
        help="the language to speak (default: the terminal's locale, else English; "
        "Ctrl+L switches)",
    )


def _link(args: argparse.Namespace, *, need_room: bool = True) -> RoomLink | None:
    try:
        link = parse_link(args.url, room=args.room, key=args.key)
    except ValueError as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return None
    if need_room and link.room is None:
        print("samedeal: give a room link or --room CODE", file=sys.stderr)
        return None
    return link


def run_play(args: argparse.Namespace) -> int:
    """Open the terminal client as a player (``--quick``: seek a race first)."""
    link = _link(args, need_room=args.create is None and args.quick is None)
    if link is None:
        return 2
    if args.quick is not None and not 5 <= args.wait <= 300:
        print("samedeal: --wait is 5 to 300 seconds", file=sys.stderr)
        return 2
    from .identity import IdentityFile
    from .tui import RaceApp

    app: RaceApp
    if args.quick is not None:
        from .tui_quick import QuickApp

        app = QuickApp(
            link.url,
            args.quick,
            players=args.players,
            time_limit=args.time_limit * 60 or None,
            rated=False if args.casual else None,
            wait=args.wait,
            name=args.name,
            lang=args.lang,
            identity=IdentityFile(link.url),
        )
    else:
        app = RaceApp(
            link,
            role="player",
            name=args.name,
            create=args.create,
            lang=args.lang,
            identity=IdentityFile(link.url),
        )
    app.run()
    if app.new_identity is not None and app.new_identity.recovery_code:
        # shown once by the server: printed again where the terminal keeps it
        print(app.cat.t("tui.new_player", code=app.new_identity.recovery_code))
    return app.return_code or 0


def run_spectate(args: argparse.Namespace) -> int:
    """Open the terminal client as a spectator."""
    link = _link(args)
    if link is None:
        return 2
    from .tui import RaceApp

    app = RaceApp(link, role="spectator", lang=args.lang)
    app.run()
    return app.return_code or 0


def run_bot_command(args: argparse.Namespace) -> int:
    """Run a bot until its races are over; print one line per race."""
    link = _link(args)
    if link is None:
        return 2
    assert link.room is not None
    from .bot import BotResult, run_bot
    from .client import RequestError
    from .ghost import GhostRun, run_ghost

    async def go(room: str) -> list[BotResult]:
        if args.ghost is None:
            return await run_bot(
                link.url,
                room,
                name=args.name,
                key=link.key,
                pace=args.pace,
                strength=args.strength,
                races=args.races,
            )
        with open(args.ghost, "rb") as f:
            run = GhostRun.from_json(orjson.loads(f.read()))
        return [await run_ghost(link.url, room, run, key=link.key)]

    try:
        results = asyncio.run(go(link.room))
    except (RequestError, OSError, ValueError, KeyError) as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return 1
    for r in results:
        deal = r.deal or "(not told)"
        print(f"room {r.room} seat {r.seat} deal {deal}: {r.status} after {len(r.moves)} moves")
    return 0
