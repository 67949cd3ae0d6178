"""Finished races, their seats with move lists, per-game player stats.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create ``races``, ``seats`` and ``player_stats``."""
    op.create_table(
        "races",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("public_id", sa.String(16), nullable=False),
        sa.Column("room", sa.String(8), nullable=False),
        sa.Column("room_created_at", sa.BigInteger(), nullable=False),
        sa.Column("race_no", sa.Integer(), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("deal", sa.String(32), nullable=False),
        sa.Column("casual", sa.Boolean(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.Column("racers", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_races"),
        sa.UniqueConstraint("public_id", name="uq_races_public_id"),
        sa.UniqueConstraint(
            "room", "room_created_at", "race_no", name="uq_races_room_room_created_at_race_no"
        ),
    )
    op.create_index("ix_races_casual_ended_at", "races", ["casual", "ended_at"])
    op.create_table(
        "seats",
        sa.Column("race_id", ID, nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", ID, nullable=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("on_foundations", sa.Integer(), nullable=False),
        sa.Column("elapsed_ms", sa.Integer(), nullable=True),
        sa.Column("actions", sa.Text(), nullable=False),
        sa.Column("action_times", sa.Text(), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("race_id", "seat", name="pk_seats"),
        sa.ForeignKeyConstraint(
            ["race_id"], ["races.id"], name="fk_seats_race_id_races", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_seats_player_id_players"),
    )
    op.create_index(
        "ix_seats_player_id_ended_at_race_id", "seats", ["player_id", "ended_at", "race_id"]
    )
    op.create_table(
        "player_stats",
        sa.Column("player_id", ID, nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("won", sa.Integer(), nullable=False),
        sa.Column("best_time_ms", sa.Integer(), nullable=True),
        sa.Column("best_score", sa.Integer(), nullable=False),
        sa.Column("current_streak", sa.Integer(), nullable=False),
        sa.Column("longest_streak", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "game", name="pk_player_stats"),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_player_stats_player_id_players"
        ),
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_table("player_stats")
    op.drop_index("ix_seats_player_id_ended_at_race_id", table_name="seats")
    op.drop_table("seats")
    op.drop_index("ix_races_casual_ended_at", table_name="races")
    op.drop_table("races")
