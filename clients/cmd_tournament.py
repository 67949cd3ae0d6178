"""``samedeal tournament verify``: check a tournament's full export with nothing of the server.

    samedeal tournament verify EXPORT.json [--json]     (EXPORT may be - for stdin)

It recomputes the commitment from the revealed seed, every round's deal from its candidate
index (``fair-deals.md``), replays every winning line and every player's moves, and
recomputes the standings. Exit 0: it verifies; 1: it does not (each problem printed);
2: the file cannot be read or is not a tournament export (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import orjson

__all__ = ["register"]


def register(sub: Any) -> None:
    """Add ``tournament`` (with ``verify``) to the subcommand parser."""
    tournament = sub.add_parser("tournament", help="tournament tools (verify an export)")
    actions = tournament.add_subparsers(dest="action", required=True, metavar="ACTION")
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


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    with open(path, "rb") as f:
        return f.read()


def run_verify(args: argparse.Namespace) -> int:
    """Verify an export: 0 verified, 1 problems found, 2 unreadable."""
    from server.tournaments.export import ExportError, load_export, verify

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
    print(f"verified: tournament {name}")
    print(f"  commitment {export['fair']['commitment']} is SHA-256 of the revealed seed")
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
