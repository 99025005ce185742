"""Sensitivity study of a fit: scaled sensitivities over time and frequency, Fisher information, weakest parameter."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelSpecError
from ..estimate import FitResult
from ..identifiability import Uncertainty, column_norms, uncertainty_from_jacobian, weak_directions_text
from ..metrics import percent_text
from ..record import Record
from ..simulate import SimulationResult, simulate
from ._common import FloatArray, ProgressFn, _check_oe_fit, _records, _Steps, _substeps

__all__ = ["SensitivityStudy", "sensitivity_study"]


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
    tail = f"relative standard error {percent_text(rse)} %" if math.isfinite(rse) else "not determined by the data"
    return f"{name}: " + " and ".join(parts) + f"; {tail}"


def sensitivity_study(
    fit: FitResult, records: Sequence[Record] | Record, *, n_windows: int = 10, n_bands: int = 40,
    progress: ProgressFn | None = None,
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
    progress : callable or None
        ``progress(stage, fraction, message)``: one step per record simulated with sensitivities.

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
    sims = _simulate_records(fit, recs, progress)
    if isinstance(sims, str):
        return _empty_study(sims, names, values)
    sels, m_rows, sigma = _noise(recs, sims, opts.outputs, opts.sample_step, q)
    blocks, scaled = _weighted_blocks(sims, sels, sigma, opts.outputs, free_idx, est_x0, q, p_model, abs_theta)
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
    window_edges, window_energy, band_edges, band_energy, peak = _where_and_when(
        recs, sels, scaled, sigma, opts.outputs, opts.sample_step, p, n_windows, n_bands)
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


def _simulate_records(fit: FitResult, recs: Sequence[Record], progress: ProgressFn | None
                      ) -> list[SimulationResult] | str:
    """Each record simulated at the estimate with sensitivities; the first failure's message instead."""
    model, theta, opts = fit.model, fit.parameters.values, fit.options
    sims: list[SimulationResult] = []
    steps = _Steps(progress, "sensitivity", len(recs))
    for i, (r, rf) in enumerate(zip(recs, fit.records, strict=True)):
        steps.step(i, f"sensitivities on {r.name}")
        nsub = (int(opts.substeps) if opts.substeps is not None
                else _substeps(model, theta, r.dt, r.x, rf.predicted["v"]))
        sim = simulate(model, r.t, r.f, theta, rf.x0, input_hold=opts.input_hold, substeps=nsub, sensitivities=True,
                       outputs=opts.outputs)
        if not sim.success:
            return f"record `{r.name}`: the estimate cannot be simulated: {sim.message}"
        sims.append(sim)
    return sims


def _noise(recs: Sequence[Record], sims: Sequence[SimulationResult], outputs: Sequence[str], sample_step: int,
           q: int) -> tuple[list[NDArray[np.int64]], int, dict[tuple[int, str], float]]:
    """The fitted samples of each record, their number over all channels, and the noise per record × channel
    from the fit residual (dof-corrected)."""
    sels = [np.arange(0, r.n, sample_step) for r in recs]
    m_rows = sum(s.size for s in sels) * len(outputs)
    dof_corr = m_rows / max(m_rows - q, 1)
    sigma: dict[tuple[int, str], float] = {}
    for k, (r, sim) in enumerate(zip(recs, sims, strict=True)):
        for c in outputs:
            res = (sim.output(c) - r.channel(c))[sels[k]]
            sd = float(column_norms(res[:, None])[0]) * math.sqrt(dof_corr / max(res.size, 1))
            sigma[(k, c)] = sd if sd > 0 else 1.0
    return sels, m_rows, sigma


def _weighted_blocks(sims: Sequence[SimulationResult], sels: Sequence[NDArray[np.int64]],
                     sigma: Mapping[tuple[int, str], float], outputs: Sequence[str], free_idx: NDArray[np.int64],
                     est_x0: Sequence[bool], q: int, p_model: int, abs_theta: FloatArray
                     ) -> tuple[list[FloatArray], list[dict[str, FloatArray]]]:
    """The σ-weighted sensitivity blocks (rows: record × channel × sample; columns: free θ, then the estimated
    initial states) and each record's sensitivities to relative parameter changes."""
    blocks = []
    n_free = free_idx.size
    x0_col = n_free
    scaled: list[dict[str, FloatArray]] = []
    for k, sim in enumerate(sims):
        scaled.append({})
        for c in outputs:
            s = sim.sens[c]  # type: ignore[index]
            blk = np.zeros((sels[k].size, q))
            blk[:, :n_free] = s[sels[k]][:, free_idx]
            if est_x0[k]:
                blk[:, x0_col] = s[sels[k], p_model]
                blk[:, x0_col + 1] = s[sels[k], p_model + 1]
            blocks.append(blk / sigma[(k, c)])
            scaled[k][c] = s[:, free_idx] * abs_theta
        if est_x0[k]:
            x0_col += 2
    return blocks, scaled


def _where_and_when(recs: Sequence[Record], sels: Sequence[NDArray[np.int64]],
                    scaled: Sequence[Mapping[str, FloatArray]], sigma: Mapping[tuple[int, str], float],
                    outputs: Sequence[str], sample_step: int, p: int,
                    n_windows: int, n_bands: int
                    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
    """Energy per time window and per frequency band of the σ-weighted scaled sensitivities (window edges and
    energies, band edges in Hz and energies, each parameter's peak band centre)."""
    window_edges = np.linspace(0.0, 1.0, n_windows + 1)
    window_energy = np.zeros((p, len(recs) * n_windows))
    spectra = []
    for k, r in enumerate(recs):
        edges = np.round(window_edges * sels[k].size).astype(int)
        for c in outputs:
            ws = scaled[k][c][sels[k]] / sigma[(k, c)]
            e2 = ws**2
            for w in range(n_windows):
                window_energy[:, k * n_windows + w] += e2[edges[w] : edges[w + 1]].sum(axis=0)
            n_s = ws.shape[0]
            spec = np.abs(np.fft.rfft(ws, axis=0)) ** 2 / n_s
            spec[1 : (n_s + 1) // 2] *= 2.0  # one-sided: Σ spec = Σ ws² (Parseval)
            spectra.append((np.fft.rfftfreq(n_s, d=r.dt * sample_step), spec))
    nyquist = min(0.5 / (r.dt * sample_step) for r in recs)
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
    return window_edges, window_energy, band_edges, band_energy, peak
