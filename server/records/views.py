"""What the store returns, as the HTTP JSON models of :mod:`protocol.api`.

The HTTP routes (wired by the server) call these and encode the result with
``model.model_dump_json()`` — or use :func:`seat_moves_text` for the plain-text export.
"""

from __future__ import annotations

from collections.abc import Sequence

from protocol.api import (
    DailyStats,
    GameReplay,
    GameStats,
    PlayerPage,
    PlayerRef,
    RaceLine,
    SeatReplay,
    moves_text,
)

from .models import DailyStats as DailyFigures
from .models import Profile, StoredRace

__all__ = ["daily_stats", "game_replay", "player_page", "seat_moves_text"]


def game_replay(stored: StoredRace) -> GameReplay:
    """``GET /api/games/{id}``."""
    race = stored.record
    return GameReplay.model_validate(
        {
            "id": stored.race_id,
            "game": race.game,
            "deal": race.deal,
            "race": race.race,
            "started_at": race.started_at,
            "ended_at": race.ended_at,
            "seats": [
                SeatReplay.model_validate(
                    {
                        "seat": s.seat,
                        "name": s.name,
                        "player": (
                            PlayerRef(
                                id=s.player_id,
                                handle=s.handle,
                                deleted=s.player_deleted,
                            )
                            if s.player_id is not None
                            else None
                        ),
                        "status": s.status,
                        "rank": s.rank,
                        "score": s.score,
                        "moves": s.moves,
                        "on_foundations": s.on_foundations,
                        "elapsed_ms": s.elapsed_ms,
                        "actions": list(s.actions),
                        "action_times_ms": list(s.action_times),
                    }
                )
                for s in race.seats
            ],
        }
    )


def player_page(
    profile: Profile, today: str = "", daily: Sequence[DailyFigures] = ()
) -> PlayerPage:
    """``GET /api/players/{handle}`` from :meth:`RecordsStore.profile` (the deal of a race
    on a day's secret deal is left out until that day is over: ``today``, YYYY-MM-DD) and
    the player's daily figures (:meth:`SqlRecordsStore.daily_stats`)."""
    player, stats, recent = profile.player, profile.stats, profile.recent
    return PlayerPage.model_validate(
        {
            "handle": player.handle or "",
            "name": player.name,
            "since": player.created_at,
            "stats": [
                GameStats.model_validate(
                    {
                        "game": s.game,
                        "played": s.played,
                        "won": s.won,
                        "win_pct": s.win_pct,
                        "best_time_ms": s.best_time_ms,
                        "best_score": s.best_score,
                        "current_streak": s.current_streak,
                        "longest_streak": s.longest_streak,
                    }
                )
                for s in stats
            ],
            "recent": [
                RaceLine.model_validate(
                    {
                        "id": r.race_id,
                        "game": r.game,
                        "deal": r.deal if not r.daily_day or r.daily_day < today else None,
                        "ended_at": r.ended_at,
                        "racers": r.racers,
                        "seat": r.seat,
                        "status": r.status,
                        "rank": r.rank,
                        "score": r.score,
                        "moves": r.moves,
                        "on_foundations": r.on_foundations,
                        "elapsed_ms": r.elapsed_ms,
                    }
                )
                for r in recent
            ],
            "daily": [daily_stats(d) for d in daily],
        }
    )


def daily_stats(d: DailyFigures) -> DailyStats:
    """A player's figures in one daily game, for the API (the player page, the day's board)."""
    return DailyStats.model_validate(
        {
            "game": d.game,
            "days_played": d.days_played,
            "days_won": d.days_won,
            "played_streak": d.played_streak,
            "won_streak": d.won_streak,
            "longest_played_streak": d.longest_played_streak,
            "longest_won_streak": d.longest_won_streak,
            "best_score": d.best_score,
        }
    )


def seat_moves_text(stored: StoredRace, seat: int) -> str | None:
    """The plain-text move list of one seat (``None``: no such seat); ``samedeal replay
    DEAL -`` reproduces the seat's final position from it."""
    for s in stored.record.seats:
        if s.seat == seat:
            return moves_text(s.actions)
    return None
