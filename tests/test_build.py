"""The two builds of the engine: compiled with mypyc, or its sources (``engine/_build.py``).

These run in whichever build the process loaded; CI runs the fast tier in both. A check of
the other build runs in a subprocess with ``SAMEDEAL_PURE`` set.
"""

from __future__ import annotations

import importlib.machinery
import os
import pickle
import sys
from pathlib import Path

import pytest

import engine
from clients.cli import main
from engine import DealCode, _build, new_game
from engine.errors import IllegalMoveError, InvalidDealCodeError, InvalidMoveError
from engine.fair import secret_daily
from engine.game import Outcome
from engine.moves import Move
from engine.solver import SolveResult, solve

ROOT = Path(__file__).resolve().parent.parent


def loaded(script: str, **env: str) -> str:
    """What ``script`` prints in a fresh interpreter with ``env`` added."""
    import subprocess  # (here: a module that imports it is all integration tier)

    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
        cwd=ROOT,
    ).stdout.strip()


def test_the_build_says_what_it_loaded() -> None:
    compiled = _build.compiled_modules()
    assert ("engine.game" in compiled) == engine.COMPILED
    assert engine.BUILD.startswith("compiled" if engine.COMPILED else "pure Python")
    if not engine.COMPILED:
        assert not [m for m in compiled if m.startswith("engine.")]


@pytest.mark.slow
def test_samedeal_pure_loads_every_source() -> None:
    script = (
        "import engine, engine.solver, engine.strategy; from engine import _build; "
        "print(engine.COMPILED, engine.BUILD, _build.compiled_modules())"
    )
    assert loaded(script, SAMEDEAL_PURE="1") == "False pure Python (SAMEDEAL_PURE=1) []"
    # "0" or empty: the compiled modules where they were built
    assert loaded(script, SAMEDEAL_PURE="0").split()[0] == str(_built())


def _built() -> bool:
    """Whether a compiled build lies beside the sources (and is not stale)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    there = any(p.name.endswith(suffixes) for p in (ROOT / "engine").iterdir())
    return there and _build.stale(ROOT / "engine") is None


def test_the_pure_finder_finds_sources_and_leaves_other_modules_alone() -> None:
    finder = _build.PureFinder()
    spec = finder.find_spec("engine.game", engine.__path__)
    assert spec is not None and spec.origin == str(Path(engine.__file__).parent / "game.py")
    package = finder.find_spec("engine.solver", engine.__path__)
    assert package is not None and package.submodule_search_locations
    assert finder.find_spec("engine", None) is None  # a top-level package is never compiled
    assert finder.find_spec("json.decoder", None) is None
    assert finder.find_spec("engine.nothing_here", engine.__path__) is None


def test_a_source_newer_than_the_build_is_stale(tmp_path: Path) -> None:
    package = tmp_path / "engine"
    package.mkdir()
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    source, extension = package / "game.py", package / ("game" + suffix)
    source.write_text("")
    extension.write_bytes(b"")
    os.utime(source, (1_000, 1_000))
    os.utime(extension, (1_000, 1_000))
    assert _build.stale(package) is None
    os.utime(source, (1_010, 1_010))
    reason = _build.stale(package)
    assert reason is not None and "stale" in reason and "game.py" in reason


def test_values_that_cross_processes_pickle() -> None:
    # the server's solver pool and the benchmarks send these between processes
    move = Move.parse("t3:2-t4")
    outcome = new_game("KL1-1-AAAAAAF").push("s")
    result = solve("KL1-1-AAAAAAF", nodes=50_000)
    code = DealCode.parse("EH1-N-QXGMDZRAWCKTEPLNOHBSVYFJUI")
    day = secret_daily(bytes(32), "klondike", "2026-12-01")
    for value in (move, Move.STOCK, outcome, result, code, code.layout(), day):
        assert pickle.loads(pickle.dumps(value)) == value
    assert isinstance(outcome, Outcome) and isinstance(result, SolveResult)


def test_errors_keep_what_they_say_about_the_mistake() -> None:
    # (compiled, an exception class keeps no class attributes: each is set by __init__)
    with pytest.raises(InvalidMoveError) as bad:
        Move.parse("t9-q")
    assert bad.value.rule == "notation" and bad.value.text == "t9-q"
    with pytest.raises(IllegalMoveError) as illegal:
        new_game("KL1-1-AAAAAAF").push("f1-t1")
    assert illegal.value.rule and illegal.value.reminder in str(illegal.value)
    with pytest.raises(InvalidDealCodeError) as code:
        DealCode.parse(7)
    assert code.value.part == "code"


def test_version_names_the_build(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.strip().endswith(f"engine {engine.BUILD}")


def test_moves_and_outcomes_are_frozen_values() -> None:
    move = Move.parse("t3:2-t4")
    outcome = Outcome(move, (5,))
    for value, field in ((move, "count"), (outcome, "revealed")):
        with pytest.raises(AttributeError):
            setattr(value, field, 1)
        with pytest.raises(AttributeError):
            delattr(value, field)
    assert move == Move("m", "t", 3, 2, "t", 4) and hash(move) == hash(Move.parse("T3:2-T4"))
    assert outcome == Outcome(Move.parse("t3:2-t4"), (5,)) != Outcome(move)
    assert len({outcome, Outcome(move, (5,))}) == 1
    assert repr(outcome) == "Outcome(move=Move.parse('t3:2-t4'), revealed=(5,))"
