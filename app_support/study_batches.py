"""The Studies page's view of a batch set: its items as a table (grid or Monte Carlo), the Monte Carlo
coverage per parameter, the estimates of one parameter across items, a CSV of it all, and the command
that resumes the set."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from nlid_core.batch.run import (
    SPEC_LABEL, BatchStatus, GridRow, MonteCarloSummary, ParameterCoverage, batch_status, summarize_grid,
    summarize_monte_carlo
)
from nlid_core.errors import NlidError
from nlid_core.store import db
from nlid_core.store import studies as saved

from .studies import call
from .study_compare import study_runs

__all__ = ["BatchView", "batch_view", "monte_carlo_parameters", "monte_carlo_table", "grid_table", "batch_estimates",
           "batch_csv", "resume_command"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class BatchView:
    """The latest run set of a batch study, as the Studies page's *Batch* tab shows it.

    Attributes
    ----------
    status : BatchStatus
        Progress of the set (:func:`nlid_core.batch.run.batch_status`).
    spec_toml : str
        The spec's text (from the set's ``batch spec`` run; empty when missing).
    monte_carlo : MonteCarloSummary or None
        A Monte Carlo set's summary over its stored draws.
    grid : tuple of GridRow
        A grid set's stored items.
    items : pandas.DataFrame
        One row per stored item: ``item``, ``label``, ``success``, ``message``, ``cost`` and, per parameter,
        its value and ``stderr`` (Monte Carlo also ``ci low``, ``ci high``, ``truth``, ``covers``).
    parameters : tuple of str
        Parameter names in the order of the first item that has them.
    units : dict of str to str
        Unit per parameter where known.
    """

    status: BatchStatus
    spec_toml: str
    monte_carlo: MonteCarloSummary | None
    grid: tuple[GridRow, ...]
    items: pd.DataFrame
    parameters: tuple[str, ...]
    units: dict[str, str]


def _spec_units(spec_toml: str) -> dict[str, str]:
    """Units of a Monte Carlo spec's model parameters (force in N, displacement in m); empty when the spec
    cannot be read."""
    from nlid_core.modeltext import build_model
    from nlid_core.tomlfile import read_toml

    try:
        model = read_toml(spec_toml, "the batch spec").get("model", {})
        terms = model.get("terms") or list(model.get("values", {}))
        custom = model.get("custom", [])
        built = build_model(",".join(str(t) for t in terms), [str(c) for c in custom])
        return {p.name: str(p.unit) for p in built.default_parameters()}
    except (NlidError, AttributeError, TypeError, ValueError):
        return {}


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan


def _item_row(run: saved.Run, kind: str) -> dict[str, Any]:
    res = run.result if isinstance(run.result, Mapping) else {}
    metrics = res.get("metrics")
    cost = res.get("cost") if kind == "monte_carlo" else (metrics.get("cost") if isinstance(metrics, Mapping)
                                                          else None)
    row: dict[str, Any] = {"item": run.item_key or "", "label": run.label, "success": bool(run.success),
                           "message": str(res.get("message", "")), "cost": _number(cost)}
    params = res.get("parameters")
    for name, p in (params.items() if isinstance(params, Mapping) else ()):
        if not isinstance(p, Mapping):
            continue
        row[str(name)] = _number(p.get("value"))
        row[f"{name} stderr"] = _number(p.get("stderr"))
        if kind == "monte_carlo":
            ci = p.get("ci95")
            lo, hi = (ci if isinstance(ci, list) and len(ci) == 2 else (None, None))
            row[f"{name} ci low"] = _number(lo)
            row[f"{name} ci high"] = _number(hi)
            row[f"{name} truth"] = _number(p.get("truth"))
            row[f"{name} covers"] = bool(p.get("covers"))
    return row


def batch_view(store: db.Store, owner: str, study_id: int,
               runs: Sequence[saved.Run] | None = None) -> BatchView | None:
    """The latest batch set of a study with its summary and per-item table; None when it holds no batch.

    ``runs`` are the study's runs when the caller has read them already.
    """
    status = call(batch_status, store, owner, study_id)
    if status.batch_set == 0:
        return None
    every = runs if runs is not None else study_runs(store, owner, study_id)
    spec_toml = ""
    items: list[saved.Run] = []
    for r in every:
        b = r.config.get("batch") if isinstance(r.config, Mapping) else None
        if not isinstance(b, Mapping) or b.get("set") != status.batch_set:
            continue
        if r.label == SPEC_LABEL:
            spec_toml = str(b.get("spec_toml", ""))
        else:
            items.append(r)
    rows = [_item_row(r, status.kind) for r in items]
    params: dict[str, None] = {}
    for row in rows:
        for c in row:
            if c not in ("item", "label", "success", "message", "cost") and " " not in c:
                params.setdefault(c)
    cols = ["item", "label", "success", "message", "cost"] + [c for n in params for c in (
        (n, f"{n} stderr", f"{n} ci low", f"{n} ci high", f"{n} truth", f"{n} covers")
        if status.kind == "monte_carlo" else (n, f"{n} stderr"))]
    frame = pd.DataFrame(rows, columns=cols)
    if status.kind == "monte_carlo":
        units = _spec_units(spec_toml)  # in the model's order (the stored results list parameters by name)
        params = {**{n: None for n in units if n in params}, **params}
        return BatchView(status=status, spec_toml=spec_toml, monte_carlo=summarize_monte_carlo(
            [r.result for r in items]), grid=(), items=frame, parameters=tuple(params), units=units)
    units = {}
    for r in items:
        doc = r.result.get("parameters") if isinstance(r.result, Mapping) else None
        for name, p in (doc.items() if isinstance(doc, Mapping) else ()):
            if isinstance(p, Mapping) and isinstance(p.get("unit"), str):
                units.setdefault(str(name), str(p["unit"]))
    return BatchView(status=status, spec_toml=spec_toml, monte_carlo=None, grid=summarize_grid(items), items=frame,
                     parameters=tuple(params), units=units)


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %" if math.isfinite(x) else ""


def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}" if math.isfinite(x) else ""


def monte_carlo_parameters(view: BatchView) -> tuple[ParameterCoverage, ...]:
    """The Monte Carlo summary's parameters in the model's order."""
    assert view.monte_carlo is not None
    rank = {n: i for i, n in enumerate(view.parameters)}
    return tuple(sorted(view.monte_carlo.parameters, key=lambda p: rank.get(p.name, len(rank))))


def monte_carlo_table(view: BatchView) -> pd.DataFrame:
    """The Monte Carlo summary, a row per parameter: truth, mean, bias, spread, mean standard error, the
    coverage of the intervals ± its binomial standard error, the band exact intervals would give 95 % of the
    time, and whether the coverage lies in it."""
    assert view.monte_carlo is not None
    rows = []
    for p in monte_carlo_parameters(view):
        rows.append({"parameter": p.name, "unit": view.units.get(p.name, ""), "draws": p.n, "truth": _g(p.truth, 6),
                     "mean": _g(p.mean, 6), "bias": _g(p.bias), "spread": _g(p.spread),
                     "mean stderr": _g(p.mean_stderr),
                     "coverage": f"{_pct(p.coverage)[:-2]} ± {_pct(p.coverage_se)}" if math.isfinite(p.coverage)
                     else "",
                     f"{100 * p.nominal:g} % band": f"{_pct(p.band[0])[:-2]}–{_pct(p.band[1])}",
                     "in band": "yes" if p.within_band else "no"})
    return pd.DataFrame(rows)


def grid_table(view: BatchView) -> pd.DataFrame:
    """A grid set, a row per record × variant: converged, cost and each parameter as ``value ± stderr``."""
    rows = []
    for g in view.grid:
        row: dict[str, str] = {"record": g.record, "variant": g.variant, "converged": "yes" if g.success else "no",
                               "cost": _g(g.cost, 6)}
        for name in view.parameters:
            v, se = g.values.get(name, math.nan), g.stderr.get(name, math.nan)
            row[name] = "" if not math.isfinite(v) else _g(v, 6) + (f" ± {se:.3g}" if math.isfinite(se) else "")
        if not g.success:
            row["message"] = g.message
        rows.append(row)
    frame = pd.DataFrame(rows)
    return frame.sort_values(["record", "variant"], kind="stable").reset_index(drop=True) if rows else frame


def batch_estimates(view: BatchView, parameter: str) -> list[float]:
    """The estimates of ``parameter`` by the successful items (the draws :func:`summarize_monte_carlo` uses)."""
    if parameter not in view.items.columns:
        return []
    ok = view.items[view.items["success"].astype(bool)]
    return [float(v) for v in ok[parameter].tolist() if v is not None and math.isfinite(float(v))]


def batch_csv(view: BatchView) -> bytes:
    """The per-item table as CSV (UTF-8)."""
    return view.items.to_csv(index=False).encode("utf-8")


def resume_command(study: saved.Study) -> str:
    """The command that resumes the study's latest batch set (the spec file is the user's)."""
    import shlex

    owner = "" if study.owner == "local" else f" --owner {shlex.quote(study.owner)}"
    return f"python -m nlid_core batch SPEC.toml --study {shlex.quote(study.name)}{owner}"
