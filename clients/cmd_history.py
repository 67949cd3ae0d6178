"""``samedeal history``, ``samedeal me`` and the replay viewer of ``samedeal replay URL``.

* ``samedeal history [HANDLE] --server URL``: a player's stats per game and recent races,
  with their ids and replay links; your own (the identity this device keeps for that
  server) when no handle is given.
* ``samedeal me --server URL``: who you are on that server (made for you the first time,
  as ``samedeal play`` does), and ``--name``, ``--handle``, ``--no-handle``, ``--recover
  CODE``, ``--forget`` to change it.
* ``samedeal replay http://HOST/g/ID``: step through a finished race (:mod:`clients.
  replay_view`); ``samedeal replay CODE MOVE…`` still replays moves locally
  (:mod:`clients.cmd_deal`).

Bad input (a malformed URL, handle or code, an unknown player or game) is one line on
stderr and exit status 2; a server that cannot be reached, one line and exit status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from typing import Any

from protocol.api import PlayerPage

from .api import (
    ApiRefusal,
    fetch_game,
    fetch_player,
    game_page_url,
    parse_game_link,
    player_page_url,
    server_base,
)
from .i18n import LANGUAGES, Catalogue, detect_lang
from .identity import IdentityFile, SavedIdentity

__all__ = ["format_history", "register", "run_replay_link"]

# server refusals that say the request itself was wrong (exit 2); others are the server's
_BAD_INPUT = frozenset(
    {
        "bad_handle",
        "bad_game_id",
        "bad_identity",
        "bad_query",
        "bad_recovery_code",
        "handle_taken",
        "invalid_message",
        "unknown_game",
        "unknown_player",
    }
)


def register(sub: Any) -> None:
    """Add ``history`` and ``me`` to the subcommand parser."""
    hist = sub.add_parser("history", help="a player's races and stats on a server")
    hist.add_argument("handle", nargs="?", metavar="HANDLE", help="whose (default: yours)")
    _server(hist)
    hist.add_argument(
        "--limit", type=_limit, default=20, metavar="N", help="recent races to list (1–100)"
    )
    _lang(hist)
    hist.set_defaults(run=run_history)

    me = sub.add_parser("me", help="your player on a server: name, handle, recovery")
    _server(me)
    me.add_argument("--name", help="your display name")
    handle = me.add_mutually_exclusive_group()
    handle.add_argument("--handle", help="your handle: it names your page /p/HANDLE")
    handle.add_argument("--no-handle", action="store_true", help="drop your handle")
    me.add_argument(
        "--recover", metavar="CODE", help="move your player here with its recovery code"
    )
    me.add_argument(
        "--forget", action="store_true", help="delete your player on this server, for good"
    )
    _lang(me)
    me.set_defaults(run=run_me)


def _server(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--server", required=True, metavar="URL", help="the server, e.g. http://host:8765"
    )


def _lang(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--lang", choices=list(LANGUAGES), help="the language (default: the terminal's locale)"
    )


def _limit(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= n <= 100:
        raise argparse.ArgumentTypeError(f"from 1 to 100: {n}")
    return n


def _fail(message: str, status: int) -> int:
    print(f"samedeal: {message}", file=sys.stderr)
    return status


def _refused(cat: Catalogue, error_code: str, message: str) -> int:
    return _fail(cat.error_text(error_code, message), 2 if error_code in _BAD_INPUT else 1)


def _ws(base: str) -> str:
    return "ws" + base[len("http") :]


def _date(at_ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at_ms / 1000))


def _clock(elapsed_ms: int | None) -> str:
    if elapsed_ms is None:
        return "–"
    s = max(0, elapsed_ms) // 1000
    h, m = divmod(s // 60, 60)
    return f"{h}:{m:02d}:{s % 60:02d}" if h else f"{m}:{s % 60:02d}"


# ---------------------------------------------------------------------- history


def format_history(page: PlayerPage, base: str, cat: Catalogue) -> str:
    """A player's page as text: who, stats per game, recent races with ids and links."""
    t = cat.t
    who = t("history.who", name=page.name, handle=page.handle)
    lines = [f"{who} · {t('profile.since', date=_date(page.since))}"]
    lines.append(player_page_url(base, page.handle))
    for s in page.stats:
        lines.append("")
        lines.append(t(f"game.{s.game}"))
        figures = [
            (t("profile.played"), str(s.played)),
            (t("profile.won"), str(s.won)),
            (t("profile.win_pct"), f"{s.win_pct:g} %"),
            (t("profile.best_time"), _clock(s.best_time_ms)),
            (t("profile.best_score"), str(s.best_score)),
            (t("profile.streak"), str(s.current_streak)),
            (t("profile.longest"), str(s.longest_streak)),
        ]
        width = max(len(label) for label, _ in figures)
        lines.extend(f"  {label:<{width}}  {value}" for label, value in figures)
    lines.append("")
    lines.append(t("profile.recent"))
    if not page.recent:
        lines.append("  " + t("profile.none"))
    for r in page.recent:
        status = t(f"status.{r.status}")
        if r.status == "won":
            status = t("status.won_in", time=_clock(r.elapsed_ms))
        parts = [
            _date(r.ended_at),
            r.id,
            t(f"game.{r.game}"),
            cat.ordinal("share.place", r.rank, n=r.racers),
            status,
            cat.tn("stats.points", r.score),
            cat.tn("stats.moves", r.moves),
        ]
        lines.append("  " + " · ".join(parts))
        lines.append("    " + game_page_url(base, r.id))
    return "\n".join(lines)


async def _own_handle(base: str, saved: SavedIdentity) -> str | None:
    from .client import RaceClient

    async with await RaceClient.connect(_ws(base)) as client:
        return (await client.identify(saved.player, saved.secret)).handle


def run_history(args: argparse.Namespace) -> int:
    """Print a player's page."""
    cat = Catalogue(args.lang or detect_lang())
    try:
        base = server_base(args.server)
    except ValueError as exc:
        return _fail(str(exc), 2)
    handle = args.handle
    if handle is None:
        saved = IdentityFile(base).load()
        if saved is None:
            return _fail(cat.t("history.no_identity", server=base), 2)
        from .client import RequestError

        try:
            handle = asyncio.run(_own_handle(base, saved))
        except RequestError as exc:
            if exc.code == "bad_identity":
                return _fail(cat.t("history.no_identity", server=base), 2)
            return _refused(cat, exc.code, exc.message)
        except (OSError, TimeoutError) as exc:
            return _fail(cat.t("history.unreachable", server=base, error=exc), 1)
        if handle is None:
            return _fail(cat.t("history.no_handle", server=base), 2)
    if not 1 <= len(handle) <= 64:
        return _refused(cat, "bad_handle", "not a handle")
    try:
        page = fetch_player(base, handle, limit=args.limit)
    except ApiRefusal as exc:
        return _refused(cat, exc.error_code, exc.message)
    except OSError as exc:
        return _fail(cat.t("history.unreachable", server=base, error=exc), 1)
    print(format_history(page, base, cat))
    return 0


# ---------------------------------------------------------------------- me


async def _me(args: argparse.Namespace, base: str, cat: Catalogue) -> list[str]:
    from .client import RaceClient, ensure_identity

    store = IdentityFile(base)
    t = cat.t
    if args.recover is not None:
        async with await RaceClient.connect(_ws(base)) as client:
            player = await client.recover(args.recover)
        assert player.secret is not None
        store.save(SavedIdentity(player.player, player.secret))
        lines = [t("me.recovered")]
    else:
        async with await RaceClient.connect(_ws(base)) as client:
            made = await ensure_identity(client, store, strict=True)
            if made is None:
                return [t("you.guest")]
            player = made
            if args.forget:
                await client.forget_me()
                store.forget()
                return [t("me.forgotten", server=base)]
            lines = []
            if args.name is not None:
                player = await client.rename(args.name)
            if args.handle is not None or args.no_handle:
                player = await client.set_handle(None if args.no_handle else args.handle)
            if made.recovery_code:
                player = player.model_copy(update={"recovery_code": made.recovery_code})
                lines.append(t("me.made", server=base))
    lines.append(t("me.name", name=player.name))
    if player.handle:
        lines.append(t("me.handle", handle=player.handle))
        lines.append(player_page_url(base, player.handle))
    else:
        lines.append(t("me.no_handle"))
    if player.recovery_code:
        lines.append(t("me.code", code=player.recovery_code))
    return lines


def run_me(args: argparse.Namespace) -> int:
    """Show (and change) your player on a server."""
    from .client import RequestError

    cat = Catalogue(args.lang or detect_lang())
    try:
        base = server_base(args.server)
    except ValueError as exc:
        return _fail(str(exc), 2)
    try:
        lines = asyncio.run(_me(args, base, cat))
    except RequestError as exc:
        return _refused(cat, exc.code, exc.message)
    except (OSError, TimeoutError) as exc:
        return _fail(cat.t("history.unreachable", server=base, error=exc), 1)
    print("\n".join(lines))
    return 0


# ---------------------------------------------------------------------- replay URL


def run_replay_link(url: str, moves: Sequence[str], lang: str | None) -> int:
    """``samedeal replay http://HOST/g/ID``: open the replay viewer."""
    from engine import GameError

    cat = Catalogue(lang or detect_lang())
    if moves:
        return _fail(cat.t("replay.no_moves_with_link"), 2)
    try:
        link = parse_game_link(url)
    except ValueError as exc:
        return _fail(str(exc), 2)
    try:
        game = fetch_game(link)
    except ApiRefusal as exc:
        return _refused(cat, exc.error_code, exc.message)
    except OSError as exc:
        return _fail(cat.t("history.unreachable", server=link.base, error=exc), 1)
    from .replay_view import ReplayApp, Timeline

    try:
        timeline = Timeline(game)
    except GameError as exc:
        return _fail(cat.t("replay.does_not_replay", error=exc), 1)
    app = ReplayApp(timeline, page=game_page_url(link.base, link.game_id), lang=cat.lang)
    app.run()
    return app.return_code or 0
