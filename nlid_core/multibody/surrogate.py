r"""Chebyshev polynomial surrogate of an expensive vector response, and its bounds over sub-boxes.

The interval inverse problem of Guo & Jin (2025, §1) replaces the forward model
:math:`Y = T(X)` (here: tip coordinates of a flexible double pendulum at m instants, from d
uncertain parameters) by a polynomial in the normalised inputs, so that the bounds of the response
over an interval box can be evaluated thousands of times inside a particle swarm.

**Normalisation** (their eq. 5). Over the physical box :math:`[\ell, u]` with centre
:math:`x_c = (\ell + u)/2` and radius :math:`x_w = (u - \ell)/2`,

.. math::  x = x_c + x_w \circ \eta, \qquad \eta \in [-1, 1]^d,

so parameters of very different scales (angles in rad, a Young's modulus in Pa) are treated alike.

**Basis** (their eqs. 7–8). :math:`\psi_\alpha(\eta) = \prod_{j=1}^d T_{\alpha_j}(\eta_j)` with
:math:`T_n` the Chebyshev polynomials of the first kind, :math:`T_0 = 1, T_1 = \eta,
T_{n+1} = 2\eta T_n - T_{n-1}`, over the multi-indices of order p of kind ``"total"``
(:math:`\sum_j \alpha_j \le p`, :math:`P = \binom{p+d}{d}`, the paper's choice) or ``"tensor"``
(:math:`\max_j \alpha_j \le p`, :math:`P = (p+1)^d`). Each of the m outputs is
:math:`\hat y_i(\eta) = \sum_\alpha \gamma_{\alpha i}\,\psi_\alpha(\eta)`.

**Coefficients** (their eqs. 9–11). With the design matrix :math:`A_{s\alpha} = \psi_\alpha(\eta_s)`
on :math:`M \ge P` samples (the paper's :math:`M = 2P`) and the runs :math:`F` (M × m),
:math:`\Gamma = \arg\min \|A\Gamma - F\|_F`, solved by ``numpy.linalg.lstsq`` (an SVD) rather than the
paper's normal equations :math:`(A^\top A)^{-1}A^\top F`, which square the condition number.

**Samples** (:func:`sample_design`): the box centre, then a scrambled Sobol sequence
:math:`u \in [0, 1)^d` mapped through :math:`\eta = -\cos(\pi u)`. The map gives the Chebyshev
(arcsine) density :math:`\propto (1-\eta^2)^{-1/2}` in each coordinate, the density of the
Chebyshev–Gauss–Lobatto nodes, under which the Chebyshev polynomials are an orthogonal system of
bounded norm; least squares is then stable with M a small multiple of P (Cohen, Davenport & Leviatan
2013; Hampton & Doostan 2015), unlike uniform sampling which under-weights the edges where
Chebyshev polynomials vary fastest. Sobol rather than independent draws gives a space-filling design
for any M; scrambling with ``seed`` makes it deterministic and avoids the unscrambled first point
at a corner.

**Bounds over a sub-box** (:meth:`ChebyshevSurrogate.bounds`). For each output, its minimum and
maximum over a box :math:`[a, b] \subset [-1, 1]^d` are found in two stages, vectorised over outputs
and over boxes:

1. the polynomial on a tensor grid of ``grid`` equispaced nodes per dimension (corners included),
   evaluated by successive mode products with the coefficients arranged as a
   :math:`(p+1)^d \times m` tensor (cost :math:`O(k\,g^d m\,(p+1))`, no :math:`g^d \times P` matrix);
2. from the best grid node of each (box, output, min/max), ``polish`` projected Newton steps:
   coordinates at a bound whose gradient points out of the box are held (the active set of
   Bertsekas 1982); on the others the step is :math:`-|H|^{-1} g` with :math:`|H|` the Hessian with
   its eigenvalues replaced by their absolute values (a modified Newton step that descends at
   saddles; Nocedal & Wright 2006, §3.4), tried at lengths 1, 1/2, 1/4, each clipped to the box, and
   kept only if it improves on the current value. Derivatives are analytic,
   :math:`T_n' = n U_{n-1}` and :math:`T_n''`, computed by the differentiated recurrences
   :math:`T'_{n+1} = 2T_n + 2\eta T'_n - T'_{n-1}`,
   :math:`T''_{n+1} = 4T'_n + 2\eta T''_n - T''_{n-1}`.

The result is the better of grid and polished values. For a quadratic it is exact to rounding (one
Newton step from anywhere lands on the stationary point of the free coordinates); for higher
orders it is exact when the best grid node lies in the basin of the global extremum, which a
9-node grid guarantees in practice for p ≤ 4 (the tests compare against a 201^d grid).

References
----------
Guo X., Jin Y. (2025). Inverse dynamical problem of flexible multibody systems with interval
uncertainty. Journal of Vibration Engineering 38(5), 974–983. doi:10.16385/j.cnki.issn.1004-4523.2025.05.009

Cohen A., Davenport M. A., Leviatan D. (2013). On the stability and accuracy of least squares
approximations. Foundations of Computational Mathematics 13, 819–834. doi:10.1007/s10208-013-9142-3

Hampton J., Doostan A. (2015). Coherence motivated sampling and convergence analysis of least squares
polynomial chaos regression. Computer Methods in Applied Mechanics and Engineering 290, 73–97.
doi:10.1016/j.cma.2015.02.006

Bertsekas D. P. (1982). Projected Newton methods for optimization problems with simple constraints.
SIAM Journal on Control and Optimization 20(2), 221–246. doi:10.1137/0320018

Nocedal J., Wright S. J. (2006). Numerical Optimization, 2nd ed., Springer. doi:10.1007/978-0-387-40065-5

Mason J. C., Handscomb D. C. (2003). Chebyshev Polynomials. Chapman & Hall/CRC. doi:10.1201/9781420036114
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ..errors import ModelSpecError, SimulationError
from ..params import FloatArray
from ..progress import CancelFn, ProgressFn
from ..runners import Runner, SerialRunner
from .chebyshev import (
    BASIS_KINDS, ChebyshevSurrogate, DOMAIN_SLACK, _check_d_order_kind, _design, basis_indices, sample_design
)

__all__ = ["BASIS_KINDS", "ChebyshevSurrogate", "basis_indices", "build_surrogate", "fit_surrogate",
           "sample_design"]


# ---------------------------------------------------------------------------------------------
# Basis
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Design
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The surrogate
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Fitting
# ---------------------------------------------------------------------------------------------

def _as_box(lower: ArrayLike, upper: ArrayLike) -> tuple[FloatArray, FloatArray]:
    lo = np.atleast_1d(np.asarray(lower, dtype=float))
    up = np.atleast_1d(np.asarray(upper, dtype=float))
    if lo.ndim != 1 or lo.shape != up.shape or lo.size == 0:
        raise ModelSpecError(f"`lower` and `upper` must be 1-D of the same length d ≥ 1; received shapes "
                             f"{np.shape(lower)} and {np.shape(upper)}")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(up))):
        raise ModelSpecError(f"`lower` and `upper` must be finite; received {lo.tolist()} and {up.tolist()}")
    if np.any(lo >= up):
        raise ModelSpecError(f"`lower` must be < `upper` in every coordinate; received {lo.tolist()} and "
                             f"{up.tolist()}")
    return lo, up


def _names(names: Sequence[str], d: int) -> tuple[str, ...]:
    if not names:
        return tuple(f"x{j + 1}" for j in range(d))
    if isinstance(names, str) or len(names) != d or not all(isinstance(s, str) for s in names):
        raise ModelSpecError(f"`names` must be {d} strings (one per input); received {names!r}")
    return tuple(names)


def _matrix(x: ArrayLike, name: str, cols: int | None) -> FloatArray:
    a = np.asarray(x, dtype=float)
    if a.ndim == 1 and cols is None:
        a = a[:, None]
    if a.ndim != 2 or (cols is not None and a.shape[1] != cols):
        want = f"(M, {cols})" if cols is not None else "(M, m)"
        raise ModelSpecError(f"`{name}` must have shape {want}; received {np.shape(x)}")
    if not np.all(np.isfinite(a)):
        r = int(np.argwhere(~np.isfinite(a))[0, 0])
        raise ModelSpecError(f"`{name}` must be finite; row {r} has non-finite entries")
    return a


def fit_surrogate(samples: ArrayLike, values: ArrayLike, lower: ArrayLike, upper: ArrayLike, *, order: int,
                  kind: str = "total", names: Sequence[str] = (), holdout_samples: ArrayLike | None = None,
                  holdout_values: ArrayLike | None = None) -> ChebyshevSurrogate:
    r"""Least-squares Chebyshev surrogate from given runs.

    Parameters
    ----------
    samples : (M, d) array_like, units of the inputs
        Physical sample points inside ``[lower, upper]``.
    values : (M, m) or (M,) array_like, units of the response
        The runs at ``samples``.
    lower, upper : (d,) array_like, units of the inputs
        The box, ``lower < upper``.
    order : int
        Polynomial order p ≥ 1.
    kind : {"total", "tensor"}
        Multi-index set (:func:`basis_indices`).
    names : sequence of str
        Input names (default ``x1..xd``).
    holdout_samples, holdout_values : (H, d), (H, m) array_like or None
        Extra runs not used in the fit, to measure the error.

    Returns
    -------
    ChebyshevSurrogate

    Raises
    ------
    ModelSpecError
        Bad shapes, non-finite values, ``lower >= upper``, ``order`` < 1, unknown ``kind``, fewer samples
        than basis functions P, samples outside the box, or a rank-deficient design.

    Notes
    -----
    :math:`\Gamma = \arg\min_\Gamma \|A\Gamma - F\|_F` with :math:`A_{s\alpha} = \psi_\alpha(\eta_s)`,
    by ``numpy.linalg.lstsq`` (SVD); Guo & Jin (2025) eqs. 9–11 write the normal equations.

    Examples
    --------
    >>> eta = sample_design(2, 12)
    >>> s = fit_surrogate(eta, eta[:, :1] * eta[:, 1:], [-1, -1], [1, 1], order=2)
    >>> s.coef.shape, float(np.round(s.evaluate([0.5, 0.5])[0], 12))
    ((6, 1), 0.25)
    """
    lo, up = _as_box(lower, upper)
    d = lo.size
    _check_d_order_kind(d, order, kind)
    x = _matrix(samples, "samples", d)
    y = _matrix(values, "values", None)
    if y.shape[0] != x.shape[0]:
        raise ModelSpecError(f"`values` must have one row per sample ({x.shape[0]}); received {y.shape[0]} rows")
    indices = basis_indices(d, int(order), kind)
    n_terms = indices.shape[0]
    if x.shape[0] < n_terms:
        raise ModelSpecError(f"`samples` must hold at least P = {n_terms} points for order {order} ({kind}, "
                             f"d = {d}); received {x.shape[0]}")
    centre, half = 0.5 * (lo + up), 0.5 * (up - lo)
    eta = (x - centre) / half
    outside = np.abs(eta) > 1.0 + DOMAIN_SLACK
    if np.any(outside):
        r = int(np.argwhere(outside)[0, 0])
        raise ModelSpecError(f"`samples` row {r} ({x[r].tolist()}) lies outside [{lo.tolist()}, {up.tolist()}]")
    a = _design(np.clip(eta, -1.0, 1.0), indices)
    sol, _, rank, sv = np.linalg.lstsq(a, y, rcond=None)
    coef: FloatArray = np.asarray(sol, dtype=np.float64)
    if rank < n_terms:
        raise ModelSpecError(f"`samples` give a rank-deficient design (rank {rank} < P = {n_terms}); use more "
                             f"or better-spread samples")
    cond = float(sv[0] / sv[-1])
    fit_rms = float(np.sqrt(np.mean((a @ coef - y) ** 2)))
    m = y.shape[1]
    rng_ = y.max(axis=0) - y.min(axis=0)
    scale = np.maximum(rng_, max(float(rng_.max()), 1e-300) * 1e-12)
    nan_m = np.full(m, np.nan)
    h_rms = h_max = h_rel_rms = h_rel_max = math.nan
    h_rms_o, h_max_o, n_h = nan_m, nan_m.copy(), 0
    if (holdout_samples is None) != (holdout_values is None):
        raise ModelSpecError("`holdout_samples` and `holdout_values` must be given together; received one of them")
    sur = ChebyshevSurrogate(
        names=_names(names, d), lower=lo, upper=up, order=int(order), kind=kind, indices=indices, coef=coef,
        samples=x, values=y, condition_number=cond, holdout_rms=h_rms, holdout_max=h_max,
        holdout_rms_per_output=h_rms_o, holdout_max_per_output=h_max_o, holdout_rel_rms=h_rel_rms,
        holdout_rel_max=h_rel_max, response_range=rng_, n_holdout=n_h, fit_rms=fit_rms)
    if holdout_samples is None or holdout_values is None:
        return sur
    xh = _matrix(holdout_samples, "holdout_samples", d)
    yh = _matrix(holdout_values, "holdout_values", m)
    if yh.shape[0] != xh.shape[0]:
        raise ModelSpecError(f"`holdout_values` must have one row per held-out sample ({xh.shape[0]}); "
                             f"received {yh.shape[0]} rows")
    if xh.shape[0] == 0:
        return sur
    err = sur.evaluate(xh) - yh
    rel = err / scale
    return ChebyshevSurrogate(
        names=sur.names, lower=lo, upper=up, order=sur.order, kind=kind, indices=indices, coef=coef,
        samples=x, values=y, condition_number=cond, holdout_rms=float(np.sqrt(np.mean(err**2))),
        holdout_max=float(np.max(np.abs(err))), holdout_rms_per_output=np.sqrt(np.mean(err**2, axis=0)),
        holdout_max_per_output=np.max(np.abs(err), axis=0), holdout_rel_rms=float(np.sqrt(np.mean(rel**2))),
        holdout_rel_max=float(np.max(np.abs(rel))), response_range=rng_, n_holdout=int(xh.shape[0]),
        fit_rms=fit_rms)


@dataclass(frozen=True)
class _Guarded:
    """Picklable wrapper: ``(values, None)`` or ``(None, message)`` when ``fn`` raises SimulationError."""

    fn: Callable[[FloatArray], Any]

    def __call__(self, x: FloatArray) -> tuple[Any, str | None]:
        try:
            return self.fn(x), None
        except SimulationError as exc:
            return None, str(exc)


def build_surrogate(fn: Callable[[FloatArray], Any], lower: ArrayLike, upper: ArrayLike, *, order: int = 2,
                    kind: str = "total", n_samples: int | None = None, n_holdout: int = 0, seed: int = 0,
                    names: Sequence[str] = (), runner: Runner | None = None, progress: ProgressFn | None = None,
                    cancel: CancelFn | None = None) -> ChebyshevSurrogate:
    r"""Run the forward model on a design and fit a Chebyshev surrogate (Guo & Jin 2025, §1).

    Parameters
    ----------
    fn : callable
        ``fn(x) -> y``: one physical parameter vector (d,) to the response (m,). Must be picklable for a
        process or Dask runner. A run that fails raises :class:`~nlid_core.errors.SimulationError`.
    lower, upper : (d,) array_like, units of the inputs
        The box.
    order : int
        Polynomial order p ≥ 1.
    kind : {"total", "tensor"}
        Multi-index set.
    n_samples : int or None
        Fit samples M ≥ P; default 2P (the paper's choice).
    n_holdout : int
        Extra runs at independent uniform random points of the box, used only to measure the error.
    seed : int
        Seed of the design and of the held-out points.
    names : sequence of str
        Input names.
    runner : Runner or None
        Where the runs go (:func:`nlid_core.runners.runner`); default serial.
    progress : callable or None
        ``progress(stage, fraction, message)`` after each run.
    cancel : callable or None
        ``cancel() -> bool``, polled between runs.

    Returns
    -------
    ChebyshevSurrogate

    Raises
    ------
    ModelSpecError
        Invalid arguments (as :func:`fit_surrogate`; ``n_samples`` < P; ``n_holdout`` < 0).
    SimulationError
        A run raised SimulationError or returned non-finite or wrongly shaped values (the message names
        the sample and its parameters), or the runs were cancelled.

    Examples
    --------
    >>> s = build_surrogate(np.cos, [0.0, 0.0], [1.0, 2.0], order=3, n_holdout=5)
    >>> s.n_terms, s.samples.shape, s.holdout_max < 0.05
    (10, (20, 2), True)
    """
    lo, up = _as_box(lower, upper)
    d = lo.size
    _check_d_order_kind(d, order, kind)
    n_terms = basis_indices(d, int(order), kind).shape[0]
    if n_samples is None:
        n_samples = 2 * n_terms
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < n_terms:
        raise ModelSpecError(f"`n_samples` must be an integer ≥ P = {n_terms} for order {order} ({kind}, d = {d});"
                             f" received {n_samples!r}")
    if isinstance(n_holdout, bool) or not isinstance(n_holdout, (int, np.integer)) or n_holdout < 0:
        raise ModelSpecError(f"`n_holdout` must be a non-negative integer; received {n_holdout!r}")
    names_t = _names(names, d)
    centre, half = 0.5 * (lo + up), 0.5 * (up - lo)
    eta = sample_design(d, int(n_samples), seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence(int(seed)).spawn(1)[0])
    eta_h = rng.uniform(-1.0, 1.0, size=(int(n_holdout), d))
    x_all = centre + half * np.concatenate([eta, eta_h])
    run = runner if runner is not None else SerialRunner()
    results = run.map(_Guarded(fn), [row.copy() for row in x_all], progress=progress, cancel=cancel)
    rows: list[FloatArray] = []
    for i, (value, message) in enumerate(results):
        label = f"sample {i}" if i < n_samples else f"held-out sample {i - n_samples}"
        where = ", ".join(f"{nm}={v:.6g}" for nm, v in zip(names_t, x_all[i]))
        if message is not None:
            raise SimulationError(f"the forward run failed at {label} ({where}): {message}")
        y = np.asarray(value, dtype=float).ravel()
        if rows and y.shape != rows[0].shape:
            raise SimulationError(f"the forward run at {label} ({where}) returned {y.size} values; the first "
                                  f"returned {rows[0].size}")
        if not np.all(np.isfinite(y)):
            raise SimulationError(f"the forward run at {label} ({where}) returned non-finite values")
        rows.append(y)
    y_all = np.array(rows)
    ns = int(n_samples)
    return fit_surrogate(x_all[:ns], y_all[:ns], lo, up, order=int(order), kind=kind, names=names_t,
                         holdout_samples=x_all[ns:] if n_holdout else None,
                         holdout_values=y_all[ns:] if n_holdout else None)
