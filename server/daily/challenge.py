"""The daily challenge: each day's secret winnable deal, first attempts, leaderboards.

Every UTC day each daily game (Klondike draw one, Easy Harp) has one deal, drawn from the
server's secret daily key (``docs/spec/fair-deals.md``: the first candidate the solver
proves winnable within a fixed node budget, so every worker draws the same one) and kept
secret until the day is over: a commitment — SHA-256 of the code and a salt — is published
from 00:00 UTC, and the code and salt from the next 00:00, so anyone can check that the deal
was not changed (``samedeal daily verify``). Nobody is told the code meanwhile, not even in
the results of a race on it (the fair-play filter, ``RoomState.secret_until``), and a race
on it times out at the day's end.

A player's first play of a day's deal is their attempt: it is made in the records store
(one row per player, game and day, by its key) before a race on the deal starts with them in
it; every later play is practice. Attempts rank on the day's leaderboard by score, then
fewer moves, then the shorter time; only identities made before the day began rank. Watching
costs nothing: nobody sees a board of the day's deal but their own before they have
finished their attempt (the board rule, :mod:`server.rooms.view`).

The key: ``Config.daily_key`` (``samedeal serve --daily-key-file``), else one kept in the
records database (made on first use, the same for every worker and host), else — no records
— one made by this process (a single worker's own).

Each day is drawn by one version of ``fair-deals.md``: a sealed deal (``D2``) from the day
kept with the key in the records store (:meth:`~server.records.store.SqlRecordsStore.
daily_sealed_since`: set by the first start of a server that draws sealed deals, the next day
when days were drawn before), a numbered deal (``D1``) before it — so past days keep their
deals and today's published commitment stays true. Without a records store there is no
past: every day is sealed.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import secrets
from collections.abc import Iterable
from functools import partial
from http import HTTPStatus

from websockets.http11 import Response

from engine import DealCode
from engine.daily import DAILY_CANDIDATES, DAILY_CANDIDATES_V1
from engine.fair import DAILY_GAMES, FAIR_VERSION, SecretDaily, daily_candidate, secret_daily
from protocol import api

from ..config import now
from ..context import Context
from ..edge.http import HttpRequest, error_response, json_response
from ..proving.process import Prover
from ..records.models import DailyEntry, RecordsError
from ..records.views import daily_stats
from ..rooms.room import Refusal, RoomState
from ..tasks import retrieved

__all__ = ["DAY_ONE", "Daily", "day_number"]

logger = logging.getLogger("samedeal.server")

DAY_ONE = dt.date(2026, 1, 1)
"""Day 1 of the daily challenge (its number in share texts)."""
_DAY_MS = 86_400_000


def day_number(day: dt.date) -> int:
    """The day's number: 1 on :data:`DAY_ONE`."""
    return (day - DAY_ONE).days + 1


def day_start_ms(day: dt.date) -> int:
    """00:00 UTC of ``day``, in ms since the epoch."""
    return int(dt.datetime(day.year, day.month, day.day, tzinfo=dt.UTC).timestamp() * 1000)


class Daily:
    """The daily layer of a worker."""

    def __init__(self, ctx: Context, prover: Prover) -> None:
        self.ctx = ctx
        #: the worker's solver process for proving (server.proving): a day's candidates are
        #: proven there, urgent, ahead of the pool of proven deals' work
        self.prover = prover
        self.key: bytes | None = None
        #: the first day drawn by fair deals version 2 (None: every day is)
        self.sealed_since: dt.date | None = None
        self._deals: dict[tuple[str, dt.date], asyncio.Future[SecretDaily]] = {}
        ctx.http.get("/api/daily", self._api_today)
        ctx.http.get("/api/daily/{day}", self._api_day)
        ctx.http.get("/api/daily/{day}/{game}", self._api_board)

    # ------------------------------------------------------------------ time and key

    def now(self) -> float:
        """The server clock, seconds since the epoch (a test may move it)."""
        return now()

    def today(self) -> dt.date:
        """Today, UTC."""
        return dt.datetime.fromtimestamp(self.now(), dt.UTC).date()

    def over(self, day: dt.date) -> bool:
        """Whether ``day`` is over (its deal may be told)."""
        return day < self.today()

    def fair_of(self, day: dt.date) -> int:
        """The version of ``fair-deals.md`` that ``day``'s deal is drawn by."""
        return 1 if self.sealed_since is not None and day < self.sealed_since else FAIR_VERSION

    async def start(self) -> None:
        """Take the key; warm today's deals and close past attempts at each day's end."""
        if self.ctx.records is not None:
            # before the key is made: a key made now means no day was drawn before
            self.sealed_since = await self.ctx.records.daily.sealed_since(self.today())
        if self.ctx.config.daily_key is not None:
            self.key = self.ctx.config.daily_key
        elif self.ctx.records is not None:
            self.key = await self.ctx.records.daily.key()
        else:
            if self.ctx.store.shared:
                logger.warning(
                    "no records and no --daily-key-file: each worker draws its own deal of the day"
                )
            self.key = secrets.token_bytes(32)
        self.ctx.tasks.spawn(self._days(), "daily")

    async def close(self) -> None:
        """Let the proofs under way go (the prover is closed with the worker)."""
        for found in self._deals.values():
            found.cancel()

    async def _days(self) -> None:
        """At each day's end: close the attempts left open; and (``samedeal serve``) prove
        today's and tomorrow's deals ahead, so the commitment is there at 00:00."""
        while True:
            today = self.today()
            if self.ctx.config.daily_warm:
                for day in (today, today + dt.timedelta(days=1)):
                    for game in DAILY_GAMES:
                        self.deal_of(game, day)
            if self.ctx.records is not None:
                try:
                    closed = await self.ctx.records.daily.close_unfinished(
                        today.isoformat(), int(self.now() * 1000)
                    )
                    if closed:
                        logger.info("daily attempts closed unfinished count=%s", closed)
                except Exception:
                    logger.warning("could not close past daily attempts", exc_info=True)
            tomorrow = day_start_ms(today + dt.timedelta(days=1)) / 1000
            await asyncio.sleep(max(1.0, min(tomorrow - self.now() + 0.5, 3600.0)))

    def deal_of(self, game: str, day: dt.date) -> asyncio.Future[SecretDaily]:
        """The day's secret deal of ``game``, proved off the event loop (once per day and
        game on this worker)."""
        found = self._deals.get((game, day))
        if found is None or (found.done() and found.exception() is not None):
            assert self.key is not None
            prove = partial(secret_daily, fair=self.fair_of(day))
            # unbounded while it runs: every server must choose the same candidate
            proof = self.prover.run(prove, self.key, game, day, urgent=True, bounded=False)
            found = asyncio.ensure_future(proof)
            found.add_done_callback(retrieved)
            self._deals[(game, day)] = found
            for old in [k for k in self._deals if k[1] < day - dt.timedelta(days=2)]:
                del self._deals[old]
        return found

    # ------------------------------------------------------------------ rooms

    def candidate_today(self, code: DealCode) -> bool:
        """Whether ``code`` is one of today's candidates of its game (the day's deal is the
        first proven of them): a room cannot be made on it before the day is over. A few
        HMACs — no proof is waited for."""
        game = code.game_name
        if game not in DAILY_GAMES or self.key is None:
            return False
        day = self.today()
        fair = self.fair_of(day)
        caps = DAILY_CANDIDATES_V1 if fair == 1 else DAILY_CANDIDATES
        return any(
            daily_candidate(self.key, game, day, i, fair=fair) == code for i in range(caps[game])
        )

    def require_players(self, player_ids: Iterable[str | None]) -> None:
        """Today's deal is played by players only: a guest's play would cost nothing and
        show every card before their real attempt. Raises :class:`Refusal`
        (``daily_needs_player``) for a guest among ``player_ids`` (robots are not asked);
        without a records store nobody has an attempt to protect, and guests play."""
        if self.ctx.records is not None and any(pid is None for pid in player_ids):
            raise Refusal(
                "daily_needs_player",
                "the deal of the day is played by players only: become a player (one tap, "
                "no form) and play it as your attempt",
            )

    async def todays_deal(self, game: str) -> tuple[str, str, int]:
        """The deal of the day to play now: its code, the day and when the day ends (ms)."""
        if game not in DAILY_GAMES:
            raise Refusal("no_daily", f"{game} has no deal of the day (Klondike draw one has)")
        day = self.today()
        deal = await asyncio.shield(self.deal_of(game, day))
        return str(deal.code), day.isoformat(), day_start_ms(day + dt.timedelta(days=1))

    async def begin_attempts(
        self, room: RoomState, racers: list[tuple[int, str | None]], *, race_no: int
    ) -> dict[str, str]:
        """Make the day's attempts of the identified racers of a race about to start on the
        day's deal; per seat: ranked, unranked, practice or guest. Raises :class:`Refusal`
        when they cannot be recorded, or (``attempt_in_progress``) when a racer's attempt is
        still being played in another room: the race must not show the deal then."""
        assert room.daily_day is not None
        kinds = {str(seat): "guest" for seat, pid in racers if pid is None}
        identified = [(seat, pid) for seat, pid in racers if pid is not None]
        if not identified or self.ctx.records is None:
            return {**kinds, **{str(seat): "guest" for seat, _ in identified}}
        day = dt.date.fromisoformat(room.daily_day)
        try:
            made = await self.ctx.records.daily.begin_attempts(
                game=room.game,
                day=room.daily_day,
                day_start=day_start_ms(day),
                race=(room.code, room.created_at, race_no),
                players=[(pid, False) for _, pid in identified],
                now=int(self.now() * 1000),
            )
        except RecordsError as exc:
            raise Refusal(exc.error_code, str(exc)) from None
        except Exception:
            logger.warning("could not record daily attempts room=%s", room.code, exc_info=True)
            raise Refusal(
                "storage", "the attempts of the day could not be recorded: try again"
            ) from None
        if "busy" in made.values():
            raise Refusal(
                "attempt_in_progress",
                "an attempt at the deal of the day is still being played in another room: "
                "finish it there first (practice on the deal would show its cards meanwhile)",
            )
        for seat, pid in identified:
            kinds[str(seat)] = made.get(pid, "guest")
        return kinds

    # ------------------------------------------------------------------ HTTP

    def _game_day(self, game: str, day: dt.date) -> api.DailyGame:
        """What may be shown of a day's deal now: nothing while its proof runs (a request
        never waits for it: the commitment appears seconds after the day begins, or before
        it with ``samedeal serve``, which proves the next day's deals ahead)."""
        future = self.deal_of(game, day)
        if not future.done() or future.exception() is not None:
            return api.DailyGame(
                game=game,  # type: ignore[arg-type]
                commitment=None,
                code=None,
                salt=None,
                proven=None,
            )
        deal = future.result()
        over = self.over(day)
        return api.DailyGame(
            game=game,  # type: ignore[arg-type]
            commitment=deal.commitment,
            code=str(deal.code) if over else None,
            salt=deal.salt.hex() if over else None,
            proven=deal.verified if over else None,
        )

    def _day(self, day: dt.date) -> api.DailyDay:
        games = [self._game_day(game, day) for game in DAILY_GAMES]
        return api.DailyDay(
            day=day.isoformat(),
            number=day_number(day),
            over=self.over(day),
            ends_at=day_start_ms(day + dt.timedelta(days=1)),
            games=games,
        )

    def _parse_day(self, text: str) -> dt.date | Response:
        try:
            day = dt.date.fromisoformat(text)
        except ValueError:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_day", "a day is YYYY-MM-DD")
        if day > self.today():
            return error_response(HTTPStatus.NOT_FOUND, "future_day", "that day has not begun")
        if day < DAY_ONE:
            # not no_daily (a game without one): the day came before the first deal of the day
            return error_response(
                HTTPStatus.NOT_FOUND,
                "before_day_one",
                "no deal of the day then: day 1 is 2026-01-01",
            )
        return day

    async def _api_today(self, request: HttpRequest) -> Response:
        today = self.today()
        days = [self._day(today), self._day(today - dt.timedelta(days=1))]
        return json_response(api.DailyToday(today=days[0], yesterday=days[1]))

    async def _api_day(self, request: HttpRequest) -> Response:
        day = self._parse_day(request.params["day"])
        if isinstance(day, Response):
            return day
        return json_response(self._day(day))

    async def _api_board(self, request: HttpRequest) -> Response:
        day = self._parse_day(request.params["day"])
        if isinstance(day, Response):
            return day
        game = request.params["game"]
        if game not in DAILY_GAMES:
            return error_response(HTTPStatus.NOT_FOUND, "no_daily", "no daily of that game")
        records = self.ctx.records
        if records is None:
            return error_response(HTTPStatus.NOT_FOUND, "no_records", "no leaderboards here")
        try:
            offset = max(0, int(request.query.get("offset", "0")))
            limit = min(100, max(1, int(request.query.get("limit", "100"))))
        except ValueError:
            return error_response(HTTPStatus.BAD_REQUEST, "bad_query", "offset, limit: numbers")
        key = day.isoformat()
        player = request.query.get("player")
        entries = await records.daily.leaderboard(game, key, limit=limit, offset=offset)
        newcomers = await records.daily.newcomers(game, key, limit=limit) if offset == 0 else []
        you = await records.daily.own_entry(game, key, player) if player else None
        friends = await records.daily.raced_with(player, game, key) if player else []
        figures = await records.daily.stats(player, self.today().isoformat()) if player else []
        streak = next((daily_stats(f) for f in figures if f.game == game), None)
        over = self.over(day)
        return json_response(
            api.DailyBoard(
                day=key,
                number=day_number(day),
                game=game,  # type: ignore[arg-type]
                over=over,
                deal=self._game_day(game, day),
                entries=[_entry(e, over) for e in entries],
                newcomers=[_entry(e, over) for e in newcomers],
                you=_entry(you, over) if you is not None else None,
                raced_with=[_entry(e, over) for e in friends],
                streak=streak,
            )
        )


def _entry(entry: DailyEntry, over: bool) -> api.DailyEntry:
    """An attempt for the API: its replay only once the day is over."""
    return api.DailyEntry(
        rank=entry.rank,
        player=entry.player_id,
        name=entry.name,
        handle=entry.handle,
        ranked=entry.ranked,
        status=entry.status,
        won=entry.status == "won",
        score=entry.score,
        moves=entry.moves,
        on_foundations=entry.on_foundations,
        deck_turns=entry.deck_turns,
        elapsed_ms=entry.elapsed_ms,
        game_id=entry.race_id if over else None,
    )
