"""The result of a multi-DOF fit: every parameter's estimate with its interval, how each record and channel is
reproduced, and the summary of the information at the optimum (through the one uncertainty path of
:func:`nlid_core.identifiability.uncertainty_from_jacobian`)."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..estimate.results import ParameterEstimate
from ..identifiability import CORR_LIMIT, RSE_LIMIT, Uncertainty, serially_correlated, uncertainty_from_jacobian
from ..params import Parameter, ParameterSet
from .data import MdofRecord
from .normal import RANK_TOL, Block, State, normal_equations, schur
from .spec import MdofModel

__all__ = ["ChannelFit", "MdofFit", "failed_fit", "serial_uncertainty", "summarise", "weakest_direction_text"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, kw_only=True)
class ChannelFit:
    """How well one output of one record is reproduced."""

    record: str
    output: str
    unit: str
    rmse: float
    fit_percent: float
    sigma: float


@dataclass(frozen=True, kw_only=True)
class MdofFit:
    """Result of :func:`fit_records`.

    Attributes
    ----------
    success : bool
    message : str
    parameters : ParameterSet
        Every parameter, free ones at their estimates.
    estimates : tuple of ParameterEstimate
        Every parameter, as every estimator reports it (``ci`` is the 95 % interval, the integration error's shift
        included; ``vary`` marks the estimated ones; flags and notes as in single-DOF fits).
    free, records : tuple of str
    condition : float
        Condition number of the column-equilibrated Jacobian of the free parameters (initial states eliminated);
        with ``combine``, over the directions the fit estimated (the message gives the one over every parameter).
    weakest : str
        The least determined combination of parameters, in words.
    weakest_vector : tuple of (str, float)
        Its components (largest first).
    correlations : tuple of (str, str, float)
        Pairs of free parameters correlated beyond ``CORR_LIMIT`` (0.95, as everywhere), strongest first.
    channels : tuple of ChannelFit
    initial_states : mapping of str to (2n,) ndarray
        Estimated initial state per dynamic record.
    cost : float
        ½ Σ weighted residual².
    n_residuals : int
    s2 : float
        Reduced χ².
    iterations, nfev : int
    elapsed_s : float
    undetermined : tuple of str
        Parameters held at their start values because the records cannot determine them.
    combined : tuple of str
        Parameters the records determine only in combination with others (``combine=True``).
    misfit : tuple of str
        A line per dynamic record and channel whose residual is far above its noise floor
        (:data:`nlid_core.mdof.fit.MISFIT_RATIO`): the model does not reproduce it, and the intervals, computed
        as if the residual were noise, are not to be trusted.
    serial_lag : int
        The Newey–West window (samples) of the intervals when a dynamic record's residual is not white, else 0
        (see :func:`serial_uncertainty`).
    """

    success: bool
    message: str
    parameters: ParameterSet
    estimates: tuple[ParameterEstimate, ...]
    free: tuple[str, ...]
    records: tuple[str, ...]
    condition: float
    weakest: str
    weakest_vector: tuple[tuple[str, float], ...]
    correlations: tuple[tuple[str, str, float], ...]
    channels: tuple[ChannelFit, ...]
    initial_states: Mapping[str, FloatArray] = field(default_factory=dict)
    cost: float = math.nan
    n_residuals: int = 0
    s2: float = math.nan
    iterations: int = 0
    nfev: int = 0
    elapsed_s: float = 0.0
    undetermined: tuple[str, ...] = ()
    combined: tuple[str, ...] = ()
    misfit: tuple[str, ...] = ()
    serial_lag: int = 0

    def estimate(self, name: str) -> ParameterEstimate:
        """The estimate of one parameter by name."""
        for e in self.estimates:
            if e.name == name:
                return e
        raise KeyError(name)


def _estimate(p: Parameter, free: bool, stderr: float = math.nan, ci: tuple[float, float] = (math.nan, math.nan),
              partners: Sequence[tuple[str, float]] = (), *, undetermined: bool = False) -> ParameterEstimate:
    """One parameter as every estimator reports it, with the same flags: ``fixed``, ``at_bound``,
    ``unidentifiable`` (not determined, or a relative standard error above ``RSE_LIMIT``) and
    ``strongly_correlated`` (|ρ| above ``CORR_LIMIT``, partners in the notes)."""
    flags: list[str] = [] if free else ["fixed"]
    notes: list[str] = []
    if undetermined:
        flags.append("unidentifiable")
        notes.append("not determined by the records: held at its start value")
    if free:
        if any(math.isfinite(b) and abs(p.value - b) <= 1e-9 * max(abs(b), 1e-300) for b in (p.lower, p.upper)):
            flags.append("at_bound")
        rse = abs(stderr / p.value) if p.value else math.inf
        if not (math.isfinite(rse) and rse <= RSE_LIMIT):
            flags.append("unidentifiable")
        if partners:
            flags.append("strongly_correlated")
            notes.append("strongly correlated with " + ", ".join(f"{n} ({rho:+.3f})" for n, rho in partners))
    return ParameterEstimate(name=p.name, value=p.value, stderr=stderr, ci=ci, unit=p.unit, vary=free, lower=p.lower,
                             upper=p.upper, flags=tuple(flags), notes=tuple(notes))


def failed_fit(model: MdofModel, params: ParameterSet, free: Sequence[str], records: Sequence[MdofRecord], message: str,
            t_start: float, nfev: int) -> MdofFit:
    est = tuple(_estimate(p, p.name in free) for p in params)
    return MdofFit(success=False, message=message, parameters=params, estimates=est, free=tuple(free),
                   records=tuple(r.name for r in records), condition=math.nan, weakest="", weakest_vector=(),
                   correlations=(), channels=(), nfev=nfev, elapsed_s=time.perf_counter() - t_start)


def weakest_direction_text(vector: Sequence[tuple[str, float]]) -> str:
    """A sentence for the least determined combination of parameters (components largest first)."""
    if not vector:
        return ""
    big = [(n, w) for n, w in vector if abs(w) >= 0.25 * abs(vector[0][1])][:4]
    if len(big) == 1:
        return f"{big[0][0]} on its own: the data barely constrain it"
    same = [n for n, w in big if w * big[0][1] > 0]
    opposite = [n for n, w in big if w * big[0][1] < 0]
    if opposite:
        return (f"{' + '.join(same)} against {' + '.join(opposite)}: raising one and lowering the other changes the "
                "outputs little, so the data tell them apart poorly")
    return f"{' + '.join(same)} together: the data barely see them change in step"


def _projected_rows(records: Sequence[MdofRecord], blocks: Sequence[Block], free_idx: NDArray[np.int64],
                    scale: FloatArray) -> tuple[FloatArray, FloatArray, list[tuple[tuple[int, int], ...]]]:
    """Every residual row with its Jacobian over the free (scaled) parameters, each record's initial states
    projected out (the rows of the Schur complement's information), ordered by channel within a record; and the
    serial blocks of the dynamic records (one range per channel, row k of each at the same time)."""
    rows, res, serial = [], [], []
    at = 0
    for rec, b in zip(records, blocks, strict=True):
        jp = b.jp[:, free_idx] * scale[None, :]
        if b.ji.size:
            u, sv, _ = np.linalg.svd(b.ji, full_matrices=False)
            q = u[:, sv > math.sqrt(RANK_TOL) * max(float(sv[0]), 1e-300)] if sv.size else u[:, :0]
            jp = jp - q @ (q.T @ jp)
        n_out = b.r.size // max(rec.n, 1)
        if rec.static or n_out * rec.n != b.r.size:
            rows.append(jp)
            res.append(b.r)
            at += b.r.size
            continue
        rows.append(jp.reshape(rec.n, n_out, -1).transpose(1, 0, 2).reshape(b.r.size, -1))
        res.append(b.r.reshape(rec.n, n_out).T.reshape(-1))
        serial.append(tuple((at + j * rec.n, at + (j + 1) * rec.n) for j in range(n_out)))
        at += b.r.size
    return np.vstack(rows), np.concatenate(res), serial


def serial_uncertainty(records: Sequence[MdofRecord], blocks: Sequence[Block], free: Sequence[str],
                       free_idx: NDArray[np.int64], scale: FloatArray) -> Uncertainty | None:
    """The Newey–West uncertainty of the free parameters (scaled) when a dynamic record's weighted residual fails
    the whiteness test, else None: the rows of every record with its initial states projected out, the
    channels of a record summed at each time (:func:`nlid_core.identifiability.uncertainty_from_jacobian`)."""
    dynamic = [(rec, b) for rec, b in zip(records, blocks, strict=True) if not rec.static]
    if not dynamic or not free:
        return None
    jac, r, serial = _projected_rows(records, blocks, free_idx, scale)
    if not serial or not serially_correlated(r, serial):
        return None
    return uncertainty_from_jacobian(jac, r, list(free), serial_blocks=serial, rank_rtol=math.sqrt(RANK_TOL))


def summarise(model: MdofModel, params: ParameterSet, free: list[str], free_idx: NDArray[np.int64], scale: FloatArray,
               records: Sequence[MdofRecord], state: State, sig: Sequence[FloatArray], init_sizes: Sequence[int],
               message: str, iters: int, nfev: int, t_start: float, bias: FloatArray | None = None,
               undetermined: Sequence[str] = ()) -> MdofFit:
    nf = free_idx.size
    a, _ = normal_equations(state.blocks, free_idx, scale, init_sizes)
    n_res = sum(b.r.size for b in state.blocks)
    dof = max(n_res - a.shape[0], 1)
    s2 = 2 * state.cost / dof
    cond = math.nan
    weakest_vec: tuple[tuple[str, float], ...] = ()
    correlations: list[tuple[str, str, float]] = []
    se = np.full(nf, np.nan)
    half = np.full(nf, np.nan)
    serial_lag = 0
    if nf:
        # the parameters' information with the initial states eliminated, S = RᵀR, through the one uncertainty
        # path of every estimator (column equilibration, rank threshold, Student-t intervals, correlations)
        s_mat = schur(a, nf)
        # equilibrated first: S = D·Se·D, so R = sqrt(W)·Vᵀ·D (a diagonal entry that cancelled to nothing in the
        # elimination is floored relative to the largest, so that no column is blown up past floating point)
        diag = np.diag(s_mat)
        top = float(np.max(diag)) if diag.size and np.all(np.isfinite(s_mat)) else math.nan
        d = np.sqrt(np.maximum(diag, 1e-300 * top if top > 0 else 1e-300))
        try:
            w, v = np.linalg.eigh(0.5 * (s_mat + s_mat.T) / np.outer(d, d))
        except np.linalg.LinAlgError:  # not finite: nothing is determined
            w, v = np.zeros(nf), np.eye(nf)
        factor = np.sqrt(np.maximum(w, 0.0))[:, None] * v.T * d[None, :]
        unc = uncertainty_from_jacobian(factor, np.zeros(nf), free, sigma2=s2, dof=dof, rank_rtol=math.sqrt(RANK_TOL))
        sv = unc.singular_values
        cond = unc.condition_number if math.isfinite(unc.condition_number) else (
            float(sv[0] / sv[-1]) if sv.size and sv[-1] > 0 else math.inf)
        vec = unc.directions[:, -1]
        order = np.argsort(-np.abs(vec))
        weakest_vec = tuple((free[i], float(vec[i])) for i in order if abs(vec[i]) > 0.05)
        coloured = serial_uncertainty(records, state.blocks, free, free_idx, scale)
        if coloured is not None:  # a residual that is not white: the Newey–West intervals
            unc = coloured
            serial_lag = coloured.serial_lag
        se = unc.stderr * scale
        half = unc.ci_halfwidth * scale
        for i in range(nf):
            for j in range(i + 1, nf):
                if abs(unc.correlation[i, j]) > CORR_LIMIT:
                    correlations.append((free[i], free[j], float(unc.correlation[i, j])))
        correlations.sort(key=lambda c: -abs(c[2]))
    theta = np.array([params[n].value for n in model.param_names])
    theta[free_idx] = state.x * scale
    new_params = params.with_values(dict(zip(model.param_names, theta.tolist(), strict=True)))
    estimates = []
    extra = np.zeros(nf) if bias is None else bias * scale
    for p in new_params:
        if p.name in free:
            k = free.index(p.name)
            width = half[k] + extra[k]
            partners = [(b if a == p.name else a, rho) for a, b, rho in correlations if p.name in (a, b)]
            estimates.append(_estimate(p, True, float(se[k]), (float(p.value - width), float(p.value + width)), partners))
        else:
            estimates.append(_estimate(p, False, undetermined=p.name in undetermined))
    channels = []
    inits: dict[str, FloatArray] = {}
    for rec, b, s, y0 in zip(records, state.blocks, sig, state.inits, strict=True):
        r = b.r.reshape(rec.n, -1) * s[None, :]
        for j, dof in enumerate(rec.output_names):
            y = rec.y[:, j]
            rmse = float(np.sqrt(np.mean(r[:, j] ** 2)))
            denom = float(np.linalg.norm(y - y.mean()))
            fitp = 100.0 * (1.0 - float(np.linalg.norm(r[:, j])) / denom) if denom > 0 else math.nan
            channels.append(ChannelFit(record=rec.name, output=dof, unit=model.dof_unit(dof), rmse=rmse, fit_percent=fitp,
                                       sigma=float(s[j])))
        if not rec.static:
            inits[rec.name] = y0
    return MdofFit(success=True, message=message, parameters=new_params, estimates=tuple(estimates), free=tuple(free),
                   records=tuple(r.name for r in records), condition=cond,
                   weakest=weakest_direction_text(weakest_vec), weakest_vector=weakest_vec,
                   correlations=tuple(correlations[:10]), channels=tuple(channels), initial_states=inits,
                   cost=state.cost, n_residuals=n_res, s2=s2, iterations=iters, nfev=nfev,
                   elapsed_s=time.perf_counter() - t_start, serial_lag=serial_lag)
