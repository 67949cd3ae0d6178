"""Wiring: build a worker's parts, run it, drain it.

The parts (docs/architecture.md): :mod:`server.edge.gateway` takes connections and requests
in and dispatches each request type to the part that serves it — :mod:`server.rooms.lobby`,
:mod:`server.rooms.race`, :mod:`server.rooms.rematch`, :mod:`server.watching.follow`,
:mod:`server.watching.directory` (the live directory), :mod:`server.watching.reactions`,
:mod:`server.rooms.robots` (:mod:`server.rooms.invitation` answers an HTTP route);
:mod:`server.rooms.registry` delivers room events from the store
(:mod:`server.store`) to connections; :mod:`server.rooms.liveness` frees the seats
of dead workers. Nothing below this module knows the others exist beyond what it is given
here.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import serve

from engine import GAME_NAMES
from protocol import (
    AddBot,
    AddGhost,
    CancelSeek,
    Create,
    Follow,
    ForgetMe,
    Identify,
    Join,
    Leave,
    Live,
    MoveRequest,
    NewPlayer,
    Pools,
    React,
    Recover,
    Rematch,
    RematchReply,
    Rename,
    Resign,
    Resume,
    Seek,
    SetHandle,
    Start,
    TakeOffer,
    TournamentClose,
    TournamentCreate,
    TournamentHost,
    TournamentJoin,
    TournamentOpen,
    TournamentRejoin,
    TournamentWithdraw,
)

from .collector import Collector
from .config import Config, now_ms
from .context import Context
from .daily.challenge import Daily
from .edge.connection import Conn, Gate
from .edge.gateway import Gateway, Handler, Route
from .metrics import Metrics
from .players.history import History
from .players.identity import Identities
from .proving import Proving
from .quickplay.service import Pools as QuickPlay
from .ratings.service import Ratings
from .records.store import SqlRecordsStore, purge_periodically
from .rooms.deals import RandomDeals
from .rooms.finish import RaceEnd
from .rooms.invitation import Invitations
from .rooms.liveness import Liveness
from .rooms.lobby import Lobby
from .rooms.progress import Progress
from .rooms.race import Race
from .rooms.registry import Rooms
from .rooms.rematch import Rematches
from .rooms.robots import Robots
from .store import Store
from .store.pools import POOL_CHANNEL
from .store.tournaments import TOURNAMENT_CHANNEL
from .tasks import Tasks
from .tournaments.rounds import RoundRunner
from .tournaments.service import Tournaments
from .watching.directory import Watching
from .watching.follow import Spectate
from .watching.reactions import Reactions

__all__ = ["Config", "Gate", "RaceServer", "now_ms", "run", "running"]

logger = logging.getLogger("samedeal.server")

_WRITER_CLOSE = 10.0
"""Seconds a worker stopping waits for the records writer to write what is queued (not at
all while the records database cannot be reached: those races are kept in the store)."""


class RaceServer:
    """One worker: its parts, wired."""

    def __init__(self, store: Store, config: Config | None = None) -> None:
        config = config or Config()
        metrics, tasks = Metrics(), Tasks()
        rooms = Rooms(store, config, metrics, tasks)
        self.ctx = ctx = Context(config, store, metrics, tasks, rooms)
        self.proving = proving = Proving(config, metrics, tasks)
        self.daily = daily = Daily(ctx, proving.prover)
        self.race_end = race_end = RaceEnd(ctx)
        deals = RandomDeals(proving.deals)
        self.races = races = Race(ctx, daily, race_end, Progress(ctx), deals)
        self.rematches = rematches = Rematches(ctx, races)
        self.ratings = ratings = Ratings(ctx)
        self.lobby = lobby = Lobby(ctx, races, rematches, ratings)
        self.invitations = Invitations(ctx)
        self.spectate = spectate = Spectate(ctx)
        self.watching = watching = Watching(ctx)
        self.reactions = reactions = Reactions(ctx)
        self.robots = robots = Robots(ctx, races, lobby)
        self.liveness = Liveness(ctx, lobby)
        self.identities = identities = Identities(ctx)
        self.history = history = History(ctx, daily)
        race_end.end_hooks.append(history.race_ended)
        self.quickplay = quickplay = QuickPlay(ctx, lobby, races, robots, ratings, proving.deals)
        rounds = RoundRunner(ctx, races, history, proving.prover)
        self.tournaments = tournaments = Tournaments(ctx, rounds)
        routes: dict[type[Any], Route] = {
            MoveRequest: Route(races.on_move),
            Create: Route(self._entering(lobby.on_create)),
            Join: Route(self._entering(lobby.on_join)),
            Resume: Route(self._entering(lobby.on_resume)),
            Start: Route(races.on_start, answers_ok=True),
            Resign: Route(races.on_resign, answers_ok=True),
            Rematch: Route(rematches.on_rematch, answers_ok=True),
            RematchReply: Route(rematches.on_rematch_reply, answers_ok=True),
            Leave: Route(lobby.on_leave, answers_ok=True),
            Follow: Route(spectate.on_follow, answers_ok=True),
            Live: Route(watching.on_live, answers_ok=True),
            React: Route(reactions.on_react, answers_ok=True),
            AddBot: Route(robots.on_add_bot, answers_ok=True),
            AddGhost: Route(robots.on_add_ghost, answers_ok=True),
            NewPlayer: Route(identities.on_new_player),
            Identify: Route(identities.on_identify),
            Recover: Route(identities.on_recover),
            Rename: Route(identities.on_rename),
            SetHandle: Route(identities.on_set_handle),
            ForgetMe: Route(identities.on_forget_me, answers_ok=True),
            TournamentCreate: Route(tournaments.on_create),
            TournamentOpen: Route(tournaments.on_open),
            TournamentJoin: Route(tournaments.on_join),
            TournamentWithdraw: Route(tournaments.on_withdraw, answers_ok=True),
            TournamentRejoin: Route(tournaments.on_rejoin, answers_ok=True),
            TournamentHost: Route(tournaments.on_host, answers_ok=True),
            TournamentClose: Route(tournaments.on_close, answers_ok=True),
            Seek: Route(quickplay.on_seek),
            CancelSeek: Route(quickplay.on_cancel_seek, answers_ok=True),
            TakeOffer: Route(quickplay.on_take_offer),
            Pools: Route(quickplay.on_pools, answers_ok=True),
        }
        self.gateway = Gateway(ctx, routes, self._closed)

    @property
    def store(self) -> Store:
        """The store this worker runs on."""
        return self.ctx.store

    @property
    def config(self) -> Config:
        """The settings."""
        return self.ctx.config

    @property
    def port(self) -> int | None:
        """The port listened on, once listening."""
        return self.ctx.port

    async def _closed(self, conn: Conn) -> None:
        self.watching.forget(conn)
        self.tournaments.closed(conn)
        await self.quickplay.closed(conn)
        await self.lobby.leave(conn)

    def _entering(self, handler: Handler) -> Handler:
        """``handler`` (a request that enters a room) after the connection's seek ends."""

        async def enter(conn: Conn, msg: Any) -> None:
            await self.quickplay.entering(conn)
            await handler(conn, msg)

        return enter

    def _deliver(self, room_code: str, data: bytes) -> None:
        """A message from the broker: a tournament's event, a pool's, or a room's."""
        if room_code.startswith(TOURNAMENT_CHANNEL):
            self.tournaments.deliver(room_code[len(TOURNAMENT_CHANNEL) :], data)
        elif room_code.startswith(POOL_CHANNEL):
            self.quickplay.deliver(room_code[len(POOL_CHANNEL) :], data)
        else:
            self.ctx.rooms.deliver(room_code, data)

    async def start(self) -> None:
        """Open the records store (applying its migrations) and its writer, start the store
        (its broker's listener delivers room events to the rooms), the live directory and
        the liveness loop."""
        config = self.ctx.config
        if config.records_url is not None:
            records = await SqlRecordsStore.open(
                config.records_url,
                retention_days=config.retention_days,
                create_limit=config.identity_limit,
                create_window=config.identity_window,
            )
            self.ctx.records = records
        await self.ctx.store.start(self._deliver)
        await self.watching.start()
        await self.liveness.start()
        await self.history.start()
        await self.daily.start()
        await self.tournaments.start()
        await self.quickplay.start()
        if self.ctx.config.pools_warm:
            self.proving.warm(list(GAME_NAMES))
        if self.ctx.records is not None:
            self.ctx.tasks.spawn(purge_periodically(self.ctx.records), "records purge")

    async def close(self) -> None:
        """Cancel background tasks, drop the local rooms, write the races still queued
        (a while at most: they are kept in the store for another worker otherwise),
        close the records store, then the store."""
        # the layers' timers first: none starts a task once the tasks are being stopped
        self.watching.close()
        self.reactions.close()
        self.lobby.counter.close()
        await self.ctx.tasks.close()
        for local in list(self.ctx.rooms.rooms.values()):
            self.ctx.rooms.drop(local)
        self.robots.close()
        self.quickplay.close()
        await self.daily.close()
        self.proving.close()
        await self.tournaments.close()
        await self.history.close(_WRITER_CLOSE)
        if self.ctx.records is not None:
            await self.ctx.records.close()
        await self.ctx.store.close()


@contextlib.asynccontextmanager
async def running(
    store: Store, config: Config | None = None, *, sock: socket.socket | None = None
) -> AsyncIterator[tuple[RaceServer, WsServer]]:
    """Start a server (port 0 picks a free port: see ``RaceServer.port``) and stop it on
    exit: connections are closed with 1001 and the store is closed."""
    config = config or Config()
    app = RaceServer(store, config)
    await app.start()
    kwargs: dict[str, Any] = {}
    if sock is not None:
        kwargs["sock"] = sock
    else:
        kwargs.update(host=config.host, port=config.port, reuse_port=config.reuse_port or None)
    try:
        async with serve(
            app.gateway.handler,
            max_size=config.max_frame,
            compression="deflate" if config.compression else None,
            process_request=app.gateway.process_request,
            create_connection=app.gateway.admission.connection_class(),
            logger=logging.getLogger("samedeal.ws"),
            **kwargs,
        ) as ws_server:
            app.ctx.port = ws_server.sockets[0].getsockname()[1]
            yield app, ws_server
            ws_server.close()
            await ws_server.wait_closed()
    finally:
        await app.close()


async def run(
    store_factory: Callable[[], Store],
    config: Config,
    collector: Collector | None = None,
    *,
    on_ready: Callable[[], None] | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT, then drain: stop accepting, close every connection
    with 1001 (clients resume elsewhere), release the store. With a ``collector``
    installed on this process, its sweeps run beside the server. ``on_ready`` is called
    once the port listens (a supervisor's sign that the worker started)."""
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()

    def on_signal() -> None:
        if not stop.done():
            stop.set_result(None)

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    async with running(store_factory(), config) as (app, _):
        # Everything made so far (modules, the message models' validators, the app) lives as
        # long as the process: moved out of the collector's reach, a full collection no
        # longer walks it. 1,000 paced players: p99 6-27 ms before (the collections), 2-3 ms
        # after (bench/race.py, memory store).
        gc.collect()
        gc.freeze()
        sweeping = asyncio.create_task(collector.sweeping()) if collector else None
        logger.info(
            "serving host=%s port=%s worker=%s pid=%s",
            config.host,
            app.port,
            app.store.worker_id,
            os.getpid(),
        )
        app.gateway.admission.announce()
        if on_ready is not None:
            on_ready()
        await stop
        if sweeping:
            sweeping.cancel()
        logger.info(
            "draining worker=%s connections=%s", app.store.worker_id, len(app.ctx.rooms.conns)
        )
    logger.info("stopped")
