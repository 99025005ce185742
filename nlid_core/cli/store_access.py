"""How the commands reach the study store: the --database and --owner options, the owner of local use,
opening the store (a PostgreSQL URL bounded in connection time and shown without its password) and one
line for a database error."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import DataValidationError, NlidError
from ..store.owners import DEFAULT_LOCAL_USER, LOCAL_USER_ENV, local_owner

if TYPE_CHECKING:
    from ..store.db import Store

__all__ = ["CONNECT_TIMEOUT_S", "default_owner", "add_study_options"]


#: Bound on connecting to a PostgreSQL study database (s; libpq ``connect_timeout``, unless the URL sets one).
CONNECT_TIMEOUT_S = 10.0


def default_owner() -> str:
    """The owner of ``NLID_LOCAL_USER`` (else ``"local"``), named as the dashboard's local mode names it."""
    return local_owner(os.environ)


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database", metavar="URL",
                        help="study database (default: NLID_DATABASE_URL, else the SQLite file in NLID_DATA_DIR)")
    parser.add_argument("--owner", metavar="ENGINEER",
                        help=f"act as this engineer (default: {LOCAL_USER_ENV}, else {DEFAULT_LOCAL_USER!r})")


def add_study_options(identify: argparse.ArgumentParser) -> None:
    """Add ``--study NAME``, ``--database URL`` and ``--owner ENGINEER`` to ``identify``."""
    identify.add_argument("--study", metavar="NAME",
                          help="save the records and the run into this study (created when missing)")
    _add_store_options(identify)


def _owner(args: argparse.Namespace) -> str:
    from ..store.studies import validate_owner

    owner = args.owner if args.owner is not None else default_owner()
    try:
        return validate_owner(owner)
    except DataValidationError as exc:
        raise DataValidationError(str(exc).replace("`owner`", "`--owner`" if args.owner else
                                                   f"`--owner` (from {LOCAL_USER_ENV})")) from None


def _db_error(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _open(url: str | None) -> Store:
    """The study store; an unreachable or unusable database is one :class:`NlidError` line."""
    import sqlalchemy as sa

    from ..health import database_url_with_timeout
    from ..store.db import default_url, open_store

    raw = url if url is not None else default_url()
    try:
        return open_store(database_url_with_timeout(raw, CONNECT_TIMEOUT_S))
    except sa.exc.SQLAlchemyError as exc:
        shown = _hidden(raw)
        raise NlidError(f"cannot open the study database {shown} (`--database`): {_db_error(exc)}") from None
    except OSError as exc:
        raise NlidError(f"cannot open the study database (`--database`): {exc.strerror or exc}") from None


def _hidden(url: str) -> str:
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return repr(url[:100])


def _with_store(url: str | None, action: Callable[[Store], Any]) -> Any:
    """Run ``action`` on an open store, closing it after; database errors become one :class:`NlidError` line."""
    import sqlalchemy as sa

    store = _open(url)
    try:
        return action(store)
    except sa.exc.SQLAlchemyError as exc:
        raise NlidError(f"study database {store.url}: {_db_error(exc)}") from None
    finally:
        store.close()
