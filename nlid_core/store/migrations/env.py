"""Alembic environment of the study store, run programmatically by :func:`nlid_core.store.db.open_store`.

The caller hands over an open connection (inside its transaction) as
``config.attributes["connection"]``; there is no ``alembic.ini`` and no
offline (SQL script) mode. See the Alembic cookbook, "Sharing a Connection
across one or more programmatic migration commands"
(https://alembic.sqlalchemy.org/en/latest/cookbook.html).
"""

from __future__ import annotations

from alembic import context

from nlid_core.store.schema import metadata


def _run() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError("nlid store migrations run only through nlid_core.store.db.open_store")
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


_run()
