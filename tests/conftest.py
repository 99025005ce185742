"""Shared fixtures. Reference data lives outside the repository (``../shared/data``
beside the checkout, or ``$NLID_SHARED_DATA``); tests that need it skip without it."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

from nlid_core.examples import make_example

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    env = os.environ.get("NLID_SHARED_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if cand.is_dir() else None


@pytest.fixture(scope="session")
def seed_record():
    """The seed-000 benchmark record (noise seed 42)."""
    return make_example("seed")


@pytest.fixture(scope="session")
def silverbox_csv() -> Path:
    d = shared_data_dir()
    path = d / "silverbox" / "SNLS80mV.csv" if d else None
    if path is None or not path.is_file():
        pytest.skip("Silverbox data not available (../shared/data/silverbox)")
    return path


@pytest.fixture()
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


# ----------------------------------------------------------------------------- a real PostgreSQL


def _pg_bin() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    return Path(found[-1]).parent if found else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_server_user(cmd: list[str]) -> list[str]:
    """initdb refuses root: run the server commands as ``nobody`` when we are root."""
    if os.geteuid() != 0:
        return cmd
    return ["su", "nobody", "-s", "/bin/bash", "-c", " ".join(f"'{c}'" for c in cmd)]


@pytest.fixture(scope="session")
def pg_server():
    """A throwaway real PostgreSQL on a unix socket in a temporary directory, one per test run; yields a factory
    of URLs, each to a new empty database. Skips where the server binaries are not installed."""
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries not installed (/usr/lib/postgresql/*/bin); "
                    "apt-get install postgresql to run the PostgreSQL tests")
    if os.geteuid() == 0 and shutil.which("su") is None:
        pytest.skip("running as root without `su`: cannot start PostgreSQL as an unprivileged user")
    base = Path(tempfile.mkdtemp(prefix="nlid-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        os.chown(base, 65534, 65534)
    os.chmod(base, 0o755)
    port = _free_port()
    log = base / "log"
    subprocess.run(_as_server_user([str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", "nlid"]),
                   check=True, capture_output=True, timeout=120)
    subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l", str(log), "-o",
                                    f"-k {base} -p {port} -c listen_addresses= -c fsync=on", "start"]),
                   check=True, capture_output=True, timeout=120)
    import sqlalchemy as sa

    admin = sa.create_engine(f"postgresql+psycopg://nlid@/postgres?host={base}&port={port}",
                             isolation_level="AUTOCOMMIT")
    counter = iter(range(10_000))

    def new_url() -> str:
        db = f"t{next(counter)}"
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {db}")
        return f"postgresql+psycopg://nlid@/{db}?host={base}&port={port}"

    try:
        yield new_url
    finally:
        admin.dispose()
        subprocess.run(_as_server_user([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                       capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)
