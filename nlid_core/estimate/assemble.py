"""Assembly of results: per-channel metrics, parameter flags and estimates, prior rows, a failed result."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ModelSpecError
from ..identifiability import CORR_LIMIT, RSE_LIMIT, Uncertainty
from ..metrics import ChannelMetrics, channel_metrics, percent_text
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from .options import FitOptions, FloatArray, Prior
from .prepare import _exponent
from .results import FitResult, ParameterEstimate

__all__: list[str] = []


def _metrics(record: str, channel: str, unit: str, measured: FloatArray, predicted: FloatArray,
             u: FloatArray | None = None, fs: float | None = None) -> ChannelMetrics:
    """:func:`channel_metrics` computed on exactly rescaled signals (squares of 1e-200 would underflow)."""
    peak = float(np.max(np.abs(measured))) if measured.size else 0.0
    scale = math.ldexp(1.0, _exponent(peak)) if peak > 0 and math.isfinite(peak) else 1.0
    u_s = None
    if u is not None:
        u_peak = float(np.max(np.abs(u))) if u.size else 0.0
        u_s = u / math.ldexp(1.0, _exponent(u_peak)) if u_peak > 0 and math.isfinite(u_peak) else u
    m = channel_metrics(record, channel, unit, measured / scale, predicted / scale, u=u_s, fs=fs)
    return dataclasses.replace(m, rmse=m.rmse * scale, offset=m.offset * scale, drift=m.drift * scale)


def _flags_and_estimates(
    model: TermModel,
    params: ParameterSet,
    unc: Uncertainty | None,
    active: Mapping[str, bool],
    confidence: float,
) -> tuple[tuple[ParameterEstimate, ...], tuple[tuple[str, str, float], ...]]:
    names = list(unc.names) if unc is not None else []
    pairs: list[tuple[str, str, float]] = []
    if unc is not None:
        free = [n for n in names if n in params]
        for i, a in enumerate(free):
            for b in free[i + 1 :]:
                rho = unc.correlation[names.index(a), names.index(b)]
                if np.isfinite(rho) and abs(rho) > CORR_LIMIT:
                    pairs.append((a, b, float(rho)))
    out = []
    for p in params:
        flags: list[str] = []
        notes: list[str] = []
        if not p.vary:
            out.append(
                ParameterEstimate(
                    name=p.name, value=p.value, stderr=0.0, ci=(p.value, p.value), unit=p.unit, vary=False,
                    lower=p.lower, upper=p.upper, flags=("fixed",), notes=("held at its given value",),
                )
            )
            continue
        if unc is not None and p.name in names:
            k = names.index(p.name)
            se = float(unc.stderr[k])
            hw = float(unc.ci_halfwidth[k])
        else:
            se = hw = math.inf
        ci = (p.value - hw, p.value + hw)
        span = max(abs(p.value), 1e-300)
        if active.get(p.name, False) or (
            math.isfinite(p.lower) and abs(p.value - p.lower) <= 1e-9 * span
        ) or (math.isfinite(p.upper) and abs(p.value - p.upper) <= 1e-9 * span):
            flags.append("at_bound")
            notes.append(f"at its bound ({p.lower:g} .. {p.upper:g}): the unconstrained optimum lies outside")
        rse = se / abs(p.value) if p.value != 0 else math.inf
        if not math.isfinite(se):
            flags.append("unidentifiable")
            notes.append("the data do not determine it (rank-deficient direction)")
        elif rse > RSE_LIMIT or ci[0] <= 0 <= ci[1]:
            flags.append("unidentifiable")
            reason = f"relative standard error {percent_text(rse, 0)} %" if rse > RSE_LIMIT else "interval contains zero"
            notes.append(f"practically unidentifiable: {reason}")
        partners = [(b if a == p.name else a, rho) for a, b, rho in pairs if p.name in (a, b)]
        if partners:
            flags.append("strongly_correlated")
            notes.append("strongly correlated with " + ", ".join(f"{n} (ρ = {r:+.3f})" for n, r in partners))
        out.append(
            ParameterEstimate(
                name=p.name, value=p.value, stderr=se, ci=ci, unit=p.unit, vary=True, lower=p.lower,
                upper=p.upper, flags=tuple(flags), notes=tuple(notes),
            )
        )
    return tuple(out), tuple(pairs)


def _prior_rows(
    prior: Prior | None, params: ParameterSet, col_norms: FloatArray, theta_free: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Rows (J_p, r_p) of the Tikhonov prior over the free parameters."""
    free = params.free_names
    if prior is None or prior.lam == 0:
        return np.zeros((0, len(free))), np.zeros(0)
    unknown = set(prior.values) - set(params.names)
    if unknown:
        raise ModelSpecError(f"prior names unknown parameter(s) {sorted(unknown)}")
    rows = []
    res = []
    for k, name in enumerate(free):
        if name in prior.values:
            row = np.zeros(len(free))
            w = math.sqrt(prior.lam) * col_norms[k]
            row[k] = w
            rows.append(row)
            res.append(w * (theta_free[k] - float(prior.values[name])))
    if not rows:
        return np.zeros((0, len(free))), np.zeros(0)
    return np.array(rows), np.array(res)


def _failed(
    model: TermModel, params: ParameterSet, recs: Sequence[Record], opts: FitOptions, message: str, start: float
) -> FitResult:
    estimates, _ = _flags_and_estimates(model, params, None, {}, opts.confidence)
    return FitResult(
        success=False, message=message, method="output-error", model=model, parameters=params,
        estimates=estimates, uncertainty=None, weak_directions=(), correlated_pairs=(), metrics=(), records=(),
        cost=math.nan, nfev=0, timing={"output_error_s": time.perf_counter() - start}, stages={},
        warnings=(), options=opts,
    )

