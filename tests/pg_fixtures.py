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
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = [
    "PgCluster",
    "find_pg_bin",
    "new_pg_database",
    "pg_cluster",
    "pg_server",
    "records_url",
]

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


class PgCluster:
    """A throw-away PostgreSQL cluster on a free port of 127.0.0.1, in a temporary
    directory: :meth:`start` it, :meth:`kill` its postmaster (SIGKILL, as a crash), start
    it again on the same port and data (it recovers from its log), :meth:`stop` it for
    good. ``durable``: fsync on, as in production (benchmarks); tests run without it."""

    def __init__(self, bindir: Path, *, durable: bool = False) -> None:
        self.bindir = bindir
        self.durable = durable
        self.user = _user()
        self.workdir = Path(tempfile.mkdtemp(prefix="samedeal-pg-"))
        self.data = self.workdir / "data"
        self.port = _free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self._prefix: list[str] = []
        if self.user is not None:
            os.chown(self.workdir, self.user.pw_uid, self.user.pw_gid)
            self._prefix = ["runuser", "-u", self.user.pw_name, "--"]
        initdb = [str(bindir / "initdb"), "-D", str(self.data), "-U", "postgres", "--auth=trust"]
        subprocess.run(
            [*self._prefix, *initdb, "-E", "UTF8", "--no-locale", "--no-sync"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    @property
    def url(self) -> str:
        """``postgresql://postgres@127.0.0.1:PORT/postgres``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self, timeout: float = 30.0) -> None:
        """Start the postmaster and wait until it accepts connections (after a crash, once
        its recovery is done)."""
        settings = {
            "listen_addresses": "127.0.0.1",
            "unix_socket_directories": str(self.workdir),
            "max_connections": "200",
        }
        if not self.durable:
            # a test cluster need not survive a power cut, only our processes dying
            settings.update(fsync="off", full_page_writes="off")
        options = [arg for k, v in settings.items() for arg in ("-c", f"{k}={v}")]
        argv = [*self._prefix, str(self.bindir / "postgres"), "-D", str(self.data)]
        argv += ["-p", str(self.port), *options]
        deadline = time.monotonic() + timeout
        while True:
            self.proc = subprocess.Popen(
                argv,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                _wait_ready(self.bindir, self.port, self.proc, deadline)
                return
            except _Exited:
                # a killed postmaster's backends may still hold its shared memory for a
                # moment: the new one refuses to start until they are gone
                if time.monotonic() > deadline:
                    raise RuntimeError(f"PostgreSQL did not start on port {self.port}") from None
                time.sleep(0.2)  # a retry's back-off (sync: helpers.until is async)

    def postmaster_pid(self) -> int:
        """The running postmaster's pid (from ``postmaster.pid``)."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def kill(self) -> None:
        """SIGKILL the postmaster, and wait until its backends have ended too (each ends as
        it finds the postmaster gone: one busy with a query could still answer it)."""
        try:
            pid = self.postmaster_pid()
        except FileNotFoundError:
            return
        backends = _children(pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
        deadline = time.monotonic() + 30
        while any(_alive(child) for child in backends):
            if time.monotonic() > deadline:
                raise RuntimeError("PostgreSQL's backends outlived their postmaster")
            time.sleep(0.02)  # a poll's interval (sync: helpers.until is async)

    def stop(self) -> None:
        """Stop the postmaster (fast shutdown, then a kill if it lingers)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            os.kill(self.postmaster_pid(), signal.SIGINT)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()

    def remove(self) -> None:
        """Stop it and delete its directory."""
        self.stop()
        shutil.rmtree(self.workdir, ignore_errors=True)


@contextlib.contextmanager
def pg_cluster(bindir: Path, *, durable: bool = False) -> Iterator[str]:
    """Start a cluster; yields the URL ``postgresql://postgres@127.0.0.1:PORT/postgres``.
    ``durable``: fsync on, as in production (benchmarks); tests run without it."""
    cluster = PgCluster(bindir, durable=durable)
    try:
        cluster.start()
        yield cluster.url
    finally:
        cluster.remove()


def _children(pid: int) -> list[int]:
    """The pids of a process's children (Linux; none elsewhere)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(child) for child in text.split()]


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie, ended and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class _Exited(Exception):
    """The postmaster exited before it was ready."""


def _wait_ready(bindir: Path, port: int, proc: subprocess.Popen[bytes], deadline: float) -> None:
    while True:
        ready = subprocess.run(
            [str(bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port), "-q"],
            check=False,
        )
        if ready.returncode == 0:
            return
        if proc.poll() is not None:
            raise _Exited
        if time.monotonic() > deadline:
            proc.kill()
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
