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

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike, NDArray
from scipy.stats import qmc

from ..errors import ModelSpecError, SimulationError
from ..params import FloatArray
from ..progress import CancelFn, ProgressFn
from ..runners import Runner, SerialRunner

__all__ = ["BASIS_KINDS", "ChebyshevSurrogate", "basis_indices", "build_surrogate", "fit_surrogate",
           "sample_design"]

#: Kinds of multi-index set.
BASIS_KINDS: tuple[str, ...] = ("total", "tensor")
#: Relative slack allowed when a box touches the surrogate's domain.
DOMAIN_SLACK = 1e-9


# ---------------------------------------------------------------------------------------------
# Basis
# ---------------------------------------------------------------------------------------------

def _check_d_order_kind(d: int, order: int, kind: str) -> None:
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ModelSpecError(f"`d` must be a positive integer; received {d!r}")
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise ModelSpecError(f"`order` must be an integer ≥ 1; received {order!r}")
    if kind not in BASIS_KINDS:
        raise ModelSpecError(f"`kind` must be one of {BASIS_KINDS}; received {kind!r}")


def basis_indices(d: int, order: int, kind: str = "total") -> NDArray[np.int64]:
    r"""Multi-indices :math:`\alpha` of the Chebyshev basis, graded (by total degree, then lexicographic).

    Parameters
    ----------
    d : int
        Number of inputs (≥ 1).
    order : int
        Polynomial order p (≥ 1).
    kind : {"total", "tensor"}
        ``"total"``: :math:`\sum_j\alpha_j \le p`, :math:`P = (p+d)!/(p!\,d!)`;
        ``"tensor"``: :math:`\max_j \alpha_j \le p`, :math:`P = (p+1)^d`.

    Returns
    -------
    (P, d) ndarray of int64
        Row 0 is the constant term (all zeros).

    Raises
    ------
    ModelSpecError
        ``d`` or ``order`` < 1, or an unknown ``kind``.

    Examples
    --------
    >>> basis_indices(2, 2).tolist()
    [[0, 0], [0, 1], [1, 0], [0, 2], [1, 1], [2, 0]]
    >>> basis_indices(3, 2, "tensor").shape
    (27, 3)
    """
    _check_d_order_kind(d, order, kind)
    rows = [a for a in itertools.product(range(order + 1), repeat=int(d)) if kind == "tensor" or sum(a) <= order]
    rows.sort(key=lambda a: (sum(a), a))
    return np.array(rows, dtype=np.int64).reshape(len(rows), int(d))


def _chebyshev(eta: FloatArray, n: int) -> FloatArray:
    """Chebyshev polynomials of degrees 0..n at ``eta``, shape ``eta.shape + (n+1,)``."""
    t = np.empty(eta.shape + (n + 1,))
    t[..., 0] = 1.0
    if n >= 1:
        t[..., 1] = eta
    for k in range(1, n):
        t[..., k + 1] = 2.0 * eta * t[..., k] - t[..., k - 1]
    return t


def _factors(tv: FloatArray, indices: NDArray[np.int64]) -> FloatArray:
    """``(N, P, d)`` factors ``tv[i, j, indices[p, j]]`` from per-coordinate values ``tv`` (N, d, n+1)."""
    d = indices.shape[1]
    out: FloatArray = tv[:, np.arange(d)[None, :], indices]
    return out


def _design(eta: FloatArray, indices: NDArray[np.int64]) -> FloatArray:
    """Basis matrix :math:`\\psi_\\alpha(\\eta_s)`, (N, P), for normalised points ``eta`` (N, d)."""
    t = _chebyshev(eta, int(indices.max()))
    out: FloatArray = np.prod(_factors(t, indices), axis=2)
    return out


# ---------------------------------------------------------------------------------------------
# Design
# ---------------------------------------------------------------------------------------------

def sample_design(d: int, n: int, *, seed: int = 0) -> FloatArray:
    r"""Space-filling sample points in :math:`[-1, 1]^d` with the Chebyshev density, centre first.

    Parameters
    ----------
    d : int
        Dimension (≥ 1).
    n : int
        Number of points (≥ 1).
    seed : int
        Seed of the Sobol scrambling; the design is a deterministic function of ``(d, n, seed)``.

    Returns
    -------
    (n, d) ndarray
        Row 0 is the centre :math:`\eta = 0`; rows 1.. are the first n − 1 points of a scrambled Sobol
        sequence :math:`u` mapped through :math:`\eta = -\cos(\pi u)`.

    Raises
    ------
    ModelSpecError
        ``d`` or ``n`` < 1, or a negative ``seed``.

    Notes
    -----
    :math:`\eta = -\cos(\pi u)` with :math:`u` uniform has the arcsine density
    :math:`1/(\pi\sqrt{1-\eta^2})`, the weight for which Chebyshev polynomials are orthogonal and the
    limit density of Chebyshev–Gauss–Lobatto nodes; least squares on Chebyshev polynomials is stable
    under it with few samples per coefficient (Cohen, Davenport & Leviatan 2013; Hampton & Doostan 2015).

    Examples
    --------
    >>> x = sample_design(2, 12, seed=0)
    >>> x.shape, x[0].tolist(), bool(np.all(np.abs(x) <= 1))
    ((12, 2), [0.0, 0.0], True)
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ModelSpecError(f"`d` must be a positive integer; received {d!r}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ModelSpecError(f"`n` must be a positive integer; received {n!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ModelSpecError(f"`seed` must be a non-negative integer; received {seed!r}")
    out = np.zeros((int(n), int(d)))
    if n > 1:
        m = max(0, math.ceil(math.log2(n - 1)))
        u = qmc.Sobol(d=int(d), scramble=True, seed=int(seed)).random_base2(m)[: n - 1]
        out[1:] = -np.cos(np.pi * u)
    return out


# ---------------------------------------------------------------------------------------------
# The surrogate
# ---------------------------------------------------------------------------------------------

def _tensor_coef(indices: NDArray[np.int64], coef: FloatArray, n: int) -> FloatArray:
    """Coefficients as a dense ``(n,)*d + (m,)`` tensor (zeros outside the multi-index set)."""
    d = indices.shape[1]
    full = np.zeros((n,) * d + (coef.shape[1],))
    full[tuple(indices.T)] = coef
    return full


@njit(cache=True)
def _grid_kernel(coefm, t, ymin, ymax, imin, imax):  # type: ignore[no-untyped-def]
    """Min and max of each output over the tensor grid of each box, with the flat node index.

    ``coefm`` (n^d, m): the coefficients as a dense tensor over :math:`(\alpha_0, ..., \alpha_{d-1})`
    (C order), zero outside the multi-index set; ``t`` (k, d, g, n): :math:`T_q` at the g nodes of each
    coordinate of each box. Stage s contracts :math:`\alpha_s` with :math:`T_q` at the nodes of coordinate
    s, so the buffer holds (grid nodes of coordinates < s, coefficient indices of coordinates ≥ s, m);
    the last stage is reduced to min/max on the fly. The flat index is C order over the node indices of
    coordinates 0..d-1; the inner loops run over the m contiguous outputs.
    """
    k, d, g, n = t.shape
    m = coefm.shape[1]
    maxsize = 1
    for s in range(d):
        maxsize = max(maxsize, g**s * n ** (d - s))
    buf_a = np.empty((maxsize, m))
    buf_b = np.empty((maxsize, m))
    tmp = np.empty(m)
    for kb in range(k):
        src = coefm
        use_a = True
        for s in range(d - 1):
            big_g = g**s
            big_r = n ** (d - s - 1)
            dst = buf_a if use_a else buf_b
            for gi0 in range(big_g):
                for gi in range(g):
                    for r in range(big_r):
                        row = (gi0 * g + gi) * big_r + r
                        for o in range(m):
                            dst[row, o] = 0.0
                        for q in range(n):
                            tq = t[kb, s, gi, q]
                            srow = (gi0 * n + q) * big_r + r
                            for o in range(m):
                                dst[row, o] += tq * src[srow, o]
            src = dst
            use_a = not use_a
        for o in range(m):
            ymin[kb, o] = np.inf
            ymax[kb, o] = -np.inf
        for gi0 in range(g ** (d - 1)):
            for gi in range(g):
                for o in range(m):
                    tmp[o] = 0.0
                for q in range(n):
                    tq = t[kb, d - 1, gi, q]
                    srow = gi0 * n + q
                    for o in range(m):
                        tmp[o] += tq * src[srow, o]
                flat = gi0 * g + gi
                for o in range(m):
                    v = tmp[o]
                    if v < ymin[kb, o]:
                        ymin[kb, o] = v
                        imin[kb, o] = flat
                    if v > ymax[kb, o]:
                        ymax[kb, o] = v
                        imax[kb, o] = flat


@njit(cache=True)
def _cheb_point(x, n, t0, t1, t2):  # type: ignore[no-untyped-def]
    """T, T', T'' of degrees 0..n-1 at each coordinate of ``x`` (d,) into ``t0, t1, t2`` (d, n)."""
    for j in range(x.size):
        e = x[j]
        t0[j, 0] = 1.0
        t1[j, 0] = 0.0
        t2[j, 0] = 0.0
        if n > 1:
            t0[j, 1] = e
            t1[j, 1] = 1.0
            t2[j, 1] = 0.0
        for q in range(1, n - 1):
            t0[j, q + 1] = 2.0 * e * t0[j, q] - t0[j, q - 1]
            t1[j, q + 1] = 2.0 * t0[j, q] + 2.0 * e * t1[j, q] - t1[j, q - 1]
            t2[j, q + 1] = 4.0 * t1[j, q] + 2.0 * e * t2[j, q] - t2[j, q - 1]


@njit(cache=True)
def _value_point(x, c, indices, n, t0):  # type: ignore[no-untyped-def]
    """``Σ_α c[α] ψ_α(x)``."""
    d = x.size
    for j in range(d):
        e = x[j]
        t0[j, 0] = 1.0
        if n > 1:
            t0[j, 1] = e
        for q in range(1, n - 1):
            t0[j, q + 1] = 2.0 * e * t0[j, q] - t0[j, q - 1]
    v = 0.0
    for p in range(indices.shape[0]):
        f = c[p]
        for j in range(d):
            f *= t0[j, indices[p, j]]
        v += f
    return v


@njit(cache=True)
def _polish_kernel(coef_t, indices, nodes, a, b, imin, imax, ymin, ymax, steps):  # type: ignore[no-untyped-def]
    """In place: polish ``ymin``/``ymax`` (k, m) by projected modified-Newton descent from the grid nodes.

    For box ``kb`` and output ``o`` the start is the grid node of flat index ``imin[kb, o]`` (C order over
    the coordinates; ``nodes`` (k, d, g)) and the function is ``±Σ_α coef_t[o, α] ψ_α`` (minus for the
    maximum). Held coordinates (at a bound with the gradient pointing outwards, or of zero width) keep
    their value; on the free ones the step solves ``(H + τI) s = -g`` with the smallest ``τ ≥ 0`` from
    {0, β, 2β, 4β, ...} that makes the matrix positive definite (Nocedal & Wright 2006, Alg. 3.3); steps of
    length 1, 1/2, 1/4 of it, clipped to the box, are tried in turn. When the free Hessian is indefinite
    the most negative curvature direction (signed to descend) is also tried, to the box boundary and at
    1/2, 1/4 of that (a saddle has a tiny gradient, so the Newton step alone stalls there; Nocedal &
    Wright 2006, §4.3). The best trial is taken if it lowers the value; the descent stops when none
    does or after ``steps`` iterations.
    """
    k, d, g_nodes = nodes.shape
    m, n_terms = coef_t.shape
    n = 1
    for p in range(n_terms):
        for j in range(d):
            n = max(n, indices[p, j] + 1)
    t0 = np.empty((d, n))
    t1 = np.empty((d, n))
    t2 = np.empty((d, n))
    f0 = np.empty((n_terms, d))
    f1 = np.empty((n_terms, d))
    g = np.empty(d)
    h = np.empty((d, d))
    lmat = np.empty((d, d))
    step = np.empty(d)
    trial = np.empty(d)
    best = np.empty(d)
    x = np.empty(d)
    c = np.empty(n_terms)
    free = np.empty(d, dtype=np.bool_)
    for task in range(2 * k * m):
        kb = (task // m) % k
        o = task % m
        sign = 1.0 if task < k * m else -1.0
        flat = imin[kb, o] if sign > 0 else imax[kb, o]
        for j in range(d - 1, -1, -1):
            x[j] = nodes[kb, j, flat % g_nodes]
            flat //= g_nodes
        for p in range(n_terms):
            c[p] = sign * coef_t[o, p]
        f = sign * (ymin[kb, o] if sign > 0 else ymax[kb, o])
        ai = a[kb]
        bi = b[kb]
        for _ in range(steps):
            _cheb_point(x, n, t0, t1, t2)
            for p in range(n_terms):
                for j in range(d):
                    f0[p, j] = t0[j, indices[p, j]]
                    f1[p, j] = t1[j, indices[p, j]]
            g[:] = 0.0
            for p in range(n_terms):
                for l in range(d):
                    gl = c[p] * f1[p, l]
                    for j in range(d):
                        if j != l:
                            gl *= f0[p, j]
                    g[l] += gl
            nfree = 0
            for l in range(d):
                w = bi[l] - ai[l]
                tol = 1e-12 * w
                held = w <= 0.0 or (x[l] <= ai[l] + tol and g[l] >= 0.0) or (x[l] >= bi[l] - tol and g[l] <= 0.0)
                free[l] = not held
                if free[l]:
                    nfree += 1
            if nfree == 0:
                break
            h[:, :] = 0.0
            for p in range(n_terms):
                for l in range(d):
                    if not free[l]:
                        continue
                    hl = c[p] * t2[l, indices[p, l]]
                    for j in range(d):
                        if j != l:
                            hl *= f0[p, j]
                    h[l, l] += hl
                    for q in range(l + 1, d):
                        if not free[q]:
                            continue
                        hq = c[p] * f1[p, l] * f1[p, q]
                        for j in range(d):
                            if j != l and j != q:
                                hq *= f0[p, j]
                        h[l, q] += hq
            # Symmetric matrix of the free block, identity on held coordinates.
            hmax = 0.0
            dmin = np.inf
            for l in range(d):
                for q in range(l, d):
                    v = h[l, q] if (free[l] and free[q]) else (1.0 if l == q else 0.0)
                    h[l, q] = v
                    h[q, l] = v
                if free[l]:
                    hmax = max(hmax, abs(h[l, l]))
                    dmin = min(dmin, h[l, l])
            beta = 1e-3 * hmax if hmax > 0.0 else 1e-3
            tau = 0.0 if dmin > 0.0 else beta - dmin
            for _try in range(60):
                ok = True
                for l in range(d):
                    for q in range(l + 1):
                        sacc = h[l, q] + (tau if (l == q and free[l]) else 0.0)
                        for r in range(q):
                            sacc -= lmat[l, r] * lmat[q, r]
                        if l == q:
                            if sacc <= 0.0:
                                ok = False
                                break
                            lmat[l, l] = np.sqrt(sacc)
                        else:
                            lmat[l, q] = sacc / lmat[q, q]
                    if not ok:
                        break
                if ok:
                    break
                tau = max(2.0 * tau, beta)
            if not ok:
                break
            for l in range(d):                       # L y = -g (held: g = 0)
                sacc = -g[l] if free[l] else 0.0
                for r in range(l):
                    sacc -= lmat[l, r] * step[r]
                step[l] = sacc / lmat[l, l]
            for l in range(d - 1, -1, -1):           # L^T s = y
                sacc = step[l]
                for r in range(l + 1, d):
                    sacc -= lmat[r, l] * step[r]
                step[l] = sacc / lmat[l, l]
            fbest = f
            for frac in (1.0, 0.5, 0.25):
                for l in range(d):
                    trial[l] = min(max(x[l] + frac * step[l], ai[l]), bi[l]) if free[l] else x[l]
                ft = _value_point(trial, c, indices, n, t0)
                if ft < fbest:
                    fbest = ft
                    best[:] = trial
                    break
            if tau > 0.0:
                # Indefinite: also follow the most negative curvature direction u (g·u ≤ 0) to the box
                # boundary, which the shifted Newton step barely moves along near a saddle.
                lam, vec = np.linalg.eigh(h)
                if lam[0] < 0.0:
                    gu = 0.0
                    for l in range(d):
                        gu += g[l] * vec[l, 0]
                    for direction in (1.0, -1.0):
                        if direction * gu > 0.0:
                            continue
                        tmax = np.inf
                        for l in range(d):
                            ul = direction * vec[l, 0]
                            if free[l] and ul > 1e-300:
                                tmax = min(tmax, (bi[l] - x[l]) / ul)
                            elif free[l] and ul < -1e-300:
                                tmax = min(tmax, (ai[l] - x[l]) / ul)
                        if not np.isfinite(tmax) or tmax <= 0.0:
                            continue
                        for frac in (1.0, 0.5, 0.25):
                            for l in range(d):
                                trial[l] = (min(max(x[l] + frac * tmax * direction * vec[l, 0], ai[l]), bi[l])
                                            if free[l] else x[l])
                            ft = _value_point(trial, c, indices, n, t0)
                            if ft < fbest:
                                fbest = ft
                                best[:] = trial
            if not fbest < f:
                break
            f = fbest
            x[:] = best
        if sign > 0:
            ymin[kb, o] = f
        else:
            ymax[kb, o] = -f


@dataclass(frozen=True, kw_only=True)
class ChebyshevSurrogate:
    r"""A Chebyshev polynomial surrogate of an m-vector response of d inputs over a box.

    Attributes
    ----------
    names : tuple of str
        Input names, length d.
    lower, upper : (d,) ndarray, units of the inputs
        The box :math:`[\ell, u]` the surrogate was fitted on.
    order : int
        Polynomial order p.
    kind : str
        ``"total"`` or ``"tensor"``.
    indices : (P, d) ndarray of int64
        Multi-indices :math:`\alpha` (:func:`basis_indices`).
    coef : (P, m) ndarray, units of the response
        :math:`\gamma_{\alpha i}`.
    samples : (M, d) ndarray, units of the inputs
        Physical sample points of the fit.
    values : (M, m) ndarray, units of the response
        The runs at ``samples``.
    condition_number : float
        2-norm condition number of the design matrix :math:`A` (M × P).
    holdout_rms, holdout_max : float, units of the response
        RMS and maximum absolute error over all held-out runs and outputs (NaN without held-out runs).
    holdout_rms_per_output, holdout_max_per_output : (m,) ndarray, units of the response
        The same per output (NaN-filled without held-out runs).
    holdout_rel_rms, holdout_rel_max : float
        RMS and maximum of the held-out errors divided by each output's ``response_range``.
    response_range : (m,) ndarray, units of the response
        ``values.max(0) - values.min(0)``.
    n_holdout : int
        Number of held-out runs.
    fit_rms : float, units of the response
        RMS residual of the least-squares fit over all samples and outputs.
    """

    names: tuple[str, ...]
    lower: FloatArray
    upper: FloatArray
    order: int
    kind: str
    indices: NDArray[np.int64]
    coef: FloatArray
    samples: FloatArray
    values: FloatArray
    condition_number: float
    holdout_rms: float
    holdout_max: float
    holdout_rms_per_output: FloatArray
    holdout_max_per_output: FloatArray
    holdout_rel_rms: float
    holdout_rel_max: float
    response_range: FloatArray
    n_holdout: int
    fit_rms: float

    @property
    def d(self) -> int:
        """Number of inputs."""
        return int(self.indices.shape[1])

    @property
    def m(self) -> int:
        """Number of outputs."""
        return int(self.coef.shape[1])

    @property
    def n_terms(self) -> int:
        """Number of basis functions P."""
        return int(self.indices.shape[0])

    def to_eta(self, x: ArrayLike) -> FloatArray:
        """Normalised coordinates :math:`\\eta = (x - x_c)/x_w` of physical points ``x`` (…, d)."""
        xa = np.asarray(x, dtype=float)
        centre = 0.5 * (self.lower + self.upper)
        half = 0.5 * (self.upper - self.lower)
        out: FloatArray = (xa - centre) / half
        return out

    def evaluate(self, x: ArrayLike) -> FloatArray:
        """The surrogate at physical points.

        Parameters
        ----------
        x : (k, d) or (d,) array_like, units of the inputs
            Points; outside ``[lower, upper]`` the polynomial is extrapolated (not checked).

        Returns
        -------
        (k, m) or (m,) ndarray, units of the response

        Raises
        ------
        ModelSpecError
            ``x`` has the wrong shape or non-finite entries.
        """
        xa = np.asarray(x, dtype=float)
        single = xa.ndim == 1
        xa = np.atleast_2d(xa)
        if xa.ndim != 2 or xa.shape[1] != self.d:
            raise ModelSpecError(f"`x` must have shape (k, {self.d}) or ({self.d},); received {np.shape(x)}")
        if not np.all(np.isfinite(xa)):
            raise ModelSpecError("`x` must be finite; received non-finite entries")
        out: FloatArray = _design(self.to_eta(xa), self.indices) @ self.coef
        return out[0] if single else out

    def _boxes(self, lo: ArrayLike, hi: ArrayLike, clip: bool) -> tuple[FloatArray, FloatArray, bool]:
        la = np.asarray(lo, dtype=float)
        ha = np.asarray(hi, dtype=float)
        single = la.ndim == 1
        if la.shape != ha.shape or la.ndim not in (1, 2) or la.shape[-1] != self.d:
            raise ModelSpecError(f"`lo` and `hi` must both have shape ({self.d},) or (k, {self.d}); received "
                                 f"{la.shape} and {ha.shape}")
        la, ha = np.atleast_2d(la), np.atleast_2d(ha)
        if not (np.all(np.isfinite(la)) and np.all(np.isfinite(ha))):
            raise ModelSpecError("`lo` and `hi` must be finite; received non-finite entries")
        if np.any(la > ha):
            r = int(np.argwhere(la > ha)[0, 0])
            raise ModelSpecError(f"`lo` must not exceed `hi`; received lo={la[r].tolist()}, hi={ha[r].tolist()}"
                                 f" (box {r})")
        a = self.to_eta(la)
        b = self.to_eta(ha)
        if not clip:
            slack = DOMAIN_SLACK
            bad = (a < -1.0 - slack) | (b > 1.0 + slack)
            if np.any(bad):
                r = int(np.argwhere(bad)[0, 0])
                raise ModelSpecError(
                    f"box {r} ([{la[r].tolist()}, {ha[r].tolist()}]) leaves the surrogate's domain "
                    f"[{self.lower.tolist()}, {self.upper.tolist()}]; pass `clip=True` to intersect")
        a = np.clip(a, -1.0, 1.0)
        b = np.clip(b, -1.0, 1.0)
        return a, np.maximum(a, b), single

    def bounds(self, lo: ArrayLike, hi: ArrayLike, *, grid: int = 9, polish: int = 3,
               clip: bool = False) -> tuple[FloatArray, FloatArray]:
        r"""Minimum and maximum of every output over boxes ``[lo, hi]``, interior extremes included.

        Parameters
        ----------
        lo, hi : (d,) or (k, d) array_like, units of the inputs
            Box corners, ``lo <= hi`` (equal: a point); inside ``[lower, upper]`` unless ``clip``.
        grid : int
            Equispaced nodes per dimension of the search grid (≥ 2; corners included).
        polish : int
            Projected Newton iterations from the best grid node (≥ 0).
        clip : bool
            Intersect the boxes with the surrogate's domain instead of raising.

        Returns
        -------
        ymin, ymax : (m,) or (k, m) ndarray, units of the response

        Raises
        ------
        ModelSpecError
            Shapes differ, non-finite or reversed corners, ``grid`` < 2, ``polish`` < 0, or a box outside
            the domain without ``clip``.

        Notes
        -----
        See the module notes: grid search by mode products, then ``polish`` projected modified-Newton
        steps with analytic derivatives from the best node, per (box, output, min/max). Exact (to
        rounding) for quadratics; the value returned is never worse than the grid's, and never
        outside the true range (it is a value of the polynomial inside the box).

        Examples
        --------
        >>> s = fit_surrogate(sample_design(1, 6), (sample_design(1, 6) ** 2 - 0.25), [-1.0], [1.0], order=2)
        >>> [float(np.round(v[0], 12)) for v in s.bounds([-0.5], [1.0])]
        [-0.25, 0.75]
        """
        if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 2:
            raise ModelSpecError(f"`grid` must be an integer ≥ 2; received {grid!r}")
        if isinstance(polish, bool) or not isinstance(polish, (int, np.integer)) or polish < 0:
            raise ModelSpecError(f"`polish` must be a non-negative integer; received {polish!r}")
        a, b, single = self._boxes(lo, hi, clip)
        k, d = a.shape
        n = int(self.indices.max()) + 1
        nodes = a[:, :, None] + (b - a)[:, :, None] * np.linspace(0.0, 1.0, int(grid))   # (k, d, g)
        m = self.m
        ymin = np.empty((k, m))
        ymax = np.empty((k, m))
        imin = np.zeros((k, m), dtype=np.int64)
        imax = np.zeros((k, m), dtype=np.int64)
        coefm = np.ascontiguousarray(_tensor_coef(self.indices, self.coef, n).reshape(n**d, m))
        _grid_kernel(coefm, _chebyshev(nodes, n - 1), ymin, ymax, imin, imax)
        if polish > 0:
            _polish_kernel(np.ascontiguousarray(self.coef.T), self.indices, nodes, a, b, imin, imax, ymin, ymax,
                           int(polish))
        if single:
            return ymin[0], ymax[0]
        return ymin, ymax


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
