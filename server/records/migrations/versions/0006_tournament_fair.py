"""Tournaments record the version of fair-deals.md their rounds were drawn by: version 2
draws sealed deals, and a tournament written before it (numbered deals, version 1) must
still derive and verify its rounds as they were drawn.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add ``tournaments.fair``: every tournament already written is version 1."""
    op.add_column(
        "tournaments", sa.Column("fair", sa.Integer(), nullable=False, server_default="1")
    )


def downgrade() -> None:
    """Drop ``tournaments.fair``."""
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("fair")
