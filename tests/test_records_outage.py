"""The records store survives its database (issue 30): a real PostgreSQL killed (SIGKILL of
the postmaster), stopped, made read-only, its backends terminated by an administrator, a
name that does not resolve, a host that does not answer — every such failure is told from
a refusal, retried by a writer that never dies, and every race whose end was announced is
written once the database is back, on any worker."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import orjson
import pytest
from helpers import until, until_server_clock
from pg_fixtures import PgCluster, find_pg_bin
from records_helpers import counts, make_race, seat
from server_fixtures import TEST_CONFIG, ServerHandle, StartServer, fetch, free_port, worker_process

from clients.client import RaceClient, RequestError
from protocol import RaceEnded, RaceRecordDelayed, RaceRecorded, RaceStarting
from server.app import Config, running
from server.records import db as records_db
from server.records.models import HandleTaken, RecordsUnavailable
from server.records.store import SqlRecordsStore
from server.records.writer import RaceWriter
from server.store import open_store

DEAL = "KL1-1-AAAAAAM"


@pytest.fixture
def postgres() -> Iterator[PgCluster]:
    """A PostgreSQL cluster of this test's own, to kill and start again."""
    bindir = find_pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (initdb not found)")
    cluster = PgCluster(bindir)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.remove()


async def admin(cluster: PgCluster, *statements: str) -> None:
    """Run statements as the cluster's superuser, on a connection of their own."""
    conn = await asyncpg.connect(cluster.url)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


TERMINATE = (
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
    "WHERE pid <> pg_backend_pid() AND datname = current_database()"
)


# --------------------------------------------------------------------- the store's calls


async def test_every_kind_of_outage_is_told_from_a_refusal(
    postgres: PgCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = await SqlRecordsStore.open(postgres.url)
    seen: list[str | None] = []
    store.db.observers.append(seen.append)
    try:
        ada = await store.create_player("Ada", "192.0.2.1")
        await store.set_handle(ada.player_id, "ada")
        bob = await store.create_player("Bob", "192.0.2.1")
        # a refusal is an answer: not an outage
        with pytest.raises(HandleTaken):
            await store.set_handle(bob.player_id, "ada")
        assert seen[-1] is None

        # an administrator ends every backend: a read is sent again on a new connection
        await admin(postgres, TERMINATE)
        assert (await store.player(ada.player_id)) is not None
        # … a write is not (it might have been done): it fails as an outage, and the next works
        await admin(postgres, TERMINATE)
        with pytest.raises(RecordsUnavailable):
            await store.rename(ada.player_id, "Ada L")
        assert seen[-1] is not None
        assert (await store.rename(ada.player_id, "Ada L")).name == "Ada L"

        # read-only (a standby, default_transaction_read_only): reads go on, writes wait
        await admin(
            postgres, "ALTER DATABASE postgres SET default_transaction_read_only = on", TERMINATE
        )
        assert (await store.player(ada.player_id)) is not None
        with pytest.raises(RecordsUnavailable) as info:
            await store.rename(ada.player_id, "Ada")
        assert "read-only" in info.value.reason
        await admin(
            postgres,
            "SET default_transaction_read_only = off",
            "ALTER DATABASE postgres RESET default_transaction_read_only",
            TERMINATE,
        )
        await store.ping()  # the pool's connections died with their backends
        assert (await store.rename(ada.player_id, "Ada")).name == "Ada"

        # the postmaster killed: its backends go as they notice (one may answer a last
        # query), then every connection is refused
        postgres.kill()

        async def refused() -> bool:
            try:
                await store.player(ada.player_id)
            except RecordsUnavailable as exc:
                return "ConnectionRefused" in exc.reason
            return False

        await until(refused, 30)
        with pytest.raises(RecordsUnavailable) as info:
            await store.ping()
        assert "ConnectionRefused" in info.value.reason
        postgres.start()
        await store.ping()
        assert (await store.player(ada.player_id)) is not None
        assert seen[-1] is None
    finally:
        await store.close()

    # a name that does not resolve, a host that never answers (bounded by the timeout)
    monkeypatch.setattr(records_db, "CONNECT_TIMEOUT", 0.5)
    with __import__("socket").socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        for url in ("postgresql://x@nowhere.invalid/db", f"postgresql://x@127.0.0.1:{port}/db"):
            far = await SqlRecordsStore.open(url, migrate=False)
            started = time.monotonic()
            try:
                with pytest.raises(RecordsUnavailable):
                    await far.ping()
            finally:
                await far.close()
            assert time.monotonic() - started < 5

    # SQLite: a file opened read-only refuses writes as an outage, not as a refusal
    path = tmp_path / "r.db"
    await (await SqlRecordsStore.open(f"sqlite:///{path}")).close()
    readonly = await SqlRecordsStore.open(f"sqlite:///file:{path}?mode=ro&uri=true", migrate=False)
    try:
        with pytest.raises(RecordsUnavailable) as info:
            await readonly.create_player("Cy", "192.0.2.2")
        assert "readonly" in info.value.reason
    finally:
        await readonly.close()


# --------------------------------------------------------------------- the writer


async def test_the_writer_waits_out_a_killed_postgresql_and_writes_every_race(
    postgres: PgCluster,
) -> None:
    store = await SqlRecordsStore.open(postgres.url)
    seen: list[str | None] = []
    delayed: list[int] = []
    writer = RaceWriter(
        postgres.url,
        max_queued=6,
        max_backoff=0.5,
        observer=seen.append,
        on_delay=lambda race: delayed.append(race.race),
    )
    await writer.start()
    try:
        ada = await store.create_player("Ada", "192.0.2.1")
        before = [writer.submit(make_race(n, seat(1, ada.player_id))) for n in range(3)]
        assert all(f is not None for f in before)
        await asyncio.gather(*before)  # type: ignore[arg-type]

        postgres.kill()
        during = [writer.submit(make_race(n, seat(1, ada.player_id))) for n in range(3, 12)]
        # at most max_queued wait in memory; the rest are not taken (the caller keeps them)
        taken = [f for f in during if f is not None]
        assert len(taken) == 6 and during[6:] == [None, None, None]
        await until(lambda: sorted(delayed) == list(range(3, 9)) and not writer.healthy, 30)
        assert any(reason is not None for reason in seen)
        assert not any(f.done() for f in taken)

        postgres.start()
        race_ids = await asyncio.wait_for(asyncio.gather(*taken), 30)
        assert len(set(race_ids)) == 6 and writer.healthy and seen[-1] is None
        assert sorted(delayed) == list(range(3, 9))  # each told once
        again = [writer.submit(make_race(n, seat(1, ada.player_id))) for n in range(9, 12)]
        await asyncio.gather(*again)  # type: ignore[arg-type]
        assert (await counts(store))[0] == 12
        assert (await store.stats(ada.player_id))[0].played == 12

        # stopping while the database is away is prompt: the queued races stay unwritten
        postgres.kill()
        late = writer.submit(make_race(12, seat(1, ada.player_id)))
        await until(lambda: not writer.healthy, 30)
        started = time.monotonic()
        await writer.close(10)
        assert time.monotonic() - started < 3 and late is not None and not late.done()
    finally:
        await writer.close()
        await store.close()


# --------------------------------------------------------------------- a server


async def race_to_the_end(player: RaceClient) -> RaceEnded:
    """A race of one in a room of its own: two moves, then resign; its announced end."""
    await player.create("klondike", name="Ann", deal="code", code=DEAL)
    await player.start()
    starting = await player.next_event("race_starting")
    assert isinstance(starting, RaceStarting)
    await until_server_clock(starting.start_at, starting.now)
    for move in ("t3-f", "s"):
        await player.move(move)
    await player.resign()
    ended = await player.next_event("race_ended", timeout=10)
    assert isinstance(ended, RaceEnded)
    return ended


@pytest.mark.parametrize("kind", ["memory", "redis"])
async def test_a_postgresql_outage_mid_play_loses_no_announced_race(
    start_server: StartServer, postgres: PgCluster, kind: str
) -> None:
    server = await start_server(
        kind, records_url=postgres.url, records_retry_after=0.5, records_queue=2
    )
    ann = await server.client()
    me = await ann.new_player("Ann")
    await ann.set_handle("ann")
    announced: dict[str, RaceEnded] = {}  # room → its race's end
    recorded: dict[str, str] = {}  # room → game id

    identified = []  # a connection per race, all identified before the outage
    for _ in range(7):
        identified.append(await server.client())
        await identified[-1].identify(me.player, me.secret or "")

    async def play(expect: str) -> None:
        """A race in a new room, its record told as ``expect`` says."""
        client = identified.pop()
        ended = await race_to_the_end(client)
        announced[ended.room] = ended
        told = await client.next_event("race_recorded", "race_record_delayed", timeout=15)
        assert told.type == expect, told
        if isinstance(told, RaceRecorded):
            recorded[ended.room] = told.game_id
        else:
            assert isinstance(told, RaceRecordDelayed) and told.race == ended.race
            players.append(client)  # told race_recorded later

    players: list[RaceClient] = []
    for _ in range(2):
        await play("race_recorded")

    postgres.kill()
    # more races than the writer holds in memory (2): the rest wait in the backend only
    for _ in range(5):
        await play("race_record_delayed")
    status, _, body = await fetch(server.port, "/healthz")
    assert status == 503 and body.startswith(b"records database unreachable")
    status, kind_, body = await fetch(server.port, "/api/players/ann")
    assert (status, kind_) == (503, "application/json")
    assert orjson.loads(body)["error"] == "records_unavailable"
    with pytest.raises(RequestError) as info:
        await (await server.client()).identify(me.player, me.secret or "")
    assert info.value.code == "records_unavailable"
    metrics = (await fetch(server.port, "/metrics"))[2].decode()
    assert 'samedeal_records_up{worker="test-0"} 0' in metrics
    assert 'samedeal_records_queued{worker="test-0"} 2' in metrics

    postgres.start()
    for client in players:
        told = await client.next_event("race_recorded", timeout=30)
        assert isinstance(told, RaceRecorded)
        recorded[told.room] = told.game_id
    assert recorded.keys() == announced.keys()
    for room, game_id in recorded.items():
        status, _, body = await fetch(server.port, f"/api/games/{game_id}")
        assert status == 200, body
        game = orjson.loads(body)
        assert game["deal"] == DEAL and game["seats"][0]["actions"] == ["t3-f1", "s"]
        assert game["race"] == announced[room].race
    page = orjson.loads((await fetch(server.port, "/api/players/ann"))[2])
    assert len(page["recent"]) == 7
    await until(lambda: server.app.ctx.metrics.records_up == 1, 30)
    assert (await fetch(server.port, "/healthz"))[0] == 200


async def test_races_kept_by_a_worker_stopped_during_the_outage_are_written_by_another(
    start_server: StartServer, postgres: PgCluster, redis_url: str
) -> None:
    options = {**TEST_CONFIG, "records_url": postgres.url, "records_retry_after": 0.5}
    survivor = await start_server("redis", records_url=postgres.url, records_retry_after=0.5)
    identity = await (await survivor.client()).new_player("Ann")
    ends: list[RaceEnded] = []
    async with running(open_store(redis_url, worker_id="leaving"), Config(**options)) as (
        app,
        _,
    ):
        leaving = ServerHandle(app, "redis")
        players = [await leaving.client() for _ in range(3)]
        for player in players:
            await player.identify(identity.player, identity.secret or "")
        postgres.kill()
        for player in players:
            ends.append(await race_to_the_end(player))
            told = await player.next_event("race_record_delayed", timeout=15)
            assert isinstance(told, RaceRecordDelayed) and told.room == ends[-1].room
        await leaving.close_clients()
        started = time.monotonic()
    # the worker stopped at once, though its writer could not write its races: they are
    # kept in Redis, where the other worker finds them once the database is back
    assert time.monotonic() - started < 5
    postgres.start()

    store = await SqlRecordsStore.open(postgres.url, migrate=False)
    try:

        async def stored() -> bool:
            return len(await store.recent_races(identity.player, limit=10)) == len(ends)

        await until(stored, timeout=30)
        for summary in await store.recent_races(identity.player, limit=10):
            status, _, body = await fetch(survivor.port, f"/api/games/{summary.race_id}")
            game = orjson.loads(body)
            assert status == 200 and game["deal"] == DEAL
            assert game["seats"][0]["actions"] == ["t3-f1", "s"]
        assert await survivor.app.store.pending.count() == 0
    finally:
        await store.close()


async def test_sigterm_is_prompt_while_the_database_is_away(postgres: PgCluster) -> None:
    port = free_port()
    args = ("--database", postgres.url, "--countdown", "0.05", "--no-daily-warm")
    with worker_process(*args, port=port) as proc:
        player = await RaceClient.connect(f"ws://127.0.0.1:{port}")
        postgres.kill()
        ended = await race_to_the_end(player)
        told = await player.next_event("race_record_delayed", timeout=15)
        assert isinstance(told, RaceRecordDelayed) and told.room == ended.room
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 15)
        took = time.monotonic() - started
        stderr = proc.stderr.read().decode() if proc.stderr else ""
    assert code == 0 and took < 5, (took, stderr)
    assert " ERROR " not in stderr and "Traceback" not in stderr, stderr
    assert "records database unreachable" in stderr
