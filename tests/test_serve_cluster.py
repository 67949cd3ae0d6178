"""``samedeal serve --redis redis+cluster://… --durability …``: the command line of issue 20,
run as the operator runs it (subprocesses on a real Redis and a real Redis Cluster)."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import until_race_starts
from server_fixtures import ROOT, LocalCluster, free_port, http_get, wait_port

from clients.client import RaceClient
from protocol import Ack


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--redis", "redis+cluster://"], "not a Redis Cluster URL"),
        (["--redis", "redis+cluster://127.0.0.1"], "HOST:PORT"),
        (["--redis", "redis+cluster://127.0.0.1:7000/2"], "database 0 only"),
        (["--durability", "replica"], "needs --redis"),
        (["--redis", "redis://127.0.0.1:6379/0", "--durability", "disk"], "invalid choice"),
    ],
)
def test_a_bad_cluster_or_durability_value_is_one_line_and_exit_2(
    args: list[str], words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from clients.cli import main

    try:
        code = main(["serve", *args])  # checked before anything starts
    except SystemExit as exc:  # argparse's own checks
        assert isinstance(exc.code, int)
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and words in err, err


def _serve(*args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "clients.cli", "serve", "--no-records", "--port", "0", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_a_redis_unfit_for_the_durability_is_one_line_and_exit_1(redis_url: str) -> None:
    """The session's Redis runs without an append-only file and without replicas."""
    for level, words in (("aof", "appendfsync always"), ("replica", "no replica")):
        result = _serve("--redis", redis_url, "--durability", level)
        assert result.returncode == 1, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0] and "Traceback" not in result.stderr


@pytest.mark.slow
def test_workers_on_a_cluster_share_rooms(redis_cluster: LocalCluster, tmp_path: Path) -> None:
    """``--workers 2`` on a cluster: a room made through one worker is played through the
    other; the workers say what they run on; SIGTERM stops them all cleanly."""
    port = free_port()
    argv = ["serve", "--redis", redis_cluster.url, "--workers", "2", "--port", str(port)]
    argv += ["--data", str(tmp_path)]  # records (and their kept writes) on the cluster too
    said = "redis: cluster of 3 primaries, durability replica"
    err_path = tmp_path / "stderr.txt"
    with err_path.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "clients.cli", *argv, "--countdown", "0.05"],
            cwd=ROOT,
            stderr=err,
        )
    try:
        wait_port(port)
        # both workers up (each proves the day's deals and opens the records at start: the
        # second may come after the first serves)
        deadline = time.monotonic() + 60
        while err_path.read_text().count(said) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # a poll's interval (a sync test: helpers.until is async)

        async def scenario() -> set[str]:
            url = f"ws://127.0.0.1:{port}"
            host = await RaceClient.connect(url)
            joined = await host.create("klondike")
            guests = [await RaceClient.connect(url) for _ in range(6)]
            for guest in guests:
                await guest.join(joined.room, role="spectator")
            player = await RaceClient.connect(url)
            await player.join(joined.room)
            await host.start()
            await until_race_starts(player)
            assert isinstance(await player.move("s"), Ack)
            for guest in guests:
                await guest.next_event("progress")
                await guest.close()
            await player.close()
            await host.close()
            return {c.welcome.worker for c in [host, player, *guests]}

        workers = asyncio.run(scenario())
        assert 1 <= len(workers) <= 2
        assert http_get(port, "/healthz")[0] == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = err_path.read_text()
    assert " ERROR " not in log and "Traceback" not in log, log
    assert log.count(said) == 2, log
