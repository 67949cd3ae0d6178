"""Shared fixtures, and the two tiers of tests.

``python3 -m pytest -m "not integration"`` runs the engine and protocol tests alone, in
seconds; CI runs everything. A test is ``integration`` when it runs on an event loop (real
servers, sockets, Redis, browsers), uses the server fixtures, or is marked ``slow`` (the
solver's long searches, subprocesses).
"""

from __future__ import annotations

import inspect

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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the integration tier (see the module docstring)."""
    for item in items:
        function = getattr(item, "function", None)
        fixtures = set(getattr(item, "fixturenames", ()))
        if (
            inspect.iscoroutinefunction(function)
            or fixtures & _SERVER_FIXTURES
            or item.get_closest_marker("slow") is not None
        ):
            item.add_marker(pytest.mark.integration)
