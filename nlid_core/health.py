"""Health of a running nlid: can the study database be reached, and does the web server answer?

:func:`check_health` is what ``python -m nlid_core health`` (and so the
container's health check) runs. It combines two checks, each bounded in time
so that a server that is down makes the check fail quickly instead of hanging
past the container runtime's own timeout:

- :func:`check_database` opens the study store
  (:func:`nlid_core.store.db.open_store`: the schema is migrated to the head
  revision if it is behind, as the dashboard does on start), checks that the
  schema is at the revision this version expects, and runs ``SELECT 1``.
  PostgreSQL URLs get libpq's ``connect_timeout`` of half the time bound
  (unless they set their own), so a server that does not answer the
  connection attempt fails the check with the driver's own message; and the
  whole check runs in a worker thread that is abandoned after ``timeout_s``
  (a server that accepts the connection but never answers a query, a SQLite
  file locked by a long writer, a URL with a long timeout of its own).
- :func:`check_web` fetches Streamlit's health endpoint ``/_stcore/health``
  (it answers ``ok`` once the server is up) with a timeout.

References
----------
PostgreSQL, "Parameter Key Words: connect_timeout",
https://www.postgresql.org/docs/16/libpq-connect.html#LIBPQ-CONNECT-CONNECT-TIMEOUT
(whole seconds; values below 2 are read as 2; applied to each host address
separately, hence the thread deadline on top).
"""

from __future__ import annotations

import math
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from .errors import DataValidationError

__all__ = [
    "HEALTH_PATH",
    "DEFAULT_TIMEOUT_S",
    "CheckResult",
    "HealthReport",
    "database_url_with_timeout",
    "check_database",
    "check_web",
    "check_health",
]

#: Streamlit's health endpoint (answers ``ok`` with status 200 once the server runs).
HEALTH_PATH = "/_stcore/health"
#: Default time bound of each check (s).
DEFAULT_TIMEOUT_S = 5.0
_MAX_TIMEOUT_S = 600.0
_MAX_BODY = 1024


@dataclass(frozen=True, kw_only=True)
class CheckResult:
    """The outcome of one check.

    Attributes
    ----------
    success : bool
    message : str
        One line: what was found (``"sqlite (revision 0002)"``, ``"ok"``) or
        what failed.
    target : str
        What was checked: the database URL with its password hidden, or the
        health URL.
    elapsed_s : float, seconds
    """

    success: bool
    message: str
    target: str
    elapsed_s: float


@dataclass(frozen=True, kw_only=True)
class HealthReport:
    """The outcome of :func:`check_health`.

    Attributes
    ----------
    success : bool
        Every check passed.
    message : str
        One line, ``"ok: database sqlite (revision 0002), web ok"`` or
        ``"unhealthy: ..."`` naming what failed.
    database : CheckResult
    web : CheckResult or None
        None when no web URL was given.
    """

    success: bool
    message: str
    database: CheckResult
    web: CheckResult | None


def _check_timeout(timeout_s: float) -> float:
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not (
            math.isfinite(timeout_s) and 0 < timeout_s <= _MAX_TIMEOUT_S):
        raise DataValidationError(f"`timeout_s` must be a number of seconds in (0, {_MAX_TIMEOUT_S:g}]; "
                                  f"got {timeout_s!r}")
    return float(timeout_s)


def database_url_with_timeout(url: str, timeout_s: float) -> str:
    """``url`` with libpq's ``connect_timeout`` set for PostgreSQL (unless the URL sets it); others unchanged.

    Parameters
    ----------
    url : str
        SQLAlchemy database URL.
    timeout_s : float, seconds
        Bound on connecting: rounded up to whole seconds, at least 2
        (libpq's minimum).

    Raises
    ------
    DataValidationError
        ``url`` is not a database URL.
    """
    import sqlalchemy as sa

    timeout_s = _check_timeout(timeout_s)
    try:
        parsed = sa.make_url(url)
    except sa.exc.ArgumentError:
        raise DataValidationError(f"`url` is not a database URL: {url!r:.200}") from None
    if parsed.get_backend_name() != "postgresql" or "connect_timeout" in parsed.query:
        return url
    seconds = max(2, math.ceil(timeout_s))
    return parsed.update_query_dict({"connect_timeout": str(seconds)}).render_as_string(hide_password=False)


def _hidden(url: str) -> str:
    import sqlalchemy as sa

    try:
        return sa.make_url(url).render_as_string(hide_password=True)
    except sa.exc.ArgumentError:
        return "(not a database URL)"


def _first_line(exc: BaseException) -> str:
    """The driver's own message (first line) of a database error, else the exception's text."""
    orig = getattr(exc, "orig", None)
    text = str(orig if orig is not None else exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return line[:300]


def _database_probe(url: str) -> str:
    """Open, check the revision, ``SELECT 1``; return ``"<dialect> (revision R)"`` or raise."""
    import sqlalchemy as sa

    from .store.db import open_store
    from .store.schema import SCHEMA_REVISION

    try:
        store = open_store(url)
    except DataValidationError as exc:
        found = re.search(r"cannot migrate \((.*)\); expected revision", str(exc))
        if found is None:
            raise
        raise DataValidationError(f"schema this version cannot use ({found.group(1)}); expected revision "
                                  f"{SCHEMA_REVISION}") from None
    with store:
        if store.revision != SCHEMA_REVISION:
            raise DataValidationError(
                f"schema at revision {store.revision or 'none'!r}; this version needs {SCHEMA_REVISION}")
        with store.read() as conn:
            one = conn.execute(sa.text("SELECT 1")).scalar_one()
        if one != 1:
            raise DataValidationError(f"`SELECT 1` returned {one!r}")
        return f"{store.dialect} (revision {store.revision})"


def check_database(url: str | None = None, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> CheckResult:
    """Check that the study database answers, at the schema revision of this version.

    Parameters
    ----------
    url : str or None
        Database URL; default :func:`nlid_core.store.db.default_url`
        (``NLID_DATABASE_URL``, else the SQLite file in ``NLID_DATA_DIR``).
    timeout_s : float, seconds
        Bound on the whole check (connection, migration, query).

    Returns
    -------
    CheckResult
        ``success`` False, with the reason in ``message``, when the database
        cannot be reached, refuses the connection or the query, has a schema
        this version cannot use, or does not answer within ``timeout_s``.
        Never raises for an unreachable database.

    Raises
    ------
    DataValidationError
        ``timeout_s`` out of range.
    """
    timeout_s = _check_timeout(timeout_s)
    from .store.db import default_url

    raw = url if url is not None else default_url()
    target = _hidden(raw)
    started = time.perf_counter()
    outcome: dict[str, tuple[bool, str]] = {}

    def probe() -> None:
        try:
            outcome["r"] = (True, _database_probe(database_url_with_timeout(raw, timeout_s / 2)))
        except DataValidationError as exc:
            outcome["r"] = (False, str(exc))
        except Exception as exc:  # noqa: BLE001 - any driver error is a failed check, reported in one line
            outcome["r"] = (False, f"cannot connect or query: {_first_line(exc)}")

    worker = threading.Thread(target=probe, name="nlid-health-db", daemon=True)
    worker.start()
    worker.join(timeout_s)
    elapsed = time.perf_counter() - started
    if "r" not in outcome:
        return CheckResult(success=False, message=f"no answer within {timeout_s:g} s", target=target,
                           elapsed_s=elapsed)
    ok, message = outcome["r"]
    return CheckResult(success=ok, message=message, target=target, elapsed_s=elapsed)


def check_web(url: str, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> CheckResult:
    """Check that the dashboard's web server answers ``ok`` on ``/_stcore/health``.

    Parameters
    ----------
    url : str
        Base URL of the server, e.g. ``http://localhost:8501`` (a URL that
        already ends in ``/_stcore/health`` is used as it is).
    timeout_s : float, seconds

    Returns
    -------
    CheckResult
        ``success`` False with the reason (refused, HTTP status, timeout,
        another answer than ``ok``); never raises for a server that is down.

    Raises
    ------
    DataValidationError
        ``url`` is not an http(s) URL with a host; ``timeout_s`` out of range.
    """
    timeout_s = _check_timeout(timeout_s)
    parts = urllib.parse.urlsplit(url if isinstance(url, str) else "")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DataValidationError(f"`url` must be an http:// or https:// URL with a host; got {url!r:.200}")
    target = url.rstrip("/")
    if not target.endswith(HEALTH_PATH):
        target += HEALTH_PATH
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(target, timeout=timeout_s) as resp:  # noqa: S310 - scheme checked above
            status = int(resp.status)
            body = resp.read(_MAX_BODY).decode("utf-8", "replace").strip()
    except urllib.error.HTTPError as exc:
        ok, message = False, f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        ok, message = False, f"unreachable: {exc.reason}"
    except (TimeoutError, OSError) as exc:
        ok, message = False, f"no answer within {timeout_s:g} s" if isinstance(exc, TimeoutError) else str(exc)
    else:
        ok = status == 200 and body == "ok"
        message = "ok" if ok else f"HTTP {status}, answered {body[:60]!r}"
    return CheckResult(success=ok, message=message, target=target, elapsed_s=time.perf_counter() - started)


def check_health(database_url: str | None = None, web_url: str | None = None, *,
                 timeout_s: float = DEFAULT_TIMEOUT_S) -> HealthReport:
    """Check the database and, when ``web_url`` is given, the web server.

    Parameters
    ----------
    database_url : str or None
        As for :func:`check_database`.
    web_url : str or None
        As for :func:`check_web`; None skips the web check.
    timeout_s : float, seconds
        Bound of each check.

    Returns
    -------
    HealthReport
        ``message`` is ``"ok: database <dialect> (revision R)[, web ok]"``, or
        ``"unhealthy: database <url>: <reason>[; web <url>: <reason>]"``
        listing each failed check.

    Raises
    ------
    DataValidationError
        A ``web_url`` that is not an http(s) URL; ``timeout_s`` out of range.
    """
    timeout_s = _check_timeout(timeout_s)
    web = None
    if web_url is not None:
        web = check_web(web_url, timeout_s=timeout_s)  # validates the URL before the (slower) database check
    db = check_database(database_url, timeout_s=timeout_s)
    if db.success and (web is None or web.success):
        message = f"ok: database {db.message}" + (", web ok" if web is not None else "")
        return HealthReport(success=True, message=message, database=db, web=web)
    failed = []
    if not db.success:
        failed.append(f"database {db.target}: {db.message}")
    if web is not None and not web.success:
        failed.append(f"web {web.target}: {web.message}")
    return HealthReport(success=False, message="unhealthy: " + "; ".join(failed), database=db, web=web)
