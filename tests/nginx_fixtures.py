"""deploy/nginx.conf as shipped, run in a real nginx in front of test workers: only its
addresses change — the replicas' ``server server:8765`` lines become the workers' loopback
ports, and its ``listen`` a free loopback port."""

from __future__ import annotations

import contextlib
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

from server_fixtures import ROOT, wait_port

__all__ = ["NGINX", "nginx", "shipped_config"]

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
REPLICA = "server server:8765 max_fails=1 fail_timeout=5s;"


def shipped_config(listen: int, workers: list[int]) -> str:
    """deploy/nginx.conf with the workers' and the balancer's loopback addresses."""
    text = (ROOT / "deploy" / "nginx.conf").read_text()
    assert text.count(REPLICA) == 2 and text.count("listen 8765;") == 1
    replicas = "\n        ".join(
        REPLICA.replace("server:8765", f"127.0.0.1:{port}") for port in workers
    )
    return text.replace(REPLICA, replicas).replace("listen 8765;", f"listen 127.0.0.1:{listen};")


@contextlib.contextmanager
def nginx(workdir: Path, listen: int, workers: list[int]) -> Iterator[None]:
    """nginx in the foreground with the shipped configuration, until the block ends."""
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    conf = workdir / "nginx.conf"
    conf.write_text(shipped_config(listen, workers))
    globals_ = f"daemon off; pid {workdir}/nginx.pid; error_log {workdir}/logs/error.log;"
    proc = subprocess.Popen(
        [NGINX, "-p", f"{workdir}/", "-c", str(conf), "-g", globals_],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,  # it logs to logs/error.log in ``workdir``
    )
    try:
        wait_port(listen, timeout=15)
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
