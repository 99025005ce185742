"""Saved studies in a database: records, runs and notes that outlive a session (issue 13).

The layer is plain SQLAlchemy Core over SQLite (the default, one file) or
PostgreSQL (one setting, ``NLID_DATABASE_URL``), with the schema versioned by
Alembic from its first table. Modules:

- :mod:`.db` — :func:`~nlid_core.store.db.open_store`: URL, engine settings,
  migrations to head;
- :mod:`.schema` — the tables (the single definition read by the migrations
  and the queries);
- :mod:`.studies` — create, list, open, rename, duplicate, delete, share
  studies; add and read records (the front door: it re-exports the runs'
  functions);
- :mod:`.study_runs` — add, list and compare runs, batch items by key;
- :mod:`.rows` — the returned values (``Study``, ``StoredRecord``, ``Run``)
  and the row helpers every query shares;
- :mod:`.encoding` — records as Parquet + JSON metadata, strict JSON, the
  checks of owners, names and notes;
- :mod:`.archive` — one-file export of a study and its guarded import.

Nothing is pickled: records are stored as Parquet bytes, everything else as
JSON. Every row carries its ``owner`` and every query filters on it.
"""
