"""Running a tournament's rounds: the timers (by whichever worker holds the lease), the
rooms of each round, the results, and writing what lasts to the records store.

**The lease.** Every worker, every third of ``Config.tournament_lease``, tries to take or
renew each active tournament's lease (``TournamentStore.hold_lease``: Redis ``SET NX PX``);
the holder runs that tournament's driver: it starts the tournament at its scheduled time, starts
each round when it is due, ends it when every participant is done or at its deadline, and
writes the tournament to the records store. A worker killed mid-round stops renewing; another
takes the lease within one lease period and goes on from the stored state, so the round
still ends on time and nothing stored is lost. Every step is an act of the pure state machine
(checked again inside the store's atomic update), so two drivers at once — a worker paused
past its lease — do each step once.

**A round.** Its deal comes from ``next_round_deal`` (the solver, off the event loop in a
process, for winnable-only deals: started ahead during the pause, and told to nobody). The
participants — entered players connected then — are seated in rooms of at most 16
(:func:`~server.tournaments.live.plan_rooms`), grouped by the worker their connection is on
(from the presence marks: a room's players on one worker), each a normal room whose race
the server begins itself with the same start time; nobody is told the deal code, nor shown
a rival's board, before the round ends (``RoomState.secret_until``: the deadline, brought
forward to the round's end when it ends early), and the round's end event tells it. Each
participant is handed a seat token derived from the tournament's secret, and resumes the
seat like any reconnecting player.

**Results.** The worker holding a finished player's seat reports the result at once
(:meth:`RoundRunner.report`, batched every 0.1 s into one update); the driver also reads
every room every five seconds and at the end (:meth:`RoundRunner.collect`), so a result no
worker reported — its worker died — is found from the stored progress and move log. Results
are idempotent: reported twice, recorded once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, Final

from engine import new_game
from engine.fair import RoundDeal

from ..codes import hash_token, new_room_code
from ..config import now_ms
from ..context import Context
from ..players.history import History
from ..proving.process import Prover
from ..rooms.local import secret_ends
from ..rooms.race import Race
from ..rooms.room import Refusal, RoomOptions, RoomState, SeatState
from ..store.errors import StoreUnavailable
from ..store.rooms import Snapshot, UnknownRoom
from ..tasks import gather_all
from . import (
    SYSTEM,
    RoundResult,
    TournamentError,
    TournamentState,
    end_early,
    end_round,
    role_of,
    start,
)
from ._checks import HOSTS, entered
from .deals import RoundDeals
from .live import (
    LiveTournament,
    RoundRoom,
    UnknownTournament,
    plan_rooms,
    seat_of,
    seat_token,
    summary_due,
)
from .recording import record_tournament
from .state import Event as TEvent
from .state import current_round
from .updates import (
    Act,
    BeginRoundRace,
    EndSecret,
    RecordResults,
    Replan,
    StartRound,
    result_of_progress,
)

__all__ = ["RoundRunner"]

logger = logging.getLogger("samedeal.server")

#: seconds between the driver's looks at its tournament
_TICK: Final = 0.25
#: seconds between the driver's readings of every room of the round being played (results
#: are reported as races end; this finds those whose worker died first)
_COLLECT_EVERY: Final = 5.0
#: seconds a worker waits to batch the results it reports
_REPORT_AFTER: Final = 0.1


# --------------------------------------------------------------------- the runner


class RoundRunner:
    """The round runner of a worker: leases, drivers, rooms, results, records."""

    def __init__(self, ctx: Context, races: Race, history: History, prover: Prover) -> None:
        self.ctx = ctx
        self.races = races
        self.history = history
        self.lease_ms = int(ctx.config.tournament_lease * 1000)
        #: seconds between renewals of this worker's presence marks (a mark counts three
        #: times as long: a dead worker's players are absent after that)
        self.presence_every = max(0.2, min(ctx.config.tournament_lease, 5.0))
        self._drivers: dict[str, asyncio.Task[Any]] = {}
        self.deals = RoundDeals(ctx, prover)
        self._rooms: dict[str, tuple[str, int]] = {}
        self._reports: dict[str, list[tuple[int, RoundResult, str]]] = {}
        self._report_timers: dict[str, asyncio.TimerHandle] = {}
        self._wake = asyncio.Event()

    @property
    def present_for(self) -> int:
        """ms a presence mark counts (a worker renews its marks three times as often)."""
        return int(self.presence_every * 3000)

    async def start(self) -> None:
        """Start taking leases."""
        self.ctx.tasks.spawn(self._leases(), "tournament leases")

    async def close(self) -> None:
        """Stop the solver process."""
        self.deals.close()

    def drives(self, tid: str) -> bool:
        """Whether this worker runs the tournament's timers now."""
        task = self._drivers.get(tid)
        return task is not None and not task.done()

    def created(self, tid: str) -> None:
        """A tournament was just made here: look for its lease now."""
        self._wake.set()

    # ------------------------------------------------------------------ leases

    async def _leases(self) -> None:
        period = self.lease_ms / 3000
        tournaments = self.ctx.store.tournaments
        while True:
            try:
                active = await tournaments.active()
                for tid in active:
                    held = await tournaments.hold_lease(tid, self.lease_ms)
                    if held and not self.drives(tid):
                        logger.info("tournament lease taken tournament=%s", tid)
                        self._drivers[tid] = self.ctx.tasks.spawn(
                            self._drive(tid), f"tournament {tid}"
                        )
                    elif not held and tid in self._drivers:
                        self._drivers.pop(tid).cancel()
                for tid in set(self._drivers) - set(active):
                    self._drivers.pop(tid).cancel()
            except StoreUnavailable:
                pass
            except Exception:
                logger.exception("tournament leases failed")
            self.ctx.metrics.tournaments_driven = len(self._drivers)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), period)
            self._wake.clear()

    async def _drive(self, tid: str) -> None:
        """Run one tournament's timers while this worker holds its lease."""
        tournaments = self.ctx.store.tournaments
        collected = 0.0
        loop = asyncio.get_running_loop()
        while True:
            try:
                found = await tournaments.summaries([tid])
                if not found:
                    await tournaments.retire(tid)
                    return
                summary = found[0]
                due = summary_due(summary, now_ms())
                if summary.phase != "round" and summary.recorded_round < summary.round:
                    await self.catch_up(tid)  # a round ended: its races, the tournament
                elif summary.phase == "finished":
                    if summary.recorded:
                        await tournaments.retire(tid)
                        logger.info("tournament retired tournament=%s", tid)
                        return
                    await record_tournament(self.ctx, tid)
                elif due == "start":
                    await self._act(tid, lambda s: start(s, actor=SYSTEM, now=now_ms()))
                elif due == "start_round":
                    await self.begin_round(tid, SYSTEM)
                elif due == "end_round":
                    await self.end_round(tid)
                elif summary.phase == "round" and loop.time() - collected >= _COLLECT_EVERY:
                    collected = loop.time()
                    await self._collect_and_report(tid)
                elif summary.round < summary.rounds and summary.phase != "round":
                    await self.deals.prepare(tid, summary.round + 1)
            except asyncio.CancelledError:
                raise
            except StoreUnavailable:
                pass
            except UnknownTournament:
                logger.info("tournament gone from the live store tournament=%s", tid)
                await tournaments.retire(tid)
                return
            except (TournamentError, Refusal) as exc:
                logger.info("tournament step refused tournament=%s: %s", tid, exc)
            except Exception:
                logger.exception("tournament step failed tournament=%s", tid)
            await asyncio.sleep(_TICK)

    async def _act(self, tid: str, act: Callable[[TournamentState], list[TEvent]]) -> None:
        await self.ctx.store.tournaments.update(tid, Act(act))

    # ------------------------------------------------------------------ starting a round

    async def begin_round(self, tid: str, actor: str) -> None:
        """Start the next round now (the host's act, or the timer's when it is due): draw
        its deal, seat the connected entered players in rooms, then start it in the
        tournament — again from the start if the tournament changed meanwhile."""
        store = self.ctx.store
        countdown = int(self.ctx.config.tournament_countdown * 1000)
        for _ in range(5):
            snap = await store.tournaments.load(tid)
            if snap is None:
                raise Refusal("unknown_tournament", "no such tournament")
            state = snap.live.state
            role = role_of(state, actor)
            if role != "system" and role not in HOSTS:
                raise Refusal("not_allowed", "only the host or a co-host may start a round")
            if state.phase != "between":
                raise Refusal("wrong_phase", f"cannot start a round while it is {state.phase}")
            deal = await asyncio.shield(self.deals.deal_of(state))
            now = now_ms()
            present = await store.presence.present(tid, now - self.present_for)
            planned = tuple(p.id for p in entered(state) if p.id in present)
            rooms = await self._make_rooms(snap.live, deal, planned, now, countdown, present)
            update = StartRound(
                actor, deal, now, frozenset(present), countdown, planned, tuple(rooms)
            )
            try:
                await store.tournaments.update(tid, update)
            except Replan:
                continue
            except TournamentError as exc:
                raise Refusal(exc.error_code, exc.message) from None
            for room in rooms:
                self.learn_room(room.code, tid, state.round + 1)
            logger.info(
                "tournament round started tournament=%s round=%s players=%s rooms=%s",
                tid,
                state.round + 1,
                len(planned),
                len(rooms),
            )
            return
        raise Refusal("busy", "the tournament kept changing: try again")

    async def _make_rooms(
        self,
        live: LiveTournament,
        deal: RoundDeal,
        planned: tuple[str, ...],
        now: int,
        countdown: int,
        worker_of: dict[str, str],
    ) -> list[RoundRoom]:
        state = live.state
        settings = state.settings
        number = state.round + 1
        first = new_game(str(deal.code))
        deadline = now + countdown + settings.round_time_limit * 1000
        options = RoomOptions(
            max_players=len(planned),
            time_limit=settings.round_time_limit,
            spectators=True,
            private=settings.private,
            spectator_delay=settings.spectator_delay,
        )

        async def make(players: list[str]) -> RoundRoom:
            seats = {player: i for i, player in enumerate(players, 1)}
            for _ in range(10):
                room_code = new_room_code()
                room = RoomState(
                    code=room_code,
                    game=settings.game,
                    options=options.model_copy(update={"max_players": len(players)}),
                    key=state.key if settings.private else None,
                    seats=[
                        SeatState(
                            seat=seat,
                            name=state.players[player].name,
                            token_hash=hash_token(seat_token(live, number, player)),
                            connected=False,
                            player_id=player,
                        )
                        for player, seat in seats.items()
                    ],
                    next_seat=len(players) + 1,
                    deal=str(deal.code),
                    created_at=now,
                    # nobody is told the round's deal before it is over (an early end
                    # brings this forward: :meth:`end_secret`)
                    secret_until=deadline,
                    tournament=state.id,
                )
                if await self.ctx.store.rooms.create(room):
                    break
            else:
                raise Refusal("busy", "could not find free room codes")
            await self.ctx.store.rooms.update(
                room_code, BeginRoundRace(now, countdown, first.total, first.player_view())
            )
            return RoundRoom(code=room_code, created_at=now, seats=seats)

        chunks = plan_rooms(planned, worker_of=worker_of)
        return await gather_all(*(make(chunk) for chunk in chunks))

    # ------------------------------------------------------------------ results

    def learn_room(self, room_code: str, tid: str, number: int) -> None:
        """Room ``room_code`` plays round ``number`` of tournament ``tid``."""
        if len(self._rooms) > 50_000:
            self._rooms.clear()  # bounded; relearned as seats are handed out
        self._rooms[room_code.replace("-", "")] = (tid, number)

    def room_round(self, room_code: str) -> tuple[str, int] | None:
        """The tournament and round a room plays, if this worker knows it."""
        return self._rooms.get(room_code)

    def report(self, tid: str, number: int, result: RoundResult, moves: str) -> None:
        """Record a finished race's result soon (batched with the others)."""
        self._reports.setdefault(tid, []).append((number, result, moves))
        if tid not in self._report_timers:
            self._report_timers[tid] = asyncio.get_running_loop().call_later(
                _REPORT_AFTER,
                lambda: self.ctx.tasks.spawn(self._send_reports(tid), "tournament results"),
            )

    async def _send_reports(self, tid: str) -> None:
        self._report_timers.pop(tid, None)
        batch = self._reports.pop(tid, [])
        by_round: dict[int, list[tuple[RoundResult, str]]] = {}
        for number, result, moves in batch:
            by_round.setdefault(number, []).append((result, moves))
        for number, items in by_round.items():
            try:
                await self.record_results(tid, number, items)
            except StoreUnavailable:
                logger.info("results kept for later tournament=%s", tid)  # found by collect
            except KeyError:
                return

    async def record_results(
        self, tid: str, number: int, items: list[tuple[RoundResult, str]]
    ) -> int:
        """Keep the move lists, then record the results of round ``number`` (those already
        recorded are skipped); how many were new."""
        if not items:
            return 0
        tournaments = self.ctx.store.tournaments
        await tournaments.keep_round_moves(tid, number, {r.player: moves for r, moves in items})
        _, new = await tournaments.update(
            tid, RecordResults(number, tuple(r for r, _ in items), now_ms())
        )
        return new

    async def collect(
        self, live: LiveTournament, number: int, *, expire: bool = False
    ) -> list[tuple[RoundResult, str]]:
        """The results of round ``number`` not yet recorded, read from its rooms' stored
        progress and move logs (``expire``: the deadline has passed — whoever still plays
        is timed out first)."""
        store = self.ctx.store
        current = live.state.rounds[number - 1]
        out = []
        for room in live.round_rooms(number):
            snap = await store.rooms.snapshot(room.code)
            if snap is None:
                logger.warning(
                    "a round's room is gone tournament=%s room=%s", live.state.id, room.code
                )
                continue
            if expire and snap.room.phase == "running" and now_ms() >= (snap.room.deadline or 0):
                await self.races.end.expire(room.code, snap.room.race)
                snap = await store.rooms.snapshot(room.code) or snap
            for player, seat in room.seats.items():
                if player in current.results:
                    continue
                p = snap.progress.get(seat)
                if p is None or p.race != snap.room.race:
                    continue
                result = result_of_progress(player, p)
                if result is not None:
                    moves = await store.rooms.moves(room.code, snap.room.race, seat)
                    out.append((result, " ".join(moves)))
        return out

    async def _collect_and_report(self, tid: str) -> None:
        snap = await self.ctx.store.tournaments.load(tid)
        current = current_round(snap.live.state) if snap is not None else None
        if snap is None or current is None:
            return
        found = await self.collect(snap.live, current.number)
        if found:
            new = await self.record_results(tid, current.number, found)
            if new:
                logger.info("results found in the rooms tournament=%s count=%s", tid, new)

    async def out_of_round(self, tid: str, player: str) -> None:
        """A player left the tournament (withdrawn, kicked, banned) while playing a round:
        their race ends now, resigned, and its result is recorded."""
        snap = await self.ctx.store.tournaments.load(tid)
        current = current_round(snap.live.state) if snap is not None else None
        if snap is None or current is None or player in current.results:
            return
        found = seat_of(snap.live, current.number, player)
        if found is None:
            return
        room, seat = found
        store = self.ctx.store
        rsnap = await store.rooms.snapshot(room.code)
        if rsnap is None:
            return
        p = rsnap.progress.get(seat)
        if p is not None and p.status == "playing":
            await self.races.end.finish_from_log(room.code, rsnap.room, seat, "resigned", now_ms())
            await self.races.end.check_end(room.code)
        results = [
            r for r in await self.collect(snap.live, current.number) if r[0].player == player
        ]
        await self.record_results(tid, current.number, results)

    # ------------------------------------------------------------------ ending a round

    async def end_round(self, tid: str) -> None:
        """The round is due to end: time out whoever still plays (at the deadline), record
        every result, end it; then write its races and the tournament to the records."""
        snap = await self.ctx.store.tournaments.load(tid)
        current = current_round(snap.live.state) if snap is not None else None
        if snap is None or current is None:
            return
        final = now_ms() >= current.deadline
        found = await self.collect(snap.live, current.number, expire=final)
        await self.record_results(tid, current.number, found)
        ended = now_ms()
        snap = await self.ctx.store.tournaments.load(tid)
        if snap is None:
            return
        # refused here, before anything is opened, when the round is not due (or ended
        # meanwhile); due now, it stays due — its deadline has passed, or every participant
        # has a result, and results are never taken back — so the round ends, by this act or
        # by the driver that takes the lease if this worker dies before it
        end_round(snap.live.state.model_copy(deep=True), actor=SYSTEM, now=ended)
        await self.open_boards(snap.live, current.number, ended)
        await self._act(tid, lambda s: end_round(s, actor=SYSTEM, now=ended))
        logger.info("tournament round ended tournament=%s round=%s", tid, current.number)
        await self.catch_up(tid)

    async def end_early(self, tid: str, actor: str, reason: str | None) -> None:
        """The host ends the tournament now: a round being played ends as at its deadline
        (every race still played is timed out now), then the tournament finishes."""
        snap = await self.ctx.store.tournaments.load(tid)
        if snap is None:
            raise Refusal("unknown_tournament", "no such tournament")
        trial = snap.live.state.model_copy(deep=True)
        try:
            end_early(trial, actor=actor, now=now_ms(), reason=reason)  # refused before anything
        except TournamentError as exc:
            raise Refusal(exc.error_code, exc.message) from None
        current = current_round(snap.live.state)
        if current is not None:
            store = self.ctx.store
            for room in snap.live.round_rooms(current.number):
                rsnap = await store.rooms.snapshot(room.code)
                if rsnap is None or rsnap.room.phase != "running":
                    continue
                for seat, p in sorted(rsnap.progress.items()):
                    if p.race == rsnap.room.race and p.status == "playing":
                        await self.races.end.finish_from_log(
                            room.code, rsnap.room, seat, "timeout", now_ms()
                        )
                await self.races.end.check_end(room.code)
            found = await self.collect(snap.live, current.number)
            await self.record_results(tid, current.number, found)
        ended = now_ms()
        if current is not None:
            # its races are stopped and their results recorded: the round is due, and ends
            # — by this act, or by the driver's end_round if this worker dies before it
            await self.open_boards(snap.live, current.number, ended)
        try:
            await self._act(tid, lambda s: end_early(s, actor=actor, now=ended, reason=reason))
        except TournamentError as exc:
            raise Refusal(exc.error_code, exc.message) from None
        await self.catch_up(tid)

    async def catch_up(self, tid: str) -> None:
        """Write the races of the rounds ended since the last write (their replays open
        now: they tell the deal) and the tournament — again after a worker died between
        the two, as the driver finds the rounds not written (a race is written once)."""
        snap = await self.ctx.store.tournaments.load(tid)
        if snap is None:
            return
        live = snap.live
        ended = [r for r in live.state.rounds if r.ended_at is not None]
        for round_ in ended:
            if round_.number <= live.recorded_round or round_.ended_at is None:
                continue
            for room in live.round_rooms(round_.number):
                try:
                    # open already (open_boards), unless the round was ended by a worker
                    # that did not open them: then its rooms' workers are told now
                    await self.end_secret(room.code, round_.ended_at)
                    rsnap: Snapshot | None = await self.ctx.store.rooms.snapshot(room.code)
                    if rsnap is not None and rsnap.room.phase == "ended":
                        await self.history.record(room.code, rsnap)
                except StoreUnavailable:
                    logger.warning("a round's race was not recorded room=%s", room.code)
        await record_tournament(self.ctx, tid, max((r.number for r in ended), default=0))

    async def open_boards(self, live: LiveTournament, number: int, at: int) -> None:
        """Round ``number`` ends at ``at`` (ms): the secret of each of its rooms ends then —
        all at once, and before the act that ends the round, so that nobody is told
        ``round_ended`` while a room still hides its boards: a spectator who follows the
        moment they are told is let through. Every worker with a room is told, and tells
        its connections (``boards_open``), even at a deadline, when the store's secret had
        already ended by itself."""
        rooms = live.round_rooms(number)
        await gather_all(*(self.end_secret(room.code, at, tell=True) for room in rooms))

    async def end_secret(self, room_code: str, at: int, *, tell: bool = False) -> None:
        """A round's room: its round ended at ``at`` (ms). Before the deadline the room was
        made with, its secret ends then — in the store, and on every worker with the room
        (a control message: the store's write is what a worker coming later reads). The
        workers are told when the secret ends earlier than it was, or whenever ``tell``."""
        try:
            _, end = await self.ctx.store.rooms.update(room_code, EndSecret(at))
        except UnknownRoom:
            return  # expired: nobody can watch it
        if end is not None and (end.earlier or tell):
            await self.ctx.store.broker.publish_control(room_code, secret_ends((end.race, end.at)))

    # ------------------------------------------------------------------ records

    def record_soon(self, tid: str) -> None:
        """Write the tournament to the records store in the background."""
        self.ctx.tasks.spawn(record_tournament(self.ctx, tid), f"record tournament {tid}")
