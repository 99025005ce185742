r"""Equation error: one bounded linear least-squares solve on column-scaled regressors.

The residual is :math:`r = (\Phi\theta - f)/A` with :math:`A = \max|f|` over
all records, optional record weights, a low-force mask and ``sample_step``;
fixed parameters move to the right-hand side. Since
:math:`\|A_s z - b\|^2 = \|R z - Q^\top b\|^2 + \text{const}`, the bounded
solve (BVLS) and the covariance use only the p × p triangular factor R.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dtrtrs
from scipy.optimize import lsq_linear

from ..errors import DataValidationError, ModelSpecError
from ..identifiability import (column_norms, least_squares_solve, newey_west_note, rescale_uncertainty,
                               serially_correlated,
                               uncertainty_from_jacobian, weak_directions_text)
from ..models import TermModel
from ..params import ParameterSet
from ..record import Record
from ._threads import with_single_blas_thread
from .assemble import _flags_and_estimates, _metrics, _prior_rows
from .options import FitOptions, FloatArray
from .prepare import DataScaling, _check_records, _check_scales, _params_for, _with_derivatives, data_scaling
from .results import FitResult, RecordFit

__all__ = ["equation_error"]


def _triangular_factor(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """R (upper, p × p) and c with ‖a z − b‖² = ‖R z − c‖² + const, for column-normalised ``a``."""
    gram = a.T @ a
    try:
        low = np.linalg.cholesky(gram)
        d = np.abs(np.diag(low))
        if d.min() > 1e-5 * d.max():  # condition of a below ~1e5: the normal equations lose nothing that matters
            return np.asarray(low.T, dtype=np.float64), np.asarray(solve_triangular(low, a.T @ b, lower=True))
    except np.linalg.LinAlgError:
        pass
    q_mat, r_mat = np.linalg.qr(a, mode="reduced")
    return np.asarray(r_mat, dtype=np.float64), np.asarray(q_mat.T @ b, dtype=np.float64)


def _peak(u: FloatArray) -> float:
    """max |u| without a temporary array."""
    return max(float(u.max()), -float(u.min())) if u.size else 0.0


def _normalised_factor(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    """``(norms, R, c)``: the column norms of ``a`` and :func:`_triangular_factor` of the column-normalised
    problem, both from the Gram matrix of ``a`` itself; None when a column's norm is zero or outside
    1e±140 (:func:`column_norms` is then needed) or the normalised problem is not well conditioned."""
    with np.errstate(all="ignore"):
        gram = a.T @ a
        norms = np.sqrt(np.diag(gram))
        if not (np.all(np.isfinite(gram)) and np.all((norms > 1e-140) & (norms < 1e140))):
            return None
        gram /= norms
        gram /= norms[:, None]
    try:
        low = np.linalg.cholesky(gram)
    except np.linalg.LinAlgError:
        return None
    d = np.abs(np.diag(low))
    if not d.min() > 1e-5 * d.max():
        return None
    c, info = dtrtrs(low, (a.T @ b) / norms, lower=1)  # LAPACK's triangular solve without scipy's checks
    if info != 0:
        return None
    return norms, np.asarray(low.T, dtype=np.float64), np.asarray(c, dtype=np.float64)


def _bounded_solve(r_mat: FloatArray, rhs: FloatArray, lb: FloatArray, ub: FloatArray
                   ) -> tuple[FloatArray, NDArray[np.int64], bool, str]:
    """min ‖R z − c‖ subject to lb ≤ z ≤ ub: ``(z, active_mask, success, message)`` as ``lsq_linear``.

    The problem is convex, so a point that satisfies the Karush–Kuhn–Tucker conditions is its minimiser.
    When the unconstrained minimiser R⁻¹c lies strictly inside the bounds it is the answer (the usual case:
    most bounds are ``m ≥ 0``-style and inactive). Otherwise the bounds it crosses are guessed active, the
    rest solved again, and the guess corrected a few times (:func:`_guess_active_set`); a guess is taken
    only when it passes the conditions. A badly conditioned R, or guesses that do not settle, go to BVLS.
    """
    d = np.abs(np.diag(r_mat))
    if d.size and d.min() > 1e-10 * d.max():
        z, info = dtrtrs(r_mat, rhs, lower=0)
        if info == 0 and np.all(np.isfinite(z)):
            if np.all(z > lb) and np.all(z < ub):
                return z, np.zeros(z.size, dtype=np.int64), True, ""
            found = _guess_active_set(r_mat, rhs, lb, ub, z)
            if found is not None:
                return found[0], found[1], True, ""
    sol = lsq_linear(r_mat, rhs, bounds=(lb, ub), method="bvls", lsmr_tol=None)
    ok = bool(sol.success) if hasattr(sol, "success") else True
    return np.asarray(sol.x, dtype=np.float64), np.asarray(sol.active_mask), ok, str(sol.message)


def _guess_active_set(r_mat: FloatArray, rhs: FloatArray, lb: FloatArray, ub: FloatArray, z_free: FloatArray,
                      tries: int = 4) -> tuple[FloatArray, NDArray[np.int64]] | None:
    """The bounded minimiser by guessing its active bounds, or None when no guess passes the KKT test.

    A guess fixes the variables of ``active`` (−1 at ``lb``, +1 at ``ub``) and solves for the others.
    It is the minimiser when the others lie strictly inside their bounds and the gradient
    g = Rᵀ(Rz − c) points out of the box at every fixed one (g ≥ 0 at a lower bound, g ≤ 0 at an upper
    one, to rounding). A failed guess fixes the variables that left their bounds and frees those whose
    gradient points inwards, which settles in one or two corrections on the problems of a fit.
    """
    if np.any(lb >= ub):
        return None
    active = np.where(z_free <= lb, -1, np.where(z_free >= ub, 1, 0)).astype(np.int64)
    scale = np.abs(r_mat).T @ (np.abs(r_mat) @ np.abs(np.where(np.isfinite(z_free), z_free, 0.0)) + np.abs(rhs))
    for _ in range(tries):
        fixed = active != 0
        if fixed.all():
            return None
        z = np.where(active < 0, lb, np.where(active > 0, ub, 0.0))
        free = ~fixed
        z[free] = least_squares_solve(r_mat[:, free], rhs - r_mat[:, fixed] @ z[fixed])
        grad = r_mat.T @ (r_mat @ z - rhs)
        tol = 1e-10 * (scale + np.abs(r_mat).T @ (np.abs(r_mat) @ np.abs(z)))
        out_low, out_high = free & (z <= lb), free & (z >= ub)
        inwards = ((active < 0) & (grad < -tol)) | ((active > 0) & (grad > tol))
        if not (out_low.any() or out_high.any() or inwards.any()):
            return z, active
        active = np.where(out_low, -1, np.where(out_high, 1, np.where(inwards, 0, active)))
    return None


@with_single_blas_thread
def equation_error(
    records: Sequence[Record] | Record,
    model: TermModel,
    params: ParameterSet | None = None,
    options: FitOptions | None = None,
    *,
    diagnostics: bool = True,
) -> FitResult:
    """Bounded linear least-squares fit of the equation error.

    Parameters
    ----------
    records : Record or sequence of Record
        Missing v, a are derived (``options.differentiator``).
    model : TermModel
    params : ParameterSet or None
        Bounds, fixed values and units (defaults from the model).
    options : FitOptions or None
    diagnostics : bool
        False returns the parameters only (no uncertainty, metrics or record
        fits): for the start of an output-error fit.

    Returns
    -------
    FitResult
        ``method="equation-error"``; metrics are on the force channel.
        ``timing["equation_error_s"]`` covers the whole call.
    """
    start = time.perf_counter()
    opts = options or FitOptions(method="equation-error")
    recs = _check_records(records)
    requested = _params_for(model, recs, params)
    if opts.record_weights is not None and len(opts.record_weights) != len(recs):
        raise ModelSpecError(f"`record_weights` has {len(opts.record_weights)} entries for {len(recs)} records")
    recs_d = tuple(_with_derivatives(r, opts.differentiator) for r in recs)
    if opts.input_hold == "zoh":
        recs_d = tuple(_mid_interval(r, rd) for r, rd in zip(recs, recs_d, strict=True))
    params, held = _hold_nonlinear(model, requested)
    # Work in data of order one (see DataScaling): products such as x³ neither underflow for x ~ 1e-100 nor
    # overflow, and the solution is exactly that of the unscaled problem.
    scaling = data_scaling(model, recs_d)
    _check_scales(model, params, recs_d, simulate=False, scaling=scaling)
    A, b, phis, rows = _linear_system(model, recs_d, params, opts, scaling)
    if A.shape[0] <= A.shape[1]:
        raise DataValidationError(f"{A.shape[0]} usable samples for {A.shape[1]} parameters")
    ls = _LinearSolve(A, b, params, opts, scaling)
    z, active_mask, ok, solve_message = _bounded_solve(ls.r_mat, ls.rhs, ls.lb, ls.ub)
    values = params.values.copy()
    values[params.free_mask] = np.ldexp(z / ls.norms, ls.e_free)
    if not np.all(np.isfinite(values)):
        raise DataValidationError(
            "the estimated coefficients overflow in these units: express the force or the displacement in"
            " another unit (e.g. --units x=mm)"
        )
    fitted = params.with_values(values, clip=True)
    n_data = A.shape[0]
    r_all = ls.residual(z)
    active = {n: bool(a != 0) for n, a in zip(params.free_names, active_mask, strict=True)}
    warns = [f"{r.name}: {w}" for r in recs_d for w in r.warnings]
    if held:
        warns.append(f"equation error held {', '.join(held)} at their start values (not linear in the force)")
    message = "equation error solved (bounded linear least squares)" if ok else f"lsq_linear: {solve_message}"
    common: dict[str, Any] = {
        "success": ok, "method": "equation-error", "model": model, "options": opts, "nfev": 1, "message": message,
        "parameters": requested.with_values(fitted.values), "cost": 0.5 * float(r_all @ r_all),
        "stages": {"equation-error": fitted.as_dict()}}
    if not diagnostics:  # a start for another fit: parameters only
        estimates, _ = _flags_and_estimates(model, fitted, None, active, opts.confidence)
        return FitResult(**common, estimates=estimates, uncertainty=None, weak_directions=(), correlated_pairs=(),
                         metrics=(), records=(), timing={"equation_error_s": time.perf_counter() - start},
                         warnings=tuple(warns))
    # the regression treats x, ẋ, ẍ as exact: noise on them (measured, or derived from a noisy x) biases the
    # estimates towards zero beyond these intervals (errors in variables); the user of this method is told
    warns.append("equation error's intervals assume noise-free x, v and a; noise on them biases the estimates"
                 " beyond the intervals (errors in variables): output error (or the default two-stage fit) does not")
    dof = max(n_data - A.shape[1], 1)
    unc = rescale_uncertainty(
        uncertainty_from_jacobian(
            ls.r_mat * ls.norms, np.zeros(ls.r_mat.shape[0]), params.free_names, confidence=opts.confidence,
            sigma2=float(r_all[:n_data] @ r_all[:n_data]) / dof, dof=dof,
        ),
        ls.e_free,
    )
    serial = list(itertools.pairwise(itertools.accumulate(rows, initial=0)))
    if opts.covariance == "auto" and serially_correlated(r_all[:n_data], serial):
        # a coloured equation error (unmodelled dynamics, derivatives of a noisy record): the Newey–West
        # covariance over the rows themselves (the fast path left A as it was, the other one normalised it)
        jac = ls.A[:n_data] if ls.fast is not None else ls.A[:n_data] * ls.norms
        unc = rescale_uncertainty(
            uncertainty_from_jacobian(jac, r_all[:n_data], params.free_names, confidence=opts.confidence,
                                      serial_blocks=serial),
            ls.e_free,
        )
        warns.append(newey_west_note(unc, "equation error"))
    estimates, pairs = _flags_and_estimates(model, fitted, unc, active, opts.confidence)
    rfits, metrics = _force_fits(recs_d, phis, scaling, scaling.to_scaled(fitted.values))
    return FitResult(**common, estimates=estimates, uncertainty=unc, weak_directions=weak_directions_text(unc),
                     correlated_pairs=pairs, metrics=tuple(metrics), records=tuple(rfits),
                     timing={"equation_error_s": time.perf_counter() - start}, warnings=tuple(warns))


def _mid_interval(rec: Record, derived: Record) -> Record:
    """A force held over each sample interval (``input_hold`` "zoh": a controller's output) seen by motion derived
    from the sampled displacement: the acceleration derived at ``t_k`` averages the intervals on either side of
    it, so the force it balances is the mean of the two held values, ``(f(k−1) + f(k))/2``. Pairing it with
    ``f(k)`` instead shifts the force by half a sample and biases the damping (by 3.6 % for a position loop at
    1 kHz in the tests). A record whose acceleration was measured is left as it is."""
    if rec.a is not None or derived.n < 2:
        return derived
    f = np.asarray(derived.f, dtype=np.float64)
    mid = np.concatenate([f[:1], 0.5 * (f[1:] + f[:-1])])
    note = ("the force is held over each sample (input hold zoh): equation error balances the motion derived at each"
            " sample against the mean of the forces held on either side of it")
    return dataclasses.replace(derived, f=mid, warnings=(*derived.warnings, note))


def _hold_nonlinear(model: TermModel, params: ParameterSet) -> tuple[ParameterSet, list[str]]:
    """Equation error estimates the coefficients the force is linear in; the others (settings such as v_eps,
    parameters of state-carrying terms) are held at their values, their force subtracted. Returns the
    parameters with those fixed and their names.

    Raises
    ------
    ModelSpecError
        Every parameter fixed, or no free one that enters the force linearly.
    """
    if not params.free_mask.any():
        raise ModelSpecError("every parameter is fixed: nothing to estimate")
    held = [n for n, f, lin in zip(params.names, params.free_mask, model.linear_mask, strict=True) if f and not lin]
    if held:
        params = params.fix(*held)
    if not params.free_mask.any():
        raise ModelSpecError(
            f"equation error can only estimate coefficients that enter the force linearly; {', '.join(held)} do not:"
            " use output error"
        )
    return params, held


def _linear_system(model: TermModel, recs_d: Sequence[Record], params: ParameterSet, opts: FitOptions,
                   scaling: DataScaling
                   ) -> tuple[FloatArray, FloatArray, list[tuple[FloatArray, FloatArray | None]], list[int]]:
    """The weighted, scaled system ``A θ_free = b`` over every record's selected samples (the fixed
    parameters' and held terms' force moved to ``b``), each record's regressors and held force, and the number
    of rows of each record."""
    free = params.free_mask
    amp = max(_peak(r.f) for r in recs_d)
    theta_fixed = np.where(free, 0.0, scaling.to_scaled(params.values))
    blocks, targets, phis = [], [], []
    to_amp = math.ldexp(1.0, scaling.force_exp) / amp  # in [1, 2): residuals are (Φθ − f) / max|f|
    for k, r in enumerate(recs_d):
        w = (opts.record_weights[k] if opts.record_weights is not None else 1.0) * to_amp
        sel: slice | np.ndarray = slice(None, None, opts.sample_step)  # every sample: views, not copies
        if opts.force_threshold > 0:
            sel = np.arange(0, r.n, opts.sample_step)
            sel = sel[np.abs(r.f[sel]) >= opts.force_threshold * amp]
            if sel.size == 0:
                raise DataValidationError(f"record `{r.name}`: the low-force mask removes every sample")
        phi_all = scaling.regressors(r, params.values)
        extra = _held_force(model, params.values, r)
        phis.append((phi_all, extra))
        phi = phi_all[sel]
        blocks.append(w * phi)
        target = scaling.force(r.f[sel] if extra is None else r.f[sel] - extra[sel])
        if theta_fixed.any():
            target -= phi @ theta_fixed
        target *= w
        targets.append(target)
    A = blocks[0] if len(blocks) == 1 else np.vstack(blocks)  # a new array either way (w * phi)
    if not free.all():
        A = A[:, free]
    b = targets[0] if len(targets) == 1 else np.concatenate(targets)
    return A, b, phis, [blk.shape[0] for blk in blocks]


class _LinearSolve:
    """The bounded problem in unit-norm columns: its triangular factor ``r_mat`` and ``rhs``, the bounds and
    the column norms (``A`` may be scaled in place: it is the caller's own copy)."""

    def __init__(self, A: FloatArray, b: FloatArray, params: ParameterSet, opts: FitOptions,
                 scaling: DataScaling) -> None:
        free = params.free_mask
        self.A, self.b = A, b
        # without a prior, the column norms and the normalised problem's factor both come from one Gram matrix
        # (no normalised copy of A); badly scaled or conditioned columns take the explicit way below
        self.fast = _normalised_factor(A, b) if opts.prior is None or opts.prior.lam <= 0 else None
        norms = self.fast[0] if self.fast is not None else column_norms(A)
        zero_cols = [n for n, c in zip(params.free_names, norms, strict=True) if c == 0]
        if zero_cols:
            raise ModelSpecError(
                f"term(s) {', '.join(zero_cols)} are identically zero on this data (nothing excites them); remove or"
                " fix them"
            )
        if not np.all(np.isfinite(norms)) or not np.all(np.isfinite(b)):
            raise DataValidationError("the regressors overflow on this data: check the units of the displacement")
        self.norms = norms
        self.e_free = scaling.exponents[free]
        with np.errstate(over="ignore", under="ignore"):  # a finite bound beyond floating point becomes ±inf or 0
            self.lb = np.ldexp(params.lower[free], -self.e_free) * norms
            self.ub = np.ldexp(params.upper[free], -self.e_free) * norms
        if self.fast is not None:
            self.r_mat, self.rhs = self.fast[1], self.fast[2]
            return
        As = A
        As /= norms  # in place: A is this function's own copy
        bb = b
        if opts.prior is not None and opts.prior.lam > 0:
            jp, _ = _prior_rows(opts.prior, params, np.ones(int(free.sum())), np.zeros(int(free.sum())))
            prior0 = np.array([float(opts.prior.values.get(n, 0.0)) for n in params.free_names])
            z0 = np.ldexp(prior0, -self.e_free) * norms
            sel_rows = np.flatnonzero(jp.any(axis=0)) if jp.size else np.array([], dtype=int)
            lam = math.sqrt(opts.prior.lam)
            As = np.vstack([As, lam * np.eye(As.shape[1])[sel_rows]])
            bb = np.concatenate([b, lam * z0[sel_rows]])
        # ‖As z − b‖² = ‖R z − Qᵀb‖² + const: the bounded solve and the covariance need only the p × p factor
        # R. The columns of As have unit norm, so the Cholesky factor of AsᵀAs is accurate unless As is badly
        # conditioned; then a QR decomposition is used.
        self.As, self.bb = As, bb
        self.r_mat, self.rhs = _triangular_factor(As, bb)

    def residual(self, z: FloatArray) -> FloatArray:
        """The weighted residual at the solution ``z`` of the unit-norm problem (prior rows last)."""
        return self.A @ (z / self.norms) - self.b if self.fast is not None else self.As @ z - self.bb


def _force_fits(recs_d: Sequence[Record], phis: Sequence[tuple[FloatArray, FloatArray | None]],
                scaling: DataScaling, theta_s: FloatArray) -> tuple[list[RecordFit], list[Any]]:
    """Each record's predicted force and its metrics."""
    rfits, metrics = [], []
    for r, (phi_all, extra) in zip(recs_d, phis, strict=True):
        f_pred = np.ldexp(phi_all @ theta_s, scaling.force_exp)
        if extra is not None:
            f_pred += extra
        rfits.append(
            RecordFit(
                name=r.name, t=r.t, measured={"f": r.f}, predicted={"f": f_pred}, fitted_channels=("f",),
                x0=(float(r.x[0]), float(r.v[0])), x0_stderr=(math.nan, math.nan), x0_mode="not used",  # type: ignore[index]
                simulation_ok=True, simulation_message="equation error: no simulation",
            )
        )
        metrics.append(_metrics(r.name, "f", r.unit("f"), r.f, f_pred, fs=r.fs))
    return rfits, metrics


def _held_force(model: TermModel, theta: FloatArray, r: Record) -> FloatArray | None:
    """The force equation error does not regress: state-carrying terms (states driven by the measured
    motion) and any part of a typed term not carried by its linear coefficients; None when there is none
    (library terms only)."""
    if not (model.custom or model.has_internal_states):
        return None
    extra = np.zeros(r.n)
    if model.custom:
        extra += model.offset_force(theta, r.x, r.v, r.a)  # type: ignore[arg-type]
    if model.has_internal_states:
        try:
            extra += model.state_force(theta, r.t, r.x, r.v)  # type: ignore[arg-type]
        except ModelSpecError:
            # start values that cannot follow the record: the linear stage then sees the state terms' force as
            # part of the residual; output error estimates them
            pass
    return extra
