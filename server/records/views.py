"""What the store returns, as the HTTP JSON models of :mod:`protocol.api`.

The HTTP routes (wired by the server) call these and encode the result with
``model.model_dump_json()`` — or use :func:`seat_moves_text` for the plain-text export.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from protocol.api import (
    DailyStats,
    GameRating,
    GameReplay,
    GameStats,
    Leaderboard,
    PlayerPage,
    PlayerRef,
    RaceLine,
    RatingHistory,
    SeatReplay,
    moves_text,
)
from protocol.frames import RatingChangeBody

from ..ratings.rules import ACTIVE_DAYS, PROVISIONAL_RD, Standing, is_provisional
from .models import DailyStats as DailyFigures
from .models import Profile, StoredRace
from .ratings import RankedPlayer, RatingPoint, SeatRating

__all__ = [
    "daily_stats",
    "game_rating",
    "game_replay",
    "leaderboard_page",
    "player_page",
    "rating_change",
    "rating_history",
    "seat_moves_text",
]


def game_replay(stored: StoredRace, ratings: Sequence[SeatRating] = ()) -> GameReplay:
    """``GET /api/games/{id}`` (``ratings``: what the race did to its racers' ratings, when
    it was rated)."""
    race = stored.record
    by_seat = {r.seat: rating_change(r) for r in ratings}
    return GameReplay.model_validate(
        {
            "id": stored.race_id,
            "game": race.game,
            "deal": race.deal,
            "race": race.race,
            "started_at": race.started_at,
            "ended_at": race.ended_at,
            "rated": race.rated,
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
                        "rating": by_seat.get(s.seat),
                    }
                )
                for s in race.seats
            ],
        }
    )


def rating_change(change: SeatRating) -> RatingChangeBody:
    """A racer's rating change as results show it (``race_recorded``, a replay): whole
    points, the change being the difference of the two ratings as shown."""
    return {
        "seat": change.seat,
        "player": change.player_id,
        "rating": round(change.after.rating),
        "change": round(change.after.rating) - round(change.before.rating),
        "rd": round(change.after.rd),
        "provisional": is_provisional(change.after),
        "abandoned": change.abandoned,
    }


def game_rating(game: str, standing: Standing) -> GameRating:
    """A player's rating in ``game`` and their rated record."""
    return GameRating.model_validate(
        {
            "game": game,
            "rating": round(standing.rating.rating),
            "rd": round(standing.rating.rd),
            "provisional": standing.provisional,
            "races": standing.races,
            "won": standing.won,
            "drawn": standing.drawn,
            "lost": standing.lost,
            "abandoned": standing.abandoned,
            "last_race_at": standing.last_race_at or 0,
        }
    )


def rating_history(
    handle: str, game: str, standing: Standing | None, points: Sequence[RatingPoint]
) -> RatingHistory:
    """``GET /api/players/{handle}/ratings/{game}``."""
    return RatingHistory.model_validate(
        {
            "handle": handle,
            "game": game,
            "current": game_rating(game, standing) if standing is not None else None,
            "points": [
                {
                    "game_id": p.race_id,
                    "at": p.ended_at,
                    "rating": round(p.after.rating),
                    "rd": round(p.after.rd),
                    "change": round(p.after.rating) - round(p.before.rating),
                    "provisional": is_provisional(p.after),
                }
                for p in points
            ],
        }
    )


def leaderboard_page(game: str, ranked: Sequence[RankedPlayer]) -> Leaderboard:
    """``GET /api/leaderboard/{game}``."""
    return Leaderboard.model_validate(
        {
            "game": game,
            "active_days": ACTIVE_DAYS,
            "provisional_rd": round(PROVISIONAL_RD),
            "entries": [
                {
                    "rank": r.rank,
                    "player": r.player_id,
                    "name": r.name,
                    "handle": r.handle,
                    "rating": round(r.standing.rating.rating),
                    "rd": round(r.standing.rating.rd),
                    "races": r.standing.races,
                    "last_race_at": r.standing.last_race_at or 0,
                }
                for r in ranked
            ],
        }
    )


def player_page(
    profile: Profile,
    today: str = "",
    daily: Sequence[DailyFigures] = (),
    ratings: Mapping[str, Standing] | None = None,
) -> PlayerPage:
    """``GET /api/players/{handle}`` from :meth:`RecordsStore.profile` (the deal of a race
    on a day's secret deal is left out until that day is over: ``today``, YYYY-MM-DD), the
    player's daily figures (:meth:`SqlRecordsStore.daily_stats`) and their standing per
    game (:meth:`SqlRecordsStore.standings`)."""
    player, stats, recent = profile.player, profile.stats, profile.recent
    return PlayerPage.model_validate(
        {
            "handle": player.handle or "",
            "ratings": [game_rating(game, s) for game, s in (ratings or {}).items()],
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
