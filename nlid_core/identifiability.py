r"""Parameter uncertainty and identifiability diagnostics from a Jacobian.

Given the weighted residual Jacobian :math:`J` (m × n) at the estimate, its
columns are scaled to unit norm, :math:`J_s = J D` with
:math:`D = \mathrm{diag}(1/\|J_{:,j}\|)`, and decomposed
:math:`J_s = U \Sigma V^\top`. Singular values below
``rank_rtol · σ_max`` are treated as zero (those directions are not
determined by the data). Then

.. math::

    (J^\top J)^{+} = D\,V \Sigma^{-2} V^\top D .

When residual groups (records × channels) have different noise levels the
covariance is the sandwich
:math:`C = (J^\top J)^+ J^\top \mathrm{diag}(\hat\sigma_g^2) J (J^\top J)^+`
with :math:`\hat\sigma_g^2` the mean squared residual of group *g*
(corrected for the degrees of freedom); with one group it reduces to
:math:`\hat\sigma^2 (J^\top J)^{+}`. The condition number reported is that
of :math:`J_s` (the raw one is meaningless when units differ by 10⁴).

Intervals are Wald intervals ``value ± t_{0.975, m-n} · se``.
References: Bates & Watts, *Nonlinear Regression Analysis and Its
Applications* (1988), ch. 2; scipy ``curve_fit`` (covariance by SVD).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

__all__ = ["Uncertainty", "uncertainty_from_jacobian", "weak_directions_text", "RSE_LIMIT", "CORR_LIMIT"]

FloatArray = NDArray[np.float64]

#: Relative standard error above which a parameter is flagged unidentifiable.
RSE_LIMIT = 0.5
#: |correlation| above which two parameters are flagged strongly correlated.
CORR_LIMIT = 0.95
#: Relative singular-value threshold of the scaled Jacobian.
RANK_RTOL = 1e-10


@dataclass(frozen=True, kw_only=True)
class Uncertainty:
    """Covariance and diagnostics for the columns of a Jacobian.

    Attributes
    ----------
    names : tuple of str
    covariance : (n, n) ndarray
    stderr : (n,) ndarray
        ``inf`` for directions the data do not determine.
    correlation : (n, n) ndarray
    ci_halfwidth : (n,) ndarray
        t-quantile times stderr (95 % by default).
    singular_values : (n,) ndarray
        Of the column-scaled Jacobian, descending.
    condition_number : float
        σ_max/σ_min of the column-scaled Jacobian (inf when rank deficient).
    rank : int
    directions : (n, n) ndarray
        Right singular vectors (columns), scaled problem.
    dof : int
        Residual degrees of freedom.
    sigma : (g,) ndarray
        Estimated residual rms per group.
    """

    names: tuple[str, ...]
    covariance: FloatArray
    stderr: FloatArray
    correlation: FloatArray
    ci_halfwidth: FloatArray
    singular_values: FloatArray
    condition_number: float
    rank: int
    directions: FloatArray
    dof: int
    sigma: FloatArray


def uncertainty_from_jacobian(
    jac: FloatArray,
    residual: FloatArray,
    names: Sequence[str],
    *,
    groups: NDArray[np.int64] | None = None,
    confidence: float = 0.95,
    rank_rtol: float = RANK_RTOL,
    extra_rows: int = 0,
    sigma2: float | None = None,
    dof: int | None = None,
) -> Uncertainty:
    """Covariance, standard errors and diagnostics from a residual Jacobian.

    Parameters
    ----------
    jac : (m, n) ndarray
        ∂r/∂θ of the weighted residual at the estimate.
    residual : (m,) ndarray
        Weighted residual at the estimate.
    names : sequence of str
        Column names.
    groups : (m,) int ndarray or None
        Noise group of each row (record × channel); None: one group.
    confidence : float
        Interval level.
    rank_rtol : float
        Relative singular-value threshold.
    extra_rows : int
        Trailing rows of ``jac`` that are prior (regularisation) rows, not
        data; they enter the information but not the noise estimate.
    sigma2, dof : float, int or None
        Known residual variance and degrees of freedom (one noise group);
        then ``jac`` may be any factor with the same ``JᵀJ`` (e.g. the R of a
        QR decomposition) and ``residual`` is not used.
    """
    jac = np.asarray(jac, dtype=np.float64)
    r = np.asarray(residual, dtype=np.float64)
    m, n = jac.shape
    m_data = m - extra_rows
    norms = np.linalg.norm(jac, axis=0)
    safe = np.where(norms > 0, norms, 1.0)
    js = jac / safe
    _, s, vt = np.linalg.svd(js, full_matrices=False)
    smax = s[0] if s.size else 0.0
    keep = s > rank_rtol * smax if smax > 0 else np.zeros_like(s, dtype=bool)
    rank = int(keep.sum())
    v = vt.T
    inv_s2 = np.where(keep, 1.0 / np.where(keep, s, 1.0) ** 2, 0.0)
    dinv = np.where(norms > 0, 1.0 / safe, 0.0)
    pinv = (dinv[:, None] * v) @ np.diag(inv_s2) @ (v.T * dinv[None, :])
    if sigma2 is not None:
        dof_known = int(dof) if dof is not None else max(m_data - n, 1)
        return _finish(names, jac, pinv, float(sigma2) * pinv, v, s, keep, norms, smax, rank, dof_known,
                       np.array([np.sqrt(sigma2)]), confidence)
    dof = max(m_data - n, 1)
    g = np.zeros(m_data, dtype=np.int64) if groups is None else np.asarray(groups[:m_data], dtype=np.int64)
    ng = int(g.max()) + 1 if g.size else 1
    sig2 = np.zeros(ng)
    for k in range(ng):
        sel = g == k
        cnt = int(sel.sum())
        if cnt:
            sig2[k] = float(np.sum(r[:m_data][sel] ** 2)) / cnt * m_data / dof
    if ng == 1:
        cov = sig2[0] * pinv
    else:
        jd = jac[:m_data]
        meat = (jd * sig2[g][:, None]).T @ jd
        if extra_rows:
            # prior rows count as information at the mean noise level
            jp = jac[m_data:]
            meat = meat + float(np.mean(sig2)) * (jp.T @ jp)
        cov = pinv @ meat @ pinv
    return _finish(names, jac, pinv, cov, v, s, keep, norms, smax, rank, dof, np.sqrt(sig2), confidence)


def _finish(
    names: Sequence[str],
    jac: FloatArray,
    pinv: FloatArray,
    cov: FloatArray,
    v: FloatArray,
    s: FloatArray,
    keep: NDArray[np.bool_],
    norms: FloatArray,
    smax: float,
    rank: int,
    dof: int,
    sigma: FloatArray,
    confidence: float,
) -> Uncertainty:
    n = jac.shape[1]
    var = np.diag(cov).copy()
    # directions outside the numerical range have unbounded variance
    null = v[:, ~keep]
    undetermined = np.zeros(n, dtype=bool)
    if null.size:
        undetermined = np.any(np.abs(null) > 1e-3, axis=1)
    var[undetermined] = np.inf
    var[norms == 0] = np.inf
    se = np.sqrt(np.maximum(var, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    corr[~np.isfinite(corr)] = np.nan
    np.fill_diagonal(corr, 1.0)
    tq = float(special.stdtrit(dof, 0.5 + confidence / 2))  # Student-t quantile (the ufunc is cheap)
    cond = float(smax / s[-1]) if rank == n and s[-1] > 0 else float("inf")
    return Uncertainty(
        names=tuple(names),
        covariance=cov,
        stderr=se,
        correlation=corr,
        ci_halfwidth=tq * se,
        singular_values=s,
        condition_number=cond,
        rank=rank,
        directions=v,
        dof=dof,
        sigma=sigma,
    )


def weak_directions_text(unc: Uncertainty, *, count: int = 2, threshold: float = 0.25) -> tuple[str, ...]:
    """Plain-language description of the weakest scaled directions.

    For the ``count`` smallest singular values, list the parameters whose
    component in that direction exceeds ``threshold`` and how they move
    (together or against each other).
    """
    out: list[str] = []
    s = unc.singular_values
    if s.size == 0:
        return ()
    for k in range(1, min(count, s.size) + 1):
        vec = unc.directions[:, -k]
        big = np.flatnonzero(np.abs(vec) >= threshold)
        if big.size == 0:
            continue
        order = big[np.argsort(-np.abs(vec[big]))]
        ref = np.sign(vec[order[0]])
        same = [unc.names[i] for i in order if np.sign(vec[i]) == ref]
        opp = [unc.names[i] for i in order if np.sign(vec[i]) != ref]
        rel = s[-k] / s[0]
        if opp:
            text = f"{' + '.join(same)} moving against {' + '.join(opp)}"
        else:
            text = f"{' + '.join(same)} moving together" if len(same) > 1 else f"{same[0]} alone"
        out.append(f"{text} (scaled singular value {rel:.2g} of the largest)")
    return tuple(out)
