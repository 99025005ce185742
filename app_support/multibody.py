"""Helpers of the Multibody & interval page: the pendulum model from the form, the forward runs, the
deterministic and interval inverse problems as jobs, the paper's reference tables and the result tables.

The computations are core functions of :mod:`nlid_core.multibody` run as jobs (:func:`app_support.jobs.run`,
progress bar and *Cancel*); this module builds their arguments, adapts the core's ``progress(fraction, text)``
to the jobs' ``progress(stage, fraction, message)``, and turns results into tables, CSV and JSON. Inside a
job the model runs are made one after another in the job's worker (a job's worker is a daemonic process and
may not start processes of its own; it is also the dashboard's fair share of the machine: at most one
worker per core for all sessions).

The paper's preset (Guo & Jin, J. Vibration Engineering 38(5), 2025, 974-983, with the in-plane section
height of 0.4 m that reproduces its appendix table; see the pendulum data's README) is the form's default.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.multibody.files import TRAJECTORY_COLUMNS, read_bounds, read_trajectory
from nlid_core.multibody.interval import Interval, IntervalBounds, compare_swarms, interval_forward
from nlid_core.multibody.inverse import UNITS, identify_trajectory
from nlid_core.runners import runner
from nlid_core.multibody.pendulum import PARAMETERS, PendulumRun, PendulumSpec, SolverSettings, simulate_rigid
from nlid_core.multibody.pendulum import simulate as simulate_flexible

from . import jobs, state

__all__ = [
    "ANGLES", "PAPER_THETA", "PARAMETERS", "UNITS", "ModelForm",
    "IntervalForm", "InverseForm", "bounds_csv", "fit_json", "fit_table", "forward",
    "forward_summary", "identify", "inverse", "inverse_json", "inverse_table", "is_paper_case",
    "is_paper_interval", "paper_bounds", "model_of", "paper_table",
    "read_bounds_upload", "read_trajectory_upload", "run_csv", "simulate", "trajectory_of",
]

ANGLES: tuple[str, ...] = ("theta1", "theta2")
#: The paper's release angles (rad): θ1 = π/4, θ2 = π/6 below the horizontal.
PAPER_THETA: tuple[float, float] = (math.pi / 4, math.pi / 6)
#: The paper's tables beside the checkout (``NLID_SHARED_DATA`` overrides the data folder).
TABLES = {"A1": "tableA1_case1.csv", "A2": "tableA2_case1_interval.csv"}
_REPO = Path(__file__).resolve().parents[1]
#: The core's defaults: the paper's preset (frozen, so sharing them is safe).
_PRESET, _SOLVER = PendulumSpec(), SolverSettings()


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True, kw_only=True)
class ModelForm:
    """What the page's model form asks for (SI units: m, kg/m³, Pa, s); the defaults are the core's preset."""

    length_oa: float = _PRESET.length_oa
    length_ab: float = _PRESET.length_ab
    height: float = _PRESET.height
    width: float = _PRESET.width
    density: float = _PRESET.density
    e_oa: float = _PRESET.e_oa
    e_ab: float = _PRESET.e_ab
    nu: float = _PRESET.nu
    n_oa: int = _PRESET.n_oa
    n_ab: int = _PRESET.n_ab
    dt: float = _SOLVER.dt
    rho_inf: float = _SOLVER.rho_inf


def model_of(form: ModelForm) -> tuple[PendulumSpec, SolverSettings]:
    """The pendulum and the integrator of ``form``; ModelSpecError (the core's message) when they are not valid."""
    spec = PendulumSpec(length_oa=form.length_oa, length_ab=form.length_ab, height=form.height, width=form.width,
                        density=form.density, e_oa=form.e_oa, e_ab=form.e_ab, nu=form.nu, n_oa=int(form.n_oa),
                        n_ab=int(form.n_ab))
    settings = SolverSettings(dt=form.dt, rho_inf=form.rho_inf)
    return spec, settings


def is_paper_case(spec: PendulumSpec, theta1: float, theta2: float) -> bool:
    """True at the paper's preset and release angles, where its Table A1 applies."""
    return spec == _PRESET and abs(theta1 - PAPER_THETA[0]) < 1e-9 and abs(theta2 - PAPER_THETA[1]) < 1e-9


def _data_dir() -> Path:
    env = os.environ.get("NLID_SHARED_DATA")
    return (Path(env) if env else _REPO.parent / "shared" / "data") / "pendulum"


def paper_table(which: str) -> pd.DataFrame | None:
    """The paper's Table A1 (t, x_B, y_B) or A2 (t, x_B_min, x_B_max, y_B_min, y_B_max) when the pendulum data
    is available beside the checkout (or under ``NLID_SHARED_DATA``); None otherwise."""
    path = _data_dir() / TABLES[which]
    if not path.is_file():
        return None
    if which == "A1":
        return _trajectory_frame(*read_trajectory(path))
    return read_bounds(path).to_frame()


def paper_bounds() -> IntervalBounds | None:
    """The paper's Table A2 as bounds (None when the data is not available)."""
    path = _data_dir() / TABLES["A2"]
    return read_bounds(path) if path.is_file() else None


def is_paper_interval(form: IntervalForm, spec: PendulumSpec) -> bool:
    """True for the paper's interval case, where its Table A2 applies: the preset model, θ1 = π/4·(1 ± 0.05),
    θ2 = π/6·(1 ± 0.05), nothing else uncertain, from 0 s every 0.05 s."""
    want = {"theta1": (PAPER_THETA[0], 0.05 * PAPER_THETA[0]), "theta2": (PAPER_THETA[1], 0.05 * PAPER_THETA[1])}
    radii = dict(form.radii)
    got = {n: (m, radii.get(n, math.nan)) for n, m in form.mids}
    close = set(got) == set(want) and all(abs(got[n][0] - want[n][0]) < 1e-6 and abs(got[n][1] - want[n][1]) < 1e-6
                                          for n in want)
    return (spec == _PRESET and close and abs(form.dt_out - 0.05) < 1e-12
            and abs(form.t_end - 2.0) < 1e-9)


def _trajectory_frame(t: Any, x_b: Any, y_b: Any) -> pd.DataFrame:
    return pd.DataFrame(dict(zip(TRAJECTORY_COLUMNS, (t, x_b, y_b))))


def _serial_runner() -> Any:
    """A runner that makes the model runs one after another in this process (see the module notes)."""
    return runner(serial=True)


# --------------------------------------------------------------------------- simulate
def _simulate_pair(theta1: float, theta2: float, spec: PendulumSpec, settings: SolverSettings, t_end: float,
                   dt_out: float, progress: Callable[[str, float, str], None] | None = None
                   ) -> tuple[PendulumRun, PendulumRun]:
    """The flexible (ANCF) and the rigid model from the same release angles, both with node positions."""
    if progress is not None:
        progress("simulate", 0.0, "flexible model (ANCF, generalized-α)")
    flex = simulate_flexible(theta1, theta2, spec=spec, t_end=t_end, dt_out=dt_out, settings=settings, nodes=True)
    if progress is not None:
        progress("simulate", 0.95, "rigid model")
    rigid = simulate_rigid(theta1, theta2, spec=spec, t_end=t_end, dt_out=dt_out, nodes=True)
    return flex, rigid


def simulate(spec: PendulumSpec, settings: SolverSettings, theta1: float, theta2: float, t_end: float,
             dt_out: float) -> tuple[PendulumRun, PendulumRun]:
    """Flexible and rigid runs as one job (progress and Cancel)."""
    return jobs.run("simulating the pendulum", _simulate_pair,  # type: ignore[no-any-return]
                    (theta1, theta2, spec, settings, t_end, dt_out), key=state.MB_SIMULATE_JOB,
                    progress_arg="progress")


def run_csv(run: PendulumRun) -> str:
    """A run's tip trajectory as CSV: t, x_B, y_B."""
    return str(run.to_frame().to_csv(index=False))


# --------------------------------------------------------------------------- uploads
def read_trajectory_upload(data: bytes, name: str) -> pd.DataFrame:
    """An uploaded trajectory CSV (t, x_B, y_B; rows uniformly spaced from 0) as a table; DataValidationError
    naming the file and the problem."""
    try:
        return _trajectory_frame(*read_trajectory(data))
    except DataValidationError as exc:
        raise DataValidationError(f"file `{name}`: {exc}") from None


def read_bounds_upload(data: bytes, name: str) -> IntervalBounds:
    """An uploaded bounds CSV (t, x_B_min, x_B_max, y_B_min, y_B_max); DataValidationError naming the file."""
    try:
        return read_bounds(data)
    except DataValidationError as exc:
        raise DataValidationError(f"file `{name}`: {exc}") from None


def trajectory_of(frame: pd.DataFrame) -> tuple[Any, Any, Any]:
    """The t, x_B, y_B columns of a trajectory table as arrays."""
    return frame["t"].to_numpy(float), frame["x_B"].to_numpy(float), frame["y_B"].to_numpy(float)


def bounds_csv(bounds: IntervalBounds) -> str:
    """Bounds as CSV: t, x_B_min, x_B_max, y_B_min, y_B_max."""
    return str(bounds.to_frame().to_csv(index=False))


# --------------------------------------------------------------------------- deterministic inverse
def _identify(t: Any, x_b: Any, y_b: Any, free: tuple[str, ...], fixed: dict[str, float], spec: PendulumSpec,
              settings: SolverSettings, method: str, seed: int,
              progress: Callable[[str, float, str], None] | None = None) -> Any:
    with _serial_runner() as serial:
        return identify_trajectory(t, x_b, y_b, free=free, fixed=fixed, spec=spec, settings=settings,
                                   method=method, runner=serial, seed=seed, progress=progress)


def identify(frame: pd.DataFrame, free: Sequence[str], fixed: Mapping[str, float], spec: PendulumSpec,
             settings: SolverSettings, method: str, seed: int = 0) -> Any:
    """:func:`~nlid_core.multibody.inverse.identify_trajectory` on a trajectory table, as a job."""
    t, x, y = trajectory_of(frame)
    return jobs.run(f"trajectory fit ({method.upper()})", _identify,
                    (t, x, y, tuple(free), dict(fixed), spec, settings, method, int(seed)),
                    key=state.MB_IDENTIFY_JOB, progress_arg="progress")


def _num(v: float) -> float | None:
    return float(v) if math.isfinite(float(v)) else None


def fit_table(fit: Any, truth: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Estimates: value, standard error, 95 % interval, unit (and the truth when known)."""
    rows = []
    for p in fit.parameters:
        row: dict[str, object] = {"parameter": p.name, "value": p.value, "± stderr": _num(p.stderr),
                                  "95 % low": _num(p.ci[0]), "95 % high": _num(p.ci[1]), "unit": p.unit}
        if p.unit == "rad":
            row["value [deg]"] = math.degrees(p.value)
        if truth is not None and p.name in truth:
            row["truth"] = truth[p.name]
        rows.append(row)
    return pd.DataFrame(rows)


def fit_json(fit: Any) -> str:
    """The trajectory fit as JSON (estimates, held values, misfit, runs, time)."""
    doc = fit.to_dict() if hasattr(fit, "to_dict") else {
        "success": fit.success, "message": fit.message, "method": fit.method, "rms_m": _num(fit.rms_m),
        "parameters": {p.name: {"value": p.value, "stderr": _num(p.stderr), "ci95": [_num(c) for c in p.ci],
                                "unit": p.unit} for p in fit.parameters},
        "forward_runs": fit.forward_runs, "elapsed_s": fit.elapsed_s}
    return json.dumps(doc, indent=2, default=_json_default)


# --------------------------------------------------------------------------- interval forward
@dataclass(frozen=True, kw_only=True)
class IntervalForm:
    """What the interval forward form asks for: intervals as midpoint ± radius, surrogate order and kind."""

    mids: tuple[tuple[str, float], ...]
    radii: tuple[tuple[str, float], ...]
    order: int = 4
    kind: str = "total"
    n_check: int = 6
    t_end: float = 2.0
    dt_out: float = 0.05


def _intervals(form: IntervalForm) -> tuple[Interval, ...]:
    radii = dict(form.radii)
    out = []
    for name, mid in form.mids:
        r = radii.get(name, 0.0)
        if not (math.isfinite(mid) and math.isfinite(r)) or r <= 0:
            raise ModelSpecError(f"the interval of `{name}` needs a positive radius, got {r!r}")
        out.append(Interval.from_mid(name, mid, r))
    return tuple(out)


def _forward(form: IntervalForm, fixed: dict[str, float], spec: PendulumSpec, settings: SolverSettings,
             progress: Callable[[str, float, str], None] | None = None) -> Any:
    with _serial_runner() as serial:
        return interval_forward(_intervals(form), fixed=fixed, spec=spec, settings=settings, t_end=form.t_end,
                                dt_out=form.dt_out, order=form.order, kind=form.kind, n_check=form.n_check,
                                runner=serial, progress=progress)


def forward(form: IntervalForm, fixed: Mapping[str, float], spec: PendulumSpec, settings: SolverSettings) -> Any:
    """:func:`~nlid_core.multibody.interval.interval_forward` as a job; ModelSpecError for a bad interval."""
    _intervals(form)  # a bad interval is refused here, before a worker starts
    return jobs.run("interval forward analysis", _forward, (form, dict(fixed), spec, settings),
                    key=state.MB_FORWARD_JOB, progress_arg="progress")


def forward_summary(analysis: Any) -> pd.DataFrame:
    """The forward analysis in one row per interval, then the surrogate's figures of merit."""
    rows: list[dict[str, object]] = [
        {"item": f"{iv.name} [{UNITS.get(iv.name, '')}]", "value": f"{iv.lower:.6g} … {iv.upper:.6g}"}
        for iv in analysis.intervals]
    sur = analysis.surrogate
    rows += [{"item": "surrogate", "value": f"Chebyshev, order {sur.order} ({sur.kind}), {len(sur.indices)} terms"},
             {"item": "held-out error (rms / max)",
              "value": f"{1e3 * analysis.holdout_rms:.3g} mm / {1e3 * analysis.holdout_max:.3g} mm on"
                       f" {len(analysis.samples)} true runs"},
             {"item": "forward runs", "value": str(analysis.forward_runs)},
             {"item": "time", "value": f"{analysis.elapsed_s:.1f} s"}]
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- interval inverse
@dataclass(frozen=True, kw_only=True)
class InverseForm:
    """What the interval inverse form asks for."""

    free: tuple[str, ...] = ANGLES
    fixed: tuple[tuple[str, float], ...] = ()
    order: int = 4
    kind: str = "total"
    population: int = 40
    iterations: int = 100
    seed: int = 0


def _inverse(bounds: Any, form: InverseForm, spec: PendulumSpec, settings: SolverSettings,
             progress: Callable[[str, float, str], None] | None = None) -> Any:
    with _serial_runner() as serial:
        return compare_swarms(bounds, free=form.free, fixed=dict(form.fixed), spec=spec, settings=settings,
                              order=form.order, kind=form.kind, population=form.population,
                              iterations=form.iterations, seed=form.seed, runner=serial,
                              progress=progress)


def inverse(bounds: Any, form: InverseForm, spec: PendulumSpec, settings: SolverSettings) -> Any:
    """:func:`~nlid_core.multibody.interval.compare_swarms` (PSO and IPSO on one surrogate) as one job."""
    if not form.free:
        raise ModelSpecError("choose at least one parameter whose interval is estimated")
    return jobs.run("interval inverse (PSO and IPSO)", _inverse, (bounds, form, spec, settings),
                    key=state.MB_INVERSE_JOB, progress_arg="progress")


def inverse_table(results: Sequence[Any]) -> pd.DataFrame:
    """PSO and IPSO side by side (one column each, values as text): each interval (lower … upper, midpoint ±
    radius), the fitness, the forward runs, the swarm's evaluations and the time."""
    cols: dict[str, dict[str, str]] = {}
    for res in results:
        col: dict[str, str] = {}
        for iv in res.intervals:
            u = UNITS.get(iv.name, "")
            col[f"{iv.name} [{u}]"] = f"{iv.lower:.6g} … {iv.upper:.6g}"
            col[f"{iv.name} midpoint ± radius [{u}]"] = f"{iv.mid:.6g} ± {iv.radius:.4g}"
        col["fitness [m²]"] = f"{res.fitness:.4g}"
        col["forward runs"] = f"{int(res.forward_runs)}"
        col["swarm evaluations"] = f"{int(getattr(res.swarm, 'evaluations', 0))}"
        col["time [s]"] = f"{float(res.elapsed_s):.1f}"
        col["status"] = "ok" if res.success else f"failed: {res.message}"
        cols[str(res.method).upper()] = col
    frame = pd.DataFrame(cols)
    frame.index.name = "quantity"
    return frame.reset_index()


def inverse_json(results: Sequence[Any]) -> str:
    """The interval inverse results as JSON, per method (intervals, fitness, runs, time, history, domain)."""
    return json.dumps({str(r.method): r.to_dict() for r in results}, indent=2, default=_json_default)


def _json_default(value: Any) -> Any:
    try:
        return float(value)
    except (TypeError, ValueError):
        return str(value)
