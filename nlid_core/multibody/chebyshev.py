"""Chebyshev bases on a box and the surrogate they make: multi-index sets (total or tensor degree), the
design matrix, a Chebyshev-density sample design, and ``ChebyshevSurrogate``: its values and the bounds
of every output over a sub-box (tensor grid plus projected Newton polish). The mathematics is in
:mod:`.surrogate`."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import qmc

from ..errors import ModelSpecError
from ..params import FloatArray
from .surrogate_kernels import grid_kernel, polish_kernel

__all__ = ["BASIS_KINDS", "DOMAIN_SLACK", "basis_indices", "sample_design", "ChebyshevSurrogate"]


#: Kinds of multi-index set.
BASIS_KINDS: tuple[str, ...] = ("total", "tensor")


#: Relative slack allowed when a box touches the surrogate's domain.
DOMAIN_SLACK = 1e-9


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


def _tensor_coef(indices: NDArray[np.int64], coef: FloatArray, n: int) -> FloatArray:
    """Coefficients as a dense ``(n,)*d + (m,)`` tensor (zeros outside the multi-index set)."""
    d = indices.shape[1]
    full = np.zeros((n,) * d + (coef.shape[1],))
    full[tuple(indices.T)] = coef
    return full


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
        grid_kernel(coefm, _chebyshev(nodes, n - 1), ymin, ymax, imin, imax)
        if polish > 0:
            polish_kernel(np.ascontiguousarray(self.coef.T), self.indices, nodes, a, b, imin, imax, ymin, ymax,
                           int(polish))
        if single:
            return ymin[0], ymax[0]
        return ymin, ymax
