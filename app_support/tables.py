"""Result tables for the pages (pandas frames built from nlid_core results; no computation).

``st.dataframe`` shows cells and column names as plain text, so record names
and units in these tables need no markdown escaping; text from them placed in
``st.markdown`` or an alert goes through :func:`app_support.text.esc`.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from nlid_core.estimate import FitResult
from nlid_core.metrics import ChannelMetrics

from .state import Run


def _num(v: float) -> float | None:
    return v if math.isfinite(v) else None


def parameter_table(fit: FitResult) -> pd.DataFrame:
    conf = int(round(100 * fit.options.confidence))
    rows = []
    for e in fit.estimates:
        rows.append({
            "parameter": e.name,
            "value": e.value,
            "± stderr": _num(e.stderr) if e.vary else None,
            f"{conf} % low": _num(e.ci[0]) if e.vary else None,
            f"{conf} % high": _num(e.ci[1]) if e.vary else None,
            "rel. stderr [%]": _num(100 * e.rel_stderr) if e.vary else None,
            "unit": e.unit,
            "flags": ", ".join(e.flags),
        })
    return pd.DataFrame(rows)


def metrics_table(metrics: tuple[ChannelMetrics, ...] | list[ChannelMetrics]) -> pd.DataFrame:
    return pd.DataFrame([{
        "record": m.record, "channel": m.channel, "RMSE": m.rmse, "unit": m.unit, "NRMSE": m.nrmse,
        "fit [%]": m.fit_percent, "residual white (Ljung-Box p)": m.whiteness.p_value,
        "input-residual corr. outside band [%]": _num(100 * m.input_xcorr_fraction_outside),
    } for m in metrics])


def runs_table(runs: list[Run]) -> pd.DataFrame:
    return pd.DataFrame([{
        "run": r.id, "time": r.created, "method": r.result.method, "terms": ",".join(r.config.terms),
        "records": ", ".join(r.config.fit_records), "success": r.result.success,
        "fit [%]": r.result.metrics[0].fit_percent if r.result.metrics else None,
        "seconds": round(r.elapsed_s, 3),
    } for r in runs])


def compare_table(runs: list[Run]) -> pd.DataFrame:
    names: list[str] = []
    for r in runs:
        names += [n for n in r.config.terms if n not in names]
    data = {}
    for r in runs:
        col = {}
        for n in names:
            try:
                e = r.result.estimate(n)
            except KeyError:
                col[n] = ""
                continue
            se = f" ± {e.stderr:.3g}" if e.vary and math.isfinite(e.stderr) else ""
            col[n] = f"{e.value:.6g}{se}" + (f" [{', '.join(e.flags)}]" if e.flags else "")
        data[f"run #{r.id}"] = col
    return pd.DataFrame(data)


def number_format(frame: pd.DataFrame, fmt: str = "%.4g") -> dict[str, object]:
    """Column configuration showing every numeric column with ``fmt`` (no 300-digit zeros for tiny p-values)."""
    return {c: st.column_config.NumberColumn(format=fmt) for c in frame.columns
            if pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(frame[c])}


def show(frame: pd.DataFrame, key: str, fmt: str = "%.4g") -> None:
    """``st.dataframe`` without the index, numbers formatted with ``fmt``."""
    st.dataframe(frame, hide_index=True, key=key, column_config=number_format(frame, fmt))  # type: ignore[arg-type]
