r"""Identifiability studies around a finished fit, and experiment design before a test.

After a fit
    * :func:`sensitivity_study` — scaled output sensitivities
      :math:`\partial y/\partial\theta_j\cdot|\theta_j|` over time, their
      energy per time window and per frequency band, the Fisher information
      :math:`F = S^\top S/\sigma^2`, its eigen-decomposition in the
      column-scaled problem, the weakest directions in words and the weakest
      parameter with a one-line reason (weak sensitivity and/or correlation).
    * :func:`profile_likelihood` — one parameter held on a grid, the others
      re-fitted by output error; the likelihood-ratio interval
      :math:`2\Delta\mathrm{cost}/s^2 \le \chi^2_1(\mathrm{conf})` compared
      with the Wald interval of the fit.
    * :func:`multistart` — output error from random starts; is the optimum
      unique?
    * :func:`structure_check` — every term removed and every candidate term
      added, compared by AIC/BIC (and validation RMSE), with a recommendation
      per term.
    * :func:`regularisation_path` — Tikhonov priors over a λ grid, the L-curve
      (residual norm against :math:`\|D(\theta-\theta_0)\|`) and its corner.

Before a test
    * :func:`predict_uncertainty` — the standard errors a candidate force
      would give if the prior model were true (Cramér-Rao bound from the
      simulated sensitivities), :func:`compare_designs` and
      :func:`suggest_design` (a grid of linear chirps);
      :func:`monte_carlo_check` compares the prediction with the realised
      scatter of output-error estimates on simulated noisy tests.

Noise level and residual: for a fit, the noise standard deviation of each
record × channel is the rms of its output-error residual (corrected for the
degrees of freedom); for a design it is given (``noise_sd``). The Fisher
information is then :math:`F = \sum_g S_g^\top S_g/\sigma_g^2` and the
covariance its (pseudo-)inverse, computed by
:func:`~nlid_core.identifiability.uncertainty_from_jacobian` on the
σ-weighted sensitivities. Estimated initial states are nuisance columns: they
enter the information (and so the correlations) but are not reported as
parameters.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from .errors import DataValidationError, ModelSpecError
from .estimate import (
    MASS_FLOOR,
    FitOptions,
    FitResult,
    Prior,
    coefficient_scales,
    data_scaling,
    equation_error,
    identify,
    output_error,
    positive_mass,
)
from .examples import chirp_force
from .identifiability import Uncertainty, column_norms, uncertainty_from_jacobian, weak_directions_text
from .models import TermModel, parse_terms
from .params import ParameterSet
from .record import Record, from_arrays
from .simulate import OUTPUT_CHANNELS, SimulationResult, auto_substeps, simulate, simulate_reference

__all__ = [
    "SensitivityStudy",
    "sensitivity_study",
    "Profile",
    "profile_likelihood",
    "MultiStart",
    "multistart",
    "StructureVariant",
    "StructureCheck",
    "structure_check",
    "RegularisationPath",
    "regularisation_path",
    "DesignPrediction",
    "predict_uncertainty",
    "compare_designs",
    "DesignSuggestion",
    "chirp_design",
    "suggest_design",
    "MonteCarloCheck",
    "monte_carlo_check",
]

FloatArray = NDArray[np.float64]
RngLike = np.random.Generator | int | None

#: Candidate terms tried by :func:`structure_check` by default.
CANDIDATE_TERMS: tuple[str, ...] = ("k3", "c2", "k2", "m1", "fc")
#: Profile grid half-width per ``span`` unit, relative to |value|, when the standard error is infinite.
PROFILE_REL_SPAN = 0.1
#: Multistart: factor range of the log-uniform starts for parameters without two finite bounds.
START_FACTOR = (0.3, 3.0)
#: |ΔBIC| below which the evidence for a structure decision is called weak.
WEAK_BIC = 6.0


# --------------------------------------------------------------------------- shared helpers
def _rng(rng: RngLike) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _records(records: Sequence[Record] | Record) -> tuple[Record, ...]:
    recs = (records,) if isinstance(records, Record) else tuple(records)
    if not recs:
        raise DataValidationError("no records given")
    for r in recs:
        if not isinstance(r, Record):
            raise DataValidationError(f"expected Record objects, got {type(r).__name__}")
    return recs


def _model(model: TermModel | str | Sequence[str]) -> TermModel:
    return model if isinstance(model, TermModel) else TermModel(model)


def _param_set(model: TermModel, values: Mapping[str, float] | ParameterSet | ArrayLike) -> ParameterSet:
    """Parameters of ``model`` with the given values (every term must have one); bounds are checked."""
    if isinstance(values, ParameterSet):
        if values.names != model.param_names:
            raise ModelSpecError(f"parameters {values.names} do not match the model terms {model.param_names}")
        return values
    base = model.default_parameters()
    if isinstance(values, Mapping):
        missing = [n for n in model.param_names if n not in values]
        if missing:
            raise ModelSpecError(f"no value given for term(s) {', '.join(missing)} of the model {model}")
        return base.with_values({n: float(values[n]) for n in model.param_names})
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.size != model.n_params:
        raise ModelSpecError(f"{arr.size} parameter values given; the model {model} has {model.n_params} terms")
    return base.with_values(arr)


def _noise_map(noise_sd: float | Mapping[str, float], outputs: Sequence[str]) -> dict[str, float]:
    if isinstance(noise_sd, Mapping):
        missing = [c for c in outputs if c not in noise_sd]
        if missing:
            raise ModelSpecError(f"`noise_sd` gives no standard deviation for output channel(s) {missing}")
        out = {c: float(noise_sd[c]) for c in outputs}
    else:
        out = {c: float(noise_sd) for c in outputs}
    bad = {c: s for c, s in out.items() if not (s > 0 and math.isfinite(s))}
    if bad:
        raise ModelSpecError(f"`noise_sd` must be positive and finite for every output channel, got {bad}")
    return out


def _check_outputs(outputs: Sequence[str]) -> tuple[str, ...]:
    outs = tuple(outputs)
    if not outs or any(o not in OUTPUT_CHANNELS for o in outs) or len(set(outs)) != len(outs):
        raise ModelSpecError(f"`outputs` must be distinct channels from {OUTPUT_CHANNELS}, got {outs}")
    return outs


def _substeps(model: TermModel, theta: FloatArray, dt: float, x: FloatArray, v: FloatArray) -> int:
    """Twice the estimators' automatic substep choice for this response (so integration error stays out)."""
    xr = max(1.5 * float(np.max(np.abs(x))), 1e-300)
    vr = max(1.5 * float(np.max(np.abs(v))), 1e-300)
    return 2 * auto_substeps(model, theta, dt, xr, vr)


def _channel_scale(recs: Sequence[Record], c: str) -> float:
    ms = float(np.mean(np.concatenate([np.asarray(r.channel(c)) ** 2 for r in recs])))
    return math.sqrt(ms) if ms > 0 else 1.0


def _check_oe_fit(fit: FitResult, recs: Sequence[Record], what: str) -> None:
    if fit.method == "equation-error" or not fit.records or "x" not in fit.records[0].predicted:
        raise ModelSpecError(f"{what} needs an output-error or two-stage fit; got method `{fit.method}`")
    if len(recs) != len(fit.records):
        raise DataValidationError(f"{len(recs)} records given for a fit of {len(fit.records)}")
    for r, rf in zip(recs, fit.records, strict=True):
        if r.n != rf.t.size:
            raise DataValidationError(
                f"record `{r.name}` has {r.n} samples; the fit's record `{rf.name}` has {rf.t.size}"
            )


def _fit_x0s(fit: FitResult) -> list[tuple[float, float]]:
    return [(float(rf.x0[0]), float(rf.x0[1])) for rf in fit.records]


def _n_residuals(recs: Sequence[Record], opts: FitOptions) -> int:
    return sum(len(range(0, r.n, opts.sample_step)) for r in recs) * len(opts.outputs)


# --------------------------------------------------------------------------- 1. sensitivity study
@dataclass(frozen=True, kw_only=True)
class SensitivityStudy:
    """Sensitivities, Fisher information and the weakest parameter of a fit.

    Attributes
    ----------
    success : bool
        False when the fit cannot be simulated with sensitivities.
    message : str
    names : tuple of str
        Free model parameters (rows of the per-parameter tables).
    values : (p,) ndarray
        Their estimates.
    columns : tuple of str
        Columns of the information matrix: ``names`` plus estimated initial
        states ``x0[k]``, ``v0[k]``.
    t : tuple of ndarray
        Time of each record.
    scaled_sensitivities : tuple of mapping
        Per record, channel -> (n, p) array of ∂y/∂θ·|θ| (channel units).
    sigma : mapping
        ``(record index, channel)`` -> noise standard deviation from the fit residual.
    window_edges : (w + 1,) ndarray
        Time-window edges as fractions of each record (0 .. 1).
    window_energy : (p, records × w) ndarray
        Σ (∂y/∂θ·|θ|/σ)² per parameter and window (record-major); a row sums
        to θ_j² F_jj.
    band_edges_hz : (b + 1,) ndarray
        Frequency bands (linear, up to 1.25 × the frequency below which 99.9 %
        of the sensitivity energy lies, at most the Nyquist frequency).
    band_energy : (p, b) ndarray
        Energy of each scaled sensitivity per band (Parseval: a row sums to
        its time-domain energy below the last edge).
    peak_frequency_hz : (p,) ndarray
        Centre of each parameter's most informative band.
    fisher : (q, q) ndarray
        Fisher information over ``columns`` in physical units.
    scaled_fisher : (q, q) ndarray
        ``D F D`` with D making the diagonal one (column-scaled problem).
    eigenvalues : (q,) ndarray
        Of ``scaled_fisher``, descending.
    eigenvectors : (q, q) ndarray
        Matching columns.
    condition_number : float
        σ_max/σ_min of the column-scaled weighted sensitivity matrix (the
        square root of that of ``scaled_fisher``), as in the fit diagnostics.
    stderr, rel_stderr : (p,) ndarray
        Cramér-Rao standard errors (√ of the inverse information) and
        relative to |θ|.
    information_share : (p,) ndarray
        θ_j² F_jj / Σ_i θ_i² F_ii: how much of the (scaled) information each
        parameter's own sensitivity carries.
    variance_inflation : (p,) ndarray
        (F⁻¹)_jj F_jj: how much correlation with the other columns inflates
        each variance (1 = uncorrelated).
    correlation : (q, q) ndarray
    weak_directions : tuple of str
        The two weakest scaled directions in words.
    weakest_parameter : str
        Largest relative standard error.
    reason : str
        One line: weak sensitivity and/or correlation with its partner.
    uncertainty : Uncertainty or None
    """

    success: bool
    message: str
    names: tuple[str, ...]
    values: FloatArray
    columns: tuple[str, ...]
    t: tuple[FloatArray, ...]
    scaled_sensitivities: tuple[Mapping[str, FloatArray], ...]
    sigma: Mapping[tuple[int, str], float]
    window_edges: FloatArray
    window_energy: FloatArray
    band_edges_hz: FloatArray
    band_energy: FloatArray
    peak_frequency_hz: FloatArray
    fisher: FloatArray
    scaled_fisher: FloatArray
    eigenvalues: FloatArray
    eigenvectors: FloatArray
    condition_number: float
    stderr: FloatArray
    rel_stderr: FloatArray
    information_share: FloatArray
    variance_inflation: FloatArray
    correlation: FloatArray
    weak_directions: tuple[str, ...]
    weakest_parameter: str
    reason: str
    uncertainty: Uncertainty | None


def _empty_study(message: str, names: tuple[str, ...], values: FloatArray) -> SensitivityStudy:
    p = len(names)
    nan = np.full(p, np.nan)
    return SensitivityStudy(
        success=False, message=message, names=names, values=values, columns=names, t=(), scaled_sensitivities=(),
        sigma={}, window_edges=np.zeros(0), window_energy=np.zeros((p, 0)), band_edges_hz=np.zeros(0),
        band_energy=np.zeros((p, 0)), peak_frequency_hz=nan, fisher=np.zeros((p, p)), scaled_fisher=np.zeros((p, p)),
        eigenvalues=nan, eigenvectors=np.zeros((p, p)), condition_number=math.nan, stderr=nan, rel_stderr=nan,
        information_share=nan, variance_inflation=nan, correlation=np.zeros((p, p)), weak_directions=(),
        weakest_parameter="", reason="", uncertainty=None,
    )


def _reason(name: str, k: int, share: FloatArray, vif: FloatArray, corr: FloatArray, columns: Sequence[str],
            rse: float) -> str:
    p = share.size
    parts = []
    if share[k] <= 0.5 / p or k == int(np.argmin(share)):
        parts.append(f"weak sensitivity (its scaled sensitivity carries {100 * share[k]:.2g} % of the information)")
    row = np.abs(np.nan_to_num(corr[k], nan=0.0))
    row[k] = -1.0
    partner = int(np.argmax(row)) if row.size > 1 else -1
    if partner >= 0 and (vif[k] > 2.0 or not parts):
        parts.append(f"correlation with {columns[partner]} (ρ = {corr[k, partner]:+.2f}; all correlations together"
                     f" inflate its variance {vif[k]:.3g}-fold)")
    if not parts:
        parts.append("the smallest information relative to its value")
    tail = f"relative standard error {100 * rse:.3g} %" if math.isfinite(rse) else "not determined by the data"
    return f"{name}: " + " and ".join(parts) + f"; {tail}"


def sensitivity_study(
    fit: FitResult, records: Sequence[Record] | Record, *, n_windows: int = 10, n_bands: int = 40
) -> SensitivityStudy:
    """Where the information about each parameter comes from, and which parameter is weakest.

    Parameters
    ----------
    fit : FitResult
        An output-error or two-stage fit.
    records : Record or sequence of Record
        The records the fit used, in the same order.
    n_windows : int
        Time windows per record for the energy table.
    n_bands : int
        Frequency bands for the energy spectrum.

    Returns
    -------
    SensitivityStudy
        ``success=False`` with a message when the estimate cannot be
        simulated (or leaves no free parameter).

    Raises
    ------
    ModelSpecError
        ``fit`` is an equation-error fit.
    DataValidationError
        ``records`` do not match the fit's records.
    """
    recs = _records(records)
    _check_oe_fit(fit, recs, "sensitivity_study")
    if n_windows < 1 or n_bands < 1:
        raise ModelSpecError(f"`n_windows` and `n_bands` must be >= 1, got {n_windows} and {n_bands}")
    model, params, opts = fit.model, fit.parameters, fit.options
    names = params.free_names
    free_idx = np.flatnonzero(params.free_mask)
    theta = params.values
    values = theta[free_idx]
    p_model = model.n_params
    if not names:
        return _empty_study("every parameter is fixed: nothing to study", names, values)
    abs_theta = np.abs(values)
    est_x0 = [rf.x0_mode == "estimated" for rf in fit.records]
    columns = list(names)
    for k, e in enumerate(est_x0):
        if e:
            columns += [f"x0[{k}]", f"v0[{k}]"]
    q = len(columns)
    # simulate each record at the estimate, with sensitivities
    sims: list[SimulationResult] = []
    for r, rf in zip(recs, fit.records, strict=True):
        nsub = (int(opts.substeps) if opts.substeps is not None
                else _substeps(model, theta, r.dt, r.x, rf.predicted["v"]))
        sim = simulate(model, r.t, r.f, theta, rf.x0, input_hold=opts.input_hold, substeps=nsub, sensitivities=True,
                       outputs=opts.outputs)
        if not sim.success:
            return _empty_study(f"record `{r.name}`: the estimate cannot be simulated: {sim.message}", names, values)
        sims.append(sim)
    # noise per record × channel from the fit residual (dof-corrected)
    sels = [np.arange(0, r.n, opts.sample_step) for r in recs]
    m_rows = sum(s.size for s in sels) * len(opts.outputs)
    dof_corr = m_rows / max(m_rows - q, 1)
    sigma: dict[tuple[int, str], float] = {}
    for k, (r, sim) in enumerate(zip(recs, sims, strict=True)):
        for c in opts.outputs:
            res = (sim.output(c) - r.channel(c))[sels[k]]
            sd = float(column_norms(res[:, None])[0]) * math.sqrt(dof_corr / max(res.size, 1))
            sigma[(k, c)] = sd if sd > 0 else 1.0
    # weighted sensitivity matrix J (rows: record × channel × sample), columns: free θ then initial states
    blocks = []
    x0_col = len(names)
    scaled: list[dict[str, FloatArray]] = []
    for k, sim in enumerate(sims):
        scaled.append({})
        for c in opts.outputs:
            s = sim.sens[c]  # type: ignore[index]
            blk = np.zeros((sels[k].size, q))
            blk[:, : len(names)] = s[sels[k]][:, free_idx]
            if est_x0[k]:
                blk[:, x0_col] = s[sels[k], p_model]
                blk[:, x0_col + 1] = s[sels[k], p_model + 1]
            blocks.append(blk / sigma[(k, c)])
            scaled[k][c] = s[:, free_idx] * abs_theta
        if est_x0[k]:
            x0_col += 2
    jac = np.vstack(blocks)
    unc = uncertainty_from_jacobian(jac, np.zeros(jac.shape[0]), columns, sigma2=1.0, dof=max(m_rows - q, 1))
    # the physical Fisher matrix may leave floating point when the units are extreme (a force of 1e-200 N);
    # everything derived from it is computed from the column-scaled Jacobian instead
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        fisher = jac.T @ jac
    norms = column_norms(jac)
    js = jac / np.where(norms > 0, norms, 1.0)
    scaled_fisher = js.T @ js
    eigenvalues = unc.singular_values**2
    p = len(names)
    stderr = unc.stderr[:p].copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(abs_theta > 0, stderr / np.where(abs_theta > 0, abs_theta, 1.0), np.inf)
        amount = abs_theta * norms[:p]  # |θ|·‖∂r/∂θ‖: the information about ln θ is its square
        top = float(np.max(amount)) if amount.size else 0.0
        info = (amount / top) ** 2 if top > 0 and math.isfinite(top) else np.zeros(p)
        share = info / info.sum() if info.sum() > 0 else np.zeros(p)
        scov = unc.scaled_covariance if unc.scaled_covariance is not None else np.full((q, q), np.nan)
        vif = np.where(norms[:p] > 0, np.diag(scov)[:p], 0.0)
    # energy per time window and per frequency band of the σ-weighted scaled sensitivities
    window_edges = np.linspace(0.0, 1.0, n_windows + 1)
    window_energy = np.zeros((p, len(recs) * n_windows))
    spectra = []
    for k, r in enumerate(recs):
        edges = np.round(window_edges * sels[k].size).astype(int)
        for c in opts.outputs:
            ws = scaled[k][c][sels[k]] / sigma[(k, c)]
            e2 = ws**2
            for w in range(n_windows):
                window_energy[:, k * n_windows + w] += e2[edges[w] : edges[w + 1]].sum(axis=0)
            n_s = ws.shape[0]
            spec = np.abs(np.fft.rfft(ws, axis=0)) ** 2 / n_s
            spec[1 : (n_s + 1) // 2] *= 2.0  # one-sided: Σ spec = Σ ws² (Parseval)
            spectra.append((np.fft.rfftfreq(n_s, d=r.dt * opts.sample_step), spec))
    nyquist = min(0.5 / (r.dt * opts.sample_step) for r in recs)
    freq_all = np.concatenate([f for f, _ in spectra])
    pow_all = np.concatenate([s.sum(axis=1) for _, s in spectra])
    order = np.argsort(freq_all)
    cum = np.cumsum(pow_all[order])
    f999 = nyquist
    if cum[-1] > 0:
        f999 = float(freq_all[order][min(int(np.searchsorted(cum, 0.999 * cum[-1])), cum.size - 1)])
    band_edges = np.linspace(0.0, min(1.25 * max(f999, 1e-12), nyquist), n_bands + 1)
    band_energy = np.zeros((p, n_bands))
    for freq, spec in spectra:
        idx = np.searchsorted(band_edges, freq, side="right") - 1
        ok = (idx >= 0) & (idx < n_bands)
        np.add.at(band_energy.T, idx[ok], spec[ok])
    centres = 0.5 * (band_edges[:-1] + band_edges[1:])
    peak = centres[np.argmax(band_energy, axis=1)]
    finite_rel = np.where(np.isfinite(rel), rel, np.finfo(float).max)
    kw = int(np.argmax(finite_rel))
    weakest = names[kw]
    reason = _reason(weakest, kw, share, vif, unc.correlation, columns, float(rel[kw]))
    return SensitivityStudy(
        success=True,
        message=f"sensitivities of {p} parameters over {len(recs)} record(s); weakest: {weakest}",
        names=names, values=values, columns=tuple(columns), t=tuple(r.t for r in recs),
        scaled_sensitivities=tuple(scaled), sigma=sigma, window_edges=window_edges, window_energy=window_energy,
        band_edges_hz=band_edges, band_energy=band_energy, peak_frequency_hz=peak, fisher=fisher,
        scaled_fisher=scaled_fisher, eigenvalues=eigenvalues, eigenvectors=unc.directions,
        condition_number=unc.condition_number, stderr=stderr, rel_stderr=rel, information_share=share,
        variance_inflation=vif, correlation=unc.correlation, weak_directions=weak_directions_text(unc),
        weakest_parameter=weakest, reason=reason, uncertainty=unc,
    )


# --------------------------------------------------------------------------- 2. profile likelihood
@dataclass(frozen=True, kw_only=True)
class Profile:
    """Profile likelihood of one parameter.

    Attributes
    ----------
    success : bool
        False when fewer than three grid points could be fitted.
    message : str
    name : str
    estimate : float
    grid : (n,) ndarray
        Values at which ``name`` was held (ascending; includes the estimate).
    cost : (n,) ndarray
        ½‖r‖² of the re-fit at each value (NaN where the re-fit failed).
    delta_chi2 : (n,) ndarray
        ``2·(cost − cost_min)/s²`` with ``s² = 2·cost_min/(n_res − p)``.
    point_success : (n,) bool ndarray
    others : mapping
        Name -> (n,) values of the other free parameters along the profile.
    threshold : float
        χ²₁ quantile at the fit's confidence (3.84 at 95 %).
    confidence : float
    interval : (float, float)
        Likelihood-ratio interval (interpolated); ±inf where the profile does
        not reach the threshold within the grid.
    wald_interval : (float, float)
        The fit's interval.
    halfwidth_ratio : (float, float)
        Likelihood-ratio over Wald half-width, below and above the estimate.
    agrees : bool
        Both ratios within ``1 ± agreement_tol``.
    """

    success: bool
    message: str
    name: str
    estimate: float
    grid: FloatArray
    cost: FloatArray
    delta_chi2: FloatArray
    point_success: NDArray[np.bool_]
    others: Mapping[str, FloatArray]
    threshold: float
    confidence: float
    interval: tuple[float, float]
    wald_interval: tuple[float, float]
    halfwidth_ratio: tuple[float, float]
    agrees: bool


def _crossing(x: FloatArray, y: FloatArray, thr: float, centre: int, step: int) -> float:
    """Where ``y`` first exceeds ``thr`` walking from ``centre`` in direction ``step`` (linear interpolation)."""
    k = centre
    while 0 <= k + step < x.size:
        j = k + step
        if y[j] >= thr:
            return float(x[k] + (thr - y[k]) * (x[j] - x[k]) / (y[j] - y[k])) if y[j] != y[k] else float(x[j])
        k = j
    return -math.inf if step < 0 else math.inf


def profile_likelihood(
    fit: FitResult,
    records: Sequence[Record] | Record,
    name: str,
    *,
    n_points: int = 15,
    span: float = 3.0,
    agreement_tol: float = 0.2,
) -> Profile:
    """Profile likelihood of parameter ``name`` and its likelihood-ratio interval.

    ``name`` is held at ``n_points`` values over estimate ± ``span``·stderr
    (± ``span``·10 % of |estimate| when the standard error is infinite;
    clipped to the bounds) and the other parameters are re-fitted by output
    error with the fit's options and initial states, starting from the
    neighbouring grid point's solution (walking outward from the estimate).

    Parameters
    ----------
    fit : FitResult
        An output-error or two-stage fit.
    records : Record or sequence of Record
        The records the fit used.
    name : str
        A free parameter of the fit.
    n_points : int
        Grid points (the estimate is always one of them).
    span : float
        Half-width of the grid in standard errors.
    agreement_tol : float
        Largest relative difference of the half-widths for ``agrees``.

    Returns
    -------
    Profile
    """
    recs = _records(records)
    _check_oe_fit(fit, recs, "profile_likelihood")
    params = fit.parameters
    if name not in params.names:
        raise ModelSpecError(f"no parameter `{name}`; parameters are {', '.join(params.names)}")
    if not params[name].vary:
        raise ModelSpecError(f"parameter `{name}` is fixed in the fit; profile a free parameter")
    if n_points < 3 or not (span > 0 and math.isfinite(span)):
        raise ModelSpecError(f"`n_points` must be >= 3 and `span` positive, got {n_points} and {span}")
    est = fit.estimate(name)
    value = est.value
    se = est.stderr
    half = span * se if math.isfinite(se) and se > 0 else span * PROFILE_REL_SPAN * max(abs(value), 1e-12)
    grid = np.union1d(np.linspace(value - half, value + half, n_points), [value])
    grid = np.unique(np.clip(grid, params[name].lower, params[name].upper))
    centre = int(np.argmin(np.abs(grid - value)))
    opts = dataclasses.replace(fit.options, method="output-error")
    x0s = _fit_x0s(fit)
    others_names = [n for n in params.free_names if n != name]
    cost = np.full(grid.size, np.nan)
    ok = np.zeros(grid.size, dtype=bool)
    others = {n: np.full(grid.size, np.nan) for n in others_names}
    starts: dict[int, ParameterSet] = {}

    def run(i: int, start: ParameterSet) -> None:
        p_i = start.update(name, value=float(grid[i]), vary=False)
        res = output_error(recs, fit.model, p_i, opts, x0=x0s, diagnostics=False)
        if res.success and math.isfinite(res.cost):
            cost[i] = res.cost
            ok[i] = True
            for n in others_names:
                others[n][i] = res.parameters[n].value
            starts[i] = res.parameters.update(name, vary=True)

    run(centre, params)
    for step in (-1, 1):
        i = centre + step
        while 0 <= i < grid.size:
            run(i, starts.get(i - step, params))
            i += step
    confidence = fit.options.confidence
    thr = float(stats.chi2.ppf(confidence, 1))
    wald = est.ci
    if ok.sum() < 3:
        return Profile(success=False, message=f"only {int(ok.sum())} of {grid.size} profile points could be fitted",
                       name=name, estimate=value, grid=grid, cost=cost, delta_chi2=np.full(grid.size, np.nan),
                       point_success=ok, others=others, threshold=thr, confidence=confidence,
                       interval=(math.nan, math.nan), wald_interval=wald, halfwidth_ratio=(math.nan, math.nan),
                       agrees=False)
    n_res = _n_residuals(recs, opts)
    p_est = len(fit.uncertainty.names) if fit.uncertainty is not None else len(params.free_names)
    cmin = float(np.nanmin(cost))
    s2 = 2.0 * cmin / max(n_res - p_est, 1)
    dchi2 = 2.0 * (cost - cmin) / s2
    gx, gy = grid[ok], dchi2[ok]
    c_ok = int(np.argmin(gy))
    interval = (_crossing(gx, gy, thr, c_ok, -1), _crossing(gx, gy, thr, c_ok, 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = ((value - interval[0]) / (value - wald[0]), (interval[1] - value) / (wald[1] - value))
    agrees = all(math.isfinite(r) and abs(r - 1.0) <= agreement_tol for r in ratios)
    open_ends = [side for side, b in zip(("lower", "upper"), interval, strict=True) if not math.isfinite(b)]
    msg = (f"profile of {name}: likelihood-ratio interval [{interval[0]:.6g}, {interval[1]:.6g}], Wald"
           f" [{wald[0]:.6g}, {wald[1]:.6g}], half-width ratios {ratios[0]:.3g} / {ratios[1]:.3g}")
    if open_ends:
        msg += (f"; the profile stays below the threshold at the {' and '.join(open_ends)} end of the grid"
                " (widen `span`)")
    return Profile(success=True, message=msg, name=name, estimate=value, grid=grid, cost=cost, delta_chi2=dchi2,
                   point_success=ok, others=others, threshold=thr, confidence=confidence, interval=interval,
                   wald_interval=wald, halfwidth_ratio=(float(ratios[0]), float(ratios[1])), agrees=agrees)


# --------------------------------------------------------------------------- 3. multistart
@dataclass(frozen=True, kw_only=True)
class MultiStart:
    """Output error from several random starts.

    Attributes
    ----------
    success : bool
        At least one start converged.
    message : str
    names : tuple of str
        Free parameters.
    starts : (s, p) ndarray
        Start values.
    end_points : (s, p) ndarray
        Estimates (NaN where the run failed).
    costs : (s,) ndarray
    run_success : (s,) bool ndarray
    messages : tuple of str
    best_cost : float
    best_index : int
    n_at_best : int
        Runs whose cost is within ``cost_rtol`` (relative) of the best.
    at_best : (s,) bool ndarray
    spread : (p,) ndarray
        std / |mean| of each parameter across the runs at the best cost.
    substeps : int
        RK4 substeps used by every run (one discretisation, so costs compare).
    best_fit : FitResult or None
    """

    success: bool
    message: str
    names: tuple[str, ...]
    starts: FloatArray
    end_points: FloatArray
    costs: FloatArray
    run_success: NDArray[np.bool_]
    messages: tuple[str, ...]
    best_cost: float
    best_index: int
    n_at_best: int
    at_best: NDArray[np.bool_]
    spread: FloatArray
    substeps: int
    best_fit: FitResult | None


def multistart(
    records: Sequence[Record] | Record,
    model: TermModel | str | Sequence[str],
    params: ParameterSet | None,
    options: FitOptions | None,
    *,
    n_starts: int = 8,
    rng: RngLike = None,
    cost_rtol: float = 1e-6,
) -> MultiStart:
    """Output error from ``n_starts`` random starts: is the optimum unique?

    Start values are drawn around the centre values (those of ``params``;
    an equation-error estimate replaces zeros and a missing ``params``):
    uniformly within the bounds when both are finite, otherwise log-uniformly
    within a factor 0.3 .. 3 of the centre (sign kept, clipped to the bounds);
    a centre that is still 0 gives starts within ±3 of its equation-error
    standard errors (within the bounds). Each start is identified by :func:`~nlid_core.estimate.identify` with
    ``method="output-error"`` and the start as user parameters (so the
    segmented start of the estimator runs before the full-record fit). Every
    run uses the same RK4 substeps (enough for the fastest start), so the
    costs compare.

    Parameters
    ----------
    records : Record or sequence of Record
    model : TermModel, str or sequence of str
    params : ParameterSet or None
        Centre values, bounds and fixed parameters.
    options : FitOptions or None
        Estimator options (the method is set to output error).
    n_starts : int
        Number of random starts.
    rng : numpy.random.Generator, int or None
        Source of the random starts.
    cost_rtol : float
        Relative cost difference within which a run counts as reaching the best.

    Returns
    -------
    MultiStart
    """
    recs = _records(records)
    mdl = _model(model)
    mdl.require_simulable()
    if n_starts < 1:
        raise ModelSpecError(f"`n_starts` must be >= 1, got {n_starts}")
    gen = _rng(rng)
    base_opts = options or FitOptions()
    opts = dataclasses.replace(base_opts, method="output-error")
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    ps = params if params is not None else mdl.default_parameters(force_unit=fu, x_unit=xu)
    if ps.names != mdl.param_names:
        raise ModelSpecError(f"parameters {ps.names} do not match the model terms {mdl.param_names}")
    centre = ps.values
    free = ps.free_mask
    # a zero centre has no scale: such parameters are drawn within ±3 equation-error standard errors of it
    zero_hw = np.zeros(centre.size)
    if params is None or np.any(centre[free] == 0):
        ee = equation_error(recs, mdl, ps, dataclasses.replace(base_opts, method="equation-error", prior=None))
        centre = np.where(free & ((centre == 0) | (params is None)), ee.parameters.values, centre)
        ee_se = np.array([ee.estimate(n).stderr for n in mdl.param_names])
        zero_hw = np.where((centre == 0) & np.isfinite(ee_se), 3.0 * ee_se, 0.0)
    lo, hi = ps.lower, ps.upper
    names = ps.free_names
    fidx = np.flatnonzero(free)
    starts = np.zeros((n_starts, fidx.size))
    for s in range(n_starts):
        for j, i in enumerate(fidx):
            if math.isfinite(lo[i]) and math.isfinite(hi[i]):
                val = gen.uniform(lo[i], hi[i])
            elif centre[i] == 0:
                val = gen.uniform(max(lo[i], -zero_hw[i]), min(hi[i], zero_hw[i]))
            else:
                val = centre[i] * math.exp(gen.uniform(math.log(START_FACTOR[0]), math.log(START_FACTOR[1])))
            starts[s, j] = min(max(val, lo[i]), hi[i])
    if "m0" in names:  # a start exactly at m0 = 0 cannot be simulated
        j = names.index("m0")
        floor = MASS_FLOOR * coefficient_scales(mdl, recs)["m0"]
        starts[:, j] = np.maximum(starts[:, j], min(floor, hi[fidx[j]]))
    if opts.substeps is None:
        nsub = 1
        for s in range(n_starts):
            th = centre.copy()
            th[fidx] = starts[s]
            for r in recs:
                v = r.v if r.v is not None else np.gradient(r.x, r.t)
                nsub = max(nsub, _substeps(mdl, th, r.dt, r.x, v))
        opts = dataclasses.replace(opts, substeps=int(nsub))
    nsub_used = int(opts.substeps)  # type: ignore[arg-type]
    ends = np.full_like(starts, np.nan)
    costs = np.full(n_starts, np.nan)
    run_ok = np.zeros(n_starts, dtype=bool)
    msgs: list[str] = []
    fits: list[FitResult | None] = []
    for s in range(n_starts):
        th = centre.copy()
        th[fidx] = starts[s]
        res = identify(recs, mdl, params=ps.with_values(th), options=opts)
        msgs.append(res.message)
        ok = bool(res.success and math.isfinite(res.cost))
        fits.append(res if ok else None)
        if ok:
            run_ok[s] = True
            costs[s] = res.cost
            ends[s] = res.parameters.values[fidx]
    if not run_ok.any():
        return MultiStart(success=False, message="no start converged", names=names, starts=starts, end_points=ends,
                          costs=costs, run_success=run_ok, messages=tuple(msgs), best_cost=math.nan, best_index=-1,
                          n_at_best=0, at_best=np.zeros(n_starts, dtype=bool), spread=np.full(fidx.size, np.nan),
                          substeps=nsub_used, best_fit=None)
    best = int(np.nanargmin(costs))
    best_cost = float(costs[best])
    at_best = run_ok & (np.abs(costs - best_cost) <= cost_rtol * abs(best_cost))
    sel = ends[at_best]
    mean = sel.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        # relative to the mean before squaring: end points of 1e-200 would underflow in a plain std
        rel_std = (sel / np.where(mean != 0, np.abs(mean), 1.0)).std(axis=0)
        spread = np.where(mean != 0, rel_std, np.where(np.ptp(sel, axis=0) == 0, 0.0, np.inf))
    n_at = int(at_best.sum())
    msg = (f"{n_at} of {n_starts} starts reached the best cost {best_cost:.6g} (within {cost_rtol:g} relative);"
           f" {int((~run_ok).sum())} failed; largest spread {float(np.max(spread)):.2g}"
           f" ({names[int(np.argmax(spread))]})")
    return MultiStart(success=True, message=msg, names=names, starts=starts, end_points=ends, costs=costs,
                      run_success=run_ok, messages=tuple(msgs), best_cost=best_cost, best_index=best, n_at_best=n_at,
                      at_best=at_best, spread=spread, substeps=nsub_used, best_fit=fits[best])


# --------------------------------------------------------------------------- 4. structure check
@dataclass(frozen=True, kw_only=True)
class StructureVariant:
    """One model structure fitted by :func:`structure_check`.

    Attributes
    ----------
    label : str
        ``"base"``, ``"without k3"`` or ``"with f0"``.
    change : str
        ``"base"``, ``"remove"`` or ``"add"``.
    term : str
        The term removed or added (empty for the base).
    terms : tuple of str
    success : bool
    message : str
    cost : float
    rss : float
        Σ of squared residuals of the fitted channel(s), each divided by the
        rms of its channel (as the estimator weighs them).
    n : int
        Residuals.
    n_params : int
        Estimated parameters, initial states included.
    aic, bic : float
        ``n·ln(RSS/n) + 2p`` and ``n·ln(RSS/n) + p·ln(n)``.
    delta_aic, delta_bic : float
        Against the base model (positive: worse).
    validation_rmse : float
        Of the first fitted channel on the validation record (NaN without one).
    fit : FitResult
    """

    label: str
    change: str
    term: str
    terms: tuple[str, ...]
    success: bool
    message: str
    cost: float
    rss: float
    n: int
    n_params: int
    aic: float
    bic: float
    delta_aic: float
    delta_bic: float
    validation_rmse: float
    fit: FitResult


@dataclass(frozen=True, kw_only=True)
class StructureCheck:
    """Each term removed and each candidate added, with a recommendation per term.

    Attributes
    ----------
    success : bool
        False when the base model could not be fitted.
    message : str
    base : StructureVariant
    variants : tuple of StructureVariant
    recommendations : tuple of str
        One line per term, e.g. ``"keep k3: removing it raises BIC by 2400"``.
    """

    success: bool
    message: str
    base: StructureVariant
    variants: tuple[StructureVariant, ...]
    recommendations: tuple[str, ...]

    def variant(self, label: str) -> StructureVariant:
        """The variant with ``label`` (``"without k3"``, ``"with f0"``, ``"base"``)."""
        for v in (self.base, *self.variants):
            if v.label == label:
                return v
        raise KeyError(f"no variant `{label}`; variants are {', '.join(v.label for v in self.variants)}")


def _rss(fit: FitResult, recs: Sequence[Record]) -> tuple[float, int]:
    chans = fit.records[0].fitted_channels if fit.records else ()
    step = fit.options.sample_step
    rss, n = 0.0, 0
    for c in chans:
        scale = _channel_scale(recs, c) if c != "f" else max(float(np.max(np.abs(r.f))) for r in recs)
        for rf in fit.records:
            sel = slice(None, None, step)
            res = (rf.predicted[c] - rf.measured[c])[sel] / scale
            rss += float(res @ res)
            n += int(res.size)
    return rss, n


def _variant(label: str, change: str, term: str, fit: FitResult, recs: Sequence[Record],
             validation: Record | None) -> StructureVariant:
    nan = math.nan
    if not fit.success or not fit.records:
        return StructureVariant(label=label, change=change, term=term, terms=fit.model.terms, success=False,
                                message=fit.message, cost=nan, rss=nan, n=0, n_params=0, aic=nan, bic=nan,
                                delta_aic=nan, delta_bic=nan, validation_rmse=nan, fit=fit)
    rss, n = _rss(fit, recs)
    p = len(fit.uncertainty.names) if fit.uncertainty is not None else len(fit.parameters.free_names)
    core = n * math.log(max(rss, 1e-300) / n)
    aic, bic = core + 2 * p, core + p * math.log(n)
    vrmse = nan
    if validation is not None:
        from .validation import validate

        chan = fit.records[0].fitted_channels[0]
        if chan in validation.measured:
            val = validate(fit, validation, outputs=(chan,))
            if val.success:
                vrmse = val.metric(chan).rmse
    return StructureVariant(label=label, change=change, term=term, terms=fit.model.terms, success=True,
                            message=fit.message, cost=fit.cost, rss=rss, n=n, n_params=p, aic=aic, bic=bic,
                            delta_aic=0.0, delta_bic=0.0, validation_rmse=vrmse, fit=fit)


def _fit_variant(recs: Sequence[Record], model: TermModel, opts: FitOptions, base: FitResult) -> FitResult:
    """Identify a variant twice (from scratch, and by output error from the base estimate); keep the better."""
    fresh = identify(recs, model, options=opts)
    if opts.method == "equation-error" or not base.success:
        return fresh
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    start = model.default_parameters({n: v for n, v in base.values.items() if n in model.terms},
                                     force_unit=fu, x_unit=xu)
    nested = identify(recs, model, params=start, options=dataclasses.replace(opts, method="output-error"))
    if not nested.success or not math.isfinite(nested.cost):
        return fresh
    if not fresh.success or not math.isfinite(fresh.cost) or nested.cost < fresh.cost:
        return nested
    return fresh


def structure_check(
    records: Sequence[Record] | Record,
    model_terms: TermModel | str | Sequence[str],
    options: FitOptions | None,
    *,
    add: Sequence[str] = CANDIDATE_TERMS,
    validation: Record | None = None,
) -> StructureCheck:
    """Fit the model with each term removed and each candidate term added; compare by AIC/BIC.

    Every variant is identified with :func:`~nlid_core.estimate.identify`
    (default bounds, ``options``) twice — from scratch, and by output error
    started from the base estimate (a removed term dropped, an added one at
    0) — and the lower cost is kept, so a variant is not judged by a poor
    local optimum. ``m0`` is never removed (the model must stay simulable).
    A term is recommended when removing it raises BIC, a candidate when
    adding it lowers BIC; |ΔBIC| below 6 is called weak evidence.

    Parameters
    ----------
    records : Record or sequence of Record
    model_terms : TermModel, str or sequence of str
        The base model.
    options : FitOptions or None
        Estimator options for every variant.
    add : sequence of str
        Candidate terms (those already in the model are skipped).
    validation : Record or None
        A record not used for fitting; each variant's RMSE on it is reported.

    Returns
    -------
    StructureCheck
    """
    recs = _records(records)
    base_model = _model(model_terms)
    opts = options or FitOptions()
    add_terms = [t for t in parse_terms(add) if t not in base_model.terms] if add else []
    settings = base_model.settings
    base_fit = identify(recs, base_model, options=opts)
    base = _variant("base", "base", "", base_fit, recs, validation)
    variants: list[StructureVariant] = []
    for t in base_model.terms:
        if t == "m0":
            continue
        mdl = TermModel(tuple(x for x in base_model.terms if x != t), settings)
        variants.append(_variant(f"without {t}", "remove", t, _fit_variant(recs, mdl, opts, base_fit), recs,
                                 validation))
    for t in add_terms:
        mdl = TermModel((*base_model.terms, t), settings)
        variants.append(_variant(f"with {t}", "add", t, _fit_variant(recs, mdl, opts, base_fit), recs, validation))
    if not base.success:
        return StructureCheck(success=False, message=f"the base model could not be fitted: {base.message}", base=base,
                              variants=tuple(variants), recommendations=())
    out_variants = []
    recs_text = []
    for v in variants:
        if v.success:
            v = dataclasses.replace(v, delta_aic=v.aic - base.aic, delta_bic=v.bic - base.bic)
        out_variants.append(v)
        val_note = ""
        if math.isfinite(v.validation_rmse) and math.isfinite(base.validation_rmse):
            val_note = f"; validation RMSE {base.validation_rmse:.3g} -> {v.validation_rmse:.3g}"
        elif validation is not None and v.success and math.isfinite(base.validation_rmse):
            val_note = "; its validation simulation failed"
        if not v.success:
            what = "keep" if v.change == "remove" else "do not add"
            verb = "without" if v.change == "remove" else "with"
            recs_text.append(f"{what} {v.term}: the model {verb} it could not be fitted ({v.message})")
            continue
        d = v.delta_bic
        weak = " (weak evidence)" if abs(d) < WEAK_BIC else ""
        if v.change == "remove":
            if d > 0:
                recs_text.append(f"keep {v.term}: removing it raises BIC by {d:.3g}{weak}{val_note}")
            else:
                recs_text.append(f"drop {v.term}: removing it lowers BIC by {-d:.3g}{weak}{val_note}")
        elif d < 0:
            recs_text.append(f"add {v.term}: adding it lowers BIC by {-d:.3g}{weak}{val_note}")
        else:
            recs_text.append(f"do not add {v.term}: adding it raises BIC by {d:.3g}{weak}{val_note}")
    failed = sum(not v.success for v in out_variants)
    msg = f"{len(out_variants)} variants of {','.join(base_model.terms)} fitted"
    if failed:
        msg += f" ({failed} failed)"
    return StructureCheck(success=True, message=msg, base=base, variants=tuple(out_variants),
                          recommendations=tuple(recs_text))


# --------------------------------------------------------------------------- 5. regularisation path
@dataclass(frozen=True, kw_only=True)
class RegularisationPath:
    """Estimates over a grid of Tikhonov weights and the L-curve.

    Attributes
    ----------
    success : bool
        False when any equation-error fit failed.
    message : str
    names : tuple of str
        Free parameters.
    lambdas : (L,) ndarray
        Ascending.
    estimates, stderr : (L, p) ndarray
        Equation-error estimates and standard errors per λ.
    residual_norm : (L,) ndarray
        ‖r‖ of the data rows (force normalised as in the estimator).
    deviation_norm : (L,) ndarray
        ‖D(θ − θ0)‖ over the regularised parameters (D the column norms of
        the weighted regressors, as in the prior).
    curvature : (L,) ndarray
        Signed curvature of the L-curve (log10 residual, log10 deviation),
        positive where it turns like an L (NaN at the ends, for λ = 0 and
        where neighbouring points coincide).
    corner_index : int
        Index of the largest positive curvature (-1 when there is none).
    suggested_lambda : float
    oe_estimates, oe_stderr : (L, p) ndarray or None
        Output-error estimates per λ (when asked for).
    oe_residual_norm, oe_deviation_norm : (L,) ndarray or None
        ‖r‖ of the data rows and ‖D(θ − θ0)‖ of the output-error fits (D the
        Jacobian column norms at the common start; NaN at λ = 0).
    """

    success: bool
    message: str
    names: tuple[str, ...]
    lambdas: FloatArray
    estimates: FloatArray
    stderr: FloatArray
    residual_norm: FloatArray
    deviation_norm: FloatArray
    curvature: FloatArray
    corner_index: int
    suggested_lambda: float
    oe_estimates: FloatArray | None
    oe_stderr: FloatArray | None
    oe_residual_norm: FloatArray | None
    oe_deviation_norm: FloatArray | None


def _lcurve_curvature(lams: FloatArray, rho: FloatArray, eta: FloatArray) -> FloatArray:
    """Signed curvature of the L-curve (log10 ρ, log10 η) at each λ (Menger curvature of neighbouring points).

    Positive where the curve turns like the corner of an L (coming down the
    steep leg and leaving along the flat one). ``log10 η`` is floored eight
    decades below its largest value, and points closer to the previous
    distinct point than 1e-3 of the curve's extent are merged with it, so
    that the clusters at both ends (where the estimate no longer changes) do
    not produce spurious curvature. NaN at the ends, for λ = 0 and for merged
    points.
    """
    kappa = np.full(lams.size, np.nan)
    pos = np.flatnonzero((lams > 0) & np.isfinite(rho) & np.isfinite(eta) & (rho > 0))
    if pos.size < 3:
        return kappa
    a = np.log10(rho[pos])
    eta_pos = eta[pos]
    top = float(np.log10(np.max(eta_pos))) if np.max(eta_pos) > 0 else 0.0
    b = np.maximum(np.log10(np.maximum(eta_pos, 1e-300)), top - 8.0)
    tol = 1e-3 * max(math.hypot(float(np.ptp(a)), float(np.ptp(b))), 1e-12)
    keep = [0]
    for i in range(1, pos.size):
        if math.hypot(a[i] - a[keep[-1]], b[i] - b[keep[-1]]) > tol:
            keep.append(i)
    for j in range(1, len(keep) - 1):
        i0, i1, i2 = keep[j - 1], keep[j], keep[j + 1]
        d1 = np.array([a[i1] - a[i0], b[i1] - b[i0]])
        d2 = np.array([a[i2] - a[i1], b[i2] - b[i1]])
        chord = math.hypot(a[i2] - a[i0], b[i2] - b[i0])
        den = float(np.linalg.norm(d1) * np.linalg.norm(d2) * chord)
        if den > 0:
            kappa[pos[i1]] = 2.0 * float(d1[0] * d2[1] - d1[1] * d2[0]) / den
    return kappa


def _ee_norms(recs: Sequence[Record], model: TermModel, params: ParameterSet, opts: FitOptions,
              theta: FloatArray, theta0: Mapping[str, float]) -> tuple[float, float]:
    """Data residual norm and ‖D(θ − θ0)‖ of an equation-error estimate (as the estimator weighs them).

    Computed on the estimator's exactly rescaled regressors (:class:`~nlid_core.estimate.DataScaling`),
    so neither norm under- or overflows whatever the units.
    """
    from .signals import derive_missing

    recs_d = [r if (r.v is not None and r.a is not None) else derive_missing(r, method=opts.differentiator)
              for r in recs]
    scaling = data_scaling(model, recs_d)
    theta_s = scaling.to_scaled(np.asarray(theta, dtype=np.float64))
    theta0_s = scaling.to_scaled(np.array([float(theta0.get(n, 0.0)) for n in model.param_names]))
    amp = max(float(np.max(np.abs(r.f))) for r in recs_d)
    to_amp = math.ldexp(1.0, scaling.force_exp) / amp  # residuals are (Φθ − f) / max|f|, as in the estimator
    res_parts, phi_parts = [], []
    for k, r in enumerate(recs_d):
        w = (opts.record_weights[k] if opts.record_weights is not None else 1.0) * to_amp
        sel = np.arange(0, r.n, opts.sample_step)
        if opts.force_threshold > 0:
            sel = sel[np.abs(r.f[sel]) >= opts.force_threshold * amp]
        phi = scaling.regressors(r)[sel] * w
        res_parts.append(phi @ theta_s - w * scaling.force(r.f[sel]))
        phi_parts.append(phi)
    res = np.concatenate(res_parts)
    col = column_norms(np.vstack(phi_parts))
    dev = [col[i] * (theta_s[i] - theta0_s[i])
           for i, n in enumerate(model.param_names) if n in theta0 and params[n].vary]
    return float(column_norms(res[:, None])[0]), float(column_norms(np.asarray(dev, dtype=np.float64)[:, None])[0])


def regularisation_path(
    records: Sequence[Record] | Record,
    model: TermModel | str | Sequence[str],
    params: ParameterSet | None,
    options: FitOptions | None,
    prior_values: Mapping[str, float],
    lambdas: Sequence[float] | ArrayLike,
    *,
    with_output_error: bool = False,
) -> RegularisationPath:
    """Tikhonov-regularised fits over a λ grid, the L-curve and its corner.

    Each λ gives an equation-error fit with ``Prior(values=prior_values,
    lam=λ)`` (cheap); optionally also an output-error fit from the
    equation-error estimate at the smallest λ (one common start, so the
    prior's scaling D is the same for every λ). The suggested λ is the corner
    of the L-curve: the largest (L-shaped) curvature of (log ‖r‖,
    log ‖D(θ − θ0)‖). When the data alone determine the parameters well the
    curve has no pronounced corner; its largest curvature then sits where the
    residual begins to grow, i.e. at about the largest λ the data do not
    object to.

    Parameters
    ----------
    records : Record or sequence of Record
    model : TermModel, str or sequence of str
    params : ParameterSet or None
        Bounds, fixed values and units (defaults from the model).
    options : FitOptions or None
        Estimator options (method and prior are set here).
    prior_values : mapping
        θ0 per regularised parameter.
    lambdas : sequence of float
        Prior weights (>= 0; sorted here).
    with_output_error : bool
        Also run output error at every λ.

    Returns
    -------
    RegularisationPath
    """
    recs = _records(records)
    mdl = _model(model)
    lams = np.sort(np.asarray(lambdas, dtype=np.float64).reshape(-1))
    if lams.size == 0 or np.any(~np.isfinite(lams)) or np.any(lams < 0):
        raise ModelSpecError(f"`lambdas` must be finite numbers >= 0, got {lams.tolist()}")
    base = options or FitOptions()
    fu, xu = recs[0].unit("f"), recs[0].unit("x")
    ps = params if params is not None else mdl.default_parameters(force_unit=fu, x_unit=xu)
    unknown = set(prior_values) - set(ps.names)
    if unknown:
        raise ModelSpecError(f"`prior_values` names unknown parameter(s) {sorted(unknown)}")
    names = ps.free_names
    fidx = np.flatnonzero(ps.free_mask)
    L, p = lams.size, fidx.size
    est = np.full((L, p), np.nan)
    se = np.full((L, p), np.nan)
    rho = np.full(L, np.nan)
    eta = np.full(L, np.nan)
    ok = True
    ee_fits: list[FitResult] = []
    for i, lam in enumerate(lams):
        opts = dataclasses.replace(base, method="equation-error",
                                   prior=Prior(values=dict(prior_values), lam=float(lam)))
        fit = equation_error(recs, mdl, ps, opts)
        ee_fits.append(fit)
        ok = ok and fit.success
        est[i] = fit.parameters.values[fidx]
        se[i] = [fit.estimate(n).stderr for n in names]
        rho[i], eta[i] = _ee_norms(recs, mdl, ps, opts, fit.parameters.values, prior_values)
    kappa = _lcurve_curvature(lams, rho, eta)
    corner = int(np.nanargmax(kappa)) if np.any(kappa > 0) else -1
    oe_est = oe_se = oe_rho = oe_eta = None
    if with_output_error:
        mdl.require_simulable()
        start = positive_mass(ee_fits[0].parameters, mdl, recs)
        oe_est, oe_se = np.full((L, p), np.nan), np.full((L, p), np.nan)
        oe_rho, oe_eta = np.full(L, np.nan), np.full(L, np.nan)
        for i, lam in enumerate(lams):
            opts = dataclasses.replace(base, method="output-error",
                                       prior=Prior(values=dict(prior_values), lam=float(lam)))
            fit = output_error(recs, mdl, start, opts)
            if not fit.success:
                continue
            oe_est[i] = fit.parameters.values[fidx]
            oe_se[i] = [fit.estimate(n).stderr for n in names]
            rss = 0.0
            for c in opts.outputs:
                w = float(opts.channel_weights.get(c, 1.0)) / _channel_scale(recs, c)
                for rf in fit.records:
                    r_c = w * (rf.predicted[c] - rf.measured[c])[:: opts.sample_step]
                    rss += float(r_c @ r_c)
            oe_rho[i] = math.sqrt(rss)
            if lam > 0:
                oe_eta[i] = math.sqrt(max(2.0 * fit.cost - rss, 0.0) / lam)
    suggested = float(lams[corner]) if corner >= 0 else math.nan
    if corner >= 0:
        msg = f"{L} values of λ; L-curve corner at λ = {suggested:.3g}"
    elif np.sum(lams > 0) < 3:
        msg = f"{L} values of λ; no L-curve corner (give at least three positive λ)"
    else:
        msg = (f"{L} values of λ; the L-curve has no corner (it never turns like an L: the data determine the"
               " parameters without the prior, or the grid is too coarse)")
    if not ok:
        msg += "; some equation-error fits failed"
    return RegularisationPath(success=ok, message=msg, names=names, lambdas=lams, estimates=est, stderr=se,
                              residual_norm=rho, deviation_norm=eta, curvature=kappa, corner_index=corner,
                              suggested_lambda=suggested, oe_estimates=oe_est, oe_stderr=oe_se,
                              oe_residual_norm=oe_rho, oe_deviation_norm=oe_eta)


# --------------------------------------------------------------------------- 6. experiment design
@dataclass(frozen=True, kw_only=True)
class DesignPrediction:
    """Predicted parameter uncertainty of one candidate test (Cramér-Rao bound at the prior model).

    Attributes
    ----------
    success : bool
        False when the prior model diverges under this force.
    message : str
    label : str
    names : tuple of str
        Estimated parameters.
    values : (p,) ndarray
        Prior values.
    stderr : (p,) ndarray
        Predicted standard errors (√ diagonal of the inverse Fisher information).
    rel_stderr : (p,) ndarray
        ``stderr / |value|``.
    covariance, correlation, fisher : (p, p) ndarray
    condition_number : float
        Of the column-scaled weighted sensitivity matrix.
    max_rel_stderr : float
    worst_parameter : str
    x_max, x_rms : float
        Peak and rms of the predicted displacement.
    force_max, force_rms : float
    duration_s : float
    n_samples : int
    outputs : tuple of str
    noise_sd : mapping
        Noise standard deviation per output channel.
    """

    success: bool
    message: str
    label: str
    names: tuple[str, ...]
    values: FloatArray
    stderr: FloatArray
    rel_stderr: FloatArray
    covariance: FloatArray
    correlation: FloatArray
    fisher: FloatArray
    condition_number: float
    max_rel_stderr: float
    worst_parameter: str
    x_max: float
    x_rms: float
    force_max: float
    force_rms: float
    duration_s: float
    n_samples: int
    outputs: tuple[str, ...]
    noise_sd: Mapping[str, float]

    def rse(self, name: str) -> float:
        """Predicted relative standard error of parameter ``name``."""
        if name not in self.names:
            raise KeyError(f"no estimated parameter `{name}`; parameters are {', '.join(self.names)}")
        return float(self.rel_stderr[self.names.index(name)])


def predict_uncertainty(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    excitation_t: ArrayLike,
    excitation_force: ArrayLike,
    *,
    noise_sd: float | Mapping[str, float],
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
    label: str = "",
) -> DesignPrediction:
    """Standard errors a test with this force would give if the prior model were true.

    The prior model is simulated under the force with forward sensitivities
    (RK4, twice the estimators' substeps); with white measurement noise of
    standard deviation σ_c on each output channel the Fisher information is
    ``F = Σ_c S_cᵀS_c/σ_c²`` over every sample, and the covariance its
    inverse (SVD of the column-scaled, σ-weighted sensitivities, as for a
    fit). The initial state is known (not estimated).

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        Prior values of every term; with a ParameterSet only its free
        parameters are estimated.
    excitation_t : (n,) array_like, s
        Sample times of the candidate test.
    excitation_force : (n,) array_like, N
        Candidate force at those times.
    noise_sd : float or mapping
        Measurement-noise standard deviation (one for every channel, or per
        output channel).
    outputs : sequence of {"x", "v", "a"}
        Channels that would be measured and fitted.
    x0 : (2,) sequence
        Initial displacement and velocity (known).
    input_hold : {"cubic", "foh", "zoh"}
    label : str
        Name of the design in tables.

    Returns
    -------
    DesignPrediction
        ``success=False`` with a message when the model diverges.
    """
    mdl = _model(model)
    mdl.require_simulable()
    ps = _param_set(mdl, params_values)
    outs = _check_outputs(outputs)
    sd = _noise_map(noise_sd, outs)
    t = np.asarray(excitation_t, dtype=np.float64).reshape(-1)
    f = np.asarray(excitation_force, dtype=np.float64).reshape(-1)
    if t.size < 3 or f.shape != t.shape or not np.all(np.isfinite(f)) or not np.all(np.diff(t) > 0):
        raise ModelSpecError("`excitation_t` and `excitation_force` must be finite 1-D arrays of one length (>= 3)"
                             " with increasing times")
    theta = ps.values
    fidx = np.flatnonzero(ps.free_mask)
    names = ps.free_names
    p = fidx.size
    dt = float((t[-1] - t[0]) / (t.size - 1))
    nan = np.full(p, np.nan)
    common = dict(label=label, names=names, values=theta[fidx], duration_s=float(t[-1] - t[0]), n_samples=int(t.size),
                  outputs=outs, noise_sd=sd, force_max=float(np.max(np.abs(f))),
                  force_rms=float(np.sqrt(np.mean(f**2))))

    def failed(message: str, xmax: float = math.nan, xrms: float = math.nan) -> DesignPrediction:
        return DesignPrediction(success=False, message=message, stderr=nan, rel_stderr=nan,
                                covariance=np.full((p, p), np.nan), correlation=np.full((p, p), np.nan),
                                fisher=np.full((p, p), np.nan), condition_number=math.nan, max_rel_stderr=math.inf,
                                worst_parameter="", x_max=xmax, x_rms=xrms, **common)  # type: ignore[arg-type]

    if p == 0:
        raise ModelSpecError("every parameter is fixed: nothing to predict")
    first = simulate(mdl, t, f, theta, x0, input_hold=input_hold)
    if not first.success:
        return failed(f"the prior model diverges under this excitation: {first.message}")
    nsub = _substeps(mdl, theta, dt, first.x, first.v)
    sim = simulate(mdl, t, f, theta, x0, input_hold=input_hold, substeps=nsub, sensitivities=True, outputs=outs,
                   initial_state_sensitivities=False)
    if not sim.success:
        return failed(f"the prior model diverges under this excitation: {sim.message}")
    xmax, xrms = float(np.max(np.abs(sim.x))), float(np.sqrt(np.mean(sim.x**2)))
    jac = np.vstack([sim.sens[c][:, fidx] / sd[c] for c in outs])  # type: ignore[index]
    if not np.all(np.isfinite(jac)):
        return failed("the sensitivities are not finite (the model is on the edge of divergence)", xmax, xrms)
    unc = uncertainty_from_jacobian(jac, np.zeros(jac.shape[0]), names, sigma2=1.0, dof=max(jac.shape[0] - p, 1))
    vals = np.abs(theta[fidx])
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(vals > 0, unc.stderr / np.where(vals > 0, vals, 1.0), np.inf)
    worst = int(np.argmax(np.where(np.isnan(rel), np.inf, rel)))
    msg = (f"{label + ': ' if label else ''}largest predicted relative standard error {100 * rel[worst]:.3g} %"
           f" ({names[worst]}); peak displacement {xmax:.3g}")
    return DesignPrediction(success=True, message=msg, stderr=unc.stderr, rel_stderr=rel, covariance=unc.covariance,
                            correlation=unc.correlation, fisher=jac.T @ jac, condition_number=unc.condition_number,
                            max_rel_stderr=float(rel[worst]), worst_parameter=names[worst], x_max=xmax, x_rms=xrms,
                            **common)  # type: ignore[arg-type]


def compare_designs(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    designs: Sequence[tuple[str, ArrayLike, ArrayLike]],
    *,
    noise_sd: float | Mapping[str, float],
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
) -> list[DesignPrediction]:
    """:func:`predict_uncertainty` for several candidate tests.

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        Prior values of every term.
    designs : sequence of (label, t, force)
        Candidate tests.
    noise_sd : float or mapping
        Measurement-noise standard deviation (per output channel when a mapping).
    outputs : sequence of {"x", "v", "a"}
    x0 : (2,) sequence
        Initial displacement and velocity.
    input_hold : {"cubic", "foh", "zoh"}

    Returns
    -------
    list of DesignPrediction
        In the order of ``designs``.
    """
    return [predict_uncertainty(model, params_values, t, f, noise_sd=noise_sd, outputs=outputs, x0=x0,
                                input_hold=input_hold, label=str(label)) for label, t, f in designs]


@dataclass(frozen=True, kw_only=True)
class DesignSuggestion:
    """Grid of linear-chirp designs and the best one.

    Attributes
    ----------
    success : bool
        False when every design diverges (or exceeds ``max_displacement``).
    message : str
    table : tuple of DesignPrediction
        Every design, amplitude-major.
    settings : tuple of (amplitude, f_start, f_end)
        Chirp settings of each row of ``table``.
    usable : (d,) bool ndarray
        Designs that simulate (and respect ``max_displacement``).
    best_index : int
        -1 when none is usable.
    best : DesignPrediction or None
    best_settings : (amplitude, f_start, f_end) or None
    """

    success: bool
    message: str
    table: tuple[DesignPrediction, ...]
    settings: tuple[tuple[float, float, float], ...]
    usable: NDArray[np.bool_]
    best_index: int
    best: DesignPrediction | None
    best_settings: tuple[float, float, float] | None


def chirp_design(amplitude: float, f_start_hz: float, f_end_hz: float, duration_s: float,
                 fs_hz: float) -> tuple[FloatArray, FloatArray]:
    """Time and force of a linear chirp sampled like the examples (``linspace(0, T, int(T·fs))``).

    Parameters
    ----------
    amplitude : float, N
    f_start_hz, f_end_hz : float
        Start and end frequency.
    duration_s : float
    fs_hz : float
        Sampling rate.

    Returns
    -------
    (t, f) : tuple of ndarray
    """
    if not (duration_s > 0 and fs_hz > 0 and amplitude >= 0 and f_start_hz >= 0 and f_end_hz >= 0):
        raise ModelSpecError("chirp: amplitude and frequencies must be >= 0, duration and sampling rate > 0")
    if max(f_start_hz, f_end_hz) >= fs_hz / 2:
        raise ModelSpecError(f"chirp up to {max(f_start_hz, f_end_hz):g} Hz needs a sampling rate above twice that")
    t = np.linspace(0.0, duration_s, int(duration_s * fs_hz))
    return t, chirp_force(amplitude, f_start_hz, f_end_hz, duration_s)(t)


def suggest_design(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    *,
    noise_sd: float | Mapping[str, float],
    duration_s: float,
    fs_hz: float,
    amplitudes: Sequence[float] = (10.0, 20.0, 30.0),
    bands: Sequence[tuple[float, float]] = ((0.5, 5.0), (0.5, 10.0), (1.0, 15.0)),
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
    max_displacement: float | None = None,
) -> DesignSuggestion:
    """Linear chirps over a grid of amplitudes and bands; the one with the smallest worst relative error.

    Designs under which the prior model diverges (or whose peak displacement
    exceeds ``max_displacement``) are skipped; among the others the winner
    minimises the largest predicted relative standard error.

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        Prior values of every term.
    noise_sd : float or mapping
        Measurement-noise standard deviation (per output channel when a mapping).
    duration_s : float
        Length of every candidate test.
    fs_hz : float
        Sampling rate.
    amplitudes : sequence of float
        Chirp amplitudes (N).
    bands : sequence of (f_start, f_end)
        Chirp bands (Hz).
    outputs : sequence of {"x", "v", "a"}
    x0 : (2,) sequence
        Initial displacement and velocity.
    input_hold : {"cubic", "foh", "zoh"}
    max_displacement : float or None
        Stroke limit of the test rig.

    Returns
    -------
    DesignSuggestion
    """
    if not amplitudes or not bands:
        raise ModelSpecError("`amplitudes` and `bands` must not be empty")
    table, settings = [], []
    for amp in amplitudes:
        for f_lo, f_hi in bands:
            t, f = chirp_design(float(amp), float(f_lo), float(f_hi), duration_s, fs_hz)
            label = f"chirp {amp:g} N {f_lo:g}-{f_hi:g} Hz"
            table.append(predict_uncertainty(model, params_values, t, f, noise_sd=noise_sd, outputs=outputs, x0=x0,
                                             input_hold=input_hold, label=label))
            settings.append((float(amp), float(f_lo), float(f_hi)))
    usable = np.array([d.success and (max_displacement is None or d.x_max <= max_displacement) for d in table])
    if not usable.any():
        return DesignSuggestion(success=False, message="every design diverges or exceeds the displacement limit",
                                table=tuple(table), settings=tuple(settings), usable=usable, best_index=-1, best=None,
                                best_settings=None)
    score = np.array([d.max_rel_stderr if u else np.inf for d, u in zip(table, usable, strict=True)])
    best = int(np.argmin(score))
    win = table[best]
    skipped = int((~usable).sum())
    msg = (f"{win.label}: largest predicted relative standard error {100 * win.max_rel_stderr:.3g} %"
           f" ({win.worst_parameter}); {len(table)} designs" + (f", {skipped} skipped" if skipped else ""))
    return DesignSuggestion(success=True, message=msg, table=tuple(table), settings=tuple(settings), usable=usable,
                            best_index=best, best=win, best_settings=settings[best])


@dataclass(frozen=True, kw_only=True)
class MonteCarloCheck:
    """Predicted against realised scatter of output-error estimates on simulated tests.

    Attributes
    ----------
    success : bool
        False when the truth diverges or fewer than two runs converged.
    message : str
    names : tuple of str
    truth : (p,) ndarray
    predicted_std : (p,) ndarray
        From :func:`predict_uncertainty`.
    realised_std : (p,) ndarray
        Sample standard deviation of the estimates (ddof = 1).
    ratio : (p,) ndarray
        ``realised_std / predicted_std``.
    mean, bias : (p,) ndarray
        Mean estimate and mean − truth.
    estimates : (runs, p) ndarray
        Converged runs only.
    n_runs, n_ok : int
    worst_parameter : str
        Largest |log ratio|.
    worst_ratio : float
    prediction : DesignPrediction
    """

    success: bool
    message: str
    names: tuple[str, ...]
    truth: FloatArray
    predicted_std: FloatArray
    realised_std: FloatArray
    ratio: FloatArray
    mean: FloatArray
    bias: FloatArray
    estimates: FloatArray
    n_runs: int
    n_ok: int
    worst_parameter: str
    worst_ratio: float
    prediction: DesignPrediction


def monte_carlo_check(
    model: TermModel | str | Sequence[str],
    params_values: Mapping[str, float] | ParameterSet | ArrayLike,
    t: ArrayLike,
    force: ArrayLike,
    *,
    noise_sd: float | Mapping[str, float],
    n_runs: int = 20,
    rng: RngLike = None,
    outputs: Sequence[str] = ("x",),
    x0: Sequence[float] = (0.0, 0.0),
    input_hold: str = "cubic",
) -> MonteCarloCheck:
    """Check :func:`predict_uncertainty` by simulated tests.

    The clean response is computed once by ``solve_ivp`` (DOP853, rtol 1e-10)
    on the cubic spline through the force samples; ``n_runs`` times white
    noise is added to the output channels and the parameters are identified by
    output error started at the truth with the initial state known.

    Parameters
    ----------
    model : TermModel, str or sequence of str
    params_values : mapping, ParameterSet or array_like
        True values of every term.
    t : (n,) array_like, s
        Sample times.
    force : (n,) array_like, N
        Force at those times.
    noise_sd : float or mapping
        Measurement-noise standard deviation (per output channel when a mapping).
    n_runs : int
        Simulated tests.
    rng : numpy.random.Generator, int or None
        Source of the noise.
    outputs : sequence of {"x", "v", "a"}
        Measured and fitted channels.
    x0 : (2,) sequence
        Initial displacement and velocity (known to the fits).
    input_hold : {"cubic", "foh", "zoh"}
        Input reconstruction of the fits.

    Returns
    -------
    MonteCarloCheck
    """
    if n_runs < 2:
        raise ModelSpecError(f"`n_runs` must be >= 2, got {n_runs}")
    mdl = _model(model)
    ps = _param_set(mdl, params_values)
    outs = _check_outputs(outputs)
    sd = _noise_map(noise_sd, outs)
    gen = _rng(rng)
    t_arr = np.asarray(t, dtype=np.float64).reshape(-1)
    f_arr = np.asarray(force, dtype=np.float64).reshape(-1)
    pred = predict_uncertainty(mdl, ps, t_arr, f_arr, noise_sd=sd, outputs=outs, x0=x0, input_hold=input_hold,
                               label="monte carlo")
    names = ps.free_names
    fidx = np.flatnonzero(ps.free_mask)
    truth = ps.values[fidx]
    p = fidx.size
    nan = np.full(p, np.nan)

    def failed(message: str, n_ok: int = 0) -> MonteCarloCheck:
        return MonteCarloCheck(success=False, message=message, names=names, truth=truth,
                               predicted_std=pred.stderr, realised_std=nan, ratio=nan, mean=nan, bias=nan,
                               estimates=np.zeros((0, p)), n_runs=n_runs, n_ok=n_ok, worst_parameter="",
                               worst_ratio=math.nan, prediction=pred)

    if not pred.success:
        return failed(pred.message)
    clean = simulate_reference(mdl, t_arr, f_arr, ps.values, x0, input_hold="cubic", rtol=1e-10,
                               atol=1e-12 * max(pred.x_max, 1e-300))
    if not clean.success:
        return failed(f"the true model diverges: {clean.message}")
    rest = abs(float(x0[0])) == 0 and abs(float(x0[1])) == 0
    opts = FitOptions(method="output-error", outputs=outs, initial_state="rest" if rest else "data",
                      input_hold=input_hold)
    x0_fit = None if rest else [(float(x0[0]), float(x0[1]))]
    ests = []
    for _ in range(n_runs):
        noisy = {c: clean.output(c) + (sd[c] * gen.standard_normal(t_arr.size) if c in sd else 0.0)
                 for c in ("x", "v", "a") if c == "x" or c in outs}
        rec = from_arrays(t_arr, f_arr, noisy["x"], noisy.get("v"), noisy.get("a"), name="monte carlo")
        res = output_error(rec, mdl, ps, opts, x0=x0_fit, diagnostics=False)
        if res.success:
            ests.append(res.parameters.values[fidx])
    if len(ests) < 2:
        return failed(f"only {len(ests)} of {n_runs} runs converged", len(ests))
    est = np.array(ests)
    realised = est.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = realised / pred.stderr
    lr = np.abs(np.log(np.where(ratio > 0, ratio, np.nan)))
    worst = int(np.nanargmax(lr)) if np.any(np.isfinite(lr)) else 0
    mean = est.mean(axis=0)
    msg = (f"{est.shape[0]} of {n_runs} runs converged; realised/predicted standard deviation from"
           f" {float(np.nanmin(ratio)):.3g} to {float(np.nanmax(ratio)):.3g} (worst {names[worst]})")
    return MonteCarloCheck(success=True, message=msg, names=names, truth=truth, predicted_std=pred.stderr,
                           realised_std=realised, ratio=ratio, mean=mean, bias=mean - truth, estimates=est,
                           n_runs=n_runs, n_ok=int(est.shape[0]), worst_parameter=names[worst],
                           worst_ratio=float(ratio[worst]), prediction=pred)
