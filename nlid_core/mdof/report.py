"""The report of a staged identification, as text and as the JSON document of ``identify --model``.

The JSON has the single-DOF result's keys where they mean the same thing (``parameters`` with ``value``,
``stderr``, ``ci95``, ``unit``, ``vary``, ``flags``; ``metrics.channels``; ``diagnostics``; ``initial_states``;
``timing``), each parameter the document of its estimate (:meth:`nlid_core.estimate.ParameterEstimate.to_dict`),
plus ``model`` and ``stages`` with each stage's report and, when validated, ``validation``. The CLI writes it
with ``--json``; the dashboard's Multi-DOF page offers the same document for download.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .._version import __version__
from ..jsonsafe import finite_or_none, json_safe
from ..params import Parameter
from ..estimate.results import ParameterEstimate
from .results import MdofFit
from .spec import MdofModel
from .stages import StagedResult
from .validation import ChannelValidation

__all__ = ["format_staged", "staged_to_dict"]


def _fit_dict(fit: MdofFit) -> dict[str, Any]:
    return {
        "success": fit.success, "message": fit.message, "free": list(fit.free), "records": list(fit.records),
        "condition_number_scaled": finite_or_none(fit.condition), "weakest_direction": fit.weakest,
        "undetermined": list(fit.undetermined), "misfit": list(fit.misfit), "elapsed_s": fit.elapsed_s,
        "covariance": ({"kind": "newey-west", "window": fit.serial_lag} if fit.serial_lag else {"kind": "independent"}),
        "iterations": fit.iterations,
        "nfev": fit.nfev, "cost": finite_or_none(fit.cost), "reduced_chi2": finite_or_none(fit.s2),
        "estimates": {e.name: {"value": e.value, "stderr": finite_or_none(e.stderr), "ci95": [finite_or_none(e.ci[0]), finite_or_none(e.ci[1])],
                               "unit": e.unit} for e in fit.estimates if e.vary},
    }


def _parameter_doc(p: Parameter, e: ParameterEstimate | None) -> dict[str, Any]:
    """One parameter as in every ``identify`` JSON (the estimate's own document; a parameter no stage estimated is
    fixed)."""
    if e is not None:
        doc: dict[str, Any] = json_safe(e.to_dict())
        return doc
    return {"value": p.value, "stderr": None, "ci95": [None, None], "rel_stderr": None, "unit": p.unit, "vary": False,
            "bounds": [finite_or_none(p.lower), finite_or_none(p.upper)], "flags": ["fixed"], "notes": []}


def staged_to_dict(model: MdofModel, staged: StagedResult, validations: Sequence[ChannelValidation] = ()) -> dict[str, Any]:
    """The JSON document of a staged identification (``identify --model --json``, the Multi-DOF page's report):
    the keys of every ``identify`` document where they mean the same thing, plus ``model`` and ``stages``."""

    final = staged.final
    est = {e.name: e for e in final.estimates} if final is not None else {}
    params = {p.name: _parameter_doc(p, est.get(p.name)) for p in staged.parameters}
    channels = [{"record": c.record, "channel": c.output, "unit": c.unit, "rmse": c.rmse, "fit_percent": finite_or_none(c.fit_percent),
                 "noise_sigma": c.sigma} for c in (final.channels if final is not None else ())]
    doc: dict[str, Any] = {
        "nlid_version": __version__, "success": staged.success, "message": staged.message, "method": "staged-output-error",
        "model": {"name": model.name, "dofs": list(model.dof_names), "inputs": list(model.used_inputs),
                  "outputs": list(model.output_dofs), "description": model.describe()},
        "parameters": params,
        "metrics": {"cost": finite_or_none(final.cost) if final else None, "nfev": final.nfev if final else 0, "channels": channels},
        "diagnostics": {"condition_number_scaled": finite_or_none(final.condition) if final else None,
                        "weak_directions": [final.weakest] if final and final.weakest else [],
                        "strong_correlations": [{"a": a, "b": b, "rho": r} for a, b, r in final.correlations]
                        if final else []},
        "initial_states": [{"record": k, "state": [float(v) for v in y0]}
                           for k, y0 in (final.initial_states.items() if final else ())],
        "stages": [{"name": s.stage.name, "note": s.stage.note, "record_patterns": list(s.stage.records),
                    "free_patterns": list(s.stage.free), "records": list(s.records), "skipped": s.skipped,
                    "trust": s.trust, "held": [{"name": n, "from": src} for n, src in s.held],
                    "fit": _fit_dict(s.fit) if s.fit is not None else None} for s in staged.stages],
        "timing": {"total_s": staged.elapsed_s},
    }
    if validations:
        doc["validation"] = [{"record": v.record, "success": v.success, "message": v.message,
                              "channels": [{"channel": n, "unit": u, "fit_percent": finite_or_none(f), "rmse": finite_or_none(r)}
                                           for n, u, f, r in zip(v.names, v.units, v.fit_percent, v.rmse, strict=True)]}
                             for v in validations]
    return doc


def format_staged(model: MdofModel, staged: StagedResult, validations: Sequence[ChannelValidation] = ()) -> str:
    """The text report: every stage, then the final parameters and the validation per channel."""
    lines = [model.describe(), "", f"staged identification: {staged.message} ({staged.elapsed_s:.1f} s)"]
    for k, s in enumerate(staged.stages, 1):
        lines.append("")
        lines.append(f"stage {k} `{s.stage.name}` — {s.stage.note}")
        if s.fit is None:
            lines.append(f"  skipped: {s.skipped}")
            continue
        f = s.fit
        lines.append(f"  records: {', '.join(s.records)}; estimated: {', '.join(f.free) or '—'}")
        if f.undetermined:
            lines.append(f"  not determined by these records (held): {', '.join(f.undetermined)}")
        lines.append(f"  {f.message}; condition number {f.condition:.3g}; {f.elapsed_s:.1f} s")
        if f.serial_lag:
            lines.append(f"  intervals: Newey–West over a window of {f.serial_lag} samples (a residual that is not white)")
        if f.weakest:
            lines.append(f"  weakest direction: {f.weakest}")
        lines.append(f"  trust: {s.trust}")
    final = staged.final
    lines += ["", "parameters (value ± standard error, 95 % interval):"]
    est = {e.name: e for e in final.estimates} if final is not None else {}
    for p in staged.parameters:
        e = est.get(p.name)
        if e is not None and e.vary and math.isfinite(e.stderr):
            lines.append(f"  {p.name:14s} {p.value:12.6g} ± {e.stderr:.3g} [{e.ci[0]:.6g}, {e.ci[1]:.6g}] {p.unit}")
        else:
            lines.append(f"  {p.name:14s} {p.value:12.6g} (held) {p.unit}")
    if final is not None:
        lines += ["", "fit per record and channel (fit %, rms error):"]
        for c in final.channels:
            lines.append(f"  {c.record:12s} {c.output:6s} {c.fit_percent:7.2f} %  {c.rmse:.3g} {c.unit}")
    for v in validations:
        lines += ["", f"validation on {v.record}: {v.message}"]
        for n, u, fp, r in zip(v.names, v.units, v.fit_percent, v.rmse, strict=True):
            lines.append(f"  {n:6s} {fp:7.2f} %  {r:.3g} {u}")
    return "\n".join(lines)
