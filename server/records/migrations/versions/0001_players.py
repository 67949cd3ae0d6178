"""Identities: players, the address-hash key, identity creation rate buckets.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    """Create ``meta``, ``players`` and ``rate_buckets``."""
    op.create_table(
        "meta",
        sa.Column("key", sa.String(32), nullable=False),
        sa.Column("value", sa.String(128), nullable=False),
        sa.PrimaryKeyConstraint("key", name="pk_meta"),
    )
    op.create_table(
        "players",
        sa.Column("id", ID, autoincrement=True, nullable=False),
        sa.Column("public_id", sa.String(16), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=True),
        sa.Column("recovery_hash", sa.String(64), nullable=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("handle", sa.String(32), nullable=True),
        sa.Column("handle_key", sa.String(160), nullable=True),
        sa.Column("created_at", sa.BigInteger(), nullable=False),
        sa.Column("deleted_at", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_players"),
        sa.UniqueConstraint("public_id", name="uq_players_public_id"),
        sa.UniqueConstraint("recovery_hash", name="uq_players_recovery_hash"),
        sa.UniqueConstraint("handle_key", name="uq_players_handle_key"),
    )
    op.create_table(
        "rate_buckets",
        sa.Column("address_key", sa.String(64), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("updated_at", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("address_key", name="pk_rate_buckets"),
    )


def downgrade() -> None:
    """Drop them."""
    op.drop_table("rate_buckets")
    op.drop_table("players")
    op.drop_table("meta")
