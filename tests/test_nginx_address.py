"""Behind the shipped deploy/nginx.conf, in a real nginx, every per-address limit counts
the client, not the proxy (issue 30, item 4): nginx names the client in X-Forwarded-For and
the server believes it from nginx only (``--trusted-proxy``). Clients connect from several
loopback addresses (127.0.0.2, …): nginx sees each as a client of its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from nginx_fixtures import NGINX, nginx
from server_fixtures import StartServer, free_port
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import InvalidStatus

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(), reason="no nginx")


async def hello_from(url: str, source: str, **headers: str) -> ClientConnection:
    """A websocket from ``source`` (with ``headers``: what a client may send itself)."""
    ws = await connect(
        url, local_addr=(source, 0), additional_headers=headers or None, open_timeout=10
    )
    await ws.send(json.dumps({"type": "hello", "v": 2}))
    await ws.recv()
    return ws


async def sign_up(ws: ClientConnection) -> str:
    """``new_player``: "ok", or the error's code."""
    await ws.send(json.dumps({"type": "new_player", "id": 7, "name": "P"}))
    reply: dict[str, Any] = json.loads(await ws.recv())
    return "ok" if reply["type"] == "identity" else str(reply["code"])


async def test_limits_count_each_client_behind_the_shipped_nginx(
    start_server: StartServer, tmp_path: Path
) -> None:
    server = await start_server(
        "memory",
        records_url=f"sqlite:///{tmp_path / 'r.db'}",
        identity_limit=2,
        max_per_address=3,
        trusted_proxies=("127.0.0.1/32",),
    )
    port = free_port()
    with nginx(tmp_path / "nginx", port, [server.port]):
        url = f"ws://127.0.0.1:{port}"
        opened: list[ClientConnection] = []
        try:
            ann = await hello_from(url, "127.0.0.2")
            bob = await hello_from(url, "127.0.0.3")
            opened += [ann, bob]
            # new players: two an hour per address — Ann's address used them up, not Bob's
            assert [await sign_up(ann) for _ in range(3)] == ["ok", "ok", "rate_limited"]
            assert [await sign_up(bob) for _ in range(2)] == ["ok", "ok"]
            # a client that names someone else in its own X-Forwarded-For is still itself
            forger = await hello_from(url, "127.0.0.2", **{"X-Forwarded-For": "198.51.100.7"})
            opened.append(forger)
            assert await sign_up(forger) == "rate_limited"
            # connections: three per address, counted per client through the one proxy
            opened.append(await hello_from(url, "127.0.0.2"))  # its third
            with pytest.raises(InvalidStatus) as info:
                await hello_from(url, "127.0.0.2")
            assert info.value.response.status_code == 429
            opened.append(await hello_from(url, "127.0.0.4"))
        finally:
            for ws in opened:
                await ws.close()
