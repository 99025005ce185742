"""Helpers of the Multi-DOF page: the model from a preset or a model file, records (simulated or mapped from the
Data page), the FRF evidence, the stage plan as a table, stage runs as jobs, and the result tables.

The long computations (simulating the experiments, each stage, the one-shot fit, a validation run) are core
functions run as jobs (:func:`app_support.jobs.run`); this module builds their arguments, keeps their results in
:func:`app_support.state.mdof` and turns results into tables. It computes nothing of its own but the start
values of a simulated study (the true values perturbed by a seeded relative error, so that the identification
has something to do) and relative errors against a known truth.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from nlid_core.errors import DataValidationError, ModelSpecError
from nlid_core.jsonsafe import finite_or_none
from nlid_core.mdof.data import MdofRecord, from_record, to_frame
from nlid_core.mdof.evidence import MdofEvidence, record_evidence
from nlid_core.mdof.experiments import experiment_set
from nlid_core.mdof.fit import MdofFit
from nlid_core.mdof.modelfile import MAX_MODEL_FILE_BYTES, dump_model, parse_model
from nlid_core.mdof.presets import chain, platform
from nlid_core.mdof.spec import MdofModel
from nlid_core.mdof.stages import (ROLLED_BACK, Stage, StagePlan, StageReport, StageStep, advance, default_plan, one_shot,
                                   parse_plan)
from nlid_core.mdof.validation import ChannelValidation, validate_record
from nlid_core.metrics import percent_cell
from nlid_core.params import ParameterSet
from nlid_core.record import Record
from nlid_core.terms.registry import REGISTRY, connection_terms

from . import jobs, state

__all__ = [
    "PLAN_COLUMNS", "PRESET_KINDS", "TERM_CHOICES", "PresetSettings", "SimulationSettings", "channel_table",
    "clear_results", "comparison_tables", "estimates_csv", "estimates_table", "evidence", "final_model_file",
    "final_parameters", "forget_stages", "frf_candidates", "held_table", "initial_state", "last_fit", "map_records",
    "model_key",
    "parameter_table", "plan_frame", "plan_from_frame", "preset_model", "read_model_file", "read_plan_file",
    "record_csv", "record_table", "run_next_stage", "run_one_shot", "simulate", "stage_summary", "staged_time",
    "start_values", "truth_of", "use_model", "validate",
]

#: Terms a connection or mount may carry: the registry's memoryless, non-inertial terms.
TERM_CHOICES: tuple[str, ...] = tuple(n for n, t in REGISTRY.items() if not t.states and not t.inertial)
#: Model sources of the page.
PRESET_KINDS: tuple[str, ...] = ("chain", "platform", "model file")
#: Columns of the plan editor; patterns are comma-separated shell wildcards.
PLAN_COLUMNS: tuple[str, ...] = ("name", "records", "free", "note")


# --------------------------------------------------------------------------- the model
@dataclass(frozen=True, kw_only=True)
class PresetSettings:
    """What the page's preset form asks for."""

    kind: str
    n: int = 3
    terms: tuple[str, ...] = field(default_factory=connection_terms)
    fixed_end: bool = False
    driven: tuple[int, ...] = (1,)
    identical: bool = False


def preset_model(settings: PresetSettings) -> MdofModel:
    """The chain or platform preset of ``settings``; ModelSpecError when the settings do not make a model."""
    if settings.kind == "chain":
        if not settings.terms:
            raise ModelSpecError("choose at least one term per connection")
        return chain(settings.n, terms=settings.terms, fixed_end=settings.fixed_end, driven=settings.driven)
    return platform(identical=settings.identical)


def read_model_file(data: bytes, name: str) -> MdofModel:
    """A model from an uploaded file's bytes (at most ``MAX_MODEL_FILE_BYTES``, UTF-8 TOML); ModelSpecError
    naming the file and what is wrong."""
    if len(data) > MAX_MODEL_FILE_BYTES:
        raise ModelSpecError(f"`{name}` has {len(data):,} bytes; a model file may have at most"
                             f" {MAX_MODEL_FILE_BYTES:,}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelSpecError(f"`{name}` is not UTF-8 text; a model file is TOML text") from None
    return parse_model(text, source=f"model file {name}")


def read_plan_file(data: bytes, name: str) -> StagePlan:
    """A stage plan from an uploaded TOML file's bytes (bounded like a model file); ModelSpecError naming the file."""
    if len(data) > MAX_MODEL_FILE_BYTES:
        raise ModelSpecError(f"`{name}` has {len(data):,} bytes; a plan file may have at most {MAX_MODEL_FILE_BYTES:,}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ModelSpecError(f"`{name}` is not UTF-8 text; a plan file is TOML text") from None
    return parse_plan(text, source=f"plan file {name}")


def single_dof_note(model: MdofModel) -> str:
    """For a model of one DOF that is the single-DOF model of some ``--terms`` (:mod:`nlid_core.mdof.single`): where
    else it is fitted with the single-DOF estimators; empty for any other model."""
    from nlid_core.mdof.single import single_dof_form

    form = single_dof_form(model)
    if isinstance(form, str):
        return ""
    return (f"One DOF joined to ground: this is the single-DOF model `{form.terms}` ({form.mapping_text()}). The"
            " stages here fit it like any model file; `identify --model` on dynamic records, and the Model and"
            " Identify pages with these terms, fit it with the single-DOF estimators (equation error, then output"
            " error).")


def model_key(model: MdofModel) -> str:
    """What identifies a model for the page: its model file text (structure and start values)."""
    return dump_model(model)


def forget_stages(store: dict[str, Any]) -> None:
    """Forget the stages run (and the validations made with their estimates): start again from the start values."""
    for k in ("reports", "params", "sources", "history", "validations"):
        store.pop(k, None)


def clear_results(store: dict[str, Any]) -> None:
    """Forget records and every result (the model or the records changed)."""
    for k in ("records", "truth", "start", "reports", "params", "sources", "history", "one_shot", "validations", "evidence"):
        store.pop(k, None)


def use_model(store: dict[str, Any], model: MdofModel) -> bool:
    """Make ``model`` the page's model; when it differs from the one the records were made for, forget the records
    and results and reset the plan. Returns True when something was forgotten."""
    key = model_key(model)
    if store.get("model_key") == key:
        store["model"] = model
        return False
    had = "records" in store or "reports" in store
    clear_results(store)
    version = int(store.get("plan_version", 0)) + 1
    store.update(model=model, model_key=key, plan=default_plan(model), plan_version=version)
    return had


def reset_plan(store: dict[str, Any]) -> None:
    """The default plan for the page's model and records: the last of several multi-input records and the test
    parts of a split (Data page) kept out of the stages, for validation."""
    names = [r.name for r in store.get("records") or ()]
    hold = [n for n in names if state.roles().get(n) == state.TEST_ROLE]
    store.update(plan=default_plan(store["model"], names, hold=hold),
                 plan_version=int(store.get("plan_version", 0)) + 1)


def fitted_records(store: dict[str, Any]) -> set[str]:
    """Records a stage that ran has used."""
    return {n for rep in store.get("reports", []) if rep.fit is not None for n in rep.records}


def parameter_table(model: MdofModel) -> pd.DataFrame:
    """Every model parameter: name, unit, start value, bounds, fixed, description."""
    return pd.DataFrame([{"parameter": p.name, "unit": p.unit, "start value": p.value, "description": p.description,
                          "fixed": not p.vary, "lower": finite_or_none(p.lower), "upper": finite_or_none(p.upper)}
                         for p in model.parameters()])


# --------------------------------------------------------------------------- records
@dataclass(frozen=True, kw_only=True)
class SimulationSettings:
    """What the page's "simulate experiments" form asks for."""

    level: float = 1.0
    noise_percent: float = 0.5
    fs: float = 500.0
    duration_s: float = 10.0
    seed: int = 1
    start_error_percent: float = 30.0


def simulate(model: MdofModel, settings: SimulationSettings) -> tuple[MdofRecord, ...]:
    """The standard experiment set (static, small, sweeps, multi) at the model's values, as a job."""
    return jobs.run("simulating the experiments", experiment_set, (model,), {  # type: ignore[no-any-return]
        "level": settings.level, "noise": settings.noise_percent / 100.0, "fs": settings.fs,
        "duration": settings.duration_s, "rng": settings.seed}, key=state.MDOF_SIMULATE_JOB, progress_arg="progress")


def truth_of(records: Sequence[MdofRecord]) -> dict[str, float] | None:
    """The true parameter values the records were simulated with (``meta["truth"]``), when they say."""
    for rec in records:
        truth = rec.meta.get("truth")
        if isinstance(truth, Mapping):
            return {str(k): float(v) for k, v in truth.items()}
    return None


def start_values(model: MdofModel, truth: Mapping[str, float] | None, error_percent: float, seed: int) -> ParameterSet:
    """Start values of the identification: the model's values, or for a simulated study the true values each
    multiplied by ``1 + e·U(−1, 1)`` with ``e = error_percent / 100`` (seeded, clipped into the bounds); parameters
    fixed in the model stay at their values."""
    params = model.parameters()
    if truth is None:
        return params
    rng = np.random.default_rng(seed)
    e = float(error_percent) / 100.0
    values = {}
    for p in params:
        base = float(truth.get(p.name, p.value))
        factor = 1.0 + e * float(rng.uniform(-1.0, 1.0))
        values[p.name] = base * factor if p.vary else p.value
    return params.with_values(values, clip=True)


def map_records(model: MdofModel, recs: Mapping[str, Record], choices: Mapping[str, tuple[bool, Sequence[str]]]
                ) -> tuple[list[MdofRecord], list[str]]:
    """The model's view of loaded records (``choices``: name → (static, held DOFs)); the records that map and a
    message for each that does not."""
    out, problems = [], []
    for name, (static, held) in choices.items():
        try:
            out.append(from_record(model, recs[name], held=tuple(held), static=static))
        except (DataValidationError, ModelSpecError) as exc:
            problems.append(f"{name}: {exc}")
    return out, problems


def record_table(model: MdofModel, records: Sequence[MdofRecord]) -> pd.DataFrame:
    """One row per record: kind, samples, rate, held DOFs and each output's range (min … max) with its unit."""
    rows = []
    for rec in records:
        row: dict[str, object] = {"record": rec.name, "kind": "static" if rec.static else "dynamic",
                                  "samples": rec.n, "rate [Hz]": None if rec.static else round(1.0 / rec.dt, 6),
                                  "held": ", ".join(rec.held) or "—"}
        for j, dof in enumerate(rec.output_names):
            lo, hi = float(rec.y[:, j].min()), float(rec.y[:, j].max())
            row[f"{dof} [{model.dof_unit(dof)}]"] = f"{lo:.2g} … {hi:.2g}"
        rows.append(row)
    return pd.DataFrame(rows)


def record_csv(model: MdofModel, rec: MdofRecord) -> str:
    """The record as CSV with the model file's column names."""
    return str(to_frame(model, rec).to_csv(index=False))


def frf_candidates(records: Sequence[MdofRecord]) -> tuple[list[str], list[str]]:
    """Records the FRF matrix can pool (dynamic, sampled like the first dynamic one) and the default choice among
    them: the longest records in which the rig held nothing (a record with held DOFs measures another system)."""
    dyn = [r for r in records if not r.static]
    if not dyn:
        return [], []
    dt = dyn[0].dt
    same = [r for r in dyn if abs(r.dt - dt) <= 1e-9 * dt]
    free = [r for r in same if not r.held] or same
    longest = max(r.n for r in free)
    return [r.name for r in same], [r.name for r in free if r.n == longest]


def evidence(model: MdofModel, records: Sequence[MdofRecord]) -> MdofEvidence:
    """FRF matrix, coupling and level drifts of ``records`` (:func:`~nlid_core.mdof.evidence.record_evidence`).

    Raises DataValidationError when there is no record, or they are too short or at different rates (the core's
    message).
    """
    if not records:
        raise DataValidationError("choose at least one dynamic record for the FRF matrix")
    return record_evidence(model, records)


# --------------------------------------------------------------------------- the plan
def _patterns(text: object) -> tuple[str, ...]:
    if not isinstance(text, str):
        return ()
    return tuple(p.strip() for p in text.split(",") if p.strip())


def plan_frame(plan: StagePlan) -> pd.DataFrame:
    """The plan as an editable table (patterns comma-separated)."""
    return pd.DataFrame([{"name": s.name, "records": ", ".join(s.records), "free": ", ".join(s.free), "note": s.note}
                         for s in plan.stages], columns=list(PLAN_COLUMNS))


def plan_from_frame(frame: pd.DataFrame) -> StagePlan:
    """The plan of an edited table (rows without a name are skipped); ModelSpecError naming the bad row."""
    stages = []
    for k, row in enumerate(frame.to_dict("records")):
        name = row.get("name")
        if not isinstance(name, str) or not name.strip():
            continue
        recs, free = _patterns(row.get("records")), _patterns(row.get("free"))
        if not recs or not free:
            raise ModelSpecError(f"stage `{name.strip()}` (row {k + 1}) needs record patterns and free parameter"
                                 " patterns, comma-separated (e.g. `sweep*` and `k3*, c2*`)")
        note = row.get("note")
        stages.append(Stage(name=name.strip(), records=recs, free=free, note=note if isinstance(note, str) else ""))
    if not stages:
        raise ModelSpecError("the plan has no stage: give each row a name, record patterns and free patterns")
    return StagePlan(stages=tuple(stages))


# --------------------------------------------------------------------------- running the stages
def run_next_stage(store: dict[str, Any], plan: StagePlan) -> StageReport:
    """Run the plan's next stage (after those in ``store["reports"]``) as a job, from the values the earlier
    stages left (an earlier stage whose values its records cannot simulate is undone, and its report says so), and
    keep its report, the values after it and where each value came from."""
    reports: list[StageReport] = store.setdefault("reports", [])
    params: list[ParameterSet] = store.setdefault("params", [store["start"]])
    history: list[tuple[ParameterSet, dict[str, str]]] = store.setdefault(
        "history", [(store["start"], {p.name: "start" for p in store["start"]})])
    k = len(reports)
    stage = plan.stages[k]
    step: StageStep = jobs.run(f"stage {k + 1}: {stage.name}", advance, (store["model"], store["records"], stage,
                                                                        list(history)),
                               {"last": k == len(plan.stages) - 1},
                               key=state.key_for(state.MDOF_STAGE_JOB, k + 1), progress_arg="progress")
    if step.rolled_back:
        history.pop()
        back = next(i for i in range(len(reports) - 1, -1, -1) if reports[i].fit is not None)
        reports[back] = replace(reports[back], trust=ROLLED_BACK)
    report = step.report
    if report.fit is not None and report.fit.success:
        history.append((step.parameters, step.sources))
    store["sources"] = dict(history[-1][1])
    reports.append(report)
    params.append(history[-1][0])
    store.pop("validations", None)
    return report


def run_one_shot(store: dict[str, Any]) -> MdofFit:
    """Every free parameter on every record at once from the same start values, as a job."""
    fit: MdofFit = jobs.run("one-shot fit", one_shot, (store["model"], store["records"], store["start"]),
                            key=state.MDOF_ONE_SHOT_JOB, progress_arg="progress")
    return fit


def _error_percent(value: float, truth: Mapping[str, float] | None, name: str) -> float | None:
    if not truth or name not in truth or truth[name] == 0:
        return None
    return 100.0 * (value / truth[name] - 1.0)


def estimates_table(fit: MdofFit, truth: Mapping[str, float] | None, *, free_only: bool = True) -> pd.DataFrame:
    """Estimates: value, standard error, 95 % interval, unit and, when known, the truth and the error in %."""
    rows = []
    for e in fit.estimates:
        if free_only and not e.vary:
            continue
        row: dict[str, object] = {"parameter": e.name, "value": e.value, "± stderr": finite_or_none(e.stderr),
                                  "95 % low": finite_or_none(e.ci[0]), "95 % high": finite_or_none(e.ci[1]), "unit": e.unit,
                                  "rel. stderr [%]": percent_cell(e.rel_stderr)}
        if truth:
            row["truth"] = truth.get(e.name)
            row["error [%]"] = _error_percent(e.value, truth, e.name)
        rows.append(row)
    return pd.DataFrame(rows)


def held_table(report: StageReport, params: ParameterSet) -> pd.DataFrame:
    """What a stage held, at which value and from where."""
    return pd.DataFrame([{"parameter": p, "value": params[p].value, "unit": params[p].unit, "from": src}
                         for p, src in report.held])


def channel_table(fit: MdofFit) -> pd.DataFrame:
    """Per record and output: fit %, RMSE and the noise level the fit weighted it by."""
    return pd.DataFrame([{"record": c.record, "output": c.output, "fit [%]": finite_or_none(c.fit_percent),
                          "RMSE": c.rmse, "σ used": c.sigma, "unit": c.unit} for c in fit.channels])


def stage_summary(reports: Sequence[StageReport]) -> pd.DataFrame:
    """One row per stage run: records, estimated, held, condition number, time, and the trust sentence."""
    rows = []
    for k, r in enumerate(reports):
        fit = r.fit
        rows.append({"stage": f"{k + 1}. {r.stage.name}", "records": ", ".join(r.records) or "—",
                     "estimated": len(r.free) if fit else 0, "held": len(r.held),
                     "ok": bool(fit.success) if fit else None,
                     "condition": finite_or_none(fit.condition) if fit else None,
                     "seconds": round(fit.elapsed_s, 2) if fit else None,
                     "verdict": r.trust if fit else f"skipped: {r.skipped}"})
    return pd.DataFrame(rows)


def final_parameters(store: Mapping[str, Any]) -> ParameterSet:
    """The parameters after the last stage run (the start values before any)."""
    params: list[ParameterSet] = store.get("params") or [store["start"]]
    return params[-1]


def last_fit(reports: Sequence[StageReport]) -> MdofFit | None:
    """The fit of the last stage that ran (None before any)."""
    return next((r.fit for r in reversed(reports) if r.fit is not None), None)


def staged_time(reports: Sequence[StageReport]) -> float:
    """Seconds spent fitting in the stages."""
    return float(sum(r.fit.elapsed_s for r in reports if r.fit is not None))


def comparison_tables(store: Mapping[str, Any], shot: MdofFit) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Staged against one-shot: per parameter (values and, when known, errors against the truth) and per route
    (success, condition number of the last fit, seconds)."""
    truth: Mapping[str, float] | None = store.get("truth")
    staged = final_parameters(store)
    start: ParameterSet = store["start"]
    rows = []
    for p in staged:
        if not p.vary:
            continue
        row: dict[str, object] = {"parameter": p.name, "unit": p.unit, "start": start[p.name].value,
                                  "staged": p.value, "one-shot": shot.parameters[p.name].value}
        if truth:
            row["truth"] = truth.get(p.name)
            row["staged error [%]"] = _error_percent(p.value, truth, p.name)
            row["one-shot error [%]"] = _error_percent(shot.parameters[p.name].value, truth, p.name)
        rows.append(row)
    reports: list[StageReport] = store.get("reports", [])
    last = last_fit(reports)
    staged_ok = all(r.fit.success for r in reports if r.fit) if last else None
    routes = pd.DataFrame([
        {"route": f"staged ({len(reports)} stages)", "ok": staged_ok,
         "condition": finite_or_none(last.condition) if last else None, "seconds": round(staged_time(reports), 2)},
        {"route": "one-shot", "ok": shot.success, "condition": finite_or_none(shot.condition),
         "seconds": round(shot.elapsed_s, 2)},
    ])
    return pd.DataFrame(rows), routes


def estimates_csv(store: Mapping[str, Any]) -> str:
    """The final estimates as CSV: the last stage's table (value, standard error, interval, unit, truth)."""
    last = last_fit(store.get("reports", []))
    if last is not None:
        frame = estimates_table(last, store.get("truth"), free_only=False)
    else:
        frame = pd.DataFrame([{"parameter": p.name, "value": p.value, "unit": p.unit} for p in final_parameters(store)])
    return str(frame.to_csv(index=False))


def staged_report(store: Mapping[str, Any]) -> tuple[str, str]:
    """The stages run so far reported as ``identify --model`` reports them: (text, JSON document)."""
    import json

    from nlid_core.mdof.report import format_staged, staged_to_dict
    from nlid_core.mdof.stages import staged_result

    reports: list[StageReport] = store.get("reports", [])
    plan: StagePlan = store["plan"]
    staged = staged_result(reports, final_parameters(store), planned=max(len(plan.stages), len(reports)),
                           elapsed_s=staged_time(reports))
    model: MdofModel = store["model"]
    return format_staged(model, staged), json.dumps(staged_to_dict(model, staged), indent=2, allow_nan=False)


def final_model_file(store: Mapping[str, Any]) -> str:
    """The model file with the final estimates as values."""
    return dump_model(store["model"], final_parameters(store).as_dict())


# --------------------------------------------------------------------------- validation
def initial_state(reports: Sequence[StageReport], record: str) -> Any:
    """The initial state the latest stage fitted on ``record`` estimated (None when no stage used it)."""
    for r in reversed(reports):
        if r.fit is not None and record in r.fit.initial_states:
            return r.fit.initial_states[record]
    return None


def validate(store: dict[str, Any], record: str) -> ChannelValidation:
    """``validate_record`` on ``record`` with the final parameters (and the fitted initial state when the record
    was fitted), as a job; kept per record until the next stage runs."""
    kept: dict[str, ChannelValidation] = store.setdefault("validations", {})
    if record not in kept:
        rec = next(r for r in store["records"] if r.name == record)
        y0 = initial_state(store.get("reports", []), record)
        kept[record] = jobs.run(f"validating on {record}", validate_record,
                                (store["model"], rec, final_parameters(store), y0), key=state.MDOF_VALIDATE_JOB)
    return kept[record]
