"""What a rated race counts as, pure: the rules docs/ratings.md tells players.

* **Which races.** A race is rated when its room was made rated (:func:`is_rated`): every
  racer has an identity (so no robot), no identity holds two seats, at least two race, and
  it is neither the deal of the day nor a tournament round.
* **Pairwise results.** A race of n racers counts as its n(n−1)/2 pairwise results
  (:func:`pairwise`), each decided by the race's one ranking rule
  (:func:`server.rooms.ranking.race_key`): the better place wins, equal places draw.
* **Abandoning.** A racer who left (the grace period ran out while they were racing) or
  stopped moving — ran out of time without a move in the last :data:`IDLE_MS` of the race —
  abandoned (:func:`abandoned`): they lose to every racer who did not, whatever the boards.
* **One rating period per race.** Each racer's rating is updated once per race, from the
  pairwise results against the others as they all stood before it (:func:`rate_race`).
* **Provisional** while the deviation is at least :data:`PROVISIONAL_RD` (shown ``1500?``).
* **Cooldown.** Abandoning rated races again and again keeps a player from seeking a race
  for a while (:func:`seek_cooldown_ms`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Generic, Protocol, TypeVar

from protocol import RaceStatus

from ..rooms.ranking import RaceProgress, race_key
from ..rooms.room import RoomState
from .glicko import START, Rating, rate

__all__ = [
    "ABANDON_WINDOW_MS",
    "ACTIVE_DAYS",
    "COOLDOWNS_MS",
    "IDLE_MS",
    "PROVISIONAL_RD",
    "Change",
    "Racer",
    "SeatResult",
    "Standing",
    "abandoned",
    "is_provisional",
    "is_rated",
    "outcome",
    "pairwise",
    "rate_race",
    "seek_cooldown_ms",
    "shown",
]

P = TypeVar("P", bound=Hashable)

PROVISIONAL_RD = 110.0
"""A rating is provisional while its deviation (RD) is this or more (Lichess's bound): a new
player (RD 350) leaves it after 10 to 22 two-player races (the fewer, the surer the
opponents' ratings), 4 to 7 races in rooms of four."""

IDLE_MS = 60_000
"""A racer who ran out of time without a move in the race's last minute stopped moving."""

ACTIVE_DAYS = 30
"""The leaderboard lists players with a rated race in the last this many days."""

ABANDON_WINDOW_MS = 24 * 3_600_000
"""Abandoned races count towards the cooldown for a day."""

COOLDOWNS_MS = (0, 0, 5 * 60_000, 15 * 60_000, 60 * 60_000)
"""The cooldown on seeking after the last abandoned race, by how many were abandoned in the
last :data:`ABANDON_WINDOW_MS` (the last entry for that many and more)."""


class SeatResult(RaceProgress, Protocol):
    """A recorded seat's final result (a :class:`~server.records.models.SeatRecord`, or
    its row in the store)."""

    @property
    def seat(self) -> int:
        """The seat number."""


@dataclass(frozen=True, slots=True)
class Racer:
    """One racer's final result, as the ranking reads it, and whether they abandoned."""

    seat: int
    status: RaceStatus
    elapsed_ms: int | None
    moves: int
    on_foundations: int
    score: int
    abandoned: bool = False

    @classmethod
    def of(cls, seat: SeatResult, last_action_ms: int, race_ms: int) -> Racer:
        """A recorded seat whose last action came ``last_action_ms`` after the start (0:
        none), in a race that lasted ``race_ms``."""
        return cls(
            seat=seat.seat,
            status=seat.status,
            elapsed_ms=seat.elapsed_ms,
            moves=seat.moves,
            on_foundations=seat.on_foundations,
            score=seat.score,
            abandoned=abandoned(seat.status, last_action_ms, race_ms),
        )


@dataclass(frozen=True, slots=True)
class Standing:
    """A player's rating in one game and their rated record: rated races, the pairwise
    results (opponents beaten, drawn, lost to), races abandoned, the last one's end."""

    rating: Rating = START
    races: int = 0
    won: int = 0
    drawn: int = 0
    lost: int = 0
    abandoned: int = 0
    last_race_at: int | None = None

    @property
    def provisional(self) -> bool:
        """Whether the rating is still provisional."""
        return is_provisional(self.rating)


@dataclass(frozen=True, slots=True)
class Change(Generic[P]):
    """What one race did to one racer's standing."""

    seat: int
    player: P
    before: Rating
    after: Rating
    won: int
    drawn: int
    lost: int
    abandoned: bool

    def apply(self, standing: Standing, at: int) -> Standing:
        """The standing after this change, in a race that ended at ``at``."""
        return replace(
            standing,
            rating=self.after,
            races=standing.races + 1,
            won=standing.won + self.won,
            drawn=standing.drawn + self.drawn,
            lost=standing.lost + self.lost,
            abandoned=standing.abandoned + int(self.abandoned),
            last_race_at=at,
        )


def is_rated(room: RoomState) -> bool:
    """Whether the race just played in ``room`` counts for ratings."""
    players = [room.racer_ids.get(seat) for seat in room.participants]
    return (
        room.options.rated
        and room.daily_day is None
        and room.tournament is None
        and len(players) >= 2
        and None not in players
        and len(set(players)) == len(players)
    )


def abandoned(status: RaceStatus, last_action_ms: int, race_ms: int) -> bool:
    """Whether a racer with final ``status`` whose last action came ``last_action_ms``
    after the start (0: none) abandoned a race that lasted ``race_ms``."""
    return status == "left" or (status == "timeout" and race_ms - last_action_ms > IDLE_MS)


def outcome(a: Racer, b: Racer) -> float:
    """``a``'s score against ``b``: 1 a better place (or ``b`` alone abandoned), ½ the
    same place, 0 a worse one."""
    if a.abandoned != b.abandoned:
        return 0.0 if a.abandoned else 1.0
    key_a, key_b = race_key(a), race_key(b)
    return 1.0 if key_a < key_b else 0.0 if key_a > key_b else 0.5


def pairwise(racers: Sequence[Racer]) -> list[tuple[int, int, float]]:
    """Every pair of racers once, in seat order: (seat, other seat, the first's score)."""
    ordered = sorted(racers, key=lambda r: r.seat)
    return [(a.seat, b.seat, outcome(a, b)) for a, b in combinations(ordered, 2)]


def rate_race(
    racers: Sequence[tuple[P, Racer]], standings: Mapping[P, Standing]
) -> list[Change[P]]:
    """Each racer's change in one race (one rating period), from the pairwise results and
    everyone's standing before it (a player without one starts at 1500 ± 350). Racers
    are (player, result); fewer than two: nothing changes."""
    if len(racers) < 2:
        return []
    before = {player: standings.get(player, Standing()).rating for player, _ in racers}
    player_of = {racer.seat: player for player, racer in racers}
    games: dict[int, list[tuple[Rating, float]]] = {racer.seat: [] for _, racer in racers}
    for seat, other, score in pairwise([racer for _, racer in racers]):
        games[seat].append((before[player_of[other]], score))
        games[other].append((before[player_of[seat]], 1.0 - score))
    changes = []
    for player, racer in sorted(racers, key=lambda pr: pr[1].seat):
        scores = [score for _, score in games[racer.seat]]
        changes.append(
            Change(
                seat=racer.seat,
                player=player,
                before=before[player],
                after=rate(before[player], games[racer.seat]),
                won=scores.count(1.0),
                drawn=scores.count(0.5),
                lost=scores.count(0.0),
                abandoned=racer.abandoned,
            )
        )
    return changes


def is_provisional(rating: Rating) -> bool:
    """Whether ``rating`` is still provisional (its RD at least :data:`PROVISIONAL_RD`)."""
    return rating.rd >= PROVISIONAL_RD


def shown(rating: Rating) -> str:
    """A rating as players see it: whole points, ``?`` while provisional (``1520?``)."""
    return f"{round(rating.rating)}{'?' if is_provisional(rating) else ''}"


def seek_cooldown_ms(abandoned_at: Sequence[int], now: int) -> int:
    """How long a player who abandoned rated races at the times ``abandoned_at`` (ms) must
    still wait before seeking a race (0: they may seek now)."""
    recent = [at for at in abandoned_at if now - at < ABANDON_WINDOW_MS]
    if not recent:
        return 0
    cooldown = COOLDOWNS_MS[min(len(recent), len(COOLDOWNS_MS) - 1)]
    return max(0, max(recent) + cooldown - now)
