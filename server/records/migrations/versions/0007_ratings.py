"""Ratings (issue 32): races say whether they were rated; each player's rating and rated
record per game, and every change a rated race made.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _counts() -> list[sa.Column[int]]:
    return [sa.Column(name, sa.Integer(), nullable=False) for name in ("won", "drawn", "lost")]


def upgrade() -> None:
    """Add ``races.rated`` (false for every race so far), ``ratings`` and
    ``rating_changes``."""
    op.add_column(
        "races", sa.Column("rated", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.create_table(
        "ratings",
        sa.Column("player_id", _ID, nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("races", sa.Integer(), nullable=False),
        *_counts(),
        sa.Column("abandoned", sa.Integer(), nullable=False),
        sa.Column("last_race_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("player_id", "game", name="pk_ratings"),
        sa.ForeignKeyConstraint(["player_id"], ["players.id"], name="fk_ratings_player_id_players"),
    )
    op.create_index("ix_ratings_game_rating", "ratings", ["game", "rating"])
    op.create_table(
        "rating_changes",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("race_id", _ID, nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("player_id", _ID, nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=False),
        sa.Column("rating_before", sa.Float(), nullable=False),
        sa.Column("rd_before", sa.Float(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        *_counts(),
        sa.Column("abandoned", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_rating_changes"),
        sa.ForeignKeyConstraint(
            ["race_id"],
            ["races.id"],
            name="fk_rating_changes_race_id_races",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["player_id"], ["players.id"], name="fk_rating_changes_player_id_players"
        ),
        sa.UniqueConstraint("race_id", "seat", name="uq_rating_changes_race_id_seat"),
    )
    op.create_index(
        "ix_rating_changes_player_id_game_id", "rating_changes", ["player_id", "game", "id"]
    )


def downgrade() -> None:
    """Drop them again."""
    op.drop_index("ix_rating_changes_player_id_game_id", table_name="rating_changes")
    op.drop_table("rating_changes")
    op.drop_index("ix_ratings_game_rating", table_name="ratings")
    op.drop_table("ratings")
    with op.batch_alter_table("races") as races:
        races.drop_column("rated")
