"""Tournaments: the tournament, its players, rounds, results (with move lists), audit log.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def _child(name: str, *columns: sa.Column[object], key: tuple[str, ...]) -> None:
    op.create_table(
        name,
        sa.Column("tournament_id", sa.String(8), nullable=False),
        *columns,
        sa.PrimaryKeyConstraint("tournament_id", *key, name=f"pk_{name}"),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=f"fk_{name}_tournament_id_tournaments",
            ondelete="CASCADE",
        ),
    )


def upgrade() -> None:
    """Add the five tournament tables."""
    op.create_table(
        "tournaments",
        sa.Column("id", sa.String(8), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("game", sa.String(16), nullable=False),
        sa.Column("host", sa.String(64), nullable=False),
        sa.Column("phase", sa.String(8), nullable=False),
        sa.Column("private", sa.Boolean(), nullable=False),
        sa.Column("link_key", sa.String(16), nullable=False),
        sa.Column("settings", sa.Text(), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("seed", sa.String(64), nullable=True),
        sa.Column("node_budget", sa.Integer(), nullable=False),
        sa.Column("max_candidates", sa.Integer(), nullable=False),
        sa.Column("rounds_played", sa.Integer(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("started_at", sa.BigInteger(), nullable=True),
        sa.Column("finished_at", sa.BigInteger(), nullable=True),
        sa.Column("next_round_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_tournaments"),
    )
    op.create_index("ix_tournaments_finished_at", "tournaments", ["finished_at"])
    _child(
        "tournament_players",
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("status", sa.String(10), nullable=False),
        sa.Column("withdrawn_by", sa.String(10), nullable=True),
        sa.Column("reason", sa.String(256), nullable=True),
        sa.Column("joined_at", sa.BigInteger(), nullable=False),
        sa.Column("joined_round", sa.Integer(), nullable=False),
        sa.Column("absences", sa.Integer(), nullable=False),
        key=("position",),
    )
    op.create_index("ix_tournament_players_player", "tournament_players", ["player"])
    _child(
        "tournament_rounds",
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("deal", sa.String(32), nullable=False),
        sa.Column("candidate", sa.Integer(), nullable=True),
        sa.Column("solution", sa.Text(), nullable=True),
        sa.Column("skipped", sa.Text(), nullable=False),
        sa.Column("participants", sa.Text(), nullable=False),
        sa.Column("absent", sa.Text(), nullable=False),
        sa.Column("rooms", sa.Text(), nullable=False),
        sa.Column("start_at", sa.BigInteger(), nullable=False),
        sa.Column("deadline", sa.BigInteger(), nullable=False),
        sa.Column("ended_at", sa.BigInteger(), nullable=True),
        key=("number",),
    )
    _child(
        "tournament_results",
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("player", sa.String(64), nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("on_foundations", sa.Integer(), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=False),
        sa.Column("moves", sa.Integer(), nullable=False),
        sa.Column("elapsed_ms", sa.Integer(), nullable=True),
        sa.Column("move_list", sa.Text(), nullable=False),
        sa.Column("disqualified", sa.Boolean(), nullable=False),
        sa.Column("disqualify_reason", sa.String(256), nullable=True),
        key=("round", "player"),
    )
    _child(
        "tournament_audit",
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("at", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(64), nullable=False),
        sa.Column("act", sa.String(16), nullable=False),
        sa.Column("player", sa.String(64), nullable=True),
        sa.Column("round", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(256), nullable=True),
        sa.Column("detail", sa.Text(), nullable=False),
        key=("position",),
    )


def downgrade() -> None:
    """Drop what :func:`upgrade` added."""
    for name in ("tournament_audit", "tournament_results", "tournament_rounds"):
        op.drop_table(name)
    op.drop_index("ix_tournament_players_player", table_name="tournament_players")
    op.drop_table("tournament_players")
    op.drop_index("ix_tournaments_finished_at", table_name="tournaments")
    op.drop_table("tournaments")
