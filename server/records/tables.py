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

Room for later revisions: daily attempts and tournaments get their own tables keyed by
(player, board, period) — nothing here needs to change for them.
"""

from __future__ import annotations

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
)

__all__ = [
    "ID",
    "daily_attempts",
    "meta",
    "metadata",
    "player_stats",
    "players",
    "races",
    "rate_buckets",
    "seats",
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
    Index("ix_daily_attempts_board", "game", "day", "ranked", "rank_key"),
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
