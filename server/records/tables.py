"""Every table of the records store, declared once (SQLAlchemy Core).

The migrations in ``migrations/versions`` build exactly this schema, one revision per
change; ``tests/test_records_migrations.py`` compares the two. Times are integers in
milliseconds since the Unix epoch (server clock), as everywhere in the server.

* ``meta`` — the store's own settings (the key of the address hash).
* ``players`` — identities: a public id, hashes of the secret and the recovery code, a
  display name, an optional handle (``handle_key`` is its folded form, unique).
* ``rate_buckets`` — one token bucket per hashed client address: identity creation limits.
* ``races`` — one row per finished race; ``(room, room_created_at, race_no)`` is the natural
  key that makes writing a race idempotent.
* ``seats`` — one row per racer of a race, with the full move list and the server time of
  each move; ``game`` and ``ended_at`` are copied from the race so a player's history is
  one index range.
* ``player_stats`` — per (player, game) counters kept up to date in the transaction that
  writes a race, so they survive the retention purge of casual races.
* ``ratings`` — per (player, game) the Glicko-2 rating and the rated record
  (:class:`server.ratings.rules.Standing`), and ``rating_changes`` — what each rated race
  did to each racer's: both written in the transaction that writes the race
  (``races.rated``), both rebuilt from the rated races by ``samedeal ratings rebuild``.

* ``daily_attempts`` — one row per (player, daily game, UTC day).
* ``tournaments``, ``tournament_players``, ``tournament_rounds``, ``tournament_results``,
  ``tournament_audit`` — a tournament as it stands, rewritten whole at each round's end and
  at the end (the seed only once it has finished); results keep their move lists, and the
  room and seat of the race (its replay is the race of that room in ``races``).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

__all__ = [
    "ID",
    "daily_attempts",
    "daily_scores",
    "dialect_insert",
    "meta",
    "metadata",
    "player_stats",
    "players",
    "races",
    "rate_buckets",
    "rating_changes",
    "ratings",
    "seats",
    "tournament_audit",
    "tournament_players",
    "tournament_results",
    "tournament_rounds",
    "tournaments",
]

# deterministic constraint names, so that migrations can name what they alter
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# an auto-incrementing 64-bit key: SQLite only auto-increments a column typed INTEGER
ID = BigInteger().with_variant(Integer(), "sqlite")

meta = Table(
    "meta",
    metadata,
    Column("key", String(32), primary_key=True),
    Column("value", String(128), nullable=False),
)

players = Table(
    "players",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("public_id", String(16), nullable=False, unique=True),
    # SHA-256 hex of the secret and of the recovery code; NULL once the identity is deleted
    Column("secret_hash", String(64), nullable=True),
    Column("recovery_hash", String(64), nullable=True, unique=True),
    Column("name", String(64), nullable=False),
    Column("handle", String(32), nullable=True),
    Column("handle_key", String(160), nullable=True, unique=True),
    Column("created_at", BigInteger, nullable=False),
    Column("deleted_at", BigInteger, nullable=True),
)

rate_buckets = Table(
    "rate_buckets",
    metadata,
    # HMAC-SHA256 hex of the client address: the address itself is never stored
    Column("address_key", String(64), primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)

races = Table(
    "races",
    metadata,
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("public_id", String(16), nullable=False, unique=True),
    Column("room", String(8), nullable=False),
    Column("room_created_at", BigInteger, nullable=False),
    Column("race_no", Integer, nullable=False),
    Column("game", String(16), nullable=False),
    Column("deal", String(32), nullable=False),
    Column("casual", Boolean, nullable=False),
    Column("started_at", BigInteger, nullable=False),
    Column("ended_at", BigInteger, nullable=False),
    Column("racers", Integer, nullable=False),
    # the UTC day (YYYY-MM-DD) whose secret deal this race played; its replay and its deal
    # code are shown only once that day is over
    Column("daily_day", String(10), nullable=True),
    # a rated race (never casual): it changed its racers' ratings
    Column("rated", Boolean, nullable=False, server_default=false()),
    UniqueConstraint("room", "room_created_at", "race_no"),
    Index(None, "casual", "ended_at"),
)

seats = Table(
    "seats",
    metadata,
    Column(
        "race_id",
        ID,
        ForeignKey("races.id", ondelete="CASCADE"),
        primary_key=True,
    ),
    Column("seat", Integer, primary_key=True),
    Column("player_id", ID, ForeignKey("players.id"), nullable=True),
    Column("name", String(64), nullable=False),
    Column("status", String(8), nullable=False),
    Column("rank", Integer, nullable=False),
    Column("score", Integer, nullable=False),
    Column("moves", Integer, nullable=False),
    Column("on_foundations", Integer, nullable=False),
    Column("elapsed_ms", Integer, nullable=True),
    # the move list in move notation, one space between actions, and the server time of
    # each action in ms since the race started, the same way
    Column("actions", Text, nullable=False),
    Column("action_times", Text, nullable=False),
    Column("game", String(16), nullable=False),
    Column("ended_at", BigInteger, nullable=False),
    # Klondike's passes through the stock after the first (the redeals); 0 elsewhere
    Column("deck_turns", Integer, nullable=False, server_default="0"),
    # a player's races, the latest first, read in index order (race_id breaks ties)
    Index(None, "player_id", "ended_at", "race_id"),
)

daily_attempts = Table(
    "daily_attempts",
    metadata,
    # one row per player, daily game and UTC day: made when the player is first sent a
    # card of the day's deal, so nothing can give them a second one
    Column("player_id", ID, ForeignKey("players.id"), primary_key=True),
    Column("game", String(16), primary_key=True),
    Column("day", String(10), primary_key=True),
    # False: the identity was made after the day began, or the attempt was only watched
    Column("ranked", Boolean, nullable=False),
    # playing, watched, then the final status (won, resigned, timeout, left, unfinished)
    Column("status", String(12), nullable=False),
    # the race it is played in (room, room_created_at, race_no): only that race ends it
    Column("room", String(8), nullable=False),
    Column("room_created_at", BigInteger, nullable=False),
    Column("race_no", Integer, nullable=False),
    Column("score", Integer, nullable=False),
    Column("moves", Integer, nullable=False),
    Column("on_foundations", Integer, nullable=False),
    Column("deck_turns", Integer, nullable=False),
    Column("elapsed_ms", Integer, nullable=True),
    # the leaderboard's order in one ascending number: score (higher first), then fewer
    # moves, then the shorter time (see server.records.daily.rank_key)
    Column("rank_key", BigInteger, nullable=False),
    Column("race_public_id", String(16), nullable=True),
    Column("started_at", BigInteger, nullable=False),
    Column("ended_at", BigInteger, nullable=True),
    Index("ix_daily_attempts_board", "game", "day", "ranked", "rank_key", "started_at"),
)

daily_scores = Table(
    "daily_scores",
    metadata,
    # how many ranked attempts of a day ended with each score: a player's place is the sum
    # over the better scores plus a short count among their equals, whatever the day's size
    Column("game", String(16), primary_key=True),
    Column("day", String(10), primary_key=True),
    Column("score", Integer, primary_key=True),
    Column("attempts", Integer, nullable=False),
)

player_stats = Table(
    "player_stats",
    metadata,
    Column("player_id", ID, ForeignKey("players.id"), primary_key=True),
    Column("game", String(16), primary_key=True),
    Column("played", Integer, nullable=False),
    Column("won", Integer, nullable=False),
    Column("best_time_ms", Integer, nullable=True),
    Column("best_score", Integer, nullable=False),
    Column("current_streak", Integer, nullable=False),
    Column("longest_streak", Integer, nullable=False),
)

ratings = Table(
    "ratings",
    metadata,
    Column("player_id", ID, ForeignKey("players.id"), primary_key=True),
    Column("game", String(16), primary_key=True),
    # Glicko-2: rating and deviation in rating points, the volatility
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    # the rated record: rated races, pairwise results, races abandoned, the last one's end
    Column("races", Integer, nullable=False),
    Column("won", Integer, nullable=False),
    Column("drawn", Integer, nullable=False),
    Column("lost", Integer, nullable=False),
    Column("abandoned", Integer, nullable=False),
    Column("last_race_at", BigInteger, nullable=False),
    # the leaderboard, read best first
    Index(None, "game", "rating"),
)

rating_changes = Table(
    "rating_changes",
    metadata,
    # the order the changes were made in (a player's history reads it)
    Column("id", ID, primary_key=True, autoincrement=True),
    Column("race_id", ID, ForeignKey("races.id", ondelete="CASCADE"), nullable=False),
    Column("seat", Integer, nullable=False),
    Column("player_id", ID, ForeignKey("players.id"), nullable=False),
    Column("game", String(16), nullable=False),
    Column("ended_at", BigInteger, nullable=False),
    Column("rating_before", Float, nullable=False),
    Column("rd_before", Float, nullable=False),
    Column("rating", Float, nullable=False),
    Column("rd", Float, nullable=False),
    Column("volatility", Float, nullable=False),
    # this race's pairwise results, and whether the racer abandoned it
    Column("won", Integer, nullable=False),
    Column("drawn", Integer, nullable=False),
    Column("lost", Integer, nullable=False),
    Column("abandoned", Boolean, nullable=False),
    UniqueConstraint("race_id", "seat"),
    # a player's history in a game, in order
    Index(None, "player_id", "game", "id"),
)

tournaments = Table(
    "tournaments",
    metadata,
    Column("id", String(8), primary_key=True),
    Column("name", String(64), nullable=False),
    Column("game", String(16), nullable=False),
    # the host's public player id
    Column("host", String(64), nullable=False),
    Column("phase", String(8), nullable=False),
    Column("private", Boolean, nullable=False),
    # the private link's key (checked before a private tournament is shown)
    Column("link_key", String(16), nullable=False),
    # TournamentSettings JSON (the host's deal list included)
    Column("settings", Text, nullable=False),
    Column("commitment", String(64), nullable=False),
    # the seed, hex: written only once the tournament has finished
    Column("seed", String(64), nullable=True),
    Column("node_budget", Integer, nullable=False),
    Column("max_candidates", Integer, nullable=False),
    # the version of fair-deals.md its rounds were drawn by (1: before sealed deals)
    Column("fair", Integer, nullable=False, server_default="1"),
    Column("rounds_played", Integer, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("started_at", BigInteger, nullable=True),
    Column("finished_at", BigInteger, nullable=True),
    Column("next_round_at", BigInteger, nullable=True),
    Index(None, "finished_at"),
)


def _of_tournament() -> Column[str]:
    """The first key column of a tournament's rows: its tournament (deleted with it)."""
    return Column(
        "tournament_id",
        String(8),
        ForeignKey("tournaments.id", ondelete="CASCADE"),
        primary_key=True,
    )


tournament_players = Table(
    "tournament_players",
    metadata,
    _of_tournament(),
    # the order they joined in (ties in the standings are listed in it)
    Column("position", Integer, primary_key=True),
    Column("player", String(64), nullable=False),
    Column("name", String(64), nullable=False),
    Column("status", String(10), nullable=False),
    Column("withdrawn_by", String(10), nullable=True),
    Column("reason", String(256), nullable=True),
    Column("joined_at", BigInteger, nullable=False),
    Column("joined_round", Integer, nullable=False),
    Column("absences", Integer, nullable=False),
    # a player's tournaments
    Index(None, "player"),
)

tournament_rounds = Table(
    "tournament_rounds",
    metadata,
    _of_tournament(),
    Column("number", Integer, primary_key=True),
    Column("deal", String(32), nullable=False),
    Column("candidate", Integer, nullable=True),
    # JSON lists: the winning line (null: not proven), skipped candidates, participants,
    # absent players; and the rooms it was played in ([{code, created_at, seats}])
    Column("solution", Text, nullable=True),
    Column("skipped", Text, nullable=False),
    Column("participants", Text, nullable=False),
    Column("absent", Text, nullable=False),
    Column("rooms", Text, nullable=False),
    Column("start_at", BigInteger, nullable=False),
    Column("deadline", BigInteger, nullable=False),
    Column("ended_at", BigInteger, nullable=True),
)

tournament_results = Table(
    "tournament_results",
    metadata,
    _of_tournament(),
    Column("round", Integer, primary_key=True),
    Column("player", String(64), primary_key=True),
    Column("status", String(8), nullable=False),
    Column("on_foundations", Integer, nullable=False),
    Column("total", Integer, nullable=False),
    Column("score", Integer, nullable=False),
    Column("moves", Integer, nullable=False),
    Column("elapsed_ms", Integer, nullable=True),
    # every action, one space between them (as seats.actions)
    Column("move_list", Text, nullable=False),
    Column("disqualified", Boolean, nullable=False),
    Column("disqualify_reason", String(256), nullable=True),
)

tournament_audit = Table(
    "tournament_audit",
    metadata,
    _of_tournament(),
    Column("position", Integer, primary_key=True),
    Column("at", BigInteger, nullable=False),
    Column("actor", String(64), nullable=False),
    Column("act", String(16), nullable=False),
    Column("player", String(64), nullable=True),
    Column("round", Integer, nullable=True),
    Column("reason", String(256), nullable=True),
    # JSON: what the act changed (edited settings, an announcement's text)
    Column("detail", Text, nullable=False),
)


def dialect_insert(conn: Connection, table: Table) -> Any:
    """The dialect's ``insert`` (with ``on_conflict_do_*``) for ``table``."""
    if conn.dialect.name == "postgresql":
        return postgresql.insert(table)
    return sqlite.insert(table)
