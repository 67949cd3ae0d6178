"""Engine throughput: parse + validate + apply, undo, and legal-move generation.

Random legal playthroughs (with some undos) are generated first; then the timed loops replay
them from their move texts, exactly as the server does for every move it receives. Each figure
is printed beside a calibration loop measured in the same run (plain list and dict work of
the same count), because these machines are shared and noisy: compare ratios across runs.

    python3 bench/engine.py [--deals N] [--actions N] [--seed S] [--build loaded|both]

With ``--build both`` (the default) and the compiled build loaded, the same figures are then
measured again in a child process on the pure-Python modules (``SAMEDEAL_PURE=1``), and the
ratios compiled / pure printed: the two builds of one source, in the same run.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name would shadow the
# `engine` package: drop that entry.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

import engine
from engine import Move, new_game
from engine.dealcode import DealCode

GAMES = ("easy-harp", "klondike", "klondike-3")


def playthrough(code: DealCode, actions: int, rng: random.Random) -> list[str]:
    """A random legal sequence of actions (about 8 % undos) as move texts."""
    game = new_game(code)
    out: list[str] = []
    for _ in range(actions):
        if game.won:
            break
        if game.can_undo and rng.random() < 0.08:
            game.undo()
            out.append("u")
            continue
        moves = list(game.legal_moves)
        if not moves:
            break
        # prefer card moves over the stock so the games progress
        cards = [m for m in moves if m.kind == "m"]
        move = rng.choice(cards) if cards and rng.random() < 0.7 else rng.choice(moves)
        game.push(move)
        out.append(str(move))
    return out


def best_of(repeats: int, fn: Callable[[], float]) -> float:
    """The smallest of ``repeats`` timings: the least disturbed by other load."""
    return min(fn() for _ in range(repeats))


def calibrate(n: int) -> float:
    """Seconds for ``n`` steps of plain interpreter work (list/dict ops)."""
    d = {str(i): i for i in range(64)}
    keys = [str(i % 64) for i in range(n)]
    t = time.perf_counter()
    stack: list[int] = []
    for k in keys:
        v = d.get(k, 0)
        stack.append(v)
        stack.append(v + 1)
        stack.pop()
    return time.perf_counter() - t


COLUMNS = ("actions", "apply/s", "undo/s", "legal gen/s", "calib/s", "apply/calib")


def measure(args: argparse.Namespace) -> list[dict[str, float | str]]:
    """The figures of every game, one row each."""
    rng = random.Random(args.seed)
    gc.disable()  # collector pauses are noise here; the engine allocates little anyway
    rows: list[dict[str, float | str]] = []
    for name in GAMES:
        codes = [DealCode.for_game(name, rng.randint(1, 999_999)) for _ in range(args.deals)]
        runs = [(code, playthrough(code, args.actions, rng)) for code in codes]
        n_actions = sum(len(r) for _, r in runs)

        def apply_all(runs: list[tuple[DealCode, list[str]]] = runs) -> float:
            games = [new_game(code) for code, _ in runs]  # dealing is not what is timed
            t = time.perf_counter()
            for game, (_, texts) in zip(games, runs, strict=True):
                push = game.push
                for text in texts:
                    push(text)
            return time.perf_counter() - t

        def undo_all(runs: list[tuple[DealCode, list[str]]] = runs) -> tuple[float, int]:
            games = []
            for code, texts in runs:
                game = new_game(code)
                game.push_all(texts)
                games.append(game)
            count = 0
            t = time.perf_counter()
            for game in games:
                while game.can_undo:
                    game.push(Move.UNDO)
                    count += 1
            return time.perf_counter() - t, count

        def legal_all(runs: list[tuple[DealCode, list[str]]] = runs) -> tuple[float, int]:
            positions = []
            for code, texts in runs:
                game = new_game(code)
                for i, text in enumerate(texts):
                    game.push(text)
                    if i % 10 == 0 and not game.won:
                        positions.append(game.copy())
            t = time.perf_counter()
            for game in positions:
                list(game.legal_moves)
            return time.perf_counter() - t, len(positions)

        apply_s = best_of(args.repeats, apply_all)
        undo_s, undos = min(undo_all() for _ in range(args.repeats))
        legal_s, gens = min(legal_all() for _ in range(args.repeats))
        calib_s = best_of(args.repeats, lambda n=n_actions: calibrate(n))
        rows.append(
            {
                "game": name,
                "actions": n_actions,
                "apply/s": n_actions / apply_s,
                "undo/s": undos / undo_s,
                "legal gen/s": gens / legal_s,
                "calib/s": n_actions / calib_s,
                "apply/calib": calib_s / apply_s,
            }
        )
    return rows


def show(title: str, rows: list[dict[str, float | str]]) -> None:
    """Print one table of figures."""
    print(title)
    print(f"{'game':<11} " + " ".join(f"{c:>12}" for c in COLUMNS))
    for row in rows:
        cells = []
        for c in COLUMNS:
            value = float(row[c])
            cells.append(f"{value:>12.3f}" if value < 10 else f"{value:>12,.0f}")
        print(f"{row['game']:<11} " + " ".join(cells))


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--actions", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--build", choices=("loaded", "both"), default="both")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON only")
    args = parser.parse_args()
    rows = measure(args)
    if args.json:
        print(json.dumps(rows))
        return
    show(f"engine: {engine.BUILD}", rows)
    if args.build == "loaded" or not engine.COMPILED:
        return
    child = [sys.executable, __file__, "--json", "--build", "loaded"]
    for option in ("deals", "actions", "seed", "repeats"):
        child += [f"--{option}", str(getattr(args, option))]
    out = subprocess.run(
        child, env={**os.environ, "SAMEDEAL_PURE": "1"}, capture_output=True, text=True, check=True
    ).stdout
    pure = json.loads(out)
    show("engine: pure Python (SAMEDEAL_PURE=1), same run", pure)
    print("compiled / pure")
    for mine, theirs in zip(rows, pure, strict=True):
        ratios = "  ".join(
            f"{c} {float(mine[c]) / float(theirs[c]):.2f}x"
            for c in ("apply/s", "undo/s", "legal gen/s")
        )
        print(f"{mine['game']:<11} {ratios}")


if __name__ == "__main__":
    main()
