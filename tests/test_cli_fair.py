"""``samedeal tournament verify`` and ``samedeal daily verify``: exit 0 when it verifies,
1 when it does not (each problem printed), 2 for bad input (one line, no traceback).

Most cases run the command in-process through :func:`clients.cli.main`; a few run
``python -m clients.cli`` as a process from this worktree, stdin and all."""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

import orjson
import pytest
from tournament_fixtures import HOST, LINK_ID, T0, TID, new, play_round, with_players

from clients.cli import main
from engine import DealCode
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


def played_export(fair: Literal[1, 2]) -> dict[str, Any]:
    """A finished two-round winnable-only tournament drawn by version ``fair``, exported."""
    state: TournamentState = with_players(new(rounds=2, deals="winnable"), "a", "b")
    state.node_budget = 20_000
    state.fair = fair  # 1: as a tournament stored before sealed deals
    for _ in range(2):
        play_round(state, ["a", "b"], {"a": solution, "b": ["s", "s"]})
    disqualify(state, actor=HOST, player="b", round=2, reason="left early", now=T0)
    data: dict[str, Any] = json.loads(orjson.dumps(full_export(state)))
    return data


@pytest.fixture(scope="module")
def export() -> dict[str, Any]:
    return played_export(2)


@pytest.fixture(scope="module")
def export_v1() -> dict[str, Any]:
    """An export as the server made it before sealed deals: format ``…/1``, the round deals
    numbered (``T1``), ``"fair"`` the object of the commitment and seed, the id without its
    dash."""
    made = played_export(1)
    old = {k: v for k, v in made.items() if k not in ("fair", "draw")}
    old.update(format="samedeal-tournament/1", id=TID, fair=made["draw"])
    return old


# ---------------------------------------------------------------------- from the spec alone

PREFIXES = {"klondike": "KL1-1", "klondike-3": "KL1-3", "easy-harp": "EH1-N"}


def letters(value: int, width: int) -> str:
    """``value`` in base 26, ``A``=0, most significant first, ``width`` letters."""
    out = ""
    for _ in range(width):
        value, digit = divmod(value, 26)
        out = chr(ord("A") + digit) + out
    return out


def spec_candidate(seed: bytes, tid: str, game: str, r: int, i: int, version: int) -> str:
    """Candidate ``i`` of round ``r`` exactly as fair-deals.md words it (``T2``: sealed from
    ``h[0:16]``, the id as linked; ``T1``: deal ``1 + h[0:8] mod 999999``, no dash)."""
    if version == 2:
        h = hmac.new(seed, f"T2|{tid}|{r}|{i}".encode(), hashlib.sha256).digest()
        number = letters(int.from_bytes(h[:16], "big") % 26**26, 26)
    else:
        message = f"T1|{tid.replace('-', '')}|{r}|{i}"
        h = hmac.new(seed, message.encode(), hashlib.sha256).digest()
        number = letters(1 + int.from_bytes(h[:8], "big") % 999_999, 7)
    return f"{PREFIXES[game]}-{number}"


def spec_check(export: dict[str, Any]) -> int:
    """What a player can check with fair-deals.md and nothing of ours: the seed is the
    commitment's, and every round's deal is its recorded candidate. Returns the version."""
    version = export.get("fair", 1)
    draw = export["draw"] if isinstance(version, int) else export["fair"]
    version = version if isinstance(version, int) else 1
    seed = bytes.fromhex(draw["seed"])
    assert hashlib.sha256(seed).hexdigest() == draw["commitment"]
    game = export["settings"]["game"]
    for r in export["rounds"]:
        i = r["candidate"]
        assert r["deal"] == spec_candidate(seed, export["id"], game, r["number"], i, version)
    return int(version)


def test_both_versions_verify_from_the_spec_alone(
    export: dict[str, Any], export_v1: dict[str, Any]
) -> None:
    assert (export["fair"], export["id"]) == (2, LINK_ID)
    assert spec_check(export) == 2
    assert all(DealCode.parse(r["deal"]).sealed for r in export["rounds"])
    assert spec_check(export_v1) == 1
    assert all(DealCode.parse(r["deal"]).number for r in export_v1["rounds"])
    # the check can fail: the other version's derivation gives other deals
    with pytest.raises(AssertionError):
        spec_check({**export, "fair": 1})


# ---------------------------------------------------------------------- tournament verify


def test_tournament_verify_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, export: dict[str, Any]
) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(orjson.dumps(export))
    status, out, err = run(capsys, "tournament", "verify", str(path))
    assert (status, err) == (0, "")
    assert out.startswith(f"verified: tournament {LINK_ID}")
    assert "rounds drawn by fair deals version 2 (sealed deals)" in out
    first = export["rounds"][0]
    assert f"round 1: {first['deal']} (candidate {first['candidate']}, winning line" in out
    assert "4 results replayed" in out
    status, out, _ = run(capsys, "tournament", "verify", str(path), "--json")
    assert status == 0
    assert json.loads(out) == {"verified": True, "tournament": LINK_ID, "problems": []}


def test_an_export_made_before_sealed_deals_still_verifies(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, export_v1: dict[str, Any]
) -> None:
    path = tmp_path / "export.json"
    path.write_bytes(orjson.dumps(export_v1))
    status, out, err = run(capsys, "tournament", "verify", str(path))
    assert (status, err) == (0, ""), out
    assert "rounds drawn by fair deals version 1 (numbered deals" in out
    # read as version 2 its rounds are other deals: the version is what is checked
    relabelled = {k: v for k, v in export_v1.items() if k != "fair"}
    relabelled.update(format="samedeal-tournament/2", fair=2, draw=export_v1["fair"], id=LINK_ID)
    path.write_bytes(orjson.dumps(relabelled))
    status, out, _ = run(capsys, "tournament", "verify", str(path))
    assert status == 1 and "problem: round 1" in out


def test_tournament_verify_tampered(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, export: dict[str, Any]
) -> None:
    bad = json.loads(json.dumps(export))
    bad["draw"]["seed"] = "22" * 32
    score = bad["rounds"][0]["results"]["a"]["score"]
    bad["rounds"][0]["results"]["a"]["score"] = score + 1
    path = tmp_path / "tampered.json"
    path.write_bytes(orjson.dumps(bad))
    status, out, err = run(capsys, "tournament", "verify", str(path))
    assert status == 1 and err == ""
    problems = [line for line in out.splitlines() if line.startswith("problem: ")]
    assert len(problems) == 3
    assert "commitment" in problems[0] and f"round 1, a: score is {score + 1}" in problems[1]
    assert problems[2] == (
        f"problem: standings: a's rounds[0].score is {score}, the results give {score + 1}"
    )
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


def sealed_day(vector: dict[str, Any], candidate: int = 0) -> dict[str, str]:
    """A version 2 day's reveal from ``fair-vectors.json`` (its candidate 0 was committed)."""
    return {
        "game": vector["game"],
        "date": vector["date"],
        "code": vector["candidates"][candidate],
        "salt": vector["salt_hex"],
        "commitment": vector["commitment_of_candidate_0"],
    }


def test_daily_verify_a_sealed_day(capsys: pytest.CaptureFixture[str]) -> None:
    vectors = json.loads((ROOT / "docs/spec/fair-vectors.json").read_text(encoding="utf-8"))
    for vector in vectors["daily"]:
        reveal = sealed_day(vector)
        assert DealCode.parse(reveal["code"]).sealed
        status, out, err = run(capsys, "daily", "verify", *options(reveal))
        assert (status, err) == (0, "")
        assert out == (
            f"verified: the {reveal['game']} of {reveal['date']} was {reveal['code']}, "
            "as committed\n"
        )
        status, out, _ = run(capsys, "daily", "verify", *options(sealed_day(vector, 1)))
        assert status == 1 and "not the commitment" in out
    # a sealed code a letter short is bad input, not a mismatch
    short = sealed_day(vectors["daily"][0])
    short["code"] = short["code"][:-1]
    status, out, err = run(capsys, "daily", "verify", *options(short))
    assert status == 2 and out == ""
    one_line_error(err)
    assert "7 letters A-Z (a numbered deal) or 26 (a sealed deal)" in err


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
