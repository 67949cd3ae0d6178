"""Results and the full export of a tournament, and :func:`verify` for the full export.

* :func:`results_json`, :func:`results_ndjson`, :func:`results_csv`: the standings the page
  shows (rank, player, points, total time, per round: status, place, points, time, score,
  moves, cards home; then the tie-break values in their order).
* :func:`full_export`: settings, players, every round (deal code, candidate index, winning
  line, skipped candidates, every result with its move list), the commitment and — once the
  tournament has finished — the seed, the scoring rule, the standings and the audit log.
  Before the end it shows what the page shows: no seed, nothing of the round being played.
* :func:`verify`: what anyone can check with this module and nothing of the server's:
  the seed against the commitment, every round's deal against its candidate, every winning
  line and every result by replaying it, and the standings by recomputing them.

An export says which version of ``fair-deals.md`` its rounds were drawn by: ``"fair": 2``
(sealed deals, ``T2``) or ``1`` (numbered deals, ``T1``: tournaments created before version
2), beside ``"draw"`` — the commitment, the seed once revealed, the deal rule and the
solver's bounds — and the tournament's ``"id"`` as printed in its link (``K7QF-2M``), which
``T2`` takes. Exports of format ``samedeal-tournament/1``, made before, carried that object
as ``"fair"`` and the id without its dash: they are read as version 1 and still verify.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from typing import Any, Final

import orjson
from pydantic import ValidationError

from engine import DealCode, GameError, new_game
from engine.fair import FAIR_VERSIONS, RoundDeal, commitment, parse_secret, round_deal_problems
from server.codes import display_code

from .scoring import CARD_PENALTY_MS, TIEBREAKS, WIN_BONUS, Standing, standings, standings_of
from .settings import SettingsError, TournamentSettings, parse_settings
from .state import PlayerState, RoundResult, RoundState, TournamentState, public_view

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_FORMATS",
    "ExportError",
    "draw_of",
    "drawn",
    "full_export",
    "load_export",
    "results_csv",
    "results_json",
    "results_ndjson",
    "verify",
]

#: the format of the exports made now: ``"fair"`` is the version, ``"draw"`` the commitment
EXPORT_FORMAT: Final = "samedeal-tournament/2"
#: the formats read: ``…/1``'s ``"fair"`` was the commitment's object, its rounds version 1's
EXPORT_FORMATS: Final = ("samedeal-tournament/1", EXPORT_FORMAT)
_ROUND_COLUMNS: Final = ("status", "place", "points", "time_ms", "score", "moves", "cards_home")


class ExportError(ValueError):
    """The text is not a tournament export at all (not JSON, not an object, another format);
    a readable export with wrong contents gives problems from :func:`verify` instead."""


def _scoring(settings: TournamentSettings) -> dict[str, Any]:
    return {
        "mode": settings.scoring,
        "win_bonus": WIN_BONUS,
        "card_penalty_ms": CARD_PENALTY_MS,
        "tiebreaks": [{"key": t.key, "better": t.better} for t in TIEBREAKS[settings.scoring]],
    }


# --------------------------------------------------------------------- results


def results_json(state: TournamentState) -> bytes:
    """The standings as one JSON object: the scoring rule, then one row per player."""
    return orjson.dumps(
        {
            "tournament": state.id,
            "name": state.settings.name,
            "scoring": _scoring(state.settings),
            "standings": [row.as_json() for row in standings(state)],
        }
    )


def results_ndjson(state: TournamentState) -> bytes:
    """The standings as NDJSON: one row (as in :func:`results_json`) per line."""
    return b"".join(orjson.dumps(row.as_json()) + b"\n" for row in standings(state))


def _cell(text: str) -> str:
    # a name starting with = + - @ is a formula to a spreadsheet: keep it text
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def results_csv(state: TournamentState) -> str:
    """The standings as CSV: one row per player, ``r1_place`` … columns per round ended,
    then the tie-break values; names that a spreadsheet would run are quoted with ``'``."""
    rows: list[Standing] = standings(state)
    rounds = [r.number for r in state.rounds if r.ended_at is not None]
    breaks = [t.key for t in TIEBREAKS[state.settings.scoring]]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    head = ["rank", "player", "name", "status", "points", "time_ms"]
    head += [f"r{n}_{column}" for n in rounds for column in _ROUND_COLUMNS]
    writer.writerow([*head, *breaks])
    for row in rows:
        line: list[Any] = [
            row.rank,
            row.player,
            _cell(row.name),
            row.status,
            row.points,
            row.time_ms,
        ]
        for e in row.rounds:
            place = "" if e.place is None else e.place
            line += [e.status, place, e.points, e.time_ms, e.score, e.moves, e.on_foundations]
        writer.writerow([*line, *(row.tiebreaks[k] for k in breaks)])
    return out.getvalue()


# --------------------------------------------------------------------- full export


def draw_of(state: TournamentState) -> dict[str, Any]:
    """How the rounds are drawn, as the page and the export show it: the commitment, the
    seed once the tournament has finished, the deal rule and the solver's bounds."""
    return {
        "commitment": state.commitment,
        "seed": state.seed if state.phase == "finished" else None,
        "deals": state.settings.deals,
        "node_budget": state.node_budget,
        "max_candidates": state.max_candidates,
    }


def full_export(state: TournamentState) -> dict[str, Any]:
    """Everything about the tournament that may be shown now (see the module's docstring)."""
    view = public_view(state)
    return {
        "format": EXPORT_FORMAT,
        "fair": state.fair,
        "id": display_code(state.id),
        "host": state.host,
        "phase": state.phase,
        "created_at": state.created_at,
        "started_at": state.started_at,
        "finished_at": state.finished_at,
        "settings": view["settings"],
        "draw": draw_of(state),
        "players": list(view["players"].values()),
        "rounds": view["rounds"],
        "scoring": _scoring(state.settings),
        "standings": [row.as_json() for row in standings(state)],
        "audit": view["audit"],
    }


def load_export(data: str | bytes) -> dict[str, Any]:
    """Read an export's JSON text; :class:`ExportError` when it cannot be one."""
    try:
        export = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise ExportError(f"not JSON: {exc}") from None
    if not isinstance(export, dict):
        raise ExportError("not a tournament export: the JSON is not an object")
    if export.get("format") not in EXPORT_FORMATS:
        raise ExportError(f"not a tournament export (format {export.get('format')!r:.40})")
    return export


def drawn(export: Mapping[str, Any]) -> tuple[int | None, Mapping[str, Any]]:
    """How an export's rounds were drawn: the version of ``fair-deals.md`` (``None`` when it
    is none of :data:`~engine.fair.FAIR_VERSIONS`) and the ``draw`` object (commitment,
    seed, deal rule, bounds; empty when missing). An export of format ``…/1`` carried the
    object as ``"fair"``; one without a version is version 1."""
    given = export.get("fair")
    if isinstance(given, Mapping):
        return 1, given
    draw = export.get("draw")
    draw = draw if isinstance(draw, Mapping) else {}
    if given is None:
        return 1, draw
    # JSON's true is an int to Python: not a version
    if isinstance(given, bool) or given not in FAIR_VERSIONS:
        return None, draw
    return int(given), draw


def _invalid(what: str, exc: ValidationError) -> str:
    error = exc.errors(include_url=False)[0]
    where = ".".join(str(p) for p in error["loc"])
    return f"{what}: {where}: {error['msg']}" if where else f"{what}: {error['msg']}"


def verify(export: Mapping[str, Any]) -> list[str]:
    """The problems of a full export (empty: it verifies). Raises :class:`ExportError` when
    ``export`` is not a tournament export at all."""
    if not isinstance(export, Mapping) or export.get("format") not in EXPORT_FORMATS:
        raise ExportError("not a tournament export")
    version, draw = drawn(export)
    problems, seed = _check_seed(draw)
    if version is None:
        known = " or ".join(map(str, FAIR_VERSIONS))
        problems.append(f"fair: version {export.get('fair')!r:.40} is not {known}")
    try:
        settings = parse_settings(export.get("settings") or {})
    except SettingsError as exc:
        return [*problems, f"settings: {exc.message}"]
    listed = export.get("rounds") or []
    if not isinstance(listed, list):
        return [*problems, "rounds: not a list"]
    # a round being played shows nothing of its deal: it cannot be checked yet
    live = [x for x in listed if isinstance(x, Mapping) and x.get("deal") is None]
    problems += [f"round {x.get('number')} is being played: it cannot be checked" for x in live]
    try:
        players = {
            p.id: p for p in (PlayerState.model_validate(x) for x in export.get("players") or [])
        }
        rounds = [RoundState.model_validate(x) for x in listed if x not in live]
    except ValidationError as exc:
        return [*problems, _invalid("players or rounds", exc)]
    tournament_id = str(export.get("id", ""))
    max_candidates = draw.get("max_candidates")
    if not isinstance(max_candidates, int) or max_candidates < 1:
        problems.append("draw: max_candidates is missing")
        max_candidates = 1
    if len(rounds) > settings.rounds:
        problems.append(f"{len(rounds)} rounds played of {settings.rounds}")
    for index, round_ in enumerate(rounds, 1):
        if round_.number != index:
            problems.append(f"round {round_.number} is listed as round {index}")
            continue
        if round_.ended_at is None:
            problems.append(f"round {index} has not ended")
        problems += _check_deal(settings, tournament_id, (seed, version), max_candidates, round_)
        for player, result in round_.results.items():
            problems += _check_result(round_, player, result, players)
    computed = [row.as_json() for row in standings_of(settings, players, rounds)]
    if computed != export.get("standings"):
        problems.append(_standings_difference(computed, export.get("standings")))
    return problems


def _check_seed(draw: Mapping[str, Any]) -> tuple[list[str], bytes | None]:
    seed_text = draw.get("seed")
    if seed_text is None:
        return ["draw: the seed is not revealed (the tournament has not finished)"], None
    try:
        seed = parse_secret(seed_text)
    except ValueError as exc:
        return [f"draw: seed: {exc}"], None
    if commitment(seed) != draw.get("commitment"):
        return ["draw: SHA-256 of the seed is not the commitment"], None
    return [], seed


def _check_deal(
    settings: TournamentSettings,
    tournament_id: str,
    seed_version: tuple[bytes | None, int | None],
    max_candidates: int,
    round_: RoundState,
) -> list[str]:
    r = round_.number
    try:
        deal_code = DealCode.parse(round_.deal)
    except GameError as exc:
        return [f"round {r}: {exc}"]
    if deal_code.game_name != settings.game:
        return [f"round {r}: {deal_code} is not a deal of {settings.game}"]
    if settings.deals == "list" and settings.deal_codes is not None:
        if round_.candidate is not None or str(deal_code) != settings.deal_codes[r - 1]:
            return [f"round {r}: {deal_code} is not the host's listed deal"]
        return []
    if round_.candidate is None:
        return [f"round {r}: no candidate index"]
    deal = RoundDeal(
        deal_code,
        round_.candidate,
        None if round_.solution is None else tuple(round_.solution),
        tuple(round_.skipped),
    )
    seed, version = seed_version
    if seed is None or version is None:
        return []  # already reported: without the seed or version no candidate can be checked
    return round_deal_problems(
        seed,
        tournament_id,
        settings.game,
        r,
        deal,
        winnable_only=settings.deals == "winnable",
        max_candidates=max_candidates,
        fair=version,
    )


def _check_result(
    round_: RoundState, player: str, result: RoundResult, players: Mapping[str, PlayerState]
) -> list[str]:
    where = f"round {round_.number}, {player}"
    if result.player != player or player not in players:
        return [f"{where}: not a player of the tournament"]
    if player not in round_.participants:
        return [f"{where}: a result of a player who did not play the round"]
    game = new_game(round_.deal)
    for index, move in enumerate(result.move_list):
        try:
            game.push(move)
        except GameError as exc:
            return [f"{where}: move {index + 1} does not replay: {exc}"]
    replayed = {
        "won": game.won,
        "on_foundations": game.on_foundations,
        "total": game.total,
        "score": game.score,
        "moves": game.moves,
    }
    recorded = {
        "won": result.status == "won",
        "on_foundations": result.on_foundations,
        "total": result.total,
        "score": result.score,
        "moves": result.moves,
    }
    return [
        f"{where}: {name} is {recorded[name]} but the moves give {value}"
        for name, value in replayed.items()
        if recorded[name] != value
    ]


def _first_difference(ours: Any, theirs: Any, path: str) -> tuple[str, Any, Any] | None:
    """Where two JSON values first differ: (path, ours, theirs)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in ours.keys() | theirs.keys():
            found = _first_difference(ours.get(key), theirs.get(key), f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    return None if ours == theirs else (path, ours, theirs)


def _standings_difference(computed: list[dict[str, Any]], given: Any) -> str:
    if not isinstance(given, list) or len(given) != len(computed):
        return "standings: not the standings of these results (other rows)"
    found = _first_difference(computed, given, "")
    assert found is not None
    path, ours, theirs = found
    row = computed[int(path[1 : path.index("]")])]
    where = path[path.index("]") + 2 :] or "row"
    return (
        f"standings: {row.get('player')}'s {where} is {theirs!r:.60}, the results give {ours!r:.60}"
    )
