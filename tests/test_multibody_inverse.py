"""Deterministic and interval inverse problems of the flexible double pendulum (nlid_core.multibody.inverse,
.interval, .files) and the ``pendulum`` CLI.

Known answers: the paper's Table A1 (released at θ1 = π/4, θ2 = π/6) and Table A2 (θ1 = π/4·(1 ± 0.05),
θ2 = π/6·(1 ± 0.05)) when the shared data is present; otherwise trajectories and bounds simulated here.
Tolerances are the issue's: angles to 1e-3 rad from a trajectory, interval ends to 2e-3 rad (and 1 % of E).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from nlid_core.cli import main
from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.multibody.files import read_bounds, read_trajectory
from nlid_core.multibody.interval import (Interval, IntervalBounds, compare_swarms, interval_forward,
                                         interval_inverse)
from nlid_core.multibody.inverse import check_trajectory, identify_trajectory, start_angles
from nlid_core.runners import runner
from nlid_core.multibody.pendulum import PendulumSpec, SolverSettings, simulate
from tests.conftest import shared_data_dir

PI = math.pi
DATA = shared_data_dir()
TABLE_A1 = DATA / "pendulum" / "tableA1_case1.csv" if DATA else None
TABLE_A2 = DATA / "pendulum" / "tableA2_case1_interval.csv" if DATA else None
needs_tables = pytest.mark.skipif(TABLE_A1 is None or not TABLE_A1.is_file(), reason="pendulum tables not installed")
FAST = SolverSettings(dt=1e-3)  # the README: 1e-3 s gives the same answer as 5e-4 s


def test_trajectory_checks_name_the_problem():
    t = np.arange(5) * 0.05
    with pytest.raises(DataValidationError, match="first time must be 0"):
        check_trajectory(t + 0.1, t, t)
    with pytest.raises(DataValidationError, match="uniformly spaced"):
        check_trajectory([0, 0.05, 0.11, 0.15], [0] * 4, [0] * 4)
    with pytest.raises(DataValidationError, match="row 3"):
        check_trajectory(t, [0, 0, math.nan, 0, 0], t)
    with pytest.raises(DataValidationError, match="increase"):
        check_trajectory([0, 0.1, 0.1, 0.2], [0] * 4, [0] * 4)


def test_start_angles_invert_the_release_geometry():
    spec = PendulumSpec()
    for th1, th2 in ((PI / 4, PI / 6), (PI / 3, PI / 4), (PI / 2, PI / 3), (0.2, -0.4)):
        ax, ay = math.cos(th1), -math.sin(th1)
        bx, by = ax + 2 * math.cos(th2), ay - 2 * math.sin(th2)
        cands = start_angles(bx, by, spec)
        assert min(abs(a - th1) + abs(b - th2) for a, b in cands) < 1e-12


def test_table_readers_refuse_bad_files(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"\x00\xff\xfe binary")
    with pytest.raises(DataValidationError, match="UTF-8"):
        read_trajectory(p)
    p.write_text("t,x_B\n0,1\n0.05,2\n")
    with pytest.raises(DataValidationError, match="lacks column"):
        read_trajectory(p)
    p.write_text("t,x_B,y_B\n0,1,2\n0.05,abc,2\n0.1,1,1\n")
    with pytest.raises(DataValidationError, match="`x_B`.*row 2"):
        read_trajectory(p)
    p.write_text("t,x_B_min,x_B_max,y_B_min,y_B_max\n0,1,2,3,4\n0.05,2,1,3,4\n0.1,1,2,3,4\n")
    with pytest.raises(DataValidationError, match="row 2.*x_B_min"):
        read_bounds(p)
    big = tmp_path / "big.csv"
    big.write_bytes(b"t,x_B,y_B\n" + b"0,0,0\n" * 1_000_000)
    with pytest.raises(DataValidationError, match="MB"):
        read_trajectory(big)
    with pytest.raises(DataValidationError, match="does not exist"):
        read_trajectory(tmp_path / "nope.csv")


@needs_tables
def test_release_angles_from_the_papers_trajectory():
    t, x, y = read_trajectory(TABLE_A1)
    fit = identify_trajectory(t, x, y)
    assert fit.success, fit.message
    assert abs(fit.estimate("theta1").value - PI / 4) < 1e-3
    assert abs(fit.estimate("theta2").value - PI / 6) < 1e-3
    assert fit.rms_m < 2e-3
    for p in fit.parameters:
        assert 0 < p.stderr < 1e-3 and p.ci[0] < p.value < p.ci[1]


def test_angles_and_modulus_from_a_simulated_trajectory():
    truth = {"theta1": 1.0, "theta2": 0.7, "E_ab": 2.1e7}
    spec = PendulumSpec(e_ab=truth["E_ab"])
    run = simulate(truth["theta1"], truth["theta2"], spec=spec, t_end=1.0, dt_out=0.05, settings=FAST)
    rng = np.random.default_rng(1)
    x = run.x_b + rng.normal(0, 2e-4, run.t.size)
    y = run.y_b + rng.normal(0, 2e-4, run.t.size)
    fit = identify_trajectory(run.t, x, y, free=("theta1", "theta2", "E_ab"), settings=FAST)
    assert fit.success, fit.message
    for p in fit.parameters:
        tol = 0.01 * truth[p.name] if p.name == "E_ab" else 1e-3
        assert abs(p.value - truth[p.name]) < tol, (p.name, p.value)
        assert abs(p.value - truth[p.name]) < 4 * p.stderr + 1e-12, (p.name, p.value, p.stderr)


def test_fixed_angle_is_held():
    run = simulate(PI / 4, PI / 6, t_end=0.6, dt_out=0.05, settings=FAST)
    fit = identify_trajectory(run.t, run.x_b, run.y_b, free=("theta2",), fixed={"theta1": PI / 4}, settings=FAST)
    assert [p.name for p in fit.parameters] == ["theta2"]
    assert abs(fit.parameters[0].value - PI / 6) < 1e-6
    with pytest.raises(ModelSpecError, match="both free and fixed"):
        identify_trajectory(run.t, run.x_b, run.y_b, free=("theta1",), fixed={"theta1": 1.0})
    with pytest.raises(ModelSpecError, match="unknown parameter"):
        identify_trajectory(run.t, run.x_b, run.y_b, free=("theta3",))


def test_forward_bounds_contain_true_runs_and_catch_interior_extremes():
    ivs = (Interval.from_mid("theta1", PI / 4, 0.05 * PI / 4), Interval.from_mid("theta2", PI / 6, 0.05 * PI / 6))
    with runner(serial=True) as r:
        fa = interval_forward(ivs, t_end=1.0, dt_out=0.05, settings=FAST, order=3, n_check=4, runner=r)
    assert fa.success and fa.holdout_rms < 2e-3
    b = fa.bounds
    for run in fa.samples:
        assert np.all(run.x_b >= b.x_min - 1e-9) and np.all(run.x_b <= b.x_max + 1e-9)
        assert np.all(run.y_b >= b.y_min - 1e-9) and np.all(run.y_b <= b.y_max + 1e-9)
    # the corners alone never give wider bounds than the whole box
    assert np.all(fa.vertex_bounds.x_min >= b.x_min - 1e-9) and np.all(fa.vertex_bounds.y_max <= b.y_max + 1e-9)


@needs_tables
def test_interval_inverse_on_the_papers_bounds():
    bounds = read_bounds(TABLE_A2)
    pso, res = compare_swarms(bounds, free=("theta1", "theta2"))
    truth = {"theta1": (0.95 * PI / 4, 1.05 * PI / 4), "theta2": (0.95 * PI / 6, 1.05 * PI / 6)}
    for r in (pso, res):
        assert r.success, r.message
        for iv in r.intervals:
            lo, hi = truth[iv.name]
            assert abs(iv.lower - lo) < 2e-3 and abs(iv.upper - hi) < 2e-3, (r.method, iv, lo, hi)
    # the same surrogate and fitness evaluations; the improved swarm is not worse (to 2 %: ties within the noise
    # of a stochastic search)
    assert res.swarm.evaluations == pso.swarm.evaluations and res.forward_runs == pso.forward_runs
    assert res.fitness <= 1.02 * pso.fitness
    doc = res.to_dict()
    assert set(doc["intervals"]["theta1"]) >= {"lower", "upper", "mid", "radius"}


def _bounds_by_sampling(ivs, fixed, spec, t_end, n=9):
    """Reference bounds: a dense tensor grid of true runs over the box."""
    from nlid_core.multibody.interval import Response

    names = tuple(iv.name for iv in ivs)
    fn = Response(names=names, fixed=fixed, spec=spec, settings=FAST, t_end=t_end, dt_out=0.05)
    grids = np.meshgrid(*[np.linspace(iv.lower, iv.upper, n) for iv in ivs], indexing="ij")
    pts = np.column_stack([g.ravel() for g in grids])
    with runner() as r:
        vals = np.asarray(r.map(fn, list(pts)))
    t = np.round(np.arange(int(round(t_end / 0.05)) + 1) * 0.05, 12)
    return IntervalBounds.from_vectors(t, vals.min(axis=0), vals.max(axis=0))


def test_interval_inverse_with_one_angle_fixed_and_the_modulus_uncertain():
    truth = (Interval.from_mid("theta2", PI / 6, 0.05 * PI / 6), Interval.from_mid("E_ab", 2e7, 1e6))
    fixed = {"theta1": PI / 4}
    bounds = _bounds_by_sampling(truth, fixed, PendulumSpec(), 1.0, n=7)
    res = interval_inverse(bounds, free=("theta2", "E_ab"), fixed=fixed, settings=FAST)
    got = {iv.name: iv for iv in res.intervals}
    assert abs(got["theta2"].lower - truth[0].lower) < 2e-3 and abs(got["theta2"].upper - truth[0].upper) < 2e-3
    assert abs(got["E_ab"].lower / truth[1].lower - 1) < 0.01 and abs(got["E_ab"].upper / truth[1].upper - 1) < 0.01


def test_cli_simulate_identify_interval(tmp_path):
    traj = tmp_path / "traj.csv"
    assert main(["pendulum", "simulate", "--theta1", "0.9", "--theta2", "0.4", "--t-end", "0.8", "--out", str(traj),
                 "--dt", "1e-3", "--quiet"]) == 0
    frame = pd.read_csv(traj)
    assert list(frame.columns) == ["t", "x_B", "y_B"]
    assert np.allclose(frame["t"], np.arange(17) * 0.05)
    out = tmp_path / "fit.json"
    assert main(["pendulum", "identify", str(traj), "--free", "theta1,theta2", "--dt", "1e-3", "--json", str(out),
                 "--quiet"]) == 0
    doc = json.loads(out.read_text())
    for name, value in (("theta1", 0.9), ("theta2", 0.4)):
        p = doc["parameters"][name]
        assert abs(p["value"] - value) < 1e-6 and p["stderr"] >= 0 and len(p["ci95"]) == 2


def test_cli_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("t,x_B,y_B\n0,1,1\n0.05,1\n")
    assert main(["pendulum", "identify", str(bad), "--json", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "\n" not in err
    assert main(["pendulum", "simulate", "--theta1", "nan", "--theta2", "0.5", "--out", str(tmp_path / "o.csv")]) == 2
    assert main(["pendulum", "interval", str(bad), "--free", "theta1,theta9"]) == 2


def test_cli_interval_gives_the_same_answer_on_a_dask_cluster(tmp_path):
    """The surrogate's runs on local processes and on a Dask scheduler (an in-process LocalCluster) give the
    same coefficients, so the same swarm and the same intervals."""
    distributed = pytest.importorskip("distributed")
    ivs = (Interval.from_mid("theta1", 0.8, 0.03), Interval.from_mid("theta2", 0.5, 0.02))
    bounds = _bounds_by_sampling(ivs, {}, PendulumSpec(), 0.5, n=5)
    path = tmp_path / "bounds.csv"
    bounds.to_frame().to_csv(path, index=False)
    common = ["pendulum", "interval", str(path), "--free", "theta1,theta2", "--dt", "1e-3", "--population", "20",
              "--iterations", "60", "--quiet"]
    assert main([*common, "--json", str(tmp_path / "local.json")]) in (0, 1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        assert main([*common, "--scheduler", cluster.scheduler_address, "--json", str(tmp_path / "dask.json")]) in (0, 1)
    local = json.loads((tmp_path / "local.json").read_text())
    dask = json.loads((tmp_path / "dask.json").read_text())
    assert local["intervals"] == dask["intervals"] and local["fitness"] == dask["fitness"]
    for iv in ivs:
        got = local["intervals"][iv.name]
        # a loose check (0.5 s of record, bounds from a 5 x 5 grid of runs that misses interior extremes);
        # the accuracy tests are the ones above
        assert abs(got["lower"] - iv.lower) < 1e-2 and abs(got["upper"] - iv.upper) < 1e-2, (iv, got)
    assert main([*common, "--scheduler", "tcp://127.0.0.1:1", "--json", str(tmp_path / "x.json")]) == 2


def test_swarm_route_of_the_deterministic_inverse():
    """``method="pso"``: the improved swarm on a trajectory surrogate (runs serial here), standard errors from the
    Jacobian at its optimum; it lands where least squares does."""
    run = simulate(0.9, 0.6, t_end=0.6, dt_out=0.05, settings=FAST)
    with runner(serial=True) as r:
        fit = identify_trajectory(run.t, run.x_b, run.y_b, method="pso", runner=r, settings=FAST)
    assert fit.method == "pso" and fit.history.size > 10
    assert abs(fit.estimate("theta1").value - 0.9) < 1e-3 and abs(fit.estimate("theta2").value - 0.6) < 1e-3
    assert all(math.isfinite(p.stderr) for p in fit.parameters)
