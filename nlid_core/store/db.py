"""Opening the study store: where it lives, engine settings, migrations to head.

The URL comes from the ``url`` argument, else the environment variable
``NLID_DATABASE_URL``, else a SQLite file ``nlid-studies.sqlite`` in the data
directory (``NLID_DATA_DIR``, default ``~/.local/share/nlid``, created with
mode 0700). A bare ``postgresql://`` URL is read as ``postgresql+psycopg://``
(psycopg 3 is the driver the project installs).

SQLite connections get ``journal_mode=WAL`` (readers do not block the writer),
``foreign_keys=ON`` (off by default in SQLite), ``synchronous=FULL`` (a
committed transaction survives a crash of the process or the machine) and a
busy timeout. pysqlite's own transaction handling is switched off and each
transaction is opened explicitly — ``BEGIN IMMEDIATE`` for writes, so two
writers queue on the busy timeout instead of failing on a lock upgrade — as
the SQLAlchemy documentation recommends ("Serializable isolation /
Savepoints / Transactional DDL",
https://docs.sqlalchemy.org/en/20/dialects/sqlite.html). The schema is
brought to the head revision with Alembic inside one write transaction (on
PostgreSQL under a transaction-level advisory lock), so two processes opening
a new database at once migrate it once.

References
----------
SQLite, "Write-Ahead Logging", https://www.sqlite.org/wal.html;
"PRAGMA synchronous", https://www.sqlite.org/pragma.html#pragma_synchronous.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from ..errors import DataValidationError
from .schema import SCHEMA_REVISION

__all__ = [
    "DATABASE_URL_ENV",
    "DATA_DIR_ENV",
    "DEFAULT_FILENAME",
    "BUSY_TIMEOUT_MS",
    "Store",
    "open_store",
    "default_url",
    "current_revision",
]

#: Environment variable holding the database URL (e.g. PostgreSQL on the lab server).
DATABASE_URL_ENV = "NLID_DATABASE_URL"
#: Environment variable holding the data directory of the default SQLite file.
DATA_DIR_ENV = "NLID_DATA_DIR"
#: File name of the default SQLite database.
DEFAULT_FILENAME = "nlid-studies.sqlite"
#: How long (ms) a SQLite connection waits for another writer before failing.
BUSY_TIMEOUT_MS = 30_000

#: Seconds a PostgreSQL connection attempt may take (libpq ``connect_timeout``) unless the URL sets it.
PG_CONNECT_TIMEOUT_S = 10
_MIGRATIONS = Path(__file__).resolve().parent / "migrations"
_PG_MIGRATION_LOCK = 0x6E6C6964  # "nlid": key of the advisory lock held while migrating


@dataclass(frozen=True, kw_only=True)
class Store:
    """An open study store: the engine and a write engine sharing its pool.

    Attributes
    ----------
    url : str
        Database URL with any password hidden.
    engine : sqlalchemy.Engine
        For reading transactions.
    write_engine : sqlalchemy.Engine
        The same pool; transactions begun through it take the write lock at
        once (SQLite ``BEGIN IMMEDIATE``).
    revision : str
        Schema revision after opening (the Alembic head).
    """

    url: str
    engine: sa.Engine
    write_engine: sa.Engine
    revision: str

    @property
    def dialect(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        return str(self.engine.dialect.name)

    @contextmanager
    def read(self) -> Iterator[sa.Connection]:
        """A connection in a read transaction (rolled back at the end)."""
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[sa.Connection]:
        """A connection in one write transaction: committed on success, rolled back on any exception."""
        with self.write_engine.begin() as conn:
            yield conn

    def close(self) -> None:
        """Close every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_url() -> str:
    """The URL :func:`open_store` uses without an argument (environment, else the SQLite file)."""
    env = os.environ.get(DATABASE_URL_ENV, "").strip()
    if env:
        return env
    data_dir = os.environ.get(DATA_DIR_ENV, "").strip()
    base = Path(data_dir).expanduser() if data_dir else Path.home() / ".local" / "share" / "nlid"
    return f"sqlite:///{base / DEFAULT_FILENAME}"


def _normalise(url: str) -> sa.URL:
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise DataValidationError(f"`url` is not a database URL: {url!r}") from None
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    if parsed.get_backend_name() not in ("sqlite", "postgresql"):
        raise DataValidationError(
            f"`url` must be a SQLite or PostgreSQL URL; got the backend {parsed.get_backend_name()!r}")
    if parsed.get_backend_name() == "sqlite":
        if parsed.database in (None, "", ":memory:"):
            raise DataValidationError("`url` names an in-memory SQLite database; studies must live in a file")
        Path(parsed.database).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return parsed


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000.0})

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.isolation_level = None  # we emit BEGIN ourselves (see module docstring)
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=FULL")
        cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS:d}")
        cur.close()

    @sa.event.listens_for(engine, "begin")
    def _on_begin(conn: sa.Connection) -> None:
        immediate = conn.get_execution_options().get("nlid_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


def _migrate(store_write: sa.Engine) -> str:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    with store_write.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")
    return current_revision(store_write)


def current_revision(engine: sa.Engine) -> str:
    """The Alembic revision the database is at (``""`` before the first migration)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        rev = MigrationContext.configure(conn).get_current_revision()
    return rev or ""


def open_store(url: str | None = None) -> Store:
    """Open (creating and migrating as needed) the study store.

    Parameters
    ----------
    url : str or None
        SQLAlchemy database URL (``sqlite:///path`` or
        ``postgresql+psycopg://user@host/db``); default :func:`default_url`.

    Returns
    -------
    Store
        At schema revision :data:`~nlid_core.store.schema.SCHEMA_REVISION`.

    Raises
    ------
    DataValidationError
        A URL that is not SQLite or PostgreSQL, or names an in-memory
        database; a database at a revision this version does not know.
    """
    parsed = _normalise(url if url is not None else default_url())
    if parsed.get_backend_name() == "sqlite":
        engine = _sqlite_engine(parsed)
    else:
        # libpq waits for an unreachable server as long as the OS lets it: bound it unless the URL says
        # otherwise (PostgreSQL documentation, "Parameter Key Words", connect_timeout)
        extra = {} if "connect_timeout" in parsed.query else {"connect_timeout": PG_CONNECT_TIMEOUT_S}
        engine = sa.create_engine(parsed, pool_pre_ping=True, connect_args=extra)
    write_engine = engine.execution_options(nlid_write=True)
    try:
        revision = _migrate(write_engine)
    except Exception as exc:
        engine.dispose()
        from alembic.util import CommandError

        if isinstance(exc, CommandError):
            raise DataValidationError(
                f"database at `url` {parsed.render_as_string(hide_password=True)!r} has a schema this "
                f"version cannot migrate ({exc}); expected revision {SCHEMA_REVISION}") from None
        raise
    return Store(url=parsed.render_as_string(hide_password=True), engine=engine, write_engine=write_engine,
                 revision=revision)
