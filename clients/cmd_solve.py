"""``samedeal solve`` and ``samedeal daily``: decide deals with the solver, show the day's deal.

    samedeal solve CODE [--seconds S] [--nodes N] [--json]
    samedeal solve --batch GAME FROM TO [--seconds S] [--nodes N] [--jobs 2]
    samedeal daily GAME --server URL [--date YYYY-MM-DD]
    samedeal daily play GAME [--server URL] [--name NAME] [--lang LANG]
    samedeal daily verify --game G --date D --code CODE --salt HEX --commitment HEX
    samedeal daily verify REVEAL.json          (or - for stdin)

These command forms are a public interface that scripts depend on: keep them stable.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import TYPE_CHECKING, Any

import orjson

from engine import GAME_NAMES, DealCode, GameError

from .i18n import LANGUAGES

if TYPE_CHECKING:
    from .identity import IdentityFile
    from .tui import RaceApp

__all__ = ["DEFAULT_SERVER", "daily_play_app", "daily_play_epilogue", "register"]

_DEFAULT_SECONDS = 10.0
#: where ``samedeal daily play`` plays without ``--server``: ``samedeal serve``'s address
DEFAULT_SERVER = "http://127.0.0.1:8765"
_BAR = 30


def register(sub: Any) -> None:
    """Add ``solve`` and ``daily`` to the subcommand parser."""
    solve = sub.add_parser(
        "solve",
        help="decide whether a deal can be won (with a solution)",
        description="Search a deal with full knowledge of the cards: winnable (with a "
        "solution), unwinnable (the search was exhaustive) or unknown (budget spent).",
    )
    what = solve.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "code", nargs="?", help="a deal code such as KL1-1-AAAAAAF (or a sealed one, 26 letters)"
    )
    what.add_argument(
        "--batch",
        nargs=3,
        metavar=("GAME", "FROM", "TO"),
        help="solve deals FROM … TO of GAME (easy-harp, klondike, klondike-3) and summarise",
    )
    solve.add_argument(
        "--seconds",
        type=float,
        help=f"time budget per deal (default {_DEFAULT_SECONDS:g} unless --nodes is given)",
    )
    solve.add_argument("--nodes", type=int, help="node budget per deal (deterministic)")
    solve.add_argument("--json", action="store_true", help="print one JSON object per deal")
    solve.add_argument(
        "--jobs", type=int, default=1, choices=(1, 2), help="batch: processes to use (1 or 2)"
    )
    solve.set_defaults(run=run_solve)

    daily = sub.add_parser(
        "daily",
        help="the deal of the day from a server: its commitment today, its code once over; play it",
        description="samedeal daily GAME --server URL asks a server for the deal of the day: "
        "today's is secret until 00:00 UTC (its commitment is shown), a past day's code is "
        "shown once checked against its commitment. samedeal daily play GAME plays today's "
        "in a room of your own and prints the spoiler-free share text at the end. samedeal "
        "daily verify checks a reveal.",
    )
    # "play" and "verify" share the place of GAME; then the next word is play's GAME or
    # verify's REVEAL
    daily.add_argument(
        "game",
        choices=["easy-harp", "klondike", "play", "verify"],
        help="klondike (draw one), easy-harp; or play GAME; or verify",
    )
    daily.add_argument(
        "--server",
        metavar="URL",
        help=f"the samedeal server (http://HOST:PORT; play: {DEFAULT_SERVER} by default)",
    )
    daily.add_argument(
        "reveal",
        nargs="?",
        metavar="REVEAL|GAME",
        help="verify: a reveal JSON file, or - for stdin; play: the game",
    )
    daily.add_argument("--name", default="", help="play: your name in the room")
    daily.add_argument(
        "--lang",
        choices=list(LANGUAGES),
        help="play: the language to speak (default: the terminal's locale, else English)",
    )
    daily.add_argument("--date", help="the UTC date, YYYY-MM-DD (default: today)")
    daily.add_argument("--json", action="store_true", help="print the server's answer as JSON")
    for option, text in (
        ("--game", "verify: the daily game (klondike or easy-harp)"),
        ("--code", "verify: the revealed deal code"),
        ("--salt", "verify: the revealed salt (64 hex digits)"),
        ("--commitment", "verify: the commitment published that day (64 hex digits)"),
    ):
        daily.add_argument(option, dest=f"verify_{option[2:]}", help=text)
    daily.set_defaults(run=run_daily)


def _budget(args: argparse.Namespace) -> tuple[float | None, int | None]:
    seconds = args.seconds
    if seconds is None and args.nodes is None:
        seconds = _DEFAULT_SECONDS
    if (seconds is not None and seconds <= 0) or (args.nodes is not None and args.nodes <= 0):
        raise ValueError("budgets must be positive")
    return seconds, args.nodes


def run_solve(args: argparse.Namespace) -> int:
    """Solve one deal (exit 0 whatever the verdict) or a batch; exit 2 on bad input."""
    try:
        seconds, nodes = _budget(args)
    except ValueError as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return 2
    if args.batch:
        return _run_batch(args, seconds, nodes)
    try:
        code = DealCode.parse(args.code)
    except GameError as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return 2
    from engine.solver import solve

    result = solve(code, seconds=seconds, nodes=nodes)
    if args.json:
        sys.stdout.write(orjson.dumps(result.as_json()).decode() + "\n")
    else:
        print(f"{result.code}  {result.verdict}  nodes {result.nodes}  {result.seconds:.3f} s")
        if result.solution_text is not None:
            print(result.solution_text)
        if result.note:
            print(f"samedeal: {result.note}", file=sys.stderr)
    return 0


def _solve_number(task: tuple[str, int, float | None, int | None]) -> dict[str, Any]:
    from engine.solver import solve

    game, number, seconds, nodes = task
    return solve(DealCode.for_game(game, number), seconds=seconds, nodes=nodes).as_json()


def _progress(done: int, total: int, counts: dict[str, int], started: float) -> None:
    filled = _BAR * done // total
    bar = "#" * filled + "." * (_BAR - filled)
    sys.stderr.write(
        f"\r[{bar}] {done}/{total}  winnable {counts['winnable']}  "
        f"unwinnable {counts['unwinnable']}  unknown {counts['unknown']}  "
        f"{time.perf_counter() - started:.0f} s"
    )
    sys.stderr.flush()


def _run_batch(args: argparse.Namespace, seconds: float | None, nodes: int | None) -> int:
    game, first_text, last_text = args.batch
    if game not in GAME_NAMES:
        print(
            f"samedeal: unknown game {game!r} (one of {', '.join(sorted(GAME_NAMES))})",
            file=sys.stderr,
        )
        return 2
    try:
        first, last = int(first_text), int(last_text)
        DealCode.for_game(game, first)
        DealCode.for_game(game, last)
    except (ValueError, GameError):
        print(f"samedeal: bad deal range {first_text} {last_text} (1 … 999999)", file=sys.stderr)
        return 2
    if last < first:
        print(f"samedeal: empty deal range {first} … {last}", file=sys.stderr)
        return 2
    tasks = [(game, n, seconds, nodes) for n in range(first, last + 1)]
    counts = {"winnable": 0, "unwinnable": 0, "unknown": 0}
    times: list[float] = []
    started = time.perf_counter()
    _progress(0, len(tasks), counts, started)
    if args.jobs > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            results = pool.map(_solve_number, tasks)
            for done, row in enumerate(results, 1):
                _record(args, row, counts, times)
                _progress(done, len(tasks), counts, started)
    else:
        for done, task in enumerate(tasks, 1):
            _record(args, _solve_number(task), counts, times)
            _progress(done, len(tasks), counts, started)
    sys.stderr.write("\n")
    _summary(game, first, last, counts, times, time.perf_counter() - started)
    return 0


def _record(
    args: argparse.Namespace, row: dict[str, Any], counts: dict[str, int], times: list[float]
) -> None:
    counts[row["verdict"]] += 1
    times.append(row["seconds"])
    if args.json:
        sys.stdout.write(orjson.dumps(row).decode() + "\n")
        sys.stdout.flush()


def _summary(
    game: str,
    first: int,
    last: int,
    counts: dict[str, int],
    times: list[float],
    wall: float,
) -> None:
    total = len(times)
    ordered = sorted(times)

    def pct(q: float) -> float:
        return ordered[min(total - 1, round(q * (total - 1)))]

    decided = counts["winnable"] + counts["unwinnable"]
    lines = [
        f"{game} deals {first}-{last}: {total} solved in {wall:.1f} s",
        f"  winnable    {counts['winnable']:>6}  ({100 * counts['winnable'] / total:.1f} %)",
        f"  unwinnable  {counts['unwinnable']:>6}  ({100 * counts['unwinnable'] / total:.1f} %)",
        f"  unknown     {counts['unknown']:>6}  ({100 * counts['unknown'] / total:.1f} %)",
        f"  decided     {decided:>6}  ({100 * decided / total:.1f} %)",
        f"  time per deal: min {ordered[0]:.3f} s  median {statistics.median(ordered):.3f} s  "
        f"mean {statistics.fmean(ordered):.3f} s  p90 {pct(0.9):.3f} s  p95 {pct(0.95):.3f} s  "
        f"max {ordered[-1]:.3f} s",
    ]
    edges = (0.01, 0.1, 1.0, 10.0)
    buckets = [0] * (len(edges) + 1)
    for t in ordered:
        buckets[sum(t >= e for e in edges)] += 1
    labels = ["< 0.01 s", "0.01-0.1 s", "0.1-1 s", "1-10 s", ">= 10 s"]
    lines.append("  " + "  ".join(f"{lab}: {n}" for lab, n in zip(labels, buckets, strict=True)))
    print("\n".join(lines))


def run_daily(args: argparse.Namespace) -> int:
    """The deal of the day of GAME from ``--server``: today's commitment (the code is secret
    until the day is over), a past day's code checked against its commitment; or verify a
    reveal. Exit 0, 1 (the server cannot be reached, or a reveal does not match), 2 (bad
    input)."""
    import datetime as dt
    import urllib.error
    import urllib.request

    from engine.fair import verify_daily

    if args.game == "verify":
        return _run_daily_verify(args)
    if args.game == "play":
        return _run_daily_play(args)
    if args.reveal is not None or any(getattr(args, f"verify_{k}") for k in _REVEAL[1:]):
        print("samedeal: a reveal, --code, --salt and --commitment go with verify", file=sys.stderr)
        return 2
    if args.server is None:
        print(
            "samedeal: the deal of the day is a server's secret: give --server URL "
            "(or check a reveal with samedeal daily verify)",
            file=sys.stderr,
        )
        return 2
    base = args.server.strip().rstrip("/").replace("ws://", "http://").replace("wss://", "https://")
    if not base.startswith(("http://", "https://")):
        print(f"samedeal: not a server URL: {args.server!r}", file=sys.stderr)
        return 2
    try:
        day = dt.date.fromisoformat(args.date) if args.date else None
    except ValueError:
        print(f"samedeal: not a date (YYYY-MM-DD): {args.date!r}", file=sys.stderr)
        return 2
    path = f"/api/daily/{day.isoformat()}" if day else "/api/daily"
    try:
        with urllib.request.urlopen(base + path, timeout=10) as reply:
            answer = orjson.loads(reply.read())
    except urllib.error.HTTPError as exc:
        try:
            message = orjson.loads(exc.read()).get("message", exc.reason)
        except orjson.JSONDecodeError:
            message = exc.reason
        print(f"samedeal: {message}", file=sys.stderr)
        return 2 if exc.code < 500 else 1
    except (OSError, orjson.JSONDecodeError) as exc:
        print(f"samedeal: cannot ask {base}: {exc}", file=sys.stderr)
        return 1
    day_info = answer if day else answer["today"]
    game = next(g for g in day_info["games"] if g["game"] == args.game)
    if args.json:
        print(orjson.dumps({**game, "day": day_info["day"], "number": day_info["number"]}).decode())
        return 0
    title = f"{args.game} {day_info['day']} (day {day_info['number']})"
    if game["code"] is None:
        print(f"{title}: secret until 00:00 UTC")
        pending = "not yet (the day's proof is running)"
        print(f"commitment: {game['commitment'] or pending}")
        return 0
    if not verify_daily(game["code"], game["salt"], game["commitment"]):
        print(f"{title}: {game['code']} does NOT match its commitment", file=sys.stderr)
        return 1
    print(game["code"])
    print(f"{title}: matches its commitment {game['commitment']}", file=sys.stderr)
    return 0


def daily_play_app(
    server: str,
    game: str,
    *,
    name: str = "",
    lang: str | None = None,
    identity: IdentityFile | None = None,
) -> RaceApp:
    """The terminal client on today's deal of ``game`` at ``server``: a room of one's own
    (one player, nobody watching), the race started at once. ``identity``: the
    :class:`~clients.identity.IdentityFile` of the player (the XDG file ``samedeal play``
    keeps). Raises ``ValueError`` for a server URL that is not one."""
    from .identity import IdentityFile
    from .links import parse_link
    from .tui import RaceApp

    link = parse_link(server)
    return RaceApp(
        link,
        role="player",
        name=name,
        create=game,
        create_options={"deal": "daily", "max_players": 1, "spectators": False},
        start=True,
        lang=lang,
        identity=identity if identity is not None else IdentityFile(link.url),
    )


def _run_daily_play(args: argparse.Namespace) -> int:
    """Play today's deal in the terminal; print the share text once the race is over."""
    game = args.reveal
    if game not in ("klondike", "easy-harp"):
        wrong = f"{game!r} has no deal of the day" if game else "which game?"
        print(f"samedeal: {wrong}: samedeal daily play klondike|easy-harp", file=sys.stderr)
        return 2
    if args.date is not None or any(getattr(args, f"verify_{k}") for k in _REVEAL):
        print("samedeal: daily play plays today's deal: no --date or reveal", file=sys.stderr)
        return 2
    try:
        app = daily_play_app(args.server or DEFAULT_SERVER, game, name=args.name, lang=args.lang)
    except ValueError as exc:
        print(f"samedeal: {exc}", file=sys.stderr)
        return 2
    app.run()
    for line in daily_play_epilogue(app):
        print(line)
    return app.return_code or 0


def daily_play_epilogue(app: RaceApp) -> list[str]:
    """What ``samedeal daily play`` prints when the app exits: the share text of the race
    (spoiler-free: never the deal code nor a card), and a new identity's recovery code
    (shown once by the server)."""
    lines = []
    if app.results and app.phase == "ended":
        lines.append(app.share_text())
    if app.new_identity is not None and app.new_identity.recovery_code:
        lines.append(app.cat.t("tui.new_player", code=app.new_identity.recovery_code))
    return lines


_REVEAL = ("game", "code", "salt", "commitment")


def _reveal_of(args: argparse.Namespace) -> dict[str, Any]:
    """The reveal to check, from a file or from the options (``ValueError`` if neither or
    both, or a field is missing)."""
    given = {k: getattr(args, f"verify_{k}") for k in _REVEAL}
    if args.date is not None:
        given["date"] = args.date
    options = {k: v for k, v in given.items() if v is not None}
    if args.reveal is not None:
        if options:
            raise ValueError("give a reveal file or the options, not both")
        text = sys.stdin.buffer.read() if args.reveal == "-" else _read_file(args.reveal)
        try:
            reveal: dict[str, Any] = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"{args.reveal}: not JSON: {exc}") from None
        if not isinstance(reveal, dict):
            raise ValueError(f"{args.reveal}: a reveal is a JSON object")
    else:
        reveal = options
    missing = [k for k in ("game", "date", "code", "salt", "commitment") if k not in reveal]
    if missing:
        raise ValueError(f"the reveal lacks {', '.join(missing)}")
    if not all(isinstance(reveal[k], str) for k in (*_REVEAL, "date")):
        raise ValueError("the reveal's fields are text")
    return reveal


def _read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc.strerror or exc}") from None


def _run_daily_verify(args: argparse.Namespace) -> int:
    """Check a revealed day's deal against its commitment: 0 it matches, 1 it does not,
    2 bad input."""
    from engine.daily import utc_date
    from engine.fair import DAILY_GAMES, verify_daily

    try:
        reveal = _reveal_of(args)
        game = reveal["game"]
        if game not in DAILY_GAMES:
            raise ValueError(f"{game!r} has no daily (one of {', '.join(DAILY_GAMES)})")
        date = utc_date(reveal["date"]).isoformat()
        code = DealCode.parse(reveal["code"])
        matches = verify_daily(code, reveal["salt"], reveal["commitment"])
    except ValueError as exc:  # GameError (a bad code) is a ValueError too
        print(f"samedeal: {exc}", file=sys.stderr)
        return 2
    problems = []
    if code.game_name != game:
        problems.append(f"{code} is a deal of {code.game_name}, not of {game}")
    if not matches:
        problems.append("SHA-256 of the code and the salt is not the commitment")
    for problem in problems:
        print(f"problem: {problem}")
    if problems:
        print(f"NOT verified: the {game} of {date}")
        return 1
    print(f"verified: the {game} of {date} was {code}, as committed")
    return 0
