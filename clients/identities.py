"""The terminal client's identities: one per server, kept in the user's config directory.

An identity is a player id and its secret (``new_player``): whoever has the secret plays as
that player, so the file is made readable by its owner only. The browser keeps its own in
``localStorage``.

    $SAMEDEAL_CONFIG_DIR, else $XDG_CONFIG_HOME/samedeal, else ~/.config/samedeal
        identities.json     {"ws://host:8765": {"player": "…", "secret": "…"}, …}
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .client import RaceClient

__all__ = ["config_dir", "forget", "identified", "load", "save"]


def config_dir() -> Path:
    """Where the terminal client keeps its files."""
    given = os.environ.get("SAMEDEAL_CONFIG_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "samedeal"


def _path() -> Path:
    return config_dir() / "identities.json"


def _all() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def load(server: str) -> tuple[str, str] | None:
    """The (player id, secret) kept for ``server`` (its websocket URL), if any."""
    found = _all().get(server)
    if not isinstance(found, dict) or not found.get("player") or not found.get("secret"):
        return None
    return str(found["player"]), str(found["secret"])


def save(server: str, player: str, secret: str) -> None:
    """Keep the identity for ``server`` (the file readable by its owner only)."""
    data = _all()
    data[server] = {"player": player, "secret": secret}
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with contextlib.suppress(OSError):
        os.chmod(tmp, 0o600)
    tmp.replace(path)


def forget(server: str) -> None:
    """Drop the identity kept for ``server``."""
    data = _all()
    if data.pop(server, None) is not None:
        save_all = _path()
        save_all.write_text(json.dumps(data, indent=1), encoding="utf-8")


async def identified(url: str, name: str = "") -> RaceClient:
    """A connection speaking for this terminal's identity on the server (made and kept on
    first use)."""
    from .client import RaceClient, RequestError

    client = await RaceClient.connect(url)
    kept = load(url)
    if kept is not None:
        try:
            await client.identify(*kept)
            return client
        except RequestError as exc:
            if exc.code != "bad_identity":
                await client.close()
                raise
    made = await client.new_player(name)
    assert made.secret is not None
    save(url, made.player, made.secret)
    return client
