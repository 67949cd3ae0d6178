"""Tournaments in the records store: written whole, read back whole.

A tournament is written in one transaction as it stands — its row, then its players,
rounds, results and audit log replaced — at each round's end and when it finishes (and
after a host act on a finished one), so what is stored is always one consistent version.
The seed is written only once the tournament has finished. The live state keeps move lists
apart (``TournamentStore.round_moves``); they are written with the results.
Read back, a tournament is a :class:`~server.tournaments.live.LiveTournament` (without its
seat secret: its rounds are over) and its move lists.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import orjson
from sqlalchemy import Connection, and_, delete, insert, or_, select

from ..tournaments import TournamentSettings
from ..tournaments.live import LiveTournament, RoundRoom
from ..tournaments.state import (
    AuditEntry,
    PlayerState,
    RoundResult,
    RoundState,
    TournamentState,
)
from .db import Database
from .tables import (
    races,
    tournament_audit,
    tournament_players,
    tournament_results,
    tournament_rounds,
    tournaments,
)

__all__ = ["TournamentRecords", "load_tournament", "race_ids", "save_tournament", "tournament_row"]

Moves = dict[tuple[int, str], str]

#: (room, created_at) pairs looked up per statement
_CHUNK: Final = 200
_NO_SEED: Final = "0" * 64
_CHILDREN: Final = (tournament_audit, tournament_results, tournament_rounds, tournament_players)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def tournament_row(state: TournamentState) -> dict[str, Any]:
    """The ``tournaments`` row of ``state`` (its seed only once it has finished)."""
    return {
        "id": state.id,
        "name": state.settings.name,
        "game": state.settings.game,
        "host": state.host,
        "phase": state.phase,
        "private": state.settings.private,
        "link_key": state.key,
        "settings": state.settings.model_dump_json(),
        "commitment": state.commitment,
        "seed": state.seed if state.phase == "finished" else None,
        "node_budget": state.node_budget,
        "max_candidates": state.max_candidates,
        "fair": state.fair,
        "rounds_played": state.round,
        "version": state.version,
        "created_at": state.created_at,
        "started_at": state.started_at,
        "finished_at": state.finished_at,
        "next_round_at": state.next_round_at,
    }


def save_tournament(conn: Connection, live: LiveTournament, moves: Moves) -> None:
    """Write the tournament as it stands (replacing what was stored of it)."""
    state = live.state
    tid = state.id
    for table in _CHILDREN:
        conn.execute(delete(table).where(table.c.tournament_id == tid))
    conn.execute(delete(tournaments).where(tournaments.c.id == tid))
    conn.execute(insert(tournaments).values(tournament_row(state)))
    players = [
        {
            "tournament_id": tid,
            "position": i,
            **p.model_dump(),
            "player": p.id,
        }
        for i, p in enumerate(state.players.values())
    ]
    for row in players:
        del row["id"]
    if players:
        conn.execute(insert(tournament_players), players)
    rounds, results = [], []
    for r in state.rounds:
        rounds.append(
            {
                "tournament_id": tid,
                "number": r.number,
                "deal": r.deal,
                "candidate": r.candidate,
                "solution": None if r.solution is None else _json(r.solution),
                "skipped": _json(r.skipped),
                "participants": _json(r.participants),
                "absent": _json(r.absent),
                "rooms": _json([room.model_dump() for room in live.round_rooms(r.number)]),
                "start_at": r.start_at,
                "deadline": r.deadline,
                "ended_at": r.ended_at,
            }
        )
        for player, res in r.results.items():
            text = moves.get((r.number, player))
            results.append(
                {
                    "tournament_id": tid,
                    "round": r.number,
                    "player": player,
                    "status": res.status,
                    "on_foundations": res.on_foundations,
                    "total": res.total,
                    "score": res.score,
                    "moves": res.moves,
                    "elapsed_ms": res.elapsed_ms,
                    "move_list": text if text is not None else " ".join(res.move_list),
                    "disqualified": res.disqualified,
                    "disqualify_reason": res.disqualify_reason,
                }
            )
    if rounds:
        conn.execute(insert(tournament_rounds), rounds)
    if results:
        conn.execute(insert(tournament_results), results)
    audit = [
        {
            "tournament_id": tid,
            "position": i,
            "at": a.at,
            "actor": a.actor,
            "act": a.act,
            "player": a.player,
            "round": a.round,
            "reason": a.reason,
            "detail": _json(a.detail),
        }
        for i, a in enumerate(state.audit)
    ]
    if audit:
        conn.execute(insert(tournament_audit), audit)


def load_tournament(conn: Connection, tid: str) -> tuple[LiveTournament, Moves] | None:
    """The tournament as last written, and its move lists; None if never written."""
    row = conn.execute(select(tournaments).where(tournaments.c.id == tid)).mappings().first()
    if row is None:
        return None

    def rows(table: Any, *order: Any) -> list[Any]:
        query = select(table).where(table.c.tournament_id == tid).order_by(*order)
        return list(conn.execute(query).mappings())

    players = {
        p["player"]: PlayerState(
            id=p["player"],
            name=p["name"],
            status=p["status"],
            withdrawn_by=p["withdrawn_by"],
            reason=p["reason"],
            joined_at=p["joined_at"],
            joined_round=p["joined_round"],
            absences=p["absences"],
        )
        for p in rows(tournament_players, tournament_players.c.position)
    }
    results: dict[int, dict[str, RoundResult]] = {}
    moves: Moves = {}
    for r in rows(tournament_results, tournament_results.c.round, tournament_results.c.player):
        results.setdefault(r["round"], {})[r["player"]] = RoundResult(
            player=r["player"],
            status=r["status"],
            on_foundations=r["on_foundations"],
            total=r["total"],
            score=r["score"],
            moves=r["moves"],
            elapsed_ms=r["elapsed_ms"],
            disqualified=r["disqualified"],
            disqualify_reason=r["disqualify_reason"],
        )
        moves[(r["round"], r["player"])] = r["move_list"]
    rounds, rooms = [], {}
    for r in rows(tournament_rounds, tournament_rounds.c.number):
        rounds.append(
            RoundState(
                number=r["number"],
                deal=r["deal"],
                candidate=r["candidate"],
                solution=None if r["solution"] is None else orjson.loads(r["solution"]),
                skipped=orjson.loads(r["skipped"]),
                start_at=r["start_at"],
                deadline=r["deadline"],
                participants=orjson.loads(r["participants"]),
                absent=orjson.loads(r["absent"]),
                results=results.get(r["number"], {}),
                ended_at=r["ended_at"],
            )
        )
        played_in = [RoundRoom(**x) for x in orjson.loads(r["rooms"])]
        if played_in:
            rooms[str(r["number"])] = played_in
    audit = [
        AuditEntry(
            at=a["at"],
            actor=a["actor"],
            act=a["act"],
            player=a["player"],
            round=a["round"],
            reason=a["reason"],
            detail=orjson.loads(a["detail"]),
        )
        for a in rows(tournament_audit, tournament_audit.c.position)
    ]
    state = TournamentState(
        id=tid,
        host=row["host"],
        settings=TournamentSettings.model_validate_json(row["settings"]),
        created_at=row["created_at"],
        key=row["link_key"],
        seed=row["seed"] or _NO_SEED,
        commitment=row["commitment"],
        node_budget=row["node_budget"],
        max_candidates=row["max_candidates"],
        fair=row["fair"],
        phase=row["phase"],
        round=row["rounds_played"],
        next_round_at=row["next_round_at"],
        started_at=row["started_at"],
        finished_at=row["finished_at"],
        players=players,
        rounds=rounds,
        audit=audit,
        version=row["version"],
    )
    live = LiveTournament(
        state=state,
        secret=_NO_SEED,
        rooms=rooms,
        recorded=row["version"],
        recorded_round=row["rounds_played"],
    )
    return live, moves


def race_ids(conn: Connection, rooms: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The public ids of the (first) races of rooms ``(code, created_at)`` written so far."""
    out: dict[tuple[str, int], str] = {}
    for i in range(0, len(rooms), _CHUNK):
        chunk = rooms[i : i + _CHUNK]
        query = select(races.c.public_id, races.c.room, races.c.room_created_at).where(
            races.c.race_no == 1,
            or_(*(and_(races.c.room == c, races.c.room_created_at == t) for c, t in chunk)),
        )
        for public_id, room, created_at in conn.execute(query):
            out[(room, created_at)] = public_id
    return out


class TournamentRecords:
    """Tournaments in the records store (``store.tournaments``, held by
    :class:`~server.records.store.SqlRecordsStore`)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def save(self, live: LiveTournament, moves: Moves) -> None:
        """Write the tournament as it stands, with its move lists (one transaction)."""
        await self.db.write(save_tournament, live, moves)

    async def load(self, tid: str) -> tuple[LiveTournament, Moves] | None:
        """The tournament as last written (None: never written)."""
        if not tid.isalnum() or len(tid) > 8:
            return None
        return await self.db.read(load_tournament, tid)

    async def race_ids(self, rooms: Sequence[tuple[str, int]]) -> dict[tuple[str, int], str]:
        """(room, created_at) → the public id of the room's first race, when written."""
        return await self.db.read(race_ids, list(rooms))
