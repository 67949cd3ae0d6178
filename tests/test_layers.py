"""The package's layering: dependencies point one way (engine <- protocol <- server,
clients), no import cycle inside ``server``, and ``protocol`` does no I/O."""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
IO_LIBRARIES = ("asyncio", "websockets", "redis", "socket", "sqlalchemy", "aiosqlite", "asyncpg")


def _module_name(path: Path) -> str:
    """The dotted name of the module at ``path`` (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _imports(path: Path) -> frozenset[str]:
    """The modules ``path`` imports at run time (``TYPE_CHECKING`` blocks left out), as
    dotted names; relative imports resolved from the module's own package (``from . import
    x`` names both the package and ``package.x``, whichever is a module). Parsed once for
    all the tests here."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skip.update(id(n) for n in ast.walk(node))
    name = _module_name(path)
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[: len(here) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)
    return frozenset(found)


def _graph(package: str) -> dict[str, set[str]]:
    """Every module of ``package`` and its subpackages -> the modules of it that it imports."""
    modules = {_module_name(p): p for p in (ROOT / package).rglob("*.py")}
    return {
        # a module's own packages are left out: ``from . import sibling`` loads them first
        name: {m for m in _imports(path) if m in modules and not name.startswith(f"{m}.")} - {name}
        for name, path in modules.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


@pytest.mark.parametrize("package", ["server", "protocol", "clients"])
def test_no_import_cycle(package: str) -> None:
    graph = _graph(package)
    assert graph, package
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_dependencies_point_one_way() -> None:
    for path in (ROOT / "protocol").rglob("*.py"):
        tops = {m.split(".")[0] for m in _imports(path)}
        assert not tops & {"server", "clients"}, path
    for path in (ROOT / "server").rglob("*.py"):
        tops = {m.split(".")[0] for m in _imports(path)}
        assert "clients" not in tops, path


@pytest.mark.integration  # a subprocess
def test_importing_protocol_loads_no_io_library() -> None:
    """(pydantic_core itself imports asyncio, so the run-time check names the network and
    storage libraries; the source check below covers asyncio and sockets.)"""
    io_packages = {"websockets", "redis", "hiredis", "uvloop", "sqlalchemy", "aiosqlite", "asyncpg"}
    script = (
        "import protocol, protocol.schema, json, sys; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout
    loaded = set(json.loads(out))
    assert "protocol" in loaded
    assert loaded.isdisjoint(io_packages), loaded & io_packages


@pytest.mark.parametrize("path", sorted((ROOT / "protocol").glob("*.py")), ids=lambda p: p.name)
def test_no_protocol_module_imports_an_io_library(path: Path) -> None:
    tops = {m.split(".")[0] for m in _imports(path)}
    assert tops.isdisjoint(IO_LIBRARIES), tops & set(IO_LIBRARIES)
