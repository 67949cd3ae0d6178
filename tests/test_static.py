"""Static files on the websocket port: the server serves the directory its ``Config`` names
(``samedeal serve``: the browser client's), and nothing else."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.error
from pathlib import Path

import pytest
from server_fixtures import ROOT, StartServer, free_port, http_get

from clients.cmd_serve import WEB_DIR
from server.edge.static import StaticFiles


def test_static_files_served_with_types_and_no_traversal() -> None:
    static = StaticFiles(WEB_DIR)
    index = static.response("/")
    assert index is not None and index.status_code == 200
    assert index.headers["Content-Type"].startswith("text/html")
    assert "Content-Security-Policy" in index.headers
    for page in (
        "/r/K7QF-2M?key=abc",
        "/d/EH1-N-AAAAAAF",
        "/rules",
        "/rules/klondike",
        "/g/7k2qm9xd4ptr",
        "/p/ann_l",
        "/p/%D0%B0%D0%BD%D1%8F",  # a handle in another script, as the browser sends it
    ):
        found = static.response(page)
        assert found is not None and found.status_code == 200 and found.body == index.body, page
    catalogue = static.response("/i18n/ru.json")
    assert catalogue is not None and catalogue.headers["Content-Type"] == "application/json"
    js = static.response("/app.js")
    assert js is not None and js.headers["Content-Type"].startswith("text/javascript")
    css = static.response("/style.css")
    assert css is not None and css.headers["Content-Type"].startswith("text/css")
    for bad in (
        "/../server/app.py",
        "/%2e%2e/pyproject.toml",
        "/web.py",
        "/r/../../etc/passwd",
        "//etc/passwd",
        "/healthz",
    ):
        assert static.response(bad) is None, bad
    cached = static.response("/app.js", js.headers["ETag"])
    assert cached is not None and cached.status_code == 304 and cached.body == b""


def test_an_unknown_address_answers_404_with_the_page() -> None:
    static = StaticFiles(WEB_DIR)
    for path in (
        "/no-such-page",
        "/r/",
        "/rules/solitaire",
        "/d/",
        "/app.js.map",
        "/g/",
        "/p/",
        "/p/a/b",
        "/g/../app.js",
    ):
        assert static.response(path) is None, path
        lost = static.not_found()
        assert lost is not None and lost.status_code == 404
        assert lost.headers["Content-Type"].startswith("text/html")
        assert "Content-Security-Policy" in lost.headers


def test_the_daily_pages_answer_the_app_and_nothing_near_them_does() -> None:
    static = StaticFiles(WEB_DIR)
    index = static.response("/")
    assert index is not None
    for page in ("/daily", "/daily/", "/daily/2026-04-16", "/daily/2026-04-16/"):
        found = static.response(page)
        assert found is not None and found.status_code == 200 and found.body == index.body, page
    for path in (
        "/daily/today",
        "/daily/2026-4-16",
        "/daily/2026-04-16/klondike",
        "/daily/../app.js",
        "/dailyx",
    ):
        assert static.response(path) is None, path


def test_the_leaderboards_answer_the_app_and_nothing_near_them_does() -> None:
    static = StaticFiles(WEB_DIR)
    index = static.response("/")
    assert index is not None
    pages = ("/leaderboard", "/leaderboard/", "/leaderboard/klondike-3", "/leaderboard/easy-harp/")
    for page in pages:
        found = static.response(page)
        assert found is not None and found.status_code == 200 and found.body == index.body, page
    for path in ("/leaderboard/chess", "/leaderboard/klondike/2", "/leaderboards"):
        assert static.response(path) is None, path


def test_a_missing_directory_serves_nothing(tmp_path: Path) -> None:
    assert StaticFiles(tmp_path / "nothing").response("/") is None


async def test_the_server_serves_its_static_dir_only(start_server: StartServer) -> None:
    plain = await start_server()
    with pytest.raises(urllib.error.HTTPError):
        await asyncio.to_thread(http_get, plain.port, "/")
    web = await start_server(static_dir=WEB_DIR)
    status, content_type, body = await asyncio.to_thread(http_get, web.port, "/r/K7QF-2M")
    assert status == 200 and content_type.startswith("text/html") and "<html" in body.lower()
    # the server's own routes come first; any other address is a page that leads back
    assert (await asyncio.to_thread(http_get, web.port, "/healthz"))[2] == "ok\n"
    assert "samedeal" in (await asyncio.to_thread(http_get, web.port, "/metrics"))[2]
    with pytest.raises(urllib.error.HTTPError) as lost:
        await asyncio.to_thread(http_get, web.port, "/no-such-page")
    assert lost.value.code == 404
    assert "<html" in lost.value.read().decode().lower()


@pytest.mark.integration  # starts the command in a process of its own
def test_serve_says_where_to_play(tmp_path: Path) -> None:
    """Issue 31: ``samedeal serve`` printed no address to open; it says where to play
    before anything else (localhost for a server listening on every address)."""
    port = free_port()
    argv = ["serve", "--host", "0.0.0.0", "--port", str(port), "--no-records"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "clients.cli", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert (
            line.strip()
            == f"samedeal serve: play at http://localhost:{port}/ (open it in a browser)"
        )
    finally:
        proc.kill()
        proc.wait()
