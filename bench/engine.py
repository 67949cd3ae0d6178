"""Engine throughput: parse + validate + apply, undo, and legal-move generation.

Random legal playthroughs (with some undos) are generated first; then the timed loops replay
them from their move texts, exactly as the server does for every move it receives. Each figure
is printed beside a calibration loop measured in the same run (plain list and dict work of
the same count), because these machines are shared and noisy: compare ratios across runs.

    python3 bench/engine.py [--deals N] [--actions N] [--seed S]
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and its name would shadow the
# `engine` package: drop that entry.
if sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
    del sys.path[0]

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


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=30)
    parser.add_argument("--actions", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    gc.disable()  # collector pauses are noise here; the engine allocates little anyway
    print(
        f"{'game':<11} {'actions':>8} {'apply/s':>10} {'undo/s':>10} "
        f"{'legal gen/s':>12} {'calib/s':>10} {'apply/calib':>11}"
    )
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
        print(
            f"{name:<11} {n_actions:>8} {n_actions / apply_s:>10,.0f} {undos / undo_s:>10,.0f} "
            f"{gens / legal_s:>12,.0f} {n_actions / calib_s:>10,.0f} "
            f"{calib_s / apply_s:>11.3f}"
        )


if __name__ == "__main__":
    main()
