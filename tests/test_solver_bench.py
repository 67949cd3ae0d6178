"""bench/solver.py's sealed deals are the spec's: ``sealed(prefix, b)`` of ``fair-deals.md``."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "solver.py"

#: the "sealed" vectors of the spec's fair-vectors.json: (prefix, bytes, code)
VECTORS = [
    ("KL1-1", "00000000000000000000000000000000", "KL1-1-AAAAAAAAAAAAAAAAAAAAAAAAAA"),
    ("KL1-3", "ffffffffffffffffffffffffffffffff", "KL1-3-HEFOMRSRXETMSVHTOMCUNGJKBV"),
    ("EH1-N", "000102030405060708090a0b0c0d0e0f", "EH1-N-AAOYLYLELZWWDXESQMVBIOYQOD"),
    ("KL1-1", "101112131415161718191a1b1c1d1e1f", "KL1-1-MFDEBNNGUZWQVPIWSQFSYEYPYT"),
]


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_solver", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(("prefix", "data", "code"), VECTORS)
def test_sealed_codes_follow_the_spec(bench: ModuleType, prefix: str, data: str, code: str) -> None:
    assert bench.sealed_code(prefix, bytes.fromhex(data)) == code


def test_the_sealed_sample_is_fixed_and_per_game(bench: ModuleType) -> None:
    codes = bench.sealed_codes("klondike", 1, 0, 5)
    assert codes == bench.sealed_codes("klondike", 1, 0, 5)
    assert bench.sealed_codes("klondike", 1, 2, 3) == codes[2:]
    assert bench.sealed_codes("klondike", 2, 0, 5) != codes
    assert all(c.startswith("KL1-1-") and len(c) == 32 for c in codes)
    assert [c[6:] for c in bench.sealed_codes("easy-harp", 1, 0, 5)] != [c[6:] for c in codes]
