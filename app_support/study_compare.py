"""Runs of a study side by side: which runs to compare by default, the comparison table with each run's
scores, and one parameter's estimates with their intervals across runs."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from nlid_core.quantity import quantity
from nlid_core.store import db
from nlid_core.store import studies as saved
from .run_docs import _saved_validations
from .studies import COMPARE_DEFAULT, COMPARE_PICK_ABOVE, call

__all__ = ["Comparison", "study_runs", "default_compared", "compare", "run_scores",
           "compare_display", "parameter_series"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Comparison:
    """The runs of a study side by side (``compare_runs``) and the unit of each parameter."""

    frame: pd.DataFrame
    parameters: tuple[str, ...]
    units: dict[str, str]
    scores: dict[int, dict[str, str]] = dataclasses.field(default_factory=dict)


def study_runs(store: db.Store, owner: str, study_id: int) -> tuple[saved.Run, ...]:
    """Every run of a study, oldest first (batch items included)."""
    return call(saved.list_runs, store, owner, study_id)


def default_compared(runs: Sequence[saved.Run]) -> list[int]:
    """Ids of the runs compared when none was chosen: all of them up to :data:`COMPARE_PICK_ABOVE`, else the
    newest :data:`COMPARE_DEFAULT`."""
    ids = [r.id for r in runs]
    return ids if len(ids) <= COMPARE_PICK_ABOVE else ids[-COMPARE_DEFAULT:]


def compare(store: db.Store, owner: str, study_id: int, run_ids: Sequence[int] | None = None,
            runs: Sequence[saved.Run] | None = None) -> Comparison:
    """Parameters per saved run (value and standard error), with the parameters' units.

    ``run_ids`` limits the comparison to those runs (default: every run); ``runs`` are the study's runs when
    the caller has read them already (their order and units are read from them).
    """
    frame = call(saved.compare_runs, store, owner, study_id, run_ids)
    found = [c for c in frame.columns if c not in ("label", "success", "cost") and not c.endswith(" stderr")]
    units: dict[str, str] = {}
    order: dict[str, None] = {}  # the model's order (the stored results list parameters by name)
    wanted = None if run_ids is None else set(run_ids)
    listed_runs = runs if runs is not None else call(saved.list_runs, store, owner, study_id)
    for run in (r for r in listed_runs if wanted is None or r.id in wanted):
        listed = run.config.get("parameters")
        for p in listed if isinstance(listed, list) else []:
            if isinstance(p, Mapping) and p.get("name") in found:
                order.setdefault(str(p["name"]))
        terms = run.result.get("terms")  # a run saved without its parameter list: the model's terms
        for name in terms if isinstance(terms, list) else []:
            if name in found:
                order.setdefault(str(name))
        doc = run.result.get("parameters")
        if isinstance(doc, Mapping):
            for name, p in doc.items():
                if isinstance(p, Mapping) and isinstance(p.get("unit"), str):
                    units[str(name)] = str(p["unit"])
    params = tuple(order) + tuple(c for c in found if c not in order)
    cols = ["label", "success", "cost"] + [c for n in params for c in (n, f"{n} stderr")]
    scores = {run.id: run_scores(run.result) for run in listed_runs if wanted is None or run.id in wanted}
    return Comparison(frame=frame[[c for c in cols if c in frame.columns]], parameters=params, units=units,
                      scores=scores)


def run_scores(result: Mapping[str, Any]) -> dict[str, str]:
    """A saved run's fit and validation RMSEs (in a readable prefix of each record's unit) and fit percentages,
    by row name: ``"fit RMSE (rec: x)"``, ``"validation RMSE (test: x)"``."""
    out: dict[str, str] = {}
    metrics = result.get("metrics")
    channels = metrics.get("channels") if isinstance(metrics, Mapping) else None
    for m in channels if isinstance(channels, list) else []:
        if isinstance(m, Mapping) and isinstance(m.get("rmse"), (int, float)):
            where = f"{m.get('record', '')}: {m.get('channel', '')}"
            out[f"fit RMSE ({where})"] = quantity(float(m["rmse"]), str(m.get("unit", "")), 4)
    for v in _saved_validations(result):
        chans = v.get("channels")
        for chan, m in (chans.items() if isinstance(chans, Mapping) else []):
            if isinstance(m, Mapping) and isinstance(m.get("rmse"), (int, float)):
                where = f"{v.get('record', '')}: {chan}"
                out[f"validation RMSE ({where})"] = quantity(float(m["rmse"]), str(m.get("unit", "")), 4)
                if isinstance(m.get("fit_percent"), (int, float)):
                    out[f"validation fit % ({where})"] = f"{float(m['fit_percent']):.2f}"
    return out


def compare_display(comp: Comparison) -> pd.DataFrame:
    """The comparison as the Identify page shows its runs: a column per saved run (``#id label``), a row per
    parameter (named in the column ``parameter``) with ``value ± standard error`` (6 and 3 significant
    digits), then the cost and whether the run converged."""
    frame = comp.frame
    data: dict[str, dict[str, str]] = {}
    for rid, row in frame.iterrows():
        col: dict[str, str] = {}
        for name in comp.parameters:
            value = row.get(name)
            se = row.get(f"{name} stderr")
            if value is None or not math.isfinite(float(value)):
                col[name] = ""
                continue
            err = f" ± {float(se):.3g}" if se is not None and math.isfinite(float(se)) else ""
            col[name] = f"{float(value):.6g}{err}"
        cost = row.get("cost")
        col["cost"] = f"{float(cost):.6g}" if cost is not None and math.isfinite(float(cost)) else ""
        col["converged"] = "yes" if bool(row.get("success")) else "no"
        col.update(comp.scores.get(int(rid), {}))  # type: ignore[call-overload]
        data[f"#{rid} {row['label']}"] = col
    return pd.DataFrame(data).fillna("").rename_axis("parameter").reset_index()


def parameter_series(comp: Comparison, parameter: str) -> tuple[list[str], list[float], list[float]]:
    """Labels, values and standard errors of one parameter across the compared runs."""
    frame = comp.frame
    labels = [f"#{i} {lab}" for i, lab in zip(frame.index, frame["label"])]

    def col(name: str) -> list[float]:
        if name not in frame.columns:
            return [math.nan] * len(frame)
        return [float(v) if v is not None else math.nan for v in frame[name].tolist()]

    return labels, col(parameter), col(f"{parameter} stderr")
