"""The quick-play pools and who is paired with whom, pure: no I/O.

**Pools.** One per game × room size (2 or 4) × time limit (none, 5 or 10 minutes) ×
rated or casual (:data:`POOLS`); a rated pool has a time limit (a race without one could be
held open for ever by a racer who stops moving, and nothing would end it: untimed races
are casual). A pool's id is its text form, ``klondike:2:300:rated`` (:meth:`Pool.parse`
reads it back).

**Seekers.** A seeker (:class:`Seeker`) is a player waiting in one pool, with their rating
in its game as it stood when they sought, since when they wait, and what the store needs to
find them again (the worker and connection holding them, the hash of the seat token their
worker made for them).

**Pairing** (:func:`groups`): the longest waiter first, each seeker is put in a room with
the pool's other seekers closest to their rating, provided every one of them is within
their rating window; the window widens with the wait (:func:`window`), as Lichess's pools
do: 150 points at once, 50 more for each second waited. A seeker whose window holds too few
others waits for the next pass. After a pass nobody left waiting has enough others within
their window to fill a room (whose window is the widest of a group: the longest waiter's),
which is what ``bench/pools.py`` checks.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import orjson

__all__ = [
    "GAMES",
    "POOLS",
    "SIZES",
    "TIME_LIMITS",
    "WINDOW_GROWTH",
    "WINDOW_START",
    "Pool",
    "PoolError",
    "Seeker",
    "compatible",
    "groups",
    "pool_of",
    "waiting_with_match",
    "window",
]

GAMES: Final = ("easy-harp", "klondike", "klondike-3")
SIZES: Final = (2, 4)
TIME_LIMITS: Final = (None, 300, 600)
"""The time limits of the pools, in seconds (None: no time limit)."""

WINDOW_START: Final = 150
"""Rating points either side a seeker accepts at once."""
WINDOW_GROWTH: Final = 50
"""Rating points the window widens by for each second waited."""


class PoolError(ValueError):
    """A seek for a pool that does not exist: ``code`` is the ``error`` reply's code
    (``no_such_pool``, ``bad_time_limit``, ``rated_needs_time_limit``)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Pool:
    """A quick-play pool: races of ``game`` in rooms of ``players``, with ``time_limit``
    seconds (None: none), rated or casual."""

    game: str
    players: int
    time_limit: int | None
    rated: bool

    def __post_init__(self) -> None:
        if self.game not in GAMES:
            raise PoolError("no_such_pool", f"no pool plays {self.game!r}: {', '.join(GAMES)}")
        if self.players not in SIZES:
            raise PoolError("no_such_pool", f"no pool has rooms of {self.players}: rooms of 2 or 4")
        if self.time_limit not in TIME_LIMITS:
            raise PoolError(
                "bad_time_limit",
                f"a pool's time limit is none, 300 or 600 seconds, not {self.time_limit}",
            )
        if self.rated and self.time_limit is None:
            raise PoolError(
                "rated_needs_time_limit",
                "races without a time limit are casual: a rated pool has one (300 or 600)",
            )

    @property
    def id(self) -> str:
        """The pool's id: ``GAME:PLAYERS:SECONDS:rated|casual`` (0 seconds: no limit)."""
        kind = "rated" if self.rated else "casual"
        return f"{self.game}:{self.players}:{self.time_limit or 0}:{kind}"

    def __str__(self) -> str:
        return self.id

    def __repr__(self) -> str:
        return f"Pool.parse({self.id!r})"

    @classmethod
    def parse(cls, text: str) -> Pool:
        """The pool of an id (:attr:`id`); :class:`PoolError` for anything else."""
        parts = text.split(":")
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
            raise PoolError("no_such_pool", f"not a pool: {text!r}")
        if parts[3] not in ("rated", "casual"):
            raise PoolError("no_such_pool", f"not a pool: {text!r}")
        seconds = int(parts[2])
        return cls(parts[0], int(parts[1]), seconds or None, parts[3] == "rated")

    def smaller(self) -> Pool | None:
        """The pool of the next smaller rooms (a room of 4's seekers may take a room of 2
        instead), if there is one."""
        if self.players == 2:
            return None
        return Pool(self.game, 2, self.time_limit, self.rated)


POOLS: Final = tuple(
    Pool(game, players, limit, rated)
    for game in GAMES
    for players in SIZES
    for limit in TIME_LIMITS
    for rated in (False, True)
    if limit is not None or not rated
)
"""Every pool, in a fixed order (game, size, time limit, casual then rated)."""


def pool_of(
    game: str, players: int, time_limit: int | None, rated: bool | None, identified: bool
) -> Pool:
    """The pool a ``seek`` asks for. ``rated`` None: rated for a player with an identity
    when the pool has a time limit, casual otherwise; :class:`PoolError` for a pool that
    does not exist."""
    if rated is None:
        rated = identified and time_limit is not None
    return Pool(game, players, time_limit, rated)


@dataclass(frozen=True, slots=True)
class Seeker:
    """A player waiting in a pool. ``key`` names them in the pool: ``p:<player id>`` for a
    player with an identity (one seek per identity), ``g:<connection id>`` for a guest."""

    key: str
    name: str
    #: their rating in the pool's game (a guest and a newcomer: 1500), and its deviation
    rating: float
    rd: float
    #: when they sought (server ms)
    since: int
    #: the worker and connection holding them
    worker: str
    conn: str
    #: the hash of the seat token their worker made for them (the pairing worker seats them
    #: with it; the token itself never leaves their worker)
    token_hash: str
    #: their identity, None for a guest
    player: str | None = None

    def to_json(self) -> bytes:
        """The seeker as the store keeps it."""
        return orjson.dumps(
            {
                "key": self.key,
                "name": self.name,
                "rating": self.rating,
                "rd": self.rd,
                "since": self.since,
                "worker": self.worker,
                "conn": self.conn,
                "token_hash": self.token_hash,
                "player": self.player,
            }
        )

    @classmethod
    def from_json(cls, data: bytes | str) -> Seeker:
        """A seeker as :meth:`to_json` wrote it."""
        return cls(**orjson.loads(data))


def window(waited_ms: int) -> float:
    """The rating points either side a seeker who has waited ``waited_ms`` accepts."""
    return WINDOW_START + WINDOW_GROWTH * max(0, waited_ms) / 1000


def compatible(a: Seeker, b: Seeker, now: int) -> bool:
    """Whether two seekers may race each other at ``now``: their ratings are within the
    window of the one who has waited longer (the wider)."""
    longest = min(a.since, b.since)
    return abs(a.rating - b.rating) <= window(now - longest)


def groups(seekers: Iterable[Seeker], size: int, now: int) -> list[tuple[Seeker, ...]]:
    """The rooms of ``size`` to make now from a pool's ``seekers``: the longest waiter
    first (ties: the key), each with the ``size - 1`` others nearest their rating (ties: the
    longer waiter) if all of them are within the longest waiter's window; each room in
    the order its seekers sought. Nobody is in two rooms."""
    waiting = sorted(seekers, key=lambda s: (s.since, s.key))
    taken: set[str] = set()
    out: list[tuple[Seeker, ...]] = []
    for first in waiting:
        if first.key in taken:
            continue
        reach = window(now - first.since)
        near = sorted(
            (
                s
                for s in waiting
                if s.key not in taken
                and s.key != first.key
                and abs(s.rating - first.rating) <= reach
            ),
            key=lambda s: (abs(s.rating - first.rating), s.since, s.key),
        )
        if len(near) < size - 1:
            continue
        group = (first, *near[: size - 1])
        taken.update(s.key for s in group)
        out.append(tuple(sorted(group, key=lambda s: (s.since, s.key))))
    return out


def waiting_with_match(seekers: Sequence[Seeker], size: int, now: int) -> list[Seeker]:
    """The seekers who could be in a room now but are not (a pass at ``now`` would pair
    them): none, just after a pass."""
    return [s for group in groups(seekers, size, now) for s in group]
