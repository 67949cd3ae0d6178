"""``samedeal tournament verify`` and ``samedeal daily verify``: exit 0 when it verifies,
1 when it does not (each problem printed), 2 for bad input (one line, no traceback).

Most cases run the command in-process through :func:`clients.cli.main`; a few run
``python -m clients.cli`` as a process from this worktree, stdin and all."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest
from tournament_fixtures import HOST, T0, new, play_round, with_players

from clients.cli import main
from engine.fair import secret_daily
from engine.solver import solve
from server.tournaments import TournamentState, disqualify, full_export

ROOT = Path(__file__).resolve().parent.parent
KEY = bytes(range(32))
KLONDIKE_DAY = {
    "game": "klondike",
    "date": "2025-01-01",
    "code": "KL1-1-AACEGOQ",
    "salt": "523335137bb7f8d3a29891b61909dad58dbe4111f3830e085193d622a1c30fe1",
    "commitment": "b95dbf0085e32c122bcd972cdeb42ea2b2e7f19fc12aa8feae347c1cbb1f6bf0",
}


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, stdin: bytes | None = None
) -> tuple[int, str, str]:
    """``samedeal ARGV...`` in-process: the exit status, stdout and stderr."""
    old = sys.stdin
    if stdin is not None:
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin))
    try:
        try:
            status = main(list(argv))
        except SystemExit as exc:  # argparse's own refusals
            status = int(exc.code or 0)
    finally:
        sys.stdin = old
    out, err = capsys.readouterr()
    return status, out, err


def process(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """``python -m clients.cli ARGV...`` as a process, from this worktree."""
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", *argv],
        cwd=ROOT,
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def one_line_error(err: str) -> None:
    assert err.startswith("samedeal: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def solution(code: str) -> list[str]:
    result = solve(code, nodes=50_000)
    assert result.solution is not None
    return list(result.solution)


@pytest.fixture(scope="module")
def export() -> dict[str, Any]:
    state: TournamentState = with_players(new(rounds=2, deals="winnable"), "a", "b")
    state.node_budget = 20_000
    for _ in range(2):
        play_round(state, ["a", "b"], {"a": solution, "b": ["s", "s"]})
    disqualify(state, actor=HOST, player="b", round=2, reason="left early", now=T0)
    data: dict[str, Any] = json.loads(orjson.dumps(full_export(state)))
    return data


# ---------------------------------------------------------------------- tournament verify


def test_tournament_verify_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, export: dict[str, Any]
) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(orjson.dumps(export))
    status, out, err = run(capsys, "tournament", "verify", str(path))
    assert (status, err) == (0, "")
    assert out.startswith("verified: tournament K7QF2M")
    assert "round 1: KL1-1-AABETTP (candidate 0, winning line replayed)" in out
    assert "4 results replayed" in out
    status, out, _ = run(capsys, "tournament", "verify", str(path), "--json")
    assert status == 0
    assert json.loads(out) == {"verified": True, "tournament": "K7QF2M", "problems": []}


def test_tournament_verify_tampered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, export: dict[str, Any]
) -> None:
    bad = json.loads(json.dumps(export))
    bad["fair"]["seed"] = "22" * 32
    bad["rounds"][0]["results"]["a"]["score"] += 1
    path = tmp_path / "tampered.json"
    path.write_bytes(orjson.dumps(bad))
    status, out, err = run(capsys, "tournament", "verify", str(path))
    assert status == 1 and err == ""
    problems = [line for line in out.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 3
    assert "commitment" in problems[0] and "round 1, a: score is 657" in problems[1]
    assert problems[2] == "problem: standings: a's rounds[0].score is 656, the results give 657"
    assert out.splitlines()[-1].startswith("NOT verified")
    status, out, _ = run(capsys, "tournament", "verify", str(path), "--json")
    verdict = json.loads(out)
    assert status == 1 and verdict["verified"] is False and len(verdict["problems"]) == 3


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", "not JSON"),
        (b"{nope", "not JSON"),
        (b"[]", "not an object"),
        (b'{"format": "samedeal-room/1"}', "not a tournament export"),
    ],
)
def test_tournament_verify_bad_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, content: bytes, words: str
) -> None:
    path = tmp_path / "x.json"
    path.write_bytes(content)
    status, out, err = run(capsys, "tournament", "verify", str(path))
    assert status == 2 and out == ""
    one_line_error(err)
    assert words in err


def test_tournament_verify_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, err = run(capsys, "tournament", "verify", str(tmp_path / "none.json"))
    assert status == 2 and out == ""
    one_line_error(err)
    assert "cannot read" in err


@pytest.mark.integration  # a subprocess
def test_tournament_verify_as_a_process(export: dict[str, Any]) -> None:
    done = process("tournament", "verify", "-", stdin=orjson.dumps(export))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("verified:")
    bad = json.loads(json.dumps(export))
    bad["rounds"][1]["deal"] = bad["rounds"][0]["deal"]
    done = process("tournament", "verify", "-", stdin=orjson.dumps(bad))
    assert done.returncode == 1 and "problem: round 2" in done.stdout
    done = process("tournament", "verify", "-", stdin=b"garbage")
    assert done.returncode == 2 and done.stdout == ""
    one_line_error(done.stderr)


# ---------------------------------------------------------------------- daily verify


def options(reveal: dict[str, str]) -> list[str]:
    return [f"--{k}={v}" for k, v in reveal.items()]


def test_daily_verify_options(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "daily", "verify", *options(KLONDIKE_DAY))
    assert (status, err) == (0, "")
    assert out == "verified: the klondike of 2025-01-01 was KL1-1-AACEGOQ, as committed\n"


def test_daily_verify_a_served_reveal(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    reveal = secret_daily(KEY, "easy-harp", "2025-06-15").reveal()
    path = tmp_path / "reveal.json"
    path.write_bytes(orjson.dumps(reveal))
    assert run(capsys, "daily", "verify", str(path))[0] == 0
    assert run(capsys, "daily", "verify", "-", stdin=orjson.dumps(reveal))[0] == 0


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"code": "KL1-1-AABMMRV"}, "not the commitment"),  # candidate 1 of that day
        ({"salt": "00" * 32}, "not the commitment"),
        ({"commitment": "ab" * 32}, "not the commitment"),
        ({"game": "easy-harp"}, "not of easy-harp"),
    ],
)
def test_daily_verify_refuses_a_wrong_reveal(
    capsys: pytest.CaptureFixture[str], change: dict[str, str], problem: str
) -> None:
    status, out, err = run(capsys, "daily", "verify", *options({**KLONDIKE_DAY, **change}))
    assert status == 1 and err == ""
    assert problem in out and out.splitlines()[-1].startswith("NOT verified")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"game": "klondike-3"}, "no daily"),
        ({"date": "01/01/2025"}, "not a date"),
        ({"code": "KL1-1-AAAAAAA"}, "invalid deal code"),
        ({"salt": "xyz"}, "a salt is not hex"),
        ({"salt": "00" * 31}, "a salt must be 32 bytes"),
        ({"commitment": "12"}, "commitment must be 64 hex digits"),
    ],
)
def test_daily_verify_bad_input(
    capsys: pytest.CaptureFixture[str], change: dict[str, str], words: str
) -> None:
    status, out, err = run(capsys, "daily", "verify", *options({**KLONDIKE_DAY, **change}))
    assert status == 2 and out == ""
    one_line_error(err)
    assert words in err


def test_daily_verify_bad_reveals(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "reveal.json"
    cases: list[tuple[list[str], bytes | None, str]] = [
        (["daily", "verify"], None, "lacks game"),
        (["daily", "verify", "--game", "klondike"], None, "lacks date"),
        (["daily", "verify", str(path), "--game", "klondike"], b"{}", "not both"),
        (["daily", "verify", str(path)], b"[1]", "a JSON object"),
        (["daily", "verify", str(path)], b"{", "not JSON"),
        (["daily", "verify", str(path)], orjson.dumps({**KLONDIKE_DAY, "salt": 5}), "text"),
        (["daily", "verify", str(tmp_path / "none")], None, "cannot read"),
        (["daily", "klondike", "--code", "KL1-1-AACEGOQ"], None, "go with verify"),
    ]
    for argv, content, words in cases:
        if content is not None:
            path.write_bytes(content)
        status, out, err = run(capsys, *argv)
        assert status == 2 and out == "", argv
        one_line_error(err)
        assert words in err, (argv, err)


@pytest.mark.integration  # a subprocess
def test_daily_verify_as_a_process() -> None:
    done = process("daily", "verify", "-", stdin=orjson.dumps(KLONDIKE_DAY))
    assert done.returncode == 0 and done.stdout.startswith("verified:"), done.stderr
    wrong = {**KLONDIKE_DAY, "code": "KL1-1-AABMMRV"}
    done = process("daily", "verify", *options(wrong))
    assert done.returncode == 1 and "problem:" in done.stdout
    done = process("daily", "verify", *options({**KLONDIKE_DAY, "date": "tomorrow"}))
    assert done.returncode == 2 and done.stdout == ""
    one_line_error(done.stderr)
