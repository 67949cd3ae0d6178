"""A worker's solver process ends with the worker, even when the worker is SIGKILLed (it
cannot stop its pool then): a real process, a real pool, a real kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# real processes: the integration tier
pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parent.parent

WORKER = """
import os, sys, time
from server.tasks import solver_pool
pool = solver_pool()
print(pool.submit(os.getpid).result(timeout=60), flush=True)
time.sleep(120)  # the scenario: alive until the test kills it
"""


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: it has exited, waiting to be reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_the_solver_process_ends_when_its_worker_is_killed() -> None:
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert worker.stdout is not None
        child = int(worker.stdout.readline())
        assert child != worker.pid and alive(child)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(10)
        for _ in range(100):  # the child looks for its parent every second: 10 s at most
            if not alive(child):
                break
            time.sleep(0.1)  # a poll's interval (a sync test: helpers.until is async)
        assert not alive(child)
    finally:
        worker.kill()
        worker.wait(10)


STOPPING = """
import time
from server.tasks import solver_pool, stop_pool
for _ in range(4):
    pool = solver_pool()
    search = pool.submit(time.sleep, 60)  # a long search, cut short
    stop_pool(pool)  # the process still starting, as a worker stopped at once
pool = solver_pool()
pool.submit(time.sleep, 0).result(timeout=60)
pool.submit(time.sleep, 60)  # a search under way
stop_pool(pool)
"""


def test_a_stopped_pool_lets_the_worker_exit_at_once_and_cleanly() -> None:
    # the interpreter's exit hook once wrote to the pipe a pool's ending thread was closing:
    # a traceback in the worker's log (CPython 3.11); and a search under way is not waited for
    done = subprocess.run(
        [sys.executable, "-c", STOPPING], cwd=ROOT, capture_output=True, text=True, timeout=50
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr


NICE = """
import os
from server.tasks import solver_pool, stop_pool
pool = solver_pool(nice=7)
search = pool.submit(os.getpriority, os.PRIO_PROCESS, 0).result(timeout=60)
print(os.getpriority(os.PRIO_PROCESS, 0), search)
stop_pool(pool)
"""


def test_a_pool_asked_to_be_nice_runs_its_searches_at_a_lower_priority() -> None:
    """Proving deals ahead of need (the quick-play pools' buffer) yields the CPU to the
    worker: the search process is niced, the worker is not."""
    done = subprocess.run(
        [sys.executable, "-c", NICE], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    worker, search = map(int, done.stdout.split())
    assert search == min(19, worker + 7)
