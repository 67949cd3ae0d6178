"""The daily challenge: one attempt per player, game and day; races of a day's secret deal.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Add ``races.daily_day``, ``seats.deck_turns`` and the ``daily_attempts`` table."""
    op.add_column("races", sa.Column("daily_day", sa.String(10), nullable=True))
    op.add_column(
        "seats", sa.Column("deck_turns", sa.Integer(), nullable=False, server_default="0")
    )
    op.create_table(
        "daily_attempts",
        sa.Column("player_id", ID, nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("ranked", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("room", sa.String(8), nullable=False),
        sa.Column("room_created_at", sa.BigInteger(), nullable=False),
        sa.Column("race_no", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("on_foundations", sa.Integer(), nullable=False),
        sa.Column("deck_turns", sa.Integer(), nullable=False),
        sa.Column("elapsed_ms", sa.Integer(), nullable=True),
        sa.Column("rank_key", sa.BigInteger(), nullable=False),
        sa.Column("race_public_id", sa.String(16), nullable=True),
        sa.Column("started_at", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("player_id", "game", "day", name="pk_daily_attempts"),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_daily_attempts_player_id_players"
        ),
    )
    op.create_index(
        "ix_daily_attempts_board", "daily_attempts", ["game", "day", "ranked", "rank_key"]
    )


def downgrade() -> None:
    """Drop what :func:`upgrade` added."""
    op.drop_index("ix_daily_attempts_board", table_name="daily_attempts")
    op.drop_table("daily_attempts")
    with op.batch_alter_table("seats") as batch:
        batch.drop_column("deck_turns")
    with op.batch_alter_table("races") as batch:
        batch.drop_column("daily_day")
