"""The terminal's tournament commands against a real server: create, host acts, the
terminal client playing a round with the standings beside the board, the export read back
by ``samedeal tournament verify`` — and bad values refused with one line and exit 2."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import until, until_server_clock
from server_fixtures import WINS, live_server
from textual.widgets import Static

from clients.cli import main
from clients.client import RaceClient
from clients.cmd_tournament import normalize_argv
from clients.tournament_link import parse_tournament_link
from clients.tui_tournament import TournamentApp
from protocol import TournamentSeat

KL_CODE, _ = WINS["klondike"]


@contextlib.contextmanager
def config_dir(path: Path) -> Iterator[None]:
    before = os.environ.get("XDG_CONFIG_HOME")
    os.environ["XDG_CONFIG_HOME"] = str(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("XDG_CONFIG_HOME", None)
        else:
            os.environ["XDG_CONFIG_HOME"] = before


async def run_cli(*argv: str) -> tuple[int, str, str]:
    """``samedeal ARGV`` in a thread (it runs its own event loop); status, stdout, stderr."""

    def go() -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except SystemExit as exc:
                status = int(exc.code or 0)
        return status, out.getvalue(), err.getvalue()

    return await asyncio.to_thread(go)


def test_links_and_the_default_action() -> None:
    link = parse_tournament_link("https://example.org/t/K7QF-2M?key=abc")
    assert (link.url, link.http, link.tournament, link.key) == (
        "wss://example.org",
        "https://example.org",
        "K7QF-2M",
        "abc",
    )
    assert parse_tournament_link("http://h:1").tournament is None
    with pytest.raises(ValueError):
        parse_tournament_link("ftp://h/t/X")
    assert normalize_argv(["tournament", "http://h/t/X"]) == ["tournament", "play", "http://h/t/X"]
    assert normalize_argv(["tournament", "verify", "f"]) == ["tournament", "verify", "f"]


async def test_create_host_play_export_and_verify(tmp_path: Path) -> None:
    records = f"sqlite:///{tmp_path / 'records.db'}"
    config: dict[str, Any] = {
        "records_url": records,
        "identity_limit": 100,
        "tournament_countdown": 0.5,
        "tournament_lease": 1.0,
    }
    async with live_server(**config) as server:
        with config_dir(tmp_path / "host"):
            status, out, err = await run_cli(
                "tournament", "create", server.http, "--name", "Terminal cup",
                "--rounds", "1", "--deals", "list", "--deal", KL_CODE, "--start", "manual",
            )  # fmt: skip
            assert status == 0, err
            link = next(line.split()[-1] for line in out.splitlines() if "link" in line)
            assert "/t/" in link and "commitment" in out
            bad = await run_cli(
                "tournament", "create", server.http, "--name", "X", "--rounds", "25"
            )
            assert bad[0] == 2 and bad[2].count("\n") == 1 and "rounds" in bad[2]
        # a player in the terminal client, another by the client library
        bob = await RaceClient.connect(server.url)
        await bob.new_player("Bob")
        tid = parse_tournament_link(link).tournament
        assert tid is not None
        await bob.tournament_join(tid, name="Bob")

        async def bob_resigns() -> None:
            seat = await bob.next_event("tournament_seat", timeout=30)
            assert isinstance(seat, TournamentSeat)
            await bob.take_seat(seat)
            await until_server_clock(seat.start_at, await bob.ping())
            await bob.resign()

        bob_task = asyncio.create_task(bob_resigns())
        with config_dir(tmp_path / "ann"):
            app = TournamentApp(parse_tournament_link(link), join=True, name="Ann", lang="en")
            async with app.run_test(size=(130, 42)) as pilot:
                await until(lambda: app.tname == "Terminal cup", timeout=8)
                with config_dir(tmp_path / "host"):
                    status, out, err = await run_cli("tournament", "host", link, "start")
                assert status == 0, err
                await until(lambda: app.view is not None and app.role == "player", timeout=8)
                await until(lambda: app._now() >= (app.start_at or 0), timeout=8)
                side = str(app.query_one("#side", Static).content)
                assert "Terminal cup" in side and "Standings" in side
                await pilot.press("s")
                await until(lambda: app.view is not None and app.view["moves"] == 1, timeout=8)
                await bob_task
                await pilot.press("ctrl+r", "ctrl+r")  # Ann resigns (it asks first)
                await until(lambda: app.tphase == "finished", timeout=20)
        await bob.close()
        status, out, err = await run_cli("tournament", "export", link)
        assert status == 0, err
        export_path = tmp_path / "export.json"
        export_path.write_text(out)
        status, out, err = await run_cli("tournament", "verify", str(export_path))
        assert status == 0 and "verified" in out, (out, err)
        missing = await run_cli("tournament", "export", server.http + "/t/ZZZZ-ZZ")
        assert missing[0] == 1 and "404" in missing[2]
