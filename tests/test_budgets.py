"""Work budgets and no orphans: the hostile inputs that once held a shared server's CPU for minutes.

Each case must end in one specific line (exit status 2 on the command line, never 3) within 30 s of
CPU, and no kill may leave a worker computing: typed terms too large or too slow to compile, batch
specs nested too deeply or asking for days of work, file patterns that walk the disk, study archives
of too many runs, and SIGKILL of a batch command, of a dashboard job's parent and of a file-reading
worker's parent.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import psutil
import pytest

from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.terms import custom
from tests.test_batch import MC_SPEC

REPO = Path(__file__).resolve().parents[1]
LIMIT_S = 30.0

SQRT_CHAIN = "k*" + "sqrt(k*abs(x)+" * 19 + "x" + ")" * 19      # ~6 s of symbolic work: over a 1 s budget
TANH_CHAIN = "k*" + "tanh(k*x+" * 16 + "x" + ")" * 16           # minutes in sympy.cse once; now well under 1 s
PRODUCT = "k*" + "*".join(["(x+v)"] * 150)                       # derivatives of ~70 000 parts (estimated)


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("NLID_DEBUG", None)
    return env


def _cli(*argv: str, cwd: Path = REPO, **env: str) -> tuple[int, str, float]:
    """Run the CLI; (status, stderr, CPU seconds of it and its children)."""
    before = os.times()
    proc = subprocess.run([sys.executable, "-m", "nlid_core", *argv], cwd=cwd, env=_env(**env),
                          capture_output=True, text=True, timeout=120)
    after = os.times()
    return proc.returncode, proc.stderr, (after.children_user - before.children_user
                                          + after.children_system - before.children_system)


def _one_line_error(status: int, err: str, cpu: float, *words: str) -> None:
    assert status == 2, (status, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err and lines[0].startswith("error:"), err
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert cpu < LIMIT_S


@pytest.fixture(autouse=True)
def _fresh_terms(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each case compiles its typed terms anew (no memo, its own program cache)."""
    monkeypatch.setenv("NLID_PROGRAM_CACHE", str(tmp_path / "programs"))
    custom._MEMO.clear()
    yield
    custom._MEMO.clear()


# ----------------------------------------------------------------------------- typed terms


def test_a_term_over_its_cpu_budget_is_refused_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NLID_TERM_CPU_S", "1")
    t0 = time.monotonic()
    with pytest.raises(ModelSpecError, match=r"custom term `slow` = .* needs more than 1 s of CPU time.*NLID_TERM_CPU_S"):
        custom.custom_term("slow", SQRT_CHAIN)
    assert time.monotonic() - t0 < 15
    t0 = time.thread_time()
    with pytest.raises(ModelSpecError, match="needs more than 1 s"):  # remembered: a rerun costs nothing
        custom.custom_term("slow", SQRT_CHAIN)
    assert time.thread_time() - t0 < 0.1


def test_a_deep_chain_compiles_quickly_and_exactly() -> None:
    import numpy as np

    t0 = time.thread_time()
    term = custom.custom_term("chain", TANH_CHAIN)
    assert time.thread_time() - t0 < 10
    # the compiled force and its derivative in k against the expression itself (central difference)
    from nlid_core.terms.vm import evaluate_program

    x, v, k = 0.3, -0.2, 0.7

    def force(kk: float) -> float:
        u = x
        for _ in range(16):
            u = np.tanh(kk * x + u)
        return kk * u

    p = term.program
    out = evaluate_program(p.op, p.a, p.b, p.dst, p.registers, p.outputs, np.array([[x, v, k]]))[0]
    assert out[0] == pytest.approx(force(k), rel=1e-12)
    dk = (force(k + 1e-6) - force(k - 1e-6)) / 2e-6
    assert out[3] == pytest.approx(dk, rel=1e-6)


def test_a_term_too_large_is_refused_before_any_symbolic_work() -> None:
    t0 = time.thread_time()
    with pytest.raises(ModelSpecError, match=r"custom term `big` is nested too deeply: its derivatives would have"):
        custom.custom_term("big", PRODUCT)
    assert time.thread_time() - t0 < 0.5  # no worker started, no symbolic work


def test_the_cli_refuses_a_slow_term_in_one_line(tmp_path: Path) -> None:
    from nlid_core.examples import make_example
    from nlid_core.io import write_record

    write_record(make_example("seed"), tmp_path / "seed.csv")
    status, err, cpu = _cli("identify", str(tmp_path / "seed.csv"), "--custom", f"q={SQRT_CHAIN}",
                            NLID_TERM_CPU_S="1", NLID_PROGRAM_CACHE=str(tmp_path / "p"))
    _one_line_error(status, err, cpu, "custom term `q`", "NLID_TERM_CPU_S")


# ----------------------------------------------------------------------------- specs and model files

DEEP_TABLES = "kind = \"grid\"\nx = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n"
DEEP_KEYS = "kind = \"monte_carlo\"\n" + ".".join(["k"] * 40) + " = 1\n"


@pytest.mark.parametrize("text, words", [
    (DEEP_TABLES, ("deep.toml, line 2 (`x`)", "nested deeper than 16 levels")),
    (DEEP_KEYS, ("deep.toml", "`k.k.k.k", "nested deeper than 16 levels")),
    ("kind = \"monte_carlo\"\ndraws = 100000\nseed = 1\n[model]\nterms = [\"m0\", \"k1\"]\n"
     "values = { m0 = 1.0, k1 = 100.0 }\n[excitation]\nkind = \"linear_chirp\"\nf0_hz = 1.0\nf1_hz = 10.0\n"
     "amplitude_n = 1.0\nduration_s = 200.0\nfs_hz = 1000.0\n[measurement]\nnoise = { x = 1e-6 }\n",
     ("100000 items", "NLID_BATCH_MAX_SAMPLES")),
])
def test_hostile_batch_specs_get_one_line(tmp_path: Path, text: str, words: tuple[str, ...]) -> None:
    spec = tmp_path / "deep.toml"
    spec.write_text(text)
    status, err, cpu = _cli("batch", str(spec), "--database", f"sqlite:///{tmp_path / 's.sqlite'}")
    _one_line_error(status, err, cpu, *words)


def test_a_deeply_nested_model_file_gets_one_line(tmp_path: Path) -> None:
    model = tmp_path / "model.toml"
    model.write_text("[[dof]]\nname = \"x1\"\nmass = " + "[" * 5000 + "]" * 5000 + "\n")
    status, err, cpu = _cli("identify", "--model", str(model), str(tmp_path / "none.csv"))
    _one_line_error(status, err, cpu, "model.toml", "nested deeper than 16 levels")


GRID = """\
kind = "grid"
[records]
files = [{pattern!r}]
[[variant]]
label = "lin"
terms = ["m0", "c1", "k1"]
method = "equation-error"
"""


def test_file_patterns_stay_in_the_spec_folder_and_walk_a_bounded_tree(tmp_path: Path) -> None:
    from nlid_core.batch import load_spec

    spec = tmp_path / "grid.toml"
    spec.write_text(GRID.format(pattern="/**/*.csv"))
    db = f"sqlite:///{tmp_path / 's.sqlite'}"
    status, err, cpu = _cli("batch", str(spec), "--database", db)
    _one_line_error(status, err, cpu, "outside the spec's folder", "--allow-outside")
    t0 = time.monotonic()
    status, err, cpu = _cli("batch", str(spec), "--database", db, "--allow-outside", NLID_GLOB_MAX_ENTRIES="2000")
    _one_line_error(status, err, cpu, "visits more than 2,000 directory entries", "NLID_GLOB_MAX_ENTRIES")
    assert time.monotonic() - t0 < LIMIT_S
    (tmp_path / "root").symlink_to("/")  # a link inside the folder to a folder outside: not walked
    spec.write_text(GRID.format(pattern="root/**/*.csv"))
    with pytest.raises(DataValidationError, match="outside the spec's folder"):
        load_spec(spec)
    (tmp_path / "data" / "sub").mkdir(parents=True)
    for name in ("data/a.csv", "data/sub/b.csv", "data/sub/c.txt", "data/.hidden.csv"):
        (tmp_path / name).write_text("t,f,x\n")
    spec.write_text(GRID.format(pattern="data/**/*.csv"))
    assert [p.name for p in load_spec(spec).grid.records.files] == ["a.csv", "b.csv"]


# ----------------------------------------------------------------------------- study archives


def _archive(runs: list[dict[str, object]]) -> bytes:
    import hashlib

    members = {"study.json": json.dumps({"name": "big", "notes": "", "records": []}).encode(),
               "runs.json": json.dumps(runs).encode()}
    manifest = {"format": "nlid-study", "format_version": 1, "schema_revision": "0002",
                "members": {k: {"sha256": hashlib.sha256(v).hexdigest(), "size": len(v)} for k, v in members.items()}}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", json.dumps(manifest))
        for k, v in members.items():
            zf.writestr(k, v)
    return buf.getvalue()


def _run(i: int, config: object = None) -> dict[str, object]:
    return {"label": f"run {i}", "created": "2026-01-01T00:00:00+00:00", "config": config or {"i": i},
            "result": {"success": True}, "success": True}


def test_archives_are_bounded_in_runs_and_nesting_and_import_in_proportion(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from nlid_core.store.archive import import_study
    from nlid_core.store.db import open_store
    from nlid_core.store.studies import list_runs, list_studies

    with open_store(f"sqlite:///{tmp_path / 's.sqlite'}") as store:
        monkeypatch.setenv("NLID_ARCHIVE_MAX_RUNS", "20000")
        t0 = time.thread_time()
        with pytest.raises(DataValidationError, match=r"holds 20,001 runs; at most 20,000 .*NLID_ARCHIVE_MAX_RUNS"):
            import_study(store, "ann", _archive([_run(i) for i in range(20_001)]))
        deep: dict[str, object] = {}
        for _ in range(200):
            deep = {"d": deep}
        with pytest.raises(DataValidationError, match=r"'runs.json': `\[0\].config.d.d.*nested deeper than 32"):
            import_study(store, "ann", _archive([_run(0, deep)]))
        assert list_studies(store, "ann") == ()
        study = import_study(store, "ann", _archive([_run(i) for i in range(20_000)]))
        assert len(list_runs(store, "ann", study.id)) == 20_000
        assert time.thread_time() - t0 < LIMIT_S  # was ~5 ms a run, one statement each


# ----------------------------------------------------------------------------- job and item budgets


def test_a_batch_item_over_its_cpu_budget_fails_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import nlid_core.estimate as estimate
    from nlid_core.batch import parse_spec, run_batch
    from nlid_core.store.db import open_store

    real = estimate.identify
    calls: list[int] = []

    def slow_first(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 1:
            end = time.process_time() + 20
            while time.process_time() < end:
                sum(range(1000))
        return real(*args, **kwargs)

    text = MC_SPEC.format(draws=2, seed=1, method="equation-error", duration=1.0)
    with open_store(f"sqlite:///{tmp_path / 'warm.sqlite'}") as store:  # compiled kernels loaded: not an item's cost
        assert run_batch(store, "local", parse_spec(text), serial=True).n_failed == 0
    monkeypatch.setattr(estimate, "identify", slow_first)
    monkeypatch.setenv("NLID_BATCH_ITEM_CPU_S", "1")
    t0 = time.thread_time()
    with open_store(f"sqlite:///{tmp_path / 's.sqlite'}") as store:
        res = run_batch(store, "local", parse_spec(text), serial=True)
    assert time.thread_time() - t0 < 10
    assert (res.n_items, res.n_failed) == (2, 1), res.message


def test_a_dashboard_job_over_its_wall_time_is_stopped() -> None:
    from app_support import jobs

    job = jobs.Job(jobs._sleep_for_tests, (30.0,), limits=jobs.Limits(wall_s=1)).start()
    end = time.monotonic() + 20
    while not job.done and time.monotonic() < end:
        job.wait(jobs.POLL_S)
    with pytest.raises(jobs.JobError, match=r"ran longer than its time limit of 1 s .*NLID_JOB_WALL_S"):
        job.result()
    assert _gone([job.pid])


# ----------------------------------------------------------------------------- no orphans


def _gone(pids: list[int | None], within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        alive = []
        for pid in pids:
            try:
                if pid is not None and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    alive.append(pid)
            except psutil.NoSuchProcess:
                pass
        if not alive:
            return True
        time.sleep(0.05)
    return False


def _descendants(pid: int, at_least: int, timeout_s: float = 60.0) -> list[int]:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        kids = [p.pid for p in psutil.Process(pid).children(recursive=True)]
        if len(kids) >= at_least:
            return kids
        time.sleep(0.05)
    raise AssertionError(f"process {pid} started fewer than {at_least} workers in time")


def _kill_parent(code: str, workers: int, within_s: float = 5.0) -> None:
    """Start ``python -c code`` (which starts workers), SIGKILL it alone, and check its workers end."""
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        kids = _descendants(proc.pid, workers)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert _gone(kids, within_s), [psutil.Process(k).cmdline() for k in kids if psutil.pid_exists(k)]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigkill_of_a_batch_command_leaves_no_worker(tmp_path: Path) -> None:
    spec = tmp_path / "mc.toml"
    spec.write_text(MC_SPEC.format(draws=400, seed=1, method="two-stage", duration=4.0))
    proc = subprocess.Popen([sys.executable, "-m", "nlid_core", "batch", str(spec), "--database",
                             f"sqlite:///{tmp_path / 's.sqlite'}", "--workers", "2", "--quiet"], cwd=REPO, env=_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        kids = _descendants(proc.pid, 3)  # the forkserver and two workers
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGKILL)  # the command alone, as a user's kill or the OOM killer would
        proc.wait(10)
        assert _gone(kids), [psutil.Process(k).cmdline() for k in kids if psutil.pid_exists(k)]
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigkill_of_a_dashboard_server_leaves_no_job_worker() -> None:
    code = ("from app_support import jobs\n"
            "job = jobs.Job(jobs._sleep_for_tests, (60.0,)).start()\n"  # silent: no failed send ends it
            "while job.startup_s is None:\n"
            "    job.wait(jobs.POLL_S)\n"
            "print(job.pid, flush=True)\n"
            "import time\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        worker = int(proc.stdout.readline())
        assert psutil.pid_exists(worker)
        os.kill(proc.pid, signal.SIGKILL)  # the server alone
        proc.wait(10)
        assert _gone([worker])
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigkill_of_a_reader_leaves_no_parse_worker(tmp_path: Path) -> None:
    from tests import hostile_files as hf

    path = hf.xlsx_many_rows(tmp_path, rows=300_000)
    # the parse takes several seconds: a worker still there 1.5 s after its parent died is an orphan
    _kill_parent(f"from nlid_core.guard import load_record_guarded\nload_record_guarded({str(path)!r})\n", workers=1,
                 within_s=1.5)


def test_the_cpu_budget_interrupts_python_and_restores_the_limit() -> None:
    import resource

    from nlid_core.isolation import CpuBudgetExceeded, cpu_budget

    before = resource.getrlimit(resource.RLIMIT_CPU)
    # the loop's own CPU time: threads that earlier tests of this worker left running share the process's
    # budget (so they can only end the loop sooner) but hold the GIL now and then, and would add their time here
    t0 = time.thread_time()
    with pytest.raises(CpuBudgetExceeded, match="spent"):
        with cpu_budget(1, "spent"):
            while True:
                sum(range(1000))
    assert time.thread_time() - t0 < 4
    assert resource.getrlimit(resource.RLIMIT_CPU) == before
    with cpu_budget(None, "unbounded"):
        pass
