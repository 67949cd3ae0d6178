"""A worker's solver process ends with the worker, even when the worker is SIGKILLed (it
cannot stop its pool then): a real process, a real pool, a real kill."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

WORKER = """
import os, sys, time
from server.tasks import solver_pool
pool = solver_pool()
print(pool.submit(os.getpid).result(timeout=60), flush=True)
time.sleep(120)
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
            time.sleep(0.1)
        assert not alive(child)
    finally:
        worker.kill()
        worker.wait(10)
