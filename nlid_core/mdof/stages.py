r"""Staged identification of a multi-DOF model: a plan of stages, each fitting some parameters to some records.

A six-DOF system should not be identified in one shot (seed 000 §2.3, §6.3): tens of coupled parameters, inertia
and Coriolis effects compensating each other, directions barely excited. The default plan
(:func:`default_plan`) follows the seed's four steps:

1. **static** — static load cases → gravity (mass, centre of gravity) and the stiffness (linear, and cubic where the
   loads reach it);
2. **small** — small high-frequency motion about the equilibrium → inertia (with the linear damping as a nuisance:
   the motion is too small for the nonlinear terms);
3. **sweeps** — large sweeps of one DOF with the others held → nonlinear stiffness and damping, the stiffness and
   inertia held from stages 1–2;
4. **joint** — every record and channel, every parameter free, started from the stages' estimates.

A :class:`StagePlan` is plain data that the engineer edits (dashboard table, or a TOML plan file read by
:func:`parse_plan`): per stage a name, record name patterns, free parameter patterns (shell wildcards) and a note.
Parameters fixed in the model file stay fixed in every stage. Each stage reports what it estimated, what it held and
from which stage, its identifiability (condition number, the weakest direction in words) and whether the next stage
can build on it (:attr:`StageReport.trust`).
"""

from __future__ import annotations

import fnmatch
import glob
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import ModelSpecError
from ..metrics import percent_text
from ..params import ParameterSet
from ..progress import ProgressFn
from ..tomlfile import read_toml
from .data import MdofRecord
from .fit import MdofFit, fit_records
from .spec import MdofModel

__all__ = ["Stage", "StagePlan", "StageReport", "StagedResult", "default_plan", "held_out", "dump_plan", "one_shot", "parse_plan",
           "run_stage", "run_stages", "select", "staged_result", "toml_tables", "ROLLED_BACK", "StageStep", "advance"]

#: Iterations of a stage before the last (its estimates are starting values; the joint stage refines them).
EARLY_ITERATIONS = 30
#: A stage's estimates count as firm when every relative standard error is below this.
FIRM_RSE = 0.05
#: ... and the condition number below this.
FIRM_CONDITION = 1e4


@dataclass(frozen=True, kw_only=True)
class Stage:
    """One stage: records (name patterns), free parameters (name patterns) and what it is for."""

    name: str
    records: tuple[str, ...]
    free: tuple[str, ...]
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class StagePlan:
    """An ordered list of stages."""

    stages: tuple[Stage, ...]

    def __post_init__(self) -> None:
        if not self.stages:
            raise ModelSpecError("a stage plan needs at least one stage")
        names = [s.name for s in self.stages]
        if len(set(names)) != len(names):
            raise ModelSpecError(f"stage names repeat: {names}")
        for s in self.stages:
            if not s.records or not s.free:
                raise ModelSpecError(f"stage `{s.name}` needs record patterns and free parameter patterns")


@dataclass(frozen=True, kw_only=True)
class StageReport:
    """What one stage did.

    Attributes
    ----------
    stage : Stage
    records : tuple of str
        Records it used.
    free : tuple of str
        Parameters it estimated.
    held : tuple of (str, str)
        Parameters it held, each with where its value came from (a stage name, or "start").
    fit : MdofFit or None
        None when the stage was skipped.
    trust : str
        Whether the next stages can hold its estimates fixed, and why.
    skipped : str
        Why it was skipped (empty when it ran).
    """

    stage: Stage
    records: tuple[str, ...]
    free: tuple[str, ...]
    held: tuple[tuple[str, str], ...]
    fit: MdofFit | None
    trust: str
    skipped: str = ""


@dataclass(frozen=True, kw_only=True)
class StagedResult:
    """Every stage's report and the final parameters."""

    success: bool
    message: str
    stages: tuple[StageReport, ...]
    parameters: ParameterSet
    elapsed_s: float

    @property
    def final(self) -> MdofFit | None:
        """The last stage that ran."""
        for s in reversed(self.stages):
            if s.fit is not None:
                return s.fit
        return None


def _match(patterns: Sequence[str], names: Sequence[str]) -> tuple[str, ...]:
    hit: set[str] = set()
    for p in patterns:
        if not p.startswith("!"):
            hit.update(fnmatch.filter(names, p))
    for p in patterns:
        if p.startswith("!"):
            hit.difference_update(fnmatch.filter(names, p[1:]))
    return tuple(n for n in names if n in hit)


def select(patterns: Sequence[str], names: Sequence[str]) -> tuple[str, ...]:
    """The names matching any pattern (shell wildcards) and no exclusion (``"!multi*"``), in ``names`` order;
    nothing when none matches."""
    return _match(patterns, names)


#: Records of which the default plan keeps the last out of every stage, for validation, when there are at
#: least two: the multi-input excitations (every input at once, nothing held) test a model most like its use.
HELD_OUT_PATTERN = "multi*"


def held_out(names: Sequence[str]) -> tuple[str, ...]:
    """The records the default plan keeps out of its stages for validation: the last of ``names`` matching
    :data:`HELD_OUT_PATTERN` when at least two do (the others still reach the joint stage); else none."""
    multi = _match([HELD_OUT_PATTERN], names)
    return multi[-1:] if len(multi) >= 2 else ()


def default_plan(model: MdofModel, records: Sequence[str] = (), *, hold: Sequence[str] = ()) -> StagePlan:
    """The seed's four-step plan for this model (patterns that match no parameter of the model are left out).

    With the names of the ``records``, the joint stage leaves out those :func:`held_out` keeps for validation,
    and the records named in ``hold`` (e.g. the test parts of a split)."""
    kept_out = tuple(dict.fromkeys((*held_out(records), *hold)))
    names = model.param_names
    inertia = ["J*"] if model.body else ["m_*"]
    gravity = ["m", "cx", "cy", "cz"] if model.body else (["m_*"] if any(d.gravity for d in model.dofs) else [])
    stiffness = ["k1_*", "k1", "k3_*", "k3"]
    nonlinear = [p for p in ("k3*", "c1*", "c2*", "fc*", "k2*") if _match([p], names)]
    stages = [
        Stage(name="static", records=("static*",), free=tuple(p for p in gravity + stiffness if _match([p], names)),
              note="static load cases: gravity (mass, centre of gravity) and stiffness, free of inertia and damping"),
        Stage(name="small", records=("small*",), free=tuple(p for p in inertia + ["c1*"] if _match([p], names)),
              note="small high-frequency motion: inertia dominates; linear damping as a nuisance"),
        Stage(name="sweeps", records=("sweep*",), free=tuple(nonlinear),
              note="large sweeps, one DOF at a time: nonlinear stiffness and damping, stiffness and inertia held"),
        Stage(name="joint", records=("*", *(f"!{glob.escape(n)}" for n in kept_out)), free=("*",),
              note="joint refinement: every record and channel, every parameter, from the stages' estimates"
                   + (f"; {', '.join(kept_out)} kept out for validation" if kept_out else "")),
    ]
    return StagePlan(stages=tuple(s for s in stages if s.free))


def parse_plan(text: str, *, source: str = "plan file") -> StagePlan:
    """A plan from TOML: ``[[stage]]`` tables with ``name``, ``records`` and ``free`` (lists of patterns), ``note``.

    Raises
    ------
    ModelSpecError
        Not TOML, or a stage without its keys (naming the stage).
    """
    raw = toml_tables(text, "stage", source, ModelSpecError)
    stages = []
    for k, s in enumerate(raw):
        where = f"{source}, [[stage]] #{k + 1}"
        if not isinstance(s, dict):
            raise ModelSpecError(f"{where} must be a table")
        extra = set(s) - {"name", "records", "free", "note"}
        if extra:
            raise ModelSpecError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
        lists: dict[str, tuple[str, ...]] = {}
        for key in ("records", "free"):
            val = s.get(key)
            if isinstance(val, str):
                val = [val]
            if not isinstance(val, list) or not val or not all(isinstance(v, str) for v in val):
                raise ModelSpecError(f"{where}: `{key}` must be a list of name patterns")
            lists[key] = tuple(val)
        stages.append(Stage(name=str(s.get("name", f"stage{k + 1}")), records=lists["records"], free=lists["free"],
                            note=str(s.get("note", ""))))
    return StagePlan(stages=tuple(stages))


def toml_tables(text: str, key: str, source: str, error: type[Exception]) -> list[Any]:
    """The ``[[key]]`` tables of TOML ``text``; ``error`` (naming ``source``) when it is not TOML or has none."""
    data = read_toml(text, source, error)
    raw = data.get(key)
    if not isinstance(raw, list) or not raw:
        raise error(f"{source}: write one [[{key}]] table per entry")
    return raw


def dump_plan(plan: StagePlan) -> str:
    """The plan as TOML text (:func:`parse_plan` reads it back)."""

    def q(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'

    out = []
    for s in plan.stages:
        out += ["[[stage]]", f"name = {q(s.name)}", f"records = [{', '.join(q(r) for r in s.records)}]",
                f"free = [{', '.join(q(f) for f in s.free)}]"]
        if s.note:
            out.append(f"note = {q(s.note)}")
        out.append("")
    return "\n".join(out)


def _trust(fit: MdofFit) -> str:
    if not fit.success:
        return f"failed ({fit.message}); later stages start from the values before it"
    if fit.misfit:
        return (f"not reproduced: {'; '.join(fit.misfit)}; these estimates and intervals do not describe the records"
                " (a local minimum, a missing term or an unseen input)")
    worst = max((e for e in fit.estimates if e.vary), key=lambda e: e.rel_stderr if math.isfinite(e.rel_stderr) else math.inf,
                default=None)
    if worst is None:
        return "nothing estimated"
    rse = worst.rel_stderr
    firm = math.isfinite(rse) and rse < FIRM_RSE and fit.condition < FIRM_CONDITION
    worst_text = f"largest relative standard error {percent_text(rse)} % ({worst.name})" if math.isfinite(rse) else (
        f"{worst.name} is not determined by these records")
    cond = f"condition number {fit.condition:.3g}"
    unsure = f" These records do not determine {', '.join(fit.undetermined)}: held, for a later stage." if fit.undetermined else ""
    if fit.combined:
        unsure += (f" They see {', '.join(fit.combined)} only in combination (moved together here): a later stage with"
                   " records that tell them apart must keep them free.")
    if firm:
        return f"firm: {worst_text}, {cond}; later stages can hold these estimates.{unsure}"
    return (f"weak: {worst_text}, {cond}; the least determined combination is {fit.weakest or '—'}. Later stages should"
            f" keep these parameters free (the joint stage does).{unsure}")


def run_stage(model: MdofModel, records: Sequence[MdofRecord], stage: Stage, params: ParameterSet, *,
              sources: Mapping[str, str] | None = None, last: bool = False, max_iterations: int = 60,
              progress: ProgressFn | None = None) -> StageReport:
    """Run one stage from ``params`` (the dashboard runs the stages one by one; :func:`run_stages` all of them).

    Parameters
    ----------
    model, records
    stage : Stage
    params : ParameterSet
        Values after the earlier stages; parameters not free there (``vary=False``) stay fixed.
    sources : mapping or None
        Where each parameter's current value came from (a stage name, or "start").
    last : bool
        The final (joint) stage: hold only what the records cannot determine at all (Jacobian condition number
        above 1e5). Earlier stages step only in the directions their records see well (condition number up to
        about 300): parameters seen only in combination move together, and a later stage separates them.
    max_iterations : int
    progress : callable or None
        ``progress(stage, fraction, message)``.
    """
    names = [r.name for r in records]
    source = {p.name: "start" for p in params}
    source.update(sources or {})
    chosen = _match(stage.records, names)
    free = tuple(f for f in _match(stage.free, model.param_names) if params[f].vary)
    if not chosen or not free:
        why = (f"no record matches {', '.join(stage.records)}" if not chosen
               else f"no free parameter matches {', '.join(stage.free)}")
        held = tuple((p, source[p]) for p in model.param_names if p not in free)
        return StageReport(stage=stage, records=chosen, free=free, held=held, fit=None, trust="", skipped=why)
    fit = fit_records(model, [r for r in records if r.name in chosen], params, free,
                      max_iterations=max_iterations if last else min(max_iterations, EARLY_ITERATIONS),
                      screen_tol=1e-10 if last else 1e-5, combine=not last, progress=progress, stage=stage.name)
    held = tuple((p, source[p] if p not in fit.undetermined else "start: not determined by these records")
                 for p in model.param_names if p not in fit.free)
    return StageReport(stage=stage, records=chosen, free=fit.free, held=held, fit=fit, trust=_trust(fit))


@dataclass(frozen=True, kw_only=True)
class StageStep:
    """One stage run by :func:`advance`: its report, the values and their sources after it, and whether an earlier
    stage had to be undone first (the index into ``history`` it went back to, or None)."""

    report: StageReport
    parameters: ParameterSet
    sources: dict[str, str]
    rolled_back: bool


ROLLED_BACK = ("rolled back: its estimates made the next stage's records impossible to simulate (no equilibrium or a"
               " diverging run); later stages start from the values before it")


def advance(model: MdofModel, records: Sequence[MdofRecord], stage: Stage,
            history: Sequence[tuple[ParameterSet, Mapping[str, str]]], *, last: bool, max_iterations: int = 60,
            progress: ProgressFn | None = None) -> StageStep:
    """Run ``stage`` from the newest values of ``history`` (the start, then each stage that changed the values).

    When its records cannot even be simulated from there and an earlier entry exists, the stage that produced the
    newest values is undone: the stage runs again from the entry before (``rolled_back``; the caller drops the newest
    entry and marks that stage's report with ``ROLLED_BACK``).
    """
    params, sources = history[-1]
    rep = run_stage(model, records, stage, params, sources=sources, last=last, max_iterations=max_iterations,
                    progress=progress)
    rolled = False
    if (rep.fit is not None and not rep.fit.success and rep.fit.message.startswith("the start does not")
            and len(history) > 1):
        params, sources = history[-2]
        rolled = True
        rep = run_stage(model, records, stage, params, sources=sources, last=last, max_iterations=max_iterations,
                        progress=progress)
    new_sources = dict(sources)
    if rep.fit is not None and rep.fit.success:
        params = rep.fit.parameters
        new_sources.update({f: stage.name for f in rep.fit.free})
    return StageStep(report=rep, parameters=params, sources=new_sources, rolled_back=rolled)


def run_stages(model: MdofModel, records: Sequence[MdofRecord], plan: StagePlan, params: ParameterSet | None = None, *,
               max_iterations: int = 60, progress: ProgressFn | None = None) -> StagedResult:
    """Run the stages in order, each starting from the previous stages' estimates (see :func:`advance`).

    A stage whose record patterns match no record, or whose free patterns match no free parameter, is skipped (its
    report says why); a stage that fails keeps the parameters it started from.

    Raises
    ------
    ModelSpecError
        No records.
    """
    t0 = time.perf_counter()
    if not records:
        raise ModelSpecError("no records to identify from")
    start = model.parameters() if params is None else params
    history: list[tuple[ParameterSet, Mapping[str, str]]] = [(start, {p.name: "start" for p in start})]
    reports: list[StageReport] = []
    n = len(plan.stages)
    for k, st in enumerate(plan.stages):
        sub = None
        if progress is not None:
            report = progress

            def sub(stage: str, fraction: float, message: str, k: int = k, name: str = st.name) -> None:
                report("stages", (k + min(max(fraction, 0.0), 1.0)) / n, f"stage {k + 1} of {n} ({name}): {message}")

        step = advance(model, records, st, history, last=k == n - 1, max_iterations=max_iterations, progress=sub)
        if step.rolled_back:
            history.pop()
            back = next(i for i in range(len(reports) - 1, -1, -1) if reports[i].fit is not None)
            reports[back] = replace(reports[back], trust=ROLLED_BACK)
        reports.append(step.report)
        if step.report.fit is not None and step.report.fit.success:
            history.append((step.parameters, step.sources))
    return staged_result(reports, history[-1][0], planned=n, elapsed_s=time.perf_counter() - t0)


def staged_result(reports: Sequence[StageReport], parameters: ParameterSet, *, planned: int, elapsed_s: float
                  ) -> StagedResult:
    """The result of the stages ``reports`` (of ``planned`` in the plan) ending at ``parameters``: a success when at
    least one ran and every one that ran succeeded."""
    ran = [r for r in reports if r.fit is not None]
    ok = bool(ran) and all(r.fit is not None and r.fit.success for r in ran)
    msg = (f"{len(ran)} of {planned} stages ran" + ("" if ok else "; a stage failed (see its report)")) if ran else (
        "no stage ran: no record matches the plan's record patterns")
    return StagedResult(success=ok, message=msg, stages=tuple(reports), parameters=parameters, elapsed_s=elapsed_s)


def one_shot(model: MdofModel, records: Sequence[MdofRecord], params: ParameterSet | None = None, *,
             max_iterations: int = 60, progress: ProgressFn | None = None) -> MdofFit:
    """Every free parameter on every record at once, from the start values (the comparison for the staged route)."""
    current = model.parameters() if params is None else params
    free = [p.name for p in current if p.vary]
    return fit_records(model, records, current, free, max_iterations=max_iterations, progress=progress, stage="one-shot")
