"""``samedeal serve --workers N`` supervises (issue 30, item 2): a worker killed with
SIGKILL is replaced — logged, after a capped back-off — while its peer goes on serving and
the port never closes; its players see their connection drop (1006) and resume on a live
worker with every acknowledged move; SIGTERM drains them all."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from helpers import until, until_server_clock
from server_fixtures import ROOT, WINS, free_port, wait_port

from clients.cli import main as cli_main
from clients.client import RaceClient
from clients.cmd_serve import RESTART_MAX, restart_delay
from engine import replay
from protocol import Ack, RaceStarting


def test_replacements_back_off_while_they_keep_dying_young() -> None:
    assert restart_delay(0) == 0.0  # a worker that lived: replaced at once
    delays = [restart_delay(n) for n in range(1, 10)]
    assert delays[:3] == [0.5, 1.0, 2.0]
    assert delays == sorted(delays) and max(delays) == RESTART_MAX


class Supervised:
    """``samedeal serve --workers 2`` as a subprocess; its stderr (the supervisor's and the
    workers' lines) collected by a thread, so the pipe never fills."""

    def __init__(self, port: int, *args: str) -> None:
        self.port = port
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "clients.cli", "serve", "--port", str(port), *args],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.decode(errors="replace"))

    @property
    def log(self) -> str:
        return "".join(self.lines)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(5)


@contextlib.contextmanager
def supervised(*args: str) -> Iterator[Supervised]:
    port = free_port()
    server = Supervised(port, *args)
    try:
        wait_port(port)
        deadline = time.monotonic() + 60
        while "workers serving" not in server.log:  # every first worker listens
            assert time.monotonic() < deadline and server.proc.poll() is None, server.log
            time.sleep(0.05)  # a poll's interval (a sync fixture: helpers.until is async)
        yield server
    finally:
        server.close()


def pid_of(client: RaceClient) -> int:
    """The pid of the worker a client is connected to (its id is ``host:pid``)."""
    return int(client.welcome.worker.rsplit(":", 1)[1])


async def connect_to(url: str, wanted: Any, tries: int = 200) -> RaceClient:
    """A connection to a worker whose pid ``wanted(pid)`` accepts (the kernel spreads new
    connections over the workers by a hash of their addresses)."""
    for _ in range(tries):
        client = await RaceClient.connect(url)
        if wanted(pid_of(client)):
            return client
        await client.close()
    raise AssertionError("no connection reached the worker wanted")


class HealthPoll:
    """GET /healthz on a thread, as fast as it answers, until stopped: what answered
    (status and body: a worker's store check may say 503 on a loaded machine, which is
    an answer all the same) and which requests got no answer at all."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.answers: list[tuple[int, str]] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        url = f"http://127.0.0.1:{self.port}/healthz"
        while not self._stop.is_set():
            try:
                with urllib.request.urlopen(url, timeout=5) as r:
                    self.answers.append((r.status, r.read().decode()))
            except urllib.error.HTTPError as exc:
                self.answers.append((exc.code, exc.read().decode()))
            except (OSError, urllib.error.URLError) as exc:
                self.failures.append(repr(exc))
            time.sleep(0.01)  # the scenario: a health check a hundred times a second

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


async def test_a_killed_worker_is_replaced_while_its_peer_serves(redis_url: str) -> None:
    code, solution = WINS["klondike"]
    moves = solution.split()
    args: tuple[str, ...] = ("--redis", redis_url, "--workers", "2", "--no-records")
    args += ("--countdown", "0.05")
    args += ("--grace", "20", "--liveness", "1.5", "--rate", "1000", "--burst", "500")
    # no solver process at start: the replacement is stopped moments after it starts, and a
    # worker stopped while its solver pool starts may print an exit-hook traceback
    # (server/tasks.py's solver_pool, reported apart)
    args += ("--no-daily-warm",)
    with supervised(*args) as server:
        url = f"ws://127.0.0.1:{server.port}"
        ann = await RaceClient.connect(url)
        doomed = pid_of(ann)
        bob = await connect_to(url, lambda pid: pid != doomed)
        survivor = pid_of(bob)
        joined = await ann.create("klondike", deal="code", code=code, name="Ann")
        await bob.join(joined.room, name="Bob")
        await ann.start()
        starting = await ann.next_event("race_starting")
        assert isinstance(starting, RaceStarting)
        await until_server_clock(starting.start_at, starting.now)
        acked: list[str] = []
        for text in moves[: len(moves) // 2]:
            reply = await ann.move(text)
            assert isinstance(reply, Ack)
            acked.append(reply.move)

        poll = HealthPoll(server.port)
        try:
            os.kill(doomed, signal.SIGKILL)
            # the dead worker's connections drop without a closing handshake
            await until(lambda: ann.closed)
            assert ann.websocket.close_code == 1006
            # its peer never stopped: Bob's connection plays on
            assert (await bob.ping()) >= 0
            # Ann reconnects at once, as a client does, and resumes on a live worker
            ann2 = await ann.reconnect(url)
            assert pid_of(ann2) != doomed
            assert ann2.view == replay(code, acked).player_view()
            for text in moves[len(moves) // 2 :]:
                reply = await ann2.move(text)
                assert isinstance(reply, Ack), reply
            assert ann2.view is not None and ann2.view["won"]
            # the supervisor says so, and starts another that serves on the same port
            await until(lambda: re.search(r"worker pid=(\d+) serving", server.log), 120)
            assert f"worker pid={doomed} exited (killed by SIGKILL)" in server.log
            replaced = await connect_to(url, lambda pid: pid not in (doomed, survivor))
            await replaced.close()
        finally:
            poll.stop()
        # the port never closed: every health check was answered but, at most, the one
        # whose connection waited in the dead worker's queue at the instant it died
        assert len(poll.answers) > 10 and len(poll.failures) <= 1, poll.failures
        assert not any("Refused" in failure for failure in poll.failures), poll.failures
        statuses = {status for status, _ in poll.answers}
        assert 200 in statuses and statuses <= {200, 503}, poll.answers

        for client in (ann2, bob):
            await client.close()
        server.proc.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(server.proc.wait, 30) == 0
    assert "Traceback" not in server.log and " ERROR " not in server.log, server.log


def test_a_worker_that_cannot_start_stops_the_others(redis_url: str) -> None:
    """At start, a worker that cannot start is not restarted in a loop: the supervisor
    stops and says so with the worker's status (here, a Redis nobody listens on)."""
    nowhere = f"redis://127.0.0.1:{free_port()}/0"
    argv = [sys.executable, "-m", "clients.cli", "serve", "--port", str(free_port())]
    result = subprocess.run(
        [*argv, "--workers", "2", "--redis", nowhere, "--no-records"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1, result.stderr
    assert "Redis cannot be reached" in result.stderr
    assert "starting another" not in result.stderr and "Traceback" not in result.stderr


def test_the_help_names_no_supervisor_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli_main(["serve", "--help"])
    assert "--ready-fd" not in capsys.readouterr().out
