"""Initial schema: studies, records (content-addressed), study_records, runs.

A frozen copy of :mod:`nlid_core.store.schema` at revision 0001 (migrations
never import the live schema, so later edits there cannot rewrite history).

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


def upgrade() -> None:
    op.create_table(
        "studies",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
        sa.Column("notes", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_studies"),
        sa.UniqueConstraint("owner", "name", name="uq_studies_owner_name"),
    )
    op.create_index("ix_studies_owner", "studies", ["owner"])
    op.create_table(
        "records",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("n_samples", sa.Integer, nullable=False),
        sa.Column("channels", sa.Text, nullable=False),
        sa.Column("fs_hz", sa.Float, nullable=False),
        sa.Column("meta_json", sa.Text, nullable=False),
        sa.Column("parquet", sa.LargeBinary, nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_records"),
        sa.UniqueConstraint("owner", "sha256", name="uq_records_owner_sha256"),
    )
    op.create_table(
        "study_records",
        sa.Column("study_id", sa.Integer, nullable=False),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("record_id", sa.Integer, nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint("study_id", "name", name="pk_study_records"),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"], ondelete="CASCADE",
                                name="fk_study_records_study_id_studies"),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"], ondelete="RESTRICT",
                                name="fk_study_records_record_id_records"),
    )
    op.create_index("ix_study_records_record_id", "study_records", ["record_id"])
    op.create_table(
        "runs",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("study_id", sa.Integer, nullable=False),
        sa.Column("owner", sa.String(64), nullable=False),
        sa.Column("created", sa.DateTime(timezone=True), nullable=False),
        sa.Column("label", sa.String(100), nullable=False),
        sa.Column("config_json", sa.Text, nullable=False),
        sa.Column("result_json", sa.Text, nullable=False),
        sa.Column("success", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_runs"),
        sa.ForeignKeyConstraint(["study_id"], ["studies.id"], ondelete="CASCADE", name="fk_runs_study_id_studies"),
    )
    op.create_index("ix_runs_study_id", "runs", ["study_id"])


def downgrade() -> None:
    op.drop_table("runs")
    op.drop_table("study_records")
    op.drop_table("records")
    op.drop_table("studies")
