"""``samedeal deal``, ``samedeal replay`` and ``samedeal solve CODE``: a public interface
that scripts depend on, for numbered and sealed deals.

The commands run in-process through :func:`clients.cli.main` (fast); one test runs the
installed console script.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from typing import Any

import pytest

from clients.cli import main
from engine import DealCode, InvalidMoveError, Move, new_game, replay
from engine.game import REMINDERS

SEALED = ("KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJUI", "EH1-N-ZZZZZZZZZZZZZZZZZZZZZZZZZZ")
CODES = ("EH1-N-AAAAAAF", "KL1-1-AAAAAAF", "KL1-3-AAAAAAF", *SEALED)


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, stdin: str | None = None
) -> tuple[int, str, str]:
    """Run ``samedeal ARGV...``; return the exit status, stdout and stderr."""
    old_stdin = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        status = main(list(argv))
    finally:
        sys.stdin = old_stdin
    out, err = capsys.readouterr()
    return status, out, err


def a_few_legal_moves(code: str, n: int = 12) -> list[str]:
    """``n`` legal actions of the deal, card moves preferred, one undo in the middle."""
    game = new_game(code)
    texts: list[str] = []
    for i in range(n):
        if i == n // 2:
            game.push("u")
            texts.append("u")
            continue
        legal = list(game.legal_moves)
        cards = [m for m in legal if m.kind == "m"]
        move = (cards or legal)[i % len(cards or legal)]
        game.push(move)
        texts.append(str(move))
    return texts


# ---------------------------------------------------------------- deal


@pytest.mark.parametrize("code", CODES)
def test_deal_prints_the_layout(capsys: pytest.CaptureFixture[str], code: str) -> None:
    status, out, err = run(capsys, "deal", code)
    assert status == 0 and err == ""
    game = new_game(code)
    lines = out.splitlines()
    assert lines[0].startswith(code)
    number = game.code.number
    # a sealed deal is named by its code, never by a number
    assert lines[0].endswith("sealed deal" if number is None else f"deal {number}")
    assert "score 0" in out and "moves 0" in out
    assert sum(line.startswith("t") for line in lines) == game.n_columns
    last = f"t{game.n_columns}"
    column = next(line for line in lines if line.startswith(last + " "))
    for down in game.position()["tableau"][-1]["down"]:
        assert f"({down})" in column  # face-down cards in parentheses


@pytest.mark.parametrize("code", CODES)
def test_deal_json_is_the_position(capsys: pytest.CaptureFixture[str], code: str) -> None:
    status, out, _ = run(capsys, "deal", code, "--json")
    assert status == 0
    assert json.loads(out) == new_game(code).position()


def test_deal_accepts_any_case_and_surrounding_space(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "deal", "  kl1-3-aaaaaaf\t", "--json")
    assert status == 0 and json.loads(out)["code"] == "KL1-3-AAAAAAF"


@pytest.mark.parametrize(
    ("game", "prefix"), [("easy-harp", "EH1-N-"), ("klondike", "KL1-1-"), ("klondike-3", "KL1-3-")]
)
def test_deal_random(capsys: pytest.CaptureFixture[str], game: str, prefix: str) -> None:
    status, out, _ = run(capsys, "deal", "--random", game, "--json")
    assert status == 0
    position: dict[str, Any] = json.loads(out)
    assert position["code"].startswith(prefix)
    assert DealCode.parse(position["code"]).sealed
    assert position == new_game(position["code"]).position()
    status, out, _ = run(capsys, "deal", "--random", game)
    assert status == 0 and out.startswith(prefix)
    code = DealCode.parse(out.split()[0])
    assert code.game_name == game and code.sealed
    assert out.splitlines()[0].endswith(", sealed deal") and "deal #" not in out


@pytest.mark.parametrize(
    ("code", "part"),
    [
        ("EH1-N-AAAAAAA", "number"),
        ("EH1-N-AAAAA", "number"),
        ("XX1-N-AAAAAAF", "game"),
        ("EH7-N-AAAAAAF", "ruleset"),
        ("KL1-N-AAAAAAF", "variant"),
        ("EH1N-AAAAAAF", "format"),
        ("EH1-N-ÄAAAAAF", "number"),
        ("KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJU", "number"),  # 25 letters
        ("KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJUIA", "number"),  # 27
        ("KL1-1-QXGMDZRAWCKTEPLNOHBSVYFJU1", "number"),
    ],
)
@pytest.mark.parametrize("command", ["deal", "replay", "solve"])
def test_a_bad_code_exits_2_naming_the_part(
    capsys: pytest.CaptureFixture[str], code: str, part: str, command: str
) -> None:
    status, out, err = run(capsys, command, code)
    assert status == 2 and out == ""
    assert err.startswith("samedeal: ") and f": {part}: " in err
    assert repr(code) in err
    if part == "number" and code != "EH1-N-AAAAAAA":
        assert "7 letters A-Z (a numbered deal) or 26 (a sealed deal)" in err


def test_deal_needs_a_code_or_random(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["deal"])
    assert info.value.code == 2
    with pytest.raises(SystemExit):
        main(["deal", "--random", "spider"])
    capsys.readouterr()


# ---------------------------------------------------------------- replay


@pytest.mark.parametrize("code", CODES)
def test_replay_json_is_the_final_position(capsys: pytest.CaptureFixture[str], code: str) -> None:
    moves = a_few_legal_moves(code)
    status, out, err = run(capsys, "replay", code, *moves, "--json")
    assert status == 0 and err == ""
    assert json.loads(out) == replay(code, moves).position()


@pytest.mark.parametrize("code", CODES)
def test_replay_reads_a_move_list_from_stdin(capsys: pytest.CaptureFixture[str], code: str) -> None:
    moves = a_few_legal_moves(code)
    status, out, _ = run(capsys, "replay", code, "-", "--json", stdin=" ".join(moves) + "\n")
    assert status == 0
    assert json.loads(out) == replay(code, moves).position()
    # `-` mixes with moves on the command line, in order
    status, out, _ = run(capsys, "replay", code, moves[0], "-", stdin=" ".join(moves[1:]))
    assert status == 0
    assert out.splitlines()[1].startswith(f"score {replay(code, moves).score} ")


def test_replay_prints_the_layout(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "replay", "KL1-1-AAAAAAF", "s", "S", "s")
    assert status == 0
    assert "moves 3" in out and "stock        21 cards" in out
    assert out.startswith("KL1-1-AAAAAAF  Klondike, draw one, deal 5")
    status, out, _ = run(capsys, "replay", "KL1-1-AAAAAAF")
    assert status == 0 and "moves 0" in out


def test_replay_plays_a_sealed_deal_named_by_its_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = SEALED[0].lower()
    status, out, _ = run(capsys, "replay", code, "s", "s")
    assert status == 0
    assert out.startswith(f"{SEALED[0]}  Klondike, draw one, sealed deal\n")
    assert out.splitlines()[1].startswith(f"score {replay(SEALED[0], ['s', 's']).score} ")


def test_an_illegal_move_exits_1_with_the_error_json(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "replay", "KL1-1-AAAAAAF", "s", "u", "u", "s", "--json")
    assert status == 1
    assert json.loads(out) == {
        "error": {
            "index": 2,
            "move": "u",
            "rule": "nothing-to-undo",
            "message": REMINDERS["nothing-to-undo"],
        }
    }


def test_an_illegal_move_exits_1_with_a_message(capsys: pytest.CaptureFixture[str]) -> None:
    game = new_game("EH1-N-AAAAAAF")
    wrong = next(
        Move.cards("t", i, "f", 0)
        for i in range(1, 10)
        if not game.is_legal(Move.cards("t", i, "f", 0))
    )
    status, out, err = run(capsys, "replay", "EH1-N-AAAAAAF", "s", str(wrong))
    assert status == 1 and out == ""
    assert "move 2" in err and repr(str(wrong)) in err and "[no-foundation-accepts]" in err


@pytest.mark.parametrize("bad", ["zz", "t9-t1", "t1:0-t2", "t01-t2"])
def test_an_unparsable_move_exits_1_too(capsys: pytest.CaptureFixture[str], bad: str) -> None:
    status, out, _ = run(capsys, "replay", "KL1-1-AAAAAAF", "s", bad, "s", "--json")
    assert status == 1
    with pytest.raises(InvalidMoveError) as info:
        new_game("KL1-1-AAAAAAF").parse_move(bad)
    assert json.loads(out) == {
        "error": {"index": 1, "move": bad, "rule": "notation", "message": str(info.value)}
    }


def test_an_illegal_move_read_from_stdin_is_indexed_in_the_whole_list(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, _ = run(capsys, "replay", "KL1-3-AAAAAAF", "s", "-", "--json", stdin="s\ns u a")
    assert status == 1
    error = json.loads(out)["error"]
    assert error["index"] == 4 and error["move"] == "a"
    assert error["rule"] == "auto-finish-not-offered"


# ---------------------------------------------------------------- solve


def test_solve_takes_a_sealed_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = "KL1-1-PQHZMCOLUTDHZEZILPDZKFQFUL"  # won within a few hundred nodes
    status, out, err = run(capsys, "solve", code.lower(), "--nodes", "20000", "--json")
    assert status == 0 and err == ""
    answer = json.loads(out)
    assert answer["code"] == code and answer["verdict"] == "winnable"
    assert replay(code, answer["solution"].split()).won
    status, out, _ = run(capsys, "solve", code, "--nodes", "20000")
    assert status == 0 and out.startswith(f"{code}  winnable  nodes ")


# ---------------------------------------------------------------- the console script


@pytest.mark.slow
def test_the_console_script_works() -> None:
    exe = shutil.which("samedeal")
    assert exe is not None, "the samedeal console script is not installed"
    result = subprocess.run(
        [exe, "replay", "KL1-1-AAAAAAF", "s", "s", "--json"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == replay("KL1-1-AAAAAAF", ["s", "s"]).position()
    bad = subprocess.run(
        [exe, "deal", "KL1-1-AAAAAAA"], capture_output=True, text=True, check=False, timeout=60
    )
    assert bad.returncode == 2 and "number" in bad.stderr
