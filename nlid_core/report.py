"""Rendering of results to plain data (JSON) and readable text. No computation.

The JSON layout is a public contract (CLI ``--json``, scripts, dashboard):
``{"success", "verdict": {"status", "reasons", "advice"}, "message", "method", "terms", "equation", "parameters":
{name: {"value", "stderr", "ci95": [lo, hi], "rel_stderr", "unit", "vary",
"bounds", "flags", "notes"}}, "metrics": {...}, "diagnostics": {...},
"initial_states": [...], "validation": {...} (when validated), "timing":
{"compile_s", "equation_error_s", "output_error_s", "total_s"},
"warnings": [...]}`` (the fit's, then each validation's prefixed with
``validation on <record>:``). ``ci95`` is the interval at ``options.confidence``
(0.95 unless changed). Non-finite numbers are written as ``null``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from ._version import __version__
from .estimate import FitResult, Minimum
from .identifiability import rank_summary
from .jsonsafe import finite_or_none, json_safe
from .metrics import percent_text, residual_kind
from .quantity import quantity
from .validation import ValidationResult
from .verdict import judge

__all__ = ["result_to_dict", "format_report", "html_report", "all_warnings", "unit_text", "covariance_kind",
           "baseline_text", "covariance_text", "minima_lines", "minima_rows", "minimum_to_dict"]


def result_to_dict(fit: FitResult, validations: Sequence[ValidationResult] = ()) -> dict[str, Any]:
    """JSON-ready dict of ``fit`` and its ``validations`` (non-finite numbers become None)."""
    unc = fit.uncertainty
    out: dict[str, Any] = {
        "nlid_version": __version__,
        "success": fit.success,
        "verdict": judge(fit, validations).to_dict(),
        "message": fit.message,
        "method": fit.method,
        "terms": list(fit.model.terms),
        "equation": fit.equation(),
        "parameters": {e.name: e.to_dict() for e in fit.estimates},
        "metrics": {
            "cost": finite_or_none(fit.cost),
            "nfev": fit.nfev,
            "channels": [m.to_dict() for m in fit.metrics],
        },
        "diagnostics": {
            "condition_number_scaled": finite_or_none(unc.condition_number) if unc else None,
            "rank": unc.rank if unc else None,
            "covariance": covariance_kind(fit),
            "n_estimated": len(unc.names) if unc else 0,
            "weak_directions": list(fit.weak_directions),
            "strong_correlations": [{"a": a, "b": b, "rho": rho} for a, b, rho in fit.correlated_pairs],
            "correlation": {
                "names": list(unc.names),
                "matrix": [[finite_or_none(v) for v in row] for row in unc.correlation],
            } if unc else None,
        },
        "initial_states": [
            {"record": r.name, "x0": finite_or_none(r.x0[0]), "v0": finite_or_none(r.x0[1]),
             "x0_stderr": finite_or_none(r.x0_stderr[0]), "v0_stderr": finite_or_none(r.x0_stderr[1]), "mode": r.x0_mode}
            for r in fit.records
        ],
        "stages": {k: dict(v) for k, v in fit.stages.items()},
        "options": {
            "confidence": fit.options.confidence,
            "method": fit.options.method,
            "outputs": list(fit.options.outputs),
            "initial_state": fit.options.initial_state,
            "input_hold": fit.options.input_hold,
            "sample_step": fit.options.sample_step,
            "force_threshold": fit.options.force_threshold,
        },
        "timing": {k: float(v) for k, v in fit.timing.items()},
        "warnings": all_warnings(fit, validations),
    }
    if fit.minima:
        out["minima"] = [minimum_to_dict(fit, m) for m in fit.minima]
    if fit.baseline_fit:
        out["baseline"] = {"terms": list(fit.baseline_terms),
                           "fit_percent": {k: finite_or_none(v) for k, v in fit.baseline_fit.items()}}
    if validations:
        vals = [v.to_dict() for v in validations]
        out["validation"] = vals[0] if len(vals) == 1 else {"records": vals, **vals[0]}
    return json_safe(out)  # type: ignore[no-any-return]


def minimum_to_dict(fit: FitResult, m: Minimum) -> dict[str, Any]:
    """One run from another start, as the JSON's ``minima`` list holds it."""
    return {
        "start": m.start, "converged": m.fit.success, "distinct": m.distinct, "cost": finite_or_none(m.fit.cost),
        "cost_ratio": finite_or_none(m.fit.cost / fit.cost) if fit.cost > 0 else None,
        "fit_percent": {f"{c.record} {c.channel}": finite_or_none(c.fit_percent) for c in m.fit.metrics},
        "validation_fit_percent": {k: finite_or_none(v) for k, v in m.validation_fit.items()},
        "parameters": {e.name: finite_or_none(e.value) for e in m.fit.estimates if e.vary},
    }


def minima_rows(fit: FitResult) -> list[dict[str, str]]:
    """The runs from other starts as table rows (start, outcome, cost ratio, fit, validation fit, parameters),
    for the Identify page and the HTML report; none when no other start ran."""
    rows = []
    for m in fit.minima:
        ratio = m.fit.cost / fit.cost if fit.cost > 0 else math.nan
        outcome = ("no minimum reached" if not m.fit.success else "another minimum" if m.distinct
                   else "the same minimum")
        rows.append({
            "start": m.start, "outcome": outcome,
            "cost ratio": f"×{ratio:.6g}" if m.fit.success and math.isfinite(ratio) else "",
            "fit": ", ".join(f"{c.channel} {c.fit_percent:.2f} %" for c in m.fit.metrics) if m.fit.success else "",
            "validation fit": ", ".join(f"{k} {v:.2f} %" for k, v in m.validation_fit.items()),
            "parameters": (", ".join(f"{e.name} {_fmt(e.value)}" for e in m.fit.estimates if e.vary)
                           if m.fit.success else m.fit.message),
        })
    return rows


def baseline_text(fit: FitResult) -> str:
    """The sentence on the linear model the fit extends and its fit per record channel ("" when none was fitted)."""
    if not fit.baseline_fit:
        return ""
    fits = ", ".join(f"{k} fit {v:.2f} %" for k, v in fit.baseline_fit.items())
    return f"The linear model this one extends ({','.join(fit.baseline_terms)}), by output error: {fits}"


def minima_lines(fit: FitResult) -> list[str]:
    """The report's lines on the runs from other starts and on the linear model the fit extends (none without
    them)."""
    lines = []
    if fit.baseline_fit:
        lines += ["", baseline_text(fit)]
    if not fit.minima:
        return lines
    lines += ["", "Output error from other starts (the residual is not white, so the fit may have several minima):"]
    for m in fit.minima:
        ratio = m.fit.cost / fit.cost if fit.cost > 0 else math.nan
        fits = ", ".join(f"{c.channel} fit {c.fit_percent:.2f} %" for c in m.fit.metrics)
        val = "".join(f"; validation {k} {v:.2f} %" for k, v in m.validation_fit.items())
        if not m.fit.success:
            lines.append(f"  from {m.start}: no minimum reached ({m.fit.message})")
            continue
        if not m.distinct:
            lines.append(f"  from {m.start}: the same minimum (cost ×{ratio:.6g}, {fits})")
            continue
        values = ", ".join(f"{e.name} {_fmt(e.value)}" for e in m.fit.estimates if e.vary)
        lines.append(f"  from {m.start}: ANOTHER MINIMUM, cost ×{ratio:.6g}, {fits}{val}: {values}")
    return lines


def covariance_kind(fit: FitResult) -> dict[str, Any] | None:
    """How the intervals were computed: ``{"kind": "independent"}`` (rows taken as independent) or
    ``{"kind": "newey-west", "window": L}`` (a serially correlated residual; L samples)."""
    unc = fit.uncertainty
    if unc is None:
        return None
    return {"kind": "newey-west", "window": unc.serial_lag} if unc.serial else {"kind": "independent"}


def covariance_text(fit: FitResult) -> str:
    """:func:`covariance_kind` in words."""
    unc = fit.uncertainty
    if unc is None:
        return "none"
    if unc.serial:
        return (f"Newey–West (HAC) over a window of {unc.serial_lag} samples, because the residual is serially"
                " correlated (not white): samples are not independent, and intervals that took them so would be"
                " too narrow")
    return "from independent residuals (the residual passed the whiteness test)"


def all_warnings(fit: FitResult, validations: Sequence[ValidationResult] = ()) -> list[str]:
    """The fit's warnings followed by each validation's (prefixed with its record)."""
    return [*fit.warnings, *(f"validation on {v.record}: {w}" for v in validations for w in v.warnings)]


def _fmt(v: float, digits: int = 5) -> str:
    return f"{v:.{digits}g}" if math.isfinite(v) else "inf"


def unit_text(unit: str) -> str:
    """A unit as the reports write it: ``"1"`` (a ratio of equal units, e.g. V/V) reads "dimensionless"."""
    u = str(unit).strip()
    return "dimensionless" if u in ("", "1") else u


def format_report(fit: FitResult, validations: Sequence[ValidationResult] = ()) -> str:
    """Readable multi-line report of ``fit`` (equation, parameter table, flags, metrics) and its ``validations``."""
    lines = []
    verdict = judge(fit, validations)
    lines.append(f"nlid identification [{verdict.label}] method={fit.method} terms={','.join(fit.model.terms)}")
    lines.append(f"  {fit.message}")
    if not verdict.ok:
        lines.append("")
        lines.append(f"Verdict: {verdict.label}, because")
        lines.extend(f"  - {r}" for r in verdict.reasons)
        lines.extend(f"  Try: {a}" for a in verdict.advice)
    lines.append("")
    lines.append("Identified equation (value ± standard error):")
    lines.append("  " + fit.equation())
    lines.append("")
    hdr = f"  {'param':6s} {'value':>13s} {'± stderr':>11s} {'rel':>8s}   {'95 % interval':>27s}  {'unit':12s} flags"
    lines.append(hdr)
    for e in fit.estimates:
        rel = f"{percent_text(e.rel_stderr)}%" if math.isfinite(e.rel_stderr) else "inf"
        ci = f"[{_fmt(e.ci[0])}, {_fmt(e.ci[1])}]"
        lines.append(
            f"  {e.name:6s} {_fmt(e.value, 7):>13s} {_fmt(e.stderr, 3):>11s} {rel:>8s}   {ci:>27s}"
            f"  {unit_text(e.unit):13s}"
            f" {','.join(e.flags)}"
        )
    notes = [(e.name, n) for e in fit.estimates for n in e.notes if e.vary]
    if notes:
        lines.append("")
        lines.append("Flags:")
        for name, note in notes:
            lines.append(f"  {name}: {note}")
    if fit.uncertainty is not None:
        u = fit.uncertainty
        lines.append("")
        lines.append(f"Scaled condition number {_fmt(u.condition_number, 3)}, {rank_summary(u)}")
        lines.append(f"Intervals: {covariance_text(fit)}")
        for w in fit.weak_directions:
            lines.append(f"  weak direction: {w}")
    if fit.metrics:
        lines.append("")
        lines.append("Fit:")
        for m in fit.metrics:
            white = "white" if m.whiteness.white else "NOT white"
            lines.append(
                f"  {m.record} {m.channel}: RMSE {quantity(m.rmse, m.unit, 4)}, NRMSE {_fmt(m.nrmse, 4)},"
                f" fit {m.fit_percent:.2f} %, {residual_kind(m.channel)} {white}"
                f" (Ljung-Box p = {m.whiteness.p_value:.2g} over lags 1-{m.whiteness.lags})"
            )
            lines.extend(f"    note: {n}" for n in m.notes(fit.model.terms))
    lines.extend(minima_lines(fit))
    for v in validations:
        lines.append("")
        if not v.success:
            lines.append(f"Validation on {v.record}: FAILED: {v.message}")
            continue
        fitted = any(rf.name == v.record for rf in fit.records)
        data = "a fitted record: not a validation" if fitted else "held out"
        for m in v.metrics:
            lines.append(
                f"Validation on {v.record} {m.channel} ({data}; after {v.n_init} samples, initial state: {v.init}):"
                f" RMSE {quantity(m.rmse, m.unit, 4)}, NRMSE {_fmt(m.nrmse, 4)}, fit {m.fit_percent:.2f} %,"
                f" {residual_kind(m.channel)} {'white' if m.whiteness.white else 'NOT white'}"
                f" (Ljung-Box p = {m.whiteness.p_value:.2g} over lags 1-{m.whiteness.lags})"
            )
            lines.extend(f"  note: {n}" for n in m.notes(fit.model.terms, fitted=fitted))
    warns = all_warnings(fit, validations)
    if warns:
        lines.append("")
        lines.append("Warnings:")
        for w in warns:
            lines.append(f"  {w}")
    t = fit.timing
    lines.append("")
    lines.append(
        "Timing: " + ", ".join(f"{k.removesuffix('_s')} {1000 * v:.1f} ms" for k, v in t.items())
    )
    return "\n".join(lines)


def html_report(
    fit: FitResult,
    validations: Sequence[ValidationResult] = (),
    figures_html: Sequence[tuple[str, str]] = (),
    *,
    title: str = "nlid identification report",
) -> str:
    """A self-contained HTML page: summary, equation, parameter table, flags, metrics, validations, figures.

    Parameters
    ----------
    fit : FitResult
    validations : sequence of ValidationResult
    figures_html : sequence of (caption, html fragment)
        Figures rendered elsewhere (``figures.fig_to_html``; the first should
        carry the plotly script so the page works offline).
    title : str
        Page title.
    """
    from html import escape

    def cell(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.6g}" if math.isfinite(v) else "–"
        return escape(str(v))

    conf = int(round(100 * fit.options.confidence))
    rows = "".join(
        "<tr>" + "".join(f"<td>{cell(v)}</td>" for v in (
            e.name, e.value, e.stderr if e.vary else "fixed", e.ci[0] if e.vary else "", e.ci[1] if e.vary else "",
            f"{percent_text(e.rel_stderr)} %" if e.vary and math.isfinite(e.rel_stderr) else "", unit_text(e.unit),
            ", ".join(e.flags))) + "</tr>"
        for e in fit.estimates
    )
    notes = "".join(f"<li><b>{escape(e.name)}</b>: {escape('; '.join(e.notes))}</li>"
                    for e in fit.estimates if e.vary and e.notes)
    def white(m: Any) -> str:
        return (f"<td>{escape(residual_kind(m.channel))}</td><td>{m.whiteness.p_value:.2g}</td>"
                f"<td>{m.whiteness.lags}</td>")

    fitted = {r.name for r in fit.records}
    metrics = "".join(
        f"<tr><td>{escape(m.record)}</td><td>{escape(m.channel)}</td><td>{escape(quantity(m.rmse, m.unit, 4))}</td>"
        f"<td>{m.nrmse:.4g}</td><td>{m.fit_percent:.2f} %</td>{white(m)}</tr>"
        for m in fit.metrics
    )
    vals = "".join(
        f"<tr><td>{escape(v.record)}</td><td>{'fitted (not a validation)' if v.record in fitted else 'held out'}</td>"
        f"<td>{escape(m.channel)}</td><td>{escape(quantity(m.rmse, m.unit, 4))}</td>"
        f"<td>{m.nrmse:.4g}</td><td>{m.fit_percent:.2f} %</td>{white(m)}<td>{v.n_init}</td>"
        f"<td>{escape(v.init)}</td></tr>"
        for v in validations if v.success for m in v.metrics
    ) + "".join(f"<tr><td>{escape(v.record)}</td><td colspan=11>failed: {escape(v.message)}</td></tr>"
                for v in validations if not v.success)
    residual_notes = [n for m in fit.metrics for n in m.notes(fit.model.terms)] + [
        n for v in validations if v.success for m in v.metrics for n in m.notes(fit.model.terms, fitted=v.record in fitted)]
    res_notes = "".join(f"<li>{escape(n)}</li>" for n in residual_notes)
    figs = "".join(f"<figure>{html}<figcaption>{escape(caption)}</figcaption></figure>"
                   for caption, html in figures_html)
    unc = fit.uncertainty
    diag = (f"Scaled condition number {unc.condition_number:.3g}, {escape(rank_summary(unc))}."
            f" Intervals: {escape(covariance_text(fit))}." if unc is not None else "")
    weak = "".join(f"<li>{escape(w)}</li>" for w in fit.weak_directions)
    warns = "".join(f"<li>{escape(w)}</li>" for w in all_warnings(fit, validations))
    timing = ", ".join(f"{escape(k.removesuffix('_s'))} {1000 * v:.1f} ms" for k, v in fit.timing.items())
    verdict = judge(fit, validations)
    because = "".join(f"<li>{escape(r)}</li>" for r in verdict.reasons)
    advice = "".join(f"<li>Try: {escape(a)}</li>" for a in verdict.advice)
    verdict_html = (f'<p class="{"" if verdict.ok else "fail"}">Verdict: <b>{escape(verdict.label)}</b></p>'
                    + (f"<ul>{because}{advice}</ul>" if because or advice else ""))
    minima = minima_rows(fit)
    heads = list(minima[0]) if minima else []
    minima_html = ("<h2>Other starts</h2><p>The residual is not white, so the fit may have several minima; output"
                   " error was run again from other starts.</p><table><tr>"
                   + "".join(f"<th>{escape(h)}</th>" for h in heads) + "</tr>"
                   + "".join("<tr>" + "".join(f"<td>{escape(r[h])}</td>" for h in heads) + "</tr>" for r in minima)
                   + "</table>") if minima else ""
    baseline = f"<p>{escape(baseline_text(fit))}.</p>" if fit.baseline_fit else ""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1f2933; }}
table {{ border-collapse: collapse; margin: 0.5rem 0 1.5rem; }}
td, th {{ border: 1px solid #cbd2d9; padding: 0.3rem 0.6rem; text-align: right; }}
th {{ background: #f0f4f8; }} td:first-child {{ text-align: left; }}
code {{ background: #f0f4f8; padding: 0.4rem; display: block; white-space: pre-wrap; }}
figure {{ margin: 1rem 0 2rem; }} figcaption {{ color: #52606d; }}
.fail {{ color: #b42318; font-weight: bold; }}
</style></head><body>
<h1>{escape(title)}</h1>
<p>nlid {escape(__version__)} · method <b>{escape(fit.method)}</b> · terms {escape(", ".join(fit.model.terms))} ·
records {escape(", ".join(r.name for r in fit.records))}</p>
<p class="{'' if fit.success else 'fail'}">{escape(fit.message)}</p>
{verdict_html}
<h2>Identified equation</h2><code>{escape(fit.equation())}</code>
<h2>Parameters</h2>
<table><tr><th>parameter</th><th>value</th><th>± stderr</th><th>{conf} % low</th><th>{conf} % high</th>
<th>rel. stderr</th><th>unit</th><th>flags</th></tr>{rows}</table>
{f"<h3>Flags</h3><ul>{notes}</ul>" if notes else ""}
<p>{escape(diag)}</p>{f"<ul>{weak}</ul>" if weak else ""}
<h2>Fit</h2>
<table><tr><th>record</th><th>channel</th><th>RMSE</th><th>NRMSE</th><th>fit</th><th>residual</th><th>whiteness p (Ljung-Box)</th><th>lags</th></tr>{metrics}</table>
{f"<h3>The residual carries structure</h3><ul>{res_notes}</ul>" if res_notes else ""}
{baseline}{minima_html}
{f"<h2>Validation</h2><table><tr><th>record</th><th>data</th><th>channel</th><th>RMSE</th><th>NRMSE</th><th>fit</th><th>residual</th><th>whiteness p (Ljung-Box)</th><th>lags</th><th>initial-state samples</th><th>initial state</th></tr>{vals}</table>" if vals else ""}
{f"<h2>Figures</h2>{figs}" if figs else ""}
{f"<h2>Warnings</h2><ul>{warns}</ul>" if warns else ""}
<p><small>Timing: {timing}</small></p>
</body></html>
"""
