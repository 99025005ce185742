"""Shared fixtures. Reference data lives outside the repository (``../shared/data``
beside the checkout, or ``$NLID_SHARED_DATA``); tests that need it skip without it."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import settings as hypothesis_settings

from nlid_core.examples import make_example

REPO = Path(__file__).resolve().parents[1]

# Property tests: 150 examples each in the suite, 700 with NLID_HYPOTHESIS_PROFILE=thorough (bench/nightly).
hypothesis_settings.register_profile("ci", max_examples=150)
hypothesis_settings.register_profile("thorough", max_examples=700)
hypothesis_settings.load_profile(os.environ.get("NLID_HYPOTHESIS_PROFILE", "ci"))


def shared_data_dir() -> Path | None:
    env = os.environ.get("NLID_SHARED_DATA")
    cand = Path(env) if env else REPO.parent / "shared" / "data"
    return cand if cand.is_dir() else None


@pytest.fixture(scope="session")
def seed_record():
    """The seed-000 benchmark record (noise seed 42)."""
    return make_example("seed")


def shared_file(relative: str, what: str) -> Path:
    """A file of the shared reference data, or a skip saying which data is missing."""
    d = shared_data_dir()
    path = d / relative if d else None
    if path is None or not path.is_file():
        pytest.skip(f"{what} data not available (../shared/data/{relative.split('/')[0]})")
    return path


@pytest.fixture(scope="session")
def silverbox_csv() -> Path:
    return shared_file("silverbox/SNLS80mV.csv", "Silverbox")


@pytest.fixture(scope="session")
def emps_mat() -> Path:
    """The EMPS drive axis's estimation record (real measured data, MAT v5)."""
    return shared_file("emps/DATA_EMPS.mat", "EMPS")


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


# ----------------------------------------------------------------------------- kinds of tests

#: Every kind a test is marked with, and how it is found (README "Tests" says how to run each part).
KINDS = {
    "browser": "a real browser against a dashboard server (tests/browser)",
    "app": "Streamlit AppTest of the dashboard's pages (tests/app)",
    "postgres": "a throwaway real PostgreSQL server (uses the pg_server fixture)",
    "subprocess": "runs the command line, a server or a worker in another process (the module starts processes)",
    "lint": "reads the source tree: types, architecture, packaging",
    "slow": "recovery checks behind costly shared fixtures (staged friction, multi-DOF plans, level sweeps)",
}
_LINT_MODULES = {"test_typing.py", "test_architecture.py", "test_docker.py"}
#: Modules whose fixtures cost tens of seconds (the 25 slowest of a full run, outside the other kinds).
_SLOW_MODULES = {"test_friction.py", "test_friction_figures.py", "test_mdof.py", "test_nonlinearity.py",
                 "test_multibody_inverse.py", "test_hysteresis_evidence.py"}
#: Seconds the fast part (no test of the kinds above) may take on a quiet 2-core machine.
FAST_BUDGET_S = 180.0
_process_markers: dict[Path, bool] = {}


def _starts_processes(path: Path) -> bool:
    if path not in _process_markers:
        text = path.read_text(encoding="utf-8")
        _process_markers[path] = any(word in text for word in ("subprocess", "sys.executable", "Popen",
                                                               "load_record_guarded", "load_records_guarded",
                                                               "run_job(", "jobs.Job(", "ProcessRunner",
                                                               "custom_term(", "parse_custom("))
    return _process_markers[path]


def pytest_configure(config: pytest.Config) -> None:
    for name, text in KINDS.items():
        config.addinivalue_line("markers", f"{name}: {text}")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test by kind, from where it lives and what it uses (filtered by path: a hook in this
    conftest sees every test of the session)."""
    tests = Path(__file__).resolve().parent
    for item in items:
        path = Path(str(item.fspath)).resolve()
        try:
            rel = path.relative_to(tests)
        except ValueError:
            continue
        if rel.parts[0] == "browser":
            item.add_marker(pytest.mark.browser)
        elif rel.parts[0] == "app":
            item.add_marker(pytest.mark.app)
        if "pg_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
        if rel.name in _SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if rel.name in _LINT_MODULES:
            item.add_marker(pytest.mark.lint)
        elif _starts_processes(path):
            item.add_marker(pytest.mark.subprocess)


def _is_fast_run(config: pytest.Config) -> bool:
    expr = (config.getoption("markexpr", "") or "").replace(" ", "")
    return all(f"not{kind}" in expr for kind in KINDS)


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config._nlid_started = time.monotonic()  # type: ignore[attr-defined]


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The fast part has a time budget: over it, the run fails with a line saying so."""
    config = session.config
    if not _is_fast_run(config) or hasattr(config, "workerinput"):
        return
    took = time.monotonic() - config._nlid_started  # type: ignore[attr-defined]
    budget = float(os.environ.get("NLID_FAST_BUDGET_S", FAST_BUDGET_S))
    if took > budget:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"FAILED the fast part took {took:.0f} s, over its budget of {budget:.0f} s: "
                                "make the slow tests cheaper or mark them by kind", red=True)
