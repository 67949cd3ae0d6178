"""The daily board's index ends with started_at, the leaderboard's tie-break: a page is then
read in index order (PostgreSQL sorted every attempt of the day to find the top 100).

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_OLD = ["game", "day", "ranked", "rank_key"]


def upgrade() -> None:
    """Rebuild ``ix_daily_attempts_board`` with ``started_at`` last."""
    op.drop_index("ix_daily_attempts_board", table_name="daily_attempts")
    op.create_index("ix_daily_attempts_board", "daily_attempts", [*_OLD, "started_at"])


def downgrade() -> None:
    """The index as 0003 made it."""
    op.drop_index("ix_daily_attempts_board", table_name="daily_attempts")
    op.create_index("ix_daily_attempts_board", "daily_attempts", _OLD)
