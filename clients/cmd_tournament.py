"""``samedeal tournament``: follow and play a tournament, create and host one, export and
verify its results.

    samedeal tournament URL [--join] [--name NAME]     standings and play (terminal client)
    samedeal tournament create SERVER --name NAME [options]      a new tournament: its link
    samedeal tournament host URL ACT [--player ID] [--round N] [--reason TEXT] …
    samedeal tournament export URL                      the full export, as JSON on stdout
    samedeal tournament verify EXPORT.json [--json]     (EXPORT may be - for stdin)

``URL`` is a tournament link (``http://host:8765/t/K7QF-2M``, with ``?key=…`` for a private
one); ``SERVER`` a server's address (``http://host:8765``). The terminal keeps one identity
per server (:mod:`clients.identities`), made on first use: the tournament knows you by it.

``verify`` recomputes the commitment from the revealed seed, every round's deal from its
candidate index (``fair-deals.md``), replays every winning line and every player's moves,
and recomputes the standings. Exit 0: it verifies; 1: it does not (each problem printed);
2: the file cannot be read or is not a tournament export (one line on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import orjson

from .tournament_link import TournamentLink, parse_tournament_link

__all__ = ["normalize_argv", "register"]

ACTIONS = ("create", "host", "export", "verify", "play")
HOST_ACTS = (
    "start",
    "start-round",
    "pause",
    "resume",
    "end",
    "kick",
    "ban",
    "disqualify",
    "restore",
    "announce",
)


def normalize_argv(argv: Sequence[str]) -> list[str]:
    """``samedeal tournament URL …`` is ``samedeal tournament play URL …``."""
    out = list(argv)
    if (
        len(out) >= 2
        and out[0] == "tournament"
        and out[1] not in ACTIONS
        and not out[1].startswith("-")
    ):
        out.insert(1, "play")
    return out


def _duration(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    return value


def register(sub: Any) -> None:
    """Add ``tournament`` and its actions to the subcommand parser."""
    tournament = sub.add_parser(
        "tournament",
        help="follow, play, create, host, export or verify a tournament",
        description="samedeal tournament URL follows and plays a tournament; the actions "
        "below create, host, export and verify one.",
    )
    actions = tournament.add_subparsers(dest="action", required=True, metavar="ACTION")

    play = actions.add_parser("play", help="standings and play (the default: tournament URL)")
    play.add_argument("url", metavar="URL", help="the tournament's link")
    play.add_argument("--join", action="store_true", help="enter as a player")
    play.add_argument("--name", default="", help="your name in the tournament")
    play.add_argument("--key", help="a private tournament's key (when URL has none)")
    from .i18n import LANGUAGES

    play.add_argument("--lang", choices=list(LANGUAGES), help="the language to speak")
    play.set_defaults(run=run_play)

    create = actions.add_parser("create", help="create a tournament you host; prints its link")
    create.add_argument("url", metavar="SERVER", help="the server's address (http://host:port)")
    create.add_argument("--name", required=True, help="the tournament's name")
    create.add_argument(
        "--game", choices=["klondike", "klondike-3", "easy-harp"], default="klondike"
    )
    create.add_argument("--rounds", type=_duration, default=3, help="1-20 (3)")
    create.add_argument("--time-limit", type=_duration, default=600, help="seconds a round (600)")
    create.add_argument(
        "--start", choices=["auto", "manual"], default="auto",
        help="auto: each round after the pause; manual: you start each (auto)",
    )  # fmt: skip
    create.add_argument("--pause", type=_duration, default=60, help="seconds between rounds (60)")
    create.add_argument(
        "--starts-in", type=_duration, metavar="MINUTES",
        help="start by itself in MINUTES (default: you start it)",
    )  # fmt: skip
    create.add_argument("--max-players", type=_duration, default=100, help="2-1000 (100)")
    create.add_argument("--private", action="store_true", help="joining needs the link's key")
    create.add_argument("--late-join-until", type=_duration, metavar="ROUND")
    create.add_argument("--scoring", choices=["points", "time"], default="points")
    create.add_argument(
        "--deals", choices=["winnable", "any", "list"], default="winnable",
        help="winnable: proved by the solver; any; list: the --deal codes you give",
    )  # fmt: skip
    create.add_argument("--deal", action="append", default=[], metavar="CODE")
    create.add_argument("--spectator-delay", type=_duration, default=0, metavar="SECONDS")
    create.add_argument(
        "--absences", type=_duration, default=2, help="absences in a row that withdraw (2)"
    )
    create.add_argument("--co-host", action="append", default=[], metavar="PLAYER_ID")
    create.set_defaults(run=run_create)

    host = actions.add_parser("host", help="a host's act: start, kick, disqualify, …")
    host.add_argument("url", metavar="URL", help="the tournament's link")
    host.add_argument("act", choices=HOST_ACTS)
    host.add_argument("--player", help="the player acted on (their id)")
    host.add_argument("--round", type=_duration, help="the round of a result")
    host.add_argument("--reason", help="the reason the player sees")
    host.add_argument("--text", help="an announcement")
    host.set_defaults(run=run_host)

    export = actions.add_parser("export", help="the full export as JSON (verify reads it)")
    export.add_argument("url", metavar="URL", help="the tournament's link")
    export.set_defaults(run=run_export)

    verify = actions.add_parser(
        "verify",
        help="check a finished tournament's export: commitment, deals, results, standings",
        description="Check a tournament's full JSON export: SHA-256 of the revealed seed "
        "against the commitment, every round's deal against its candidate, every winning "
        "line and every result by replaying it, and the standings.",
    )
    verify.add_argument("export", metavar="EXPORT", help="the export's JSON file, or - for stdin")
    verify.add_argument("--json", action="store_true", help="print the verdict as JSON")
    verify.set_defaults(run=run_verify)


# --------------------------------------------------------------------- talking to a server


def _fail(message: str, status: int = 1) -> int:
    print(f"samedeal: {message}", file=sys.stderr)
    return status


def _link(text: str, key: str | None = None) -> TournamentLink:
    link = parse_tournament_link(text, key=key)
    if link.tournament is None:
        raise ValueError(f"not a tournament link (…/t/CODE): {text!r}")
    return link


def run_create(args: argparse.Namespace) -> int:
    """Create a tournament; print its code, link and commitment."""
    from .client import RequestError, identified

    try:
        link = parse_tournament_link(args.url)
    except ValueError as exc:
        return _fail(str(exc), 2)
    settings: dict[str, Any] = {
        "name": args.name,
        "game": args.game,
        "rounds": args.rounds,
        "round_time_limit": args.time_limit,
        "round_start": args.start,
        "pause": args.pause,
        "max_players": args.max_players,
        "private": args.private,
        "scoring": args.scoring,
        "deals": args.deals,
        "spectator_delay": args.spectator_delay,
        "absences_to_withdraw": args.absences,
        "co_hosts": args.co_host,
    }
    if args.deals == "list":
        settings["deal_codes"] = args.deal
    if args.late_join_until is not None:
        settings["late_join_until"] = args.late_join_until
    if args.starts_in is not None:
        import time

        settings["starts_at"] = int((time.time() + 60 * args.starts_in) * 1000)

    async def go() -> Any:
        client = await identified(link.url)
        try:
            return await client.tournament_create(**settings)
        finally:
            await client.close()

    try:
        made = asyncio.run(go())
    except RequestError as exc:
        return _fail(f"{exc.code}: {exc.message}", 2 if exc.code == "bad_settings" else 1)
    except OSError as exc:
        return _fail(f"cannot reach {args.url}: {exc}")
    page = made.page
    print(f"tournament {page.id}: {page.settings.name}")
    print(f"  link        {page.link}")
    print(f"  commitment  {page.draw.commitment}  (SHA-256 of the seed, revealed at the end)")
    return 0


def run_host(args: argparse.Namespace) -> int:
    """One host act."""
    from .client import RequestError, identified

    try:
        link = _link(args.url)
    except ValueError as exc:
        return _fail(str(exc), 2)
    act = {"start-round": "start_round", "end": "end_early"}.get(args.act, args.act)
    fields = {
        k: v
        for k, v in {
            "player": args.player,
            "round": args.round,
            "reason": args.reason,
            "text": args.text,
        }.items()
        if v is not None
    }

    async def go() -> None:
        client = await identified(link.url)
        try:
            assert link.tournament is not None
            await client.tournament_host(link.tournament, act, **fields)
        finally:
            await client.close()

    try:
        asyncio.run(go())
    except RequestError as exc:
        return _fail(f"{exc.code}: {exc.message}")
    except OSError as exc:
        return _fail(f"cannot reach {args.url}: {exc}")
    print(f"done: {args.act}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    """Print the tournament's full export."""
    try:
        link = _link(args.url)
    except ValueError as exc:
        return _fail(str(exc), 2)
    path = f"{link.http}/api/tournaments/{link.tournament}/export"
    if link.key:
        path += f"?key={link.key}"
    try:
        with urllib.request.urlopen(path, timeout=30) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        exc.close()
        return _fail(f"{args.url}: HTTP {exc.code} (no such tournament, or its key is missing)")
    except OSError as exc:
        return _fail(f"cannot reach {args.url}: {exc}")
    sys.stdout.write(body.decode() + "\n")
    return 0


def run_play(args: argparse.Namespace) -> int:
    """The terminal client on a tournament: standings, and each round's race."""
    try:
        link = _link(args.url, key=args.key)
    except ValueError as exc:
        return _fail(str(exc), 2)
    from .tui_tournament import TournamentApp

    app = TournamentApp(link, join=args.join, name=args.name, lang=args.lang)
    app.run()
    return app.return_code or 0


# --------------------------------------------------------------------- verify


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def run_verify(args: argparse.Namespace) -> int:
    """Verify an export: 0 verified, 1 problems found, 2 unreadable."""
    from server.tournaments.export import ExportError, drawn, load_export, verify

    try:
        export = load_export(_read(args.export))
        problems = verify(export)
    except OSError as exc:
        print(f"samedeal: cannot read {args.export}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except ExportError as exc:
        print(f"samedeal: {args.export}: {exc}", file=sys.stderr)
        return 2
    if args.json:
        verdict = {"verified": not problems, "tournament": export.get("id"), "problems": problems}
        sys.stdout.write(orjson.dumps(verdict, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 1 if problems else 0
    name = f"{export.get('id')} ({str(export.get('settings', {}).get('name', ''))[:60]!r})"
    if problems:
        for problem in problems:
            print(f"problem: {problem}")
        print(f"NOT verified: tournament {name}, {len(problems)} problem(s)")
        return 1
    rounds = export.get("rounds") or []
    results = sum(len(r.get("results") or {}) for r in rounds)
    version, draw = drawn(export)
    print(f"verified: tournament {name}")
    print(f"  commitment {draw['commitment']} is SHA-256 of the revealed seed")
    how_drawn = "sealed deals" if version == 2 else "numbered deals, before sealed deals"
    print(f"  rounds drawn by fair deals version {version} ({how_drawn})")
    for r in rounds:
        how = (
            "the host's listed deal"
            if r.get("candidate") is None
            else (
                f"candidate {r['candidate']}"
                + (", winning line replayed" if r.get("solution") else "")
                + (f", {len(r['skipped'])} skipped" if r.get("skipped") else "")
            )
        )
        print(f"  round {r['number']}: {r['deal']} ({how})")
    print(f"  {results} results replayed, standings recomputed")
    return 0
