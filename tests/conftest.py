"""Shared fixtures, and the two tiers of tests.

``python3 -m pytest -m "not integration"`` runs the engine and protocol tests alone, in
seconds; CI runs everything. A test is ``integration`` when it runs on an event loop (real
servers, sockets, Redis, browsers), uses the server fixtures, is marked ``slow`` (the
solver's long searches), or lives in a module that uses more than the engine and the
protocol (the server, the clients, a database, subprocesses).
"""

from __future__ import annotations

import inspect
import types

import pytest

# the server tests' fixtures: a real Redis, a real server on port 0, clients; the records
# tests' throw-away PostgreSQL cluster and fresh databases
pytest_plugins = ["server_fixtures", "pg_fixtures"]

_SERVER_FIXTURES = frozenset(
    {
        "server",
        "start_server",
        "redis_url",
        "redis_cluster",
        "backend_kind",
        "pg_server",
        "records_url",
    }
)


# what a module of the fast tier may use besides the engine, the protocol and the standard
# library's pure parts
_BEYOND_THE_CORE = ("server", "clients", "subprocess", "sqlalchemy", "playwright", "redis")
# pure modules of the server (no I/O, nothing but the standard library, the engine and
# orjson) that a fast test may use
_PURE_SERVER = ("server.quickplay.pairing",)


def _uses_more_than_the_core(module: types.ModuleType | None) -> bool:
    """Whether a test module imports (a name from) the server, the clients, a database,
    a browser or subprocesses."""
    if module is None:
        return False
    for value in vars(module).values():
        name = value.__name__ if isinstance(value, types.ModuleType) else None
        name = name or getattr(value, "__module__", None)
        if isinstance(name, str) and name in _PURE_SERVER:
            continue
        if isinstance(name, str) and name.split(".")[0] in _BEYOND_THE_CORE:
            return True
    return False


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the integration tier (see the module docstring)."""
    beyond: dict[str, bool] = {}
    for item in items:
        function = getattr(item, "function", None)
        fixtures = set(getattr(item, "fixturenames", ()))
        module = getattr(item, "module", None)
        key = getattr(module, "__name__", "")
        if key not in beyond:
            beyond[key] = _uses_more_than_the_core(module)
        if (
            inspect.iscoroutinefunction(function)
            or fixtures & _SERVER_FIXTURES
            or item.get_closest_marker("slow") is not None
            or beyond[key]
        ):
            item.add_marker(pytest.mark.integration)
