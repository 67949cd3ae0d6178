"""The solver in either build: every winning line of a sample replays to a win in the engine,
and the verdicts of a fixed sample are the same compiled and pure.

CI runs this module on the compiled build (the whole suite) and again on the pure one (the
fast tier, ``SAMEDEAL_PURE=1``); the agreement test runs the other build in a subprocess.
Every budget is a node budget, so the verdicts are deterministic.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

import engine
from engine import DealCode, replay
from engine.solver import solve

ROOT = Path(__file__).resolve().parent.parent

#: (game, deal numbers, node budget): deals 1-6 of Klondike; of Easy Harp, six that the
#: depth-first search wins in a few thousand nodes
SAMPLE = [
    ("klondike", (1, 2, 3, 4, 5, 6), 10_000),
    ("klondike-3", (1, 2, 3, 4, 5, 6), 10_000),
    ("easy-harp", (4, 60, 72, 81, 83, 89), 6_000),
]

#: a fixed sample whose verdicts the two builds must share: lost deals proven in a few hundred
#: to a few thousand nodes, won ones, and one left unknown at its budget
AGREEMENT = [
    ("KL1-1-AAAAAAH", 20_000),  # unwinnable
    ("KL1-3-AAAAAAE", 20_000),  # unwinnable, before any node
    ("KL1-3-AAAAABE", 20_000),  # unwinnable
    ("KL1-3-AAAAAAK", 20_000),  # unwinnable
    ("KL1-1-AAAAAAF", 20_000),  # winnable
    ("KL1-3-AAAAAAB", 20_000),  # winnable
    ("EH1-N-AAAAAAC", 6_000),
    ("EH1-N-AAAAAAB", 3_000),  # unknown at this budget
]


@pytest.mark.parametrize(("game", "numbers", "nodes"), SAMPLE)
def test_every_winning_line_of_a_sample_replays_to_a_win(
    game: str, numbers: tuple[int, ...], nodes: int
) -> None:
    won = 0
    for number in numbers:
        code = DealCode.for_game(game, number)
        result = solve(code, nodes=nodes)
        if result.verdict == "winnable":
            assert result.solution is not None
            assert replay(code, result.solution).won, (str(code), engine.BUILD)
            won += 1
        else:
            assert result.solution is None
    assert won >= 3  # (so that the replays check something)


def verdicts(sample: list[tuple[str, int]]) -> list[list[object]]:
    """Each deal's verdict, nodes and solution at its budget, as JSON would give them."""
    out = []
    for code, nodes in sample:
        result = solve(code, nodes=nodes)
        out.append([code, result.verdict, result.nodes, list(result.solution or ())])
    return out


@pytest.mark.slow
def test_verdicts_agree_between_the_builds() -> None:
    import subprocess  # (here: a module that imports it is all integration tier)

    here = verdicts(AGREEMENT)
    # the other build: the sources if this one is compiled, else the compiled modules if
    # they are built (with none built, the two runs are of the same build and agree)
    other = "0" if not engine.COMPILED else "1"
    script = (
        "import json, sys; sys.path.insert(0, 'tests'); import engine; "
        "from test_solver_builds import AGREEMENT, verdicts; "
        "print(json.dumps([engine.COMPILED, verdicts(AGREEMENT)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "SAMEDEAL_PURE": other},
    ).stdout
    compiled, there = json.loads(out)
    if engine.COMPILED:
        assert not compiled
    assert there == here
    assert {v[1] for v in here} == {"winnable", "unwinnable", "unknown"}
