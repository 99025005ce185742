"""Uncertainty of the staged LuGre estimate: noise levels, the two noise sources of the pre-sliding fit
(displacement sensor and measured force), information, conditioning and the parameter table.

The linear algebra is the one uncertainty path's (:func:`nlid_core.identifiability.uncertainty_from_jacobian`:
unit-norm columns, SVD with a rank threshold, Student-t quantile, ``RSE_LIMIT`` and ``CORR_LIMIT`` flags);
what is particular to friction is which covariance enters: the sensor's and the measured force's noise
propagated through the fit, or the residual's Newey–West covariance when that is larger."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from ..estimate import ParameterEstimate
from ..identifiability import CORR_LIMIT, RSE_LIMIT, Uncertainty, t_quantile, uncertainty_from_jacobian
from ..models import TermModel
from ..params import FloatArray
from . import joint
from .joint import JointData
from .results import FrictionOptions

__all__ = ["noise_level", "t_quantile", "noise_covariance", "log_det", "inverse_information", "condition_number",
           "estimates"]

def noise_level(x: FloatArray) -> float:
    """White-noise level of a sampled signal: the residual of a local cubic (Savitzky–Golay, 7 points) is
    noise for any signal with at least ~10 samples per period; its robust spread (MAD), divided by
    √(1 − h) with h = 1/3 the smoother's central weight, estimates the noise standard deviation."""
    from scipy.signal import savgol_filter

    if x.size < 15:
        return max(float(np.std(x)), 1e-300)
    res = x - savgol_filter(x, 7, 3)
    sd = float(np.median(np.abs(res - np.median(res)))) / 0.6745 / math.sqrt(1.0 - 1.0 / 3.0)
    return max(sd, 1e-12 * float(np.sqrt(np.mean(x**2))), 1e-300)


def noise_covariance(data: JointData, values: Mapping[str, float], offsets: FloatArray, free: Sequence[str],
                      J: FloatArray, info_inv: FloatArray, blocks: Sequence[tuple[int, int]],
                      noise_x: Sequence[float], noise_f: Sequence[float], cov_hac: FloatArray, opts: FrictionOptions
                      ) -> tuple[FloatArray, FloatArray, str]:
    """Covariance of the estimate from its two noise sources, the force noise's bias, and how they were
    obtained.

    The displacement sensor's white noise gives ``(JᵀJ)⁻¹·(σ_x/σ)²``; noise on the measured force is
    propagated through the dynamics, and its bias estimated, by :func:`.joint.input_noise_effect`. The
    bias is returned (to be subtracted) when it is significant for some parameter (beyond twice its
    standard error over the draws); the covariance then includes the correction's own variance. The sum
    is compared with the residual's Newey–West covariance (which also covers model error, but not the
    non-stationary drift that force noise causes in pre-sliding creep): the larger one is reported.
    """
    npts = len(data.points)  # curve rows come first, already normalised by their standard errors
    sig = np.concatenate([np.ones(npts), *(np.full(b1 - b0, data.sigma[k]) for k, (b0, b1) in enumerate(blocks))])
    sensor = np.concatenate([np.ones(npts), *(np.full(b1 - b0, noise_x[k]) for k, (b0, b1) in enumerate(blocks))])
    w = (sensor / sig) ** 2
    Jw = J * np.sqrt(w)[:, None]
    cov_sensor = info_inv @ (Jw.T @ Jw) @ info_inv
    cov_in, mean_in = joint.input_noise_effect(data, values, offsets, free, noise_f, draws=opts.draws,
                                               rng=opts.seed)
    zero = np.zeros(J.shape[1])
    model_cov = cov_sensor + cov_in
    if not np.all(np.isfinite(model_cov)):
        return cov_hac, zero, "uncertainties from the residual (Newey-West): the force-noise propagation failed"
    se_mean = np.sqrt(np.maximum(np.diag(cov_in), 0.0) / opts.draws)
    npar = len(free)
    significant = bool(np.any(np.abs(mean_in[:npar]) > 2 * se_mean[:npar]))
    bias = mean_in if significant else zero
    if significant:
        model_cov = model_cov + cov_in / opts.draws
    forces = ", ".join(f"{1e3 * nf:.3g} mN" for nf in noise_f)
    note = ""
    if significant:
        note = ("; the force noise biases output error (errors in variables), corrected by simulation "
                "extrapolation: " + ", ".join(f"{n} {-b:+.3g}" for n, b in zip(free, mean_in[:npar], strict=True)))
    if float(np.trace(cov_hac @ np.linalg.pinv(model_cov))) > cov_hac.shape[0] * 1.5:
        return cov_hac, bias, ("uncertainties from the residual (Newey-West): it is larger than the sensor noise "
                               "and the force noise explain — model error or unmodelled disturbances" + note)
    return model_cov, bias, (f"uncertainties from the displacement noise ({', '.join(f'{s:.3g} m' for s in noise_x)})"
                             f" and the force noise ({forces}) propagated through the dynamics ({opts.draws} draws)"
                             + note)


def log_det(c: FloatArray) -> float:
    sign, val = np.linalg.slogdet(c)
    return float(val) if sign > 0 else math.inf


def _unit_information(J: FloatArray) -> Uncertainty:
    # σ = 1: the covariance is (JᵀJ)⁺ on unit-norm columns, singular values below 1e-12 of the largest dropped
    return uncertainty_from_jacobian(J, np.zeros(J.shape[0]), [f"p{k}" for k in range(J.shape[1])], sigma2=1.0,
                                     rank_rtol=1e-12)


def inverse_information(J: FloatArray) -> FloatArray:
    """(JᵀJ)⁺ computed on unit-norm columns (the columns differ by many orders of magnitude: N/m against
    metres of offset), with singular values below 1e-12 of the largest treated as zero (infinite variance
    along those directions would be honest; they are reported through the condition number)."""
    return np.asarray(_unit_information(J).covariance, dtype=np.float64)


def condition_number(J: FloatArray) -> float:
    """Condition number of the column-normalised Jacobian (inf when a direction is not determined)."""
    if J.size == 0:
        return math.nan
    return float(_unit_information(J).condition_number)


def estimates(model: TermModel, values: Mapping[str, float], names: Sequence[str], cov: FloatArray,
               fixed: Mapping[str, float], dof: int, confidence: float
               ) -> tuple[tuple[ParameterEstimate, ...], FloatArray]:
    se = np.sqrt(np.maximum(np.diag(cov), 0.0))
    d = np.where(se > 0, se, 1.0)
    corr = cov / np.outer(d, d)
    q = t_quantile(confidence, dof)
    units = {p.name: p.unit for p in model.default_parameters()}
    defaults = {p.name: p for p in model.default_parameters()}
    out = []
    for n in model.param_names:
        p = defaults[n]
        if n in names:
            i = list(names).index(n)
            val, s = float(values[n]), float(se[i])
            flags: list[str] = []
            notes: list[str] = []
            if s > RSE_LIMIT * abs(val) or not math.isfinite(s):
                flags.append("unidentifiable")
            for j, m in enumerate(names):
                if j != i and abs(corr[i, j]) > CORR_LIMIT:
                    if "strongly_correlated" not in flags:
                        flags.append("strongly_correlated")
                    notes.append(f"ρ({n}, {m}) = {corr[i, j]:+.3f}")
            out.append(ParameterEstimate(name=n, value=val, stderr=s, ci=(val - q * s, val + q * s), unit=units[n],
                                         vary=True, lower=p.lower, upper=p.upper, flags=tuple(flags),
                                         notes=tuple(notes)))
        else:
            val = float(values.get(n, p.value))
            out.append(ParameterEstimate(name=n, value=val, stderr=0.0, ci=(val, val), unit=units[n], vary=False,
                                         lower=p.lower, upper=p.upper, flags=("fixed",),
                                         notes=("given",) if n in fixed else ()))
    return tuple(out), corr
