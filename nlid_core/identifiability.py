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

When the residual is serially correlated (coloured: a force measured with noise drives the simulated
response with filtered noise; a real rig adds unmodelled dynamics), the rows are not independent and the
formulas above understate the uncertainty. With ``serial_blocks`` (the row ranges of each record) the
covariance is the Newey–West sandwich
:math:`C = (J^\top J)^+ \Omega (J^\top J)^+ \cdot n/(n-p)`,
:math:`\Omega = \sum_{|l| \le L} (1 - |l|/(L+1)) \sum_t s_t s_{t-l}^\top`, :math:`s_t = J_t r_t`, summed within each
block (rows of different blocks are independent); the window ``L`` is three times the lag at which the
block's residual autocorrelation falls below 0.05, at most a twentieth of the block (Newey and West,
Econometrica 55(3), 1987, doi:10.2307/1913610). For white residuals (L = 0) it is the usual
:math:`\hat\sigma^2 (J^\top J)^+` up to n/(n − p).

Intervals are Wald intervals ``value ± t_{0.975, m-n} · se``.
References: Bates & Watts, *Nonlinear Regression Analysis and Its
Applications* (1988), ch. 2; scipy ``curve_fit`` (covariance by SVD).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sp_fft
from scipy import special

from .metrics import rms, whiteness_test

__all__ = [
    "Uncertainty",
    "uncertainty_from_jacobian",
    "column_norms",
    "rescale_uncertainty",
    "weak_directions_text",
    "rank_summary",
    "RSE_LIMIT",
    "CORR_LIMIT",
    "correlation_length",
    "serially_correlated",
    "newey_west_note",
    "SerialBlock",
    "t_quantile",
]

FloatArray = NDArray[np.float64]
#: The rows of one record in the Newey–West covariance: a ``(start, stop)`` range, or a tuple of such ranges of
#: equal length (the record's channels, row k of each at the same time).
SerialBlock = tuple[int, int] | tuple[tuple[int, int], ...]

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
    scaled_covariance : (n, n) ndarray or None
        Covariance of the coefficients of the unit-norm columns
        (``covariance`` divided by the outer product of the inverse column
        norms); its diagonal is the variance inflation factor times σ².
    column_norms : (n,) ndarray or None
        Norms of the Jacobian's columns (0 for a column that is zero).
    serial_lag : int
        The Newey–West window used (largest over the blocks; 0 for white residuals or without
        ``serial_blocks``).
    serial : bool
        True when the covariance is the Newey–West one (the residual is serially correlated).
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
    scaled_covariance: FloatArray | None = None
    column_norms: FloatArray | None = None
    serial_lag: int = 0
    serial: bool = False


def column_norms(a: FloatArray) -> FloatArray:
    """Euclidean norm of each column of ``a`` without under- or overflow.

    Each column is divided by its largest magnitude before squaring, so the
    norm of a column of 1e-200 (whose squares underflow to 0) or of 1e200
    (whose squares overflow) is still exact to rounding. Non-finite columns
    give ``nan``.
    """
    a = np.asarray(a, dtype=np.float64)
    if a.shape[0] == 0:
        return np.zeros(a.shape[1])
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        quick = np.sqrt(np.einsum("ij,ij->j", a, a))  # one pass; exact unless squares left the float range
    if np.all((quick > 1e-140) & (quick < 1e140)):
        return quick  # type: ignore[no-any-return]
    with np.errstate(invalid="ignore"):
        peak = np.max(np.abs(a), axis=0)
    ok = np.isfinite(peak) & (peak > 0)
    safe = np.where(ok, peak, 1.0)
    out = np.where(ok, safe * np.sqrt(np.sum((a / safe) ** 2, axis=0)), 0.0)
    return np.where(np.isfinite(peak), out, np.nan)


def least_squares_solve(a: FloatArray, b: FloatArray) -> FloatArray:
    """``argmin ‖a z − b‖`` for a tall ``a`` of few columns: from the normal equations of the column-normalised
    problem when their Cholesky factor is well conditioned (diagonal ratio above 1e-3, so the columns' condition
    is below ~1e3 and the squaring loses nothing that matters), else by LAPACK's SVD-based solver."""
    from scipy.linalg.lapack import dtrtrs

    norms = np.sqrt(np.einsum("ij,ij->j", a, a))
    if norms.size and np.all(norms > 0) and np.all(np.isfinite(norms)):
        gram = (a.T @ a) / np.outer(norms, norms)
        try:
            low = np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            low = None
        if low is not None and np.diag(low).min() > 1e-3 * np.diag(low).max():
            y, info = dtrtrs(low, (a.T @ b) / norms, lower=1)
            if info == 0:
                z, info = dtrtrs(low, y, lower=1, trans=1)
                if info == 0:
                    return np.asarray(z / norms, dtype=np.float64)
    z, *_ = np.linalg.lstsq(a, b, rcond=None)
    return np.asarray(z, dtype=np.float64)


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
    serial_blocks: Sequence[SerialBlock] | None = None,
    serial_auto: bool = False,
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
    serial_blocks : sequence of SerialBlock or None
        Row ranges (records; several equal-length ranges for the channels
        of one record) within which the residual may be serially
        correlated: the Newey–West covariance of the module notes instead of
        the per-group one (``groups`` is then not used).
    serial_auto : bool
        With ``serial_blocks``: take the Newey–West covariance only when
        some range's residual fails the whiteness test of the reports
        (:func:`serially_correlated`), else the per-group one, so that
        white residuals keep the usual intervals.

    Returns
    -------
    Uncertainty
        Every quantity is computed in the column-scaled problem and only
        mapped to physical units at the end, so columns of 1e-200 or 1e200
        (a force recorded in odd units) give the same relative standard
        errors and correlations as well-scaled ones. A covariance entry that
        cannot be represented in floating point (a variance of 1e-400) is 0
        or inf; ``stderr`` stays exact. A Jacobian with non-finite entries
        (or one the SVD cannot decompose) gives rank 0 and infinite standard
        errors instead of an exception.
    """
    jac = np.asarray(jac, dtype=np.float64)
    r = np.asarray(residual, dtype=np.float64)
    m, n = jac.shape
    m_data = m - extra_rows
    norms = column_norms(jac)
    if not (np.all(np.isfinite(norms)) and np.all(np.isfinite(r[:m_data]))):
        return _undetermined(names, n, max(m_data - n, 1) if dof is None else int(dof), confidence)
    safe = np.where(norms > 0, norms, 1.0)
    js = jac / safe
    try:
        # the singular values and right vectors of js are those of its triangular factor R (js = QR): the
        # SVD of a p × p matrix, without forming the m × p left vectors
        tri = np.linalg.qr(js, mode="r") if m > n else js
        _, s, vt = np.linalg.svd(tri, full_matrices=False)
    except np.linalg.LinAlgError:  # pragma: no cover - unit columns of finite numbers converge
        return _undetermined(names, n, max(m_data - n, 1) if dof is None else int(dof), confidence)
    smax = float(s[0]) if s.size else 0.0
    keep = s > rank_rtol * smax if smax > 0 else np.zeros_like(s, dtype=bool)
    rank = int(keep.sum())
    v = vt.T
    inv_s2 = np.where(keep, 1.0 / np.where(keep, s, 1.0) ** 2, 0.0)
    pinv_s = (v * inv_s2) @ v.T  # (Js^T Js)^+ of the unit-norm columns
    dinv = np.where(norms > 0, 1.0 / safe, 0.0)
    if sigma2 is not None:
        dof_known = int(dof) if dof is not None else max(m_data - n, 1)
        sig_known = math.sqrt(float(sigma2))
        return _finish(names, pinv_s, sig_known, dinv, v, s, keep, norms, smax, rank, dof_known,
                       np.array([sig_known]), confidence)
    dof = max(m_data - n, 1)
    if serial_blocks is not None and (not serial_auto or serially_correlated(r[:m_data], serial_blocks)):
        return _serial(names, js, r, m_data, pinv_s, dinv, v, s, keep, norms, smax, rank, dof, serial_blocks,
                       confidence)
    g = np.zeros(m_data, dtype=np.int64) if groups is None else np.asarray(groups[:m_data], dtype=np.int64)
    ng = int(g.max()) + 1 if g.size else 1
    rd = r[:m_data]
    sig_g = np.zeros(ng)
    for k in range(ng):
        sel = g == k
        if sel.any():
            sig_g[k] = rms(rd[sel]) * math.sqrt(m_data / dof)
    ref = float(sig_g.max()) if sig_g.size and sig_g.max() > 0 else 1.0
    rel2 = (sig_g / ref) ** 2
    if ng == 1:
        cov_s = rel2[0] * pinv_s
    else:
        jd = js[:m_data]
        meat = (jd * rel2[g][:, None]).T @ jd
        if extra_rows:
            # prior rows count as information at the mean noise level
            jp = js[m_data:]
            meat = meat + float(np.mean(rel2)) * (jp.T @ jp)
        cov_s = pinv_s @ meat @ pinv_s
    return _finish(names, cov_s, ref, dinv, v, s, keep, norms, smax, rank, dof, sig_g, confidence)


def t_quantile(confidence: float, dof: int) -> float:
    """The two-sided Student-t quantile of a ``confidence`` interval with ``dof`` degrees of freedom (at least 1)."""
    return float(special.stdtrit(max(int(dof), 1), 0.5 + confidence / 2))  # the ufunc is cheap


def correlation_length(r: FloatArray, threshold: float = 0.05) -> int:
    """First lag at which the autocorrelation of ``r`` falls below ``threshold`` (by FFT; 0 for a constant)."""
    n = r.size
    x = r - r.mean()
    spec = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(spec * np.conj(spec))[:n]
    if n == 0 or acf[0] <= 0:
        return 0
    acf = acf / acf[0]
    below = np.flatnonzero(np.abs(acf) < threshold)
    return int(below[0]) if below.size else n


def _window_weights(lag: int, nfft: int) -> FloatArray:
    """The DFT of the Bartlett window ``1 − |l|/(lag+1)`` for |l| ≤ lag (real and non-negative: Fejér's kernel),
    at the ``nfft // 2 + 1`` frequencies of a real FFT of length ``nfft``."""
    w = np.zeros(nfft)
    ls = np.arange(lag + 1)
    w[ls] = 1.0 - ls / (lag + 1)
    if lag:
        w[nfft - ls[1:]] = w[ls[1:]]
    return np.asarray(sp_fft.rfft(w).real, dtype=np.float64)


def _block_ranges(block: SerialBlock) -> tuple[tuple[int, int], ...]:
    """The row ranges of one serial block: one ``(start, stop)``, or several of equal length (the channels of
    one record, row k of each at the same time)."""
    if len(block) == 2 and all(isinstance(b, (int, np.integer)) for b in block):
        return ((int(block[0]), int(block[1])),)  # type: ignore[arg-type]
    return tuple((int(a), int(b)) for a, b in block)  # type: ignore[misc]


def newey_west_note(unc: Uncertainty, residual: str = "residual") -> str:
    """The warning every estimator gives when its intervals are the Newey–West ones."""
    return (f"the {residual} is serially correlated (not white): the intervals are Newey–West ones (window"
            f" {unc.serial_lag} samples), wider than those of independent samples")


def serially_correlated(residual: FloatArray, blocks: Sequence[SerialBlock]) -> bool:
    """Whether the residual of any row range of ``blocks`` fails the Ljung–Box whiteness test the reports print
    (:func:`nlid_core.metrics.whiteness_test`, p below 0.01)."""
    r = np.asarray(residual, dtype=np.float64)
    for block in blocks:
        for a, b in _block_ranges(block):
            if b - a >= 8 and not whiteness_test(r[a:b]).white:
                return True
    return False


def _serial(names: Sequence[str], js: FloatArray, r: FloatArray, m_data: int, pinv_s: FloatArray, dinv: FloatArray,
            v: FloatArray, s: FloatArray, keep: NDArray[np.bool_], norms: FloatArray, smax: float, rank: int, dof: int,
            blocks: Sequence[SerialBlock], confidence: float) -> Uncertainty:
    """The Newey–West covariance of the module notes (``js`` the unit-norm columns). The channels of one block
    add their scores at each time, so that their cross-correlation counts; the lagged sums are taken at once in
    the frequency domain (Σ_l w_l Γ_l = Re Sᴴ diag(Ŵ) S / N, Ŵ the window's DFT), so a window of thousands of
    samples costs two FFTs per column."""
    rd = r[:m_data]
    ref = rms(rd) * math.sqrt(m_data / dof) if m_data else 1.0
    ref = ref if ref > 0 and math.isfinite(ref) else 1.0
    scores = js[:m_data] * (rd / ref)[:, None]
    p = scores.shape[1]
    omega = np.zeros((p, p))
    covered = np.zeros(m_data, dtype=bool)
    lag_max = 0
    for block in blocks:
        ranges = _block_ranges(block)
        length = ranges[0][1] - ranges[0][0]
        if length <= 0 or any(b - a != length for a, b in ranges):
            raise ValueError(f"serial block {block}: its ranges must be non-empty and of one length")
        sc = np.zeros((length, p))
        corr = 0
        for a, b in ranges:
            sc += scores[a:b]
            covered[a:b] = True
            corr = max(corr, correlation_length(rd[a:b]))
        lag = min(3 * corr, max(length // 20, 0))
        lag_max = max(lag_max, lag)
        if lag == 0:
            omega += sc.T @ sc
            continue
        nfft = sp_fft.next_fast_len(length + lag + 1, real=True)
        spec = sp_fft.rfft(sc, nfft, axis=0)
        wk = _window_weights(lag, nfft)
        wk[1:(nfft + 1) // 2] *= 2.0  # the bins a real FFT stores once stand for two
        omega += ((spec.T * wk) @ spec.conj()).real / nfft
    if not covered.all():  # rows outside every block are independent
        rest = scores[~covered]
        omega += rest.T @ rest
    if js.shape[0] > m_data:  # prior rows count as information at the noise level
        jp = js[m_data:]
        omega += jp.T @ jp
    cov_s = pinv_s @ omega @ pinv_s * (m_data / max(m_data - rank, 1))
    unc = _finish(names, cov_s, ref, dinv, v, s, keep, norms, smax, rank, dof, np.array([ref]), confidence)
    return dataclasses.replace(unc, serial_lag=lag_max, serial=True)


def _undetermined(names: Sequence[str], n: int, dof: int, confidence: float) -> Uncertainty:
    """Nothing is determined: a Jacobian that is not finite."""
    inf = np.full(n, np.inf)
    nan = np.full((n, n), np.nan)
    corr = nan.copy()
    np.fill_diagonal(corr, 1.0)
    return Uncertainty(
        names=tuple(names), covariance=nan, stderr=inf, correlation=corr, ci_halfwidth=inf.copy(),
        singular_values=np.zeros(n), condition_number=math.inf, rank=0, directions=np.eye(n), dof=dof,
        sigma=np.array([np.nan]),
    )


def _finish(
    names: Sequence[str],
    cov_s: FloatArray,
    sigma_ref: float,
    dinv: FloatArray,
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
    """Standard errors, correlations and the physical covariance ``C = (σ D) C_s (σ D)``.

    ``cov_s`` is the covariance of the unit-norm columns in units of
    ``sigma_ref²``; standard errors are ``sigma_ref · dinv · sqrt(diag C_s)``
    (a product of representable factors), correlations come from ``C_s``.
    """
    n = cov_s.shape[0]
    var_s = np.diag(cov_s).copy()
    # directions outside the numerical range have unbounded variance
    null = v[:, ~keep]
    undetermined = np.zeros(n, dtype=bool)
    if null.size:
        undetermined = np.any(np.abs(null) > 1e-3, axis=1)
    var_s[undetermined] = np.inf
    var_s[norms == 0] = np.inf
    unit = sigma_ref * dinv
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        se = np.where(np.isinf(var_s), np.inf, unit * np.sqrt(np.maximum(var_s, 0.0)))
        d = np.sqrt(np.maximum(np.diag(cov_s), 0.0))
        corr = cov_s / np.outer(d, d)
        cov = np.outer(unit, unit) * cov_s
        cov_scaled = sigma_ref**2 * cov_s
    corr[~np.isfinite(corr)] = np.nan
    np.fill_diagonal(corr, 1.0)
    tq = t_quantile(confidence, dof)
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
        scaled_covariance=cov_scaled,
        column_norms=norms,
    )


def rescale_uncertainty(unc: Uncertainty, exponents: NDArray[np.int64]) -> Uncertainty:
    """The same uncertainty for parameters ``p_j = q_j · 2**exponents[j]``.

    Correlations, singular values and directions do not change; standard
    errors and intervals scale with ``2**e_j`` and the covariance with
    ``2**(e_i + e_j)`` (exact; an entry outside floating point becomes 0 or
    inf). Columns beyond ``len(exponents)`` (initial states) are unchanged.
    """
    n = len(unc.names)
    e = np.zeros(n, dtype=np.int64)
    e[: len(exponents)] = np.asarray(exponents, dtype=np.int64)
    with np.errstate(over="ignore", under="ignore"):
        cov = np.ldexp(unc.covariance, e[:, None] + e[None, :])
        stderr = np.ldexp(unc.stderr, e)
        half = np.ldexp(unc.ci_halfwidth, e)
        norms = None if unc.column_norms is None else np.ldexp(unc.column_norms, -e)
    return dataclasses.replace(unc, covariance=cov, stderr=stderr, ci_halfwidth=half, column_norms=norms)


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


def rank_summary(unc: Uncertainty) -> str:
    """``"rank r of n (p parameters and k initial states)"``: what the estimated columns are, since output
    error also estimates initial states (``x0[k]``, ``v0[k]``) beside the parameters."""
    n_init = sum(1 for n in unc.names if n.startswith(("x0[", "v0[")))
    n_par = len(unc.names) - n_init
    what = f"{n_par} parameter{'' if n_par == 1 else 's'}"
    if n_init:
        what += f" and {n_init} initial state{'' if n_init == 1 else 's'}"
    return f"rank {unc.rank} of {len(unc.names)} ({what})"
