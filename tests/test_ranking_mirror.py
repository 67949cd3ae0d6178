"""The page's ranking (clients/web/ranking.js, for the results so far of a race under way)
is the server's one rule (server/rooms/ranking.py): on many random fields, with many ties,
node places every result where the server does."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

from protocol import RaceStatus
from server.rooms.ranking import race_key, ranked

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")

# the page's rule runs in node: a process of its own
pytestmark = [pytest.mark.skipif(NODE is None, reason="no node"), pytest.mark.integration]


@dataclass(frozen=True)
class Row:
    seat: int
    status: RaceStatus
    elapsed_ms: int | None
    moves: int
    on_foundations: int
    score: int


FINAL: list[RaceStatus] = ["won", "resigned", "timeout", "left"]


def field(rng: random.Random) -> list[Row]:
    return [
        Row(
            seat,
            status := rng.choice(FINAL),
            rng.choice([60_000, 61_000]) if status == "won" else None,
            rng.choice([90, 91]),
            52 if status == "won" else rng.choice([10, 11]),
            rng.choice([0, 50]),
        )
        for seat in range(rng.randint(1, 9))
    ]


def test_the_page_places_as_the_server_does() -> None:
    rng = random.Random(31)
    fields = [field(rng) for _ in range(300)]
    script = (
        'import { ranked } from "./clients/web/ranking.js";\n'
        'import { readFileSync } from "node:fs";\n'
        "const fields = JSON.parse(readFileSync(0, 'utf-8'));\n"
        "console.log(JSON.stringify(fields.map((rows) =>"
        " ranked(rows, (r) => r.seat).map(({ place, row }) => [place, row.seat]))));\n"
    )
    data = json.dumps([[asdict(r) for r in rows] for rows in fields])
    out = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script],
        input=data,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    page = json.loads(out.stdout)
    server = [
        [[place, r.seat] for place, r in ranked(rows, race_key, then=lambda r: r.seat)]
        for rows in fields
    ]
    assert page == server
    assert any(len({p for p, _ in f}) < len(f) for f in server)  # ties were shared
