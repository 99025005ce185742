"""Batch command (nlid_core.batch, ``python -m nlid_core batch``): spec checks, known answers, Monte Carlo
coverage, the same results on every runner, resume after SIGKILL and SIGINT, bad input."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from nlid_core.batch import item_seed, load_spec, parse_spec, run_batch, run_spec_text
from nlid_core.batch.run import batch_status
from nlid_core.cli import main
from nlid_core.errors import DataValidationError, ModelSpecError, SimulationError
from nlid_core.examples import make_example
from nlid_core.io import write_record
from nlid_core.store import studies as S
from nlid_core.store.db import open_store


REPO = Path(__file__).resolve().parents[1]
TRUTH = {"m0": 1.0, "c1": 0.8, "k1": 1500.0, "k3": 2e5}

MC_SPEC = """\
kind = "monte_carlo"
study = "coverage"
draws = {draws}
seed = {seed}

[model]
terms = ["m0", "c1", "k1", "k3"]
values = {{ m0 = 1.0, c1 = 0.8, k1 = 1500.0, k3 = 2e5 }}

[excitation]
kind = "linear_chirp"
f0_hz = 1.0
f1_hz = 12.0
amplitude_n = 5.0
duration_s = {duration}
fs_hz = 200.0

[measurement]
channels = ["x"]
noise = {{ x = 1e-5 }}

[fit]
method = "{method}"
"""

GRID_SPEC = """\
kind = "grid"
study = "rig"

[records]
files = ["data/*.csv"]

[[variant]]
label = "cubic"
terms = ["m0", "c1", "k1", "k3"]
bounds = { k3 = [-1e7, 1e7] }

[[variant]]
label = "linear-ee"
terms = "m0,c1,k1"
method = "equation-error"
"""


def _mc(tmp_path: Path, *, draws: int = 12, seed: int = 3, method: str = "two-stage", duration: float = 2.0,
        name: str = "mc.toml") -> Path:
    p = tmp_path / name
    p.write_text(MC_SPEC.format(draws=draws, seed=seed, method=method, duration=duration))
    return p


@pytest.fixture(scope="module")
def grid_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three simulated softening-Duffing records (different noise seeds) and a grid spec."""
    d = tmp_path_factory.mktemp("grid")
    (d / "data").mkdir()
    for s in (1, 2, 3):
        write_record(make_example("softening", overrides={"seed": s, "duration_s": 3.0}), d / "data" / f"run{s}.csv")
    (d / "grid.toml").write_text(GRID_SPEC)
    return d


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _results(store, owner: str, study_id: int, *, drop_timing: bool = True) -> dict[str, str]:
    """Item key -> canonical JSON of the stored result (``timing`` is measured wall time: dropped)."""
    out = {}
    for r in S.list_runs(store, owner, study_id):
        key = r.config.get("item_key")
        if key is None:
            continue
        res = dict(r.result)
        if drop_timing:
            res.pop("timing", None)
        out[key] = json.dumps(res, sort_keys=True)
    return out


# ----------------------------------------------------------------------------- the spec


@pytest.mark.parametrize("text, words", [
    ("kind = [", "not valid TOML"),
    ('kind = "sweep"', "`kind` must be"),
    ('study = "x"', "give `kind`"),
    ('kind = "grid"\nbogus = 1\n[records]\nfiles = ["a.csv"]\n[[variant]]\nlabel = "a"\nterms = "k1"',
     "unknown key(s) `bogus`"),
    ('kind = "grid"\n[records]\nfiles = ["d/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1,zz9"', "[[variant]] #1 `terms`"),
    ('kind = "grid"\n[records]\nfiles = ["d/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"\nmethod = "magic"',
     "[[variant]] #1 `method` must be one of"),
    ('kind = "grid"\n[records]\nfiles = ["d/*.csv"]\n[[variant]]\nlabel = "a b"\nterms = "m0,k1"', "`label`"),
    ('kind = "grid"\n[records]\nfiles = ["d/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"\n'
     '[[variant]]\nlabel = "a"\nterms = "m0,k1"', "used twice"),
    ('kind = "grid"\n[records]\nfiles = ["d/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"\nstart = { k9 = 1 }',
     "[[variant]] #1 start"),
    ('kind = "grid"\n[records]\nfiles = ["d/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"\n'
     'bounds = { k1 = [2, 1] }', "exceeds the upper bound"),
    ('kind = "grid"\n[records]\nfiles = ["nothing/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"',
     "no file matches"),
    ('kind = "grid"\n[records]\nfiles = ["missing.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"', "no such file"),
    ('kind = "monte_carlo"\ndraws = 0', "`draws` must be a whole number from 1"),
    ('kind = "monte_carlo"\ndraws = 10\n[model]\nvalues = { k1 = 1.0, m0 = 1.0 }\n[excitation]\nkind = "noise"\n'
     '[measurement]\nnoise = { x = 1e-5 }', "[excitation] `kind` must be one of"),
    ('kind = "monte_carlo"\ndraws = 10\n[model]\nvalues = { k1 = 1.0, m0 = 1.0 }\n[excitation]\n'
     'kind = "linear_chirp"\n[measurement]\nnoise = { v = 1e-5 }', "[measurement] `noise` takes the measured"),
    ('kind = "monte_carlo"\ndraws = 10\n[model]\nvalues = { k1 = 1.0, m0 = "heavy" }\n[excitation]\n'
     'kind = "linear_chirp"\n[measurement]\nnoise = { x = 1e-5 }', "[model] `values.m0` must be a finite number"),
    ('kind = "monte_carlo"\ndraws = 10\n[model]\nvalues = { k1 = 1.0, m0 = 1.0 }\n[excitation]\nkind = "linear_chirp"\n'
     'duration_s = 1e4\nfs_hz = 1e3\n[measurement]\nnoise = { x = 1e-5 }', "samples; at most"),
])
def test_bad_specs_name_the_table_and_key(tmp_path: Path, text: str, words: str) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "r.csv").write_text("t,f,x\n0,0,0\n")
    with pytest.raises((ModelSpecError, DataValidationError)) as info:
        parse_spec(text, base_dir=tmp_path)
    assert words in str(info.value)


@pytest.mark.parametrize("scale", ['scale = "f=35.15N"', '[records.scale]\nf = "0.03515kN"'])
def test_a_scale_in_the_spec_turns_volts_into_newtons(tmp_path: Path, scale: str) -> None:
    from nlid_core.io import load_record

    vir = np.sin(np.arange(40.0))
    (tmp_path / "axis.csv").write_text("time,vir,pos\n" + "".join(f"{i * 1e-3!r},{float(v)!r},{i}\n" for i, v in enumerate(vir)))
    spec = parse_spec(f'kind = "grid"\n[records]\nfiles = ["axis.csv"]\ncolumns = "t=time,f=vir,x=pos"\nunits = "x=mm"\n'
                      f'{scale}\n[[variant]]\nlabel = "a"\nterms = "m0,k1"', base_dir=tmp_path)
    assert spec.grid is not None
    src = spec.grid.records
    assert dict(src.units or {}) == {"x": "mm", "f": repr(35.15)}
    rec = load_record(src.files[0], columns=src.columns, units=src.units)
    assert np.allclose(rec.f, 35.15 * vir) and np.allclose(rec.x, np.arange(40) * 1e-3)
    with pytest.raises(ModelSpecError, match="both `units` and `scale`"):
        parse_spec('kind = "grid"\n[records]\nfiles = ["axis.csv"]\nunits = "f=kN"\nscale = "f=35.15N"\n'
                   '[[variant]]\nlabel = "a"\nterms = "m0,k1"', base_dir=tmp_path)
    with pytest.raises(DataValidationError, match="positive factor"):
        parse_spec('kind = "grid"\n[records]\nfiles = ["axis.csv"]\nscale = "f=-3N"\n'
                   '[[variant]]\nlabel = "a"\nterms = "m0,k1"', base_dir=tmp_path)


def test_spec_size_is_bounded(tmp_path: Path) -> None:
    p = tmp_path / "big.toml"
    p.write_text('kind = "grid"\n' + "# padding\n" * 30_000)
    with pytest.raises(ModelSpecError, match="larger than"):
        load_spec(p)


def test_item_seed_is_the_spawned_child() -> None:
    children = np.random.SeedSequence(2026).spawn(5)
    for i, child in enumerate(children):
        assert np.array_equal(item_seed(2026, i).generate_state(4), child.generate_state(4))
    assert not np.array_equal(item_seed(2026, 0).generate_state(4), item_seed(2027, 0).generate_state(4))


# ----------------------------------------------------------------------------- known answers


def test_grid_recovers_the_truth_and_stores_records_once(grid_dir: Path, tmp_path: Path) -> None:
    spec = load_spec(grid_dir / "grid.toml")
    with open_store(_url(tmp_path / "db.sqlite")) as store:
        res = run_batch(store, "alice", spec, serial=True)
        assert res.success and res.n_items == 6 and res.n_computed == 6 and res.n_failed == 0
        truth = {"m0": 1.5, "c1": 0.8, "k1": 1500.0, "k3": -2.0e5}
        cubic = [r for r in res.grid if r.variant == "cubic"]
        assert len(cubic) == 3
        for row in cubic:
            for name, value in truth.items():
                se = row.stderr[name]
                assert 0 < se < 0.01 * abs(value)
                assert abs(row.values[name] - value) < 4.5 * se, (row.record, name, row.values[name], se)
        stored = S.list_records(store, "alice", res.study_id)
        assert sorted(r.name for r in stored) == ["run1", "run2", "run3"]
        runs = S.list_runs(store, "alice", res.study_id)
        assert runs[0].label == "batch spec" and runs[0].config["batch"]["spec_toml"] == GRID_SPEC
        assert all(r.result.get("parameters") for r in runs[1:])       # result_to_dict documents
        assert S.compare_runs(store, "alice", res.study_id).shape[0] == 7
        # again: nothing recomputed, nothing added
        again = run_batch(store, "alice", spec, serial=True)
        assert again.n_skipped == 6 and again.n_computed == 0 and again.runner == "none"
        assert len(S.list_records(store, "alice", res.study_id)) == 3
        assert len(S.list_runs(store, "alice", res.study_id)) == 7
        st = batch_status(store, "alice", res.study_id)
        assert (st.batch_set, st.kind, st.n_items, st.n_done, st.n_failed) == (1, "grid", 6, 6, 0)
        # another engineer sees nothing of it
        assert S.list_studies(store, "bob") == ()


def _coverage(tmp_path: Path, method: str) -> dict[str, object]:
    spec = load_spec(_mc(tmp_path, draws=100, seed=11, method=method, duration=1.5, name=f"{method}.toml"))
    with open_store(_url(tmp_path / f"{method}.sqlite")) as store:
        res = run_batch(store, "local", spec, serial=True)
    assert res.monte_carlo is not None and res.monte_carlo.n_ok == 100
    return {p.name: p for p in res.monte_carlo.parameters}


def test_monte_carlo_coverage_is_nominal_for_a_well_posed_model(tmp_path: Path) -> None:
    params = _coverage(tmp_path, "two-stage")
    assert sorted(params) == sorted(TRUTH)
    for name, p in params.items():
        assert p.truth == TRUTH[name] and p.n == 100
        assert p.within_band, (name, p.coverage, p.band)           # 95 % ± 1.96 sqrt(0.95 0.05 / 100)
        assert 0.7 < p.spread / p.mean_stderr < 1.4, (name, p.spread, p.mean_stderr)
        assert abs(p.bias) < 3 * p.spread / 10                      # 3 standard errors of the mean


def test_monte_carlo_coverage_exposes_a_biased_estimator(tmp_path: Path) -> None:
    """Equation error on displacement alone differentiates noisy data: biased, so its intervals miss."""
    params = _coverage(tmp_path, "equation-error")
    assert any(not p.within_band and p.coverage < p.band[0] for p in params.values())


def test_a_batch_lands_in_postgresql_and_resumes_there(tmp_path: Path, pg_server) -> None:
    url = pg_server()
    spec = load_spec(_mc(tmp_path, draws=6))
    with open_store(url) as store:
        first = run_batch(store, "dora", spec, serial=True)
        again = run_batch(store, "dora", spec, serial=True)
        with open_store(_url(tmp_path / "ref.sqlite")) as ref:
            on_sqlite = run_batch(ref, "dora", spec, serial=True)
            assert _results(store, "dora", first.study_id) == _results(ref, "dora", on_sqlite.study_id)
    assert store.dialect == "postgresql" and first.success and first.n_computed == 6
    assert again.n_skipped == 6 and again.n_computed == 0


def test_monte_carlo_with_a_force_file_matches_the_generator(tmp_path: Path) -> None:
    """The force CSV `python -m nlid_core excitation` writes drives the same draws as the generator itself."""
    assert main(["excitation", "linear-chirp", "--out", str(tmp_path / "force.csv"), "--f0", "1", "--f1", "12",
                 "--amplitude", "5", "--duration", "2", "--fs", "200"]) == 0
    by_file = tmp_path / "file.toml"
    text = _mc(tmp_path, draws=3).read_text()
    head, _, rest = text.partition("[excitation]")
    by_file.write_text(head + '[excitation]\nfile = "force.csv"\n\n[measurement]' + rest.split("[measurement]")[1])
    with open_store(_url(tmp_path / "db.sqlite")) as store:
        a = run_batch(store, "local", load_spec(by_file), study="file", serial=True)
        b = run_batch(store, "local", load_spec(_mc(tmp_path, draws=3)), study="generator", serial=True)
        assert a.success and b.success
        va = [p.mean for p in a.monte_carlo.parameters]
        vb = [p.mean for p in b.monte_carlo.parameters]
    assert np.allclose(va, vb, rtol=1e-6)      # the CSV holds 10 significant digits of the force


def test_specs_typed_in_the_dashboard_may_name_no_file(grid_dir: Path, tmp_path: Path, monkeypatch) -> None:
    """``files=False`` refuses a grid and an excitation file before looking at the file system."""
    import glob

    looked: list[str] = []
    real_isfile, real_resolve, real_glob = Path.is_file, Path.resolve, glob.glob
    monkeypatch.setattr(Path, "is_file", lambda p: looked.append(str(p)) or real_isfile(p))
    monkeypatch.setattr(Path, "resolve", lambda p, *a: looked.append(str(p)) or real_resolve(p, *a))
    monkeypatch.setattr(glob, "glob", lambda *a, **k: looked.append(str(a[0])) or real_glob(*a, **k))
    with pytest.raises(ModelSpecError, match="a grid reads record files on the server"):
        parse_spec((grid_dir / "grid.toml").read_text(), base_dir=grid_dir, files=False)
    head, _, rest = _mc(tmp_path).read_text().partition("[excitation]")
    by_file = head + f'[excitation]\nfile = "{grid_dir / "data" / "run1.csv"}"\n\n[measurement]' + rest.split(
        "[measurement]")[1]
    with pytest.raises(ModelSpecError, match="reads no files on the server"):
        parse_spec(by_file, files=False)
    assert looked == []
    with pytest.raises(DataValidationError, match="outside the spec's folder.*--allow-outside"):
        parse_spec(by_file, base_dir=tmp_path)
    assert parse_spec(by_file, outside=True).monte_carlo.excitation_file is not None  # the command line may
    assert looked  # (and the spy sees it look)


def test_run_spec_text_stores_what_run_batch_stores(tmp_path: Path) -> None:
    text = _mc(tmp_path, draws=4).read_text()
    seen: list[tuple[str, float, str]] = []
    a = run_spec_text(_url(tmp_path / "a.sqlite"), "ann", text, progress=lambda *p: seen.append(p))
    with open_store(_url(tmp_path / "b.sqlite")) as store:
        b = run_batch(store, "ann", parse_spec(text), serial=True)
        expected = _results(store, "ann", b.study_id)
    with open_store(_url(tmp_path / "a.sqlite")) as store:
        assert _results(store, "ann", a.study_id) == expected
    assert a.success and a.n_computed == 4 and a.study_name == "coverage"
    assert seen[0][1] == 0.0 and seen[-1][1] == 1.0 and "4 of 4 draws stored" in seen[-1][2]
    again = run_spec_text(_url(tmp_path / "a.sqlite"), "ann", text)
    assert again.n_computed == 0 and again.n_skipped == 4


# ----------------------------------------------------------------------------- runners give the same results


def test_processes_dask_and_serial_store_identical_results(grid_dir: Path, tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    mc = load_spec(_mc(tmp_path, draws=6))
    grid = load_spec(grid_dir / "grid.toml")
    stored: dict[str, dict[str, str]] = {}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc:
        for how, kw in (("serial", {"serial": True}), ("processes", {"workers": 2}),
                        ("dask", {"scheduler": lc.scheduler_address})):
            with open_store(_url(tmp_path / f"{how}.sqlite")) as store:
                a = run_batch(store, "local", mc, **kw)
                b = run_batch(store, "local", grid, **kw)
                assert a.runner == how and b.runner == how and a.success and b.success
                stored[how] = {**_results(store, "local", a.study_id), **_results(store, "local", b.study_id)}
    assert len(stored["serial"]) == 6 + 6
    assert stored["processes"] == stored["serial"]
    assert stored["dask"] == stored["serial"]


def test_unreachable_scheduler_writes_nothing(tmp_path: Path) -> None:
    spec = load_spec(_mc(tmp_path))
    with open_store(_url(tmp_path / "db.sqlite")) as store:
        with pytest.raises(SimulationError, match="cannot reach the Dask scheduler"):
            run_batch(store, "local", spec, scheduler="tcp://127.0.0.1:9", timeout_s=0.5)
        assert S.list_studies(store, "local") == ()


# ----------------------------------------------------------------------------- resume


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "NLID_LOCAL_USER": "local"}


def _count_items(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            return int(conn.execute("SELECT count(*) FROM runs WHERE item_key LIKE 's1|mc=%'").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _start(spec: Path, db: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "nlid_core", "batch", str(spec), "--database", _url(db),
                             "--workers", "1", *extra], cwd=REPO, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)


def _wait_for(db: Path, proc: subprocess.Popen[str], at_least: int, timeout_s: float = 60.0) -> int:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        n = _count_items(db)
        if n >= at_least:
            return n
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("the batch stored too few items in time")


def test_a_killed_batch_resumes_without_redoing_items(tmp_path: Path) -> None:
    spec = _mc(tmp_path, draws=48, seed=5, duration=1.5)
    db = tmp_path / "killed.sqlite"
    proc = _start(spec, db)
    _wait_for(db, proc, 8)
    os.killpg(proc.pid, signal.SIGKILL)          # the batch and its worker processes
    proc.communicate(timeout=30)
    stored = _count_items(db)
    assert 8 <= stored < 48
    out = tmp_path / "resume.json"
    done = subprocess.run([sys.executable, "-m", "nlid_core", "batch", str(spec), "--database", _url(db),
                           "--workers", "2", "--json", str(out)], cwd=REPO, env=_env(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert f"skipping {stored} of 48 items already stored" in done.stdout
    doc = json.loads(out.read_text())
    assert (doc["n_skipped"], doc["n_computed"], doc["n_items"]) == (stored, 48 - stored, 48)   # none twice
    with open_store(_url(db)) as store:
        sid = S.open_study(store, "local", "coverage").id
        resumed = _results(store, "local", sid)
    with open_store(_url(tmp_path / "whole.sqlite")) as store:
        whole = run_batch(store, "local", load_spec(spec), serial=True)
        uninterrupted = _results(store, "local", whole.study_id)
    assert len(resumed) == 48 and resumed == uninterrupted


def test_ctrl_c_stops_with_130_and_keeps_what_was_stored(tmp_path: Path) -> None:
    spec = _mc(tmp_path, draws=200, seed=9, duration=1.5)
    db = tmp_path / "int.sqlite"
    proc = _start(spec, db)
    _wait_for(db, proc, 4)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert err.strip() == "interrupted" and "Traceback" not in out
    kept = _count_items(db)
    assert 4 <= kept < 200
    assert f"interrupted: {kept} of 200 items of set 1 stored in study 'coverage'" in out
    with open_store(_url(db)) as store:
        st = batch_status(store, "local", S.open_study(store, "local", "coverage").id)
    assert st.n_done == kept and st.n_items == 200


def test_an_interrupt_that_something_swallows_still_stops_the_batch() -> None:
    """Ctrl-C while Python runs a finaliser or a callback is reported there and dropped; the batch command
    also sees it through the flag it polls between items."""
    import threading

    from nlid_core.cli.batch import _interrupt_flag

    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are installed from the main thread only")
    before = signal.getsignal(signal.SIGINT)
    with _interrupt_flag() as flag:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1.0)  # the handler runs here
        except KeyboardInterrupt:
            pass  # what a finaliser does with it
        assert flag.is_set()
    assert signal.getsignal(signal.SIGINT) is before


# ----------------------------------------------------------------------------- the command line


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["batch", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


@pytest.mark.parametrize("text, words", [
    ("kind = [", "is not valid TOML"),
    ('kind = "grid"\n[records]\nfiles = ["none/*.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"', "no file matches"),
    ('kind = "grid"\n[records]\nfiles = ["bad.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1,k7"', "`terms`"),
    ('kind = "grid"\n[records]\nfiles = ["bad.csv"]\n[[variant]]\nlabel = "a"\nterms = "m0,k1"', "bad.csv"),
])
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                              words: str) -> None:
    (tmp_path / "bad.csv").write_bytes(b"\x00\x01 not a table \xff" * 10)
    spec = tmp_path / "s.toml"
    spec.write_text(text)
    code, _out, err = _cli(capsys, str(spec), "--database", _url(tmp_path / "db.sqlite"))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error:") and words in err


def test_cli_refuses_a_changed_spec_unless_restart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = _url(tmp_path / "db.sqlite")
    spec = _mc(tmp_path, draws=3)
    assert _cli(capsys, str(spec), "--database", db, "--workers", "1", "--owner", "carol")[0] == 0
    spec.write_text(spec.read_text().replace("draws = 3", "draws = 4"))
    code, _out, err = _cli(capsys, str(spec), "--database", db, "--owner", "carol")
    assert code == 2 and "different spec" in err and "--restart" in err
    code, out, _err = _cli(capsys, str(spec), "--database", db, "--workers", "1", "--owner", "carol", "--restart")
    assert code == 0 and "batch set 2" in out
    with open_store(db) as store:
        sid = S.open_study(store, "carol", "coverage").id
        keys = S.run_item_keys(store, "carol", sid)
    assert sum(k.startswith("s1|mc=") for k in keys) == 3 and sum(k.startswith("s2|mc=") for k in keys) == 4


def test_cli_failed_item_is_stored_and_the_batch_goes_on(grid_dir: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    spec = grid_dir / "fails.toml"
    spec.write_text(textwrap.dedent("""\
        kind = "grid"
        [records]
        files = ["data/run1.csv", "data/run2.csv"]
        [[variant]]
        label = "velocity-output"
        terms = "m0,c1,k1,k3"
        method = "output-error"
        outputs = ["v"]
        [[variant]]
        label = "ok"
        terms = "m0,c1,k1,k3"
        method = "equation-error"
        """))
    out_json = tmp_path / "out.json"
    code, out, err = _cli(capsys, str(spec), "--database", _url(tmp_path / "db.sqlite"), "--workers", "1",
                          "--json", str(out_json))
    assert code == 1 and err == ""
    doc = json.loads(out_json.read_text())
    assert doc["n_items"] == 4 and doc["n_computed"] == 4 and doc["n_failed"] == 2
    rows = {(r["variant"], r["record"]): r for r in doc["grid"]}
    assert rows[("ok", "run1")]["success"] and not rows[("velocity-output", "run1")]["success"]
    assert "v" in rows[("velocity-output", "run1")]["message"]
    assert "FAILED" in out and "[4/4] 100.0 %" in out


def test_the_documented_examples_parse(tmp_path: Path) -> None:
    import re

    text = (REPO / "docs" / "batch.md").read_text()
    blocks = re.findall(r"```toml\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 2
    for sub, name in (("data", "run1.csv"), ("data", "run2.csv"), ("extra", "sweep_8N.parquet")):
        (tmp_path / sub).mkdir(exist_ok=True)
        (tmp_path / sub / name).write_bytes(b"")
    grid, mc = (parse_spec(b, base_dir=tmp_path) for b in blocks)
    assert grid.grid is not None and [v.label for v in grid.grid.variants] == ["linear", "cubic", "cubic-friction"]
    assert len(grid.grid.records.files) == 3 and grid.n_items == 9
    assert mc.monte_carlo is not None and mc.monte_carlo.draws == 1000 and mc.monte_carlo.seed == 2026
