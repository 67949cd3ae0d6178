"""The terminal client's player identity: the id and secret a server gave this device.

The first time the terminal client (or any :class:`~clients.client.RaceClient` given an
:class:`IdentityFile`) connects to a server it asks for an identity (``new_player``),
silently — racing needs no sign-up — and keeps it; every later connection says who it is
(``identify``) right after ``hello``. A server that no longer knows it (``bad_identity``:
its database was reset, or the identity was moved away with its recovery code) gets asked
for a new one. A server that keeps no records, or refuses for now (``rate_limited``), leaves
the client a guest: nothing blocks play (:func:`clients.client.ensure_identity`).

One file per server origin, in the XDG config directory::

    $XDG_CONFIG_HOME/samedeal/servers/http_127.0.0.1_8765/identity.json

(``~/.config`` when ``XDG_CONFIG_HOME`` is unset), mode 0600 in a directory of mode 0700,
written whole or not at all (a new file renamed over the old). The secret is never printed,
logged or put in a URL.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["IdentityFile", "SavedIdentity", "config_dir", "http_origin"]

_WEB_SCHEMES = {"http": "http", "ws": "http", "https": "https", "wss": "https"}
_DEFAULT_PORTS = {"http": 80, "https": 443}
_UNSAFE = re.compile(r"[^A-Za-z0-9.-]")


@dataclass(frozen=True, slots=True)
class SavedIdentity:
    """A player id and its secret, as kept on this device (``repr`` hides the secret)."""

    player: str
    secret: str = field(repr=False)


def config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/samedeal`` (an absolute path only, as the XDG spec says), else
    ``~/.config/samedeal``."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".config"
    return root / "samedeal"


def http_origin(url: str) -> str:
    """The web origin of a server or room URL: ``ws://Host:8765/r/X`` →
    ``http://host:8765`` (the port always given). Raises ``ValueError``."""
    parts = urlsplit(url.strip())
    scheme = _WEB_SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.hostname:
        raise ValueError(f"not a server URL: {url!r}")
    try:
        port = parts.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        raise ValueError(f"not a server URL: {url!r}") from None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6
    return f"{scheme}://{host}:{port}"


class IdentityFile:
    """Where the identity for one server is kept (one file per server origin)."""

    def __init__(self, server_url: str, *, root: Path | None = None) -> None:
        self.origin = http_origin(server_url)
        slug = _UNSAFE.sub("_", self.origin.replace("://", "_", 1))
        self.path = (root or config_dir()) / "servers" / slug / "identity.json"

    def __repr__(self) -> str:
        return f"IdentityFile({self.origin!r}, path={str(self.path)!r})"

    def load(self) -> SavedIdentity | None:
        """The identity kept for this server, or ``None`` (none yet, or a file that does not
        read as one: a new identity replaces it)."""
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        player, secret = data.get("player"), data.get("secret")
        if not isinstance(player, str) or not isinstance(secret, str) or not player or not secret:
            return None
        return SavedIdentity(player, secret)

    def save(self, identity: SavedIdentity) -> None:
        """Keep ``identity`` (mode 0600), replacing any kept before, in one rename."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = self.path.with_name(f".identity.{os.getpid()}.tmp")
        body = json.dumps(
            {"server": self.origin, "player": identity.player, "secret": identity.secret}
        )
        descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as f:
                f.write(body + "\n")
            os.chmod(tmp, 0o600)  # an old file of that name may have had other bits
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def forget(self) -> None:
        """Drop the kept identity (after ``forget_me``)."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
