"""The engine is pure: no asyncio, websockets, redis or pydantic (``style.md`` rule 1)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

FORBIDDEN = ("asyncio", "websockets", "redis", "pydantic")
ENGINE = Path(__file__).resolve().parent.parent / "engine"
SOURCES = sorted(ENGINE.rglob("*.py"))


@pytest.mark.integration  # a subprocess
def test_importing_engine_loads_no_io_library() -> None:
    script = (
        "import engine, json, sys; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    loaded = set(json.loads(out))
    assert "engine" in loaded
    assert loaded.isdisjoint(FORBIDDEN), loaded & set(FORBIDDEN)


def imported_modules(path: Path) -> set[str]:
    """The top-level names of every module ``path`` imports (relative imports skipped)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value.split(".")[0])
    return names


def test_the_scan_sees_the_engine() -> None:
    assert ENGINE / "game.py" in SOURCES
    assert "hashlib" in imported_modules(ENGINE / "dealcode.py")


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ENGINE)))
def test_no_engine_module_imports_an_io_library(path: Path) -> None:
    imported = imported_modules(path)
    assert imported.isdisjoint(FORBIDDEN), imported & set(FORBIDDEN)
    assert not imported & {"server", "protocol", "clients"}
