"""Solver benchmark: how many deals the solver decides within a per-deal budget.

Not a test: it prints figures. By default deals 1–200 of Klondike draw one and draw three and
deals 1–100 of Easy Harp, 10 s per Klondike deal and 20 s per Easy Harp deal::

    python bench/solver.py                       # the full run (long)
    python bench/solver.py --games klondike --count 50 --seconds 2 --jobs 2

Each deal is solved in one process on one core; ``--jobs 2`` runs two deals at a time. The
times reported are per deal, measured inside the process that solved it.
"""

from __future__ import annotations

import argparse
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

from engine import DealCode
from engine.solver import solve

DEFAULTS = {"klondike": (200, 10.0), "klondike-3": (200, 10.0), "easy-harp": (100, 20.0)}


def _solve_one(task: tuple[str, int, float | None, int | None]) -> dict[str, Any]:
    game, number, seconds, nodes = task
    result = solve(DealCode.for_game(game, number), seconds=seconds, nodes=nodes)
    return {
        "number": number,
        "verdict": result.verdict,
        "seconds": result.seconds,
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
    first: int,
    count: int,
    seconds: float | None,
    nodes: int | None,
    jobs: int,
    verbose: bool,
) -> dict[str, Any]:
    """Solve deals ``first`` … ``first + count - 1`` of ``game``; print and return figures."""
    tasks = [(game, n, seconds, nodes) for n in range(first, first + count)]
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for i, row in enumerate(pool.map(_solve_one, tasks), 1):
            rows.append(row)
            if verbose:
                print(
                    f"  {game} {row['number']:>4} {row['verdict']:<10} "
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
    figures = {
        "game": game,
        "deals": f"{first}-{first + count - 1}",
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
        f"moves  wall {wall:.0f}s",
        flush=True,
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", choices=sorted(DEFAULTS), default=list(DEFAULTS))
    parser.add_argument("--first", type=int, default=1, help="first deal number (default 1)")
    parser.add_argument("--count", type=int, help="deals per game (default 200, Easy Harp 100)")
    parser.add_argument("--seconds", type=float, help="per-deal time budget (default 10, EH 20)")
    parser.add_argument("--nodes", type=int, help="per-deal node budget instead of time")
    parser.add_argument("--jobs", type=int, default=1, choices=(1, 2), help="processes (1 or 2)")
    parser.add_argument("-v", "--verbose", action="store_true", help="one line per deal")
    args = parser.parse_args(argv)
    for game in args.games:
        count, seconds = DEFAULTS[game]
        run_game(
            game,
            args.first,
            args.count or count,
            None if args.nodes else (args.seconds or seconds),
            args.nodes,
            args.jobs,
            args.verbose,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
