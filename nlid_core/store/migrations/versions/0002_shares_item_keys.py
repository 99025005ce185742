"""Shared studies and batch item keys.

- ``shares``: a study's owner lets another engineer (``grantee``) read it;
- ``runs.item_key``: an optional key, unique within a study, naming the batch
  item a run computed, so an interrupted batch resumes without redoing it.

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


def upgrade() -> None:
    op.create_table(
        "shares",
        sa.Column("study_id", sa.Integer, nullable=False),
        sa.Column("grantee", sa.String(64), nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("study_id", "grantee", name="pk_shares"),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"], ondelete="CASCADE", name="fk_shares_study_id_studies"),
    )
    op.create_index("ix_shares_grantee", "shares", ["grantee"])
    # batch mode: SQLite cannot add a column with constraints in place on every version
    with op.batch_alter_table("runs") as batch:
        batch.add_column(sa.Column("item_key", sa.String(200), nullable=True))
    op.create_index("uq_runs_study_id_item_key", "runs", ["study_id", "item_key"], unique=True)


def downgrade() -> None:
    op.drop_index("uq_runs_study_id_item_key", table_name="runs")
    with op.batch_alter_table("runs") as batch:
        batch.drop_column("item_key")
    op.drop_index("ix_shares_grantee", table_name="shares")
    op.drop_table("shares")
