"""The tiers of tests/conftest.py, run by pytester on test files of their own: a test is unit
unless it needs an event loop, a service's fixture, a long search or is marked integration;
a unit test that opens a socket or starts a process fails, even if it catches the error; and
``-m unit`` does not import a module that can hold no unit test."""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = (Path(__file__).parent / "conftest.py").read_text()

# plugins the cases do not need: pytest-benchmark asks git for the commit as it starts (a
# subprocess, refused in a unit test); the others cost a second a run (the unraisable
# exception plugin's garbage collections at the end, hypothesis's setup)
PLAIN = tuple(
    f"-pno:{name}"
    for name in ("cacheprovider", "benchmark", "unraisableexception", "hypothesispytest")
)

TIERS = """
import pytest

@pytest.fixture
def redis_address(redis_url):
    return redis_url

def test_pure():
    assert sorted([2, 1]) == [1, 2]

def test_pure_with_tmp_path(tmp_path):
    (tmp_path / "x").write_text("x")

async def test_on_a_loop():
    pass

def test_through_a_fixture(redis_address):
    pass

def test_with_a_server(start_server):
    pass

@pytest.mark.slow
def test_long_search():
    pass

@pytest.mark.integration
def test_marked():
    pass
"""

IMPURE = """
import multiprocessing
import os
import socket
import subprocess

def test_connects():
    socket.create_connection(("127.0.0.1", 9))

def test_catches_the_refusal():
    try:
        socket.socket()
    except Exception:
        pass

def test_opens_a_socket_pair():  # what a new event loop does first
    socket.socketpair()

def test_runs_a_command():
    subprocess.run(["true"], check=True)

def test_starts_a_process():
    multiprocessing.Process(target=print).start()

def test_forks():
    os.fork()
"""


@pytest.fixture
def tiers(pytester: pytest.Pytester) -> pytest.Pytester:
    """A pytester whose conftest and asyncio settings are this suite's."""
    pytester.makeconftest(CONFTEST)
    pytester.makeini(
        "[pytest]\nasyncio_mode = auto\nasyncio_default_fixture_loop_scope = function\n"
    )
    return pytester


def test_a_test_is_unit_unless_it_needs_more(tiers: pytest.Pytester) -> None:
    tiers.makepyfile(test_tiers_case=TIERS)
    items, _ = tiers.inline_genitems(*PLAIN)
    unit = {item.name for item in items if item.get_closest_marker("unit")}
    integration = {item.name for item in items if item.get_closest_marker("integration")}
    assert unit == {"test_pure", "test_pure_with_tmp_path"}
    assert integration == {item.name for item in items} - unit


def test_a_unit_test_that_opens_a_socket_or_starts_a_process_fails(
    tiers: pytest.Pytester,
) -> None:
    tiers.makepyfile(test_impure_case=IMPURE)
    result = tiers.runpytest("-m", "unit", *PLAIN)
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(["*a unit test used a socket (the error was caught)*"])


NOT_IMPORTED = "raise RuntimeError('imported')\n"


def test_the_unit_tier_imports_no_module_without_a_unit_test(tiers: pytest.Pytester) -> None:
    tiers.makepyfile(
        test_async_only=NOT_IMPORTED + "async def test_on_a_loop():\n    pass\n",
        test_slow_module=NOT_IMPORTED
        + "import pytest\npytestmark = pytest.mark.slow\ndef test_search():\n    pass\n",
        test_pure=TIERS,
    )
    tiers.runpytest("-m", "unit", *PLAIN).assert_outcomes(passed=2, deselected=5)
    # any other selection imports them all (and meets the error)
    tiers.runpytest("-m", "integration", *PLAIN).assert_outcomes(errors=2)
