"""The terminal side of issue 14 against a real server that keeps records: the identity
kept per server in the XDG config directory, ``samedeal me``, ``samedeal history``, and the
replay viewer of ``samedeal replay http://HOST/g/ID`` (Textual's pilot), each board checked
against the engine."""

from __future__ import annotations

import asyncio
import json
import os
import re
import stat
import sys
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from helpers import until, until_race_starts
from server_fixtures import ROOT, LiveServer, live_server
from textual.widgets import Static

from clients.api import GameLink, fetch_game, parse_game_link, server_base
from clients.client import RaceClient
from clients.i18n import Catalogue
from clients.identity import IdentityFile, SavedIdentity, config_dir, http_origin
from clients.links import parse_link
from clients.replay_view import ReplayApp, Timeline
from clients.tui import RaceApp, render_board
from engine import new_game
from protocol import RaceRecorded

DEAL = "KL1-1-AAAAAAM"  # t3 shows an ace, t1-t2 is legal
EN = Catalogue("en")


# ---------------------------------------------------------------------- no server


def test_one_identity_file_per_server_origin(tmp_path: Path) -> None:
    assert config_dir({"XDG_CONFIG_HOME": "/x/conf"}) == Path("/x/conf/samedeal")
    assert config_dir({"XDG_CONFIG_HOME": "relative"}) == Path.home() / ".config/samedeal"
    assert config_dir({}) == Path.home() / ".config/samedeal"
    same = ["ws://Host:8765", "http://host:8765/r/K7QF-2M", "http://host:8765/g/x?y=1"]
    assert {http_origin(u) for u in same} == {"http://host:8765"}
    assert http_origin("wss://host") == "https://host:443"
    assert http_origin("http://[::1]:9/") == "http://[::1]:9"
    for bad in ("host:8765", "ftp://host", "http://", "http://host:port"):
        with pytest.raises(ValueError):
            http_origin(bad)
    a = IdentityFile("ws://host:8765", root=tmp_path)
    b = IdentityFile("http://host:8766", root=tmp_path)
    assert a.path != b.path and a.path.name == b.path.name == "identity.json"
    assert a.path.is_relative_to(tmp_path) and IdentityFile("http://HOST:8765").path.parent.name
    assert a.load() is None
    a.save(SavedIdentity("k3m9x2p7q4r8s6t1", "s" * 32))
    assert a.load() == SavedIdentity("k3m9x2p7q4r8s6t1", "s" * 32) and b.load() is None
    assert stat.S_IMODE(a.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(a.path.parent.stat().st_mode) == 0o700
    assert "s" * 32 not in repr(a.load()) and "s" * 32 not in repr(a)
    assert [p.name for p in a.path.parent.iterdir()] == ["identity.json"]  # no temp left
    for broken in ("", "{", "[]", '{"player": 1, "secret": "x"}', '{"player": "p"}'):
        a.path.write_text(broken)
        assert a.load() is None, broken
    a.forget()
    a.forget()  # nothing to forget: fine
    assert a.load() is None


def test_replay_links_are_read_strictly() -> None:
    assert parse_game_link("http://h:1/g/7k2qm9xd4ptr/") == GameLink("http://h:1", "7k2qm9xd4ptr")
    assert server_base("wss://h:1/r/X") == "https://h:1"
    for bad in (
        "http://h:1/g/",
        "http://h:1/g/UPPERCASE123",
        "http://h:1/g/7k2qm9xd4pt",
        "http://h:1/r/K7QF-2M",
        "h:1/g/7k2qm9xd4ptr",
        "http://user:pw@h:1/g/7k2qm9xd4ptr",
    ):
        with pytest.raises(ValueError):
            parse_game_link(bad)


# ---------------------------------------------------------------------- a real server


@pytest_asyncio.fixture
async def server(tmp_path: Path) -> AsyncIterator[LiveServer]:
    async with live_server(countdown=0.1, records_url=f"sqlite:///{tmp_path / 'r.db'}") as live:
        yield live


async def samedeal(*args: str, config: Path) -> tuple[int, str, str]:
    """Run the ``samedeal`` command (the server keeps running on this event loop)."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "clients.cli",
        *args,
        cwd=ROOT,
        env={**os.environ, "XDG_CONFIG_HOME": str(config), "LANG": "C.UTF-8"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def race(server: LiveServer, config: Path) -> tuple[str, dict[str, Any]]:
    """Ann (an identity kept under ``config``, handle ann) and Bob race; their moves
    interleave; Ann undoes once; both give up. The replay's id and the race's record."""
    ann = await RaceClient.connect(
        server.url, identity=IdentityFile(server.url, root=config / "samedeal"), name="Ann"
    )
    assert ann.player is not None and ann.player.recovery_code  # made just now
    await ann.set_handle("ann")
    bob = await RaceClient.connect(server.url)
    joined = await ann.create("klondike", name="Ann", deal="code", code=DEAL)
    await bob.join(joined.room, name="Bob")
    await ann.start()
    await until_race_starts(ann)
    for who, move in ((ann, "t3-f"), (bob, "s"), (ann, "s"), (ann, "u"), (bob, "t1-t2")):
        await who.move(move)
    await ann.resign()
    await bob.resign()
    told = await ann.next_event("race_recorded", timeout=10)
    assert isinstance(told, RaceRecorded)
    game = await asyncio.to_thread(fetch_game, GameLink(server.http, told.game_id))
    await ann.close()
    await bob.close()
    return told.game_id, game.model_dump()


async def test_the_replay_viewer_steps_through_a_race_as_the_engine_plays_it(
    server: LiveServer, tmp_path: Path
) -> None:
    game_id, record = await race(server, tmp_path / "conf")
    link = parse_game_link(f"{server.http}/g/{game_id}")
    timeline = Timeline(await asyncio.to_thread(fetch_game, link))
    assert len(timeline) == 5
    # the timeline: every action in the order the server accepted it
    times = sorted(
        (t, order, i, s["seat"])
        for order, s in enumerate(record["seats"])
        for i, t in enumerate(s["action_times_ms"])
    )
    assert [s.seat for s in timeline.steps] == [t[3] for t in times]

    def engine_board(seat: int, k: int) -> dict[str, Any]:
        actions = next(s["actions"] for s in record["seats"] if s["seat"] == seat)
        done = [t[3] for t in times[:k]].count(seat)
        game = new_game(DEAL)
        game.push_all(actions[:done])
        return game.player_view()

    app = ReplayApp(timeline, page=f"{server.http}/g/{game_id}", lang="en")
    async with app.run_test(size=(140, 45)) as pilot:

        def shows(k: int) -> bool:
            """Step ``k`` is drawn: each racer's board as the engine has it then."""
            return app.step == k and all(
                render_board(engine_board(seat, k)).plain
                in str(app.query_one(f"#racer-{seat}", Static).content)
                for seat in (1, 2)
            )

        title = str(app.query_one("#title", Static).content)
        assert "Replay · Klondike, draw one" in title and "Step 0 of 5" in title
        assert game_id in title
        for k in range(1, 6):
            await pilot.press("right")
            await until(partial(shows, k))
            assert f"Step {k} of 5" in str(app.query_one("#title", Static).content)
            mover = timeline.steps[k - 1]
            racer = str(app.query_one(f"#racer-{mover.seat}", Static).content)
            assert f"▶ {mover.move}" in racer
        await pilot.press("right")
        assert app.step == 5
        await pilot.press("home")
        await until(lambda: shows(0))
        await pilot.press("end")
        await until(lambda: shows(5))
        await pilot.press("left")
        await until(lambda: shows(4))
        ann = str(app.query_one("#racer-1", Static).content)
        assert "Ann" in ann and "1st of 2" in ann and "resigned" in ann
        # space plays from here at the chosen speed, to the end
        await pilot.press("home", "plus", "plus", "plus", "plus", "plus", "minus")
        assert app.speed == 4 and "×8" in str(app.query_one("#title", Static).content)
        await pilot.press("space")
        await until(lambda: app.step == 5 and not app.playing, timeout=10)
        assert "Space play" in str(app.query_one("#keys", Static).content)
        await pilot.press("ctrl+l")
        assert app.cat.lang == "ru"
        assert "Повтор" in str(app.query_one("#title", Static).content)
        await pilot.press("q")


async def test_history_and_me_against_a_real_server(server: LiveServer, tmp_path: Path) -> None:
    config = tmp_path / "conf"
    game_id, _ = await race(server, config)
    # someone else's page by handle, and your own (the identity kept for this server)
    for args in (("history", "ann"), ("history",)):
        status, out, err = await samedeal(*args, "--server", server.http, config=config)
        assert status == 0, err
        assert out.startswith("Ann (@ann)") and f"{server.http}/p/ann" in out
        assert game_id in out and f"{server.http}/g/{game_id}" in out
        assert "1st of 2 · resigned" in out and "Klondike, draw one" in out
        assert "Played" in out and "Longest streak" in out
    status, out, _ = await samedeal("history", "ann", "--server", server.url, "--lang", "ru",
                                    config=config)  # fmt: skip
    assert status == 0 and "Последние гонки" in out

    # samedeal me: who you are; a handle, refused with the catalogue's words, then taken
    fresh = tmp_path / "fresh"
    status, made, err = await samedeal("me", "--server", server.http, config=fresh)
    assert status == 0, err
    assert "A player was made for you" in made and "Recovery code" in made
    kept = IdentityFile(server.http, root=fresh / "samedeal")
    assert kept.load() is not None and stat.S_IMODE(kept.path.stat().st_mode) == 0o600
    secret = json.loads(kept.path.read_text())["secret"]
    assert secret not in made
    status, out, err = await samedeal(
        "me", "--server", server.http, "--handle", "admin", config=fresh
    )
    assert (status, out) == (2, "") and err == f"samedeal: {EN.t('error.bad_handle')}\n"
    status, out, err = await samedeal(
        "me", "--server", server.http, "--handle", "kim_1", "--name", "Kim", config=fresh
    )
    assert status == 0, err
    assert "Name: Kim" in out and "Handle: kim_1" in out and "Recovery code" not in out
    status, out, _ = await samedeal("history", "--server", server.http, config=fresh)
    assert status == 0 and out.startswith("Kim (@kim_1)") and "No races yet." in out
    # the recovery code moves the player to another device; the old one is let go
    first = (await samedeal("me", "--server", server.http, config=tmp_path / "third"))[1]
    assert re.search(r"[0-9A-Z]{4}(-[0-9A-Z]{4}){5}", first)  # a third device's own code
    code = re.findall(r"[0-9A-Z]{4}(?:-[0-9A-Z]{4}){5}", made)[0]
    laptop = tmp_path / "laptop"
    status, out, err = await samedeal(
        "me", "--server", server.http, "--recover", code.lower(), config=laptop
    )
    assert status == 0, err
    assert "Your player is on this device now." in out and "Handle: kim_1" in out
    assert code not in out and re.search(r"[0-9A-Z]{4}(-[0-9A-Z]{4}){5}", out)  # a new code
    status, _, err = await samedeal("history", "--server", server.http, config=fresh)
    assert status == 2 and "no player of yours" in err  # this device's secret is retired
    status, out, err = await samedeal("me", "--server", server.http, "--recover", code,
                                      config=laptop)  # fmt: skip
    assert (status, out) == (2, "") and err == f"samedeal: {EN.t('error.bad_recovery_code')}\n"
    status, out, err = await samedeal("me", "--server", server.http, "--forget", config=laptop)
    assert status == 0 and "deleted" in out
    assert IdentityFile(server.http, root=laptop / "samedeal").load() is None
    status, _, err = await samedeal("history", "kim_1", "--server", server.http, config=fresh)
    assert status == 2 and err == f"samedeal: {EN.t('error.unknown_player')}\n"


@pytest.mark.parametrize(
    ("args", "status", "says"),
    [
        (("history", "--server", "nope"), 2, "not a server URL"),
        (("history", "--server", "http://127.0.0.1:1"), 2, "no player of yours"),
        (("history", "someone", "--server", "http://127.0.0.1:1"), 1, "cannot reach"),
        (("history", "--server", "http://h", "--limit", "0"), 2, "from 1 to 100"),
        (("replay", "http://127.0.0.1:1/g/bad"), 2, "not a replay link"),
        (("replay", "http://127.0.0.1:1/g/000000000000", "s"), 2, "takes no moves"),
        (("replay", "http://127.0.0.1:1/g/000000000000"), 1, "cannot reach"),
        (("me", "--server", "ftp://h"), 2, "not a server URL"),
    ],
)
async def test_bad_input_is_one_line(
    tmp_path: Path, args: tuple[str, ...], status: int, says: str
) -> None:
    got, out, err = await samedeal(*args, config=tmp_path)
    assert got == status and out == ""
    assert err.count("\n") == 1 and says in err and "Traceback" not in err


async def test_unknown_games_and_players_on_a_real_server(
    server: LiveServer, tmp_path: Path
) -> None:
    for args, error in (
        (("replay", f"{server.http}/g/000000000000"), "error.unknown_game"),
        (("history", "nobody_here", "--server", server.http), "error.unknown_player"),
        (("history", "x" * 70, "--server", server.http), "error.bad_handle"),
    ):
        status, out, err = await samedeal(*args, config=tmp_path)
        assert (status, out) == (2, "") and err == f"samedeal: {EN.t(error)}\n", args
    # moves given locally still replay as before
    status, out, err = await samedeal("replay", DEAL, "t3-f", "--json", config=tmp_path)
    assert status == 0 and json.loads(out)["foundations"][0] == ["AD"]


async def test_the_terminal_client_makes_an_identity_silently_and_keeps_it(
    server: LiveServer, tmp_path: Path
) -> None:
    files = IdentityFile(server.url, root=tmp_path)
    host = await RaceClient.connect(server.url)
    joined = await host.create("klondike", name="Host")
    link = parse_link(f"{server.http}/r/{joined.room}")
    app = RaceApp(link, role="player", name="Tim", lang="en", identity=files)
    async with app.run_test(size=(120, 40)):
        await until(lambda: app.room is not None and len(app.seats) == 2)
        assert app.new_identity is not None and app.new_identity.recovery_code
        assert app.new_identity.recovery_code in app.message
        assert app.new_identity.name == "Tim"
    saved = files.load()
    assert saved is not None and saved.player == app.new_identity.player
    again = RaceApp(link, role="spectator", lang="en", identity=files)
    async with again.run_test(size=(120, 40)):
        await until(lambda: again.client is not None and again.client.player is not None)
        assert again.new_identity is None  # known: identified, nothing new to note
        assert again.client is not None and again.client.player is not None
        assert again.client.player.player == saved.player
    # a server that no longer knows the kept identity makes a new one
    files.save(SavedIdentity("0000000000000000", "x" * 32))
    client = await RaceClient.connect(server.url, identity=files)
    assert client.player is not None and client.player.player != "0000000000000000"
    assert files.load() == SavedIdentity(client.player.player, files.load().secret)  # type: ignore[union-attr]
    await client.close()
    await host.close()
