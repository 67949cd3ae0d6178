"""A throw-away PostgreSQL cluster for the records tests (and ``bench/records.py``).

``initdb`` into a temporary directory, ``postgres`` on a free port on 127.0.0.1, trust
authentication on loopback only, killed at the end. PostgreSQL refuses to run as root, as
the tests and CI do: it then runs as the ``postgres`` system user (or ``nobody``), owning
its directory. Tests that need it are skipped only when PostgreSQL is not installed.

``records_url`` gives each test a fresh, empty database: a new SQLite file, or a new
database on the session's cluster.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["find_pg_bin", "new_pg_database", "pg_cluster", "pg_server", "records_url"]

_RUN_AS = ("postgres", "nobody")


def find_pg_bin() -> Path | None:
    """The directory of ``initdb`` and ``postgres``, or ``None`` if not installed."""
    candidates = [Path("/usr/lib/postgresql/15/bin")]
    pg_config = shutil.which("pg_config")
    if pg_config:
        with contextlib.suppress(OSError, subprocess.CalledProcessError):
            out = subprocess.run(
                [pg_config, "--bindir"], capture_output=True, text=True, check=True
            )
            candidates.append(Path(out.stdout.strip()))
    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)
    for directory in candidates:
        if (directory / "initdb").is_file() and (directory / "postgres").is_file():
            return directory
    return None


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _user() -> pwd.struct_passwd | None:
    """The user to run PostgreSQL as when we are root (``None``: ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in _RUN_AS:
        with contextlib.suppress(KeyError):
            return pwd.getpwnam(name)
    raise RuntimeError("running as root and no 'postgres' or 'nobody' user to run PostgreSQL")


@contextlib.contextmanager
def pg_cluster(bindir: Path, *, durable: bool = False) -> Iterator[str]:
    """Start a cluster; yields the URL ``postgresql://postgres@127.0.0.1:PORT/postgres``.
    ``durable``: fsync on, as in production (benchmarks); tests run without it."""
    user = _user()
    workdir = Path(tempfile.mkdtemp(prefix="samedeal-pg-"))
    data = workdir / "data"
    prefix: list[str] = []
    if user is not None:
        os.chown(workdir, user.pw_uid, user.pw_gid)
        prefix = ["runuser", "-u", user.pw_name, "--"]
    port = _free_port()
    proc: subprocess.Popen[bytes] | None = None
    try:
        initdb = [str(bindir / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*prefix, *initdb, "-E", "UTF8", "--no-locale", "--no-sync"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        settings = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(workdir),
            "max_connections": "200",
        }
        if not durable:
            # a test cluster need not survive a power cut, only our processes dying
            settings.update(fsync="off", full_page_writes="off")
        options = [arg for k, v in settings.items() for arg in ("-c", f"{k}={v}")]
        proc = subprocess.Popen(
            [*prefix, str(bindir / "postgres"), "-D", str(data), "-p", str(port), *options],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        _wait_ready(bindir, port, proc)
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_ready(bindir: Path, port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while True:
        ready = subprocess.run(
            [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-q"],
            check=False,
        )
        if ready.returncode == 0:
            return
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL did not start on port {port}")
        time.sleep(0.1)  # a poll's interval (a sync fixture: helpers.until is async)


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A throw-away PostgreSQL cluster for the session: the URL of its ``postgres``
    database (skips the test when PostgreSQL is not installed)."""
    bindir = find_pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    with pg_cluster(bindir) as url:
        yield url


_counter = iter(range(1, 1_000_000))


def new_pg_database(server_url: str) -> str:
    """Create an empty database on the cluster; its URL."""
    import asyncio

    import asyncpg

    name = f"t{os.getpid()}_{next(_counter)}"

    async def create() -> None:
        conn = await asyncpg.connect(server_url)
        try:
            await conn.execute(f'CREATE DATABASE "{name}"')
        finally:
            await conn.close()

    asyncio.run(create())
    return server_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["sqlite", "postgresql"])
def records_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh empty database, once on SQLite and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite+aiosqlite:///{tmp_path / 'samedeal.db'}"
    server_url: str = request.getfixturevalue("pg_server")
    return new_pg_database(server_url)
