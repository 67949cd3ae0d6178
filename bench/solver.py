"""Solver benchmark: how many deals the solver decides within a per-deal budget.

Not a test: it prints figures. By default deals 1–200 of Klondike draw one and draw three and
deals 1–100 of Easy Harp, 10 s per Klondike deal and 20 s per Easy Harp deal::

    python bench/solver.py                       # the full run (long)
    python bench/solver.py --games klondike --count 50 --seconds 2 --jobs 2
    python bench/solver.py --sealed              # 1,000 sealed deals per game, fixed seed

Each deal is solved in one process on one core; ``--jobs 2`` runs two deals at a time. The
times reported are per deal, measured inside the process that solved it; "proven per
core-minute" is the winnable verdicts per minute of the solving processes' CPU time (the
unknown and unwinnable deals' time included: what a server pays per proven deal).

``--sealed`` solves sealed deals (``fair-deals.md``: ``PREFIX-`` and 26 letters, from 16
bytes) drawn from a fixed seed (``--seed``), the kind the server deals, instead of numbered
ones; ``--first`` then skips that many of the sequence. ``--out FILE`` writes every verdict
as JSON lines, to compare runs (the compiled and the pure build: ``SAMEDEAL_PURE=1``).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path, and bench/engine.py would shadow
# the `engine` package: put the repository root there instead (so that the script also runs
# from a checkout that is not installed).
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    sys.path[0] = str(Path(__file__).resolve().parent.parent)

import engine
from engine import DealCode, InvalidDealCodeError
from engine.solver import solve

DEFAULTS = {"klondike": (200, 10.0), "klondike-3": (200, 10.0), "easy-harp": (100, 20.0)}
PREFIXES = {"klondike": "KL1-1", "klondike-3": "KL1-3", "easy-harp": "EH1-N"}
#: sealed deals per game by default (the budgets per deal as for numbered ones)
SEALED_COUNT = 1_000
SEALED_LETTERS = 26


def sealed_code(prefix: str, data: bytes) -> str:
    """``sealed(prefix, b)`` of ``fair-deals.md``: the 16 bytes big-endian, mod 26**26, as 26
    letters A-Z, most significant first."""
    value = int.from_bytes(data, "big") % 26**SEALED_LETTERS
    letters = []
    for _ in range(SEALED_LETTERS):
        value, digit = divmod(value, 26)
        letters.append(chr(ord("A") + digit))
    return f"{prefix}-{''.join(reversed(letters))}"


def sealed_codes(game: str, seed: int, first: int, count: int) -> list[str]:
    """Sealed deals ``first`` … ``first + count - 1`` (from 0) of ``game`` drawn from ``seed``:
    each game draws its own sequence, the same on every run."""
    rng = random.Random(f"{seed}|{game}")
    draws = [rng.randbytes(16) for _ in range(first + count)]
    return [sealed_code(PREFIXES[game], data) for data in draws[first:]]


def sealed_supported() -> bool:
    """Whether this engine deals sealed codes (``deal-codes.md``, "Sealed deals")."""
    try:
        DealCode.parse(sealed_code("KL1-1", bytes(16)))
    except InvalidDealCodeError:
        return False
    return True


def _solve_one(task: tuple[str, float | None, int | None]) -> dict[str, Any]:
    code, seconds, nodes = task
    cpu = time.process_time()
    result = solve(DealCode.parse(code), seconds=seconds, nodes=nodes)
    return {
        "code": code,
        "verdict": result.verdict,
        "seconds": result.seconds,
        "cpu": time.process_time() - cpu,
        "nodes": result.nodes,
        "length": len(result.solution or ()),
    }


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def run_game(
    game: str,
    codes: list[str],
    seconds: float | None,
    nodes: int | None,
    jobs: int,
    verbose: bool,
    label: str,
) -> dict[str, Any]:
    """Solve the deals ``codes`` of ``game``; print and return figures (``rows``: one per
    deal)."""
    count = len(codes)
    tasks = [(code, seconds, nodes) for code in codes]
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, row in enumerate(pool.map(_solve_one, tasks), 1):
            rows.append(row)
            if verbose:
                print(
                    f"  {row['code']:<32} {row['verdict']:<10} "
                    f"{row['seconds']:7.2f}s {row['nodes']:>9} nodes",
                    file=sys.stderr,
                )
            else:
                print(f"\r  {game}: {i}/{count}", end="", file=sys.stderr, flush=True)
    if not verbose:
        print(file=sys.stderr)
    wall = time.perf_counter() - started
    times = [r["seconds"] for r in rows]
    decided = [r for r in rows if r["verdict"] != "unknown"]
    won = [r for r in rows if r["verdict"] == "winnable"]
    lost = [r for r in rows if r["verdict"] == "unwinnable"]
    cpu_minutes = sum(r["cpu"] for r in rows) / 60
    figures = {
        "game": game,
        "deals": label,
        "budget": f"{seconds} s" if seconds is not None else f"{nodes} nodes",
        "decided": len(decided) / len(rows),
        "winnable": len(won),
        "unwinnable": len(lost),
        "unknown": len(rows) - len(decided),
        "winnable_share_of_decided": len(won) / len(decided) if decided else float("nan"),
        "winnable_share_bounds": (len(won) / len(rows), (len(rows) - len(lost)) / len(rows)),
        "median_s": statistics.median(times),
        "p95_s": _percentile(times, 0.95),
        "max_s": max(times),
        "median_decided_s": statistics.median([r["seconds"] for r in decided]) if decided else 0,
        "mean_solution_length": (statistics.mean(r["length"] for r in won) if won else 0),
        "wall_s": wall,
        "proven_per_core_minute": len(won) / cpu_minutes if cpu_minutes else float("nan"),
        "rows": rows,
    }
    lo, hi = figures["winnable_share_bounds"]
    print(
        f"{game:<11} deals {figures['deals']:<8} budget {figures['budget']:<8} "
        f"decided {100 * figures['decided']:5.1f}%  "
        f"W/U/? {len(won)}/{len(lost)}/{figures['unknown']}  "
        f"winnable {100 * figures['winnable_share_of_decided']:5.1f}% of decided "
        f"({100 * lo:.1f}–{100 * hi:.1f}% of all)  "
        f"median {figures['median_s']:.3f}s  p95 {figures['p95_s']:.2f}s  "
        f"max {figures['max_s']:.2f}s  mean solution {figures['mean_solution_length']:.0f} "
        f"moves  proven/core-min {figures['proven_per_core_minute']:.1f}  wall {wall:.0f}s",
        flush=True,
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=sorted(DEFAULTS), default=list(DEFAULTS))
    parser.add_argument("--first", type=int, help="first deal number (default 1; sealed: 0)")
    parser.add_argument("--count", type=int, help="deals per game (default 200, Easy Harp 100)")
    parser.add_argument("--seconds", type=float, help="per-deal time budget (default 10, EH 20)")
    parser.add_argument("--nodes", type=int, help="per-deal node budget instead of time")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="processes (1 or 2)")
    parser.add_argument("--sealed", action="store_true", help="sealed deals from --seed")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sealed deals")
    parser.add_argument("--out", type=Path, help="write every verdict here (JSON lines)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per deal")
    args = parser.parse_args(argv)
    print(f"engine: {engine.BUILD}", flush=True)
    if args.sealed and not sealed_supported():
        print("sealed deals: skipped, this engine's DealCode refuses them", flush=True)
        return 0
    out = args.out.open("w", encoding="utf-8") if args.out else None
    try:
        for game in args.games:
            count, seconds = DEFAULTS[game]
            if args.sealed:
                count = args.count or SEALED_COUNT
                first = args.first or 0
                codes = sealed_codes(game, args.seed, first, count)
                label = f"sealed {first}-{first + count - 1} seed {args.seed}"
            else:
                count = args.count or count
                first = 1 if args.first is None else args.first
                codes = [str(DealCode.for_game(game, n)) for n in range(first, first + count)]
                label = f"{first}-{first + count - 1}"
            figures = run_game(
                game,
                codes,
                None if args.nodes else (args.seconds or seconds),
                args.nodes,
                args.jobs,
                args.verbose,
                label,
            )
            if out is not None:
                for row in figures["rows"]:
                    out.write(json.dumps({"game": game, **row}) + "\n")
    finally:
        if out is not None:
            out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
