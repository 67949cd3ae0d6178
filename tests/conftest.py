"""Shared fixtures, and the two tiers of tests.

``python3 -m pytest -m unit`` runs every test of pure logic (the engine, the protocol, room
updates, scoring, standings, offers, frames, entries…) in seconds; ``python3 -m pytest -q``
runs everything. The tier is chosen by what a test needs, not by what its module imports. A
test is ``integration`` when it runs on an event loop (``async def``), uses a fixture that
starts something (a server, Redis, PostgreSQL, a browser: :data:`SERVICE_FIXTURES`, directly
or through another fixture), is marked ``slow`` (a long search) or is marked
``integration`` itself (a test that starts the command line in a subprocess, say); every
other test is ``unit``, so ``-m "not integration"`` selects the same tests as ``-m unit``.

A unit test is held to it: while it runs, opening a socket (an event loop opens one too),
starting a subprocess or forking fails the test, even when the code under test catches the
error. ``-m unit`` does not even import a test module that can hold no unit test (a module
marked slow or integration, or one of ``async def`` tests only).
"""

from __future__ import annotations

import ast
import inspect
import multiprocessing.process
import os
import socket
import subprocess
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

# the server tests' fixtures: a real Redis, a real server on port 0, clients; the records
# tests' throw-away PostgreSQL cluster and fresh databases; pytester runs this file's tiers
# on test files of its own (test_tiers.py)
pytest_plugins = ["server_fixtures", "pg_fixtures", "pytester"]

SERVICE_FIXTURES = frozenset(
    {
        "server",
        "start_server",
        "redis_url",
        "redis_cluster",
        "store_kind",
        "pg_server",
        "records_url",
        "browser",
    }
)
"""The fixtures that start a service (or choose one to start): a test using any of them,
directly or through another fixture, is in the integration tier."""


def _needs_integration(item: pytest.Item) -> bool:
    """Whether ``item`` needs more than the unit tier allows (see the module docstring)."""
    return (
        inspect.iscoroutinefunction(getattr(item, "function", None))
        or bool(SERVICE_FIXTURES.intersection(getattr(item, "fixturenames", ())))
        or item.get_closest_marker("slow") is not None
        or item.get_closest_marker("integration") is not None
    )


def _may_hold_unit_tests(path: Path) -> bool:
    """Whether the test module at ``path`` may hold a unit test, read from its source: not
    when a module mark makes every test slow or integration, nor when every test function
    in it is ``async def``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            marks = {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)}
            if marks & {"slow", "integration"}:
                return False
    return any(
        (isinstance(node, ast.FunctionDef) and node.name.startswith("test"))
        or (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))
        for node in tree.body
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With ``-m unit`` alone, a test module that can hold no unit test is not imported at
    all (its imports are a good part of the tier's time: numpy, a browser driver, the
    modules themselves)."""
    if (
        config.getoption("markexpr") == "unit"
        and collection_path.suffix == ".py"
        and collection_path.name.startswith("test_")
        and not _may_hold_unit_tests(collection_path)
    ):
        return True
    return None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test ``unit`` or ``integration`` (see the module docstring)."""
    for item in items:
        if _needs_integration(item):
            item.add_marker(pytest.mark.integration)
        else:
            item.add_marker(pytest.mark.unit)


class UnitTierError(AssertionError):
    """A unit test tried to open a socket, start a process or fork."""


_REFUSED = pytest.StashKey[list[str]]()
"""What a unit test was refused, kept on its item."""


@pytest.fixture(autouse=True)
def _unit_tests_stay_pure(request: pytest.FixtureRequest) -> Iterator[None]:
    """In a unit test, refuse sockets, subprocesses and forks (see the module docstring)."""
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    refused_so_far = request.node.stash.setdefault(_REFUSED, [])

    def refuse(what: str) -> NoReturn:
        refused_so_far.append(what)
        raise UnitTierError(
            f"a unit test may not use {what}: mark it integration (see tests/conftest.py)"
        )

    class RefusedSocket(socket.socket):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            refuse("a socket")

    def refusing(what: str) -> Any:
        return lambda *args, **kwargs: refuse(what)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket, "socket", RefusedSocket)
        patch.setattr(subprocess, "Popen", refusing("a subprocess"))
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system"):
            patch.setattr(os, name, refusing(f"os.{name}"))
        patch.setattr(multiprocessing.process.BaseProcess, "start", refusing("a process"))
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item,
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A unit test that passed although it was refused a socket or a process (the code under
    test caught the error) fails all the same."""
    report = yield
    refused = item.stash.get(_REFUSED, [])
    if report.when == "call" and report.passed and refused:
        report.outcome = "failed"
        report.longrepr = (
            f"a unit test used {', '.join(refused)} (the error was caught): mark it integration"
        )
    return report
