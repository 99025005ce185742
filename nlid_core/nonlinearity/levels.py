"""Evidence across excitation levels: equivalent linear parameters per record and how they drift.

For a linear system the equivalent linear coefficients do not depend on the excitation level; a
nonlinear one shows them drifting (a hardening spring raises k1 and the natural frequency with
amplitude, friction raises the damping at low levels).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import DataValidationError
from ..estimate import FitOptions, FitResult, equation_error
from ..models import TermModel
from ..record import Record
from ..terms.registry import baseline_terms
from ._args import _check_record, _with_va
from .baseline import baseline_parameter
from .thresholds import LEVEL_DRIFT, LEVEL_SIGNIFICANCE

__all__ = ["EquivalentLinear", "equivalent_linear", "level_drift_summary"]


@dataclass(frozen=True, kw_only=True)
class EquivalentLinear:
    """The linear baseline m0·ẍ + c1·ẋ + k1·x = f fitted (equation error) to one record.

    For a linear system these numbers do not depend on the excitation level; a
    nonlinear one shows them drifting (a hardening spring raises k1 and the
    natural frequency with amplitude, friction raises the damping at low levels).

    Attributes
    ----------
    record : str
    x_rms : float
        Displacement rms (the level), unit of x.
    m0, c1, k1 : float
        Equivalent linear coefficients: the baseline's mass, damping and stiffness parameters.
    f_n_hz : float
        sqrt(k1/m0)/(2π), NaN when k1/m0 <= 0.
    zeta : float
        c1 / (2·sqrt(k1·m0)), NaN when undefined.
    nrmse : float
        Force residual rms / force std of the linear fit.
    units : mapping
        Unit per coefficient.
    x_unit : str
        Unit of displacement.
    f_n_se, zeta_se : float
        Standard errors of ``f_n_hz`` and ``zeta`` (first-order propagation of the fit's covariance
        of m0, c1, k1, inflated for correlated residuals: see :func:`equivalent_linear`); NaN when
        unknown.
    """

    record: str
    x_rms: float
    m0: float
    c1: float
    k1: float
    f_n_hz: float
    zeta: float
    nrmse: float
    units: Mapping[str, str]
    x_unit: str = "m"
    f_n_se: float = math.nan
    zeta_se: float = math.nan


def _inflation(fit: FitResult) -> float:
    """sqrt(1 + 2·Σρ_k) of the force residual (lags until ρ first drops below 0): the factor by
    which correlated residuals widen the least-squares standard errors (effective sample size)."""
    if not fit.records:
        return 1.0
    rf = fit.records[0]
    chans = [c for c in rf.fitted_channels if c in rf.predicted and c in rf.measured]
    if not chans:
        return 1.0
    r = np.asarray(rf.predicted[chans[0]] - rf.measured[chans[0]], dtype=np.float64)
    r = r - r.mean()
    if r.size < 16 or not np.any(r):
        return 1.0
    n = r.size
    spec = np.fft.rfft(r, 2 * n)
    acf = np.fft.irfft(spec * np.conj(spec))[: min(n, 2000)]
    if not (math.isfinite(acf[0]) and acf[0] > 0):  # residuals so small their squares underflow, or not finite
        return 1.0
    acf = acf / acf[0]
    neg = np.flatnonzero(acf[1:] <= 0)
    stop = int(neg[0]) + 1 if neg.size else acf.size
    return float(math.sqrt(max(1.0, 1.0 + 2.0 * float(np.sum(acf[1:stop])))))


def _propagated_se(fit: FitResult, roles: tuple[str, ...], m0: float, c1: float, k1: float) -> tuple[float, float]:
    """Standard errors of f_n = sqrt(k1/m0)/2π and ζ = c1/(2·sqrt(k1·m0)) from the fit's covariance."""
    unc = fit.uncertainty
    if unc is None or any(n not in unc.names for n in roles):
        return math.nan, math.nan
    idx = [unc.names.index(n) for n in roles]
    cov = np.asarray(unc.covariance, dtype=np.float64)[np.ix_(idx, idx)] * _inflation(fit) ** 2
    if not np.isfinite(cov).all():
        return math.nan, math.nan
    f_n = math.sqrt(k1 / m0) / (2 * math.pi)
    zeta = c1 / (2 * math.sqrt(k1) * math.sqrt(m0))
    # gradients with respect to (m0, c1, k1)
    g_f = np.array([-0.5 * f_n / m0, 0.0, 0.5 * f_n / k1])
    g_z = np.array([-0.5 * zeta / m0, zeta / c1 if c1 != 0 else 1 / (2 * math.sqrt(k1 * m0)), -0.5 * zeta / k1])
    return float(math.sqrt(max(g_f @ cov @ g_f, 0.0))), float(math.sqrt(max(g_z @ cov @ g_z, 0.0)))


def equivalent_linear(records: Sequence[Record]) -> tuple[EquivalentLinear, ...]:
    """Equivalent linear parameters of each record (e.g. one per excitation level), sorted by level.

    Parameters
    ----------
    records : sequence of Record
        Records of one structure; missing v, a are derived (Savitzky-Golay).

    Returns
    -------
    tuple of EquivalentLinear
        With standard errors of the natural frequency and damping ratio: the equation-error
        covariance of m0, c1, k1 propagated to first order, its standard errors widened by
        ``sqrt(1 + 2·Σρ_k)`` of the force residual's autocorrelation (a residual of derived,
        smoothed signals is strongly correlated; the plain least-squares errors would be too small).
    """
    if not records:
        raise DataValidationError("`records` is empty")
    model = TermModel(baseline_terms())
    roles = tuple(baseline_parameter(r) for r in ("mass", "damping", "stiffness"))
    out = []
    for rec in records:
        rec = _check_record(rec, "records")
        full = _with_va(rec)
        params = model.default_parameters(force_unit=rec.unit("f"), x_unit=rec.unit("x")).update(
            roles[2], lower=-math.inf)
        fit = equation_error(full, model, params, FitOptions(method="equation-error", covariance="independent"))
        m0, c1, k1 = (fit.values[n] for n in roles)
        ok = m0 > 0 and k1 > 0
        f_se, z_se = _propagated_se(fit, roles, m0, c1, k1) if ok else (math.nan, math.nan)
        out.append(EquivalentLinear(
            record=rec.name, x_rms=float(np.sqrt(np.mean((rec.x - rec.x.mean()) ** 2))), m0=m0, c1=c1, k1=k1,
            f_n_hz=math.sqrt(k1 / m0) / (2 * math.pi) if ok else math.nan,
            zeta=c1 / (2 * math.sqrt(k1) * math.sqrt(m0)) if ok else math.nan,  # k1·m0 may underflow (1e-200 N)
            nrmse=fit.metrics[0].nrmse, units={e.name: e.unit for e in fit.estimates}, x_unit=rec.unit("x"),
            f_n_se=f_se, zeta_se=z_se,
        ))
    return tuple(sorted(out, key=lambda e: e.x_rms))


def level_drift_summary(levels: Sequence[EquivalentLinear]) -> tuple[str, ...]:
    """Plain-language reading of how the equivalent linear parameters change with level.

    Parameters
    ----------
    levels : sequence of EquivalentLinear
        From :func:`equivalent_linear`, sorted by level.

    Returns
    -------
    tuple of str
        A change between the lowest and highest level is called a trend only when it exceeds
        ``LEVEL_SIGNIFICANCE`` combined standard errors (and ``LEVEL_DRIFT`` relative change).
    """
    if len(levels) < 2:
        return ("load records at two or more excitation levels to see whether the equivalent linear"
                " parameters drift",)
    lo, hi = levels[0], levels[-1]
    out: list[str] = []
    if math.isfinite(lo.f_n_hz) and math.isfinite(hi.f_n_hz):
        shift = hi.f_n_hz / lo.f_n_hz - 1
        se = math.hypot(lo.f_n_se, hi.f_n_se)
        within = math.isfinite(se) and abs(hi.f_n_hz - lo.f_n_hz) <= LEVEL_SIGNIFICANCE * se
        if within:
            out.append(f"the equivalent natural frequency does not change beyond its uncertainty across levels"
                       f" ({lo.f_n_hz:.4g} ± {lo.f_n_se:.2g} -> {hi.f_n_hz:.4g} ± {hi.f_n_se:.2g} Hz): no trend")
        elif abs(shift) > LEVEL_DRIFT:
            kind = "hardening (k3 > 0 likely)" if shift > 0 else "softening (k3 < 0 or a gap likely)"
            out.append(f"the equivalent natural frequency moves by {100 * shift:+.1f} % from the lowest to the"
                       f" highest level ({lo.f_n_hz:.3g} -> {hi.f_n_hz:.3g} Hz): {kind}")
        else:
            out.append(f"the equivalent natural frequency stays within {100 * LEVEL_DRIFT:.0f} % across levels"
                       f" ({lo.f_n_hz:.3g} -> {hi.f_n_hz:.3g} Hz)")
    if math.isfinite(lo.zeta) and math.isfinite(hi.zeta) and lo.zeta > 0:
        change = hi.zeta / lo.zeta - 1
        se_z = math.hypot(lo.zeta_se, hi.zeta_se)
        if math.isfinite(se_z) and abs(hi.zeta - lo.zeta) <= LEVEL_SIGNIFICANCE * se_z:
            out.append(f"the equivalent damping ratio does not change beyond its uncertainty ({lo.zeta:.3g} ±"
                       f" {lo.zeta_se:.2g} -> {hi.zeta:.3g} ± {hi.zeta_se:.2g})")
        elif abs(change) > 2 * LEVEL_DRIFT:
            why = ("damping grows with amplitude: quadratic damping (c2) likely" if change > 0 else
                   "damping falls with amplitude: Coulomb friction (fc) likely")
            out.append(f"the equivalent damping ratio changes by {100 * change:+.0f} % ({lo.zeta:.3g} ->"
                       f" {hi.zeta:.3g}): {why}")
    return tuple(out)
