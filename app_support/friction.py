"""Helpers of the Friction & hysteresis page: simulation settings, jobs, result tables and downloads.

The long computations (simulating the axis, the staged LuGre identification, the stick-slip runs, the
Bouc-Wen fit) are core functions run as jobs (:func:`app_support.jobs.run`); this module builds their
arguments, keeps their results in :func:`app_support.state.friction` and turns results into tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from nlid_core.errors import DataValidationError
from nlid_core.estimate import FitResult
from nlid_core.friction.experiments import DEFAULT_MASS, DEFAULT_TRUTH, friction_example
from nlid_core.friction.plateaus import PlateauDetection, find_plateaus
from nlid_core.friction.staged import FrictionOptions, FrictionResult, SteadyReplay, identify_friction, replay_steady
from nlid_core.friction.stickslip import StickSlipResult, stick_slip
from nlid_core.hysteresis import BENCHMARK_TERMS, benchmark_estimation_records
from nlid_core.jsonsafe import finite_or_none
from nlid_core.nonlinearity.hysteresis import HystereticLoops, hysteretic_loops
from nlid_core.record import Record

from . import jobs, state
from .cache import CACHE_DATA_TTL_S, record_key

__all__ = [
    "AxisSettings", "PARAMETER_RANGES", "simulate_axis", "identify", "stick_slip_comparison", "bouc_wen_records",
    "fit_bouc_wen", "loops", "plateau_table", "stage_table", "parameter_table", "static_table", "truth_table",
    "result_json", "check_steady", "check_presliding",
]

#: Ranges offered for the simulated axis's true parameters: (low, high, step, format), defaults from
#: :data:`nlid_core.friction.experiments.DEFAULT_TRUTH`.
PARAMETER_RANGES: Mapping[str, tuple[float, float, float, str]] = {
    "Fc": (0.2, 5.0, 0.1, "%.3g"), "Fs": (0.3, 8.0, 0.1, "%.3g"), "vs": (2e-4, 1e-2, 1e-4, "%.2g"),
    "sigma0": (1e4, 1e6, 1e4, "%.3g"), "sigma1": (30.0, 3000.0, 10.0, "%.4g"), "sigma2": (0.0, 5.0, 0.05, "%.3g"),
}
UNITS = {"Fc": "N", "Fs": "N", "vs": "m/s", "sigma0": "N/m", "sigma1": "N·s/m", "sigma2": "N·s/m", "m0": "kg"}


@dataclass(frozen=True, kw_only=True)
class AxisSettings:
    """What the page's "simulate an axis" form asks for."""

    truth: Mapping[str, float]
    mass: float = DEFAULT_MASS
    noise_scale: float = 1.0
    seed: int = 11
    dwell_s: float = 0.5
    presliding_s: float = 2.0


def _noise(example: str, scale: float, truth: Mapping[str, float]) -> dict[str, float]:
    """The generators' default noise levels times ``scale``."""
    if example == "friction-staircase":
        return {"x": 1e-6 * scale, "v": 1e-5 * scale, "f": 0.01 * truth["Fc"] * scale}
    return {"x": 1e-8 * scale, "f": 5e-3 * scale}


def _experiment(name: str, overrides: Mapping[str, object], seed: int | None) -> tuple[Record, dict[str, float]]:
    """The record and the truth of a friction example (run in a job: a FrictionExperiment holds mapping
    proxies, which do not pickle)."""
    ex = friction_example(name, overrides=overrides, seed=seed)
    return ex.record, dict(ex.truth)


def simulate_axis(settings: AxisSettings) -> tuple[tuple[Record, dict[str, float]], tuple[Record, dict[str, float]]]:
    """Staircase and pre-sliding records (with the truth) of the simulated axis (two jobs with progress and
    Cancel)."""
    truth = dict(settings.truth)
    over = {**truth, "mass": settings.mass}
    steady = jobs.run("simulating the velocity staircase", _experiment, ("friction-staircase",), {
        "overrides": {**over, "dwell_s": settings.dwell_s,
                      "noise": _noise("friction-staircase", settings.noise_scale, truth)},
        "seed": settings.seed}, key=state.key_for(state.FRICTION_SIMULATE_JOB, "steady"))
    pre = jobs.run("simulating the pre-sliding chirp", _experiment, ("friction-presliding",), {
        "overrides": {**over, "duration_s": settings.presliding_s,
                      "noise": _noise("friction-presliding", settings.noise_scale, truth)},
        "seed": settings.seed + 1}, key=state.key_for(state.FRICTION_SIMULATE_JOB, "presliding"))
    return steady, pre


@st.cache_data(max_entries=8, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def _plateaus(key: str, mass: float | None, _rec: Record) -> PlateauDetection:
    return find_plateaus(_rec, mass=mass, min_duration_s=0.2)


def plateaus(rec: Record, mass: float | None) -> PlateauDetection:
    """Plateau candidates of a staircase record, judged (cached per record content and mass)."""
    return _plateaus(record_key(rec), mass, rec)


def teaching_experiment(name: str) -> dict[str, object]:
    """A friction example of the registry for the Teaching mode: its record and truth, the plateaus of a
    staircase, and for the stick-slip oscillator the LuGre (truth) and static Stribeck limit cycles (jobs)."""
    rec, truth = jobs.run(f"simulating {name}", _experiment, (name, {}, None),
                          key=state.key_for(state.TEACH_FRICTION_JOB, "simulate"))
    out: dict[str, object] = {"name": name, "record": rec, "truth": truth}
    if rec.v is not None and name == "friction-staircase":
        out["plateaus"] = find_plateaus(rec, mass=truth["m0"])
    if name == "stick-slip":
        params = {k: v for k, v in truth.items() if k != "m0"}
        out["stick_slip"] = {label: jobs.run(f"stick-slip: {label}", stick_slip, (model, params), {"mass": truth["m0"]},
                                             key=state.key_for(state.TEACH_FRICTION_JOB, model))
                             for label, model in (("LuGre (truth)", "lugre"), ("static Stribeck", "stribeck"))}
    return out


def check_steady(rec: Record) -> Record:
    """``rec`` when it can be a staircase record (one DOF with a measured velocity); else DataValidationError."""
    if rec.n_dof != 1:
        raise DataValidationError(f"the staircase record `{rec.name}` has {rec.n_dof} DOFs; it needs one (t, f, x, v)")
    if rec.v is None or "v" in rec.derived:
        raise DataValidationError(f"the staircase record `{rec.name}` has no measured velocity `v`: plateaus are "
                                  "found on the measured velocity (columns t, f, x, v)")
    return rec


def check_presliding(rec: Record) -> Record:
    """``rec`` when it can be a pre-sliding record (one DOF, t, f, x); else DataValidationError."""
    if rec.n_dof != 1:
        raise DataValidationError(f"the pre-sliding record `{rec.name}` has {rec.n_dof} DOFs; it needs one (t, f, x)")
    return rec


def identify(steady: Record, presliding: Record, *, mass: float | None, polish: bool) -> FrictionResult:
    """The staged LuGre identification as a job (progress bar and Cancel)."""
    options = FrictionOptions(fixed={"m0": mass} if mass else {}, polish=polish, min_duration_s=0.2)
    return jobs.run("friction identification", identify_friction, ([steady], [presliding], options),  # type: ignore[no-any-return]
                    key=state.FRICTION_IDENTIFY_JOB, progress_arg="progress")


@st.cache_data(max_entries=4, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def _replay(_result: FrictionResult, result_key: str, _steady: Record) -> SteadyReplay:
    return replay_steady(_result, _steady)


def replay(result: FrictionResult, steady: Record) -> SteadyReplay:
    """The identified friction along the staircase's measured motion (cached per result)."""
    key = json.dumps([result.values, steady.name, steady.n], sort_keys=True)
    return _replay(result, key, steady)


def stick_slip_comparison(result: FrictionResult, truth: Mapping[str, float] | None,
                          mass: float) -> dict[str, StickSlipResult]:
    """Stick-slip limit cycles: the truth (when simulated), LuGre and the static Stribeck curve identified."""
    values = {k: v for k, v in result.values.items() if k != "m0"}
    runs: dict[str, StickSlipResult] = {}
    todo = ([("truth (simulated)", "lugre", dict(truth))] if truth else []) + [
        ("LuGre (identified)", "lugre", values), ("static Stribeck (identified)", "stribeck", values)]
    for i, (label, model, params) in enumerate(todo):
        runs[label] = jobs.run(f"stick-slip: {label}", stick_slip, (model, params), {"mass": mass},
                               key=state.key_for(state.FRICTION_STICK_SLIP_JOB, i))
    return runs


def bouc_wen_records(seed: int) -> Record:
    """A benchmark-like Bouc-Wen estimation record (multisine 5-150 Hz at 50 N rms, one transient and one
    steady period, output noise), as a job."""
    recs = jobs.run("simulating the Bouc-Wen benchmark", benchmark_estimation_records, (),
                    {"periods": 1, "transient_periods": 1, "seed": seed},
                    key=state.key_for(state.FRICTION_BW_JOB, "simulate"))
    return recs[0]  # type: ignore[no-any-return]


def fit_bouc_wen(rec: Record) -> FitResult:
    """``identify(rec, "m0,c1,k1,bouc_wen")`` as a job."""
    from nlid_core.estimate import identify as identify_terms

    return jobs.run("Bouc-Wen identification", identify_terms, (rec, BENCHMARK_TERMS), key=state.key_for(state.FRICTION_BW_JOB, "fit"),  # type: ignore[no-any-return]
                    progress_arg="progress")


@st.cache_data(max_entries=4, ttl=CACHE_DATA_TTL_S, show_spinner=False)
def _loops(key: str, _rec: Record, _fit: FitResult) -> HystereticLoops:
    return hysteretic_loops(_rec, _fit.model, _fit.parameters)


def loops(rec: Record, fit: FitResult) -> HystereticLoops:
    """Restoring-force loops of ``rec`` and of the fitted Bouc-Wen model (cached per record and fit)."""
    return _loops(record_key(rec) + json.dumps(fit.values, sort_keys=True), rec, fit)


# --------------------------------------------------------------------------- tables


def plateau_table(detections: tuple[PlateauDetection, ...]) -> pd.DataFrame:
    """Every plateau candidate of every staircase record, accepted or with its reason."""
    return pd.DataFrame([{
        "record": d.record, "from [s]": p.t_start_s, "to [s]": p.t_stop_s, "velocity [m/s]": p.velocity,
        "± [m/s]": p.velocity_se, "friction [N]": p.force, "± [N]": p.force_se, "scatter": p.scatter,
        "accepted": p.accepted, "reason": p.reason} for d in detections for p in d.plateaus])


def stage_table(result: FrictionResult) -> pd.DataFrame:
    """What each stage estimated, what it held fixed (and from where), and why."""
    return pd.DataFrame([{
        "stage": s.name, "records": ", ".join(s.records), "estimated": ", ".join(s.estimated),
        "fixed": ", ".join(f"{k} = {v:.4g} ({src})" for k, (v, src) in s.fixed.items()),
        "ok": s.success, "evaluations": s.nfev, "seconds": round(s.time_s, 2), "message": s.message, "why": s.why}
        for s in result.stages])


def parameter_table(result: FrictionResult) -> pd.DataFrame:
    """Estimates with standard errors, intervals and flags."""
    conf = int(round(100 * result.confidence))
    return pd.DataFrame([{
        "parameter": e.name, "value": e.value, "± stderr": finite_or_none(e.stderr) if e.vary else None,
        f"{conf} % low": finite_or_none(e.ci[0]) if e.vary else None, f"{conf} % high": finite_or_none(e.ci[1]) if e.vary else None,
        "unit": e.unit, "flags": ", ".join(e.flags), "notes": "; ".join(e.notes)} for e in result.estimates])


def static_table(result: FrictionResult) -> pd.DataFrame:
    """The steady curves fitted to the plateau points: parameters, rms error, χ²-based AIC."""
    rows = []
    for name, cf in result.curves.items():
        rows.append({"curve": name, "dynamic model": name == "stribeck", "ok": cf.success,
                     "parameters": ", ".join(f"{n} = {v:.4g} {u}" for n, v, u in zip(cf.names, cf.values, cf.units)),
                     "rms [N]": finite_or_none(cf.rms_n), "AIC": finite_or_none(cf.aic), "dof": cf.dof})
    return pd.DataFrame(rows)


def truth_table(result: FrictionResult, truth: Mapping[str, float]) -> pd.DataFrame:
    """Identified against true values (simulated records only)."""
    return pd.DataFrame([{"parameter": e.name, "true": truth.get(e.name), "identified": e.value,
                          "error [%]": 100 * (e.value / truth[e.name] - 1) if truth.get(e.name) else None,
                          "within interval": (e.ci[0] <= truth[e.name] <= e.ci[1]) if e.vary and e.name in truth
                          else None} for e in result.estimates])


def stick_slip_table(runs: Mapping[str, StickSlipResult]) -> pd.DataFrame:
    """Period, amplitude and sticking of each stick-slip run."""
    return pd.DataFrame([{"run": k, "limit cycle": r.limit_cycle, "sticks": r.sticks, "period [s]": r.period_s,
                          "peak-to-peak [mm]": 1e3 * r.amplitude_m if r.amplitude_m is not None else None,
                          "breakaway [N]": r.breakaway_force_n, "message": r.message} for k, r in runs.items()])


def result_json(result: FrictionResult) -> str:
    """The result as JSON text (``FrictionResult.to_dict``)."""
    return json.dumps(result.to_dict(), indent=2, default=_jsonable)


def _jsonable(obj: object) -> object:
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    return str(obj)


def default_truth() -> dict[str, float]:
    """The experiments' default truth (SI)."""
    return dict(DEFAULT_TRUTH)
