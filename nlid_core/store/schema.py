"""Tables of the study store: the one definition read by the queries and the first migration.

Layout (every table carries ``owner``; every query filters on it)::

    studies        id, owner, name (unique per owner), created, updated, notes
    records        id, owner, sha256 (unique per owner), name, n_samples,
                   channels (JSON list), fs_hz, meta_json, parquet (bytes), created
    study_records  study_id -> studies (cascade), record_id -> records,
                   owner, name (unique per study)
    runs           id, study_id -> studies (cascade), owner, created, label,
                   config_json, result_json, success, item_key (unique per study
                   when set: a batch's item, so a resumed batch skips it)
    shares         study_id -> studies (cascade), owner (the study's), grantee:
                   the grantee may read the study (revision 0002)

A record is content-addressed: ``sha256`` is the SHA-256 of its canonical
Parquet bytes followed by a zero byte and its canonical metadata JSON (see
:func:`nlid_core.store.studies.encode_record`). It is stored once per owner and
referenced by as many studies as use it; records no study references any
more are removed with the last study that held them. Content addressing is
per owner on purpose: a hash is never a key to another engineer's data.

Times are timezone-aware UTC. JSON columns are text (portable between SQLite
and PostgreSQL); Parquet is ``LargeBinary`` (BLOB / BYTEA). Nothing is pickled.
"""

from __future__ import annotations

import sqlalchemy as sa

from .owners import MAX_OWNER_LENGTH

__all__ = [
    "SCHEMA_REVISION",
    "MAX_NAME_LENGTH",
    "MAX_OWNER_LENGTH",
    "MAX_ITEM_KEY_LENGTH",
    "metadata",
    "studies",
    "records",
    "study_records",
    "runs",
    "shares",
]

#: Alembic revision of the schema defined here (the head of ``migrations/versions``).
SCHEMA_REVISION = "0002"
#: Longest study, record or run name.
MAX_NAME_LENGTH = 100
#: Longest item key of a run (a batch item's identity).
MAX_ITEM_KEY_LENGTH = 200

metadata = sa.MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_name)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

studies = sa.Table(
    "studies",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("owner", sa.String(MAX_OWNER_LENGTH), nullable=False, index=True),
    sa.Column("name", sa.String(MAX_NAME_LENGTH), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("updated", sa.DateTime(timezone=True), nullable=False),
    sa.Column("notes", sa.Text, nullable=False),
    sa.UniqueConstraint("owner", "name", name="uq_studies_owner_name"),
)

records = sa.Table(
    "records",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("owner", sa.String(MAX_OWNER_LENGTH), nullable=False),
    sa.Column("sha256", sa.String(64), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("n_samples", sa.Integer, nullable=False),
    sa.Column("channels", sa.Text, nullable=False),
    sa.Column("fs_hz", sa.Float, nullable=False),
    sa.Column("meta_json", sa.Text, nullable=False),
    sa.Column("parquet", sa.LargeBinary, nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.UniqueConstraint("owner", "sha256", name="uq_records_owner_sha256"),
)

study_records = sa.Table(
    "study_records",
    metadata,
    sa.Column("study_id", sa.Integer, sa.ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("name", sa.String(MAX_NAME_LENGTH), primary_key=True),
    sa.Column("record_id", sa.Integer, sa.ForeignKey("records.id", ondelete="RESTRICT"), nullable=False,
              index=True),
    sa.Column("owner", sa.String(MAX_OWNER_LENGTH), nullable=False),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("study_id", sa.Integer, sa.ForeignKey("studies.id", ondelete="CASCADE"), nullable=False,
              index=True),
    sa.Column("owner", sa.String(MAX_OWNER_LENGTH), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Column("label", sa.String(MAX_NAME_LENGTH), nullable=False),
    sa.Column("config_json", sa.Text, nullable=False),
    sa.Column("result_json", sa.Text, nullable=False),
    sa.Column("success", sa.Boolean, nullable=False),
    sa.Column("item_key", sa.String(MAX_ITEM_KEY_LENGTH), nullable=True),
    sa.Index("uq_runs_study_id_item_key", "study_id", "item_key", unique=True),
)

shares = sa.Table(
    "shares",
    metadata,
    sa.Column("study_id", sa.Integer, sa.ForeignKey("studies.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("grantee", sa.String(MAX_OWNER_LENGTH), primary_key=True),
    sa.Column("owner", sa.String(MAX_OWNER_LENGTH), nullable=False),
    sa.Column("created", sa.DateTime(timezone=True), nullable=False),
    sa.Index("ix_shares_grantee", "grantee"),
)
