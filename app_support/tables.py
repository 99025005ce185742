"""Result tables for the pages (pandas frames built from nlid_core results; no computation but unit scaling).

``st.dataframe`` shows cells and column names as plain text, so record names
and units in these tables need no markdown escaping; text from them placed in
``st.markdown`` or an alert goes through :func:`app_support.text.esc`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from nlid_core.estimate import FitResult
from nlid_core.jsonsafe import finite_or_none
from nlid_core.metrics import ChannelMetrics, percent_cell, relative_error, residual_kind
from nlid_core.nonlinearity import EquivalentLinear, IntermodulationLine, LinearCheck
from nlid_core.nonlinearity.baseline import baseline_parameter
from nlid_core.quantity import prefixed, quantity
from nlid_core.terms import REGISTRY
from nlid_core.validation import ValidationResult

from .state import Run


#: Shown in a table cell that has no value (a fixed parameter's standard error, a failed run's fit).
EMPTY = "—"


def unit_text(unit: str) -> str:
    """A unit as a table shows it: ``"1"`` (or nothing) reads "dimensionless"."""
    u = str(unit).strip()
    return "dimensionless" if u in ("", "1") else u


def _sig(values: Any, digits: int = 4) -> Any:
    """Numbers rounded to ``digits`` significant digits, for tables shown by ``st.dataframe`` without a column
    format (a float shows all its digits there: 63.7144 instead of 63.71); NaN and inf are kept."""
    arr = np.asarray(values, dtype=np.float64)
    out = np.array([float(f"{v:.{digits}g}") for v in arr.ravel()], dtype=np.float64).reshape(arr.shape)
    return out if arr.ndim else float(out)


def _rounded(frame: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """``frame`` with every float column rounded to ``digits`` significant digits (see :func:`_sig`)."""
    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            out[c] = _sig(out[c].to_numpy(dtype=np.float64), digits)
    return out


#: A parameter's flags as the table shows them: short words (the page states each in full beside the table),
#: so that the column is not cut at 1280 px.
FLAG_WORDS = {"at_bound": "at bound", "unidentifiable": "unidentifiable", "strongly_correlated": "correlated"}


def parameter_table(fit: FitResult) -> pd.DataFrame:
    conf = int(round(100 * fit.options.confidence))
    rows = []
    for e in fit.estimates:
        rows.append({
            "parameter": e.name,
            "value": e.value,
            "± stderr": finite_or_none(e.stderr) if e.vary else None,
            f"{conf} % low": finite_or_none(e.ci[0]) if e.vary else None,
            f"{conf} % high": finite_or_none(e.ci[1]) if e.vary else None,
            "rel. stderr [%]": percent_cell(e.rel_stderr) if e.vary else None,
            "unit": unit_text(e.unit),
            "flags": ", ".join(FLAG_WORDS.get(f, f.replace("_", " ")) for f in e.flags),
        })
    return pd.DataFrame(rows)


#: Column of the whiteness p-value in :func:`metrics_table`.
WHITENESS_P = "whiteness p (Ljung-Box)"


def metrics_table(metrics: tuple[ChannelMetrics, ...] | list[ChannelMetrics], *,
                  closed_loop: bool = False) -> pd.DataFrame:
    """One row per scored channel: which residual (``metrics.residual_kind``, or the closed-loop error of a fit
    inside a position loop), its size (in a readable prefix of the record's unit), and its whiteness test with
    the number of lags it sums over."""
    rows = []
    for m in metrics:
        rmse, unit = prefixed(m.rmse, m.unit)
        kind = "closed-loop error" if closed_loop else residual_kind(m.channel)
        rows.append({
            "record": m.record, "channel": m.channel, "residual": kind, "RMSE": rmse,
            "unit": unit_text(unit), "NRMSE": m.nrmse, "fit [%]": finite_or_none(m.fit_percent),
            WHITENESS_P: finite_or_none(m.whiteness.p_value), "lags": m.whiteness.lags,
            "input-residual corr. outside band [%]": finite_or_none(100 * m.input_xcorr_fraction_outside),
        })
    return pd.DataFrame(rows)


def channel_fit_table(fits: Any) -> pd.DataFrame:
    """One row per output channel of a multi-DOF validation: fit, RMSE in a readable prefix of its unit, NRMSE."""
    rows = []
    for name, unit, fit, rmse, nrmse in zip(fits.names, fits.units, fits.fit_percent, fits.rmse, fits.nrmse,
                                            strict=True):
        value, shown = prefixed(float(rmse), unit)
        rows.append({"channel": name, "fit [%]": finite_or_none(float(fit)), "RMSE": finite_or_none(value), "unit": unit_text(shown),
                     "NRMSE": finite_or_none(float(nrmse))})
    return _rounded(pd.DataFrame(rows))


def runs_table(runs: list[Run]) -> pd.DataFrame:
    return pd.DataFrame([{
        "run": r.id, "time": r.created, "method": r.result.method, "terms": ",".join(r.config.terms),
        "records": ", ".join(r.config.fit_records), "success": r.result.success,
        "fit [%]": finite_or_none(r.result.metrics[0].fit_percent) if r.result.metrics else None,
        "seconds": round(r.elapsed_s, 3),
    } for r in runs])


def compare_table(runs: list[Run]) -> pd.DataFrame:
    names: list[str] = []
    for r in runs:
        names += [n for n in r.config.terms if n not in names]
    data = {}
    for r in runs:
        fit = r.result
        col = {"status": "converged" if fit.success else "FAILED"}
        for n in names:
            try:
                e = fit.estimate(n)
            except KeyError:
                col[n] = ""
                continue
            if not fit.success:  # its values are where it stopped, not estimates
                col[n] = EMPTY
                continue
            se = f" ± {e.stderr:.3g}" if e.vary and math.isfinite(e.stderr) else ""
            col[n] = f"{e.value:.6g}{se}" + (f" [{', '.join(e.flags)}]" if e.flags else "")
        for m in fit.metrics if fit.success else ():
            col[f"fit [%] ({m.record}: {m.channel})"] = f"{m.fit_percent:.2f}"
            col[f"RMSE ({m.record}: {m.channel})"] = quantity(m.rmse, m.unit, 4)
        data[f"run #{r.id}"] = col
    return pd.DataFrame(data)


#: Integer columns (counts, ids): shown without decimals.
INTEGER_COLUMNS = ("lags", "run", "samples", "p", "q")

#: Text columns that hold lists of words (flags, notes): given room so that they are not cut at 1280 px.
WIDE_TEXT = ("flags", "notes", "fixed", "message", "reason", "parameters")


def number_format(frame: pd.DataFrame, fmt: str = "%.4g") -> dict[str, object]:
    """Column configuration: every numeric column with ``fmt`` (no 300-digit zeros for tiny p-values) at a
    compact width, and the word-list columns (:data:`WIDE_TEXT`) wide, so that a parameter table fits a
    1280 px page without its flags being cut."""
    def column_fmt(c: str) -> str:
        # an uncertainty needs fewer digits than the value it belongs to; a p-value two
        if c == WHITENESS_P:
            return "%.2g"
        if c in INTEGER_COLUMNS:
            return "%d"
        if c.startswith(("±", "rel.")):
            return "%.3g"
        return "%.5g" if c.endswith((" % low", " % high")) else fmt

    def width(c: str) -> str | None:
        # values keep their own width (0.000224864 must not lose its leading digit); uncertainties are short
        return "small" if c.startswith("±") else None

    cfg: dict[str, object] = {c: st.column_config.NumberColumn(format=column_fmt(str(c)), width=width(str(c)))
                              for c in frame.columns
                              if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])}
    cfg.update({c: st.column_config.TextColumn(width="large") for c in frame.columns if c in WIDE_TEXT})
    return cfg


def minima_table(fit: FitResult) -> pd.DataFrame:
    """Output error from other starts: where each run ended against this fit (:func:`nlid_core.report.minima_rows`)."""
    from nlid_core.report import minima_rows

    return pd.DataFrame(minima_rows(fit))


def show(frame: pd.DataFrame, key: str, fmt: str = "%.4g", *, index: bool = False) -> None:
    """``st.dataframe`` (without the index unless ``index``), numbers formatted with ``fmt``, empty cells
    shown as :data:`EMPTY`."""
    st.dataframe(frame, hide_index=not index, key=key, column_config=number_format(frame, fmt),  # type: ignore[arg-type]
                 placeholder=EMPTY)


# --------------------------------------------------------------------------- nonlinearity evidence
def linear_check_table(check: LinearCheck) -> pd.DataFrame:
    """Equation-error fits of the linear model and of each candidate term (force NRMSE in %)."""
    return _rounded(pd.DataFrame([{"model": m.label, "force NRMSE [%]": 100 * m.nrmse,
                                   **{k: _with_unit(v, m.units.get(k, "")) for k, v in m.values.items()}}
                                  for m in check.rows]))


def _with_unit(value: float, unit: str) -> str:
    """``value`` to 4 significant digits followed by its unit (none for a dimensionless one)."""
    u = str(unit).strip()
    return f"{value:.4g}" if u in ("", "1") else f"{value:.4g} {u}"


def two_tone_table(lines: Sequence[IntermodulationLine]) -> pd.DataFrame:
    return _rounded(pd.DataFrame([{"p": ln.p, "q": ln.q, "frequency [Hz]": ln.freq_hz, "level [dB]": ln.level_db}
                                  for ln in lines]))


def equivalent_linear_table(levels: Sequence[EquivalentLinear]) -> pd.DataFrame:
    mass, damping, stiffness = (baseline_parameter(r) for r in ("mass", "damping", "stiffness"))
    return _rounded(pd.DataFrame([{"record": e.record, f"x rms [{e.x_unit}]": e.x_rms, mass: e.m0, damping: e.c1,
                                   stiffness: e.k1, "f_n [Hz]": e.f_n_hz, "zeta": e.zeta,
                                   "force NRMSE [%]": 100 * e.nrmse}
                                  for e in levels]))


# --------------------------------------------------------------------------- excitation design
def design_table(preds: Sequence[Any]) -> pd.DataFrame:
    """Predicted relative standard errors [%] of each design (``studies.compare_designs``)."""
    rows = []
    for pred in preds:
        row: dict[str, object] = {"design": pred.label, "ok": pred.success}
        if pred.success:
            row.update({n: percent_cell(float(r)) for n, r in zip(pred.names, pred.rel_stderr)})
            row["worst"] = pred.worst_parameter
            row["x peak"] = pred.x_max
        else:
            row["worst"] = pred.message
        rows.append(row)
    return _rounded(pd.DataFrame(rows), 3)


def monte_carlo_table(mc: Any) -> pd.DataFrame:
    """Predicted against realised spread per parameter (``studies.monte_carlo_check``)."""
    return _rounded(pd.DataFrame({"parameter": list(mc.names), "truth": mc.truth, "predicted std": mc.predicted_std,
                                  "realised std": mc.realised_std, "realised / predicted": mc.ratio, "bias": mc.bias}))


# --------------------------------------------------------------------------- identifiability studies
def sensitivity_table(study: Any) -> pd.DataFrame:
    return _rounded(pd.DataFrame({"parameter": list(study.names), "value": study.values,
                                  "rel. stderr [%]": [percent_cell(float(r)) for r in study.rel_stderr],
                                  "information share [%]": 100 * np.asarray(study.information_share),
                                  "variance inflation": study.variance_inflation}))


def multistart_tables(ms: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """End point and cost of every start, and the spread of the starts that reached the best cost [%]."""
    ends = pd.DataFrame(ms.end_points, columns=list(ms.names)).assign(cost=ms.costs, reached_best=ms.at_best)
    spread = pd.DataFrame({"parameter": list(ms.names), "spread at the best cost [%]": 100 * ms.spread})
    return _rounded(ends), _rounded(spread, 3)


def regularisation_tables(path: Any) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Estimates and relative standard errors [%] along a regularisation path, one row per λ."""
    estimates = pd.DataFrame(path.estimates, columns=list(path.names))
    estimates.insert(0, "λ", path.lambdas)
    errors = pd.DataFrame(100 * relative_error(path.stderr, path.estimates), columns=list(path.names))
    errors.insert(0, "λ", path.lambdas)
    return _rounded(estimates), _rounded(errors, 3)


def structure_table(sc: Any) -> pd.DataFrame:
    return _rounded(pd.DataFrame([{"variant": v.label, "terms": ",".join(v.terms), "ok": v.success,
                                   "parameters": v.n_params, "AIC": v.aic, "BIC": v.bic, "ΔAIC": v.delta_aic,
                                   "ΔBIC": v.delta_bic, "validation RMSE": v.validation_rmse}
                                  for v in (sc.base, *sc.variants)]), 6)


# --------------------------------------------------------------------------- teaching and export
def truth_table(truth: Mapping[str, float], fit: FitResult) -> pd.DataFrame:
    """True against estimated parameters, in the registry's order (typed terms' parameters last); a
    parameter of neither is left out."""
    library = [p for t in REGISTRY.values() for p in t.param_names]
    names = sorted(set(truth) | set(fit.model.param_names),
                   key=lambda n: (library.index(n), "") if n in library else (len(library), n))
    rows = []
    for name in names:
        est = fit.estimate(name) if name in fit.model.param_names else None
        rows.append({"term": name, "true": truth.get(name, 0.0), "estimate": est.value if est else None,
                     "± stderr": est.stderr if est else None,
                     "flags": ", ".join(est.flags) if est else "not in the model"})
    return pd.DataFrame(rows)


def validation_frame(vals: Sequence[ValidationResult]) -> pd.DataFrame | None:
    """Measured and simulated signals of every successful validation, stacked; None when there is none."""
    frames = []
    for v in vals:
        if not v.success:
            continue
        frame = pd.DataFrame({"record": v.record, "t": v.t})
        for c, arr in v.measured.items():
            frame[f"{c}_measured"] = arr
        for c, arr in v.predicted.items():
            frame[f"{c}_simulated"] = arr
        frames.append(frame)
    return pd.concat(frames) if frames else None


# --------------------------------------------------------------------------- broadband nonlinearity evidence
def bla_table(b: Any) -> pd.DataFrame:
    """One row per DFT line of the BLA (``nonlinearity.BLA``): frequency, excited, G (real, imaginary,
    dB, phase), total / noise / distortion standard deviation of G (dB), output level and noise (dB)."""
    cols = b.to_columns()
    ratio, out = b.unit, b.y_unit
    names = {"freq_hz": "frequency [Hz]", "excited": "excited", "g_real": f"G real [{ratio}]",
             "g_imag": f"G imag [{ratio}]", "g_db": f"|G| [dB re 1 {ratio}]", "phase_deg": "phase [deg]",
             "total_std_db": f"total std of G [dB re 1 {ratio}]", "noise_std_db": f"noise std of G [dB re 1 {ratio}]",
             "distortion_std_db": f"distortion std of G [dB re 1 {ratio}]",
             "output_db": f"output per line [dB re 1 {out}]", "output_noise_db": f"output noise per line [dB re 1 {out}]"}
    frame = pd.DataFrame({names[k]: v for k, v in cols.items()})
    return frame.replace([np.inf, -np.inf], np.nan)


def detection_table(b: Any) -> pd.DataFrame:
    """The classes of unexcited lines of a periodic BLA: lines, level and noise (dB), above noise (dB)."""
    det = b.detection
    if det is None:
        return pd.DataFrame(columns=["lines", "count", "level above noise [dB]", "significant"])
    return _rounded(pd.DataFrame([{"lines": c.name, "count": c.n_lines,
                                   f"level [dB re 1 {b.y_unit}]": 10 * math.log10(c.level) if c.level > 0 else None,
                                   f"noise [dB re 1 {b.y_unit}]": (10 * math.log10(c.noise)
                                                                   if math.isfinite(c.noise) and c.noise > 0 else None),
                                   "level above noise [dB]": finite_or_none(c.above_noise_db),
                                   "significant": "yes" if c.significant else "no"} for c in det.classes]))


def output_check_table(oe: Any) -> pd.DataFrame:
    """Every model of the output-error check: label, added term, RMSE (estimation, validation), kept or not."""
    kept = {s.label for s in oe.path}
    return _rounded(pd.DataFrame([{"model": s.label, f"RMSE estimation [{oe.unit}]": finite_or_none(s.rmse_fit),
                                   f"RMSE validation [{oe.unit}]": finite_or_none(s.rmse_val),
                                   "kept": "yes" if s.label in kept else ("failed" if not s.success else "no")}
                                  for s in oe.steps]))


def equivalent_linear_se_table(levels: Sequence[EquivalentLinear]) -> pd.DataFrame:
    """Equivalent natural frequency and damping ratio per level with their standard errors."""
    return _rounded(pd.DataFrame([{"record": e.record, f"x rms [{e.x_unit}]": e.x_rms, "f_n [Hz]": e.f_n_hz,
                                   "f_n std err [Hz]": finite_or_none(e.f_n_se), "zeta": e.zeta, "zeta std err": finite_or_none(e.zeta_se)}
                                  for e in levels]))
