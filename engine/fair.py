"""Fair deals: the sealed deals and commitments of ``fair-deals.md``, which anyone can check.

Version 2 (``fair=2``, everything new) draws **sealed deals**: a candidate is
``sealed(prefix, h[0:16])`` (:meth:`engine.DealCode.from_bytes`) of an HMAC-SHA256 ``h``, one of
about 2**122 deals per game, so that nobody can find it from the cards on the table by dealing
every candidate. Version 1 (``fair=1``) drew numbered deals ``1 + (h[0:8] mod 999999)``, which
the opening board gives away in seconds; it stays so that tournaments and days drawn before
version 2 still derive and verify their codes. Every derivation takes the version as its
``fair`` parameter. Both versions derive the same way, HMAC-SHA256 of ASCII text (``|``
separates fields, hex is lower case):

* **Tournament rounds.** A tournament draws a 32-byte ``seed`` at creation and shows
  :func:`commitment` (SHA-256 of the seed) from then on. Candidate ``i`` of round ``r`` is
  :func:`round_candidate` (message ``T2|id|r|i``, ``id`` the code as printed in the link,
  dash included; version 1: ``T1|…`` with the id without its dash, as its implementation
  used it); the round plays candidate 0 ("any deal") or the first candidate the solver proves
  winnable within a fixed node budget (:func:`round_deal`). The seed is revealed when the
  tournament ends, and :func:`round_deal_problems` checks a recorded round.
* **The day's secret deal.** The server keeps a long-lived ``daily_key``; candidate ``i`` of
  a day is :func:`daily_candidate` (``D2|game|date|i``; version 1 ``D1|…``), the day's deal
  the first candidate proven winnable (:func:`secret_daily`). From 00:00 UTC the day's
  :func:`daily_commitment` of the code and :func:`daily_salt` is published; after the day the
  code and the salt are revealed and :func:`verify_daily` checks them (the same in both
  versions). The key is never published, so future days stay unknown.

**When no candidate is proven.** A winnable-only round (or a day) tries at most
``max_candidates`` candidates. If none is proven within the node budget it plays candidate 0,
marked unproven: :class:`RoundDeal` then has no ``solution`` and lists every candidate tried
as ``skipped`` (``0 … max_candidates − 1``). The rule is fixed in advance, so the fallback is
no more choosable than the proof, and the export says so. Version 1 needed it (its caps,
:data:`TOURNAMENT_CANDIDATES_V1` and :data:`engine.daily.DAILY_CANDIDATES_V1`, are kept so
that its exports verify unchanged). Version 2's spec leaves it out: a round or day plays the
first candidate proven; its caps (:data:`TOURNAMENT_CANDIDATES`) are only a safety net, set
from measured proof rates so that falling back to candidate 0 is vanishingly rare, and a
fallback that does happen takes the same form and is checked the same way.

**Node budgets, never seconds.** The proof is bounded in solver nodes, so every machine picks
the same candidate; but a later solver that proves a candidate the current one misses (or
the reverse) picks a different one. A server therefore decides a round's deal, or a day's,
once and stores it; verifiers never rerun the solver, they replay the recorded winning line.

``secrets`` draws the seeds (:func:`new_seed`): it asks the operating system's CSPRNG, which
is no I/O in the sense of ``style.md`` (no file, socket or event loop), and the engine already
uses it for random deals. Keeping the draw beside the derivation keeps the seed's size and
source in the one module that defines them; every other function takes the seed as input.

**Bad input.** Every function refuses a malformed argument with ``ValueError`` (a bad game or
code: :class:`~engine.errors.InvalidDealCodeError`) in both builds. The numbers it checks
itself — round, candidate, version, budget, cap — and the texts and bytes it reads from a
caller's input are typed ``object``: compiled, a parameter typed ``int`` would take ``True``
for 1 before any check could see it, and one typed ``bytes`` would refuse text with a
``TypeError``.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, NamedTuple

from .daily import (
    DAILY_CANDIDATES,
    DAILY_CANDIDATES_V1,
    DAILY_NODES,
    DAILY_PORTFOLIO,
    DAILY_PORTFOLIO_V1,
    utc_date,
)
from .dealcode import GAME_NAMES, GAME_PREFIXES, MAX_NUMBER, SEALED_BYTES, DealCode
from .errors import GameError, InvalidDealCodeError
from .game import replay
from .solver import Member, solve

__all__ = [
    "DAILY_GAMES",
    "FAIR_VERSION",
    "FAIR_VERSIONS",
    "SEED_BYTES",
    "TOURNAMENT_CANDIDATES",
    "TOURNAMENT_CANDIDATES_V1",
    "TOURNAMENT_NODES",
    "RoundDeal",
    "SecretDaily",
    "commitment",
    "daily_candidate",
    "daily_commitment",
    "daily_salt",
    "new_daily_key",
    "new_seed",
    "parse_secret",
    "round_candidate",
    "round_deal",
    "round_deal_problems",
    "secret_daily",
    "verify_daily",
]

#: length of a tournament seed and of the daily key, in bytes
SEED_BYTES: Final = 32
#: the games that have a day's deal (Klondike of the day is always draw one)
DAILY_GAMES: Final = ("klondike", "easy-harp")
#: the version of ``fair-deals.md`` that everything new is drawn with
FAIR_VERSION: Final = 2
#: the versions a stored tournament or day may have been drawn with
FAIR_VERSIONS: Final = (1, 2)
#: default node budget of a winnable-only round's proof, per candidate (both versions)
TOURNAMENT_NODES: Final = {"klondike": 200_000, "klondike-3": 200_000, "easy-harp": 200_000}
#: default cap of candidates a version 2 winnable-only round tries before falling back to
#: candidate 0. A safety net only: with the solver as version 2 came in and the budgets above,
#: sealed candidates were proven winnable at 36/40 (Klondike), 31/40 (draw three) and 29/40 (Easy
#: Harp), so 32 candidates all unproven is below 1e-12 even at the 95 % upper bound of each
#: failure rate (0.21, 0.36, 0.41)
TOURNAMENT_CANDIDATES: Final = {"klondike": 32, "klondike-3": 32, "easy-harp": 32}
#: version 1's default caps (a version 1 tournament recorded its own cap; this is the default
#: of :func:`round_deal` with ``fair=1``)
TOURNAMENT_CANDIDATES_V1: Final = {"klondike": 32, "klondike-3": 32, "easy-harp": 16}


# ---------------------------------------------------------------------- shared steps


def new_seed() -> bytes:
    """A fresh tournament seed: :data:`SEED_BYTES` bytes from the operating system's CSPRNG."""
    return secrets.token_bytes(SEED_BYTES)


def new_daily_key() -> bytes:
    """A fresh ``daily_key`` (created once and kept with the server's data)."""
    return secrets.token_bytes(SEED_BYTES)


def parse_secret(text: object, what: str = "a seed") -> bytes:
    """A seed, key or salt from its hex form (64 hex digits, either case); ``ValueError``
    naming ``what`` else."""
    if not isinstance(text, str):
        raise ValueError(f"{what} must be 64 hex digits")
    text = text.strip()
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raise ValueError(f"{what} is not hex: {text[:80]!r}") from None
    if len(raw) != SEED_BYTES or len(text) != 2 * SEED_BYTES:
        raise ValueError(f"{what} must be {SEED_BYTES} bytes (64 hex digits), got {len(raw)}")
    return raw


def _check_secret(secret: object, what: str) -> bytes:
    """``secret`` as bytes when it is :data:`SEED_BYTES` bytes; ``ValueError`` else."""
    if not isinstance(secret, bytes | bytearray) or len(secret) != SEED_BYTES:
        raise ValueError(f"{what} must be {SEED_BYTES} bytes")
    return bytes(secret)


def _check_game(game: str, allowed: Sequence[str]) -> None:
    if game not in allowed:
        raise InvalidDealCodeError(
            str(game), "game", f"unknown game {game!r} (one of {', '.join(allowed)})"
        )


def _check_index(value: object, low: int, what: str) -> int:
    """``value`` when it is an integer ≥ ``low``; ``ValueError`` else."""
    # bool is an int: refuse it, str(True) would enter the message
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{what} must be an integer ≥ {low}, got {value!r}")
    return value


def _check_fair(fair: object) -> int:
    """``fair`` when it is a version of ``fair-deals.md``; ``ValueError`` else."""
    if isinstance(fair, bool) or not isinstance(fair, int) or fair not in FAIR_VERSIONS:
        raise ValueError(f"fair must be one of {FAIR_VERSIONS} (fair-deals.md's version): {fair!r}")
    return fair


def _deal(key: bytes, message: str, game: str, fair: int) -> DealCode:
    """Version 2: ``sealed(prefix, h[0:16])``; version 1: deal ``1 + (h[0:8] mod 999999)``."""
    digest = hmac.new(key, message.encode("ascii"), hashlib.sha256).digest()
    if fair == 1:
        return DealCode.for_game(game, 1 + int.from_bytes(digest[:8], "big") % MAX_NUMBER)
    return DealCode.from_bytes(GAME_PREFIXES[game], digest[:SEALED_BYTES])


class _Proof(NamedTuple):
    candidate: int
    solution: tuple[str, ...] | None
    skipped: tuple[int, ...]


def _first_proven(
    codes: Sequence[DealCode], nodes: int, portfolio: Sequence[Member] | None
) -> _Proof:
    """The first of ``codes`` proven winnable within ``nodes``, or the fallback (0, unproven)."""
    for index, code in enumerate(codes):
        result = solve(code, nodes=nodes, portfolio=portfolio)
        if result.verdict == "winnable" and result.solution is not None:
            return _Proof(index, result.solution, tuple(range(index)))
    return _Proof(0, None, tuple(range(len(codes))))


# ---------------------------------------------------------------------- tournaments


class RoundDeal(NamedTuple):
    """A round's deal and how it was chosen.

    ``candidate`` is the index ``i`` played; ``solution`` a winning move list when the solver
    proved it winnable (``None`` for "any deal" and for the fallback); ``skipped`` the
    candidates tried and not proven, in order (``0 … i − 1``, or every candidate tried when
    the round fell back to candidate 0).
    """

    code: DealCode
    candidate: int
    solution: tuple[str, ...] | None
    skipped: tuple[int, ...]

    @property
    def proven(self) -> bool:
        """Whether the solver proved the deal winnable (a winning line is recorded)."""
        return self.solution is not None


def commitment(seed: bytes) -> str:
    """The tournament's commitment: ``hex(SHA-256(seed))``, shown from creation on."""
    _check_secret(seed, "a tournament seed")
    return hashlib.sha256(seed).hexdigest()


def _message_id(tournament_id: str, fair: int) -> str:
    """The id as a round's message carries it: version 2 exactly as printed in the link
    (``K7QF-2M``), version 1 without its dash (``K7QF2M``, as its implementation had it)."""
    # the message is ASCII; control characters and spaces would make ids look alike
    if (
        not isinstance(tournament_id, str)
        or not tournament_id
        or not all("!" <= ch <= "~" for ch in tournament_id)
    ):
        raise ValueError(f"a tournament id is printable ASCII without spaces: {tournament_id!r}")
    if fair == 1:
        return tournament_id.replace("-", "")
    # an id without its dash is version 1's form: taking it would derive other deals than
    # any verifier that follows the spec
    if "-" not in tournament_id or tournament_id != tournament_id.upper():
        raise ValueError(
            "a tournament id is its code as printed in its link, upper case, dash included "
            f"(K7QF-2M): {tournament_id!r}"
        )
    return tournament_id


def round_candidate(
    seed: bytes, tournament_id: str, game: str, r: object, i: object, *, fair: object = FAIR_VERSION
) -> DealCode:
    """Candidate ``i`` (0, 1, …) of round ``r`` (1, 2, …) of a tournament of ``game``, its id
    as printed in its link (``K7QF-2M``). Version 2: the sealed deal
    ``sealed(prefix, HMAC-SHA256(seed, "T2|K7QF-2M|r|i")[0:16])``; version 1: deal
    ``1 + (HMAC-SHA256(seed, "T1|K7QF2M|r|i")[0:8] mod 999999)``."""
    version = _check_fair(fair)
    key = _check_secret(seed, "a tournament seed")
    message_id = _message_id(tournament_id, version)
    _check_game(game, tuple(GAME_NAMES))
    number = _check_index(r, 1, "a round number")
    index = _check_index(i, 0, "a candidate index")
    return _deal(key, f"T{version}|{message_id}|{number}|{index}", game, version)


def round_deal(
    seed: bytes,
    tournament_id: str,
    game: str,
    r: object,
    *,
    winnable_only: bool,
    node_budget: object,
    max_candidates: object = None,
    portfolio: Sequence[Member] | None = None,
    fair: object = FAIR_VERSION,
) -> RoundDeal:
    """The deal of round ``r`` (derivation ``fair``, :func:`round_candidate`): candidate 0,
    or (``winnable_only``) the first candidate the solver proves winnable within
    ``node_budget`` nodes, trying at most ``max_candidates`` (default
    :data:`TOURNAMENT_CANDIDATES`, version 1 :data:`TOURNAMENT_CANDIDATES_V1`) before
    falling back to candidate 0 unproven.

    Deterministic for a given solver; costs up to one budget per candidate tried, so a server
    calls it off its event loop and stores the answer.
    """
    first = round_candidate(seed, tournament_id, game, r, 0, fair=fair)
    if not winnable_only:
        return RoundDeal(first, 0, None, ())
    nodes = _check_index(node_budget, 1, "a node budget")
    default = TOURNAMENT_CANDIDATES_V1 if fair == 1 else TOURNAMENT_CANDIDATES
    cap = _check_index(
        default[game] if max_candidates is None else max_candidates, 1, "a candidate cap"
    )
    codes = [
        first,
        *(round_candidate(seed, tournament_id, game, r, i, fair=fair) for i in range(1, cap)),
    ]
    proof = _first_proven(codes, nodes, portfolio)
    return RoundDeal(codes[proof.candidate], proof.candidate, proof.solution, proof.skipped)


def round_deal_problems(
    seed: bytes,
    tournament_id: str,
    game: str,
    r: int,
    deal: RoundDeal,
    *,
    winnable_only: bool,
    max_candidates: int,
    fair: object = FAIR_VERSION,
) -> list[str]:
    """What is wrong with a recorded round deal (empty when it checks): the code must be
    candidate ``deal.candidate`` of round ``r`` by derivation ``fair``, the skipped list must
    follow the rule, and a recorded winning line must win the deal when replayed. Skipped
    candidates are not re-judged (that needs the same solver)."""
    where = f"round {r}"
    try:
        _check_index(deal.candidate, 0, "a candidate index")
        expected = round_candidate(seed, tournament_id, game, r, deal.candidate, fair=fair)
    except ValueError as exc:
        return [f"{where}: {exc}"]
    problems = []
    if deal.code != expected:
        problems.append(f"{where}: deal {deal.code} is not candidate {deal.candidate} ({expected})")
    if not winnable_only:
        if deal.candidate != 0 or deal.skipped or deal.solution is not None:
            problems.append(f"{where}: 'any deal' plays candidate 0 with nothing skipped")
        return problems
    if deal.solution is None:
        if deal.candidate != 0 or deal.skipped != tuple(range(max_candidates)):
            problems.append(
                f"{where}: an unproven deal must be the fallback (candidate 0 after "
                f"{max_candidates} candidates skipped)"
            )
        return problems
    if deal.skipped != tuple(range(deal.candidate)):
        problems.append(
            f"{where}: skipped candidates {list(deal.skipped)} are not 0 … {deal.candidate - 1}"
        )
    if deal.candidate >= max_candidates:
        problems.append(f"{where}: candidate {deal.candidate} is past the cap {max_candidates}")
    try:
        won = replay(deal.code, deal.solution).won
    except GameError as exc:
        problems.append(f"{where}: the winning line does not replay: {exc}")
    else:
        if not won:
            problems.append(f"{where}: the winning line does not win {deal.code}")
    return problems


# ---------------------------------------------------------------------- the day's deal


def _day(date: dt.date | dt.datetime | str) -> str:
    return utc_date(date).isoformat()


def daily_candidate(
    key: bytes,
    game: str,
    date: dt.date | dt.datetime | str,
    i: object,
    *,
    fair: object = FAIR_VERSION,
) -> DealCode:
    """Candidate ``i`` of the day ``date`` (UTC) for a daily game (``klondike`` or
    ``easy-harp``). Version 2: the sealed deal
    ``sealed(prefix, HMAC-SHA256(key, "D2|game|date|i")[0:16])``; version 1: deal
    ``1 + (HMAC-SHA256(key, "D1|game|date|i")[0:8] mod 999999)``."""
    version = _check_fair(fair)
    secret = _check_secret(key, "the daily key")
    _check_game(game, DAILY_GAMES)
    index = _check_index(i, 0, "a candidate index")
    return _deal(secret, f"D{version}|{game}|{_day(date)}|{index}", game, version)


def daily_salt(key: bytes, game: str, date: dt.date | dt.datetime | str) -> bytes:
    """The day's salt: ``HMAC-SHA256(key, "S1|game|date")`` (32 bytes)."""
    _check_secret(key, "the daily key")
    _check_game(game, DAILY_GAMES)
    message = f"S1|{game}|{_day(date)}".encode("ascii")
    return hmac.new(key, message, hashlib.sha256).digest()


def daily_commitment(code: DealCode | str, salt: object) -> str:
    """The day's commitment: ``hex(SHA-256(code + "|" + hex(salt)))``, code canonical."""
    canonical = code if isinstance(code, DealCode) else DealCode.parse(code)
    if not isinstance(salt, bytes | bytearray) or len(salt) != SEED_BYTES:
        raise ValueError(f"a salt must be {SEED_BYTES} bytes")
    return hashlib.sha256(f"{canonical}|{bytes(salt).hex()}".encode("ascii")).hexdigest()


def verify_daily(code: DealCode | str, salt_hex: object, commitment: object) -> bool:
    """Whether a revealed ``code`` and salt match the day's published ``commitment``.

    Malformed input — a bad code, a salt that is not 64 hex digits, a commitment that is not
    64 hex digits — raises ``ValueError`` (a bad code :class:`InvalidDealCodeError`), so that
    a caller can tell "does not verify" from "could not be read".
    """
    salt = parse_secret(salt_hex, "a salt")
    wanted = commitment.strip().lower() if isinstance(commitment, str) else ""
    if len(wanted) != 64 or any(ch not in "0123456789abcdef" for ch in wanted):
        raise ValueError(f"a commitment must be 64 hex digits: {str(commitment)[:80]!r}")
    return hmac.compare_digest(daily_commitment(code, salt), wanted)


@dataclass(frozen=True, slots=True)
class SecretDaily:
    """The day's secret deal of one daily game, with what to publish and what to reveal.

    ``candidate`` is the index played, ``solution`` the solver's winning line (``None`` for
    the fallback: candidate 0 when no candidate within the day's cap was proven), ``fair``
    the derivation's version (2: a sealed deal; 1: a numbered deal of a day drawn before).
    Everything here but :meth:`published` stays on the server until the day is over.
    """

    game: str
    date: dt.date
    code: DealCode
    candidate: int
    solution: tuple[str, ...] | None
    salt: bytes
    commitment: str
    fair: int = FAIR_VERSION

    def __reduce__(self) -> tuple[object, ...]:
        # (compiled, a frozen dataclass does not unpickle by itself; the day's deal is proved
        # in a solver process)
        return (
            SecretDaily,
            (
                self.game,
                self.date,
                self.code,
                self.candidate,
                self.solution,
                self.salt,
                self.commitment,
                self.fair,
            ),
        )

    @property
    def verified(self) -> bool:
        """Whether the solver proved the deal winnable."""
        return self.solution is not None

    def published(self) -> dict[str, Any]:
        """What may be shown during the day: the game, the date and the commitment."""
        return {"game": self.game, "date": self.date.isoformat(), "commitment": self.commitment}

    def reveal(self) -> dict[str, Any]:
        """The reveal, from 00:00 UTC of the next day (what ``samedeal daily verify`` reads)."""
        return {**self.published(), "code": str(self.code), "salt": self.salt.hex()}


def secret_daily(
    key: bytes, game: str, date: dt.date | dt.datetime | str, *, fair: object = FAIR_VERSION
) -> SecretDaily:
    """The day's secret deal of ``game`` on the UTC ``date`` by derivation ``fair`` (1 for a
    day drawn before version 2): the first candidate the solver proves winnable within
    ``DAILY_NODES`` (at most ``DAILY_CANDIDATES`` tried, the searches of
    ``DAILY_PORTFOLIO``; version 1 the ``…_V1`` bounds), else candidate 0 unproven. Cached per
    key, game, day and version, but the first call of a day runs the proof: call it off the
    event loop."""
    version = _check_fair(fair)
    secret = _check_secret(key, "the daily key")
    _check_game(game, DAILY_GAMES)
    return _secret_daily(secret, game, utc_date(date), version)


@lru_cache(maxsize=16)
def _secret_daily(key: bytes, game: str, day: dt.date, fair: int) -> SecretDaily:
    caps, portfolios = (
        (DAILY_CANDIDATES_V1, DAILY_PORTFOLIO_V1)
        if fair == 1
        else (DAILY_CANDIDATES, DAILY_PORTFOLIO)
    )
    codes = [daily_candidate(key, game, day, i, fair=fair) for i in range(caps[game])]
    proof = _first_proven(codes, DAILY_NODES[game], portfolios[game])
    code = codes[proof.candidate]
    salt = daily_salt(key, game, day)
    return SecretDaily(
        game, day, code, proof.candidate, proof.solution, salt, daily_commitment(code, salt), fair
    )
